"""Group rates of chunked and Dask inputs, from per-group sums (:mod:`fairopt.stats`).

Only ``K x 5`` sums come back to the driver: the weight of each group, of its positive labels,
of its predicted positives (as expectations), and of its true and false positive predictions.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.stats import as_source, is_lazy, keyed_group_sums, map_reduce

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray


def lazy_input(*args: object) -> bool:
    """Any argument is a Dask collection, a memmap or a ``.npy`` path."""
    return any(a is not None and is_lazy(a) for a in args)


def _expectation(a: ArrayLike, pos_label: object) -> NDArray[np.float64]:
    a = np.asarray(a, dtype=float)
    if not np.isfinite(a).all() or (a.size and (a.min() < 0 or a.max() > 1)):
        raise DataValidationError("chunked / Dask y_pred must be 0/1 labels or probabilities of class 1 in [0, 1] "
                                  "(map other labels to 0/1 first).")
    if pos_label == 1:
        return a
    if pos_label == 0:
        return 1.0 - a
    raise DataValidationError(f"y_pred takes values in [0, 1] but pos_label={pos_label!r}; use pos_label=1 or 0.")


def _row_values(pos_label: object, g: ArrayLike, w: ArrayLike | None, v: ArrayLike | None,
                t: ArrayLike | None) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                                              NDArray[np.float64]]:
    """Per-row ``(w, t, v, v t)`` of a chunk: weight, positive label, predicted positive."""
    n = np.asarray(g).shape[0]
    if w is None:
        w = np.ones(n)
    else:
        w = np.asarray(w, dtype=float)
        if not np.isfinite(w).all() or (w < 0).any():
            raise DataValidationError("sample_weight must be finite and non-negative.")
    v = np.zeros(n) if v is None else _expectation(v, pos_label)
    t = np.zeros(n) if t is None else (np.asarray(t) == pos_label).astype(float)
    return w, t, v, v * t


def _keyed_values(pos_label: object, g: ArrayLike, w: ArrayLike | None, v: ArrayLike | None,
                  t: ArrayLike | None) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                                                NDArray[np.float64]]:
    return _row_values(pos_label, g, w, v, t)     # sums of w, w t, w v, w v t


def _sums(labels: np.ndarray, pos_label: object, g: np.ndarray, w: ArrayLike | None, v: ArrayLike | None,
          t: ArrayLike | None) -> NDArray[np.float64]:
    """``[w, w t, w v, w v t]`` per declared group."""
    K = len(labels)
    codes = np.minimum(np.searchsorted(labels, g), K - 1)
    if (labels[codes] != g).any():
        raise DataValidationError(f"sensitive_features has group(s) {np.unique(g[labels[codes] != g])[:5].tolist()} "
                                  "that are not in the declared groups.")
    w, t, v, vt = _row_values(pos_label, g, w, v, t)
    return np.stack([np.bincount(codes, weights=w * x, minlength=K) for x in (1.0, t, v, vt)])


def lazy_rates(rate: str, sensitive_features: Any, y_pred: Any, y_true: Any, sample_weight: Any, pos_label: object,
               groups: Sequence[Any] | pd.Index | None) -> tuple[NDArray[np.float64], float, pd.Index]:
    """Per-group rates, the overall rate and the group labels of chunked / Dask inputs."""
    g = as_source(sensitive_features, "sensitive_features")
    if rate in ("base_rate", "tpr", "fpr") and y_true is None:
        raise DataValidationError(f"rate={rate!r} needs y_true.")
    need_v = rate in ("selection", "tpr", "fpr")
    if need_v and y_pred is None:
        raise DataValidationError(f"rate={rate!r} needs y_pred.")
    srcs = [y_pred if need_v else None, y_true if rate != "selection" else None]
    if groups is None:        # labels found in the same pass as the sums
        labels, s = keyed_group_sums(srcs, g, sample_weight, transform=partial(_keyed_values, pos_label))
    else:
        labels = np.asarray(groups if not isinstance(groups, pd.Index) else groups.to_numpy())
        order = np.argsort(labels)       # searchsorted needs sorted labels; report in declared order
        labels = labels[order]
        s = map_reduce(partial(_sums, labels, pos_label), np.add, [g, sample_weight, *srcs])
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        s, labels = s[:, inv], labels[inv]
    total, pos, sel, tp = s
    fp = sel - tp
    if rate == "share":
        return total / total.sum(), 1.0 / len(labels), pd.Index(labels)
    num, den, what = {"selection": (sel, total, "the selection rate"), "base_rate": (pos, total, "the base rate"),
                      "tpr": (tp, pos, "the true positive rate"),
                      "fpr": (fp, total - pos, "the false positive rate")}[rate]
    empty = ~(den > 0)
    if empty.any():
        raise DataValidationError(f"{what} is undefined for group(s) {labels[empty][:5].tolist()}: no row with "
                                  "positive weight. Merge sparse groups, drop them from the evaluation, or pass more "
                                  "data.")
    return num / den, float(num.sum() / den.sum()), pd.Index(labels)
