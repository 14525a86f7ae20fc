"""scipy.optimize: ``linprog`` for LPs, ``minimize`` for smooth problems.

Rows are split into equalities, ``<=`` rows (finite upper bounds) and ``>=`` rows (finite lower
bounds, negated). linprog's marginals are ``d f*/d b_ub`` and ``d f*/d b_eq``, so a negated
``>=`` row contributes ``-marginal`` to fairopt's dual.

Smooth problems run :func:`scipy.optimize.minimize` on the problem's oracle with the exact
gradient (and Hessian for the trust-region methods), keeping the best certified iterate.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError
from fairopt.modeling.backends.base import CompiledModel, SmoothOracle
from fairopt.modeling.solution import NativeResult, RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: linprog's ``res.status`` to fairopt's status
_STATUS = {0: Status.OPTIMAL, 1: Status.ITERATION_LIMIT, 2: Status.INFEASIBLE,
           3: Status.UNBOUNDED, 4: Status.NUMERICAL}
LP_METHODS = ("highs", "highs-ds", "highs-ipm")
#: :func:`scipy.optimize.minimize` methods for smooth problems; the first three need a Hessian
SMOOTH_METHODS = ("trust-exact", "trust-krylov", "Newton-CG", "L-BFGS-B", "BFGS")
HESSIAN_METHODS = SMOOTH_METHODS[:3]


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    if solver not in LP_METHODS:
        return  # smooth methods: scipy.optimize.minimize reports unknown options itself
    import inspect

    from scipy.optimize._linprog_highs import _linprog_highs
    valid = [p for p in inspect.signature(_linprog_highs).parameters
             if p not in ("lp", "solver", "unknown_options")]
    reject_unknown_options(f"scipy linprog ({solver})", options, valid)
    # linprog hands options to HiGHS's typed setters, whose wrong-type error is a raw pybind11 TypeError
    kinds = {"presolve": bool, "disp": bool, "maxiter": int, "mip_max_nodes": int,
             "simplex_dual_edge_weight_strategy": str}
    for key, value in options.items():
        want = kinds.get(key, float)
        if value is None:
            continue
        if want is bool:
            ok = isinstance(value, (bool, np.bool_))
        elif want is int:
            ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        elif want is str:
            ok = isinstance(value, str)
        else:
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        if not ok:
            kind = {bool: "True or False", int: "an integer", str: "a string"}.get(want, "a number")
            raise ConfigError(f"scipy linprog ({solver}) option {key!r} must be {kind}, got {value!r} "
                              f"({type(value).__name__}).")


INFO = BackendInfo(
    name="scipy", module="scipy",
    description="scipy.optimize: linprog (HiGHS methods) for LPs, minimize (trust-region, Newton-CG, "
                "L-BFGS-B, BFGS) for smooth problems",
    solvers={**{m: ("LP",) for m in LP_METHODS}, **{m: ("smooth",) for m in SMOOTH_METHODS}},
    default_solver={"LP": "highs", "smooth": "trust-exact"},
    time_limit_key={m: "time_limit" for m in LP_METHODS + SMOOTH_METHODS},
    iteration_limit_key={**{m: "maxiter" for m in LP_METHODS}, **{m: "maxiter" for m in SMOOTH_METHODS}},
    status_map=_STATUS, check_options=check_options, duals=LP_METHODS,
    choose_solver=lambda problem, kind: smooth_solver(problem) if kind == "smooth" else None)


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
        status = INFO.map_status(res.status)
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


def compile(program: Any, spec: SolverSpec) -> ScipyModel:
    return ScipyModel(program, spec)


def minimize(problem: SmoothOracle, x0: ArrayLike, method: str, tol: float, max_iter: int,
             options: Mapping[str, Any] | None, deadline: float | None) -> NativeResult:
    """:func:`scipy.optimize.minimize` on a smooth problem's oracle; keeps the best certified
    iterate it has seen and stops at ``deadline`` (``time.perf_counter()`` seconds).

    Examples
    --------
    >>> import numpy as np
    >>> class Bowl:
    ...     dim, has_hessian = 2, False
    ...     def value_grad(self, x): return float(x @ x), 2 * x
    ...     def optimality(self, x, g): return float(np.abs(g).max())
    >>> minimize(Bowl(), np.ones(2), "L-BFGS-B", 1e-8, 100, None, None).status.value
    'optimal'
    """
    from scipy.optimize import minimize as scipy_minimize

    canon = {m.lower(): m for m in SMOOTH_METHODS}
    if method.lower() not in canon:
        raise ConfigError(f"scipy method {method!r} is not supported; choose one of {SMOOTH_METHODS}.")
    method = canon[method.lower()]
    if method in HESSIAN_METHODS and not problem.has_hessian:
        raise ConfigError(f"scipy method {method!r} needs a Hessian, which the "
                          f"{problem.description} does not provide; use 'L-BFGS-B' or 'BFGS'.")
    opts: dict[str, Any] = {"maxiter": max_iter, "gtol": tol * 0.1}
    if method == "L-BFGS-B":
        opts.update(ftol=1e-15, maxcor=30, maxiter=max(max_iter, 2000))
    opts.update(options or {})
    best = {"x": np.asarray(x0, float).copy(), "viol": np.inf}

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        # trust-region subproblem solvers can propose non-finite points near convergence:
        # reject them (value +inf) and remember the best certified iterate seen
        if not np.all(np.isfinite(x)):
            return np.inf, np.zeros_like(x)
        v, g = problem.value_grad(x)
        viol = problem.optimality(x, g)
        if viol < best["viol"]:
            best.update(x=np.array(x, dtype=float), viol=viol)
        return v, g

    def hess(x: np.ndarray) -> np.ndarray:
        return problem.hessian(x) if np.all(np.isfinite(x)) else np.eye(problem.dim)

    timed_out = []

    def stop_at_deadline(intermediate_result: object) -> None:
        # scipy ends the run when the callback raises StopIteration (checked once per iteration)
        if deadline is not None and time.perf_counter() >= deadline:  # only installed with a deadline
            timed_out.append(True)
            raise StopIteration

    kw: dict[str, Any] = {"hess": hess} if method in HESSIAN_METHODS else {}
    if deadline is not None:
        kw["callback"] = stop_at_deadline
    with np.errstate(invalid="ignore", over="ignore"):
        res = scipy_minimize(fun, np.asarray(x0, float), jac=True, method=method, options=opts, **kw)
    x = np.asarray(res.x, float)
    if not np.all(np.isfinite(x)) or problem.optimality(x, problem.value_grad(x)[1]) > best["viol"]:
        x = best["x"]
    nit = int(getattr(res, "nit", 0) or 0)
    if timed_out:
        status = Status.TIME_LIMIT
    elif res.success:
        status = Status.OPTIMAL
    elif nit >= opts["maxiter"] or "iteration" in str(res.message).lower():
        status = Status.ITERATION_LIMIT
    else:
        status = Status.NUMERICAL
    return NativeResult(x, nit, status, str(res), method)


def smooth_solver(problem: SmoothOracle) -> str:
    """Default method for ``problem``: ``trust-exact`` with a Hessian, else ``L-BFGS-B``."""
    return "trust-exact" if problem.has_hessian else "L-BFGS-B"


def solve_smooth(problem: SmoothOracle, spec: SolverSpec, x0: np.ndarray, tol: float, max_iter: int,
                 deadline: float | None) -> NativeResult:
    """Minimise a smooth problem with the method ``spec.solver`` (options go to scipy)."""
    assert spec.solver is not None  # check_spec filled it in
    return minimize(problem, x0, spec.solver, tol, max_iter, spec.options, deadline)
