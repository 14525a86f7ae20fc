"""Maximisers of the smoothed small dual of the fair multiclass LP (see
:mod:`~fairopt.formulations.constrained_classification.multiclass_dual`): damped Newton with a
smoothed ``eps`` term, a trust region for near-tie working sets, and L-BFGS-B for many
dual variables."""
from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from fairopt.modeling.smooth import lbfgs_on

F64 = NDArray[np.float64]


class DualProblem(Protocol):
    """What the maximisers read of a
    :class:`~fairopt.formulations.constrained_classification.multiclass_dual.DualProblem`."""

    Vg: F64
    W: float
    eps: float
    ev_j: NDArray[np.int64]
    ev_k: NDArray[np.int64]
    live: NDArray[np.bool_]

    @property
    def n_classes(self) -> int: ...

    @property
    def n_x(self) -> int: ...

    def centred(self, x: F64) -> F64: ...

    def value_grad(self, x: F64, tau: float) -> tuple[float, F64]: ...

    def value_grad_hess(self, x: F64, tau: float) -> tuple[float, F64, F64]: ...

    def objective(self, x: F64, tau: float) -> tuple[float, F64]: ...

LBFGS_ITER = 400
#: Newton steps per temperature; above ``NEWTON_MAX_X`` dual variables L-BFGS-B runs instead
NEWTON_ITER = 40
NEWTON_MAX_X = 1500
#: stop when the Newton decrement falls below this (relative to the dual value)
NEWTON_TOL = 1e-13
#: ... or when a step moves no offset by more than this share of the temperature
XTOL = 0.02
#: Armijo backtracking steps per Newton direction before the damping grows
BACKTRACK = 4
#: width of the smoothing of ``|x|`` (``mu log cosh(x / mu)``), in units of the temperature
HUBER = 1.0


def _maximise(dp: DualProblem, x0: F64, taus: tuple[float, ...], maxiter: int) -> F64:
    """Warm-started Newton (or L-BFGS-B for many dual variables) on the smoothed dual at each
    temperature in turn."""
    if dp.n_x <= NEWTON_MAX_X:
        x = x0
        for tau in taus:
            x = _newton(dp, x, tau)[0]
        return x
    z = np.concatenate([np.maximum(x0, 0.0), np.maximum(-x0, 0.0)])
    for tau in taus:
        if dp.eps > 0:
            def split_objective(v: F64, tau: float = tau) -> tuple[float, F64]:
                return dp.objective(v, tau)
            z = lbfgs_on(split_objective, z, nonnegative=True, max_iter=maxiter)
        else:   # no |x| term: one free block
            n = dp.n_x

            def f(x: F64, tau: float = tau) -> tuple[float, F64]:
                val, grad = dp.value_grad(x, tau)
                return -val, -grad
            x = lbfgs_on(f, z[:n] - z[n:], max_iter=maxiter)
            z = np.concatenate([np.maximum(x, 0.0), np.maximum(-x, 0.0)])
    n = dp.n_x
    out: F64 = z[:n] - z[n:]
    return out


def _soft_abs(x: F64, mu: float) -> tuple[F64, F64, F64]:
    """``|x|`` smoothed at width ``mu`` (``mu log cosh(x / mu)``, within ``mu log 2`` of it) and
    its first two derivatives."""
    u = x / mu
    au = np.abs(u)
    val: F64 = mu * (au + np.log1p(np.exp(-2.0 * au)) - np.log(2.0))
    slope: F64 = np.tanh(u)
    curv: F64 = (1.0 - slope * slope) / mu
    return val, slope, curv


def _best_shift(dp: DualProblem, x: F64, mu: float) -> F64:
    """``x`` moved by the per-event constant that minimises the smoothed ``eps`` term
    (the dual is unchanged by such a shift otherwise): a bisection on its monotone derivative."""
    if dp.eps <= 0 or x.size == 0:
        return x
    gi, ei = np.nonzero(dp.live)
    E = dp.live.shape[1]
    Vl = dp.Vg[gi, ei]
    span = float(np.abs(x).max()) + mu
    lo, hi = np.full(E, -span), np.full(E, span)
    for _ in range(60):   # a bisection, all events at once
        mid = 0.5 * (lo + hi)
        dsum = np.bincount(ei, weights=Vl * np.tanh((x + mid[ei]) / mu), minlength=E)
        lo = np.where(dsum < 0, mid, lo)
        hi = np.where(dsum < 0, hi, mid)
    out: F64 = x + (0.5 * (lo + hi))[ei]
    return out


def _move(dp: DualProblem, dx: F64) -> float:
    """Largest change of any atom's margin that the dual step ``dx`` can cause: the adjusted
    cost of class ``k`` moves by ``delta_k = -sum_{e: k_e = k} phi_e dc_{g,e}`` with
    ``phi_e = 1`` on unconditional events and ``phi_e`` in ``[0, 1]`` otherwise, and a margin by
    at most ``max_k delta_k - min_k delta_k`` (a shift of a whole group's costs moves none)."""
    dc = dp.centred(dx)
    G, K = dc.shape[0], int(dp.ev_k.max()) + 1
    lo, hi = np.zeros((G, K)), np.zeros((G, K))
    for e in range(dp.ev_k.shape[0]):   # a loop over events
        k = int(dp.ev_k[e])
        if dp.ev_j[e] < 0:
            lo[:, k] -= dc[:, e]
            hi[:, k] -= dc[:, e]
        else:
            lo[:, k] -= np.abs(dc[:, e])
            hi[:, k] += np.abs(dc[:, e])
    if K < int(dp.n_classes):   # classes without events: their costs do not move
        lo, hi = np.minimum(lo.min(axis=1), 0.0), np.maximum(hi.max(axis=1), 0.0)
    else:
        lo, hi = lo.min(axis=1), hi.max(axis=1)
    return float((hi - lo).max(initial=0.0))


def _newton(dp: DualProblem, x0: F64, tau: float, radius: float = np.inf,
            maxiter: int = NEWTON_ITER) -> tuple[F64, bool]:
    """Damped Newton on the smoothed dual at temperature ``tau``, the ``|x|`` term
    smoothed at width ``tau`` and minimised exactly over the per-event shifts that leave
    the offsets unchanged (its curvature enters as a Schur complement); Levenberg-Marquardt
    damping and an Armijo test. Steps stay within ``radius`` (:func:`_move`) of ``x0``; returns
    the point and whether that trust region stopped it."""
    scale = dp.eps * dp.Vg[dp.live] / dp.W
    ei = np.nonzero(dp.live)[1]
    same_e = ei[:, None] == ei[None, :]

    def f(x: F64) -> tuple[float, F64]:
        val, grad = dp.value_grad(x, tau)
        if dp.eps <= 0:
            return val, grad
        hub, slope, _ = _soft_abs(x, mu)
        return val - float(np.dot(scale, hub)), grad - scale * slope

    mu = HUBER * tau
    x = _best_shift(dp, x0.copy(), mu)
    lam = 0.0
    for _ in range(maxiter):
        val, grad, H = dp.value_grad_hess(x, tau)
        M = -H
        if dp.eps > 0:   # the smoothed term, its shifts eliminated (a Schur complement)
            hub, slope, curv = _soft_abs(x, mu)
            val -= float(np.dot(scale, hub))
            grad = grad - scale * slope
            hh = scale * curv
            tot = np.bincount(ei, weights=hh, minlength=dp.live.shape[1])[ei]
            M += np.diag(hh) - np.where(same_e, np.outer(hh, hh) / np.where(tot > 0, tot, 1.0)[None, :], 0.0)
        unit = max(float(np.trace(M)) / max(M.shape[0], 1), 1e-12)
        step, d = None, np.zeros_like(x)
        for _ in range(30):   # Levenberg-Marquardt: piecewise-linear directions get gradient steps
            d = np.linalg.solve(M + (lam + 1e-10) * unit * np.eye(M.shape[0]), grad)
            dec = float(np.dot(grad, d))
            if dec <= NEWTON_TOL * max(abs(val), 1.0):
                break
            room = radius - _move(dp, x - x0)
            mv = _move(dp, d)
            t = 1.0 if mv <= room else max(room, 0.0) / mv
            dmax = float(np.abs(d).max())
            for _ in range(BACKTRACK):   # Armijo backtracking, the step from a quadratic fit
                if t <= 0 or t * dmax <= XTOL * tau:
                    break
                trial = _best_shift(dp, x + t * d, mu)
                ft = f(trial)[0]
                if ft >= val + 1e-4 * t * dec:
                    step = trial
                    break
                bend = (val + dec * t - ft) / (t * t)   # phi(s) ~ val + dec s - bend s^2 through phi(t)
                t = float(min(max(dec / (2.0 * bend), 0.1 * t), 0.5 * t))
            if step is not None:
                lam /= 4.0
                break
            if dmax <= XTOL * tau or t <= 0:
                break
            lam = max(8.0 * lam, 1e-4)
        if step is None:   # converged as far as the values resolve (or at the trust boundary)
            return x, _move(dp, x - x0) >= 0.999 * radius
        hit = _move(dp, step - x0) >= 0.999 * radius
        x = step
        if hit:
            return x, True
        if float(np.abs(d).max()) <= XTOL * tau:   # the offsets move far less than the smoothing width
            break
    return x, False
