"""Data edge cases shared by the estimators (part of :mod:`fairopt.validation`, which re-exports it):
all-zero group weights, sparse or non-numeric features, too many levels, a single group or class.
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

__all__ = ["MAX_LEVELS", "check_dense", "check_group_weights", "check_levels", "check_numeric_columns",
           "check_two_valued"]


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


#: most levels a column of a product-domain estimator (TVRepair, MaxEntResampler) may have
MAX_LEVELS = 100


def check_levels(levels: Mapping, what: str, max_levels: int = MAX_LEVELS) -> None:
    """Refuse a column with more than ``max_levels`` levels (``levels`` maps column -> count): the
    product domain, and the fit, grow with every level. Names the column and its count and says
    to bin it.

    Examples
    --------
    >>> check_levels({"sex": 2, "fnlwgt": 500}, "TVRepair.fit")
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: TVRepair.fit: column 'fnlwgt' has 500 distinct values ...
    """
    bad = {c: int(k) for c, k in levels.items() if k > max_levels}
    if bad:
        c, k = next(iter(bad.items()))
        also = f"; also {list(bad)[1:6]}" if len(bad) > 1 else ""
        raise DataValidationError(
            f"{what}: column {c!r} has {k} distinct values (at most {max_levels} per column{also}); the domain "
            f"is the product of every column's levels, so bin it first, e.g. X[{c!r}] = pd.cut(X[{c!r}], bins=10) "
            "or pd.qcut(X[...], q=10), or pass a Domain with bins.")


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
