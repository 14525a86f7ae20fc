r"""Discretisation of Agarwal, Dudík & Wu (2019, Sec. 4.1-4.2) for statistical parity in regression.

Notation (module-wide): ``N`` grid size, :math:`\alpha = 1/N`, thresholds
:math:`\mathcal Z = \{j\alpha : j = 1..N\}` (``grid``), grid index :math:`k(u) = \#\{j : j\alpha \le u\}`
so that the rounded-down predictor is :math:`\underline f(x) = \alpha\,k(f(x))` and the induced
classifier is :math:`h_f(x, j\alpha) = 1\{k(f(x)) \ge j\}`. Labels are snapped to an
:math:`\alpha/2`-cover :math:`\tilde{\mathcal Y}` of the training labels.

All threshold comparisons go through :meth:`Grid.index`, a single ``searchsorted`` on the same
``grid`` array, so rounded predictors and threshold classifiers can never disagree at grid points.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt.errors import ConfigError
from fairopt.reductions.losses import Loss


class Grid:
    """Threshold grid :math:`\\{1/N, \\dots, 1\\}` with the integer-index rule.

    Parameters
    ----------
    size : int
        ``N`` (number of thresholds); ``alpha = 1/N``.

    Examples
    --------
    >>> grid = Grid(4)
    >>> grid.grid.tolist()
    [0.25, 0.5, 0.75, 1.0]
    >>> grid.index([0.1, 0.3, 1.0]).tolist()
    [0, 1, 4]
    """

    def __init__(self, size: int) -> None:
        if int(size) != size or size < 1:
            raise ConfigError(f"grid_size must be a positive integer, got {size!r}.")
        self.size = int(size)
        self.alpha = 1.0 / self.size
        self.grid = np.arange(1, self.size + 1, dtype=float) / self.size
        self._levels = np.concatenate([[0.0], self.grid])  # value of cell k, bit-identical to grid

    def index(self, u: ArrayLike) -> NDArray[np.intp]:
        """``k(u) = #{j : grid[j] <= u}`` in ``0..N`` (integer array)."""
        return np.searchsorted(self.grid, np.asarray(u, dtype=float), side="right")

    def round_down(self, u: ArrayLike) -> NDArray[np.float64]:
        """:math:`\\lfloor u \\rfloor_\\alpha = \\alpha k(u)`, the rounded-down prediction.

        The value of cell ``k`` is taken from the grid array itself, so ``index(round_down(u))``
        equals ``index(u)`` exactly.
        """
        return self._levels[self.index(u)]

    def round_mid(self, u: ArrayLike) -> NDArray[np.float64]:
        """Cell midpoint ``min(alpha k(u) + alpha/2, 1)`` (a strictly increasing map of the cell)."""
        out: NDArray[np.float64] = np.minimum(self.index(u) * self.alpha + 0.5 * self.alpha, 1.0)
        return out

    def __repr__(self) -> str:
        return f"Grid(size={self.size})"


def label_cover(labels: ArrayLike, alpha: float) -> NDArray[np.float64]:
    r"""Greedy :math:`\alpha/2`-cover of the label values.

    Left to right: take the smallest uncovered label ``v`` and add the largest label
    ``<= v + alpha/2``; it covers every label up to ``c + alpha/2``. Cover points are labels,
    every label is within ``alpha/2`` of a cover point and distinct cover points are more than
    ``alpha/2`` apart, so at most ``2N`` points are produced for labels in ``[0, 1]``. The loop runs
    over cover points, not over data rows.

    Examples
    --------
    >>> import numpy as np
    >>> label_cover(np.array([0.0, 0.1, 0.2, 0.9]), 0.5).tolist()      # every label within 0.25
    [0.2, 0.9]
    """
    values = np.unique(np.asarray(labels, dtype=float))
    half = 0.5 * alpha
    cover: list[float] = []
    start = 0
    while start < values.size:
        v = values[start]
        stop = np.searchsorted(values, v + half, side="right")  # labels <= v + alpha/2
        c = values[stop - 1]
        cover.append(c)
        start = np.searchsorted(values, c + half, side="right")  # first label > c + alpha/2
    return np.asarray(cover, dtype=float)


def snap_labels(labels: ArrayLike, cover: NDArray[np.float64], alpha: float) -> NDArray[np.intp]:
    r"""Index of :math:`\underline y`, the smallest cover point with ``|y - c| <= alpha/2``.

    Uses the same float expression ``c + alpha/2`` as :func:`label_cover`, so every training
    label gets the cover point that covered it during construction.
    """
    y = np.asarray(labels, dtype=float)
    idx = np.searchsorted(cover + 0.5 * alpha, y, side="left")
    if np.any(idx >= cover.size) or np.any(np.abs(cover[np.minimum(idx, cover.size - 1)] - y)
                                             > 0.5 * alpha + 1e-12):
        raise ConfigError("labels lie outside the label cover; build the cover from these labels.")
    return idx


def cost_table(loss: Loss, cover: np.ndarray, grid: Grid) -> np.ndarray:
    r"""Eq. (9): :math:`c(\tilde y, z) = N(\ell(\tilde y, z+\alpha/2) - \ell(\tilde y, z-\alpha/2))`.

    Returns an array of shape ``(|cover|, N)`` with values in ``[-1, 1]``.
    """
    z = grid.grid[None, :]
    y = cover[:, None]
    half = 0.5 * grid.alpha
    out: np.ndarray = grid.size * (loss.value(y, z + half) - loss.value(y, z - half))
    return out


def prefix_table(costs: np.ndarray) -> np.ndarray:
    r"""Prefix sums :math:`T[\cdot, k] = \frac1N\sum_{j\le k} c(\cdot, j\alpha)` for ``k = 0..N``.

    ``costs`` has the grid on its last axis (length ``N``); the result has length ``N + 1`` there.
    """
    n_grid = costs.shape[-1]
    zeros = np.zeros((*costs.shape[:-1], 1))
    out: np.ndarray = np.concatenate([zeros, np.cumsum(costs, axis=-1)], axis=-1) / n_grid
    return out


def discretized_loss(loss: Loss, y_cover_values: ArrayLike, u: ArrayLike, grid: Grid) -> np.ndarray:
    r"""Eq. (5): :math:`\ell_\alpha(y,u)=\ell(\underline y, \lfloor u\rfloor_\alpha+\alpha/2)` (u clipped at 1)."""
    return loss.value(y_cover_values, grid.round_down(u) + 0.5 * grid.alpha)


def survival_by_group(k: np.ndarray, group: np.ndarray, n_groups: int, n_grid: int,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
    r"""Sort-and-sweep of :math:`\hat P[f(X) \ge j\alpha \mid A=a]` for all groups and thresholds.

    Counting grid indices per group (``bincount``) and sweeping the counts from the top cell down
    (reversed cumulative sum) is the sorted sweep of Appendix F with the sort done by bucketing:
    :math:`O(n + |\mathcal A| N)` after the grid indices are known.

    Returns an array of shape ``(n_groups, N)``: column ``j - 1`` is threshold ``j alpha``.
    """
    flat = group.astype(np.int64) * (n_grid + 1) + k
    counts = np.bincount(flat, weights=sample_weight, minlength=n_groups * (n_grid + 1))
    counts = counts.reshape(n_groups, n_grid + 1)
    tail = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # tail[a, j] = #{k >= j}
    totals = tail[:, :1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, tail[:, 1:] / np.where(totals > 0, totals, 1.0), 0.0)
