"""``column_pricing``: fairopt's column generation with a pricing oracle (kind ``pricing``, a
:class:`~fairopt.modeling.lazy_columns.LazyColumns`).

Each round solves the restricted master, hands its row duals and point to the problem's oracle,
appends the columns it returns, and re-solves, until the oracle returns none; the last master's
point is then optimal for the LP over every column the oracle can produce (no column prices
out). Two paths:

- the restricted masters' solver is HiGHS (option ``lp_solver`` unset or a ``highs`` spec, whose
  options and time limit apply to every master): one ``highspy.Highs`` model grown with
  ``addCols``, each re-solve warm-started from the previous basis (added columns keep it primal
  feasible; a master the warm simplex leaves unsolved is re-solved from scratch once); the final basis comes back in
  ``info["warm_start"]`` and a problem carrying it starts from it (e.g. the same columns with
  other costs);
- any other LP solver that returns duals (``lp_solver="scipy"``, ``"ortools:GLOP"``, ...): the
  restricted master is rebuilt as a :class:`~fairopt.modeling.Program` and re-solved each round,
  without warm start. A solver without duals is refused when the spec is checked.

Row duals follow fairopt's convention (``d objective / d row bound``; for this minimisation the
reduced cost of column ``j`` is ``cost_j - A_j' y``), which is HiGHS's own for a minimisation.
"""
from __future__ import annotations

import importlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from fairopt.errors import ConfigError, SolverError, SolverLimitError, WrongProblemClassError
from fairopt.modeling.backends import NAMES
from fairopt.modeling.solution import Solution, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

if TYPE_CHECKING:
    import highspy

__all__ = ["INFO", "solve_own"]

#: options of the method
OWN_OPTIONS = ("lp_solver", "max_rounds")
#: the back end whose restricted masters are grown in place and warm-started
_WARM = "highs"


def _lp_info(name: str) -> BackendInfo:
    info: BackendInfo = importlib.import_module(f"fairopt.modeling.backends.{name}_backend").INFO
    return info


def _lp_spec(value: Any) -> SolverSpec:
    """The restricted masters' LP solver named by option ``lp_solver``; refused when it takes no
    LP or returns no duals (the oracle prices with them)."""
    spec = SolverSpec.parse(value)
    info = _lp_info(spec.backend)
    solver = info.canonical_solver(str(spec.solver)) if spec.solver else info.default_solver.get("LP")
    with_duals = [f"{b}:{s}" for b in NAMES if b != INFO.name for s in _lp_info(b).duals
                  if "LP" in _lp_info(b).solvers.get(s, ())]
    if solver is None or "LP" not in info.solvers.get(solver, ()):
        raise WrongProblemClassError(f"column pricing solves its restricted masters with an LP solver; "
                                     f"{spec.label!r} takes no LP. Use one of {', '.join(with_duals)}.", with_duals)
    if solver not in info.duals:
        raise WrongProblemClassError(f"column pricing needs the row duals of its restricted masters, and "
                                     f"{spec.backend}:{solver} returns none. Use one of {', '.join(with_duals)}.",
                                     with_duals)
    return spec


def _check_options(solver: str, options: Mapping[str, Any]) -> None:
    reject_unknown_options("column_pricing", options, OWN_OPTIONS)
    if options.get("lp_solver") is not None:
        _lp_spec(options["lp_solver"])
    if "max_rounds" in options and (isinstance(options["max_rounds"], bool)
                                    or not isinstance(options["max_rounds"], (int, np.integer))
                                    or options["max_rounds"] < 0):
        raise ConfigError(f"column_pricing option max_rounds must be an integer >= 0, got {options['max_rounds']!r}.")


INFO = BackendInfo(
    name="column_pricing", module="highspy",
    description="fairopt's column generation with a pricing oracle: restricted masters by warm-started "
                "HiGHS simplex (addCols), or re-solved by any LP solver with duals (option lp_solver)",
    solvers={"column_pricing": ("pricing",)}, default_solver={"pricing": "column_pricing"},
    time_limit_key={"column_pricing": None}, iteration_limit_key={"column_pricing": "max_rounds"},
    duals=("column_pricing",), warm_start=("column_pricing",), default_for=("pricing",),
    check_options=_check_options)


def _rows_of(block: Any) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
    A = block.A
    return A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), np.asarray(A.data, dtype=float)


def _concat(blocks: list[Any], problem: Any) -> Any:
    """The columns of ``blocks`` side by side, as one block of the problem's column type."""
    block_type = type(problem.columns)
    return block_type(sp.hstack([b.A for b in blocks], format="csc"), np.concatenate([b.cost for b in blocks]),
                      np.concatenate([b.lb for b in blocks]), np.concatenate([b.ub for b in blocks]))


class _HighsMaster:
    """One HiGHS model grown column by column (the warm path)."""

    def __init__(self, problem: Any, lp: SolverSpec, verbose: bool):
        import highspy

        from fairopt.modeling.backends.base import quiet
        from fairopt.modeling.backends.highs_backend import _new_highs
        tolerances = {"primal_feasibility_tolerance": float(problem.tol),
                      "dual_feasibility_tolerance": float(problem.tol)}
        with quiet():  # the HiGHS banner of the first instance
            h = _new_highs(verbose or lp.verbose, {**tolerances, **dict(lp.options)}, lp.time_limit)
        self.h, self.inf, self.lp = h, float(highspy.kHighsInf), lp
        self.optimal = highspy.HighsModelStatus.kOptimal
        self.time_limit = highspy.HighsModelStatus.kTimeLimit
        m = problem.m
        h.addRows(m, self._finite(problem.row_lower), self._finite(problem.row_upper), 0,
                  np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.add(problem.fixed)
        self.add(problem.columns)
        warm = problem.warm_start
        if isinstance(warm, highspy.HighsBasis) and len(warm.col_status) == h.getNumCol() \
                and len(warm.row_status) == m:
            h.setBasis(warm)

    def _finite(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.clip(x, -self.inf, self.inf)

    def add(self, block: Any) -> None:
        if block.k:
            starts, index, value = _rows_of(block)
            self.h.addCols(block.k, block.cost, self._finite(block.lb), self._finite(block.ub), int(value.size),
                           starts, index, value)

    def solve(self) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        h = self.h
        h.run()
        status = h.getModelStatus()
        if status == self.time_limit:
            raise SolverLimitError(f"a restricted master reached the time limit of {self.lp.time_limit} s.",
                                   status=Status.TIME_LIMIT)
        if status != self.optimal:  # a warm start that simplex could not clean up: once more from scratch
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        if status != self.optimal:
            raise SolverError(f"a restricted master stopped with HiGHS status {h.modelStatusToString(status)}.",
                              status=str(status))
        sol = h.getSolution()
        return (np.asarray(sol.col_value, dtype=float), np.asarray(sol.row_dual, dtype=float),
                float(h.getInfo().objective_function_value))

    def basis(self) -> highspy.HighsBasis:
        return self.h.getBasis()


class _ProgramMaster:
    """The restricted master rebuilt as a Program each round (any LP solver with duals)."""

    def __init__(self, problem: Any, lp: SolverSpec, verbose: bool):
        self.problem, self.lp, self.verbose = problem, lp, verbose
        self.blocks = [problem.columns]

    def add(self, block: Any) -> None:
        self.blocks.append(block)

    def solve(self) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        cols = _concat(self.blocks, self.problem)
        sol = self.problem.restricted_master(cols).solve(self.lp, verbose=self.verbose, require_optimal=True)
        x = np.concatenate([np.asarray(sol.primal[name], dtype=float).reshape(-1)
                            for name, block in (("fixed", self.problem.fixed), ("columns", cols)) if block.k])
        return x, np.asarray(sol.dual["rows"], dtype=float), float(sol.objective)

    def basis(self) -> None:
        return None


def solve_own(problem: Any, spec: SolverSpec, **options: Any) -> Solution:
    """Solve a :class:`~fairopt.modeling.lazy_columns.LazyColumns` by column generation; returns
    the last restricted master's :class:`Solution` (``primal["fixed"]``, ``primal["columns"]``
    over every column in the order added, ``dual["rows"]``; ``iterations`` = pricing rounds;
    ``info``: ``rounds``, ``columns`` (a :class:`~fairopt.modeling.lazy_columns.ColumnBlock` of
    every column) and ``warm_start`` (the final basis, or ``None``)).

    Raises
    ------
    SolverLimitError
        The oracle still returned columns after ``max_rounds`` rounds.

    Examples
    --------
    Choose the cheapest of the columns ``(1, j)`` with cost ``-j / (1 + j^2)`` against the row
    ``sum_j j x_j <= 0.5`` and ``sum_j x_j = 1``; the oracle offers the best one for the duals,
    the master starts from ``j = 0``; half of ``j = 1`` is optimal:

    >>> import numpy as np
    >>> from fairopt.modeling.lazy_columns import ColumnBlock, LazyColumns
    >>> from fairopt.modeling.registry import solve_own
    >>> j = np.arange(6.0)
    >>> cost, A = -j / (1 + j ** 2), np.vstack([np.ones(6), j])
    >>> def price(y, x):
    ...     best = int(np.argmin(cost - A.T @ y))
    ...     d = cost[best] - A[:, best] @ y
    ...     return ColumnBlock(A[:, [best]], cost[[best]], 0.0, np.inf) if d < -1e-9 else None
    >>> problem = LazyColumns([1.0, -np.inf], [1.0, 0.5], ColumnBlock(np.zeros((2, 0)), [], [], []),
    ...                       ColumnBlock(A[:, [0]], cost[[0]], 0.0, np.inf), price)
    >>> sol = solve_own(problem, None, "pricing")
    >>> sol.backend, round(sol.objective, 9), np.round(sol.primal["columns"], 9).tolist()
    ('column_pricing', -0.25, [0.5, 0.5])
    """
    settings = {"max_rounds": problem.max_rounds, **dict(spec.options), **options}
    max_rounds = int(settings["max_rounds"])
    lp = None if settings.get("lp_solver") is None else _lp_spec(settings["lp_solver"])
    master: _HighsMaster | _ProgramMaster
    if lp is None or lp.backend == _WARM:
        master = _HighsMaster(problem, lp or SolverSpec(_WARM), spec.verbose)
    else:
        master = _ProgramMaster(problem, lp, spec.verbose)
    t0 = time.perf_counter()
    blocks = [problem.columns]
    rounds = 0
    while True:
        x, y, objective = master.solve()
        new = problem.price(y, x)
        if new is None or new.k == 0:
            break
        rounds += 1
        if rounds > max_rounds:
            raise SolverLimitError(f"column pricing still found improving columns after {max_rounds} rounds; "
                                   "raise max_rounds.", status=Status.ITERATION_LIMIT)
        master.add(new)
        blocks.append(new)
    columns = _concat(blocks, problem)
    nf = problem.fixed.k
    log = (f"column pricing: {rounds} round(s), {columns.k} column(s); the oracle offers no improving "
           "column, so the restricted master's optimum is optimal over every column")
    return Solution(status=Status.OPTIMAL, objective=objective, primal={"fixed": x[:nf], "columns": x[nf:]},
                    dual={"rows": y}, backend=INFO.name, solver=INFO.name,
                    solve_seconds=time.perf_counter() - t0, iterations=rounds, log=log,
                    info={"rounds": rounds, "columns": columns, "warm_start": master.basis()})
