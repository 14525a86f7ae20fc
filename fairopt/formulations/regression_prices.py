"""Duals of the band rows after the sweeps (regression parity at ``eps > 0``), without an LP.

The sweeps put every grid interval at the optimum of its own LP (the LP without its monotonicity
rows) and the result is monotone, so the per-interval optima add up to the LP's; duals of the
intervals' own LPs, with zero duals on the monotonicity rows, are then optimal for the whole LP.
On interval ``j`` each group's cost is convex in its CDF value ``G_a`` with subgradient interval
``[s_lo, s_hi]`` (scaled by ``scale p_a``): ``[Q_a(G-), Q_a(G+)]`` for the squared loss (``scale =
2 (y_{j+1} - y_j)``), ``{+-1}`` or ``[-1, 1]`` for the absolute loss (``scale = y_{j+1} - y_j``).
Stationarity reads ``price_a + kappa_a = scale p_a (g_a - t)`` with ``g_a`` in the interval,
``kappa_a`` the dual of ``0 <= G_a <= 1`` and ``t`` free, and the pooled level's row turns into the
balance ``sum_a p_a g_a = m + sum_a kappa_a / scale`` (``m`` the interval's midpoint for the
squared loss, 0 for the absolute). So: a group strictly inside the band has ``price = kappa = 0``
and ``g_a = t``; one held at a bound has ``price = 0``, needs ``t <= s_hi`` at 0 (``t >= s_lo`` at
1) and counts as ``t`` in the balance; at the band's top edge ``g_a <= t``, at the bottom
``g_a >= t``. With every ``g_a`` nearest ``t`` the balance is ``sum_a p_a clip(t, L_a, U_a) = m``
(``U_a = s_hi`` at the top edge, ``L_a = s_lo`` at the bottom, open otherwise), non-decreasing and
piecewise linear in ``t`` with at most one knot per group: its root, clipped to the range the
constraints leave, sets ``t``, and a remainder moves the edge groups that can go further.

Any optimal dual bounds the loss at every other ``eps'`` (``loss(eps') >= loss(eps) - (eps' - eps)
sum |price|``); where the loss has a kink in ``eps`` the optimal duals are not unique and their
total lies between its slopes on the two sides.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from fairopt.formulations._regression_groups import ParityProblem

__all__ = ["absolute_prices", "squared_prices"]

_F = NDArray[np.float64]
#: a group's CDF value this close to the band edge, to 0 or 1 or to its prediction CDF counts as there:
#: the sweeps meet the pooled level and band to rounding (about 1e-12 with tiny group shares), and a
#: looser test only lets a group a hair inside the band take a price, still a valid dual
TOL = 1e-9


def _band_duals(G: _F, shares: _F, eps: float, s_lo: _F, s_hi: _F, m: _F, scale: _F) -> _F:
    """Band-row duals ``(A, c)`` of ``c`` intervals (see the module docstring).

    A group at a band edge and at a bound at once is first left to the bound (price 0, the least
    total); where the balance then cannot close, the band edge takes it."""
    first, short = _band_duals_once(G, shares, eps, s_lo, s_hi, m, scale, True)
    if not short.any():
        return first
    second, _ = _band_duals_once(G[:, short], shares, eps, s_lo[:, short], s_hi[:, short], m[short],
                                 scale[short], False)
    first[:, short] = second
    return first


def _band_duals_once(G: _F, shares: _F, eps: float, s_lo: _F, s_hi: _F, m: _F, scale: _F,
                     bound_first: bool) -> tuple[_F, NDArray[np.bool_]]:
    """The duals and, per interval, whether the balance failed to close."""
    p = shares[:, None]
    P = shares @ G
    one, zero = G >= 1.0 - TOL, G <= TOL
    top = G >= P + eps - TOL                            # at the band's top edge (perhaps also at 1)
    bottom = ~top & (G <= P - eps + TOL)
    if bound_first:
        top &= ~one
        bottom &= ~zero
    one_held, zero_held = one & ~top, zero & ~bottom    # at a bound only: its dual takes the slack
    inner = ~top & ~bottom & ~one_held & ~zero_held
    # at an edge and a bound at once, the bound's dual lets the group count anywhere below t (above)
    s_lo = np.where(bottom & zero, -np.inf, s_lo)
    s_hi = np.where(top & one, np.inf, s_hi)
    t_lo = np.max(np.where(inner | top | one_held, s_lo, -np.inf), axis=0)
    t_hi = np.min(np.where(inner | bottom | zero_held, s_hi, np.inf), axis=0)
    L = np.where(bottom, s_lo, -np.inf)
    U = np.where(top, s_hi, np.inf)
    knots = np.sort(np.where(top, s_hi, np.where(bottom, s_lo, np.inf)), axis=0)     # (A, c), +inf: none
    valid = np.isfinite(knots)
    knots = np.where(valid, knots, 0.0)
    at = np.einsum("a,bac->bc", shares, np.clip(knots[:, None, :], L[None], U[None]))
    n_valid = valid.sum(axis=0)
    below = ((at < m[None, :]) & valid).sum(axis=0)                      # knots where the balance is short
    cols = np.arange(G.shape[1])
    k0, k1 = np.maximum(below - 1, 0), np.minimum(below, np.maximum(n_valid - 1, 0))
    x0, x1, c0, c1 = knots[k0, cols], knots[k1, cols], at[k0, cols], at[k1, cols]
    p_free = (p * (inner | one_held | zero_held)).sum(axis=0)
    inside = (below > 0) & (below < n_valid)
    t_in = np.where(c1 > c0, x0 + (m - c0) / np.where(c1 > c0, c1 - c0, 1.0) * (x1 - x0), x0)
    slope_lo = p_free + (p * top).sum(axis=0)                            # below every knot
    slope_hi = p_free + (p * bottom).sum(axis=0)                         # above every knot
    t_below = x1 + np.where(slope_lo > 0, (m - c1) / np.where(slope_lo > 0, slope_lo, 1.0), 0.0)
    t_above = x0 + np.where(slope_hi > 0, (m - c0) / np.where(slope_hi > 0, slope_hi, 1.0), 0.0)
    t_none = np.where(p_free > 0, m / np.where(p_free > 0, p_free, 1.0), 0.0)
    t = np.where(n_valid == 0, t_none, np.where(below == 0, t_below, np.where(inside, t_in, t_above)))
    t = np.clip(t, t_lo, t_hi)
    g = np.where(top, np.minimum(s_hi, t[None, :]), np.where(bottom, np.maximum(s_lo, t[None, :]), t[None, :]))
    excess = shares @ g - m                            # > 0: lower top-edge groups; < 0: raise bottom ones
    down = np.where(top & (excess > 0)[None, :], np.minimum(g - s_lo, 1e300), 0.0)
    up = np.where(bottom & (excess < 0)[None, :], np.minimum(s_hi - g, 1e300), 0.0)
    room = shares @ (down + up)
    frac = np.clip(np.where(room > 0, np.abs(excess) / np.where(room > 0, room, 1.0), 0.0), 0.0, 1.0)
    g = g - frac[None, :] * down + frac[None, :] * up
    out: _F = np.where(top | bottom, scale[None, :] * p * (g - t[None, :]), 0.0)
    short = np.abs(shares @ g - m) > TOL * np.maximum(1.0, np.abs(m))
    return out, short


def absolute_prices(form: ParityProblem, cdf: _F, chunk: int = 1 << 12) -> _F:
    """Duals ``(A, M - 1)`` of the band rows at the absolute-loss sweep's optimum (``d loss / d bound``).

    The subgradient of ``|G_a - F_{a,j}|`` is ``+1`` above the prediction CDF, ``-1`` below and any
    value in ``[-1, 1]`` at it; the balance's target is 0 and the scale the interval's length.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> from fairopt.formulations.regression_sweep import absolute_sweep
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> form = RegressionParity(dists, shares, np.arange(4.0), 0.25, "absolute")
    >>> absolute_prices(form, absolute_sweep(form)[0]).tolist()
    [[0.0, -1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    grid = form.grid

    def terms(lo: int, hi: int, G: _F) -> tuple[_F, _F, _F, _F]:
        F = np.vstack([d.cdf(grid[lo:hi]) for d in form.dists])
        return (np.where(G > F + TOL, 1.0, -1.0), np.where(G < F - TOL, -1.0, 1.0), np.zeros(hi - lo),
                np.diff(grid[lo:hi + 1]))
    return _chunked_prices(form, cdf, chunk, terms)


def squared_prices(form: ParityProblem, cdf: _F, chunk: int = 1 << 12) -> _F:
    """Duals ``(A, M - 1)`` of the band rows at the squared-loss sweep's optimum (``d loss / d bound``).

    Interval ``j`` costs ``2 (y_{j+1} - y_j) sum_a p_a (H_a(G_a) - m_j G_a)`` with ``H_a = int Q_a``,
    so the subgradient interval is ``[Q_a(G-), Q_a(G+)]`` (the left and right quantiles at
    ``G``), the balance's target the midpoint ``m_j`` and the scale ``2 (y_{j+1} - y_j)``.

    Examples
    --------
    >>> from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
    >>> from fairopt.formulations.regression_sweep import squared_sweep
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> form = RegressionParity(dists, shares, np.arange(4.0), 0.25)
    >>> squared_prices(form, squared_sweep(form)[0]).round(6).tolist()
    [[0.0, -1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    grid = form.grid

    def terms(lo: int, hi: int, G: _F) -> tuple[_F, _F, _F, _F]:
        def quantile(side: Literal["left", "right"], shift: float) -> _F:
            return np.vstack([d.values[np.minimum(np.searchsorted(d.levels[1:], g + shift, side=side), d.size - 1)]
                              for d, g in zip(form.dists, G, strict=True)])
        mid = 0.5 * (grid[lo:hi] + grid[lo + 1:hi + 1])
        return quantile("left", -TOL), quantile("right", TOL), mid, 2.0 * np.diff(grid[lo:hi + 1])
    return _chunked_prices(form, cdf, chunk, terms)


def _chunked_prices(form: ParityProblem, cdf: _F, chunk: int,
                    terms: Callable[[int, int, _F], tuple[_F, _F, _F, _F]]) -> _F:
    """The band duals interval block by interval block: ``terms(lo, hi, G)`` gives the block's
    subgradient bounds ``(s_lo, s_hi)``, balance targets and scales (see the module docstring)."""
    J = form.grid.shape[0] - 1
    out = np.zeros((len(form.dists), J))
    for lo in range(0, J, chunk):
        hi = min(lo + chunk, J)
        G = cdf[:, lo:hi]
        out[:, lo:hi] = _band_duals(G, form.shares, form.eps, *terms(lo, hi, G))
    return out
