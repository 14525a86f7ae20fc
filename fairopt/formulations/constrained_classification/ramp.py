"""Exact per-group solver for the randomized-threshold (ramp) rule.

For one group with atoms ``(f_j, z_j)`` of normalised weight ``a_j`` (``sum_j a_j = 1``) the
fitted rate of the ramp rule with threshold ``theta`` is

    g(theta) = sum_j a_j z_j clip((f_j - theta z_j) / gamma, 0, 1),

with ``z_j = 1`` for statistical parity (``g = m_k``, the group's positive rate) and
``z_j = 1_S(j) - rho_k`` for the covariance extension. Each term is a ramp in ``theta`` with two
kinks, so ``g`` is continuous, non-increasing and piecewise linear. :class:`CellRamp` sorts the
kinks once (``O(n log n)``), tabulates ``g`` at every kink, and then finds the root of
``g(theta) = c`` by a binary search plus an exact linear solve on the bracketing piece.

Flat roots: if ``g`` equals ``c`` on a whole interval (no score inside the ramp), every point of
the interval gives the same predictions on the fitting sample and the same dual value; the
solver returns the point of the interval **nearest to 0**, i.e. the minimum-norm dual solution
(smallest ``lambda_k + mu_k``). This makes ``theta_k`` continuous with the "already inside the
band" case ``theta_k = 0`` and is the point projected SGD started at 0 drifts to.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: absolute tolerance on g used to recognise a flat piece at the target level
FLAT_TOL = 1e-12


def ramp(w: ArrayLike, gamma: float) -> np.ndarray:
    """Derivative of the smoothed ReLU: ``clip(w / gamma, 0, 1)`` (the rule's probability).

    Examples
    --------
    >>> import numpy as np
    >>> ramp(np.array([-1.0, 0.05, 0.3]), 0.1).tolist()
    [0.0, 0.5, 1.0]
    """
    return np.clip(np.asarray(w, dtype=float) / gamma, 0.0, 1.0)


def smoothed_relu(w: ArrayLike, gamma: float) -> np.ndarray:
    """The paper's ``xi_gamma``: 0 for ``w <= 0``, ``w^2 / (2 gamma)`` on ``[0, gamma]``,
    ``w - gamma / 2`` above (convex, with ``1/gamma``-Lipschitz derivative).

    Examples
    --------
    >>> import numpy as np
    >>> smoothed_relu(np.array([-1.0, 0.05, 0.3]), 0.1).round(6).tolist()
    [0.0, 0.0125, 0.25]
    """
    w = np.asarray(w, dtype=float)
    return np.where(w <= 0, 0.0, np.where(w >= gamma, w - 0.5 * gamma, 0.5 * w * w / gamma))


class CellRamp:
    """Tabulated ``g(theta) = sum_j a_j z_j clip((f_j - theta z_j)/gamma, 0, 1)`` for one group.

    Parameters
    ----------
    f : ndarray of float
        Scores of the atoms.
    a : ndarray of float
        Normalised atom weights (``c_j / n_k``).
    gamma : float
        Ramp width, ``> 0``.
    z : ndarray of float, optional
        Constraint coefficients (default 1: statistical parity). Atoms with ``z = 0`` add
        nothing to ``g`` and are ignored.

    Examples
    --------
    >>> import numpy as np
    >>> ramp = CellRamp(np.array([0.2, 0.5, 0.9]), np.ones(3), gamma=0.1)
    >>> ramp.values(np.array([0.0, 0.5, 1.0])).round(6).tolist()   # expected positives per threshold
    [3.0, 1.0, 0.0]
    >>> round(ramp.root(1.5), 6)                               # the threshold giving 1.5
    0.45
    """

    def __init__(self, f: np.ndarray, a: np.ndarray, gamma: float, z: np.ndarray | None = None) -> None:
        f = np.asarray(f, dtype=float)
        a = np.asarray(a, dtype=float)
        if z is None:
            self._init_parity(f, a, float(gamma))
            return
        z = np.asarray(z, dtype=float)
        keep = z != 0
        self.f, self.a, self.z, self.gamma = f[keep], a[keep], z[keep], float(gamma)
        f, a, z = self.f, self.a, self.z
        # term j is z_j on one side of [lo_j, hi_j], 0 on the other, linear (slope -a z^2/gamma) inside
        t0, t1 = f / z, (f - self.gamma) / z
        lo, hi = np.minimum(t0, t1), np.maximum(t0, t1)
        s = a * z * z / self.gamma
        b = np.concatenate([lo, hi])
        order = np.argsort(b, kind="stable")
        self.b = b[order]
        slope = np.cumsum(np.concatenate([-s, s])[order])
        self.flat = np.cumsum(np.concatenate([np.ones_like(s), -np.ones_like(s)])[order]) == 0
        self.g_left = float(np.sum(a * z * (z > 0)))    # g(-inf)
        self.g_right = float(np.sum(a * z * (z < 0)))   # g(+inf)
        self._tabulate(slope)

    def _init_parity(self, f: np.ndarray, a: np.ndarray, gamma: float) -> None:
        """``z = 1``: the same table with fewer passes and temporaries (kinks ``f - gamma`` and
        ``f``; no masks, divisions or min/max; ``z`` a broadcast 1, not an array; an int32 count
        of active ramps), so that 10^7 scores stay within a few hundred MB."""
        self.f, self.a, self.z, self.gamma = f, a, np.broadcast_to(1.0, f.shape), gamma
        n = f.shape[0]
        b = np.empty(2 * n)
        np.subtract(f, gamma, out=b[:n])
        b[n:] = f
        # timsort: two (nearly) sorted runs when the atoms are sorted -> an O(n) merge
        order = np.argsort(b, kind="stable")
        self.b = b.take(order)
        del b
        sv = np.empty(2 * n)
        np.divide(a, gamma, out=sv[n:])
        np.negative(sv[n:], out=sv[:n])
        slope = sv.take(order)
        del sv
        np.cumsum(slope, out=slope)
        step = np.ones(2 * n, dtype=np.int8)          # +1 at a lower kink, -1 at an upper one
        step[order >= n] = -1
        del order
        self.flat = np.cumsum(step, dtype=np.int32) == 0   # no ramp active after the kink
        self.g_left = float(np.sum(a))
        self.g_right = 0.0
        self._tabulate(slope)

    def _tabulate(self, slope: np.ndarray) -> None:
        """Values of ``g`` at the kinks ``b`` from the slope after each kink, stored negated
        (``_neg_v`` ascending, for ``searchsorted`` in the root loops; ``v`` is its negation)."""
        m = self.b.shape[0]
        nv = np.empty(max(m, 1))
        nv[0] = 0.0
        steps = nv[1:]
        np.subtract(self.b[1:], self.b[:-1], out=steps)
        np.multiply(slope[:-1], steps, out=steps)
        np.cumsum(steps, out=steps)
        nv += self.g_left
        self._neg_v = np.negative(nv, out=nv)
        self._g0: float | None = None

    @property
    def v(self) -> np.ndarray:
        """Values ``g(b)`` at the kinks (non-increasing)."""
        return -self._neg_v

    @property
    def bounds(self) -> tuple[float, float]:
        """Interval of thresholds outside which the rule no longer changes."""
        return (float(self.b[0]), float(self.b[-1])) if self.b.size else (0.0, 0.0)

    def value_at_zero(self, fast: bool = False) -> float:
        """``g(0)``: tabulated (``fast``, cached for bisections on ``rho``) or exact."""
        if fast:
            if self._g0 is None:
                self._g0 = float(self.values(0.0))
            return self._g0
        return self(0.0)

    def __call__(self, theta: float) -> float:
        """Exact value ``g(theta)`` (a direct vectorised sum over the atoms)."""
        if not self.f.size:
            return 0.0
        return float(np.sum(self.a * self.z * np.clip((self.f - theta * self.z) / self.gamma, 0, 1)))

    def values(self, thetas: ArrayLike) -> np.ndarray:
        """``g`` at several thresholds, interpolated from the kink table (fast, ``O(log n)`` each)."""
        thetas = np.asarray(thetas, dtype=float)
        if not self.b.size:
            return np.zeros_like(thetas)
        out: np.ndarray = -np.interp(thetas, self.b, self._neg_v, left=-self.g_left, right=-self.g_right)
        return out

    # ------------------------------------------------------------------ roots
    def root_fast(self, c: float) -> float:
        """Root of ``g = c`` by interpolation in the kink table (used inside bisections)."""
        if not self.b.size:
            return 0.0
        nv = self._neg_v
        if c >= -nv[0]:
            return float(self.b[0])
        if c <= -nv[-1]:
            return float(self.b[-1])
        j = int(np.searchsorted(self._neg_v, -c, side="left"))  # first kink with v <= c
        if self.flat[j - 1]:  # flat piece at the target level
            return _nearest_zero(self.b[j - 1], self.b[j])
        v0, v1 = -nv[j - 1], -nv[j]
        t = (v0 - c) / (v0 - v1) if v0 > v1 else 0.5
        flat_next = j + 1 < self.b.size and self.flat[j] and v1 == c
        if flat_next:
            return _nearest_zero(self.b[j], self.b[j + 1])
        return float(self.b[j - 1] + t * (self.b[j] - self.b[j - 1]))

    def root(self, c: float) -> float:
        """Exact root of ``g(theta) = c`` (point nearest 0 of the root interval when ``g`` is flat).

        ``c`` must lie in ``[g(+inf), g(-inf)]``; outside it the nearest finite kink is returned.
        """
        if not self.b.size:
            return 0.0
        flat = self._flat_root(c)
        if flat is not None:
            return flat
        if c >= -self._neg_v[0]:
            return float(self.b[0])
        if c <= -self._neg_v[-1]:
            return float(self.b[-1])
        j = int(np.searchsorted(self._neg_v, -c, side="left"))
        theta = 0.5 * (self.b[j - 1] + self.b[j])
        for _ in range(64):  # the table is exact up to rounding, so this loop runs once or twice
            new, lo, hi = self._piece_solve(theta, c)
            if new is None:
                return float(theta)
            if lo <= new <= hi:
                return float(new)
            theta = np.nextafter(hi, np.inf) if new > hi else np.nextafter(lo, -np.inf)
            theta = self._piece_mid(theta)
        return float(theta)

    def _flat_root(self, c: float) -> float | None:
        """Point nearest 0 of a flat piece whose level is ``c`` (to :data:`FLAT_TOL`), if any."""
        flat = np.flatnonzero(self.flat[:-1])          # few: test the level on those only
        flat = flat[(np.abs(-self._neg_v[flat] - c) <= 1e3 * FLAT_TOL) & (self.b[flat + 1] > self.b[flat])]
        for j in flat:
            mid = 0.5 * float(self.b[j] + self.b[j + 1])
            if abs(self(mid) - c) <= FLAT_TOL:
                return _nearest_zero(self.b[j], self.b[j + 1])
        if abs(self.g_left - c) <= FLAT_TOL:
            return _nearest_zero(-np.inf, self.b[0])
        if abs(self.g_right - c) <= FLAT_TOL:
            return _nearest_zero(self.b[-1], np.inf)
        return None

    def _piece_mid(self, theta: float) -> float:
        j = int(np.searchsorted(self.b, theta, side="right"))
        if j == 0 or j >= self.b.size:
            return float(theta)
        return 0.5 * float(self.b[j - 1] + self.b[j])

    def _piece_solve(self, theta: float, c: float) -> tuple[float | None, float, float]:
        """Solve ``g = c`` exactly on the linear piece containing ``theta``.

        Returns ``(root or None, piece_lo, piece_hi)``; ``None`` when the piece is flat.
        """
        j = int(np.searchsorted(self.b, theta, side="right"))
        lo = float(self.b[j - 1]) if j > 0 else -np.inf
        hi = float(self.b[j]) if j < self.b.size else np.inf
        u = (self.f - theta * self.z) / self.gamma
        inside = (u > 0) & (u < 1)
        full = u >= 1
        az = self.a * self.z
        denom = float(np.sum(az[inside] * self.z[inside]))
        if denom <= 0:
            return None, lo, hi
        num = float(np.sum(az[inside] * self.f[inside])) - self.gamma * (c - float(np.sum(az[full])))
        return num / denom, lo, hi


def _nearest_zero(lo: float, hi: float) -> float:
    return float(min(max(0.0, lo), hi))


def parity_threshold(ramp_k: CellRamp, rho: float, half_width: float, fast: bool = False) -> float:
    """Optimal dual threshold ``theta_k`` of one group for the band ``|g - rho| <= half_width``.

    ``theta_k = 0`` when ``g(0)`` is inside the band; otherwise the root of ``g = rho +
    half_width`` (``theta_k > 0``) or of ``g = rho - half_width`` (``theta_k < 0``).
    """
    g0 = ramp_k.value_at_zero(fast)
    if g0 > rho + half_width:
        target = rho + half_width
    elif g0 < rho - half_width:
        target = rho - half_width
    else:
        return 0.0
    return ramp_k.root_fast(target) if fast else ramp_k.root(target)
