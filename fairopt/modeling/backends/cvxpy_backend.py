"""cvxpy: one ``cp.Variable`` per variable block and up to three constraint objects per
constraint block (equality rows, ``>=`` rows, ``<=`` rows), so callers can extend the problem.

cvxpy reports non-negative multipliers on inequalities; fairopt's dual is ``+dual`` for a
``>=`` row and ``-dual`` for a ``<=`` row (``d f*/d bound``), and ``-dual`` for an equality row
(cvxpy's Lagrangian adds ``y'(expr - b)``).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError, SolverError
from fairopt.modeling.backends.base import CompiledModel, SmoothOracle
from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import NativeResult, RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

if TYPE_CHECKING:
    import cvxpy as cp

_CONIC = ("LP", "QP", "smooth")  # exponential cone: smooth convex problems such as max-entropy
#: cvxpy solvers fairopt knows, with the problem classes each takes
SOLVERS = {"CLARABEL": _CONIC, "SCS": _CONIC, "ECOS": _CONIC, "MOSEK": _CONIC,
           "OSQP": ("LP", "QP"), "HIGHS": ("LP", "QP", "MILP"), "PIQP": ("LP", "QP"), "PROXQP": ("LP", "QP"),
           "QOCO": ("LP", "QP"), "DAQP": ("LP", "QP"), "GUROBI": ("LP", "QP"), "CPLEX": ("LP", "QP"),
           "XPRESS": ("LP", "QP"), "COPT": ("LP", "QP"), "CVXOPT": ("LP", "QP"),
           "SCIPY": ("LP",), "GLPK": ("LP",), "GLOP": ("LP",), "PDLP": ("LP",), "CBC": ("LP",)}
#: keyword carrying a time limit; SCIPY takes it inside ``scipy_options``; None: refused
_TIME_LIMIT_KEY = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "OSQP": "time_limit",
                   "HIGHS": "time_limit", "GUROBI": "TimeLimit", "SCIPY": "scipy_options.time_limit",
                   "PIQP": None, "PROXQP": None, "DAQP": None, "CVXOPT": None, "GLPK": None,
                   "GLOP": None, "CBC": None, "QOCO": None}
#: tolerances fairopt asks of interior-point solvers unless the options set them: Clarabel's
#: defaults (1e-8) leave multipliers off by up to 1e-1 relative on rescaled planted programs,
#: these bring the 99th percentile to about 3e-3 (benchmarks/solver_status.py)
TIGHT = {"CLARABEL": {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11,
                      "tol_ktratio": 1e-9}}
#: smooth problems (exponential cone, no vertex to snap to) ask Clarabel a decade more
SMOOTH_TIGHT = {"CLARABEL": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                             "tol_ktratio": 1e-10}}
#: SCS tolerance floor and iteration cap on smooth problems: a first-order method meets ~1e-9
#: residuals at best, and 1e-10 with 200,000 iterations made it run for minutes on large domains
SCS_EPS_FLOOR, SCS_MAX_ITERS = 1e-9, 50_000
#: ``Problem.solve`` keywords every solver takes
_SOLVE_KEYWORDS = ("warm_start", "verbose", "gp", "qcp", "requires_grad", "enforce_dpp",
                   "ignore_dpp", "canon_backend", "bounds")
STATUS_MAP = {"optimal": Status.OPTIMAL, "infeasible": Status.INFEASIBLE,
              "infeasible_inaccurate": Status.INFEASIBLE, "unbounded": Status.UNBOUNDED,
              "unbounded_inaccurate": Status.UNBOUNDED, "user_limit": Status.TIME_LIMIT,
              "optimal_inaccurate": Status.NUMERICAL,
              "infeasible_or_unbounded": Status.INFEASIBLE_OR_UNBOUNDED}


def _solver_options(solver: str) -> list[str] | None:
    """Names an inner solver accepts, where its settings can be listed (else None)."""
    if solver == "CLARABEL":
        import clarabel
        return [a for a in dir(clarabel.DefaultSettings()) if not a.startswith("_")]
    if solver == "OSQP":
        from fairopt.modeling.backends.osqp_backend import _settings_names
        return [*_settings_names(), "max_iter", "eps_abs", "eps_rel"]
    if solver == "SCS":
        return ["max_iters", "eps_abs", "eps_rel", "eps_infeas", "alpha", "time_limit_secs",
                "normalize", "scale", "adaptive_scale", "rho_x", "acceleration_lookback",
                "acceleration_interval", "write_data_filename", "log_csv_filename", "use_indirect",
                "gpu", "mkl"]
    if solver == "SCIPY":
        return ["scipy_options"]
    return None


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    if solver == "HIGHS":
        from fairopt.modeling.backends.highs_backend import check_options as highs_check
        highs_check("highs", {k: v for k, v in options.items() if k not in _SOLVE_KEYWORDS})
        return
    valid = _solver_options(solver)
    if valid is not None:
        reject_unknown_options(f"cvxpy:{solver}", options, list(valid) + list(_SOLVE_KEYWORDS))


def _installed() -> tuple[str, ...]:
    import cvxpy as cp
    have = set(cp.installed_solvers())  # type: ignore[no-untyped-call, unused-ignore]  # strict only: cvxpy leaves it unannotated
    return tuple(s for s in SOLVERS if s in have)


INFO = BackendInfo(
    name="cvxpy", module="cvxpy", description="cvxpy Problem; any installed cvxpy solver",
    solvers=SOLVERS, default_solver={"LP": "CLARABEL", "QP": "CLARABEL", "smooth": "CLARABEL",
                                    "MILP": "HIGHS"},
    time_limit_key=_TIME_LIMIT_KEY, time_limit_classes=("LP", "QP", "MILP"),
    iteration_limit_key={"CLARABEL": "max_iter", "SCS": "max_iters", "OSQP": "max_iter",
                         "ECOS": "max_iters", "HIGHS": "simplex_iteration_limit", "PIQP": "max_iter",
                         "QOCO": "max_iters", "DAQP": "iter_limit", "SCIPY": "scipy_options.maxiter"},
    mip_gap_key={"HIGHS": "mip_rel_gap"},
    tolerances={"CLARABEL": {"LP": TIGHT["CLARABEL"], "QP": TIGHT["CLARABEL"],
                             "smooth": SMOOTH_TIGHT["CLARABEL"]}},
    # first-order methods at cvxpy's default tolerances; ECOS reaches about 2e-5 on QPs (their
    # second-order-cone form), so it is not counted among the exact solvers
    accuracy={"SCS": 1e-4, "OSQP": 1e-4, "PDLP": 1e-4, "ECOS": 1e-4},
    status_map=STATUS_MAP, probe=_installed, check_options=check_options, duals=tuple(SOLVERS),
    warm_start=("OSQP", "SCS"), form="cvxpy", active_set_qp=("HIGHS",),
    qp_iteration_limit_key="qp_iteration_limit",
    tolerance_keys={"CLARABEL": ("tol_gap_abs", "tol_gap_rel", "tol_feas")})


def build_cvxpy(canon: Canonical, user_sense: bool = False) -> tuple[
        cp.Problem, dict[str, cp.Variable], dict[str, dict[str, cp.Constraint]],
        dict[str, dict[str, np.ndarray]]]:
    """Build ``(problem, variables, constraints, rows)`` from a canonical program.

    ``constraints[name]`` is a dict ``{"eq"|"ge"|"le": cvxpy constraint}`` and
    ``rows[name][kind]`` the row indices (within the block) each object covers. Variable
    bounds live under ``constraints["<var>__bounds"]``.
    """
    import cvxpy as cp
    mask = canon.integer_mask()
    integer = {v: bool(mask[s].any()) for v, s in canon.var_slices.items()}
    variables = {v: cp.Variable(s.stop - s.start, name=v, integer=integer[v])
                 for v, s in canon.var_slices.items()}
    A = canon.A.tocsr()
    constraints: dict[str, dict[str, cp.Constraint]] = {}
    rows: dict[str, dict[str, np.ndarray]] = {}

    def add(name: str, expr_rows: Callable[..., cp.Expression], idx: np.ndarray | None,
            lo: np.ndarray, hi: np.ndarray) -> None:
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

        def expr_rows(sel: np.ndarray, block: sp.csr_matrix = block) -> cp.Expression:
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
    goal: cp.Minimize | cp.Maximize
    if user_sense and canon.sense < 0:
        goal = cp.Maximize(objective)
    else:
        goal = cp.Minimize(objective)
    flat = [c for parts in constraints.values() for c in parts.values()]
    return cp.Problem(goal, flat), variables, constraints, rows


class CvxpyModel(CompiledModel):
    backend = "cvxpy"
    info = INFO

    def _build(self) -> None:
        self.problem, self.variables, self.cons, self.rows = build_cvxpy(self.canon)

    def _solve(self, cp: ModuleType, solver: str, kwargs: Mapping[str, Any]) -> str:
        with warnings.catch_warnings():
            if not self.spec.verbose:  # the status says it: "inaccurate" is not optimal
                warnings.simplefilter("ignore", UserWarning)
            # cvxpy leaves Problem.solve unannotated (flagged by mypy --strict only)
            self.problem.solve(solver=solver, verbose=self.spec.verbose, **kwargs)  # type: ignore[no-untyped-call, unused-ignore]
        return self.problem.status

    def _run(self) -> RawResult:
        import cvxpy as cp
        solver = self.spec.solver
        assert solver is not None  # check_spec filled it in
        kwargs = {**self.qp_iteration_cap(), **self.spec.options}
        key = _TIME_LIMIT_KEY.get(solver, "time_limit")
        if self.spec.time_limit is not None and key:
            if "." in key:  # nested: SCIPY takes linprog options in one dict
                outer, inner = key.split(".")
                kwargs[outer] = {**kwargs.get(outer, {}), inner: float(self.spec.time_limit)}
            else:
                kwargs.setdefault(key, float(self.spec.time_limit))
        tight = {k: v for k, v in INFO.tolerance_options(solver, self.canon.problem_class).items()
                 if k not in kwargs}
        try:
            st = self._solve(cp, solver, {**kwargs, **tight})
            if tight and st == "optimal_inaccurate":  # the tight tolerances were out of reach
                st = self._solve(cp, solver, kwargs)
        except cp.error.SolverError as exc:
            return RawResult(Status.ERROR, log=f"cvxpy/{solver}: {exc}")
        except TypeError as exc:  # an option the inner solver does not take
            raise ConfigError(f"cvxpy:{solver} refused the options {sorted(kwargs)}: {exc}") from None
        status = INFO.map_status(st)
        # cvxpy says "user_limit" for any solver limit: a time limit only if one was set and
        # the solve took about that long
        if status is Status.TIME_LIMIT:
            took = getattr(self.problem.solver_stats, "solve_time", None) or 0.0
            if self.spec.time_limit is None or took < 0.9 * float(self.spec.time_limit):
                status = Status.ITERATION_LIMIT
        stats = self.problem.solver_stats
        iters = getattr(stats, "num_iters", None)
        log = f"cvxpy/{solver} status: {st}"
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT):
            return RawResult(status, iterations=iters, log=log)
        c = self.canon
        # a block in no row and no objective term is not part of the cvxpy problem: no value
        x = np.concatenate([np.full(s.stop - s.start, np.nan) if self.variables[v].value is None
                            else np.asarray(self.variables[v].value, dtype=float).reshape(-1)
                            for v, s in c.var_slices.items()]) if c.n else np.zeros(0)
        if c.is_mip:  # a MIP has no duals
            return RawResult(status, x, None, None, iters, log)
        y, z = np.zeros(c.m), np.zeros(c.n)
        for name, parts in self.cons.items():
            if name.endswith("__bounds") and name[:-8] in c.var_slices:
                target, offset = z, c.var_slices[name[:-8]].start
            else:
                target, offset = y, c.con_slices[name].start
            for kind, con in parts.items():
                if con.dual_value is None:
                    continue
                d = np.asarray(con.dual_value, dtype=float).reshape(-1)
                target[offset + self.rows[name][kind]] += d if kind == "ge" else -d
        return RawResult(status, x, y, z, iters, log)


def compile(program: Any, spec: SolverSpec) -> CvxpyModel:
    return CvxpyModel(program, spec)


# ------------------------------------------------------------------------------ smooth problems
def _smooth_options(solver: str, max_iter: int, tol: float) -> dict[str, Any]:
    if solver == "CLARABEL":
        return {**INFO.tolerance_options(solver, "smooth"), "max_iter": max(max_iter, 200)}
    if solver == "SCS":   # residuals a decade under the optimality target, within reach
        eps = max(0.1 * float(tol), SCS_EPS_FLOOR)
        return {"eps_abs": eps, "eps_rel": eps, "max_iters": max(max_iter, SCS_MAX_ITERS)}
    return {}


def solve_smooth(problem: SmoothOracle, spec: SolverSpec, x0: np.ndarray, tol: float, max_iter: int,
                 deadline: float | None) -> NativeResult:
    """Solve the problem's cvxpy form (:meth:`~fairopt.modeling.smooth.SmoothProblem.to_cvxpy`);
    constraint duals are reported as ``-(cvxpy multiplier)``."""
    import cvxpy as cp

    solver = spec.solver
    assert solver is not None  # check_spec filled it in
    form = problem.to_cvxpy()
    opts = {**_smooth_options(solver, max_iter, tol), **dict(spec.options)}
    try:
        with warnings.catch_warnings():
            # "solution may be inaccurate" at the tight tolerances: the status says so
            warnings.simplefilter("ignore", UserWarning)
            form.problem.solve(solver=solver, verbose=spec.verbose, **opts)
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy/{solver} failed on the {problem.description}: {exc}",
                          status="error") from exc
    st = form.problem.status
    status = {cp.OPTIMAL: Status.OPTIMAL, cp.OPTIMAL_INACCURATE: Status.NUMERICAL,
              cp.INFEASIBLE: Status.INFEASIBLE, cp.UNBOUNDED: Status.UNBOUNDED,
              cp.USER_LIMIT: Status.ITERATION_LIMIT}.get(st, Status.ERROR)
    values = {k: v.value for k, v in form.variables.items()}
    if any(v is None for v in values.values()):
        raise SolverError(f"cvxpy/{solver} returned status {st!r} on the {problem.description}.",
                          status=str(status))
    primal = {k: np.asarray(v, dtype=float).reshape(np.shape(form.variables[k])) for k, v in values.items()}
    dual = {k: -np.asarray(c.dual_value, dtype=float) for k, c in form.constraints.items()
            if c.dual_value is not None}
    iters = int(getattr(form.problem.solver_stats, "num_iters", 0) or 0)
    return NativeResult(None, iters, status, f"cvxpy/{solver} status: {st}", solver, primal, dual,
                        float(form.problem.value))
