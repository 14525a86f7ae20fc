"""One group's prediction distribution and the collapse of rows to it (regression parity).

Kept apart from :mod:`fairopt.formulations.regression_parity` so the closed-form and sweep
modules can read the same types without an import loop; everything here is re-exported there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from fairopt.errors import DataValidationError

__all__: list[str] = []


class ParityProblem(Protocol):
    """What the closed form and the sweep read of a regression-parity problem."""

    dists: list[GroupDistribution]
    shares: np.ndarray
    grid: np.ndarray
    eps: float
    loss: str
    cells: Any


@dataclass
class GroupDistribution:
    """One group's predictions collapsed to distinct sorted ``values`` with ``weights`` summing to 1.

    Examples
    --------
    >>> d = GroupDistribution(np.array([0.0, 1.0]), np.array([0.25, 0.75]))
    >>> d.levels.tolist(), float(d.quantile(np.array([0.5]))[0])
    ([0.0, 0.25, 1.0], 1.0)
    """

    values: np.ndarray
    weights: np.ndarray
    levels: np.ndarray = field(init=False)        # c_0 = 0, ..., c_n = 1
    first_moment: np.ndarray = field(init=False)  # S_k = sum_{k' <= k} w s

    def __post_init__(self) -> None:
        self.levels = np.concatenate([[0.0], np.cumsum(self.weights)])
        self.levels[-1] = 1.0
        self.first_moment = np.concatenate([[0.0], np.cumsum(self.weights * self.values)])

    @property
    def size(self) -> int:
        """Number of distinct values."""
        return int(self.values.shape[0])

    def quantile(self, u: np.ndarray) -> np.ndarray:
        """Left-continuous quantile ``Q(u) = min{s: F(s) >= u}``."""
        k = np.searchsorted(self.levels[1:], u, side="left")
        return self.values[np.minimum(k, self.size - 1)]

    def cdf(self, z: np.ndarray) -> np.ndarray:
        """``F(z) = P(s <= z)``."""
        return self.levels[np.searchsorted(self.values, z, side="right")]


def collapse_groups(pred: np.ndarray, codes: np.ndarray, n_groups: int,
                    sample_weight: np.ndarray | None = None) -> tuple[list[GroupDistribution], np.ndarray]:
    """Sufficient statistics: every group's distinct predictions with weights, and group shares.

    Rows of zero weight carry no mass and are left out of the distributions (predict still maps
    their values). One sort of all rows; no loop over rows.

    Examples
    --------
    >>> dists, shares = collapse_groups(np.array([1.0, 0.0, 1.0, 2.0]), np.array([0, 0, 0, 1]), 2)
    >>> dists[0].values.tolist(), dists[0].weights.round(3).tolist(), shares.tolist()
    ([0.0, 1.0], [0.333, 0.667], [0.75, 0.25])
    """
    w = np.ones(pred.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    live = w > 0
    pred, codes, w = pred[live], codes[live], w[live]
    # two stable passes (values, then group codes by a radix sort on small ints) beat a lexsort
    order = np.argsort(pred, kind="stable")
    small = codes.astype(np.int16) if 0 <= n_groups < 2**15 else codes
    order = order[np.argsort(small[order], kind="stable")]
    p, c, w = pred[order], codes[order], w[order]
    new = np.ones(p.shape[0], bool)
    new[1:] = (p[1:] != p[:-1]) | (c[1:] != c[:-1])
    starts = np.flatnonzero(new)
    vals, cods, mass = p[starts], c[starts], np.add.reduceat(w, starts) if starts.size else np.zeros(0)
    totals = np.bincount(cods, weights=mass, minlength=n_groups)
    if np.any(totals <= 0):
        raise DataValidationError(f"group code(s) {np.flatnonzero(totals <= 0).tolist()} have no rows of positive "
                                  "weight; every group needs some mass to have an output distribution.")
    bounds = np.searchsorted(cods, np.arange(n_groups + 1))
    dists = [GroupDistribution(vals[bounds[a]:bounds[a + 1]], mass[bounds[a]:bounds[a + 1]] / totals[a])
             for a in range(n_groups)]
    return dists, totals / totals.sum()
