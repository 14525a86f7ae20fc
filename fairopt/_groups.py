"""Sensitive features as integer group codes: :func:`check_groups` and :class:`Groups`
(re-exported by :mod:`fairopt.validation`)."""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairopt._arrays import as_1d, to_native
from fairopt._frames import num_rows
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["Groups", "as_groups", "check_groups", "sensitive_columns"]


# ------------------------------------------------------------------------------- groups
@dataclass(frozen=True)
class Groups:
    """Integer group codes ``0..n_groups-1`` per row and the group labels (Index or MultiIndex).

    ``columns`` holds the names of ``X``'s columns the groups were read from (``None`` when the
    groups were passed as data).

    Examples
    --------
    >>> groups = check_groups(["b", "a", "b"])
    >>> groups.codes.tolist(), list(groups.labels), groups.n_groups
    ([1, 0, 1], ['a', 'b'], 2)
    """

    codes: np.ndarray
    labels: pd.Index
    columns: tuple[Any, ...] | None = None

    @property
    def n_groups(self) -> int:
        """Number of distinct groups."""
        return len(self.labels)

    def counts(self, weights: ArrayLike | None = None) -> NDArray[np.float64]:
        """Row count (or total weight) of every group."""
        return np.bincount(self.codes, weights=weights, minlength=self.n_groups).astype(float)

    def encode(self, sensitive_features: Any, n: int | None = None, X: Any = None,
               name: str = "sensitive_features") -> NDArray[np.intp]:
        """Codes of new rows in these groups; groups unseen here raise.

        ``sensitive_features=None`` reads the columns the groups came from out of ``X``.
        """
        if sensitive_features is None and self.columns is not None:
            sensitive_features = list(self.columns)
        new = check_groups(sensitive_features, n, X=X, name=name)
        pos = self.labels.get_indexer(new.labels)
        if (pos < 0).any():
            unseen = [new.labels[i] for i in np.flatnonzero(pos < 0)[:5]]
            raise DataValidationError(f"group(s) {unseen} were not seen at fit (known groups: "
                                      f"{list(self.labels)[:10]}); refit with rows from every group.")
        codes: NDArray[np.intp] = pos[new.codes].astype(np.intp)
        return codes


def sensitive_columns(sensitive_features: Any, X: Any, n: int | None = None) -> list[str] | None:
    """Names of ``X``'s columns when ``sensitive_features`` names them, else ``None``.

    A string names one column. A list/tuple of strings names columns only when its length differs
    from the number of rows; a list with one entry per row is always read as row labels (so
    ``["a", "b", "a", ...]`` is one attribute even when ``X`` has columns ``a`` and ``b``).

    Examples
    --------
    >>> import pandas as pd
    >>> sensitive_columns("sex", pd.DataFrame({"sex": [1], "x": [2]}))
    ['sex']
    """
    X = to_native(X)
    if isinstance(sensitive_features, str):
        cols = [sensitive_features]
    elif (isinstance(sensitive_features, (list, tuple)) and sensitive_features
          and all(isinstance(c, str) for c in sensitive_features)
          and len(sensitive_features) != (num_rows(X) if n is None and X is not None else n)):
        cols = list(sensitive_features)
    else:
        return None
    if not isinstance(X, pd.DataFrame):
        raise DataValidationError(f"sensitive_features={sensitive_features!r} names columns, so X must be a "
                                  "pandas DataFrame containing them (or pass one group label per row).")
    missing = [c for c in cols if c not in X.columns]
    if missing:
        raise DataValidationError(f"sensitive_features names {missing}: not a column of X, i.e. not in X's "
                                  f"columns {list(X.columns)[:20]}; pass one group label per row ({num_rows(X)} "
                                  "rows) or existing column names.")
    if len(set(cols)) != len(cols):
        raise DataValidationError(f"sensitive_features names a column twice: {cols}.")
    return cols


def _columns(sensitive_features: Any) -> tuple[list[Any], list[Any]]:
    """Split group input into a list of 1-D columns (pandas Series stay Series: a categorical or
    Arrow string column is coded from its own codes or dictionary) and their names."""
    sensitive_features = to_native(sensitive_features)
    if isinstance(sensitive_features, Mapping):
        sensitive_features = pd.DataFrame(dict(sensitive_features))
    if isinstance(sensitive_features, pd.DataFrame):
        if sensitive_features.shape[1] == 0:
            raise DataValidationError("sensitive_features is a DataFrame with no columns; pass at least one.")
        names = list(sensitive_features.columns)
        return [col for _, col in sensitive_features.items()], names  # per column, not per row
    if isinstance(sensitive_features, pd.Series):
        return [sensitive_features], [sensitive_features.name]
    arr = np.asarray(sensitive_features)
    # a NumPy string array holds strings only: the per-element check is for lists numpy converted
    typed = isinstance(sensitive_features, np.ndarray) and arr.dtype.kind == "U"
    if (arr.ndim == 1 and arr.dtype.kind in "US" and not typed
            and not all(isinstance(v, str) for v in sensitive_features)):
        # numpy turned mixed labels (["a", 1], ["a", nan]) into strings: keep the objects so the
        # mixed types and missing values are caught instead of becoming groups "1" and "nan"
        arr = np.empty(len(sensitive_features), dtype=object)
        arr[:] = list(sensitive_features)
    if arr.ndim == 1:
        return [arr], [None]
    if arr.ndim == 2:
        return [arr[:, j] for j in range(arr.shape[1])], [f"sf{j}" for j in range(arr.shape[1])]
    raise DataValidationError(
        f"sensitive_features must be 1-D (one attribute) or 2-D (rows x attributes); got shape {arr.shape}.")


def _series_codes(col: Any, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes and sorted labels of a categorical (string or numeric categories) or Arrow string
    Series of length ``n`` without missing values, read from pandas' codes or Arrow's
    ``dictionary_encode`` (the same as ``pd.factorize(col.to_numpy(), sort=True)``, without
    turning the rows into Python objects); ``None`` for any other column (the general path)."""
    if not isinstance(col, pd.Series) or len(col) != n or n == 0:
        return None
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        numeric = isinstance(cats.dtype, np.dtype) and cats.dtype.kind in "iuf"
        if not (numeric or isinstance(cats.dtype, pd.StringDtype)):
            return None   # object categories may mix label types: the general path checks them
        raw = col.cat.codes.to_numpy()
        if raw.min() < 0:
            return None
        seen = np.flatnonzero(np.bincount(raw, minlength=len(cats)))
        values = cats.to_numpy()[seen]        # the observed categories only, as the general path
        order = np.argsort(values, kind="stable")
        position = np.empty(len(cats), dtype=np.intp)
        position[seen[order]] = np.arange(seen.size)
        return position[raw], values[order]
    coded = _arrow_sorted_codes(col)
    return None if coded is None else (coded[1], coded[0])


def _arrow_sorted_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Sorted distinct values and row codes of an Arrow-backed string Series without missing
    values, by Arrow's ``dictionary_encode`` (``None`` for any other Series).

    Examples
    --------
    >>> import pandas as pd
    >>> values, codes = _arrow_sorted_codes(pd.Series(["b", "a", "b"], dtype="string[pyarrow]"))
    >>> values.tolist(), codes.tolist()
    (['a', 'b'], [1, 0, 1])
    """
    dtype = col.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    encoded = pc.dictionary_encode(pa.chunked_array(pa.array(col.array)))
    if encoded.null_count or encoded.num_chunks == 0:
        return None
    values = encoded.chunk(0).dictionary.to_numpy(zero_copy_only=False)   # one dictionary for every chunk
    raw = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks])
    order = np.argsort(values, kind="stable")
    position = np.empty(order.size, dtype=np.intp)
    position[order] = np.arange(order.size)
    return values[order], position[raw]


def _factorize(col: np.ndarray, label: str) -> tuple[np.ndarray, np.ndarray]:
    if col.dtype == object:
        kinds = {"str" if isinstance(v, str) else "number" if isinstance(v, (numbers.Number, np.bool_))
                 else type(v).__name__ for v in pd.unique(col)}
        if len(kinds) > 1:
            raise DataValidationError(
                f"{label} mixes label types {sorted(kinds)}; use one type for every row, e.g. convert all "
                "labels to strings with .astype(str).")
    if col.dtype.kind == "U":   # NumPy strings: a sort of the fixed-width values beats hashing them as objects
        uniques, codes = np.unique(col, return_inverse=True)
        return codes.reshape(-1), uniques
    try:
        factorized: tuple[np.ndarray, np.ndarray] = pd.factorize(col, sort=True)
        return factorized
    except TypeError as exc:
        raise DataValidationError(f"{label} has labels that cannot be ordered ({exc}); use strings or "
                                  "numbers.") from exc


def check_groups(sensitive_features: Any, n: int | None = None, *, X: Any = None,
                 groups: Sequence[Any] | pd.Index | None = None, min_groups: int = 1,
                 name: str = "sensitive_features") -> Groups:
    """Factorise group membership into codes; several columns define intersectional groups.

    ``sensitive_features`` may be one attribute (1-D array, Series, list of row labels), several
    (DataFrame, 2-D array, ``{name: column}``), or column name(s) of ``X`` (see
    :func:`sensitive_columns`). Labels must be all strings or all numbers; missing labels raise.

    Rows of a multi-column input are combined lexicographically (each column factorised with
    sorted levels, then the code tuples re-factorised), so labels come out sorted and only
    observed combinations become groups. ``groups`` optionally declares the full list of groups
    (labels, or tuples for several columns); declared groups absent from the data then exist
    with zero weight, and observed groups missing from the declaration are an error.
    ``min_groups`` (e.g. 2 for a fairness constraint) is checked on the observed groups.

    Examples
    --------
    >>> check_groups(["b", "a", "b"]).labels.tolist()
    ['a', 'b']
    """
    if sensitive_features is None:
        raise DataValidationError(f"{name} is required: pass the group of every row (array, Series, "
                                  "DataFrame for intersectional groups, or the name(s) of columns of X).")
    X = to_native(X)
    sensitive_features = to_native(sensitive_features)
    if n is None and X is not None:
        n = num_rows(X)
    cols_of_X = sensitive_columns(sensitive_features, X, n) if X is not None else None
    if cols_of_X is not None:
        sensitive_features = X[cols_of_X]
    cols, names = _columns(sensitive_features)
    m = len(cols[0]) if n is None else n
    codes_list, levels = [], []
    for col, cname in zip(cols, names, strict=True):
        label = name if cname is None else f"{name}[{cname!r}]"
        fast = _series_codes(col, m)
        if fast is not None:
            c, u = fast
        else:
            c, u = _factorize(as_1d(col, label, m), label)
        codes_list.append(c.astype(np.intp))
        levels.append(np.asarray(u, dtype=object) if len(cols) > 1 else u)
    if len(cols) == 1:
        codes = codes_list[0]
        labels = pd.Index(levels[0], name=names[0])
    else:
        combined = codes_list[0]
        for c, u in zip(codes_list[1:], levels[1:], strict=True):
            combined, _ = pd.factorize(combined * len(u) + c, sort=True)
        codes = combined.astype(np.intp)
        _, first = np.unique(codes, return_index=True)
        labels = pd.MultiIndex.from_arrays([u[c[first]] for c, u in zip(codes_list, levels, strict=True)], names=names)
    if len(labels) < min_groups:
        count = "a single group" if len(labels) == 1 else f"{len(labels)} groups"
        raise DataValidationError(f"{name} has {count} {list(labels)[:5]} in {m} sample(s); at least {min_groups} "
                                  "are needed (a fairness constraint compares groups).")
    if groups is not None:
        declared = groups if isinstance(groups, pd.Index) else pd.Index(list(groups))
        if declared.has_duplicates:
            raise DataValidationError("groups contains duplicate labels; list each group once.")
        pos = declared.get_indexer(labels)
        if (pos < 0).any():
            missing = list(labels[pos < 0])[:5]
            raise DataValidationError(
                f"observed group(s) {missing} are not in the declared groups {list(declared)[:10]}; add them "
                "to `groups` or fix sensitive_features.")
        codes = pos[codes].astype(np.intp)
        labels = declared.set_names(labels.names) if declared.nlevels == labels.nlevels else declared
    return Groups(codes=codes, labels=labels, columns=None if cols_of_X is None else tuple(cols_of_X))


def as_groups(sensitive_features: Any, n: int | None = None) -> Groups:
    """``sensitive_features`` itself if it is already :class:`Groups`, else :func:`check_groups`.

    Examples
    --------
    >>> import pandas as pd
    >>> as_groups(pd.DataFrame({"sex": ["F", "M"], "race": ["x", "y"]})).labels.tolist()
    [('F', 'x'), ('M', 'y')]
    """
    if isinstance(sensitive_features, Groups):
        if n is not None and sensitive_features.codes.size != n:
            raise DataValidationError(f"sensitive_features has {sensitive_features.codes.size} rows for {n}.")
        return sensitive_features
    return check_groups(sensitive_features, n)
