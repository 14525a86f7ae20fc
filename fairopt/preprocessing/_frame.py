"""Shared parts of the resamplers: the record frame, domain bookkeeping, decoding samples."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.data import Attribute, Domain
from fairopt.data.attribute import _level_codes
from fairopt.data.domain import category_levels
from fairopt.errors import DataTypeError, DataValidationError
from fairopt.validation import (
    Groups,
    _arrow_sorted_codes,
    as_1d,
    check_group_weights,
    check_int,
    check_is_fitted,
    check_two_valued,
    check_weights,
    check_X,
    frame_kind,
    sensitive_columns,
    to_frame_kind,
    to_native,
)

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import ArrayLike, NDArray
    from sklearn.base import BaseEstimator as _MixinBase  # the mixin always precedes BaseEstimator in the bases
    from sklearn.utils import Tags
else:
    _MixinBase = object

_OUTPUTS = ("default", "pandas", "polars")

#: a seed: what :func:`fairopt._utils.as_generator` takes
Seed: TypeAlias = "int | np.random.Generator | None"
#: records as the estimators take them: a pandas / polars / pyarrow frame, a 2-D array, a Dask frame or a
#: Parquet path (the types share no interface, so they are read at run time)
Records: TypeAlias = Any

_M = TypeVar("_M", bound="_FrameMixin")


def output_kind(estimator: object, X: Records = None) -> str:
    """Frame library of an estimator's output: the ``set_output(transform=...)`` choice, else the
    library of ``X`` (``"default"``: the library the estimator was fitted with)."""
    config = getattr(estimator, "_sklearn_output_config", {}).get("transform", "default")
    if config != "default":
        # "pandas": returned as is; other choices: scikit-learn's set_output wrapper converts the pandas
        # frame of a transformer, the resamplers convert it themselves
        return "pandas" if hasattr(estimator, "transform") else config
    return frame_kind(X) if X is not None else getattr(estimator, "input_frame_kind_", "pandas")


def _n_samples(n: float) -> int:
    """Number of records to draw: a non-negative integer (``1e4`` accepted, ``-1``/``2.7`` rejected)."""
    return check_int(n, "n (number of samples)", min_value=0)


def _share(mass: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``mass / total`` with 0 where ``total`` is 0 (rows of a cell whose weights are all 0)."""
    out: np.ndarray = np.divide(mass, total, out=np.zeros_like(mass, dtype=float), where=total > 0)
    return out


def as_record_frame(X: Records) -> tuple[pd.DataFrame, np.dtype[Any] | None]:
    """``X`` as a DataFrame of records, and the dtype of ``X`` when it was a 2-D array (whose columns
    are named ``x0, x1, ...``, scikit-learn's names); a DataFrame is returned with ``None`` (its
    non-string column names, such as ``pd.DataFrame(array)``'s integers, read as strings).

    An object array holding numbers becomes numeric columns (scikit-learn reads such arrays as
    numbers); strings stay levels. Sparse matrices are refused.

    Examples
    --------
    >>> import numpy as np
    >>> frame, dtype = as_record_frame(np.array([[1, 2], [3, 4]]))
    >>> list(frame.columns), dtype
    (['x0', 'x1'], dtype('int64'))
    """
    if X is None:
        raise DataValidationError("X is required but was None; pass a DataFrame (pandas, polars or pyarrow) of "
                                  "categorical or pre-binned columns.")
    X = to_native(X)
    if sp.issparse(X):
        raise DataValidationError(f"X is a scipy sparse matrix, which is not supported (sparse input): pass a "
                                  f"DataFrame (or a dense 2-D array) of categorical or pre-binned columns "
                                  f"(shape {X.shape}).")
    if type(X).__module__.startswith("dask"):   # Dask collections are left alone
        return X, None
    if isinstance(X, pd.DataFrame):
        if not all(isinstance(c, str) for c in X.columns):
            # columns name the domain's attributes: integer names (pd.DataFrame(array)) are read as strings
            names = [str(c) for c in X.columns]
            if len(set(names)) != len(names):
                raise DataValidationError(f"X's column names {list(X.columns)[:10]} collide once read as strings; "
                                          "rename them.")
            X = X.set_axis(names, axis=1)
        return X, None
    arr = check_X(X, "X", ensure_finite=False)   # 2-D, real, at least one feature
    frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])], copy=False)
    if arr.dtype == object:
        frame = frame.infer_objects()
    return frame, arr.dtype


def _assemble(X: Records, y: ArrayLike, sensitive_features: Any) -> tuple[pd.DataFrame, str, str]:
    """Frame of all columns, plus the names of the label and protected columns."""
    if X is None:
        raise DataValidationError("X is required but was None; pass a DataFrame (pandas, polars or pyarrow) of "
                                  "categorical or pre-binned columns.")
    X, y, sensitive_features = to_native(X), to_native(y), to_native(sensitive_features)
    if y is None:
        raise DataValidationError("this estimator requires y to be passed, but the target y is None; pass the label "
                                  "column.")
    given_frame = isinstance(X, pd.DataFrame)
    X, _ = as_record_frame(X)   # a 2-D array: columns x0, x1, ...; sparse refused
    if not given_frame and isinstance(X, pd.DataFrame):   # names need the caller's DataFrame: raises, saying so
        sensitive_columns(sensitive_features, np.empty((len(X), 0)), len(X))
    if not isinstance(X, pd.DataFrame):
        raise DataValidationError(
            f"X must be a DataFrame (pandas, polars or pyarrow) of categorical or pre-binned columns, got "
            f"{type(X).__name__}.")
    check_X(X, "X", ensure_finite=False)
    frame = X.copy(deep=False)   # copy-on-write: adding the label column leaves X alone
    n = len(frame)
    if isinstance(y, str):   # a column name of X, as on the Dask and Parquet paths
        if y not in frame.columns:
            raise DataValidationError(f"y={y!r} is a string, read as the name of the label column of X, but X has no "
                                      f"such column (columns: {list(frame.columns)[:10]}); pass the labels as an "
                                      "array or Series, or the name of a column of X.")
        column = frame[y]
        frame, y = frame.drop(columns=[y]), column
    y_name = getattr(y, "name", None) or "y"
    y_arr = as_1d(y, "y", n, allow_missing=True)
    if y_name in frame.columns:
        raise DataValidationError(f"the label name {y_name!r} is also a column of X; rename one of them.")
    if sensitive_features is None:
        raise DataValidationError("sensitive_features is required (a column name of X or an array).")
    cols = sensitive_columns(sensitive_features, frame, n)
    if cols is not None:
        if len(cols) != 1:
            raise DataValidationError(f"sensitive_features must name one column, got {cols}.")
        z_name = cols[0]
    else:
        z = as_1d(sensitive_features, "sensitive_features", n, allow_missing=True)
        z_name = getattr(sensitive_features, "name", None) or "sensitive_feature"
        if z_name in frame.columns:
            if not np.array_equal(frame[z_name].to_numpy(), z):
                raise DataValidationError(
                    f"sensitive_features is named {z_name!r} like a column of X but differs from it.")
        else:
            frame[z_name] = z
    frame[y_name] = y.values if isinstance(y, pd.Series) else y_arr
    missing = [c for c, col in frame.items() if _may_miss(col.dtype) and col.isna().any()]
    if missing:
        raise DataValidationError(f"columns {missing} have missing values (NaN or None); drop or impute them first.")
    # only float columns can hold inf (integer, string and categorical columns cannot)
    infinite = [c for c, col in frame.items() if pd.api.types.is_float_dtype(col.dtype)
                and np.isinf(col.to_numpy(dtype=float)).any()]
    if infinite:
        raise DataValidationError(f"columns {infinite} hold inf values, which are no level; clip or drop them first.")
    for c in [c for c, col in frame.items() if pd.api.types.is_object_dtype(col.dtype)]:
        try:
            pd.unique(frame[c])
        except TypeError as exc:     # a dict or list in a cell: worded as numpy's refusal of such a value
            raise DataTypeError(f"column {c!r} holds an unhashable value ({exc}); a level argument must be a string "
                                "or a number, so pass strings or numbers in it.") from exc
    return frame, y_name, z_name


def _may_miss(dtype: Any) -> bool:
    """Whether a column of ``dtype`` can hold a missing value (NumPy integer and bool columns cannot)."""
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")


def _compact_ints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    """``(values - lo, the sorted distinct offsets, lo)`` of an integer array whose range is
    compact (at most ``4 n + 65536`` wide: a table over it costs no more than the rows), else ``None``."""
    lo = int(values.min())
    span = int(values.max()) - lo + 1
    if span > 4 * len(values) + 65_536:
        return None
    local = values.astype(np.int64, copy=False) - lo
    return local, np.flatnonzero(np.bincount(local, minlength=span)), lo


def _column_codes(levels: tuple[object, ...], column: pd.Series) -> np.ndarray | None:
    """Level code of every row of one column (``None`` if a value is missing or not a level).

    Only the column's distinct values are looked up among the levels; an integer column with a
    compact range is indexed through a lookup table over that range (no hashing of the rows).
    """
    # plain NumPy integers only (a nullable Int64 column may hold NA: it takes the factorize path)
    values = column.to_numpy() if isinstance(column.dtype, np.dtype) and column.dtype.kind in "iu" else None
    compact = _compact_ints(values) if values is not None and len(values) else None
    if compact is not None:
        local, present, lo = compact
        table = np.full(int(present[-1]) + 1, -1, dtype=np.int64)
        table[present] = _level_codes(levels, present + lo)
        return table[local] if (table[present] >= 0).all() else None
    if (isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow"
            and all(isinstance(v, str) for v in levels)):
        # Arrow-backed strings (pandas' default): one hash lookup per row in Arrow, no factorize
        import pyarrow as pa
        import pyarrow.compute as pc
        values = pa.array(column.array)
        found = pc.index_in(values, value_set=pa.array(list(levels), type=values.type))
        return None if found.null_count else found.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    local, uniques = pd.factorize(column)          # -1 marks a missing value
    level = _level_codes(levels, uniques)
    if (local < 0).any() or (level < 0).any():
        return None
    out: np.ndarray | None = level[local]
    return out


def _sorted_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """The sorted distinct values of a NumPy integer or Arrow-string column without missing values,
    and each row's position among them (``None`` for other columns: they take ``pd.factorize``).

    An integer column with a compact range is coded through a table over that range (its
    ``bincount`` gives the sorted values); an Arrow string column by Arrow's
    ``dictionary_encode`` (one hash lookup per row, half the time of ``pd.factorize`` on it).
    """
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        compact = _compact_ints(column.to_numpy())
        if compact is None:
            return None
        local, present, lo = compact
        table = np.empty(int(present[-1]) + 1, dtype=np.int64)
        table[present] = np.arange(present.size)
        return (present + lo).astype(dtype), table[local]
    return _arrow_sorted_codes(column)


def _domain_codes(frame: pd.DataFrame, domain: Domain | None) -> tuple[Domain, np.ndarray]:
    """The domain of ``frame`` (``domain`` restricted to its columns, else read from it) and the
    integer codes of its rows, the same as ``Domain.from_frame`` and ``Domain.encode`` give.

    Each column is factorised once (pandas' hash table, Arrow's for string columns); levels and
    codes are then read off the few distinct values, not off every row. A value that is not a
    level re-runs ``Domain.encode`` on the frame for its message (row numbers included).
    """
    if domain is not None:
        missing = [c for c in frame.columns if c not in domain.names]
        if missing:
            raise DataValidationError(f"domain lacks columns {missing} of the data.")
    n = len(frame)
    codes = np.empty((n, frame.shape[1]), dtype=np.int64)
    attrs = []
    for j, (c, col) in enumerate(frame.items()):   # a loop over columns, not rows
        if domain is not None and n:
            known = _column_codes(domain.levels[c], col)   # None: a missing or unknown value, raised below
            if known is not None:
                attrs.append(domain.subdomain([c]).attributes[0])
                codes[:, j] = known
                continue
        elif domain is None and n and isinstance(col.dtype, pd.CategoricalDtype):
            # the categories are the levels, sorted unless ordered (Domain.from_frame's rule, so the
            # frame library does not matter) and pandas holds the codes
            levels = category_levels(col.dtype)
            position = _level_codes(levels, col.cat.categories)
            raw = col.cat.codes.to_numpy()
            if (position >= 0).all() and raw.size and raw.min() >= 0:
                attrs.append(Attribute(c, levels))
                codes[:, j] = position[raw]
                continue
        elif domain is None and n:
            fast = _sorted_codes(col)
            if fast is not None:
                attrs.append(Attribute(c, tuple(fast[0])))
                codes[:, j] = fast[1]
                continue
        raw, uniques = pd.factorize(col)
        if domain is None and n and not isinstance(col.dtype, pd.CategoricalDtype):
            # Domain.from_frame's levels: the sorted distinct values
            values = np.asarray(uniques)
            order = np.argsort(values, kind="stable")
            attrs.append(Attribute(c, tuple(values[order])))
            position = np.empty(order.size, dtype=np.int64)
            position[order] = np.arange(order.size)
            codes[:, j] = position[raw]
            continue
        distinct = pd.DataFrame({c: uniques}) if n else frame[[c]]
        sub = Domain.from_frame(distinct) if domain is None else domain.subdomain([c])
        attrs.append(sub.attributes[0])
        try:
            position = sub.encode(distinct)[:, 0]
        except DataValidationError:
            Domain(attrs).encode(frame[[a.name for a in attrs]])   # raises, naming the rows
            raise
        codes[:, j] = position[raw] if n else raw
    return Domain(attrs), codes


def _pos_level(domain: Domain, y_name: str, pos_label: object) -> int:
    levels = domain.levels[y_name]
    if pos_label is None:
        pos_label = 1 if 1 in levels else levels[-1]
    if pos_label not in levels:
        raise DataValidationError(f"pos_label {pos_label!r} is not a level of {y_name!r}: {list(levels)}.")
    out: int = levels.index(pos_label)
    return out


def _decode(domain: Domain, codes: np.ndarray, dtypes: pd.Series) -> pd.DataFrame:
    out = domain.decode(codes)
    for c in out.columns:
        dt = dtypes[c]
        if isinstance(dt, pd.CategoricalDtype):
            out[c] = pd.Categorical(out[c], dtype=dt)
        else:
            try:
                out[c] = out[c].astype(dt)
            except (TypeError, ValueError):
                pass
    return out


def check_data_codes(dom: Domain, codes: np.ndarray, y_name: str, z_name: str, what: str) -> None:
    """At least two observed groups and two observed labels (a fairness repair compares them)."""
    for name, role in ((z_name, "sensitive feature"), (y_name, "label")):
        col = codes[:, dom.index(name)]
        if col.size and (col != col[0]).any():   # two values seen: no sort of the column needed
            continue
        check_two_valued(col, dom.levels[name], name, what, role)


def check_sample_weight(sample_weight: ArrayLike | None, dom: Domain, codes: NDArray[np.int64], z_name: str,
                        what: str) -> NDArray[np.float64] | None:
    """Validated weights (``None`` stays ``None``); a group whose weights are all 0 raises."""
    if sample_weight is None:
        return None
    w = check_weights(sample_weight, len(codes), f"{what}: sample_weight")
    j = dom.index(z_name)
    check_group_weights(Groups(codes[:, j], pd.Index(dom.levels[z_name])), w, what)
    return w


class _FrameMixin(_MixinBase):  # type: ignore[misc, unused-ignore]  # BaseEstimator (typing only) has no stubs
    """Common fit-time bookkeeping of the resamplers."""

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True    # columns are levels of a product domain
        tags.target_tags.required = True
        return tags

    def set_output(self: _M, *, transform: str | None = None) -> _M:
        """Frame library of :meth:`sample`: ``"pandas"``, ``"polars"``, or ``"default"`` (the library of
        the ``X`` given to ``fit``); ``None`` keeps the current choice.

        Examples
        --------
        >>> from fairopt.preprocessing import Reweighing
        >>> Reweighing().set_output(transform="polars")._sklearn_output_config
        {'transform': 'polars'}
        """
        if transform is None:
            return self
        if transform not in _OUTPUTS:
            raise DataValidationError(f"set_output(transform={transform!r}); use one of {list(_OUTPUTS)}.")
        self._sklearn_output_config = {"transform": transform}
        return self

    def _output(self, frame: pd.DataFrame) -> pd.DataFrame | pl.DataFrame:
        """``frame`` (pandas) in the frame library :meth:`set_output` asks for."""
        return to_frame_kind(frame, output_kind(self))

    def _prepare(self, X: Records, y: ArrayLike, sensitive_features: Any,
                 domain: Domain | None = None) -> tuple[pd.DataFrame, NDArray[np.int64], int, int]:
        self.input_frame_kind_ = frame_kind(X)
        frame, y_name, z_name = _assemble(X, y, sensitive_features)
        dom, codes = _domain_codes(frame, domain)
        check_data_codes(dom, codes, y_name, z_name, f"{type(self).__name__}.fit")
        self.domain_ = dom
        self.label_name_, self.sensitive_name_ = y_name, z_name
        self.columns_ = list(frame.columns)
        self.dtypes_ = frame.dtypes
        self.n_features_in_ = int(X.shape[1] if hasattr(X, "shape") else np.asarray(X).shape[1])
        return frame, codes, dom.index(y_name), dom.index(z_name)

    def _check_fitted(self) -> None:
        check_is_fitted(self, "domain_", "fit(X, y, sensitive_features)")
