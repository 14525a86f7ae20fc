"""Isotonic score calibration in front of the randomized-threshold rule.

The rule maximises ``E[h f]`` on the fitting sample, which equals expected accuracy (up to a
constant) only when ``f = 2 eta(x) - 1`` with ``eta(x) = P(y=1 | x)``. Scores of random forests,
kNN or networks are usually not calibrated. :class:`IsotonicScoreMap` fits the monotone
estimate ``eta_hat`` of ``P(y=1 | score)`` by isotonic regression (pool adjacent violators,
``sklearn.isotonic.IsotonicRegression``) on the labelled fitting sample and maps every score to
``2 eta_hat - 1``.

* Pooled (``per_group=False``): one map for all rows. It keeps the order of scores inside
  every group and only merges blocks of scores into ties.
* Per group (``per_group=True``): one map per group. On the fitting sample,
  ``sum_i h_i (2 eta_hat_i - 1) = sum_i h_i (2 y_i - 1)`` for any rule constant on the isotonic
  blocks, so with ``gamma -> 0`` and free ``rho`` the thresholded rule is the most accurate
  parity rule on the fitting sample among rules constant on the blocks. Those rules reach the
  ROC convex hull of each group, as fairlearn's ``ThresholdOptimizer`` does.

Between breakpoints the map interpolates linearly, and outside the fitted range it clips to the
end values (``out_of_bounds="clip"``). So at the fitting rows it returns the isotonic fit itself.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.isotonic import IsotonicRegression

from fairopt._docstrings import fill_doc
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["IsotonicScoreMap"]


@fill_doc
class IsotonicScoreMap:
    """Monotone map ``f -> 2 eta_hat(f) - 1`` fitted by isotonic regression of ``y`` on ``f``.

    Parameters
    ----------
    per_group : bool, default False
        Fit one non-decreasing map per group (``True``) or one pooled map (``False``).

    Attributes
    ----------
    breakpoints_ : list of tuple (ndarray, ndarray)
        Per map, the isotonic breakpoints ``(score, eta_hat)`` (sklearn's ``X_thresholds_`` and
        ``y_thresholds_``); one entry per group, or a single entry when pooled.
    n_groups_ : int
        Number of groups seen at fit.

    Examples
    --------
    {example_scores_groups}
    >>> y = (rng.uniform(size=400) < (scores + 1.3) / 2.6).astype(int)
    >>> mapped = IsotonicScoreMap().fit(scores, y, groups).transform(np.array([-1.0, 0.0, 1.0]),
    ...                                                               np.array([0, 0, 0]))
    >>> bool(np.all(np.diff(mapped) >= 0)), bool(np.all(np.abs(mapped) <= 1))
    (True, True)
    """

    def __init__(self, per_group: bool = False) -> None:
        self.per_group = per_group

    def fit(self, scores: ArrayLike, y: ArrayLike, groups: ArrayLike, n_groups: int | None = None,
            sample_weight: ArrayLike | None = None) -> IsotonicScoreMap:
        """Fit the isotonic regression(s) of ``y`` on ``scores``.

        Parameters
        ----------
        scores : array-like of float, shape (n,)
            Raw scores (any monotone scale; usually ``[-1, 1]``).
        y : array-like of {0, 1}, shape (n,)
            Labels of the fitting sample.
        groups : array-like of int, shape (n,)
            Group codes ``0 .. K-1``.
        n_groups : int, optional
            Number of groups (default ``max(groups) + 1``).
        sample_weight : array-like, optional
            Row weights.
        """
        f = np.asarray(scores, dtype=float).reshape(-1)
        yv = np.asarray(y, dtype=float).reshape(-1)
        g = np.asarray(groups, dtype=np.int64).reshape(-1)
        w = np.ones_like(f) if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
        if not (f.shape == yv.shape == g.shape == w.shape):
            raise DataValidationError("scores, y, groups and sample_weight must have one entry per row.")
        if not np.isin(yv, (0.0, 1.0)).all():
            raise DataValidationError("isotonic calibration needs binary 0/1 labels y.")
        self.n_groups_ = int(g.max()) + 1 if n_groups is None else int(n_groups)
        keys = [g == k for k in range(self.n_groups_)] if self.per_group else [np.ones(f.shape[0], bool)]
        self.breakpoints_: list[tuple[np.ndarray, np.ndarray]] = []
        for k, m in enumerate(keys):
            if w[m].sum() <= 0:
                raise DataValidationError(f"group {k} has no rows (or zero weight) to fit its isotonic "
                                          "calibration; use calibration='isotonic' (pooled) or merge groups.")
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
            iso.fit(f[m], yv[m], sample_weight=w[m])
            self.breakpoints_.append((np.asarray(iso.X_thresholds_, float), np.asarray(iso.y_thresholds_, float)))
        return self

    def eta(self, scores: ArrayLike, groups: ArrayLike | None) -> np.ndarray:
        """Calibrated ``eta_hat = P(y=1 | score, group)`` (vectorised ``np.interp`` per map)."""
        if not hasattr(self, "breakpoints_"):
            raise DataValidationError("IsotonicScoreMap is not fitted; call fit first.")
        f = np.asarray(scores, dtype=float).reshape(-1)
        if not self.per_group:
            x, e = self.breakpoints_[0]
            result: np.ndarray = np.interp(f, x, e)
            return result
        g = np.asarray(groups, dtype=np.int64).reshape(-1)
        if g.shape != f.shape or (g.size and (g.min() < 0 or g.max() >= len(self.breakpoints_))):
            raise DataValidationError(f"groups must be codes 0..{len(self.breakpoints_) - 1}, one per score.")
        out = np.empty_like(f)
        for k, (x, e) in enumerate(self.breakpoints_):   # loop over groups, not rows
            m = g == k
            out[m] = np.interp(f[m], x, e)
        return out

    def transform(self, scores: ArrayLike, groups: ArrayLike | None) -> np.ndarray:
        """Calibrated scores ``2 eta_hat - 1`` in ``[-1, 1]``."""
        return 2.0 * self.eta(scores, groups) - 1.0
