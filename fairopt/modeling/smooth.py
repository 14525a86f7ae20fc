"""Smooth convex problems: one oracle protocol and one :func:`solve_smooth`.

A smooth problem is ``min_x f(x)`` over a flat vector ``x`` made of named blocks, given by an
oracle (value and gradient; optionally the Hessian) and, where the model has one, a declarative
form for cvxpy and for pyomo. The max-entropy dual, the fair robust log-loss model and the KL
mapping all implement :class:`SmoothProblem`. :func:`solve_smooth` resolves the spec through
:func:`fairopt.modeling.registry.check_spec` (problem class ``"smooth"``) like every other
problem, then hands the problem to the back end's ``solve_smooth``:

* ``native``: the problem's own algorithm, :meth:`SmoothProblem.native_solve` (by default
  damped Newton with Armijo backtracking when it has a Hessian, else L-BFGS);
* ``scipy``: :func:`scipy.optimize.minimize` with the exact gradient (and Hessian for the
  trust-region methods);
* ``cvxpy``: :meth:`SmoothProblem.to_cvxpy` (Clarabel by default, tight tolerances, or SCS);
* ``pyomo``: :meth:`SmoothProblem.to_pyomo`, solved by Ipopt when it is installed.

Every run ends in a :class:`SmoothSolution` with an honest :class:`~fairopt.modeling.Status`:
when the problem's optimality measure is a certificate (an unconstrained convex problem's
gradient norm), ``OPTIMAL`` means exactly "measure ≤ tol", whatever the back end said; otherwise
the back end's status is mapped. A time or iteration limit is never reported as optimal.
"""
from __future__ import annotations

import abc
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla

from fairopt._docstrings import fill_doc, register
from fairopt.errors import ConfigError, SolverError, WrongProblemClassError
from fairopt.modeling.backends.scipy_backend import minimize
from fairopt.modeling.registry import (
    BACKENDS,
    SolverSpec,
    backend_info,
    backend_installed,
    check_spec,
    default_spec,
    installed_specs,
    load_backend,
)
from fairopt.modeling.solution import NativeResult, Solution, Status

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["CvxpyForm", "NativeResult", "PyomoForm", "SmoothProblem", "SmoothSolution", "lbfgs", "lbfgs_on",
           "newton", "solve_smooth"]


@dataclass
class CvxpyForm:
    """A problem as cvxpy objects.

    ``variables[name]`` are the blocks to report in ``Solution.primal`` (names matching
    :attr:`SmoothProblem.blocks` give the oracle's ``x``). ``constraints[name]`` are reported in
    ``Solution.dual`` as ``-(cvxpy multiplier)``, i.e. ``d f*/d rhs`` for a constraint written
    ``lhs <= rhs`` or ``lhs == rhs`` (fairopt's one dual convention).
    """

    problem: Any
    variables: dict[str, Any]
    constraints: dict[str, Any] = field(default_factory=dict)


@dataclass
class PyomoForm:
    """A problem as a pyomo ``ConcreteModel`` with named indexed variables and constraints.

    Duals are read through an ``IMPORT`` suffix named ``dual`` when the model declares one.
    """

    model: Any
    variables: dict[str, Any]
    constraints: dict[str, Any] = field(default_factory=dict)


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
    oracle_complete : bool
        Whether the oracles are the whole problem; when false (constraints only the declarative
        forms hold), only a back end that solves one of the problem's forms accepts it.
    form_tolerance : float, optional
        Relative tolerance the problem asks of a form's solver (through the back end's
        ``tolerance_keys``) instead of the back end's own smooth defaults.
    """

    name = "smooth"
    description = "smooth convex problem"
    family = "smooth"
    blocks: Mapping[str, slice] = MappingProxyType({})   # subclasses set their own
    has_hessian = False
    certifies = True
    oracle_complete = True
    form_tolerance: float | None = None

    @property
    def dim(self) -> int:
        """Number of variables: the end of the last block."""
        return max((s.stop for s in self.blocks.values()), default=0)

    def initial_point(self) -> np.ndarray:
        """Starting point of the native solvers (zeros unless a problem overrides it)."""
        return np.zeros(self.dim)

    @abc.abstractmethod
    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f(x), ∇f(x))``."""

    def value(self, x: np.ndarray) -> float:
        """``f(x)`` alone (from :meth:`value_grad`)."""
        return self.value_grad(x)[0]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """``∇²f(x)``; only called when :attr:`has_hessian` is true (the solvers check it)."""
        raise ConfigError(f"the {self.description} has no Hessian oracle; use a first-order method "
                          "(native L-BFGS, scipy:L-BFGS-B) or set has_hessian and define hessian().")

    def optimality(self, x: np.ndarray, grad: np.ndarray) -> float:
        """Optimality measure (default ``‖∇f‖∞``); compared with ``tol``."""
        return float(np.max(np.abs(grad))) if grad.size else 0.0

    def check_iterate(self, x: np.ndarray, log: str) -> None:  # noqa: B027 -- optional hook, no-op by default
        """Called after each native step; raise (e.g. :class:`InfeasibleError`) to stop."""

    def stall_error(self, violation: float, log: str) -> Exception:
        """The error to raise when the native line search cannot make progress."""
        return SolverError(f"line search stalled on the {self.description} at optimality "
                           f"measure {violation:.3e}.", status="numerical", log=log)

    def split(self, x: np.ndarray) -> dict[str, Any]:
        """``x`` as named blocks."""
        return {k: np.array(x[s], dtype=float) for k, s in self.blocks.items()}

    # the problem's own algorithm and its declarative forms ----------------------------------
    def native_solve(self, x0: np.ndarray, tol: float, max_iter: int,
                     deadline: float | None) -> NativeResult:
        """The problem's own algorithm, run by the ``native`` back end: damped Newton when the
        problem has a Hessian, else L-BFGS. A problem with a better algorithm overrides it."""
        if self.has_hessian:
            return newton(self, x0, tol, max_iter, deadline)
        return lbfgs(self, x0, tol, max_iter, deadline)

    def has_form(self, kind: str) -> bool:
        """Whether the problem defines its ``"cvxpy"`` or ``"pyomo"`` form."""
        method = {"cvxpy": "to_cvxpy", "pyomo": "to_pyomo"}[kind]
        return getattr(type(self), method) is not getattr(SmoothProblem, method)

    def to_cvxpy(self) -> CvxpyForm:
        """The problem as a cvxpy form; a problem without one raises :class:`~fairopt.errors.ConfigError`."""
        raise ConfigError(f"the {self.description} has no cvxpy form; use backend 'native' or 'scipy'.")

    def to_pyomo(self) -> PyomoForm:
        """The problem as a pyomo form; a problem without one raises :class:`~fairopt.errors.ConfigError`."""
        raise ConfigError(f"the {self.description} has no pyomo form; use backend 'native' or 'scipy'.")


@dataclass
class SmoothSolution(Solution):
    """A :class:`~fairopt.modeling.Solution` of a smooth problem.

    ``x`` is the oracle's flat variable at the returned point and ``optimality`` the problem's
    optimality measure there (``‖∇f‖∞`` by default).
    """

    x: np.ndarray | None = field(default=None, repr=False)
    optimality: float = float("nan")


# ---------------------------------------------------------------------------- native
def newton(problem: SmoothProblem, x0: np.ndarray, tol: float, max_iter: int,
           deadline: float | None = None) -> NativeResult:
    """Damped Newton: Cholesky of ``H (+ μI)``, Armijo backtracking on ``f``, stop at
    ``optimality ≤ tol``.

    BLAS is limited to one thread: the systems are small (``d`` in the hundreds), and threaded
    BLAS on a busy machine costs far more in contention than it gains.
    """
    controller = _blas_controller()
    if controller is None:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return _newton(problem, x0, tol, max_iter, deadline)
    with controller.limit(limits=1, user_api="blas"):
        return _newton(problem, x0, tol, max_iter, deadline)


_CONTROLLER: list[Any] = []


def _blas_controller() -> Any:
    """One ``threadpoolctl`` controller per process: building it scans the loaded libraries
    (0.3-3 ms, more than a whole small Newton solve), so it is built once and reused."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
            return None
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _newton(problem: SmoothProblem, x0: ArrayLike, tol: float, max_iter: int,
            deadline: float | None) -> NativeResult:
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


def lbfgs(problem: SmoothProblem, x0: ArrayLike, tol: float, max_iter: int,
          deadline: float | None = None, maxcor: int = 30) -> NativeResult:
    """L-BFGS (scipy's L-BFGS-B without bounds) stopping at ``‖∇f‖∞ ≤ tol``."""
    return minimize(problem, x0, "L-BFGS-B", tol, max_iter,
                           {"maxiter": max_iter, "maxcor": maxcor, "maxfun": 20 * max_iter + 100},
                           deadline)


def lbfgs_on(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: ArrayLike, *,
             nonnegative: bool = False, max_iter: int = 1000, gtol: float = 1e-12,
             ftol: float = 1e-15) -> np.ndarray:
    """Minimise ``fun`` (value and gradient of a smooth function) by L-BFGS, optionally over
    ``x >= 0``; the minimiser for the native inner loops of formulations (scipy's L-BFGS-B, named
    here so that no formulation names a solver).

    Examples
    --------
    >>> import numpy as np
    >>> x = lbfgs_on(lambda x: (float((x - 1) @ (x - 1)), 2 * (x - 1)), np.zeros(2))
    >>> np.round(x, 6).tolist()
    [1.0, 1.0]
    >>> x = lbfgs_on(lambda x: (float((x + 1) @ (x + 1)), 2 * (x + 1)), np.ones(2), nonnegative=True)
    >>> np.round(x, 6).tolist()
    [0.0, 0.0]
    """
    from scipy.optimize import minimize as scipy_minimize
    x = np.asarray(x0, dtype=float)
    bounds = [(0.0, None)] * x.shape[0] if nonnegative else None
    res = scipy_minimize(fun, x, jac=True, method="L-BFGS-B", bounds=bounds,
                         options={"maxiter": max_iter, "gtol": gtol, "ftol": ftol})
    out: np.ndarray = np.asarray(res.x, dtype=float)
    return out


register("example_bowl", """
>>> class Bowl(SmoothProblem):          # f(w) = |w|^2 / 2 over two weights
...     blocks = {"w": slice(0, 2)}
...     def value_grad(self, x):
...         return 0.5 * float(x @ x), x""")


# ---------------------------------------------------------------------------- solve_smooth
def _form_backends(problem: SmoothProblem) -> list[str]:
    """Smooth back ends that solve one of the problem's declarative forms."""
    return [b.name for b in BACKENDS.values() if "smooth" in b.problem_classes and b.form is not None
            and problem.has_form(b.form)]


@fill_doc
def build_form(problem: SmoothProblem, backend: str | SolverSpec | None = None) -> Any:
    """The native object of the problem's declarative form for ``backend`` (a ``cvxpy.Problem``,
    a pyomo ``ConcreteModel``): the form the back end declares (``BackendInfo.form``); default
    the first back end whose form the problem has. For embedding a model in a larger one.

    Raises
    ------
    ConfigError
        The back end solves no declarative form, or the problem lacks it (the message lists the
        back ends whose form it has).

    Examples
    --------
    {example_bowl}
    >>> build_form(Bowl(), "scipy")
    Traceback (most recent call last):
    ...
    fairopt.errors.ConfigError: build() gives the declarative form of the smooth convex problem for back ends ; ...
    """
    names = _form_backends(problem)
    name = SolverSpec.parse(backend).backend if backend is not None else (names[0] if names else None)
    form = backend_info(name).form if name is not None else None
    if form is None or not problem.has_form(form):
        raise ConfigError(f"build() gives the declarative form of the {problem.description} for back ends "
                          f"{', '.join(names)}; got {backend!r} (the others work on the oracles directly).")
    built = getattr(problem, f"to_{form}")()
    return built.problem if isinstance(built, CvxpyForm) else built.model


@fill_doc
def smooth_spec(problem: SmoothProblem, spec: str | Mapping[str, Any] | SolverSpec | None = None,
                **overrides: Any) -> SolverSpec:
    """Parse and resolve ``spec`` for ``problem`` (kind ``smooth``): the registry's default, or
    for a problem whose oracles are not the whole problem the first installed back end that
    solves one of its forms; the inner solver the back end picks for the problem; the tolerance
    options the problem asks for underneath the spec's own.

    Raises
    ------
    WrongProblemClassError
        The back end does not take smooth problems, or cannot see the whole problem (the
        message lists the back ends that can).

    Examples
    --------
    {example_bowl}
    >>> str(smooth_spec(Bowl())), str(smooth_spec(Bowl(), "scipy"))
    ('native:native', 'scipy:L-BFGS-B')
    """
    if spec is None and not problem.oracle_complete:
        spec = next((SolverSpec(name) for name in _form_backends(problem) if backend_installed(name)), None)
    spec = SolverSpec.parse(spec, default=default_spec("smooth"), **overrides)
    info = backend_info(spec.backend)
    if not problem.oracle_complete and not (info.form and problem.has_form(info.form)):
        raise WrongProblemClassError(
            f"the {problem.description} holds constraints its oracles do not see, so only a back end "
            f"solving its declarative form takes it ({', '.join(_form_backends(problem))}); got {spec}.",
            installed_specs("smooth"))
    if spec.solver is None and info.choose_solver is not None:
        # the back end's default inner solver may depend on the problem (Hessian or not)
        spec = replace(spec, solver=info.choose_solver(problem, "smooth"))
    spec = check_spec(spec, "smooth")
    keys = info.tolerance_keys.get(str(spec.solver), ())
    if problem.form_tolerance is not None and keys:
        spec = replace(spec, options={**{k: problem.form_tolerance for k in keys}, **spec.options})
    return spec


def solve_smooth(problem: SmoothProblem, spec: str | Mapping[str, Any] | SolverSpec | None = None, *,
                 tol: float = 1e-8, max_iter: int = 100, options: Mapping[str, Any] | None = None,
                 x0: ArrayLike | None = None) -> SmoothSolution:
    """Minimise a :class:`SmoothProblem` on the back end named by ``spec``.

    Parameters
    ----------
    problem : SmoothProblem
    spec : str, mapping or SolverSpec, optional
        A back end that takes smooth problems (``fairopt solvers``; default: the registry's,
        ``native``): ``"native"``, ``"scipy[:method]"``, ``"cvxpy[:CLARABEL|SCS]"`` or
        ``"pyomo[:ipopt]"``. ``time_limit`` is honoured by native and scipy and refused by cvxpy
        and pyomo (pass the inner solver's own limit in ``options``); native takes no ``options``.
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
        Back end or settings the problem cannot use (a back end without smooth problems is a
        :class:`~fairopt.errors.WrongProblemClassError` listing those with).
    SolverNotAvailableError
        The back end or inner solver is not installed (e.g. pyomo without Ipopt).
    SolverError
        The solver failed without a point, or produced a non-finite one.
    """
    spec = smooth_spec(problem, spec, options=dict(options) if options else None)
    backend = load_backend(spec.backend)
    t0 = time.perf_counter()
    start = problem.initial_point() if x0 is None else np.asarray(x0, dtype=float)
    deadline = None if spec.time_limit is None else t0 + float(spec.time_limit)
    res = backend.solve_smooth(problem, spec, start, tol=tol, max_iter=max_iter, deadline=deadline)
    hint, iters, log, solver = res.status, res.iterations, res.log, res.solver
    primal, dual, f = dict(res.primal), dict(res.dual), res.objective
    x = res.x
    if x is None:   # a declarative form: the oracle's variable from the reported blocks
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
