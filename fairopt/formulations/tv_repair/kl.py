"""KL utility of the optimized-preprocessing mapping as a smooth convex problem.

``KLMapping`` implements :class:`fairopt.modeling.smooth.SmoothProblem`: the objective
``f(P) = Σ_k t_k log(t_k / (K P)_k)`` has an exact gradient ``−Kᵀ(t / K P)``, and its cvxpy form
adds the mapping program's linear constraints (validity, discrimination, distortion) to the
exponential-cone objective ``Σ t log t − t' log(K P)``. :func:`solve_smooth` runs it on cvxpy
(Clarabel or SCS); the constraints are outside the oracle, so the back end's status is trusted
(``certifies = False``).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fairopt.errors import DataValidationError, InfeasibleError, SolverError, WrongProblemClassError
from fairopt.formulations.tv_repair._types import SolverArg
from fairopt.modeling import Program, Solution, Status
from fairopt.modeling.backends.cvxpy_backend import build_cvxpy
from fairopt.modeling.smooth import CvxpyForm, SmoothProblem, smooth_spec, solve_smooth

if TYPE_CHECKING:
    import scipy.sparse as sp


class _MappingModel(Protocol):
    """What the KL solve reads of :class:`~fairopt.formulations.tv_repair.mapping.OptimizedPreprocessing`
    (named structurally: the mapping module imports this one)."""

    @property
    def n_variables(self) -> int: ...

    def _outflow(self) -> tuple[sp.csr_matrix, np.ndarray]: ...

    def _infeasible(self, solver: SolverArg, exc: InfeasibleError) -> InfeasibleError: ...


class KLMapping(SmoothProblem):
    """``min_P KL(t ‖ K P)`` subject to the constraints of a mapping :class:`Program`."""

    description = "KL optimized-preprocessing mapping"
    family = "KL mapping"
    certifies = False
    #: the constraints live only in the declarative form (the oracle does not see them)
    oracle_complete = False
    #: the exponential cone ends "inaccurate" at the tighter smooth-seam defaults
    form_tolerance = 1e-9

    def __init__(self, model: _MappingModel, prog: Program) -> None:
        self.name = prog.name
        self.prog = prog
        self.K, self.t = model._outflow()
        self.blocks = {"mapping": slice(0, model.n_variables)}
        self._const = float(self.t @ np.log(self.t))

    def initial_point(self) -> np.ndarray:
        return np.zeros(self.dim)

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        out = self.K @ x
        with np.errstate(divide="ignore"):
            value = self._const - float(self.t @ np.log(out))
            grad = -(self.K.T @ (self.t / out))
        return value, grad

    def to_cvxpy(self) -> CvxpyForm:
        import cvxpy
        cp: Any = cvxpy   # its atoms are implicit re-exports, which mypy --strict does not see
        canon = self.prog.canonical()
        problem, variables, cons, self._rows = build_cvxpy(canon)
        objective = self._const - self.t @ cp.log(self.K @ variables["mapping"])
        named = {f"{name}__{kind}": con for name, parts in cons.items() for kind, con in parts.items()
                 if name in canon.con_slices}
        return CvxpyForm(cp.Problem(cp.Minimize(objective), problem.constraints), {"mapping": variables["mapping"]},
                         named)

    def row_duals(self, dual: dict[str, Any]) -> dict[str, Any]:
        """Per-row duals of each constraint block in fairopt's convention (``d f*/d bound``)."""
        out = {}
        for name, s in self.prog.canonical().con_slices.items():
            y = np.zeros(s.stop - s.start)
            for kind, where in self._rows.get(name, {}).items():
                d = np.asarray(dual.get(f"{name}__{kind}", np.zeros(len(where))), dtype=float).reshape(-1)
                y[where] += -d if kind == "ge" else d   # solve_smooth reports -multiplier
            out[name] = y
        return out


def solve_kl(model: _MappingModel, prog: Program, solver: SolverArg, t0: float,
             **overrides: Any) -> tuple[Solution, float]:
    """Solve the KL mapping through :func:`solve_smooth`; returns the named solution and the
    build seconds."""
    problem = KLMapping(model, prog)
    try:   # never swapped silently for another back end
        spec = smooth_spec(problem, solver, **overrides)
    except WrongProblemClassError as exc:
        raise DataValidationError(f"divergence='kl' needs a solver of its exponential-cone form: {exc}") from None
    build_seconds = time.perf_counter() - t0
    sol = solve_smooth(problem, spec)
    if sol.status is Status.INFEASIBLE:
        raise model._infeasible(None, InfeasibleError(sol.log, status=Status.INFEASIBLE, log=sol.log))
    if sol.status is not Status.OPTIMAL:
        raise SolverError(f"KL mapping stopped with status {sol.status.value} ({sol.log}).", status=sol.status,
                          log=sol.log)
    sol.dual = problem.row_duals(sol.dual)
    return sol, build_seconds
