"""pyomo: a ``ConcreteModel`` with one indexed ``Var`` and one indexed ``Constraint`` per block,
named as in the :class:`~fairopt.modeling.Program`, plus ``objective``.

Pyomo builds expressions row by row, which is inherent to it; fairopt keeps pyomo for
inspection, embedding and solver reach, and the array back ends for speed. Each row's linear
expression is built in one call from the CSR slice (never term by term). For a minimisation
the duals pyomo imports from HiGHS, Gurobi or Ipopt are ``d f*/d rhs`` already.
"""
from __future__ import annotations

import numpy as np

from fairopt.modeling.backends.base import CompiledModel, RawResult
from fairopt.modeling.program import Canonical
from fairopt.modeling.solution import Status


def _bound(v: float):
    return float(v) if np.isfinite(v) else None


def build_pyomo(canon: Canonical, user_sense: bool = False):
    """Return a pyomo ``ConcreteModel`` for the canonical program."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    model = pyo.ConcreteModel(name=canon.name)
    flat = []  # flat column index -> pyomo var data
    for v, s in canon.var_slices.items():
        lo, hi = canon.xl[s], canon.xu[s]
        comp = pyo.Var(range(s.stop - s.start), domain=pyo.Reals,
                       bounds=lambda m, i, lo=lo, hi=hi: (_bound(lo[i]), _bound(hi[i])))
        model.add_component(v, comp)
        flat.extend(comp[i] for i in range(s.stop - s.start))
    A = canon.A.tocsr()
    for name, s in canon.con_slices.items():
        block = A[s]
        lo, hi = canon.rl[s], canon.ru[s]

        def rule(m, r, block=block, lo=lo, hi=hi):
            a, b = block.indptr[r], block.indptr[r + 1]
            expr = LinearExpression(constant=0.0, linear_coefs=block.data[a:b].tolist(),
                                    linear_vars=[flat[j] for j in block.indices[a:b]])
            if lo[r] == hi[r]:
                return expr == float(lo[r])
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
                                 for w, i, j in zip(weight, upper.row, upper.col))
    maximize = user_sense and canon.sense < 0
    model.objective = pyo.Objective(expr=obj, sense=pyo.maximize if maximize else pyo.minimize)
    return model


class PyomoModel(CompiledModel):
    backend = "pyomo"

    def _build(self) -> None:
        import pyomo.environ as pyo
        self.model = build_pyomo(self.canon)
        self.model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        self.model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)

    def _run(self) -> RawResult:
        import pyomo.environ as pyo
        from pyomo.opt import TerminationCondition as TC

        opt = pyo.SolverFactory(self.spec.solver)
        for key, value in dict(self.spec.options).items():
            opt.options[key] = value
        if self.spec.time_limit is not None:
            key = {"appsi_highs": "time_limit", "highs": "time_limit", "ipopt": "max_cpu_time",
                   "gurobi": "TimeLimit", "gurobi_direct": "TimeLimit", "cbc": "seconds",
                   "glpk": "tmlim"}.get(self.spec.solver, "time_limit")
            opt.options[key] = self.spec.time_limit
        try:
            results = opt.solve(self.model, tee=self.spec.verbose, load_solutions=False)
        except Exception as exc:  # solver plugins raise many types; report, never leak
            return RawResult(Status.ERROR, log=f"pyomo/{self.spec.solver}: {exc}")
        tc = results.solver.termination_condition
        status = {TC.optimal: Status.OPTIMAL, TC.locallyOptimal: Status.OPTIMAL,
                  TC.globallyOptimal: Status.OPTIMAL, TC.infeasible: Status.INFEASIBLE,
                  TC.unbounded: Status.UNBOUNDED,
                  TC.infeasibleOrUnbounded: Status.INFEASIBLE_OR_UNBOUNDED,
                  TC.maxTimeLimit: Status.TIME_LIMIT, TC.maxIterations: Status.ITERATION_LIMIT,
                  TC.maxEvaluations: Status.ITERATION_LIMIT}.get(tc, Status.ERROR)
        log = f"pyomo/{self.spec.solver} termination: {tc}"
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT):
            return RawResult(status, log=log)
        try:
            self.model.solutions.load_from(results)
        except Exception as exc:
            return RawResult(status if status is not Status.OPTIMAL else Status.ERROR,
                             log=f"{log}; no solution to load ({exc})")
        c = self.canon
        x = np.concatenate([np.array([pyo.value(var[i], exception=False) or 0.0
                                      for i in range(s.stop - s.start)], dtype=float)
                            for var, s in ((getattr(self.model, v), s)
                                           for v, s in c.var_slices.items())]) if c.n else np.zeros(0)
        y = z = None
        if status is Status.OPTIMAL and len(self.model.dual):
            y = np.concatenate([np.array([self.model.dual.get(con[i], 0.0)
                                          for i in range(s.stop - s.start)], dtype=float)
                                for con, s in ((getattr(self.model, k), s)
                                               for k, s in c.con_slices.items())]) if c.m else np.zeros(0)
            if len(self.model.rc):
                z = np.concatenate([np.array([self.model.rc.get(var[i], 0.0)
                                              for i in range(s.stop - s.start)], dtype=float)
                                    for var, s in ((getattr(self.model, v), s)
                                                   for v, s in c.var_slices.items())])
        return RawResult(status, x, y, z, None, log)


def compile(program, spec) -> PyomoModel:  # noqa: A001
    return PyomoModel(program, spec)
