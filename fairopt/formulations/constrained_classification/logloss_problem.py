"""The fair log-loss objective ``J(θ)`` as a smooth problem, with its native L-BFGS + Newton solve.

:class:`FairLogLossProblem` is what :meth:`FairLogLoss.to_problem
<fairopt.formulations.constrained_classification.FairLogLoss.to_problem>` returns; it is
re-exported by :mod:`fairopt.formulations.constrained_classification.logloss`.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from scipy.special import expit

from fairopt.errors import ConfigError
from fairopt.formulations.constrained_classification import logloss_forms as forms
from fairopt.modeling.smooth import NativeResult, SmoothProblem, lbfgs
from fairopt.modeling.solution import Status

if TYPE_CHECKING:
    import scipy.sparse as sp

    from fairopt.formulations.constrained_classification.logloss_fairness import FairnessRows, RowTerms


class _Model(Protocol):
    """What the smooth problem reads of its :class:`FairLogLoss
    <fairopt.formulations.constrained_classification.FairLogLoss>` (which imports this module)."""

    X: np.ndarray | sp.spmatrix
    y: np.ndarray
    C: float
    penalized: np.ndarray
    rows: FairnessRows

    @property
    def dim(self) -> int: ...
    def terms(self, theta: np.ndarray, lam: np.ndarray | None = None,
              orders: list[Any] | None = None) -> tuple[RowTerms, list[Any] | None]: ...
    def row_losses(self, t: RowTerms) -> np.ndarray: ...
    def regulariser(self, theta: np.ndarray) -> float: ...
    def gradient(self, theta: np.ndarray, t: RowTerms) -> np.ndarray: ...
    def saddle_residual(self, theta: np.ndarray, lam: np.ndarray) -> tuple[float, float, RowTerms]: ...
    def certified(self, grad_norm: float, gap_norm: float, tol: float) -> bool: ...
    def kink_multiplier(self, theta: np.ndarray) -> np.ndarray: ...
    def semismooth_newton(self, theta: np.ndarray, lam: np.ndarray, tol: float, max_iter: int = 50,
                          deadline: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...


class FairLogLossProblem(SmoothProblem):
    """``J(θ)`` with the exact λ*(θ) as a :class:`~fairopt.modeling.smooth.SmoothProblem`.

    ``certifies`` is false: ``‖∇J‖`` proves nothing on the kink; the formulation certifies with
    the saddle residual instead.
    """

    name = "fair_logloss"
    description = "fair robust log-loss model"
    family = "fair log-loss"
    certifies = False
    #: gradient norm at which L-BFGS hands over to the Newton polish: early while a Newton step
    #: (``n d²``) is cheap next to the L-BFGS iterations it saves, late for wide models
    switch_tol: ClassVar[dict[bool, float]] = {True: 3e-2, False: 1e-6}

    def __init__(self, model: _Model):
        self.model = model
        self.blocks = {"theta": slice(0, model.dim)}
        self._orders: list[Any] | None = None   # sort orders of the last step, reused as a warm start

    def initial_point(self) -> np.ndarray:
        return np.zeros(self.model.dim)

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        m = self.model
        if not m.rows.binary:
            raise ConfigError("the exact λ*(θ) step compares two groups; with more groups use "
                              "solver='cvxpy' (joint convex form).")
        t, self._orders = m.terms(np.asarray(theta, float), None, self._orders)
        return float(np.mean(m.row_losses(t))) + m.regulariser(theta), m.gradient(theta, t)

    def native_solve(self, x0: np.ndarray, tol: float, max_iter: int, deadline: float | None) -> NativeResult:
        """L-BFGS on ``J`` (exact λ*), then the semismooth-Newton saddle polish if needed."""
        from threadpoolctl import threadpool_limits

        m = self.model
        with threadpool_limits(limits=1, user_api="blas"):
            # L-BFGS to moderate accuracy; the semismooth Newton polish converges fast from there
            res = lbfgs(self, x0, max(tol, self.switch_tol[m.dim <= 300]), max_iter, deadline, maxcor=20)
            theta = res.x
            assert theta is not None  # L-BFGS always reports its last iterate
            lam = m.terms(theta)[0].lam
            best = m.saddle_residual(theta, lam)[:2]
            log = [res.log, f"L-BFGS: {res.iterations} iterations, saddle residual {best}"]
            status, newton_iters = res.status, 0
            budget = max(max_iter - res.iterations, 0)     # max_iter bounds both phases together
            if not m.certified(*best, tol) and res.status is not Status.TIME_LIMIT and budget:
                d = m.rows.gaps(expit(m.X @ theta))
                starts = [lam]
                if np.max(np.abs(d), initial=np.inf) <= 1e-3:   # near the kink: start from the note's λ
                    starts.insert(0, m.kink_multiplier(theta))
                for lam0 in starts:
                    th, lm, _, k = m.semismooth_newton(theta, lam0, tol, budget - newton_iters,
                                                       deadline=deadline)
                    newton_iters += k
                    r = m.saddle_residual(th, lm)[:2]
                    log.append(f"semismooth Newton from λ={np.round(lam0, 6).tolist()}: "
                               f"{k} iterations, saddle residual {r}")
                    if max(r) < max(best):
                        theta, lam, best = th, lm, r
                    if m.certified(*best, tol) or newton_iters >= budget:
                        break
                # off the kink λ*(θ) is unique: prefer it (gaps to rounding) when it certifies
                exact = m.terms(theta)[0].lam
                r = m.saddle_residual(theta, exact)[:2]
                if m.certified(*r, tol) and r[1] <= best[1]:
                    lam, best = exact, r
            if m.certified(*best, tol):
                status = Status.OPTIMAL
            elif deadline is not None and time.perf_counter() >= deadline:
                status = Status.TIME_LIMIT
            elif res.iterations + newton_iters >= max_iter:
                status = Status.ITERATION_LIMIT
            elif status is Status.OPTIMAL:
                status = Status.NUMERICAL
        return NativeResult(theta, res.iterations + newton_iters, status, "\n".join(log),
                            "lbfgs+exact-lambda", primal={"lambda": lam})

    def to_cvxpy(self) -> Any:
        m = self.model
        return forms.build_cvxpy(m.X, m.y, m.rows.coef, m.C, m.penalized)

    def to_pyomo(self) -> Any:
        m = self.model
        return forms.build_pyomo(m.X, m.y, m.rows.coef, m.C, m.penalized)
