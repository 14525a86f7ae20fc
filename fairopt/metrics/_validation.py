"""Input coercion shared by every metric: arrays, weights, groups, and the weighted group mean.

All metrics funnel through :func:`factorize_groups` (groups -> integer codes) and
:func:`group_means` (one ``np.bincount`` per quantity), so validation and error messages are the
same everywhere. Nothing is dropped silently: missing values, mismatched lengths, negative
weights and empty groups raise :class:`~fairopt.errors.DataValidationError`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError

__all__ = ["Groups", "as_1d", "check_weights", "factorize_groups", "group_means",
           "prediction_expectation", "binary_truth", "format_groups"]


def _first_missing(values) -> tuple[int, int]:
    miss = np.asarray(pd.isna(values))
    return int(miss.sum()), int(np.argmax(miss)) if miss.any() else -1


def as_1d(x, name: str, n: int | None = None, allow_missing: bool = False) -> np.ndarray:
    """Return ``x`` as a 1-D numpy array, checking its length against ``n`` and for missing values."""
    if x is None:
        raise DataValidationError(f"{name} is required but was None.")
    if isinstance(x, pd.DataFrame):
        if x.shape[1] != 1:
            raise DataValidationError(
                f"{name} must be one column but a DataFrame with {x.shape[1]} columns was given; "
                "pass a Series or a 1-D array.")
        x = x.iloc[:, 0]
    arr = x.to_numpy() if isinstance(x, (pd.Series, pd.Index)) else np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    if n is not None and arr.shape[0] != n:
        raise DataValidationError(
            f"{name} has {arr.shape[0]} rows but the other inputs have {n}; pass arrays of the same length.")
    if not allow_missing:
        count, first = _first_missing(arr)
        if count:
            raise DataValidationError(
                f"{name} has {count} missing value(s) (first at position {first}); impute or drop those "
                "rows first (fairopt never drops rows silently).")
    return arr


def as_float(arr: np.ndarray, name: str) -> np.ndarray:
    """Convert to float64, requiring numeric (or boolean) finite values."""
    if arr.dtype == bool:
        return arr.astype(float)
    try:
        out = np.asarray(arr, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"{name} must be numeric; got values of dtype {arr.dtype}.") from exc
    if not np.isfinite(out).all():
        bad = int((~np.isfinite(out)).sum())
        first = int(np.argmax(~np.isfinite(out)))
        raise DataValidationError(f"{name} has {bad} non-finite value(s) (inf or NaN; first at position "
                                  f"{first}); remove or clip them.")
    return out


def check_weights(sample_weight, n: int, name: str = "sample_weight") -> np.ndarray:
    """Validated float weights (ones when ``sample_weight`` is None): finite, >= 0, positive total."""
    if sample_weight is None:
        return np.ones(n)
    w = as_float(as_1d(sample_weight, name, n), name)
    if (w < 0).any():
        first = int(np.argmax(w < 0))
        raise DataValidationError(
            f"{name} has {int((w < 0).sum())} negative value(s) (first at position {first}); weights must be "
            ">= 0.")
    if n and not w.sum() > 0:
        raise DataValidationError(f"{name} sums to 0; at least one row needs a positive weight.")
    return w


@dataclass(frozen=True)
class Groups:
    """Integer group codes ``0..n_groups-1`` per row and the group labels (Index or MultiIndex)."""

    codes: np.ndarray
    labels: pd.Index

    @property
    def n_groups(self) -> int:
        return len(self.labels)


def _columns(sensitive_features) -> tuple[list[np.ndarray], list]:
    """Split group input into a list of 1-D columns and their names."""
    if isinstance(sensitive_features, Mapping):
        sensitive_features = pd.DataFrame(dict(sensitive_features))
    if isinstance(sensitive_features, pd.DataFrame):
        if sensitive_features.shape[1] == 0:
            raise DataValidationError("sensitive_features is a DataFrame with no columns; pass at least one.")
        names = list(sensitive_features.columns)
        return [col.to_numpy() for _, col in sensitive_features.items()], names  # per column, not per row
    if isinstance(sensitive_features, pd.Series):
        return [sensitive_features.to_numpy()], [sensitive_features.name]
    arr = np.asarray(sensitive_features)
    if arr.ndim == 1:
        return [arr], [None]
    if arr.ndim == 2:
        return [arr[:, j] for j in range(arr.shape[1])], [f"sf{j}" for j in range(arr.shape[1])]
    raise DataValidationError(
        f"sensitive_features must be 1-D (one attribute) or 2-D (rows x attributes); got shape {arr.shape}.")


def _factorize(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        return pd.factorize(col, sort=True)
    except TypeError:  # mixed, unorderable labels: keep order of appearance
        return pd.factorize(col, sort=False)


def factorize_groups(sensitive_features, n: int | None = None, groups=None) -> Groups:
    """Factorise group membership into codes; several columns define intersectional groups.

    Rows of a multi-column input are combined lexicographically (each column factorised with
    sorted levels, then the code tuples re-factorised), so labels come out sorted and only
    observed combinations become groups. ``groups`` optionally declares the full list of groups
    (labels, or tuples for several columns); declared groups absent from the data then exist
    with zero weight, and observed groups missing from the declaration are an error.
    """
    cols, names = _columns(sensitive_features)
    m = len(cols[0]) if n is None else n
    codes_list, levels = [], []
    for col, name in zip(cols, names):
        label = "sensitive_features" if name is None else f"sensitive_features[{name!r}]"
        col = as_1d(col, label, m)
        c, u = _factorize(col)
        codes_list.append(c.astype(np.intp))
        levels.append(np.asarray(u, dtype=object) if len(cols) > 1 else u)
    if len(cols) == 1:
        codes = codes_list[0]
        labels = pd.Index(levels[0], name=names[0])
    else:
        combined = codes_list[0]
        for c, u in zip(codes_list[1:], levels[1:]):
            combined, _ = pd.factorize(combined * len(u) + c, sort=True)
        codes = combined.astype(np.intp)
        _, first = np.unique(codes, return_index=True)
        labels = pd.MultiIndex.from_arrays([u[c[first]] for c, u in zip(codes_list, levels)], names=names)
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
    return Groups(codes=codes, labels=labels)


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


def prediction_expectation(y_pred, n: int | None, pos_label=1, name: str = "y_pred") -> np.ndarray:
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


def binary_truth(y_true, n: int, pos_label=1) -> np.ndarray:
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


def _is_number(x) -> bool:
    return isinstance(x, (bool, int, float, np.number))


def _equals(x, value) -> bool:
    return _is_number(x) and x == value
