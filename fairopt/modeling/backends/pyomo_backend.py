"""pyomo: a ``ConcreteModel`` with one indexed ``Var`` and one indexed ``Constraint`` per block,
named as in the :class:`~fairopt.modeling.Program`, plus ``objective``.

Pyomo builds expressions row by row, which is inherent to it; fairopt keeps pyomo for
inspection, embedding and solver reach, and the array back ends for speed. Each row's linear
expression is built in one call from the CSR slice (never term by term). For a minimisation
the duals pyomo imports from HiGHS, Gurobi or Ipopt are ``d f*/d rhs`` already.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt.errors import SolverNotAvailableError
from fairopt.modeling.backends.base import CompiledModel, SmoothOracle
from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import NativeResult, RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

if TYPE_CHECKING:
    import pyomo.environ as pyo
    import scipy.sparse as sp

#: pyomo solvers fairopt knows, with the problem classes each takes (appsi_highs passes only
#: linear objectives; smooth problems need an NLP solver)
SOLVERS = {"appsi_highs": ("LP", "MILP"), "highs": ("LP", "QP", "MILP"), "ipopt": ("LP", "QP", "smooth"),
           "gurobi": ("LP", "QP", "MILP"), "gurobi_direct": ("LP", "QP", "MILP"),
           "cplex": ("LP", "QP", "MILP"), "cbc": ("LP", "MILP"), "glpk": ("LP", "MILP"),
           "scip": ("LP", "QP", "smooth", "MILP"), "xpress": ("LP", "QP", "MILP")}
TIME_LIMIT_KEY = {"appsi_highs": "time_limit", "highs": "time_limit", "ipopt": "max_cpu_time",
                  "gurobi": "TimeLimit", "gurobi_direct": "TimeLimit", "cbc": "seconds",
                  "glpk": "tmlim", "cplex": "timelimit", "scip": "limits/time",
                  "xpress": "maxtime"}


def _installed() -> tuple[str, ...]:
    """Names of pyomo solvers that report themselves available on this machine."""
    import logging

    import pyomo.environ as pyo
    found = []
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    for name in SOLVERS:
        try:
            if pyo.SolverFactory(name).available(exception_flag=False):
                found.append(name)
        except Exception:  # a broken plugin is "not available", never a crash
            continue
    return tuple(found)


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    if solver in ("highs", "appsi_highs"):  # HiGHS option names; other solvers check their own
        from fairopt.modeling.backends.highs_backend import check_options as highs_check
        highs_check("highs", options)


STATUS_MAP = {"optimal": Status.OPTIMAL, "locallyOptimal": Status.OPTIMAL,
              "globallyOptimal": Status.OPTIMAL, "infeasible": Status.INFEASIBLE,
              "unbounded": Status.UNBOUNDED, "infeasibleOrUnbounded": Status.INFEASIBLE_OR_UNBOUNDED,
              "maxTimeLimit": Status.TIME_LIMIT, "maxIterations": Status.ITERATION_LIMIT,
              "maxEvaluations": Status.ITERATION_LIMIT}

INFO = BackendInfo(
    name="pyomo", module="pyomo",
    description="pyomo ConcreteModel with named indexed components; any pyomo solver",
    solvers=SOLVERS, default_solver={"LP": "appsi_highs", "QP": "highs", "smooth": "ipopt", "MILP": "appsi_highs"},
    time_limit_key=TIME_LIMIT_KEY, time_limit_classes=("LP", "QP", "MILP"),
    iteration_limit_key={"ipopt": "max_iter", "highs": "simplex_iteration_limit",
                         "appsi_highs": "simplex_iteration_limit", "glpk": "itlim", "scip": "limits/totalnodes"},
    mip_gap_key={"appsi_highs": "mip_rel_gap", "highs": "mip_rel_gap", "gurobi": "MIPGap",
                 "gurobi_direct": "MIPGap", "cbc": "ratioGap", "glpk": "mipgap",
                 "scip": "limits/gap"},
    install_hint={"ipopt": "smooth problems need the NLP solver Ipopt: conda install -c conda-forge ipopt"},
    status_map=STATUS_MAP, probe=_installed,
    check_options=check_options, duals=tuple(SOLVERS), form="pyomo", active_set_qp=("highs",),
    qp_iteration_limit_key="qp_iteration_limit", tolerance_keys={"ipopt": ("tol",)})


def _bound(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def build_pyomo(canon: Canonical, user_sense: bool = False) -> pyo.ConcreteModel:
    """Return a pyomo ``ConcreteModel`` for the canonical program."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    model = pyo.ConcreteModel(name=canon.name)
    flat: list[Any] = []  # flat column index -> pyomo var data
    mask = canon.integer_mask()
    for v, s in canon.var_slices.items():
        lo, hi = canon.xl[s], canon.xu[s]
        integer = bool(mask[s].any())
        comp = pyo.Var(range(s.stop - s.start), domain=pyo.Integers if integer else pyo.Reals,
                       bounds=lambda m, i, lo=lo, hi=hi: (_bound(lo[i]), _bound(hi[i])))
        model.add_component(v, comp)
        flat.extend(comp[i] for i in range(s.stop - s.start))
    A = canon.A.tocsr()
    for name, s in canon.con_slices.items():
        block = A[s]
        lo, hi = canon.rl[s], canon.ru[s]

        def rule(m: pyo.ConcreteModel, r: int, block: sp.csr_matrix = block, lo: np.ndarray = lo,
                 hi: np.ndarray = hi) -> object:
            a, b = block.indptr[r], block.indptr[r + 1]
            expr = LinearExpression(constant=0.0, linear_coefs=block.data[a:b].tolist(),
                                    linear_vars=[flat[j] for j in block.indices[a:b]])
            if lo[r] == hi[r]:
                return expr == float(lo[r])
            if not (np.isfinite(lo[r]) or np.isfinite(hi[r])):
                return pyo.Constraint.Skip  # a free row constrains nothing
            return (_bound(lo[r]), expr, _bound(hi[r]))
        model.add_component(name, pyo.Constraint(range(s.stop - s.start), rule=rule))
    sign = canon.sense if user_sense else 1
    nz = np.flatnonzero(canon.c)
    obj = LinearExpression(constant=float(sign * canon.constant),
                           linear_coefs=(sign * canon.c[nz]).tolist(),
                           linear_vars=[flat[j] for j in nz])
    if canon.P is not None:
        import scipy.sparse as sp
        upper = sp.triu(canon.P, format="coo")
        weight = np.where(upper.row == upper.col, 0.5, 1.0) * upper.data * sign
        obj = obj + pyo.quicksum(float(w) * flat[i] * flat[j]
                                 for w, i, j in zip(weight, upper.row, upper.col, strict=False))
    maximize = user_sense and canon.sense < 0
    model.objective = pyo.Objective(expr=obj, sense=pyo.maximize if maximize else pyo.minimize)
    return model


class PyomoModel(CompiledModel):
    backend = "pyomo"
    info = INFO

    def _build(self) -> None:
        import pyomo.environ as pyo
        self.model = build_pyomo(self.canon)
        # HiGHS reports "model empty" when no column reaches it (no rows, or only zero rows and
        # costs), which pyomo reads as "unknown": a fixed padding column and row prevent that
        self.model._pad = pyo.Var(bounds=(0.0, 0.0))
        self.model._pad_row = pyo.Constraint(expr=self.model._pad == 0.0)
        if not self.canon.is_mip:  # a MIP has no duals (appsi_highs refuses to load them)
            self.model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            self.model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)

    def _run(self) -> RawResult:
        import pyomo.environ as pyo

        opt = pyo.SolverFactory(self.spec.solver)
        for key, value in {**self.qp_iteration_cap(), **self.spec.options}.items():
            opt.options[key] = value
        if self.spec.time_limit is not None:
            opt.options[TIME_LIMIT_KEY.get(str(self.spec.solver), "time_limit")] = self.spec.time_limit
        try:
            results = opt.solve(self.model, tee=self.spec.verbose, load_solutions=False)
        except Exception as exc:  # solver plugins raise many types; report, never leak
            return RawResult(Status.ERROR, log=f"pyomo/{self.spec.solver}: {exc}")
        tc = results.solver.termination_condition
        status = INFO.map_status(getattr(tc, "name", str(tc)))
        log = f"pyomo/{self.spec.solver} termination: {tc}"
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT):
            return RawResult(status, log=log)
        try:
            self.model.solutions.load_from(results)
        except Exception as exc:
            return RawResult(status if status is not Status.OPTIMAL else Status.ERROR,
                             log=f"{log}; no solution to load ({exc})")
        c = self.canon
        # an unused variable has no value (NaN here; the certifier puts it inside its bounds)
        x = np.concatenate([np.array([_num(pyo.value(var[i], exception=False))
                                      for i in range(s.stop - s.start)], dtype=float)
                            for var, s in ((getattr(self.model, v), s)
                                           for v, s in c.var_slices.items())]) if c.n else np.zeros(0)
        y = z = None
        if status is Status.OPTIMAL and not c.is_mip and len(self.model.dual):
            y = np.concatenate([np.array([self.model.dual.get(con[i], 0.0) if i in con else 0.0
                                          for i in range(s.stop - s.start)], dtype=float)
                                for con, s in ((getattr(self.model, k), s)
                                               for k, s in c.con_slices.items())]) if c.m else np.zeros(0)
            if len(self.model.rc):
                z = np.concatenate([np.array([self.model.rc.get(var[i], 0.0)
                                              for i in range(s.stop - s.start)], dtype=float)
                                    for var, s in ((getattr(self.model, v), s)
                                                   for v, s in c.var_slices.items())])
        return RawResult(status, x, y, z, None, log)


def _num(v: float | None) -> float:
    return np.nan if v is None else float(v)


def compile(program: Any, spec: SolverSpec) -> PyomoModel:
    return PyomoModel(program, spec)


# ------------------------------------------------------------------------------ smooth problems
def solve_smooth(problem: SmoothOracle, spec: SolverSpec, x0: np.ndarray, tol: float, max_iter: int,
                 deadline: float | None) -> NativeResult:
    """Solve the problem's pyomo form (:meth:`~fairopt.modeling.smooth.SmoothProblem.to_pyomo`)
    with an NLP solver (Ipopt gets ``tol / 100``); duals through a ``dual`` suffix if declared."""
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    name = spec.solver
    assert name is not None  # check_spec filled it in
    form = problem.to_pyomo()
    opt = pyo.SolverFactory(name)
    if not opt.available(exception_flag=False):
        alternatives = ["native", "scipy"]
        if problem.has_form("cvxpy"):
            alternatives.append("cvxpy:CLARABEL")
        raise SolverNotAvailableError(
            f"pyomo solver {name!r} is not available (the {problem.description} is a smooth NLP "
            "and needs Ipopt); the model was built but cannot be solved here.",
            available=alternatives)
    opts = {"tol": tol * 1e-2, "max_iter": max(max_iter, 500)} if name == "ipopt" else {}
    opts.update(spec.options)
    for k, v in opts.items():
        opt.options[k] = v
    res = opt.solve(form.model, tee=spec.verbose)
    tc = res.solver.termination_condition
    status = {TC.optimal: Status.OPTIMAL, TC.locallyOptimal: Status.OPTIMAL,
              TC.globallyOptimal: Status.OPTIMAL, TC.infeasible: Status.INFEASIBLE,
              TC.unbounded: Status.UNBOUNDED, TC.maxTimeLimit: Status.TIME_LIMIT,
              TC.maxIterations: Status.ITERATION_LIMIT}.get(tc, Status.ERROR)
    primal = {k: np.array([pyo.value(v[i]) for i in v.index_set()], dtype=float)
              for k, v in form.variables.items()}
    dual = {}
    suffix = getattr(form.model, "dual", None)
    if suffix is not None and len(suffix):
        dual = {k: np.array([suffix.get(c[i], 0.0) for i in c.index_set()], dtype=float)
                for k, c in form.constraints.items()}
    objective = next(form.model.component_data_objects(pyo.Objective, active=True))
    return NativeResult(None, 0, status, f"pyomo/{name} termination: {tc}\n{res}", name, primal,
                        dual, float(pyo.value(objective)))
