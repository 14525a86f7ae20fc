"""scipy.optimize.linprog for LPs.

Rows are split into equalities, ``<=`` rows (finite upper bounds) and ``>=`` rows (finite lower
bounds, negated). linprog's marginals are ``d f*/d b_ub`` and ``d f*/d b_eq``, so a negated
``>=`` row contributes ``-marginal`` to fairopt's dual.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fairopt.modeling.backends.base import CompiledModel, RawResult
from fairopt.modeling.solution import Status
from fairopt.modeling.spec import BackendInfo, reject_unknown_options

#: linprog's ``res.status`` to fairopt's status
_STATUS = {0: Status.OPTIMAL, 1: Status.ITERATION_LIMIT, 2: Status.INFEASIBLE,
           3: Status.UNBOUNDED, 4: Status.NUMERICAL}
LP_METHODS = ("highs", "highs-ds", "highs-ipm")
#: smooth methods are run by the formulations that own a smooth problem (max-entropy dual)
SMOOTH_METHODS = ("trust-exact", "trust-krylov", "L-BFGS-B")


def check_options(solver: str, options: dict) -> None:
    if solver not in LP_METHODS:
        return  # smooth methods: options are checked by the formulation that runs them
    import inspect

    from scipy.optimize._linprog_highs import _linprog_highs
    valid = [p for p in inspect.signature(_linprog_highs).parameters
             if p not in ("lp", "solver", "unknown_options")]
    reject_unknown_options(f"scipy linprog ({solver})", options, valid)


INFO = BackendInfo(
    name="scipy", module="scipy",
    description="scipy.optimize: linprog (HiGHS methods) for LPs, trust-region/L-BFGS for smooth duals",
    solvers={**{m: ("LP",) for m in LP_METHODS}, **{m: ("smooth",) for m in SMOOTH_METHODS}},
    default_solver={"LP": "highs", "smooth": "trust-exact"},
    time_limit_key={m: "time_limit" for m in LP_METHODS + SMOOTH_METHODS},
    status_map=_STATUS, check_options=check_options)


class ScipyModel(CompiledModel):
    backend = "scipy"

    def _build(self) -> None:
        c = self.canon
        eq = c.rl == c.ru
        self._eq = np.flatnonzero(eq)
        self._up = np.flatnonzero(~eq & np.isfinite(c.ru))
        self._lo = np.flatnonzero(~eq & np.isfinite(c.rl))
        A = c.A.tocsr()
        self._A_ub = sp.vstack([A[self._up], -A[self._lo]], format="csr")
        self._A_eq = A[self._eq]

    def _run(self) -> RawResult:
        from scipy.optimize import linprog
        c = self.canon
        options = dict(self.spec.options)
        if self.spec.time_limit is not None:
            options["time_limit"] = float(self.spec.time_limit)
        options.setdefault("disp", bool(self.spec.verbose))
        b_ub = np.concatenate([c.ru[self._up], -c.rl[self._lo]])
        bounds = np.column_stack([np.where(np.isfinite(c.xl), c.xl, -np.inf),
                                  np.where(np.isfinite(c.xu), c.xu, np.inf)])
        res = linprog(c.c, A_ub=self._A_ub if b_ub.size else None, b_ub=b_ub if b_ub.size else None,
                      A_eq=self._A_eq if self._eq.size else None,
                      b_eq=c.rl[self._eq] if self._eq.size else None,
                      bounds=bounds, method=self.spec.solver or "highs", options=options)
        status = _STATUS.get(res.status, Status.ERROR)
        if status is Status.ITERATION_LIMIT and "time" in str(res.message).lower():
            status = Status.TIME_LIMIT
        log = f"linprog: {res.message}"
        if status is not Status.OPTIMAL or res.x is None:
            return RawResult(status, res.x, iterations=getattr(res, "nit", None), log=log)
        y = np.zeros(c.m)
        n_up = self._up.size
        if b_ub.size:
            marg = np.asarray(res.ineqlin.marginals)
            np.add.at(y, self._up, marg[:n_up])
            np.add.at(y, self._lo, -marg[n_up:])
        if self._eq.size:
            y[self._eq] = np.asarray(res.eqlin.marginals)
        z = np.asarray(res.lower.marginals) + np.asarray(res.upper.marginals)
        return RawResult(status, np.asarray(res.x), y, z, int(getattr(res, "nit", 0)), log)


def compile(program, spec) -> ScipyModel:  # noqa: A001
    return ScipyModel(program, spec)
