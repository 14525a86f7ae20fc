"""Compile a :class:`~fairopt.constraints.block.FairnessBlock` into a fairopt ``Program``, a
user's pyomo model or a user's cvxpy problem, and read its duals back in fairopt's convention
(``d f*/d bound`` in the user's objective sense).

All three targets read the same ``A``, ``T``, ``sense`` and ``bound`` arrays; nothing about the
fairness criterion is known here. This module sits below ``block.py``: the block's methods call
it, and it reads blocks only through their attributes.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.errors import DataValidationError, InfeasibleError, SolverError, SolverLimitError, UnboundedError

if TYPE_CHECKING:
    import cvxpy as cp
    import pyomo.environ as pyo

    from fairopt.modeling import Program
    from fairopt.modeling.program import Constraint


class SensitivityLike(Protocol):
    """The derivatives of one tolerance, as :class:`~fairopt.constraints.block.Sensitivity` holds them."""

    @property
    def dbound(self) -> np.ndarray: ...
    @property
    def dA(self) -> sp.csr_matrix | None: ...
    @property
    def dT(self) -> np.ndarray | None: ...


class BlockLike(Protocol):
    """What this module and the parametric and slicing helpers read and write of a
    :class:`~fairopt.constraints.block.FairnessBlock` (which imports them, so they name this
    protocol instead)."""

    name: str
    A: sp.csr_matrix
    T: np.ndarray
    sense: np.ndarray
    bound: np.ndarray
    row_labels: list[str]
    parameters: dict[str, float]
    _program_var: str | None
    _program_map: sp.csr_matrix | None
    _handles: list[Callable[[dict[str, float]], None]]

    @property
    def sensitivity(self) -> Mapping[str, SensitivityLike]: ...
    @property
    def n(self) -> int: ...
    @property
    def m(self) -> int: ...
    @property
    def n_aux(self) -> int: ...
    @property
    def aux_name(self) -> str: ...
    @property
    def lb(self) -> np.ndarray: ...
    @property
    def ub(self) -> np.ndarray: ...


def check_size(block: BlockLike, size: int, where: str) -> None:
    if size != block.n:
        raise DataValidationError(f"{where} has {size} entries but fairness block {block.name!r} was "
                                  f"built for {block.n} candidates (one group label per entry).")


# ------------------------------------------------------------------------ fairopt Program
def add_to_program(block: BlockLike, program: Program, var: str) -> Constraint:
    if var not in program.variables:
        raise DataValidationError(f"program {program.name!r} has no variable {var!r}; "
                                  f"known: {list(program.variables)}.")
    check_size(block, program.variables[var].size, f"variable {var!r}")
    coeffs = {var: block.A}
    if block.n_aux:
        program.add_variables(block.aux_name, shape=(block.n_aux,), lb=None, ub=None)
        coeffs[block.aux_name] = sp.csr_matrix(block.T)
    con = program.add_constraints(block.name, coeffs, lb=block.lb, ub=block.ub)
    con.labels = list(block.row_labels)  # names the row of an infeasibility
    return con


# ------------------------------------------------------------------------ pyomo
def build_pyomo_block(block: BlockLike, var: pyo.Var, name: str, index: Iterable[Any] | None = None) -> pyo.Block:
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    if not getattr(var, "is_indexed", lambda: False)():
        raise DataValidationError("to_pyomo needs an indexed pyomo Var (one entry per candidate), "
                                  f"got {type(var).__name__}.")
    keys = list(var.index_set()) if index is None else _check_pyomo_index(var, index)
    check_size(block, len(keys), f"pyomo variable {var.name!r}")
    model = var.parent_block()
    if model.component(name) is not None:
        raise DataValidationError(f"the pyomo model already has a component named {name!r}; "
                                  "pass name=... to to_pyomo.")
    model.add_component(name, pyo.Block())
    blk = model.component(name)
    blk.aux = pyo.Var(range(block.n_aux), domain=pyo.Reals)
    flat = [var[k] for k in keys] + [blk.aux[j] for j in range(block.n_aux)]
    M = sp.hstack([block.A, sp.csr_matrix(block.T)], format="csr")
    lo, hi = block.lb, block.ub

    def rule(_: pyo.Block, r: int) -> object:  # one LinearExpression per row from its CSR slice
        a, b = M.indptr[r], M.indptr[r + 1]
        expr = LinearExpression(constant=0.0, linear_coefs=M.data[a:b].tolist(),
                                linear_vars=[flat[j] for j in M.indices[a:b]])
        return expr >= float(lo[r]) if block.sense[r] > 0 else expr <= float(hi[r])
    blk.rows = pyo.Constraint(range(block.m), rule=rule)
    blk._fairopt = (block, var, keys)
    return blk


def _check_pyomo_index(var: pyo.Var, index: Iterable[Any]) -> list[Any]:
    """The keys of ``index`` as a list; a repeated key or one ``var`` lacks is refused (either
    would leave a candidate out of every row, or point a row at nothing)."""
    keys = list(index)
    dup = pd.Index(keys).duplicated()
    if dup.any():
        raise DataValidationError(f"to_pyomo: index repeats key {keys[int(np.argmax(dup))]!r} of pyomo "
                                  f"variable {var.name!r}; list each candidate's key exactly once.")
    missing = set(keys).difference(var.index_set())
    if missing:
        first = next(k for k in keys if k in missing)
        raise DataValidationError(f"to_pyomo: pyomo variable {var.name!r} has no key {first!r} "
                                  f"({len(missing)} of {len(keys)} index keys are not in its index set).")
    return keys


#: pyomo termination conditions that are not a finished solve, by the typed error they map to
_PYOMO_LIMITS = {"maxTimeLimit", "maxIterations", "maxEvaluations", "minStepLength", "userInterrupt",
                 "resourceInterrupt", "licensingProblems"}


def _pyomo_check_results(block: BlockLike, results: object) -> None:
    """Refuse prices unless ``results`` (pyomo ``SolverResults``) reports an optimal solve."""
    solver = getattr(results, "solver", None)
    tc = getattr(solver, "termination_condition", None)
    if tc is None:
        raise DataValidationError("problem= for a pyomo block is the results object returned by "
                                  f"SolverFactory(...).solve; got {type(results).__name__}.")
    name = getattr(tc, "name", str(tc))
    _refuse_unfinished(block, name, "pyomo model's", optimal=("optimal", "locallyOptimal", "globallyOptimal"),
                       infeasible=("infeasible", "invalidProblem"), unbounded=("unbounded",),
                       limits=_PYOMO_LIMITS)


def _refuse_unfinished(block: BlockLike, status: str, where: str, optimal: Collection[str],
                       infeasible: Collection[str], unbounded: Collection[str], limits: Collection[str]) -> None:
    """Raise the typed error for a solve of status ``status`` that did not reach an optimum."""
    if status in optimal:
        return
    what = f"the {where} solve with fairness block {block.name!r} ended {status}"
    if status in infeasible:
        raise InfeasibleError(f"{what}: the model is infeasible, so the block has no prices. Loosen the "
                              "block's tolerances or check the model's other constraints.",
                              constraint=block.name, status=status)
    if status in unbounded:
        raise UnboundedError(f"{what}: the model is unbounded, so the block has no prices; add the "
                             "missing bound or constraint.", status=status)
    if status in limits:
        raise SolverLimitError(f"{what}, before optimality; its duals are not the optimum's prices. "
                               "Raise the solver's iteration or time limit, or tighten its tolerances, and "
                               "solve again.", status=status)
    raise SolverError(f"{what}: no optimal solution, so no prices.", status=status)


def _pyomo_stale(model: pyo.Block, tol: float = 1e-6) -> str | None:
    """Name of an active constraint the model's current values violate (or that cannot be evaluated):
    the values, and so the duals, are then not those of a solve of this model."""
    import pyomo.environ as pyo
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        body = pyo.value(con.body, exception=False)
        if body is None:
            return f"{con.name} (a variable in it has no value)"
        lo, hi = pyo.value(con.lower, exception=False), pyo.value(con.upper, exception=False)
        if (lo is not None and body < lo - tol * max(1.0, abs(lo))) or \
                (hi is not None and body > hi + tol * max(1.0, abs(hi))):
            return f"{con.name} (value {body:.6g}, bounds [{lo}, {hi}])"
    return None


def _pyomo_duals(block: BlockLike, blk: pyo.Block, results: object = None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import pyomo.environ as pyo
    owner = getattr(blk, "_fairopt", None)
    if owner is None or owner[0] is not block:
        raise DataValidationError(f"this pyomo block was not built by fairness block {block.name!r}.")
    _, var, keys = owner
    model = blk.model()
    if results is not None:
        _pyomo_check_results(block, results)
    dual = model.component("dual")
    if not isinstance(dual, pyo.Suffix) or not len(dual):
        if any(not v.is_continuous() for v in model.component_data_objects(pyo.Var, active=True)):
            raise DataValidationError(
                "the pyomo model has integer variables: a MIP has no duals, so a dual suffix cannot help. "
                "Price the fairness rows at the incumbent with fairopt.constraints.incumbent_lp(model) (the LP "
                "with the integers fixed at their solved values; it adds the dual suffix), then call "
                "price_of_fairness again.")
        raise DataValidationError("the pyomo model carries no duals: add "
                                  "`model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)` before solving.")
    # a later solve that loaded nothing (infeasible, load_solutions=False) leaves the previous
    # values and duals in place: they are that solve's only if they satisfy the model as it is now
    stale = _pyomo_stale(model)
    if stale is not None:
        raise SolverError(f"fairness block {block.name!r}: the pyomo model's current values violate "
                          f"{stale}, so they and the duals are not from a finished solve of this model "
                          "(the last solve was infeasible, stopped early, or did not load its solution). "
                          "Solve to optimality with the solution loaded before reading prices.")
    # pyomo with HiGHS (and Gurobi, Ipopt) imports d f*/d rhs in the model's own sense already
    y = np.array([dual.get(blk.rows[r], np.nan) for r in range(block.m)], dtype=float)
    x = np.array([pyo.value(var[k]) for k in keys], dtype=float)
    t = np.array([pyo.value(blk.aux[j]) for j in range(block.n_aux)], dtype=float)
    return y, x, t


# ------------------------------------------------------------------------ cvxpy
class CvxpyBlock(list[Any]):
    """The cvxpy constraints of a fairness block (a plain list for ``cp.Problem``), with the
    block's auxiliary variable ``aux`` and the decision variable ``x`` attached."""

    #: cvxpy parameters of a parametric block (set by its builder)
    parameters: dict[str, Any]

    def __init__(self, block: BlockLike, x: cp.Expression, aux: cp.Variable | None,
                 parts: list[tuple[np.ndarray, cp.Constraint]]) -> None:
        super().__init__(con for _, con in parts)
        self.block, self.x, self.aux, self.parts = block, x, aux, parts


def build_cvxpy_block(block: BlockLike, x: cp.Expression) -> CvxpyBlock:
    import cvxpy as cp
    size = int(np.prod(x.shape)) if x.shape else 1
    check_size(block, size, f"cvxpy variable {x.name()!r}")
    xv = x if len(x.shape) == 1 else cp.reshape(x, (size,), order="C")
    aux = cp.Variable(block.n_aux, name=block.aux_name) if block.n_aux else None
    parts = []
    for s in (1, -1):
        rows = np.flatnonzero(block.sense == s)
        if not rows.size:
            continue
        expr = block.A[rows] @ xv
        if aux is not None:
            expr = expr + block.T[rows] @ aux
        parts.append((rows, expr >= block.bound[rows] if s > 0 else expr <= block.bound[rows]))
    return CvxpyBlock(block, x, aux, parts)


def _cvxpy_duals(block: BlockLike, cons: CvxpyBlock, problem: object,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import cvxpy as cp
    if cons.block is not block:
        raise DataValidationError(f"these cvxpy constraints were not built by fairness block {block.name!r}.")
    if problem is None:
        raise DataValidationError("pass the solved cvxpy problem (problem=...) so the duals can be read "
                                  "in its objective sense.")
    if not isinstance(problem, cp.Problem):
        raise DataValidationError(f"problem= must be the solved cvxpy Problem, got {type(problem).__name__}.")
    if problem.status is None:
        raise SolverError(f"fairness block {block.name!r}: the cvxpy problem has not been solved; call "
                          "problem.solve() before reading prices.")
    # only "optimal" carries the optimum's duals: a limit ("user_limit") or an early stop
    # ("optimal_inaccurate") leaves multipliers of an unfinished iterate
    _refuse_unfinished(block, problem.status, "cvxpy problem's", optimal=(cp.OPTIMAL,),
                       infeasible=(cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE),
                       unbounded=(cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE),
                       limits=(cp.USER_LIMIT, cp.OPTIMAL_INACCURATE))
    if not any(con is part for con in problem.constraints for _, part in cons.parts):
        raise DataValidationError(f"the cvxpy problem does not contain the constraints of fairness block "
                                  f"{block.name!r}; add the list from to_cvxpy to its constraints.")
    # cvxpy multipliers are >= 0; d f*/d b is +mult for a >= row of a minimisation, -mult for <=,
    # and the opposite for a maximisation
    flip = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    y = np.full(block.m, np.nan)
    for rows, con in cons.parts:
        if con.dual_value is not None:
            d = np.asarray(con.dual_value, dtype=float).reshape(-1)
            y[rows] = flip * (d if block.sense[rows[0]] > 0 else -d)
    x = np.asarray(cons.x.value, dtype=float).reshape(-1)
    t = np.zeros(0) if cons.aux is None else np.asarray(cons.aux.value, dtype=float).reshape(-1)
    return y, x, t


# ------------------------------------------------------------------------ dispatch
def read_duals(block: BlockLike, result: object, var: str | None, problem: object,
               ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """``(y, x, t)`` of ``block`` from a fairopt Solution, a pyomo block or a cvxpy block."""
    from fairopt.modeling.solution import Solution
    if isinstance(result, Solution):
        var = var or block._program_var
        if var is None or var not in result.primal:
            raise DataValidationError(f"name the decision variable (var=...) of fairness block {block.name!r}; "
                                      f"the solution has {list(result.primal)}.")
        if not result.is_optimal:  # a limit's duals belong to an unfinished iterate
            status = getattr(result.status, "value", str(result.status))
            _refuse_unfinished(block, status, "fairopt", optimal=("optimal",), infeasible=("infeasible",),
                               unbounded=("unbounded",), limits=("time_limit", "iteration_limit"))
        y = result.dual.get(block.name)
        t = result.primal.get(block.aux_name, np.zeros(0))
        return (None if y is None else np.asarray(y, dtype=float)), result.primal[var], t
    if isinstance(result, CvxpyBlock):
        return _cvxpy_duals(block, result, problem)
    if hasattr(result, "_fairopt"):
        return _pyomo_duals(block, result, problem)
    raise DataValidationError("price_of_fairness reads a fairopt Solution, the pyomo block from "
                              f"to_pyomo or the list from to_cvxpy; got {type(result).__name__}.")
