"""Score preparation for :class:`~fairopt.postprocessing.MulticlassDebiaser`: checks, isotonic
one-vs-rest calibration of class probabilities, and ``score_bins`` quantisation."""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import isotonic_regression

from fairopt.errors import DataValidationError

__all__ = ["OneVsRestIsotonic", "check_score_matrix", "isotonic_fit", "quantise_scores"]

#: largest tolerated |row sum - 1| of a score matrix
SUM_TOL = 1e-6


def check_score_matrix(S: np.ndarray, n_classes: int | None = None) -> np.ndarray:
    """Class probabilities: 2-D, finite, non-negative, rows summing to 1 (to ``1e-6``).

    Examples
    --------
    >>> check_score_matrix(np.array([[0.25, 0.75]])).tolist()
    [[0.25, 0.75]]
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[1] < 2:
        raise DataValidationError(f"the scores must be a 2-D array of class probabilities (n_rows, n_classes >= 2); "
                                  f"got shape {S.shape}.")
    if n_classes is not None and S.shape[1] != n_classes:
        raise DataValidationError(f"the scores have {S.shape[1]} columns but the fit saw {n_classes} classes; "
                                  "pass one probability column per class of classes_.")
    if not np.isfinite(S).all():
        raise DataValidationError("the scores contain NaN or infinite values.")
    if (S < 0).any():
        raise DataValidationError("the scores must be class probabilities (non-negative); clip or softmax them first.")
    bad = np.abs(S.sum(axis=1) - 1.0) > SUM_TOL
    if bad.any():
        raise DataValidationError(f"{int(bad.sum())} score rows do not sum to 1 (first: row {int(np.argmax(bad))}); "
                                  "pass class probabilities (normalise the rows).")
    return S


def isotonic_fit(x: NDArray[np.float64], y: NDArray[np.float64],
                 w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Weighted isotonic (non-decreasing) regression of ``y`` on ``x``: the distinct ``x``
    values (rows of zero weight left out) and the fitted values there, clipped to ``[0, 1]``.
    Tied ``x`` are pooled (weighted mean) first, as scikit-learn's ``IsotonicRegression`` does;
    ``np.interp`` on the result is its ``predict`` with ``out_of_bounds="clip"``.

    Examples
    --------
    >>> xs, fit = isotonic_fit(np.array([0.1, 0.2, 0.2, 0.3]), np.array([1.0, 0.0, 1.0, 0.0]), np.ones(4))
    >>> xs.tolist(), fit.round(3).tolist()
    ([0.1, 0.2, 0.3], [0.5, 0.5, 0.5])
    """
    xs, fit, _ = _isotonic(x, y, w)
    return xs, fit


def _isotonic(x: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`isotonic_fit` and the fitted values at the rows ``x`` themselves."""
    keep = w > 0
    xk, yk, wk = (x, y, w) if keep.all() else (x[keep], y[keep], w[keep])
    if xk.shape[0] == 0:
        return np.zeros(1), np.zeros(1), np.zeros(x.shape[0])
    xs, inv = np.unique(xk, return_inverse=True)
    inv = inv.reshape(-1)
    wsum = np.bincount(inv, weights=wk, minlength=xs.shape[0])
    ymean = np.bincount(inv, weights=wk * yk, minlength=xs.shape[0]) / wsum
    fit: NDArray[np.float64] = np.clip(np.asarray(isotonic_regression(ymean, weights=wsum, increasing=True).x,
                                                  dtype=float), 0.0, 1.0)
    rows: NDArray[np.float64] = fit[inv] if keep.all() else np.interp(x, xs, fit)
    return xs, fit, rows


class OneVsRestIsotonic:
    """Isotonic calibration of every class column on its one-vs-rest indicator, rows renormalised.

    Parameters
    ----------
    per_group : bool, default False
        One map per (group, class) or one per class.

    Notes
    -----
    For two classes the two maps are mirror images (``1 - eta`` is the isotonic fit of
    ``1 - y`` on ``1 - s``), so rows already sum to 1 and the result equals the binary
    isotonic calibration of :class:`~fairopt.postprocessing.ThresholdDebiaser`. Rows whose
    calibrated values all vanish keep their uncalibrated scores.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> S = rng.dirichlet(np.ones(3), 300); y = (S.cumsum(1) < rng.random((300, 1))).sum(1)
    >>> cal = OneVsRestIsotonic().fit(S, y, np.zeros(300, int), 1)
    >>> bool(np.allclose(cal.transform(S, np.zeros(300, int)).sum(1), 1.0))
    True
    """

    def __init__(self, per_group: bool = False) -> None:
        self.per_group = per_group

    def fit(self, S: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int,
            sample_weight: np.ndarray | None = None) -> OneVsRestIsotonic:
        """Fit ``K`` (times ``n_groups``) isotonic maps of ``1[y = k]`` on ``S[:, k]`` (for two
        classes one map per cell, the other its mirror image)."""
        self.fit_transform(S, y, groups, n_groups, sample_weight)
        return self

    def fit_transform(self, S: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """:meth:`fit`, and :meth:`transform` of the fitting rows read off the fit (no second
        pass of interpolation)."""
        w = np.ones(S.shape[0]) if sample_weight is None else sample_weight
        self.mirror_ = S.shape[1] == 2
        cols = [1] if self.mirror_ else list(range(S.shape[1]))
        self.maps_: list[dict[int, tuple[np.ndarray, np.ndarray]]] = []
        out = np.empty_like(S)
        for rows in self._cells(groups, n_groups, S.shape[0]):   # a loop over groups and classes
            per_class = {}
            for k in cols:
                xs, fit, out[rows, k] = _isotonic(S[rows, k], (y[rows] == k).astype(float), w[rows])
                per_class[k] = (xs, fit)
            self.maps_.append(per_class)
        return self._normalise(out, S)

    def _cells(self, groups: np.ndarray, n_groups: int, n: int) -> list[np.ndarray | slice]:
        """Row indices of every group (one sort of the codes), or all rows when pooled."""
        if not self.per_group:
            return [slice(None)]
        order = np.argsort(groups, kind="stable")
        bounds = np.searchsorted(groups[order], np.arange(n_groups + 1))
        return [order[bounds[c]:bounds[c + 1]] for c in range(n_groups)]

    def transform(self, S: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Calibrated, renormalised class probabilities."""
        out = np.empty_like(S)
        for c, rows in enumerate(self._cells(groups, len(self.maps_), S.shape[0])):
            for k, (x, e) in self.maps_[c].items():
                out[rows, k] = np.interp(S[rows, k], x, e)
        return self._normalise(out, S)

    def _normalise(self, out: np.ndarray, S: np.ndarray) -> np.ndarray:
        """The mirror column for two classes; else rows renormalised (all-zero rows keep ``S``)."""
        if self.mirror_:
            out[:, 0] = 1.0 - out[:, 1]
            return out
        tot = out.sum(axis=1, keepdims=True)
        ok = tot[:, 0] > 0
        out[ok] /= tot[ok]
        out[~ok] = S[~ok]
        return out


def quantise_scores(S: np.ndarray, bins: int) -> np.ndarray:
    """Round every probability to the nearest multiple of ``1 / bins`` (rows no longer need to
    sum to 1; each entry moves by at most ``1 / (2 bins)``).

    Examples
    --------
    >>> quantise_scores(np.array([[0.26, 0.74]]), 4).tolist()
    [[0.25, 0.75]]
    """
    out: np.ndarray = np.rint(S * bins) / bins
    return out
