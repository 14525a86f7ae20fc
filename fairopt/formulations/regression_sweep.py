"""The regression-parity transport with squared loss at ``eps > 0`` without an LP.

Between grid points ``y_j < y_{j+1}`` the squared-loss LP only sees the midpoint
``m_j = (y_j + y_{j+1}) / 2``: its piece for interval ``j`` is ``2 (y_{j+1} - y_j)`` times

    min_G  sum_a p_a (H_a(G_a) - m_j G_a)   s.t.  |G_a - P| <= eps,  P = sum_a p_a G_a,

with ``H_a(G) = int_0^G Q_a`` (convex). Split it as ``min_P V(P) - m_j P`` with the *allocation*
``V(P) = min {sum_a p_a H_a(G_a) : G_a in [P - eps, P + eps] cap [0, 1], sum_a p_a G_a = P}``.
Duality (the conjugate of ``H_a`` is ``E(x - S_a)_+``) gives the slope of ``V`` in closed form:

    V'(mu) = sum_a p_a clip(t, Q_a(mu - eps), Q_a(mu + eps)),  t = weighted median of the 2A
             values {Q_a(mu - eps), Q_a(mu + eps)} (weights p_a; Q_a = -inf below 0, +inf above 1),

a non-decreasing step function of ``mu`` whose steps are at the groups' levels shifted by
``+-eps`` (the *mu-cells*). So ``P_j`` is where ``V'`` crosses ``m_j`` (one ``searchsorted``), and
the groups' CDFs are the allocation at ``P_j``: ``G_a = clip(F_a(tau), P - eps, P + eps)`` with
``tau`` the smallest prediction whose allocation reaches ``P`` (groups with an atom at ``tau``
filled by a common fraction). ``P_j`` and the allocation are non-decreasing in ``j``, so the
LP's monotonicity rows hold.

Computation, with no search per interval: for every pooled prediction ``tau_k`` the largest ``P``
its filled allocation still reaches is the root ``mu_k`` of ``sum_a p_a clip(F_a(tau_k) - P, -eps,
eps) = 0`` (piecewise linear: one row sort of its ``2A`` kinks), so ``tau(P)`` is a
``searchsorted`` in ``mu``. ``V'`` is constant between the points ``mu_k`` and the groups' levels
``+-eps``; away from them the groups held at a band edge move with ``P`` at cost ``Q_a(G_a)`` and the
rest of the unit moves at ``tau``: ``V' = sum_moving p_a Q_a(G_a) + (1 - p_moving) tau``. It is
evaluated once per cell; each ``P_j`` is then the left end of the first cell with ``V' >= m_j``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fairopt.formulations._regression_groups import GroupDistribution, ParityProblem

__all__ = ["absolute_sweep", "allocation", "on_grid", "squared_sweep"]

_F = NDArray[np.float64]


class _Pooled:
    """Pooled distinct predictions ``tau`` and every group's CDF there (``F[a, k] = F_a(tau_k)``)."""

    def __init__(self, dists: list[GroupDistribution], shares: _F, eps: float, chunk: int = 1 << 13,
                 median: bool = False) -> None:
        self.dists, self.shares, self.eps = dists, shares, eps
        vals = np.concatenate([d.values for d in dists])
        order = np.argsort(vals, kind="stable")              # the groups' sorted runs: a merge
        both = vals[order]
        keep = np.ones(both.shape[0], bool)
        keep[1:] = both[1:] > both[:-1]
        self.tau = both[keep]
        rank = np.empty(vals.shape[0], np.int64)
        rank[order] = np.cumsum(keep) - 1                     # index in ``tau`` of every atom
        N, A = self.tau.shape[0], len(dists)
        self.F = np.empty((A, N))
        start = 0
        for a, d in enumerate(dists):                         # F_a(tau_k) = level after the atoms <= tau_k:
            r = rank[start:start + d.size]                    # it steps up at the group's atoms, one repeat
            self.F[a] = np.repeat(d.levels, np.diff(np.concatenate([[0], r, [N]])))
            start += d.size
        self.mu = np.empty(N)
        #: per pooled prediction, the lower p-weighted median of the groups' CDFs (when ``median``)
        self.median = np.empty(N if median else 0)
        for lo in range(0, N, chunk):
            self._roots(lo, min(lo + chunk, N), median)
        self.mu = np.maximum.accumulate(self.mu)

    def _roots(self, lo: int, hi: int, median: bool) -> None:
        """``mu`` (and ``median``) on pooled predictions ``lo .. hi - 1``: one row sort of the ``2A`` kinks
        ``F_a -+ eps`` of ``g(P) = sum_a p_a clip(F_a - P, -eps, eps)``, which falls from ``eps`` to ``-eps``."""
        A, eps, shares = len(self.dists), self.eps, self.shares
        f = np.ascontiguousarray(self.F[:, lo:hi].T)
        kinks = np.empty((hi - lo, 2 * A))
        np.subtract(f, eps, out=kinks[:, :A])
        np.add(f, eps, out=kinks[:, A:])
        order = np.argsort(kinks, axis=1)
        b = np.take_along_axis(kinks, order, axis=1)
        slope = np.concatenate([-shares, shares])[order]
        np.cumsum(slope, axis=1, out=slope)                      # slope of g after each kink
        rise = np.diff(b, axis=1)
        rise *= slope[:, :-1]
        np.cumsum(rise, axis=1, out=rise)                        # g at kink i + 1, minus eps
        i = np.argmax(rise < -eps - 1e-15, axis=1) + 1           # first kink where g < 0 (g ends at -eps)
        rows = np.arange(hi - lo)
        s_, b_ = slope[rows, i - 1], b[rows, i - 1]
        g_ = eps + np.where(i >= 2, rise[rows, np.maximum(i - 2, 0)], 0.0)
        self.mu[lo:hi] = b_ + np.where(s_ < 0, g_ / np.where(s_ < 0, -s_, 1.0), 0.0)
        if median:      # the kinks F_a - eps come in ``order`` sorted by F_a: their weights' cumsum
            cum = np.concatenate([shares, np.zeros(A)])[order]
            np.cumsum(cum, axis=1, out=cum)
            at = np.argmax(cum >= 0.5 - 1e-12, axis=1)
            self.median[lo:hi] = f[rows, order[rows, at]]

    def allocate(self, P: _F) -> tuple[_F, _F, NDArray[np.bool_]]:
        """``(G (A, len(P)), tau (len(P),), flexible (A, len(P)))`` of the allocation at ``P``."""
        k = np.minimum(np.searchsorted(self.mu, P - 1e-13, side="left"), self.tau.shape[0] - 1)
        lo_b, hi_b = (P - self.eps)[None, :], (P + self.eps)[None, :]
        above = np.clip(self.F[:, k], lo_b, hi_b)
        prev = self.F[:, np.maximum(k - 1, 0)]
        prev[:, k == 0] = 0.0
        below = np.clip(prev, lo_b, hi_b)
        need, room = P - self.shares @ below, self.shares @ (above - below)
        theta = np.clip(np.where(room > 0, need / np.where(room > 0, room, 1.0), 0.0), 0.0, 1.0)
        G: _F = below + theta[None, :] * (above - below)
        return G, self.tau[k], above > below

    def slope(self, P: _F) -> _F:
        """``V'(P)`` at points ``P`` strictly inside the cells."""
        G, tau, flexible = self.allocate(P)
        eps = self.eps
        moving = ~flexible & (((np.abs(G - (P + eps)[None, :]) < 1e-12) & (P + eps < 1.0)[None, :])
                              | ((np.abs(G - (P - eps)[None, :]) < 1e-12) & (P - eps > 0.0)[None, :]))
        q = np.vstack([d.quantile(g) for d, g in zip(self.dists, G, strict=True)])
        p_moving = self.shares @ moving
        out: _F = self.shares @ (moving * q) + (1.0 - p_moving) * tau
        return out


def _cell_slopes(pool: _Pooled, block: int = 1 << 16) -> tuple[_F, _F]:
    """The cell ends (the roots ``mu``, ``eps`` and the groups' upper levels ``+-eps`` in ``[0, 1]``) and
    ``V'`` on every cell, from one merge: a count of each group's shifted levels below a cell gives
    its quantile index there, so no cell is searched for."""
    dists, shares, eps = pool.dists, pool.shares, pool.eps
    A = len(dists)
    parts = ([np.zeros(1), np.ones(1), pool.mu, np.full(1, min(eps, 1.0))]
             + [np.clip(d.levels[1:] - eps, 0.0, 1.0) for d in dists]
             + [np.clip(d.levels[1:] + eps, 0.0, 1.0) for d in dists])
    vals = np.concatenate(parts)
    order = np.argsort(vals, kind="stable")              # sorted runs: a merge
    sv = vals[order]
    new = np.concatenate([[True], sv[1:] > sv[:-1]])
    ends = sv[new]
    rank = np.empty(vals.shape[0], np.int64)
    rank[order] = np.cumsum(new) - 1                      # index in ``ends`` of every value
    C = ends.shape[0] - 1
    offsets = np.cumsum([0] + [p.shape[0] for p in parts])
    # one ragged slice per part (a loop over the groups' parts, not rows; the work inside is vectorised)
    ranks = [np.minimum(rank[offsets[i]:offsets[i + 1]], C) for i in range(len(parts))]

    def by_count(i: int, table: NDArray[Any], c0: int, c1: int) -> NDArray[Any]:
        """On cells ``c0 .. c1 - 1``, ``table[m]`` with ``m`` the number of values of part ``i`` at or below
        the cell's left end (clipped to the table): the part is sorted, so ``m`` steps up at its ranks."""
        r = ranks[i]
        a0, a1 = int(np.searchsorted(r, c0, side="right")), int(np.searchsorted(r, c1, side="left"))
        runs = np.diff(np.concatenate([[c0], r[a0:a1], [c1]]))
        out: NDArray[Any] = np.repeat(table[np.minimum(np.arange(a0, a1 + 1), table.shape[0] - 1)], runs)
        return out

    mids = 0.5 * (ends[1:] + ends[:-1])
    steps = np.arange(pool.tau.shape[0])
    v: _F = np.empty(C)
    for c0 in range(0, C, block):                         # blocks of cells: the temporaries stay in cache
        c1 = min(c0 + block, C)
        k = by_count(2, steps, c0, c1)                    # the atom being filled: first root >= P
        before, first = k - 1, k == 0
        top, bottom = mids[c0:c1] + eps, mids[c0:c1] - eps
        top_open, bottom_open = top < 1.0, bottom > 0.0
        num, p_moving = np.zeros(c1 - c0), np.zeros(c1 - c0)
        for a, (p, d) in enumerate(zip(shares, dists, strict=True)):
            column = pool.F[a]
            up = column[before] >= top                    # held at the band's top: G = P + eps
            up &= top_open
            up[first] = False                             # before the first atom F_a = 0 < P + eps
            down = column[k] <= bottom                    # held at the band's bottom: G = P - eps
            down &= bottom_open
            q = np.where(up, by_count(4 + a, d.values, c0, c1),
                         np.where(down, by_count(4 + A + a, d.values, c0, c1), 0.0))
            num += p * q                                  # Q_a(P + eps) or Q_a(P - eps) (never both)
            p_moving += p * (up | down)
        v[c0:c1] = num + (1.0 - p_moving) * pool.tau[k]
    return ends, v


def allocation(dists: list[GroupDistribution], shares: _F, P: _F, eps: float) -> _F:
    """The groups' CDFs ``(A, len(P))`` of the cheapest allocation at pooled levels ``P``.

    ``G_a = clip(F_a(tau), P - eps, P + eps)`` with ``tau`` the smallest prediction value whose
    allocation reaches ``P``; the groups with an atom at ``tau`` are filled by a common fraction.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> allocation(dists, shares, np.array([0.5]), 0.1).round(6).tolist()
    [[0.6], [0.4]]
    """
    G: _F = _Pooled(dists, shares, eps).allocate(np.asarray(P, dtype=float))[0]
    return G


def squared_sweep(form: ParityProblem, chunk: int = 1 << 14) -> tuple[_F, _F] | None:
    """``(cdf, pooled_cdf)`` on the grid for the squared loss at ``eps > 0``; ``None`` otherwise.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> cdf, pooled = squared_sweep(RegressionParity(dists, shares, np.arange(4.0), eps=0.25))
    >>> bool(np.abs(cdf - pooled).max() <= 0.25 + 1e-12), cdf[:, -1].tolist()
    (True, [1.0, 1.0])
    """
    if form.loss != "squared" or form.eps <= 0.0:
        return None
    dists, shares, grid, eps = form.dists, form.shares, form.grid, form.eps
    pooled = _Pooled(dists, shares, eps)
    ends, v = _cell_slopes(pooled)
    v = np.maximum.accumulate(v)
    m = 0.5 * (grid[:-1] + grid[1:])
    at = np.searchsorted(v, m, side="left")                # left end of the first cell with V' >= m
    first = np.concatenate([[True], at[1:] > at[:-1]])     # ``at`` is sorted: allocate each level once
    cdf = _spread(pooled, ends[at[first]], np.cumsum(first) - 1, chunk)
    return cdf, shares @ cdf


def _spread(pooled: _Pooled, P: _F, which: NDArray[np.int64], chunk: int) -> _F:
    """The groups' CDFs on the grid: the allocation at the non-decreasing levels ``P`` (made monotone
    against rounding), column ``which[j]`` on grid point ``j`` (``which`` non-decreasing; ``-1``: all
    zero), last column 1. Chunk by chunk of levels, each written straight to its run of grid points,
    row by row (a column gather of an ``(A, M)`` array is many times slower)."""
    A = len(pooled.dists)
    cdf = np.empty((A, which.shape[0] + 1))
    starts = np.searchsorted(which, np.arange(0, P.shape[0] + chunk, chunk), side="left")
    cdf[:, :starts[0]] = 0.0                     # grid points below every prediction
    carry = np.zeros((A, 1))
    for c, lo in enumerate(range(0, P.shape[0], chunk)):
        G = np.hstack([carry, pooled.allocate(P[lo:lo + chunk])[0]])
        np.maximum.accumulate(G, axis=1, out=G)
        carry = G[:, -1:]
        s, e = starts[c], starts[c + 1]
        if e > s:
            idx = which[s:e] - (lo - 1)          # column 0 holds the carry
            for a in range(A):                   # a loop over groups
                np.take(G[a], idx, out=cdf[a, s:e])
    cdf[:, -1] = 1.0
    return cdf


def on_grid(dists: list[GroupDistribution], grid: _F) -> bool:
    """Whether every prediction of every group is a grid point.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, _ = collapse_groups(np.array([0.0, 1.0, 2.0]), np.array([0, 0, 1]), 2)
    >>> on_grid(dists, np.array([0.0, 1.0, 2.0])), on_grid(dists, np.array([0.0, 2.0]))
    (True, False)
    """
    vals = np.concatenate([d.values for d in dists])
    pos = np.minimum(np.searchsorted(grid, vals), grid.shape[0] - 1)
    return bool(np.all(grid[pos] == vals))


def absolute_sweep(form: ParityProblem, chunk: int = 1 << 14) -> tuple[_F, _F] | None:
    """``(cdf, pooled_cdf)`` on the grid for the absolute loss at ``eps > 0``; ``None`` otherwise.

    Applies when the grid holds every prediction (the default grid does): each group's CDF is then
    constant on every grid interval ``[y_j, y_{j+1})`` (value ``F_{a,j}``), the loss is
    ``sum_j (y_{j+1} - y_j) sum_a p_a |F_{a,j} - G_{a,j}|`` and, apart from the CDFs' monotonicity,
    separates over intervals. Per interval the cheapest groups' CDFs at a pooled level ``P`` cost
    ``V(P) = sum_a p_a dist(F_{a,j}, [P - eps, P + eps]) + |R(P)|`` with the residual
    ``R(P) = sum_a p_a clip(P - F_{a,j}, -eps, eps)``; ``V`` is convex with minimiser
    ``P_j = clip(mu_j, med_j - eps, med_j + eps)`` (``mu_j`` the root of ``R``, ``med_j`` the lower
    p-weighted median of the ``F_{a,j}``), both non-decreasing in ``j``. The squared sweep's
    :func:`allocation` at ``P_j`` is an optimal placement of the residual (it raises every group to
    at least ``clip(F_{a,j}, P_j - eps, P_j + eps)`` when ``R(P_j) > 0``, lowers every one to at most
    that when ``R(P_j) < 0``), and it is non-decreasing in ``P``, so the CDFs are monotone and
    every interval is at its own optimum: the sum is the LP's optimum. ``mu`` and ``med`` are read
    once per pooled prediction and the grid points between two predictions share them.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> cdf, pooled = absolute_sweep(RegressionParity(dists, shares, np.arange(4.0), 0.25, "absolute"))
    >>> cdf.tolist(), pooled.tolist()
    ([[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 1.0]], [0.25, 0.25, 0.75, 1.0])
    """
    if form.loss != "absolute" or form.eps <= 0.0 or not on_grid(form.dists, form.grid):
        return None
    dists, shares, grid, eps = form.dists, form.shares, form.grid, form.eps
    pooled = _Pooled(dists, shares, eps, median=True)
    med = np.maximum.accumulate(pooled.median)            # non-decreasing exactly; this only guards rounding
    P = np.clip(pooled.mu, med - eps, med + eps)
    # every grid point reads the last prediction at or below it (none: below every prediction, F = G = 0)
    at = np.searchsorted(pooled.tau, grid[:-1], side="right") - 1
    cdf = _spread(pooled, P, at, chunk)
    return cdf, shares @ cdf

