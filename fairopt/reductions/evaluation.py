r"""Exact evaluation of randomized predictors and frontier helpers for fair regression.

A randomized predictor ``Q`` draws component ``k`` with probability ``w_k`` independently for each
prediction, so its loss and its SP moments are the ``w``-weighted averages of its components'
(Sec. 2.2 of Agarwal, Dudík & Wu 2019). The worst SP violation
:math:`\max_{a}\sup_z|\sum_k w_k\gamma_{a,z}(f_k)|` is evaluated exactly: it can only change at
values taken by some component, so all of them are candidate thresholds.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt.errors import DataValidationError
from fairopt.validation import as_groups

if TYPE_CHECKING:
    from fairopt.validation import Groups


def mixture_sp_gamma(scores: ArrayLike, weights: ArrayLike, sensitive_features: ArrayLike | Groups,
                     thresholds: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r""":math:`\gamma_{a,z}(Q)=\sum_k w_k(\hat P[f_k\ge z\mid A=a]-\hat P[f_k\ge z])`.

    Parameters
    ----------
    scores : array of shape (K, n)
        Component predictions.
    weights : array of shape (K,)
        Mixture weights (non-negative, summing to 1).
    sensitive_features : array of shape (n,)
    thresholds : array, optional
        Thresholds ``z``; default: every distinct component value (the exact supremum).

    Returns
    -------
    gamma : array of shape (n_groups, n_thresholds)
    thresholds : array of shape (n_thresholds,)
    """
    S = np.atleast_2d(np.asarray(scores, dtype=float))
    w = np.asarray(weights, dtype=float).reshape(-1)
    if S.shape[0] != w.size:
        raise DataValidationError(f"{S.shape[0]} score rows but {w.size} weights.")
    if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-8:
        raise DataValidationError("mixture weights must be non-negative and sum to 1.")
    grp = as_groups(sensitive_features, S.shape[1])
    groups, codes = grp.labels, grp.codes
    z = np.unique(S) if thresholds is None else np.asarray(thresholds, dtype=float)
    n = S.shape[1]
    counts = np.bincount(codes, minlength=groups.size)
    gamma = np.zeros((groups.size, z.size))
    for k in range(S.shape[0]):                   # loop over components and groups only
        if w[k] == 0:
            continue
        pooled = (n - np.searchsorted(np.sort(S[k]), z, side="left")) / n
        for a in range(groups.size):
            sa = np.sort(S[k, codes == a])
            surv = (counts[a] - np.searchsorted(sa, z, side="left")) / counts[a]
            gamma[a] += w[k] * (surv - pooled)
    return gamma, z


def mixture_sp_disparity(scores: ArrayLike, weights: ArrayLike, sensitive_features: ArrayLike | Groups,
                         thresholds: ArrayLike | None = None) -> float:
    """Worst SP violation :math:`\\max_{a,z}|\\gamma_{a,z}(Q)|` of a randomized predictor."""
    gamma, _ = mixture_sp_gamma(scores, weights, sensitive_features, thresholds)
    return float(np.max(np.abs(gamma))) if gamma.size else 0.0


def dkw_halfwidth(sensitive_features: ArrayLike | Groups, delta: float = 0.05, n_components: int = 1) -> float:
    r"""DKW-style half-width for the worst SP violation (note Sec. 7).

    With probability :math:`1-\delta`, every :math:`\hat\gamma_{a,z}` is within
    :math:`w_a=\sqrt{\ln(2K(|A|+1)/\delta)/(2n_a)}+\sqrt{\ln(2K(|A|+1)/\delta)/(2n)}` of its
    population value (union bound over ``K`` components, the groups and the pooled sample);
    returns :math:`\max_a w_a`.
    """
    grp = as_groups(sensitive_features)
    groups, counts = grp.labels, grp.counts()
    n = counts.sum()
    log_term = math.log(2 * n_components * (groups.size + 1) / delta)
    return float(np.max(np.sqrt(log_term / (2 * counts)) + math.sqrt(log_term / (2 * n))))


def lower_convex_envelope(x: ArrayLike, y: ArrayLike) -> NDArray[np.int_]:
    """Indices of the points on the lower-left convex frontier of ``(x, y)`` (both minimised).

    Mixing two predictors mixes their loss and SP moments linearly, so every point on a segment
    between frontier points is attainable. Returns indices sorted by increasing ``x``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((y, x))
    hull: list[int] = []
    for i in order:                 # monotone-chain lower hull over a handful of sweep points
        while len(hull) >= 2:
            i1, i2 = hull[-2], hull[-1]
            cross = (x[i2] - x[i1]) * (y[i] - y[i1]) - (y[i2] - y[i1]) * (x[i] - x[i1])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(int(i))
    # keep the decreasing part: points after the minimum y are dominated
    best = int(np.argmin([y[i] for i in hull]))
    return np.array(hull[: best + 1], dtype=int)
