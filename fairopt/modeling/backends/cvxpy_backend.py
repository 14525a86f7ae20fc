"""cvxpy: one ``cp.Variable`` per variable block and up to three constraint objects per
constraint block (equality rows, ``>=`` rows, ``<=`` rows), so callers can extend the problem.

cvxpy reports non-negative multipliers on inequalities; fairopt's dual is ``+dual`` for a
``>=`` row and ``-dual`` for a ``<=`` row (``d f*/d bound``), and ``-dual`` for an equality row
(cvxpy's Lagrangian adds ``y'(expr - b)``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fairopt.modeling.backends.base import CompiledModel, RawResult
from fairopt.modeling.program import Canonical
from fairopt.modeling.solution import Status

_TIME_LIMIT_KEY = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "OSQP": "time_limit",
                   "HIGHS": "time_limit", "GUROBI": "TimeLimit", "MOSEK": "mosek_params"}


def build_cvxpy(canon: Canonical, user_sense: bool = False):
    """Build ``(problem, variables, constraints, rows)`` from a canonical program.

    ``constraints[name]`` is a dict ``{"eq"|"ge"|"le": cvxpy constraint}`` and
    ``rows[name][kind]`` the row indices (within the block) each object covers. Variable
    bounds live under ``constraints["<var>__bounds"]``.
    """
    import cvxpy as cp
    variables = {v: cp.Variable(s.stop - s.start, name=v) for v, s in canon.var_slices.items()}
    A = canon.A.tocsr()
    constraints, rows = {}, {}

    def add(name, expr_rows, idx, lo, hi):
        parts, where = {}, {}
        eq = lo == hi
        for kind, mask in (("eq", eq), ("ge", ~eq & np.isfinite(lo)), ("le", ~eq & np.isfinite(hi))):
            sel = np.flatnonzero(mask)
            if sel.size:
                expr = expr_rows(sel)
                rhs = (hi if kind == "le" else lo)[sel]
                parts[kind] = {"eq": expr == rhs, "ge": expr >= rhs, "le": expr <= rhs}[kind]
                where[kind] = idx[sel] if idx is not None else sel
        constraints[name], rows[name] = parts, where

    for name, s in canon.con_slices.items():
        block = A[s]

        def expr_rows(sel, block=block):
            sub = block[sel]
            terms = [sub[:, vs] @ variables[v] for v, vs in canon.var_slices.items()
                     if sub[:, vs].nnz]
            return cp.sum(terms) if len(terms) > 1 else (terms[0] if terms else
                                                          cp.Constant(np.zeros(sel.size)))
        add(name, expr_rows, None, canon.rl[s], canon.ru[s])
    for v, vs in canon.var_slices.items():
        lo, hi = canon.xl[vs], canon.xu[vs]
        bounded = np.flatnonzero(np.isfinite(lo) | np.isfinite(hi))
        if bounded.size:
            add(f"{v}__bounds", lambda sel, v=v, b=bounded: variables[v][b[sel]], bounded,
                lo[bounded], hi[bounded])
    sign = canon.sense if user_sense else 1
    objective = sign * canon.constant
    lin = [sign * canon.c[vs] @ variables[v] for v, vs in canon.var_slices.items()
           if np.any(canon.c[vs])]
    if lin:
        objective = objective + cp.sum(lin)
    if canon.P is not None:
        used = [v for v, vs in canon.var_slices.items() if canon.P[:, vs].nnz]
        cols = np.concatenate([np.arange(canon.var_slices[v].start, canon.var_slices[v].stop)
                               for v in used])
        Psub = sp.csc_matrix(canon.P[cols][:, cols])
        z = cp.hstack([variables[v] for v in used]) if len(used) > 1 else variables[used[0]]
        objective = objective + sign * 0.5 * cp.quad_form(z, cp.psd_wrap(Psub))
    if user_sense and canon.sense < 0:
        goal = cp.Maximize(objective)
    else:
        goal = cp.Minimize(objective)
    flat = [c for parts in constraints.values() for c in parts.values()]
    return cp.Problem(goal, flat), variables, constraints, rows


class CvxpyModel(CompiledModel):
    backend = "cvxpy"

    def _build(self) -> None:
        self.problem, self.variables, self.cons, self.rows = build_cvxpy(self.canon)

    def _run(self) -> RawResult:
        import cvxpy as cp
        solver = self.spec.solver
        kwargs = dict(self.spec.options)
        if self.spec.time_limit is not None and solver in _TIME_LIMIT_KEY:
            kwargs.setdefault(_TIME_LIMIT_KEY[solver], float(self.spec.time_limit))
        try:
            self.problem.solve(solver=solver, verbose=self.spec.verbose, **kwargs)
        except cp.error.SolverError as exc:
            return RawResult(Status.ERROR, log=f"cvxpy/{solver}: {exc}")
        st = self.problem.status
        # cvxpy says "user_limit" for any solver limit: a time limit only if one was set
        limit = Status.TIME_LIMIT if self.spec.time_limit is not None else Status.ITERATION_LIMIT
        status = {cp.OPTIMAL: Status.OPTIMAL, cp.INFEASIBLE: Status.INFEASIBLE,
                  cp.INFEASIBLE_INACCURATE: Status.INFEASIBLE, cp.UNBOUNDED: Status.UNBOUNDED,
                  cp.UNBOUNDED_INACCURATE: Status.UNBOUNDED, cp.USER_LIMIT: limit,
                  cp.OPTIMAL_INACCURATE: Status.NUMERICAL}.get(st, Status.ERROR)
        stats = self.problem.solver_stats
        iters = getattr(stats, "num_iters", None)
        log = f"cvxpy/{solver} status: {st}"
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT):
            return RawResult(status, iterations=iters, log=log)
        c = self.canon
        x = np.concatenate([np.asarray(self.variables[v].value, dtype=float).reshape(-1)
                            for v in c.var_slices]) if c.n else np.zeros(0)
        y, z = np.zeros(c.m), np.zeros(c.n)
        for name, parts in self.cons.items():
            if name.endswith("__bounds") and name[:-8] in c.var_slices:
                target, offset = z, c.var_slices[name[:-8]].start
            else:
                target, offset = y, c.con_slices[name].start
            for kind, con in parts.items():
                d = np.asarray(con.dual_value, dtype=float).reshape(-1)
                target[offset + self.rows[name][kind]] += d if kind == "ge" else -d
        return RawResult(status, x, y, z, iters, log)


def compile(program, spec) -> CvxpyModel:  # noqa: A001
    return CvxpyModel(program, spec)
