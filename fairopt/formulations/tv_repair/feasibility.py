"""Infeasibility as a result for the optimized pre-processing mapping.

The smallest feasible discrimination tolerance ε for given distortion limits (one LP with ε as the
objective, or a bisection for the ratio form, whose coefficients move with ε), a sweep that
reports a status per ε, and the discrimination rows an elastic LP has to relax. Mixed into
:class:`~fairopt.formulations.tv_repair.mapping.OptimizedPreprocessing`.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from fairopt.errors import InfeasibleError, SolverError
from fairopt.formulations.tv_repair._types import RowMeta, SolverArg

if TYPE_CHECKING:
    import scipy.sparse as sp
    from numpy.typing import ArrayLike

    from fairopt.data.domain import Domain
    from fairopt.formulations.tv_repair.result import MappingResult
    from fairopt.modeling import Program, Solution

_Model = TypeVar("_Model", bound="EpsilonAnalysis")


class EpsilonAnalysis:
    """Methods of the mapping model that study its tolerance ε (needs ``build``, ``solve``,
    ``_result``, ``_discrimination_rows`` and the model's fields)."""

    # fields of the model this is mixed into (set by its constructor)
    name: str
    protected: str
    label: str
    discrimination: str
    divergence: str
    epsilon: float
    groups: np.ndarray
    dxy_domain: Domain
    xy_domain: Domain
    _disc_meta: list[RowMeta]

    if TYPE_CHECKING:
        def build(self, objective: str | None = None) -> Program: ...

        def solve(self, solver: SolverArg = None, **kwargs: Any) -> MappingResult: ...

        def _discrimination_rows(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray | None,
                                                list[RowMeta]]: ...

        def _result(self, sol: Solution, build_seconds: float) -> MappingResult: ...

    def minimal_epsilon(self, solver: SolverArg = None, tol: float = 1e-7) -> float:
        """Smallest ε for which the discrimination and distortion constraints hold together.

        Additive and target forms: one LP with ε as the objective. Ratio form: bisection on
        feasibility (monotone in ε); ``inf`` when no finite ε is feasible.
        """
        if self.discrimination != "ratio":
            sol = self.build("min_epsilon").solve(solver, require_optimal=True)
            return float(sol.primal["epsilon"][0])

        def feasible(eps: float) -> bool:
            probe = self._with_epsilon(eps)
            try:
                probe.build(objective="feasibility").solve(solver, require_optimal=True)
            except InfeasibleError:
                return False
            return True
        if feasible(0.0):
            return 0.0
        hi = 1.0
        while not feasible(hi):
            hi *= 10
            if hi > 1e8:
                return float("inf")
        lo = 0.0
        while hi - lo > tol * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
        return hi

    def sweep_epsilon(self, epsilons: ArrayLike, solver: SolverArg = None) -> pd.DataFrame:
        """Solve for every ε and report a status per value instead of stopping at the first
        infeasible one: columns ``epsilon``, ``status``, ``objective``, ``d_objective_d_epsilon``.

        Additive and target forms change only row bounds, so the LP is compiled once and
        re-solved warm (HiGHS keeps its basis); the ratio form's coefficients move with ε and
        it is rebuilt. ``attrs["minimal_epsilon"]`` holds the smallest feasible ε.
        """
        rows = []
        comp = None if self.discrimination == "ratio" or self.divergence == "kl" else self.build().compile(solver)
        for eps in np.asarray(epsilons, dtype=float):
            twin = self._with_epsilon(eps)
            try:
                if comp is None:
                    res = twin.solve(solver)
                else:
                    _, lo, hi, _, _ = twin._discrimination_rows()
                    if len(lo):
                        comp.set_constraint_bounds("discrimination", lb=lo, ub=hi)
                    twin.build()   # row metadata for the duals
                    res = twin._result(comp.solve(require_optimal=True), 0.0)
                rows.append((eps, "optimal", res.objective, res.d_objective_d_epsilon))
            except InfeasibleError:
                rows.append((eps, "infeasible", np.nan, np.nan))
        out = pd.DataFrame(rows, columns=["epsilon", "status", "objective", "d_objective_d_epsilon"])
        out.attrs["minimal_epsilon"] = self.minimal_epsilon(solver) if self.divergence == "tv" else np.nan
        return out

    def _with_epsilon(self: _Model, eps: float) -> _Model:
        twin = copy.copy(self)
        twin.epsilon = float(eps)
        return twin

    def _infeasible(self, solver: SolverArg, exc: InfeasibleError) -> InfeasibleError:
        try:
            eps_min = self.minimal_epsilon(solver)
        except SolverError:
            eps_min = float("nan")
        limits = [n for n in ("expected_distortion", "excess_distortion") if n in self.build().constraints]
        pairs = self.offending_pairs(solver)
        return InfeasibleError(
            f"the {self.discrimination} discrimination constraints (epsilon={self.epsilon:g}) cannot hold "
            f"together with the distortion limits ({', '.join(limits) or 'forbidden moves'}); offending "
            f"rows: {'; '.join(pairs) or 'unknown'}. The minimal feasible epsilon for these distortion "
            f"settings is {eps_min:.6g}. Raise epsilon or relax clist/dlist/max_expected_distortion.",
            program=self.name, constraint="discrimination", tightest={"epsilon": eps_min, "pairs": pairs},
            status=exc.status, log=exc.log)

    def offending_pairs(self, solver: SolverArg = None) -> list[str]:
        """Discrimination rows that need slack in the elastic LP (slack on those rows only,
        minimising the total violation), as ``"<group> vs <other> (label=y)"``."""
        prog = self.build("elastic")
        if "slack_up" not in prog.variables:
            return []
        sol = prog.solve(solver, require_optimal=True)
        slack = sol.primal["slack_up"] + sol.primal["slack_down"]
        g = self.dxy_domain.levels[self.protected]
        ylev = self.xy_domain.levels[self.label]
        return [f"{g[self.groups[i]]} vs {'target' if j < 0 else g[self.groups[j]]} ({self.label}={ylev[y]})"
                for (i, j, y), s in zip(self._disc_meta, slack, strict=False) if s > 1e-9]
