"""Smooth convex problems: one oracle protocol and one :func:`solve_smooth`.

A smooth problem is ``min_x f(x)`` over a flat vector ``x`` made of named blocks, given by an
oracle (value and gradient; optionally the Hessian) and, where the model has one, a declarative
form for cvxpy and for pyomo. The max-entropy dual, the fair robust log-loss model and the KL
mapping all implement :class:`SmoothProblem`; :func:`solve_smooth` runs any of them on

``native``  the problem's own algorithm when it defines :meth:`SmoothProblem.native_solve`
            (e.g. L-BFGS with an exact inner step), else damped Newton with Armijo backtracking
            when it has a Hessian, else L-BFGS;
``scipy``   :func:`scipy.optimize.minimize` with the exact gradient (and Hessian for the
            trust-region methods): ``trust-exact`` (default with a Hessian), ``trust-krylov``,
            ``Newton-CG``, ``L-BFGS-B`` (default without one), ``BFGS``;
``cvxpy``   :meth:`SmoothProblem.to_cvxpy`: Clarabel by default (tight tolerances), or SCS with
            residual tolerance ``max(tol / 10, 1e-9)`` (the log reports the achieved accuracy);
``pyomo``   :meth:`SmoothProblem.to_pyomo`, solved by Ipopt only when it is installed, otherwise
            :class:`~fairopt.errors.SolverNotAvailableError` (the model still builds).

Every run ends in a :class:`SmoothSolution` with an honest :class:`~fairopt.modeling.Status`:
when the problem's optimality measure is a certificate (an unconstrained convex problem's
gradient norm), ``OPTIMAL`` means exactly "measure ≤ tol", whatever the back end said; otherwise
the back end's status is mapped. A time or iteration limit is never reported as optimal.
"""
from __future__ import annotations

import abc
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import scipy.linalg as sla

from fairopt.errors import ConfigError, SolverError, SolverNotAvailableError
from fairopt.modeling.registry import SolverSpec
from fairopt.modeling.solution import Solution, Status

#: back ends that take smooth problems
SMOOTH_BACKENDS = ("native", "scipy", "cvxpy", "pyomo")
SCIPY_METHODS = ("trust-exact", "trust-krylov", "Newton-CG", "L-BFGS-B", "BFGS")
_HESSIAN_METHODS = ("trust-exact", "trust-krylov", "Newton-CG")
#: how to bound the run time of inner solvers that do not take ``time_limit`` here
_OWN_LIMITS = {"cvxpy": "CLARABEL: time_limit, SCS: time_limit_secs", "pyomo": "ipopt: max_cpu_time"}


@dataclass
class CvxpyForm:
    """A problem as cvxpy objects.

    ``variables[name]`` are the blocks to report in ``Solution.primal`` (names matching
    :attr:`SmoothProblem.blocks` give the oracle's ``x``). ``constraints[name]`` are reported in
    ``Solution.dual`` as ``-(cvxpy multiplier)``, i.e. ``d f*/d rhs`` for a constraint written
    ``lhs <= rhs`` or ``lhs == rhs`` (fairopt's one dual convention).
    """

    problem: Any
    variables: dict
    constraints: dict = field(default_factory=dict)


@dataclass
class PyomoForm:
    """A problem as a pyomo ``ConcreteModel`` with named indexed variables and constraints.

    Duals are read through an ``IMPORT`` suffix named ``dual`` when the model declares one.
    """

    model: Any
    variables: dict
    constraints: dict = field(default_factory=dict)


@dataclass
class NativeResult:
    """What a native algorithm returns: its last iterate and why it stopped."""

    x: np.ndarray
    iterations: int
    status: Status            # OPTIMAL (own test passed), TIME_LIMIT, ITERATION_LIMIT, NUMERICAL
    log: str = ""
    solver: str = "native"
    primal: dict = field(default_factory=dict)   # extra named values (e.g. multipliers)
    dual: dict = field(default_factory=dict)


class SmoothProblem(abc.ABC):
    """The oracle protocol of a smooth convex problem ``min_x f(x)``.

    Subclasses set :attr:`blocks` and implement :meth:`value_grad`; everything else is optional.

    Attributes
    ----------
    name : str
        Program name reported in the solution.
    description : str
        Words for messages ("max-entropy dual").
    family : str
        Adjective for the problem's back ends in messages ("max-entropy").
    blocks : dict of str to slice
        Named pieces of the flat variable ``x``.
    has_hessian : bool
        Whether :meth:`hessian` is implemented.
    certifies : bool
        Whether ``optimality(x) <= tol`` proves optimality (true for an unconstrained,
        differentiable convex ``f``; false at kinks or with constraints the oracle does not see).
    """

    name = "smooth"
    description = "smooth convex problem"
    family = "smooth"
    blocks: dict = {}
    has_hessian = False
    certifies = True

    @property
    def dim(self) -> int:
        return max((s.stop for s in self.blocks.values()), default=0)

    def initial_point(self) -> np.ndarray:
        return np.zeros(self.dim)

    @abc.abstractmethod
    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f(x), ∇f(x))``."""

    def value(self, x: np.ndarray) -> float:
        return self.value_grad(x)[0]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """``∇²f(x)``; only called when :attr:`has_hessian` is true (the solvers check it)."""
        raise ConfigError(f"the {self.description} has no Hessian oracle; use a first-order method "
                          "(native L-BFGS, scipy:L-BFGS-B) or set has_hessian and define hessian().")

    def optimality(self, x: np.ndarray, grad: np.ndarray) -> float:
        """Optimality measure (default ``‖∇f‖∞``); compared with ``tol``."""
        return float(np.max(np.abs(grad))) if grad.size else 0.0

    def check_iterate(self, x: np.ndarray, log: str) -> None:
        """Called after each native step; raise (e.g. :class:`InfeasibleError`) to stop."""

    def stall_error(self, violation: float, log: str) -> Exception:
        """The error to raise when the native line search cannot make progress."""
        return SolverError(f"line search stalled on the {self.description} at optimality "
                           f"measure {violation:.3e}.", status="numerical", log=log)

    def split(self, x: np.ndarray) -> dict:
        """``x`` as named blocks."""
        return {k: np.array(x[s], dtype=float) for k, s in self.blocks.items()}

    # optional hooks ---------------------------------------------------------------------------
    native_solve: Callable | None = None
    """``native_solve(x0, tol, max_iter, deadline) -> NativeResult``: the problem's own
    algorithm, used by the ``native`` back end when set."""

    def to_cvxpy(self) -> CvxpyForm:
        raise ConfigError(f"the {self.description} has no cvxpy form; use backend 'native' or 'scipy'.")

    def to_pyomo(self) -> PyomoForm:
        raise ConfigError(f"the {self.description} has no pyomo form; use backend 'native' or 'scipy'.")


@dataclass
class SmoothSolution(Solution):
    """A :class:`~fairopt.modeling.Solution` of a smooth problem.

    ``x`` is the oracle's flat variable at the returned point and ``optimality`` the problem's
    optimality measure there (``‖∇f‖∞`` by default).
    """

    x: np.ndarray | None = field(default=None, repr=False)
    optimality: float = float("nan")


# ---------------------------------------------------------------------------- settings
def check_settings(problem: SmoothProblem, spec: SolverSpec) -> None:
    """Refuse settings a back end would otherwise ignore silently."""
    if spec.backend not in SMOOTH_BACKENDS:
        raise ConfigError(
            f"back end {spec.backend!r} does not take the {problem.description} (a smooth convex "
            f"problem); choose one of {list(SMOOTH_BACKENDS)} (e.g. 'native', 'scipy:trust-exact', "
            "'cvxpy:CLARABEL', 'pyomo:ipopt').")
    if spec.backend == "native" and spec.options:
        raise ConfigError(
            f"the native {problem.family} back end takes no solver options (got "
            f"{sorted(spec.options)}); set tol and max_iter instead, or choose backend 'scipy', "
            "'cvxpy' or 'pyomo', whose options are passed to the solver.")
    if spec.time_limit is not None and spec.backend in _OWN_LIMITS:
        raise ConfigError(
            f"time_limit is not supported by the {spec.backend} back end of the "
            f"{problem.description}; pass the inner solver's own limit in the solver options "
            f"({_OWN_LIMITS[spec.backend]}) or use backend 'native' or 'scipy', which honour "
            "time_limit.")


def _deadline(spec: SolverSpec) -> float | None:
    return None if spec.time_limit is None else time.perf_counter() + float(spec.time_limit)


# ---------------------------------------------------------------------------- native
def newton(problem: SmoothProblem, x0: np.ndarray, tol: float, max_iter: int,
           deadline: float | None = None) -> NativeResult:
    """Damped Newton: Cholesky of ``H (+ μI)``, Armijo backtracking on ``f``, stop at
    ``optimality ≤ tol``.

    BLAS is limited to one thread: the systems are small (``d`` in the hundreds), and threaded
    BLAS on a busy machine costs far more in contention than it gains.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return _newton(problem, x0, tol, max_iter, deadline)
    with threadpool_limits(limits=1, user_api="blas"):
        return _newton(problem, x0, tol, max_iter, deadline)


def _newton(problem: SmoothProblem, x0, tol: float, max_iter: int, deadline) -> NativeResult:
    d = problem.dim
    x = np.asarray(x0, dtype=float).copy()
    lines: list[str] = []
    f, g = problem.value_grad(x)
    for it in range(max_iter + 1):
        viol = problem.optimality(x, g)
        lines.append(f"iter {it:3d}  f={f:.15e}  optimality={viol:.3e}")
        if viol <= tol:
            return NativeResult(x, it, Status.OPTIMAL, "\n".join(lines), "newton")
        if it == max_iter or d == 0:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            lines.append(f"time limit reached after {it} iterations")
            return NativeResult(x, it, Status.TIME_LIMIT, "\n".join(lines), "newton")
        H = problem.hessian(x)
        mu, step = 0.0, None
        scale = max(np.trace(H) / d, 1e-300)
        for _ in range(40):
            try:
                c = sla.cho_factor(H + mu * np.eye(d), lower=True, check_finite=False)
                step = -sla.cho_solve(c, g, check_finite=False)
                if np.all(np.isfinite(step)):
                    break
            except np.linalg.LinAlgError:
                pass
            mu = 1e-12 * scale if mu == 0 else mu * 10
        if step is None:
            raise SolverError("Newton system could not be factorised.", status="numerical",
                              log="\n".join(lines))
        nu2 = -float(g @ step)
        t = 1.0
        if nu2 >= 1e-12:
            while t >= 1e-10:
                f_new, g_new = problem.value_grad(x + t * step)
                if f_new <= f - 1e-4 * t * nu2:
                    break
                t *= 0.5
            if t < 1e-10:
                # rounding floor: accept the full step only if it still shrinks the violation
                f_new, g_new = problem.value_grad(x + step)
                if problem.optimality(x + step, g_new) < viol:
                    t = 1.0
                else:
                    raise problem.stall_error(viol, "\n".join(lines))
        else:
            f_new, g_new = problem.value_grad(x + step)
        x = x + t * step
        f, g = f_new, g_new
        problem.check_iterate(x, "\n".join(lines))
    return NativeResult(x, max_iter, Status.ITERATION_LIMIT, "\n".join(lines), "newton")


def _scipy_minimize(problem: SmoothProblem, x0, method: str, tol: float, max_iter: int,
                    options: Mapping | None, deadline: float | None) -> NativeResult:
    """``scipy.optimize.minimize``; keeps the best certified iterate it has seen."""
    from scipy.optimize import minimize

    canon = {m.lower(): m for m in SCIPY_METHODS}
    if method.lower() not in canon:
        raise ConfigError(f"scipy method {method!r} is not supported; choose one of {SCIPY_METHODS}.")
    method = canon[method.lower()]
    if method in _HESSIAN_METHODS and not problem.has_hessian:
        raise ConfigError(f"scipy method {method!r} needs a Hessian, which the "
                          f"{problem.description} does not provide; use 'L-BFGS-B' or 'BFGS'.")
    opts: dict = {"maxiter": max_iter, "gtol": tol * 0.1}
    if method == "L-BFGS-B":
        opts.update(ftol=1e-15, maxcor=30, maxiter=max(max_iter, 2000))
    opts.update(options or {})
    best = {"x": np.asarray(x0, float).copy(), "viol": np.inf}

    def fun(x):
        # trust-region subproblem solvers can propose non-finite points near convergence:
        # reject them (value +inf) and remember the best certified iterate seen
        if not np.all(np.isfinite(x)):
            return np.inf, np.zeros_like(x)
        v, g = problem.value_grad(x)
        viol = problem.optimality(x, g)
        if viol < best["viol"]:
            best.update(x=np.array(x, dtype=float), viol=viol)
        return v, g

    def hess(x):
        return problem.hessian(x) if np.all(np.isfinite(x)) else np.eye(problem.dim)

    timed_out = []

    def stop_at_deadline(intermediate_result):
        # scipy ends the run when the callback raises StopIteration (checked once per iteration)
        if time.perf_counter() >= deadline:
            timed_out.append(True)
            raise StopIteration

    kw: dict = {"hess": hess} if method in _HESSIAN_METHODS else {}
    if deadline is not None:
        kw["callback"] = stop_at_deadline
    with np.errstate(invalid="ignore", over="ignore"):
        res = minimize(fun, np.asarray(x0, float), jac=True, method=method, options=opts, **kw)
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


def lbfgs(problem: SmoothProblem, x0, tol: float, max_iter: int,
          deadline: float | None = None, maxcor: int = 30) -> NativeResult:
    """L-BFGS (scipy's L-BFGS-B without bounds) stopping at ``‖∇f‖∞ ≤ tol``."""
    return _scipy_minimize(problem, x0, "L-BFGS-B", tol, max_iter,
                           {"maxiter": max_iter, "maxcor": maxcor, "maxfun": 20 * max_iter + 100},
                           deadline)


# ---------------------------------------------------------------------------- cvxpy, pyomo
#: SCS tolerance floor and iteration cap: a first-order method meets ~1e-9 residuals at best,
#: and 1e-10 with 200,000 iterations made it run for minutes on large domains without getting there
SCS_EPS_FLOOR, SCS_MAX_ITERS = 1e-9, 50_000


def _cvxpy_options(solver: str, max_iter: int, tol: float = 1e-8) -> dict:
    if solver == "CLARABEL":
        return {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                "tol_ktratio": 1e-10, "max_iter": max(max_iter, 200)}
    if solver == "SCS":   # residuals a decade under the optimality target, within reach
        eps = max(0.1 * float(tol), SCS_EPS_FLOOR)
        return {"eps_abs": eps, "eps_rel": eps, "max_iters": max(max_iter, SCS_MAX_ITERS)}
    return {}


def _solve_cvxpy(problem: SmoothProblem, spec: SolverSpec, max_iter: int, tol: float = 1e-8) -> tuple:
    import cvxpy as cp

    solver = (spec.solver or "CLARABEL").upper()
    if solver not in cp.installed_solvers():
        raise SolverNotAvailableError(f"cvxpy solver {solver!r} is not installed.",
                                      available=[f"cvxpy:{s}" for s in cp.installed_solvers()
                                                 if s in ("CLARABEL", "SCS", "ECOS", "MOSEK")])
    form = problem.to_cvxpy()
    opts = {**_cvxpy_options(solver, max_iter, tol), **dict(spec.options)}
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
    return primal, dual, status, iters, f"cvxpy/{solver} status: {st}", solver, float(form.problem.value)


def _solve_pyomo(problem: SmoothProblem, spec: SolverSpec, tol: float, max_iter: int) -> tuple:
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    name = spec.solver or "ipopt"
    form = problem.to_pyomo()
    opt = pyo.SolverFactory(name)
    if not opt.available(exception_flag=False):
        alternatives = ["native", "scipy"]
        if type(problem).to_cvxpy is not SmoothProblem.to_cvxpy:
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
    return (primal, dual, status, 0, f"pyomo/{name} termination: {tc}\n{res}", name,
            float(pyo.value(objective)))


# ---------------------------------------------------------------------------- solve_smooth
def solve_smooth(problem: SmoothProblem, spec=None, *, tol: float = 1e-8, max_iter: int = 100,
                 options: Mapping | None = None, x0=None) -> SmoothSolution:
    """Minimise a :class:`SmoothProblem` on the back end named by ``spec``.

    Parameters
    ----------
    problem : SmoothProblem
    spec : str, mapping or SolverSpec, default "native"
        ``"native"``, ``"scipy[:method]"``, ``"cvxpy[:CLARABEL|SCS]"`` or ``"pyomo[:ipopt]"``.
        ``time_limit`` is honoured by native and scipy and refused by cvxpy and pyomo (pass the
        inner solver's own limit in ``options``); native takes no ``options``.
    tol : float
        Target of the problem's optimality measure (native and scipy stop there; Ipopt gets
        ``tol / 100``).
    max_iter : int
        Iteration limit.
    options : mapping, optional
        Merged over ``spec.options``.
    x0 : array, optional
        Starting point of native and scipy (default ``problem.initial_point()``).

    Returns
    -------
    SmoothSolution
        ``primal`` holds the problem's blocks (plus the extra variables of the cvxpy/pyomo
        form), ``dual`` the named constraint multipliers the back end reports.

    Raises
    ------
    ConfigError
        Back end or settings the problem cannot use.
    SolverNotAvailableError
        The back end or inner solver is not installed (e.g. pyomo without Ipopt).
    SolverError
        The solver failed without a point, or produced a non-finite one.
    """
    spec = SolverSpec.parse(spec, default="native")
    if options:
        spec = SolverSpec(spec.backend, spec.solver, {**spec.options, **dict(options)},
                          spec.time_limit, spec.verbose)
    check_settings(problem, spec)
    t0 = time.perf_counter()
    start = problem.initial_point() if x0 is None else np.asarray(x0, dtype=float)
    primal: dict = {}
    dual: dict = {}
    f = None          # the back end's own objective value (cvxpy, pyomo)
    if spec.backend in ("native", "scipy"):
        deadline = _deadline(spec)
        if spec.backend == "scipy":
            method = spec.solver or ("trust-exact" if problem.has_hessian else "L-BFGS-B")
            res = _scipy_minimize(problem, start, method, tol, max_iter, spec.options, deadline)
        elif problem.native_solve is not None:
            res = problem.native_solve(start, tol, max_iter, deadline)
        elif problem.has_hessian:
            res = newton(problem, start, tol, max_iter, deadline)
        else:
            res = lbfgs(problem, start, tol, max_iter, deadline)
        x, hint, iters, log, solver = res.x, res.status, res.iterations, res.log, res.solver
        primal.update(res.primal)
        dual.update(res.dual)
    else:
        solve = _solve_cvxpy if spec.backend == "cvxpy" else _solve_pyomo
        args = (max_iter, tol) if spec.backend == "cvxpy" else (tol, max_iter)
        primal, dual, hint, iters, log, solver, f = solve(problem, spec, *args)
        x = np.zeros(problem.dim)
        for k, s in problem.blocks.items():
            if k in primal:
                x[s] = primal[k].reshape(-1)
    seconds = time.perf_counter() - t0
    viol = float("nan")
    if problem.certifies or f is None:
        f, g = problem.value_grad(x)
        viol = problem.optimality(x, g)
    if not (np.isfinite(f) and (np.isfinite(viol) or not problem.certifies)):
        raise SolverError(f"{spec.backend} produced a non-finite point of the {problem.description}.",
                          status="numerical", log=log)
    if problem.certifies:
        # an unconstrained convex problem: a small optimality measure certifies the point
        # whatever the back end's own status says, and nothing else does
        if viol <= tol:
            status = Status.OPTIMAL
        elif hint in (Status.TIME_LIMIT, Status.ITERATION_LIMIT):
            status = hint
        else:
            status = Status.NUMERICAL
    else:
        status = hint
    # the achieved accuracy, whatever the back end's own tolerances meant
    log = f"{log}\nachieved optimality measure {viol:.3e} (target {tol:.1e})" if log else \
        f"achieved optimality measure {viol:.3e} (target {tol:.1e})"
    primal = {**problem.split(x), **{k: v for k, v in primal.items() if k not in problem.blocks}}
    return SmoothSolution(status=status, objective=float(f), primal=primal, dual=dual,
                          backend=spec.backend, solver=solver or spec.backend,
                          solve_seconds=seconds, iterations=iters, log=log, program=problem.name,
                          x=x, optimality=viol)
