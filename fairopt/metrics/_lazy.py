"""Group rates of chunked and Dask inputs, from per-group sums (:mod:`fairopt.stats`).

Only ``K x 5`` sums come back to the driver: the weight of each group, of its positive labels,
of its predicted positives (as expectations), and of its true and false positive predictions.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.stats import as_source, group_labels, is_lazy, map_reduce


def lazy_input(*args) -> bool:
    """Any argument is a Dask collection, a memmap or a ``.npy`` path."""
    return any(a is not None and is_lazy(a) for a in args)


def _expectation(a, pos_label) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if not np.isfinite(a).all() or (a.size and (a.min() < 0 or a.max() > 1)):
        raise DataValidationError("chunked / Dask y_pred must be 0/1 labels or probabilities of class 1 in [0, 1] "
                                  "(map other labels to 0/1 first).")
    if pos_label == 1:
        return a
    if pos_label == 0:
        return 1.0 - a
    raise DataValidationError(f"y_pred takes values in [0, 1] but pos_label={pos_label!r}; use pos_label=1 or 0.")


def _sums(labels, pos_label, g, w, v, t):
    K = len(labels)
    codes = np.minimum(np.searchsorted(labels, g), K - 1)
    if (labels[codes] != g).any():
        raise DataValidationError(f"sensitive_features has group(s) {np.unique(g[labels[codes] != g])[:5].tolist()} "
                                  "that are not in the declared groups.")
    if w is None:
        w = np.ones(codes.shape[0])
    else:
        w = np.asarray(w, dtype=float)
        if not np.isfinite(w).all() or (w < 0).any():
            raise DataValidationError("sample_weight must be finite and non-negative.")
    v = None if v is None else _expectation(v, pos_label)
    t = None if t is None else (np.asarray(t) == pos_label).astype(float)
    out = np.zeros((5, K))
    out[0] = np.bincount(codes, weights=w, minlength=K)
    if t is not None:
        out[1] = np.bincount(codes, weights=w * t, minlength=K)
    if v is not None:
        out[2] = np.bincount(codes, weights=w * v, minlength=K)
        if t is not None:
            out[3] = np.bincount(codes, weights=w * v * t, minlength=K)
            out[4] = out[2] - out[3]
    return out


def lazy_rates(rate, sensitive_features, y_pred, y_true, sample_weight, pos_label, groups):
    """Per-group rates, the overall rate and the group labels of chunked / Dask inputs."""
    g = as_source(sensitive_features, "sensitive_features")
    labels = (group_labels(g) if groups is None
              else np.asarray(groups if not isinstance(groups, pd.Index) else groups.to_numpy()))
    if groups is not None:
        order = np.argsort(labels)       # searchsorted needs sorted labels; report in declared order
        labels = labels[order]
    if rate in ("base_rate", "tpr", "fpr") and y_true is None:
        raise DataValidationError(f"rate={rate!r} needs y_true.")
    need_v = rate in ("selection", "tpr", "fpr")
    if need_v and y_pred is None:
        raise DataValidationError(f"rate={rate!r} needs y_pred.")
    s = map_reduce(partial(_sums, labels, pos_label), np.add,
                   [g, sample_weight, y_pred if need_v else None, y_true if rate != "selection" else None])
    if groups is not None:
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        s, labels = s[:, inv], labels[inv]
    total, pos, sel, tp, fp = s
    if rate == "share":
        return total / total.sum(), 1.0 / len(labels), pd.Index(labels)
    num, den, what = {"selection": (sel, total, "the selection rate"), "base_rate": (pos, total, "the base rate"),
                      "tpr": (tp, pos, "the true positive rate"), "fpr": (fp, total - pos, "the false positive rate")}[rate]
    empty = ~(den > 0)
    if empty.any():
        raise DataValidationError(f"{what} is undefined for group(s) {labels[empty][:5].tolist()}: no row with "
                                  "positive weight. Merge sparse groups, drop them from the evaluation, or pass more data.")
    return num / den, float(num.sum() / den.sum()), pd.Index(labels)
