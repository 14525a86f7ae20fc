r"""Cost-sensitive LPs of fair regression (Agarwal, Dudík & Wu 2019, App. G and Sec. 4.4).

:class:`WeightedHingeLP`
    The weighted hinge surrogate of cost-sensitive classification for linear threshold
    classifiers :math:`h_\beta(x,z)=1\{\langle\beta,x\rangle\ge z\}`, on ``m`` augmented rows
    :math:`r=(i,z)` with weights :math:`W_r` and labels :math:`Y_r\in\{\pm1\}` (the published LP with
    its three errata fixed: weights in the objective, threshold in the margin, augmented rows):

    .. math:: \text{(P)}\ \min_{\beta,t}\ \sum_r W_r t_r\ \ \text{s.t.}\ \ t_r\ge0,\ \
              t_r\ge\tfrac\alpha2-Y_r(\langle\beta,x_r\rangle-z_r),\ \ -1\le\beta_j\le1.

    Its LP dual has only ``2d`` rows. With :math:`\omega_r=Y_ru_r` the constraint matrix is the
    constant ``d x m`` matrix of augmented features, and only column bounds and costs change
    across game iterations:

    .. math:: \text{(D)}\ \max_{\omega,v}\ \sum_r(z_r+\tfrac\alpha2Y_r)\omega_r-\sum_jv_j\ \
              \text{s.t.}\ v-X^\top\omega\ge0\ [\pi^+],\ v+X^\top\omega\ge0\ [\pi^-],\ \
              \omega_r\in[0,W_r]\ (Y_r=1),\ [-W_r,0]\ (Y_r=-1).

    (D) is passed to the back ends as the minimisation of its negated objective, so its row
    duals are non-negative and :math:`\beta=\pi^+-\pi^-` (with ``v`` free,
    :math:`\pi^++\pi^-=1`). The solution certifies itself: (P)'s objective at the recovered
    :math:`\beta` must equal (D)'s optimum.

:func:`best_mixture_program`
    The restricted best-response mixture LP of the practical game over a pool of hypotheses with
    costs :math:`\kappa` and constraint values :math:`\Gamma` (rows ``g <= b``):
    :math:`\min_{q\in\Delta,s\ge0}\kappa^\top q+Bs` s.t. :math:`\Gamma q-s\le b`. Its row duals
    (negated, so non-negative) are the multipliers :math:`\lambda_{\rm LP}` of
    :math:`\max_{\lambda\ge0,\|\lambda\|_1\le B}\min_k L(h_k,\lambda)`.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError, DataValidationError
from fairopt.modeling import Program, SolverSpec

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling.backends.base import CompiledModel
    from fairopt.modeling.diagnose import ConstantModel


# ---- best-response mixture LP ------------------------------------------------------------------
def best_mixture_program(costs: ArrayLike, G: ArrayLike, bound: ArrayLike,
                         B: float, name: str = "best_mixture") -> Program:
    """Build the restricted best-mixture LP over ``K`` hypotheses (``G`` has shape ``(K, M)``).

    The weights ``q`` are the last variable block, so a compiled copy can grow by one column per
    new hypothesis (:meth:`CompiledModel.extend_variables`).
    """
    costs = np.asarray(costs, dtype=float)
    G = np.atleast_2d(np.asarray(G, dtype=float))
    K, M = G.shape
    prog = Program(name)
    prog.add_variables("s", shape=(1,), lb=0.0)
    prog.add_variables("q", shape=(K,), lb=0.0)
    prog.add_constraints("fairness", {"q": G.T, "s": -np.ones((M, 1))}, ub=np.asarray(bound, float))
    prog.add_constraints("simplex", {"q": np.ones((1, K))}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"q": costs, "s": [float(B)]})
    return prog


class BestMixtureLP:
    """The best-mixture LP over a pool of hypotheses that only grows.

    The first :meth:`solve` compiles the program; later calls append the new hypotheses as
    columns and change the penalty ``B`` in place, so HiGHS re-solves from the previous basis
    instead of rebuilding the model each game iteration.
    """

    def __init__(self, bound: ArrayLike, solver: str | SolverSpec | Mapping[str, Any] | None = None) -> None:
        self.bound = np.asarray(bound, dtype=float)
        self.solver = solver
        self._compiled: CompiledModel | ConstantModel | None = None
        self._k = 0
        self._B: float | None = None

    def solve(self, costs: ArrayLike, G: ArrayLike, B: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Return ``(q, lambda, s)`` for the pool ``(costs, G)`` with ``lambda >= 0``."""
        costs = np.asarray(costs, dtype=float)
        G = np.atleast_2d(np.asarray(G, dtype=float))
        K = costs.shape[0]
        if self._compiled is None or K < self._k:
            self._compiled = best_mixture_program(costs, G, self.bound, B).compile(self.solver)
        else:
            if K > self._k:
                new = slice(self._k, K)
                self._compiled.extend_variables("q", {"fairness": G[new].T,
                                                      "simplex": np.ones((1, K - self._k))}, costs[new])
            if B != self._B:
                self._compiled.set_objective(linear={"s": [float(B)]})
        self._k, self._B = K, B
        sol = self._compiled.solve(require_optimal=True)
        q = np.clip(sol.primal["q"], 0.0, None)
        q = q / q.sum()
        lam = np.clip(-np.asarray(sol.dual["fairness"]), 0.0, None)
        return q, lam, float(sol.primal["s"][0])


def solve_best_mixture(costs: ArrayLike, G: ArrayLike, bound: ArrayLike, B: float,
                       solver: str | SolverSpec | Mapping[str, Any] | None = None
                       ) -> tuple[np.ndarray, np.ndarray, float]:
    """Solve :func:`best_mixture_program` once; return ``(q, lambda, s)`` with ``lambda >= 0``."""
    return BestMixtureLP(bound, solver).solve(costs, G, B)


@dataclass
class MinMaxGroupLoss:
    """Solution of :func:`min_max_group_loss`: value ``t*``, mixture ``q`` and group duals ``mu``."""

    value: float
    q: np.ndarray
    mu: np.ndarray


def min_max_group_loss(G: ArrayLike, solver: str | SolverSpec | Mapping[str, Any] | None = None,
                       offset: ArrayLike | None = None) -> MinMaxGroupLoss:
    r"""Smallest worst-group loss over mixtures of a pool: :math:`\min_{q\in\Delta}\max_a (G^\top q - o)_a`.

    ``G`` has shape ``(K, M)`` (pool members x groups); ``offset`` ``o`` (e.g. the bounds
    :math:`\zeta_a`) shifts every row, so a positive value with ``offset=bound`` certifies that no
    mixture of the pool meets the bounds. The duals ``mu`` (a distribution over groups) are the
    group weights at which a new hypothesis would lower the value (column generation).
    """
    G = np.atleast_2d(np.asarray(G, dtype=float))
    K, M = G.shape
    o = np.zeros(M) if offset is None else np.asarray(offset, dtype=float)
    prog = Program("tightest_group_loss")
    prog.add_variables("q", shape=(K,), lb=0.0)
    prog.add_variables("t", shape=(1,), lb=None)
    prog.add_constraints("group_loss", {"q": G.T, "t": -np.ones((M, 1))}, ub=o)
    prog.add_constraints("simplex", {"q": np.ones((1, K))}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"t": [1.0]})
    sol = prog.solve(solver, require_optimal=True)
    q = np.clip(np.asarray(sol.primal["q"], dtype=float), 0.0, None)
    mu = np.clip(-np.asarray(sol.dual["group_loss"], dtype=float), 0.0, None)
    return MinMaxGroupLoss(float(sol.objective), q / q.sum(), mu)


# ---- weighted hinge LP ---------------------------------------------------------------------------
@dataclass
class HingeSolution:
    """Solution of :class:`WeightedHingeLP`: ``beta``, hinge objective and the certificate."""

    beta: np.ndarray
    objective: float
    form: str
    certificate_gap: float
    solve_seconds: float
    backend: str


def hinge_objective(beta: np.ndarray, features: np.ndarray, z: np.ndarray, W: np.ndarray, Y: np.ndarray,
                    alpha: float) -> float:
    """(P)'s objective :math:`\\sum_r W_r\\max(0, \\alpha/2 - Y_r(\\langle\\beta,x_r\\rangle - z_r))`."""
    margin = Y * (features @ beta - z)
    return float(W @ np.maximum(0.0, 0.5 * alpha - margin))


class WeightedHingeLP:
    """Weighted hinge LP for linear threshold classifiers, in primal or dual form.

    Parameters
    ----------
    features : array of shape (m, d)
        Augmented-row features ``x_r`` (include a constant column for an intercept).
    z : array of shape (m,)
        Thresholds ``z_r``.
    W, Y : arrays of shape (m,)
        Non-negative weights and labels in ``{-1, +1}``.
    alpha : float
        Grid step; the hinge margin is ``alpha / 2``.
    form : {"auto", "primal", "dual"}
        ``"auto"`` picks the dual (``2d`` rows) whenever ``m > 2d``.
    """

    def __init__(self, features: ArrayLike, z: ArrayLike, W: ArrayLike, Y: ArrayLike, alpha: float,
                 form: str = "auto") -> None:
        self.features = np.asarray(features, dtype=float)
        self.z = np.asarray(z, dtype=float)
        self.alpha = float(alpha)
        self.form = form
        self._compiled: CompiledModel | ConstantModel | None = None
        self._compiled_solver: str | SolverSpec | Mapping[str, Any] | None = None
        self.set_costs(W, Y)
        if form not in ("auto", "primal", "dual"):
            raise ConfigError(f"form={form!r}; use 'auto', 'primal' or 'dual'.")

    @property
    def shape(self) -> tuple[int, int]:
        """``(m, d)``: rows of the (primal) LP and feature columns."""
        return self.features.shape

    @property
    def chosen_form(self) -> str:
        """The LP form :meth:`solve` builds: ``form``, or for ``"auto"`` ``"dual"`` when ``m > 2 d``."""
        m, d = self.shape
        if self.form != "auto":
            return self.form
        return "dual" if m > 2 * d else "primal"

    def set_costs(self, W: ArrayLike, Y: ArrayLike) -> None:
        """Replace weights and labels (the only data that change across game iterations)."""
        W = np.asarray(W, dtype=float)
        Y = np.asarray(Y, dtype=float)
        m = self.features.shape[0]
        if W.shape != (m,) or Y.shape != (m,) or np.any(W < 0) or not np.all(np.isin(Y, (-1.0, 1.0))):
            raise DataValidationError(f"hinge LP needs {m} non-negative weights and labels in {{-1, +1}}.")
        self.W, self.Y = W, Y

    # -- builders --------------------------------------------------------------------------
    def _dual_data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c = -(self.z + 0.5 * self.alpha * self.Y)          # negated (D) objective on omega
        lb = np.where(self.Y > 0, 0.0, -self.W)
        ub = np.where(self.Y > 0, self.W, 0.0)
        return c, lb, ub

    def build(self, form: str | None = None) -> Program:
        """The program of the chosen form (``form`` overrides the instance setting)."""
        form = form or self.chosen_form
        m, d = self.shape
        if form == "dual":
            c, lb, ub = self._dual_data()
            prog = Program("weighted_hinge_dual")
            prog.add_variables("omega", shape=(m,), lb=lb, ub=ub)
            prog.add_variables("v", shape=(d,), lb=None)
            XT = sp.csr_matrix(self.features.T)
            eye = sp.identity(d, format="csr")
            prog.add_constraints("pos", {"v": eye, "omega": -XT}, lb=0.0)
            prog.add_constraints("neg", {"v": eye, "omega": XT}, lb=0.0)
            prog.set_objective(linear={"omega": c, "v": np.ones(d)})
            return prog
        if form != "primal":
            raise ConfigError(f"form={form!r}; use 'primal' or 'dual'.")
        prog = Program("weighted_hinge_primal")
        prog.add_variables("beta", shape=(d,), lb=-1.0, ub=1.0)
        prog.add_variables("t", shape=(m,), lb=0.0)
        margin = sp.diags(self.Y) @ sp.csr_matrix(self.features)
        prog.add_constraints("margin", {"t": sp.identity(m, format="csr"), "beta": margin},
                             lb=0.5 * self.alpha + self.Y * self.z)
        prog.set_objective(linear={"t": self.W})
        return prog

    # -- solving ---------------------------------------------------------------------------
    def solve(self, solver: str | SolverSpec | Mapping[str, Any] | None = None, form: str | None = None,
              warm_start: bool = True) -> HingeSolution:
        """Solve; the dual form re-uses a compiled model (warm start) when ``warm_start``."""
        form = form or self.chosen_form
        t0 = time.perf_counter()
        if form == "dual":
            if warm_start and self._compiled is not None and self._compiled_solver == solver:
                c, lb, ub = self._dual_data()
                self._compiled.set_objective({"omega": c})
                self._compiled.set_variable_bounds("omega", lb=lb, ub=ub)
                sol = self._compiled.solve(require_optimal=True)
            else:
                comp = self.build("dual").compile(solver)
                sol = comp.solve(require_optimal=True)
                if warm_start:
                    self._compiled, self._compiled_solver = comp, solver
            beta = np.clip(np.asarray(sol.dual["pos"]) - np.asarray(sol.dual["neg"]), -1.0, 1.0)
            value = -float(sol.objective)
        else:
            sol = self.build("primal").solve(solver, require_optimal=True)
            beta = np.asarray(sol.primal["beta"], dtype=float)
            value = float(sol.objective)
        seconds = time.perf_counter() - t0
        obj = hinge_objective(beta, self.features, self.z, self.W, self.Y, self.alpha)
        return HingeSolution(beta=beta, objective=value, form=form,
                             certificate_gap=abs(obj - value) / max(1.0, abs(value)),
                             solve_seconds=seconds, backend=sol.backend)

    def summary(self) -> dict[str, Any]:
        """Sizes of the primal and dual forms and the form that would be chosen."""
        m, d = self.shape
        return {"rows_primal": m, "rows_dual": 2 * d, "columns_primal": m + d,
                "columns_dual": m + d, "chosen_form": self.chosen_form}
