"""``row_generation``: fairopt's row generation (lazy constraints) for LPs with too many rows to
write down (kind ``rowgen``, a :class:`~fairopt.modeling.kinds.LazyRows`).

The master LP holds the rows known up front. Each round solves it with an LP solver from the
registry (option ``lp_solver``, default the registry's LP solver), asks the separation oracle
for the rows the optimum violates, keeps those violated by more than ``tol``, and adds them to
the master as a new constraint block (``<block>_<round>``). When the oracle returns no violated
row, the master's optimum is feasible for the full LP and, since the master is a relaxation,
optimal for it. The rows are added to ``problem.program`` in place, so the program afterwards
holds every row that was needed (its duals price them).
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import SolverLimitError
from fairopt.modeling.solution import Solution, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

if TYPE_CHECKING:
    from fairopt.modeling.kinds import LazyRows

__all__ = ["INFO", "solve_own"]

#: options of the method
OWN_OPTIONS = ("lp_solver", "max_rounds", "tol")


def _check_options(solver: str, options: Mapping[str, Any]) -> None:
    reject_unknown_options("row_generation", options, OWN_OPTIONS)


INFO = BackendInfo(
    name="row_generation", module="numpy",
    description="fairopt's row generation: an LP master grown by a separation oracle's violated rows, "
                "each master solved by the registry's LP solver",
    solvers={"row_generation": ("rowgen",)}, default_solver={"rowgen": "row_generation"},
    time_limit_key={"row_generation": None}, iteration_limit_key={"row_generation": "max_rounds"},
    duals=("row_generation",), default_for=("rowgen",), check_options=_check_options)


def _full_vector(problem: LazyRows, sol: Solution) -> np.ndarray:
    canon = problem.program.canonical()
    x = np.zeros(canon.n)
    for name, sl in canon.var_slices.items():
        x[sl] = np.asarray(sol.primal[name], dtype=float).ravel()
    return x


def solve_own(problem: LazyRows, spec: SolverSpec, **options: Any) -> Solution:
    """Solve ``problem`` by row generation; returns the last master's :class:`Solution` with
    ``iterations`` = rounds and ``backend``/``solver`` naming this method.

    Raises
    ------
    SolverLimitError
        Rows were still violated after ``max_rounds`` rounds.
    """
    settings = {"max_rounds": problem.max_rounds, "tol": problem.tol, **dict(spec.options), **options}
    lp_solver = settings.get("lp_solver")
    prog = problem.program
    t0 = time.perf_counter()
    added = 0
    for rounds in range(int(settings["max_rounds"]) + 1):
        sol = prog.solve(lp_solver, time_limit=spec.time_limit, verbose=spec.verbose, require_optimal=True)
        x = _full_vector(problem, sol)
        A, lo, hi = problem.separate(x)
        A = sp.csr_matrix(A)
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (A.shape[0],))
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (A.shape[0],))
        act = A @ x
        bad = np.flatnonzero((act < lo - settings["tol"]) | (act > hi + settings["tol"]))
        if bad.size == 0:
            log = (f"row generation: {rounds} round(s), {added} row(s) added; the separation oracle "
                   "finds no violated row, so the master's optimum is optimal for the full LP")
            done: Solution = dataclasses.replace(sol, backend=INFO.name, solver=INFO.name, iterations=rounds,
                                                 solve_seconds=time.perf_counter() - t0,
                                                 log=(sol.log + "\n" + log).strip())
            return done
        if rounds == int(settings["max_rounds"]):
            break
        canon = prog.canonical()
        rows = A[bad]
        coeffs = {name: rows[:, sl] for name, sl in canon.var_slices.items() if rows[:, sl].nnz}
        prog.add_constraints(f"{problem.block}_{rounds}", coeffs, lb=lo[bad], ub=hi[bad])
        added += bad.size
    raise SolverLimitError(f"row generation still found violated rows after {settings['max_rounds']} rounds "
                           f"({added} rows added); raise max_rounds (solver option) or check the oracle.",
                           status=Status.ITERATION_LIMIT)
