"""Solving the mapping LP from the identity mapping (every record type keeps its cell).

The simplex warm basis and the first column-generation master both start there. Mixed into
:class:`~fairopt.formulations.tv_repair.mapping.OptimizedPreprocessing`.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.formulations.tv_repair._types import SolverArg
from fairopt.modeling.kinds import ColumnGenerationMaster
from fairopt.modeling.registry import solve_own

if TYPE_CHECKING:
    from fairopt.formulations.tv_repair.result import MappingResult
    from fairopt.modeling import Program, Solution, SolverSpec


class IdentityStart:
    """Methods of the mapping model that start a solve from the identity mapping (needs ``solve``,
    ``_result`` and the model's variable index)."""

    # fields of the model this is mixed into (set by its constructor)
    divergence: str
    var_col: np.ndarray
    var_row: np.ndarray
    own_column: np.ndarray

    if TYPE_CHECKING:
        def solve(self, solver: SolverArg = None, **kwargs: Any) -> MappingResult: ...
        def _result(self, sol: Solution, build_seconds: float) -> MappingResult: ...

    def _identity_basis(self, prog: Program) -> tuple[np.ndarray, np.ndarray]:
        """Basis of the identity mapping (every record type keeps its cell): the own-cell columns
        and every row but validity are basic. The matrix is block-triangular, so the basis is
        non-singular; all basic costs are 0, so it is dual feasible; and the identity meets every
        row but discrimination (no move, no distortion, no shortfall), so the primal simplex
        starts one block of rows away from feasibility."""
        canon = prog.canonical()
        cols = np.zeros(canon.n, dtype=bool)
        cols[canon.var_slices["mapping"].start + np.flatnonzero(self.var_col == self.own_column[self.var_row])] = True
        rows = np.ones(canon.m, dtype=bool)
        rows[canon.con_slices["validity"]] = False
        return cols, rows

    def _solve_column_generation(self, prog: Program, spec: SolverSpec, t0: float) -> MappingResult:
        if self.divergence != "tv":
            raise DataValidationError(f"solver={spec.label!r} solves the TV (linear) mapping by column "
                                      "generation; divergence='kl' needs a solver of its exponential-cone form.")
        build_s = time.perf_counter() - t0
        # first master: every record type kept as it is (the identity mapping)
        master = ColumnGenerationMaster(prog, "mapping", self.var_col == self.own_column[self.var_row])
        sol = solve_own(master, spec, "colgen")
        if sol.status.value != "optimal":
            # elastic columns still in use: the fairness rows cannot hold (or the certificate
            # failed); the full LP decides and reports the minimal epsilon
            return self.solve(None)
        return self._result(sol, build_s)
