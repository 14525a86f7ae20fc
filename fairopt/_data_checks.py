"""Data edge cases shared by the estimators (part of :mod:`fairopt.validation`, which re-exports it):
all-zero group weights, sparse or non-numeric features, too many levels or cells, a single group or class.
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.errors import DataTypeError, DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["BYTES_PER_CELL", "MAX_CELLS", "MAX_LEVELS", "check_cells", "check_dense", "check_group_weights",
           "check_levels", "check_numeric_columns", "check_two_valued"]


# ``groups`` is a fairopt.validation.Groups, typed structurally: validation imports this module
def check_group_weights(groups: Any, weights: ArrayLike | None, what: str = "") -> None:
    """Every group has positive total weight: a group whose weights are all 0 would make its
    fairness constraint vacuous (its rates are undefined), so it raises instead.

    Examples
    --------
    >>> from fairopt.validation import check_groups
    >>> g = check_groups(["a", "a", "b"])
    >>> check_group_weights(g, np.array([1.0, 0.0, 0.0]))
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: group(s) ['b'] have zero total sample_weight ...
    """
    if weights is None:
        return
    # only groups with rows: a declared group without rows is not a weighting mistake
    empty = (groups.counts() > 0) & ~(groups.counts(np.asarray(weights, dtype=float)) > 0)
    if empty.any():
        bad = list(groups.labels[empty])[:5]
        head = f"{what}: " if what else ""
        raise DataValidationError(
            f"{head}group(s) {bad} have zero total sample_weight (every row weighs 0), so their rates are "
            "undefined and a fairness constraint on them would be vacuous. Give those rows positive weight "
            "or drop the group.")


def check_dense(X: Any, name: str = "X") -> Any:
    """Refuse a scipy sparse matrix up front for estimators that need dense features.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> check_dense(sp.eye(2), "FairRegressor.fit: X")
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: FairRegressor.fit: X is a scipy sparse matrix, ...
    """
    if sp.issparse(X):
        raise DataValidationError(f"{name} is a scipy sparse matrix, which this estimator does not support; "
                                  f"pass X.toarray() (shape {X.shape}).")
    return X


def check_numeric_columns(X: Any, name: str = "X", hint: str = "") -> None:
    """Refuse a DataFrame with string, categorical or other non-numeric columns, naming them
    and saying how to encode them (instead of numpy's "could not convert string to float").

    Examples
    --------
    >>> check_numeric_columns(pd.DataFrame({"age": [30, 40], "workclass": ["Private", "Gov"]}))
    Traceback (most recent call last):
    ...
    fairopt.errors.DataTypeError: X has non-numeric column(s) ['workclass'] (strings ...
    """
    if isinstance(X, pd.DataFrame):
        bad = [c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
    else:
        if sp.issparse(X):     # every format (lil and dok hold no flat data array) has a dtype
            if X.dtype.kind not in "OUS":
                return
            X = X.tocsr()
        arr = X.data if sp.issparse(X) else np.asarray(X)
        if arr.dtype.kind not in "OUS":
            return
        cols = arr.reshape(len(arr), -1) if arr.ndim else arr.reshape(1, 1)
        if arr.dtype.kind in "US":
            bad = list(range(cols.shape[1]))
        else:   # per column, not per row: present values that do not parse as numbers
            bad = [j for j in range(cols.shape[1])
                   if (pd.to_numeric(pd.Series(cols[:, j]), errors="coerce").isna() & pd.notna(cols[:, j])).any()]
    if bad:
        example = bad[:3]
        raise DataTypeError(
            f"{name} has non-numeric column(s) {bad[:10]} (strings or categories) but needs numbers"
            f"{_object_cell(X, bad[0])}; encode them first, e.g. pd.get_dummies(X, columns={example!r}) for one-hot "
            f"columns or sklearn.preprocessing.OrdinalEncoder for codes{hint}.")


def _object_cell(X: Any, col: Any) -> str:
    """Words for a cell of column ``col`` that is neither a string nor a number (a dict, a list),
    with numpy's wording for it (scikit-learn's checks look for it); empty when there is none."""
    if isinstance(X, pd.DataFrame):
        values = X[col].to_numpy()
    elif sp.issparse(X):
        values = X.tocsc()[:, col].data
    else:
        arr = np.asarray(X)
        values = arr.reshape(len(arr), -1)[:, col] if arr.ndim else arr.reshape(1)
    if values.dtype != object:
        return ""
    odd = next((v for v in values if not isinstance(v, (str, bytes, numbers.Number, np.bool_)) and v is not None),
               None)
    if odd is None:
        return ""
    kind = type(odd).__name__
    return (f"; column {col!r} holds a {kind} (a float() argument must be a string or a real number, not "
            f"{kind!r}), so pass numbers in it")


#: most levels, summed over the columns, of a max-entropy fit (``MaxEntResampler(max_levels=...)``): its
#: counting oracle and Newton Hessian grow with the sum of the levels, never with their product
MAX_LEVELS = 5000

#: most mapping cells (observed (d, x, y) records x candidate (x̂, ŷ) cells) of a TV repair
#: (``TVRepair(max_cells=...)``): the mapping LP has one variable per cell
MAX_CELLS = 4_000_000

#: measured peak bytes per mapping cell of a TV repair fit (distortion table, sparse structure, LP)
BYTES_PER_CELL = 365


def _bytes(n: float) -> str:
    """``n`` bytes in words (``"1.5 GiB"``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"   # pragma: no cover - the loop returns


def check_levels(levels: Mapping[str, Any], what: str, max_levels: int | None = MAX_LEVELS) -> None:
    """Refuse a max-entropy fit whose columns have more than ``max_levels`` levels **in total**
    (``levels`` maps column -> count): the dual has one parameter per level and the counting
    oracle over the product domain costs ``O(sum of levels)`` per point and its Hessian
    ``(sum of levels)^2``; the product of the levels (the domain size) costs nothing. ``None``
    turns the check off. The message gives the total, the largest columns and the memory.

    Examples
    --------
    >>> check_levels({"sex": 2, "c_charge_desc": 389}, "MaxEntResampler.fit")    # 391 levels: fine
    >>> check_levels({"sex": 2, "id": 9000}, "MaxEntResampler.fit")
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: MaxEntResampler.fit: the columns have 9002 levels in total ...
    """
    if max_levels is None:
        return
    total = int(sum(int(k) for k in levels.values()))
    if total <= max_levels:
        return
    largest = sorted(levels.items(), key=lambda kv: -int(kv[1]))[:3]
    big = ", ".join(f"{c!r}: {int(k)}" for c, k in largest)
    c = largest[0][0]
    raise DataValidationError(
        f"{what}: the columns have {total} levels in total (largest {big}), above max_levels={max_levels}; "
        f"the dual has one parameter per level and its Hessian needs {_bytes(16.0 * total * total)} "
        f"(16 x {total}^2 bytes). Bin the largest columns (e.g. X[{c!r}] = pd.qcut(X[{c!r}], q=10) for a "
        "numeric column, or merge rare levels of a string column into 'Other'), or raise max_levels "
        "(None: no limit).")


def check_cells(n_cells: int, what: str, max_cells: int | None = MAX_CELLS, detail: str = "",
                bytes_per_cell: float = BYTES_PER_CELL) -> None:
    """Refuse a product-domain program with more than ``max_cells`` cells (variables), giving the
    number of cells it would need and the memory (``bytes_per_cell`` each). ``None`` turns it off.

    Examples
    --------
    >>> check_cells(1000, "TVRepair.fit")
    >>> check_cells(10**9, "TVRepair.fit", detail=" (10^5 records x 10^4 candidates)")
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: TVRepair.fit: the mapping needs 1000000000 cells (10^5 records ...
    """
    if max_cells is None or n_cells <= max_cells:
        return
    raise DataValidationError(
        f"{what}: the mapping needs {int(n_cells)} cells{detail}, about {_bytes(float(n_cells) * bytes_per_cell)} "
        f"of memory, above max_cells={max_cells}. Bin the feature columns with the most levels (n_bins=... or "
        "pd.cut / pd.qcut), use columns='observed', or raise max_cells (None: no limit).")


def check_two_valued(codes: np.ndarray, labels: Sequence[Any] | pd.Index, name: str, what: str, role: str) -> None:
    """At least two distinct observed values of a group or label column.

    Examples
    --------
    >>> check_two_valued(np.array([0, 0]), ["a"], "sex", "TVRepair.fit", "sensitive feature")
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: TVRepair.fit: the sensitive feature 'sex' takes a single value ['a'] ...
    """
    seen = np.unique(codes)
    if seen.size < 2:
        vals = [labels[i] for i in seen] if len(labels) else []
        need = "groups to compare" if role.startswith("sensitive") else "classes (a fairness rate compares them)"
        raise DataValidationError(f"{what}: the {role} {name!r} takes a single value {vals} in the data "
                                  f"({len(codes)} sample(s)); at least two {need} are needed.")
