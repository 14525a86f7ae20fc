"""Input coercion shared by every metric: arrays, weights, groups, and the weighted group mean.

Arrays, weights and groups are checked by :mod:`fairopt.validation` (the one validation module
of the package); this module adds what only metrics need: :func:`group_means` (one
``np.bincount`` per quantity) and the readings of predictions and labels. Nothing is dropped
silently: missing values, mismatched lengths, negative weights and empty groups raise
:class:`~fairopt.errors.DataValidationError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.validation import Groups, as_1d, as_float, check_weights

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Groups",
    "as_1d",
    "as_float",
    "binary_truth",
    "check_weights",
    "format_groups",
    "group_means",
    "prediction_expectation",
    "require_groups",
]


def require_groups(groups: Groups, metric: str) -> Groups:
    """A fairness metric compares groups: fewer than two is an error, not a perfect score."""
    if groups.n_groups < 2:
        raise DataValidationError(
            f"{metric} compares groups but sensitive_features holds a single group {list(groups.labels)[:1]}; "
            "pass data with at least two groups (or declare the absent ones with groups=...), or check that "
            "the protected attribute was not filtered or mis-read.")
    return groups


def format_groups(labels: pd.Index, mask: np.ndarray, limit: int = 5) -> str:
    bad = list(labels[np.asarray(mask)])
    more = f" and {len(bad) - limit} more" if len(bad) > limit else ""
    return ", ".join(repr(b) for b in bad[:limit]) + more


def group_means(groups: Groups, values: np.ndarray | None, weights: np.ndarray, what: str,
                mask: np.ndarray | None = None, condition: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean of ``values`` per group (restricted to ``mask`` rows) and the group weights.

    Uses two ``np.bincount`` calls. A group with no (positively weighted) row in the selection
    makes the mean undefined and raises :class:`DataValidationError` naming the group.
    """
    codes = groups.codes
    if mask is not None:
        codes, weights = codes[mask], weights[mask]
        values = None if values is None else values[mask]
    total = np.bincount(codes, weights=weights, minlength=groups.n_groups)
    empty = ~(total > 0)
    if empty.any():
        cond = f" with {condition}" if condition else ""
        raise DataValidationError(
            f"{what} is undefined for group(s) {format_groups(groups.labels, empty)}: no row{cond} with positive "
            "weight. Merge sparse groups, drop them from the evaluation, or pass more data.")
    if values is None:
        return total, total
    sums = np.bincount(codes, weights=weights * values, minlength=groups.n_groups)
    return sums / total, total


def prediction_expectation(y_pred: ArrayLike | None, n: int | None, pos_label: object = 1,
                           name: str = "y_pred") -> NDArray[np.float64]:
    """Per-row probability that the prediction is ``pos_label``.

    Numeric predictions within [0, 1] are read as ``P(y_hat = 1)`` (hard 0/1 labels are the special
    case), so ``pos_label`` must then be 1 (use the value) or 0 (use one minus it). Other labels
    (strings, {-1, +1}, ...) are compared with ``pos_label``, which must occur in ``y_pred``.
    """
    arr = as_1d(y_pred, name, n)
    numeric = arr.dtype == bool or np.issubdtype(arr.dtype, np.number)
    if numeric:
        a = as_float(arr, name)
        if a.size == 0 or (a.min() >= 0.0 and a.max() <= 1.0):
            if _equals(pos_label, 1):
                return a
            if _equals(pos_label, 0):
                return 1.0 - a
            raise DataValidationError(
                f"{name} takes values in [0, 1] (labels or probabilities of class 1) but pos_label={pos_label!r}; "
                "use pos_label=1 or 0.")
        if np.unique(a).size > 2:
            raise DataValidationError(
                f"{name} has values outside [0, 1] and more than two distinct values, so it is neither binary "
                "labels nor probabilities; threshold real-valued scores first, or use ks_statistical_parity.")
        hits = a == pos_label if _is_number(pos_label) else np.zeros(a.shape, bool)
    else:
        hits = arr == pos_label
    if arr.size and not hits.any():
        raise DataValidationError(
            f"pos_label={pos_label!r} does not occur in {name} (values: {list(pd.unique(arr))[:5]}); pass the "
            "label of the favourable outcome as pos_label.")
    return hits.astype(float)


def binary_truth(y_true: ArrayLike, n: int, pos_label: object = 1) -> NDArray[np.bool_]:
    """Boolean mask ``y_true == pos_label``; ``y_true`` must take at most two distinct values."""
    arr = as_1d(y_true, "y_true", n)
    uniq = pd.unique(arr)
    if len(uniq) > 2:
        raise DataValidationError(
            f"y_true must be binary but has {len(uniq)} distinct values ({list(uniq)[:5]}...); binarise it "
            "(e.g. y_true == favourable_label).")
    if arr.dtype == bool:
        return arr if _equals(pos_label, 1) else ~arr
    return np.asarray(arr == pos_label, dtype=bool)


def _is_number(x: object) -> bool:
    return isinstance(x, (bool, int, float, np.number))


def _equals(x: object, value: float) -> bool:
    return _is_number(x) and x == value
