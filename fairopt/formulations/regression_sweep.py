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
``tau`` the smallest threshold whose allocation reaches ``P`` (groups with an atom at ``tau``
filled by a common fraction). ``P_j`` and the allocation are non-decreasing in ``j``, so the
LP's monotonicity rows hold. The result is certified against the LP's dual bound in the tests.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fairopt.formulations.regression_parity import GroupDistribution, RegressionParity

__all__ = ["allocation", "squared_sweep"]

_F = NDArray[np.float64]


def allocation(dists: list[GroupDistribution], shares: _F, P: _F, eps: float) -> _F:
    """The groups' CDFs ``(A, len(P))`` of the allocation at pooled levels ``P`` (non-decreasing).

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> allocation(dists, shares, np.array([0.5]), 0.1).round(6).tolist()
    [[0.6], [0.4]]
    """
    A = len(dists)
    lo_b, hi_b = np.clip(P - eps, 0.0, 1.0), np.clip(P + eps, 0.0, 1.0)
    values = np.unique(np.concatenate([d.values for d in dists]))

    def total(k: NDArray[np.int64], left: bool) -> _F:
        z = values[np.clip(k, 0, values.shape[0] - 1)]
        out = np.zeros(P.shape[0])
        for p, d in zip(shares, dists, strict=True):
            F = d.levels[np.searchsorted(d.values, z, side="left" if left else "right")]
            out += p * np.clip(F, lo_b, hi_b)
        return out

    # smallest threshold index k with allocation(values[k]) >= P (bisection, all columns at once)
    lo_k, hi_k = np.zeros(P.shape[0], np.int64), np.full(P.shape[0], values.shape[0] - 1, np.int64)
    while np.any(lo_k < hi_k):
        mid = (lo_k + hi_k) // 2
        ok = total(mid, left=False) >= P - 1e-13
        hi_k = np.where(ok, mid, hi_k)
        lo_k = np.where(ok, lo_k, mid + 1)
    z = values[lo_k]
    below = np.vstack([np.clip(d.levels[np.searchsorted(d.values, z, side="left")], lo_b, hi_b) for d in dists])
    above = np.vstack([np.clip(d.levels[np.searchsorted(d.values, z, side="right")], lo_b, hi_b) for d in dists])
    need, room = P - shares @ below, shares @ (above - below)
    theta = np.clip(np.where(room > 0, need / np.where(room > 0, room, 1.0), 0.0), 0.0, 1.0)
    G: _F = below + theta[None, :] * (above - below)
    del A
    return G


def _allocate(dists: list[GroupDistribution], shares: _F, values: _F, P: _F,
              eps: float) -> tuple[_F, _F, _F, _F]:
    """Allocation at ``P``: ``(G, tau, below, above)`` (see :func:`allocation`)."""
    lo_b, hi_b = np.clip(P - eps, 0.0, 1.0), np.clip(P + eps, 0.0, 1.0)

    def clipped(z: _F, side: str) -> _F:
        out: _F = np.vstack([np.clip(d.levels[np.searchsorted(d.values, z, side=side)], lo_b, hi_b)  # type: ignore[call-overload]
                             for d in dists])
        return out

    lo_k, hi_k = np.zeros(P.shape[0], np.int64), np.full(P.shape[0], values.shape[0] - 1, np.int64)
    while np.any(lo_k < hi_k):      # smallest atom whose filled allocation reaches P
        mid = (lo_k + hi_k) // 2
        ok = shares @ clipped(values[mid], "right") >= P - 1e-13
        hi_k = np.where(ok, mid, hi_k)
        lo_k = np.where(ok, lo_k, mid + 1)
    tau = values[lo_k]
    below, above = clipped(tau, "left"), clipped(tau, "right")
    need, room = P - shares @ below, shares @ (above - below)
    theta = np.clip(np.where(room > 0, need / np.where(room > 0, room, 1.0), 0.0), 0.0, 1.0)
    return below + theta[None, :] * (above - below), tau, below, above


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
    values = np.unique(np.concatenate([d.values for d in dists]))
    return _allocate(dists, shares, values, P, eps)[0]


def _slope(dists: list[GroupDistribution], shares: _F, values: _F, P: _F, eps: float) -> _F:
    """``V'(P)`` at generic ``P``: the groups held at a band edge move with ``P`` at their own
    quantile; the rest of the unit moves at the atom ``tau`` being filled."""
    G, tau, below, above = _allocate(dists, shares, values, P, eps)
    flexible = above > below
    edge = ((np.abs(G - (P + eps)) < 1e-12) & (P + eps < 1.0)) | ((np.abs(G - (P - eps)) < 1e-12) & (P - eps > 0.0))
    moving = edge & ~flexible
    q = np.vstack([d.quantile(g) for d, g in zip(dists, G, strict=True)])
    p_moving = shares @ moving
    out: _F = shares @ (moving * q) + (1.0 - p_moving) * tau
    return out


def squared_sweep(form: RegressionParity, iterations: int = 48) -> tuple[_F, _F] | None:
    """``(cdf, pooled_cdf)`` on the grid for the squared loss at ``eps > 0``; ``None`` otherwise.

    ``P_j`` is found by bisection on the sign of ``V'(P) - m_j`` (``iterations`` halvings of
    ``[0, 1]``), the CDFs are the allocation at ``P_j``.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> cdf, pooled = squared_sweep(RegressionParity(dists, shares, np.arange(4.0), eps=0.25))
    >>> pooled.round(6).tolist()
    [0.25, 0.5, 0.75, 1.0]
    """
    if form.loss != "squared" or form.eps <= 0.0:
        return None
    dists, shares, grid = form.dists, form.shares, form.grid
    values = np.unique(np.concatenate([d.values for d in dists]))
    mid = 0.5 * (grid[:-1] + grid[1:])
    lo, hi = np.zeros(mid.shape[0]), np.ones(mid.shape[0])
    for _ in range(iterations):
        P = 0.5 * (lo + hi)
        up = _slope(dists, shares, values, P, form.eps) >= mid
        hi, lo = np.where(up, P, hi), np.where(up, lo, P)
    P = np.maximum.accumulate(hi)
    G = np.maximum.accumulate(allocation(dists, shares, P, form.eps), axis=1)
    cdf = np.hstack([G, np.ones((len(dists), 1))])
    return cdf, shares @ cdf

