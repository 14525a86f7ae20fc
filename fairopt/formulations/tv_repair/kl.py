"""KL utility of the optimized-preprocessing mapping through cvxpy's exponential cone.

The objective Σ_k t_k log(t_k / P_out(k)) is not linear, so it is not a :class:`Program`
objective: the program's constraints are compiled to cvxpy as they are, and the objective is
added there as ``Σ t log t − t' log(K P)``.
"""
from __future__ import annotations

import time

import numpy as np

from fairopt.errors import DataValidationError, InfeasibleError, SolverError
from fairopt.modeling import Solution, SolverSpec, Status
from fairopt.modeling.backends.cvxpy_backend import build_cvxpy

EXP_CONE_SOLVERS = ("CLARABEL", "SCS", "MOSEK", "ECOS")


def solve_kl(model, prog, solver, t0: float, **overrides) -> tuple[Solution, float]:
    """Solve ``prog`` (built without a utility block) with the KL objective; returns the named
    solution (fairopt's dual convention) and the build seconds."""
    import cvxpy as cp
    spec = SolverSpec.parse(solver if solver not in (None, "highs") else "cvxpy:CLARABEL", **overrides)
    inner = spec.solver or "CLARABEL"
    if spec.backend != "cvxpy" or inner not in EXP_CONE_SOLVERS or inner not in cp.installed_solvers():
        have = [s for s in EXP_CONE_SOLVERS if s in cp.installed_solvers()]
        raise DataValidationError(f"divergence='kl' needs cvxpy with an exponential-cone solver; got {spec}. "
                                  f"Use one of {['cvxpy:' + s for s in have]}.")
    canon = prog.canonical()
    problem, variables, cons, rows = build_cvxpy(canon)
    K, t = model._outflow()
    objective = float(t @ np.log(t)) - t @ cp.log(K @ variables["mapping"])
    kl = cp.Problem(cp.Minimize(objective), problem.constraints)
    build_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        kl.solve(solver=inner, verbose=spec.verbose, **dict(spec.options))
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy/{inner} failed on the KL mapping: {exc}", status=Status.ERROR) from exc
    seconds = time.perf_counter() - t1
    log = f"cvxpy/{inner} status: {kl.status}"
    if kl.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        raise model._infeasible("highs", InfeasibleError(log, status=Status.INFEASIBLE, log=log))
    if kl.status != cp.OPTIMAL:
        raise SolverError(f"KL mapping stopped with cvxpy status {kl.status}.", status=Status.NUMERICAL, log=log)
    primal = {v: np.asarray(var.value, dtype=float).reshape(canon.var_shapes[v]) for v, var in variables.items()}
    dual = {}
    for name, s in canon.con_slices.items():
        y = np.zeros(s.stop - s.start)
        for kind, con in cons[name].items():
            d = np.asarray(con.dual_value, dtype=float).reshape(-1)
            y[rows[name][kind]] += d if kind == "ge" else -d
        dual[name] = y
    sol = Solution(status=Status.OPTIMAL, objective=float(kl.value), primal=primal, dual=dual,
                   backend="cvxpy", solver=inner, solve_seconds=seconds, log=log, program=canon.name)
    return sol, build_seconds
