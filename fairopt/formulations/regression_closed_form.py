"""Closed-form optima of the regression-parity transport at ``eps = 0`` (no LP).

At ``eps = 0`` every group gets the same output distribution ``nu``, and the loss
``sum_a p_a W_c(mu_a, nu)`` is a sum over quantile levels ``u`` of ``sum_a p_a c(Q_a(u) - Q_nu(u))``
(the monotone coupling is optimal for a convex cost ``c``). It is minimised pointwise in ``u``:

* squared loss: ``Q_nu(u) = sum_a p_a Q_a(u)``, the Wasserstein-2 barycenter (Chzhen et al. 2020;
  Le Gouic et al. 2020);
* absolute loss: ``Q_nu(u)`` = a weighted median of the ``Q_a(u)``; its CDF is, at every ``z``, a
  weighted median of the groups' CDFs ``F_a(z)``, which minimises ``sum_a p_a |F_a(z) - G|``
  pointwise, so it is optimal for ``W_1 = int |F_a - G| dz``.

All ``Q_a`` are constant between the merged levels of the groups (the *cells*), so everything is
computed on the cells. One sort of all atoms by level gives the cells; walking it, the quantile of
exactly one group moves at each step, so the barycenter is a single cumulative sum. The result
equals the grid LP's optimum whenever the grid holds the output support (the barycenter for the
squared loss; every prediction for the absolute loss, which also makes the absolute cost
piecewise linear exactly on the grid); otherwise :func:`closed_form` returns ``None`` and the LP
runs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fairopt.formulations._regression_groups import GroupDistribution, ParityProblem

__all__ = ["Cells", "closed_form", "default_grid", "distinct_values", "input_gap", "merged_cells"]

_F = NDArray[np.float64]
_I = NDArray[np.int64]


@dataclass
class Cells:
    """The merged quantile cells of several groups.

    Attributes
    ----------
    mass : ndarray (K,)
        Length of each cell in ``u`` (all positive; they sum to 1).
    upper : ndarray (K,)
        Upper level of each cell (``u`` at its right end).
    barycenter : ndarray (K,)
        ``sum_a p_a Q_a(u)`` on each cell (non-decreasing).
    ends : list of ndarray
        Per group, one past the last cell of each of its atoms (atom ``k`` covers cells
        ``ends[a][k-1] .. ends[a][k] - 1``).

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 4.0]), np.array([0, 0, 1, 1]), 2)
    >>> cells = merged_cells(dists, shares)
    >>> cells.mass.tolist(), cells.barycenter.tolist(), cells.atoms(1).tolist()
    ([0.5, 0.5], [1.0, 2.5], [0, 1])
    """

    mass: _F
    upper: _F
    barycenter: _F
    ends: list[_I]

    def atoms(self, a: int) -> _I:
        """Atom index of group ``a`` on every cell."""
        counts = np.diff(self.ends[a], prepend=0)
        idx: _I = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
        return idx


def merged_cells(dists: list[GroupDistribution], shares: _F) -> Cells:
    """Cells of the merged quantile levels and the squared-loss barycenter on them.

    Each atom ``k`` of group ``a`` is an event at its upper level ``c_{a,k+1}``; after it the group's
    quantile moves to atom ``k + 1`` and the barycenter rises by ``p_a (s_{a,k+1} - s_{a,k})``.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 3.0]), np.array([0, 0, 1]), 2)
    >>> merged_cells(dists, shares).barycenter.round(4).tolist()
    [1.0, 1.6667]
    """
    sizes = [d.size for d in dists]
    level = np.concatenate([d.levels[1:] for d in dists])
    inc = np.concatenate([p * np.append(np.diff(d.values), 0.0) for p, d in zip(shares, dists, strict=True)])
    order = np.argsort(level, kind="stable")     # the groups' levels are sorted runs: a merge
    level, inc = level[order], inc[order]
    mass = np.diff(level, prepend=0.0)
    keep = mass > 0
    start = float(sum(p * d.values[0] for p, d in zip(shares, dists, strict=True)))
    bary = start + np.concatenate([[0.0], np.cumsum(inc)[:-1]])
    # event position of every atom, then the number of kept cells up to and including it
    pos = np.empty(order.shape[0], np.int64)
    pos[order] = np.arange(order.shape[0])
    kept = np.cumsum(keep, dtype=np.int64)
    bounds = np.cumsum([0, *sizes])
    ends = [kept[pos[bounds[a]:bounds[a + 1]]] for a in range(len(dists))]   # one ragged slice per group
    return Cells(mass[keep], level[keep], bary[keep], ends)


def distinct_values(q: _F, mass: _F) -> tuple[_F, _F]:
    """Distinct values of a non-decreasing cell function and their total mass.

    Examples
    --------
    >>> v, w = distinct_values(np.array([0.0, 0.0, 1.0]), np.array([0.25, 0.25, 0.5]))
    >>> v.tolist(), w.tolist()
    ([0.0, 1.0], [0.5, 0.5])
    """
    new = np.ones(q.shape[0], bool)
    new[1:] = q[1:] > q[:-1]
    starts = np.flatnonzero(new)
    return q[starts], np.add.reduceat(mass, starts)


def _median_rank(ranks: list[_I], idx: list[_I], shares: _F, chunk: int = 1 << 16) -> _I:
    """Per cell, the lower weighted median of the groups' ranks ``ranks[a][idx[a]]``.

    The group sits in the low bits of an integer key, so one integer sort per row orders values and
    groups together; rows go in chunks so the temporaries stay small (and in cache).
    """
    A, K = len(ranks), idx[0].shape[0]
    bits = max(int(A - 1).bit_length(), 1)
    mask = (1 << bits) - 1
    out = np.empty(K, np.int64)
    for lo in range(0, K, chunk):
        hi = min(K, lo + chunk)
        key = np.empty((hi - lo, A), np.int64)
        for a in range(A):
            key[:, a] = (ranks[a][idx[a][lo:hi]] << bits) | a
        key.sort(axis=1)
        pos = np.argmax(np.cumsum(shares[key & mask], axis=1) >= 0.5 - 1e-12, axis=1)
        out[lo:hi] = key[np.arange(hi - lo), pos] >> bits
    return out


def _weighted_lower_median(vals: _F, shares: _F) -> _F:
    """Row-wise ``min{v : sum_{a: vals[:, a] <= v} p_a >= 1/2}`` of a ``(K, A)`` array."""
    order = np.argsort(vals, axis=1)      # rows of A values: sorting along the last axis is fast
    cum = np.cumsum(shares[order], axis=1)
    pos = np.argmax(cum >= 0.5 - 1e-12, axis=1)
    rows = np.arange(vals.shape[0])
    out: _F = vals[rows, order[rows, pos]]
    return out


def closed_form(form: ParityProblem) -> tuple[_F, _F, float, list[sp.csr_matrix], Callable[[], _F]] | None:
    """The exact optimum at ``eps = 0`` without an LP, or ``None`` when no closed form applies.

    Returns ``(cdf, pooled_cdf, loss, plans, price)``: the groups' output CDF on the grid (a
    read-only broadcast of the pooled one), the pooled CDF, the loss, each group's plan, and a
    function computing the duals of the parity rows (computed on demand: they are an
    ``(n_groups, M - 1)`` array).

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> cdf, pooled, loss, plans, price = closed_form(RegressionParity(dists, shares, np.arange(4.0)))
    >>> pooled.tolist(), round(loss, 9), plans[0].toarray().tolist()
    ([0.0, 0.5, 1.0, 1.0], 1.0, [[0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0]])
    """
    if form.eps != 0.0:
        return None
    dists, shares, grid = form.dists, form.shares, form.grid
    A, M = len(dists), grid.shape[0]
    cells = form.cells if form.cells is not None else merged_cells(dists, shares)
    if form.loss == "absolute":
        values = np.concatenate([d.values for d in dists])
        if not _on_grid(values, grid):      # a prediction strictly between grid points: the LP decides
            return None
        idx = [cells.atoms(a) for a in range(A)]
        pooled_values = _merge([d.values for d in dists])
        # the median on ranks in the pooled sorted values, group in the low digits: one integer sort
        ranks = [np.searchsorted(pooled_values, d.values) for d in dists]
        q_out = np.maximum.accumulate(pooled_values[_median_rank(ranks, idx, shares)])
    else:
        q_out = cells.barycenter
        idx = []
    new = np.ones(q_out.shape[0], bool)
    new[1:] = q_out[1:] > q_out[:-1]
    starts = np.flatnonzero(new)
    out_v, out_w = q_out[starts], np.add.reduceat(cells.mass, starts)
    at = np.minimum(np.searchsorted(grid, out_v), M - 1)
    if not np.all(grid[at] == out_v):     # the output support is not on the grid: the LP decides
        return None
    mass_on_grid = np.zeros(M)
    mass_on_grid[at] = out_w
    pooled = np.minimum(np.cumsum(mass_on_grid), 1.0)
    pooled[-1] = 1.0
    cdf = np.broadcast_to(pooled, (A, M))
    col = np.repeat(at, np.diff(np.append(starts, q_out.shape[0])))
    plans, loss = [], 0.0
    for a, (p, d) in enumerate(zip(shares, dists, strict=True)):
        rows = idx[a] if idx else cells.atoms(a)
        diff = d.values[rows] - q_out
        loss += float(p * np.dot(cells.mass, diff * diff if form.loss == "squared" else np.abs(diff)))
        # own copies: sum_duplicates compacts the arrays in place
        plan = sp.csr_matrix((cells.mass.copy(), col.copy(), np.searchsorted(rows, np.arange(d.size + 1))),
                             shape=(d.size, M))
        plan.sum_duplicates()
        plans.append(plan)

    def price() -> _F:
        return _duals(form, pooled, cells)

    return cdf, pooled, loss, plans, price


def _on_grid(values: _F, grid: _F) -> bool:
    pos = np.minimum(np.searchsorted(grid, values), grid.shape[0] - 1)
    return bool(np.all(grid[pos] == values))


def _duals(form: ParityProblem, pooled: _F, cells: Cells) -> _F:
    """Duals of the parity rows at ``eps = 0``: ``d loss / d bound`` of row ``G_{a,j} - P_j``.

    Per grid interval ``j`` the LP's stationarity reads ``price_{a,j} = s_j p_a (g_{a,j} - t_j)``
    with ``g_{a,j}`` a subgradient of group ``a``'s cost at the common CDF value, chosen so that
    ``sum_a p_a g_{a,j}`` balances the pooled row, and ``t_j`` free. ``t_j`` = the weighted median
    of the ``g_{a,j}`` gives the least ``sum |price|``: the slope of the loss as ``eps`` leaves 0.
    Squared loss: ``g = Q_a`` between the left and right quantile at ``P_j`` with ``sum p g = m_j``
    (``m_j`` the interval's midpoint), ``s_j = 2 (y_{j+1} - y_j)``; absolute loss: ``g`` = the sign
    of ``P_j - F_a(y_j)`` (balanced on the groups with ``F_a(y_j) = P_j``), ``s_j = y_{j+1} - y_j``.
    """
    dists, shares, grid = form.dists, form.shares, form.grid
    J = grid.shape[0] - 1
    if J == 0:
        return np.zeros((len(dists), 0))
    P, step = pooled[:-1], np.diff(grid)
    if form.loss == "squared":
        mid = 0.5 * (grid[:-1] + grid[1:])
        lo = np.vstack([d.values[np.minimum(np.searchsorted(d.levels[1:], P - 1e-12, side="left"), d.size - 1)]
                        for d in dists])
        hi = np.vstack([d.values[np.minimum(np.searchsorted(d.levels[1:], P + 1e-12, side="right"), d.size - 1)]
                        for d in dists])
        # at P = 0 (P = 1) the bound G >= 0 (G <= 1) leaves the subgradient open below (above)
        lo[:, P <= 1e-12] = grid[0] - 1.0
        hi[:, P >= 1.0 - 1e-12] = grid[-1] + 1.0
        base, room = shares @ lo, shares @ (hi - lo)
        lam = np.clip(np.where(room > 0, (mid - base) / np.where(room > 0, room, 1.0), 0.0), 0.0, 1.0)
        g = lo + lam * (hi - lo)       # exact where one group is free
        several = np.flatnonzero(((hi - lo) > 0).sum(axis=0) > 1)
        if several.size:
            g[:, several] = _balanced_clip(lo[:, several], hi[:, several], mid[several], shares)
        scale = 2.0 * step
    else:
        f = np.vstack([d.cdf(grid[:-1]) for d in dists])
        below, above = f < P - 1e-12, f > P + 1e-12
        tied = ~(below | above)
        p_b, p_a, p_t = shares @ below, shares @ above, shares @ tied
        sigma = np.clip(np.where(p_t > 0, (p_a - p_b) / np.where(p_t > 0, p_t, 1.0), 0.0), -1.0, 1.0)
        g = np.where(below, 1.0, np.where(above, -1.0, sigma[None, :]))
        scale = step
    t = _weighted_lower_median(np.ascontiguousarray(g.T), shares)
    out: _F = scale[None, :] * shares[:, None] * (g - t[None, :])
    return out


def _balanced_clip(lo: _F, hi: _F, m: _F, shares: _F) -> _F:
    """``clip(t, lo, hi)`` per column with ``t`` solving ``sum_a p_a clip(t, lo_a, hi_a) = m``.

    This is the least ``sum_a p_a |t - g_a|`` over ``g`` in the boxes with ``sum p g = m``.
    """
    knots = np.sort(np.vstack([lo, hi]), axis=0)                          # (2A, R)
    S = np.einsum("a,kar->kr", shares, np.clip(knots[:, None, :], lo[None], hi[None]))
    k = np.clip((S < m[None, :]).sum(axis=0), 1, knots.shape[0] - 1)     # m lies in [S[k-1], S[k]]
    cols = np.arange(m.shape[0])
    s0, s1, t0, t1 = S[k - 1, cols], S[k, cols], knots[k - 1, cols], knots[k, cols]
    t = np.where(s1 > s0, t0 + (m - s0) / np.where(s1 > s0, s1 - s0, 1.0) * (t1 - t0), t0)
    out: _F = np.clip(t[None, :], lo, hi)
    return out


def _merge(parts: list[_F]) -> _F:
    """Sorted concatenation of sorted arrays (a stable sort merges the runs in linear time)."""
    out: _F = np.sort(np.concatenate(parts), kind="stable")
    return out


def default_grid(dists: list[GroupDistribution], shares: _F, cells: Cells | None = None) -> _F:
    """Every distinct prediction plus the support of the squared-loss barycenter.

    ``cells`` are the groups' :func:`merged_cells` when already computed.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 3.0]), np.array([0, 0, 1]), 2)
    >>> default_grid(dists, shares).tolist()
    [0.0, 1.0, 1.6666666666666665, 3.0]
    """
    cells = merged_cells(dists, shares) if cells is None else cells
    bary, _ = distinct_values(cells.barycenter, cells.mass)
    both = _merge([d.values for d in dists] + [bary])
    keep = np.ones(both.shape[0], bool)
    keep[1:] = both[1:] > both[:-1]
    out: _F = both[keep]
    return out


def input_gap(dists: list[GroupDistribution], shares: _F) -> float:
    """``max_{a,z} |F_a(z) - F(z)|`` with ``F = sum_a p_a F_a``, in one merge of the groups' atoms.

    Between two atoms of group ``a``, ``F_a - F`` does not increase, so its largest value is at an
    atom of ``a`` (right limit) and its smallest just before one (left limit).

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> input_gap(dists, shares)
    0.5
    """
    vals = np.concatenate([d.values for d in dists])
    wts = np.concatenate([p * d.weights for p, d in zip(shares, dists, strict=True)])
    order = np.argsort(vals, kind="stable")
    v, cum = vals[order], np.cumsum(wts[order])
    new = np.ones(v.shape[0], bool)
    new[1:] = v[1:] != v[:-1]
    start = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    end = np.append(start[1:], v.shape[0]) - 1
    right, left = np.empty_like(cum), np.empty_like(cum)
    right[order] = cum[end][run]
    left[order] = np.concatenate([[0.0], cum])[start][run]
    up = np.concatenate([d.levels[1:] for d in dists])
    lo = np.concatenate([d.levels[:-1] for d in dists])
    return float(max(np.max(up - right), np.max(left - lo), 0.0))
