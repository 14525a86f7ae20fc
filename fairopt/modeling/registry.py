"""The back-end registry: which back ends exist, which are installed, what each takes.

Every algorithm, fairopt's own included, is a registered solver: one module
``fairopt/modeling/backends/<name>_backend.py`` exporting an ``INFO``
(:class:`~fairopt.modeling.spec.BackendInfo`) that declares the problem kinds
(:mod:`fairopt.modeling.kinds`) each inner solver accepts and its capabilities; the registry reads
the one list :data:`fairopt.modeling.backends.NAMES`. Programs (LP, QP, MILP) compile through
``compile(program, spec)``, smooth problems go to ``solve_smooth(problem, spec, ...)`` and the
other kinds (statistics problems, column- and row-generation masters) to ``solve_own(problem,
spec, kind)`` of the same modules, always after :func:`check_spec`, which has no per-back-end
special cases. Formulations, runners and estimators call :func:`resolve` (``None`` takes
:func:`default_spec`) instead of naming a solver.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from fairopt.errors import ConfigError, SolverNotAvailableError, UnknownSolverError, WrongProblemClassError
from fairopt.modeling._catalog import (
    BACKENDS,
    available_backends,
    backend_info,
    backend_installed,
    backends_for,
    exact_specs,
    inner_solvers,
    installed_specs,
    load_backend,
    solver_table,
    takes,
)
from fairopt.modeling.spec import PROBLEM_CLASSES, BackendInfo, SolverSpec, reject_unknown_options

if TYPE_CHECKING:
    from fairopt.modeling.backends.base import CompiledModel

__all__ = [
    "BACKENDS",
    "OWN_ALGORITHM",
    "PROBLEM_CLASSES",
    "REFERENCES",
    "BackendInfo",
    "SolverSpec",
    "accepts",
    "available_backends",
    "backend_info",
    "backend_installed",
    "backends_for",
    "capabilities",
    "check_spec",
    "compile_program",
    "default_backend",
    "default_spec",
    "exact_specs",
    "form_solver",
    "inner_solvers",
    "installed_specs",
    "iteration_limit_option",
    "load_backend",
    "mip_gap_options",
    "parse_solver",
    "reject_unknown_options",
    "resolve_solver",
    "solve_own",
    "solver_table",
    "takes",
]
__all__ += ["default_spec_for", "master_resolve_options", "model_backend", "model_spec",
            "restricted_master_options"]

#: ``backend`` label of a result built by a problem's own algorithm, replaced by :func:`solve_own`
OWN_ALGORITHM = "own algorithm"
#: back ends that re-solve a program whose status a solver got wrong, tried in order
#: (:func:`fairopt.modeling.certify.reference_solve`)
REFERENCES = {"LP": ("highs:highs", "cvxpy:CLARABEL"),
              "QP": ("osqp:osqp", "cvxpy:CLARABEL", "highs:highs")}


def default_backend(problem_class: str) -> str:
    """The back end fairopt uses for ``problem_class`` when none is named.

    Examples
    --------
    >>> default_backend("LP"), default_backend("smooth")
    ('highs', 'native')
    """
    if problem_class not in PROBLEM_CLASSES:
        raise ConfigError(f"unknown problem class {problem_class!r}; one of {PROBLEM_CLASSES}.")
    return next(b.name for b in BACKENDS.values() if problem_class in b.default_for)


def default_spec(problem_class: str) -> SolverSpec:
    """The default :class:`SolverSpec` for ``problem_class`` (back end and inner solver).

    Examples
    --------
    >>> str(default_spec("QP"))
    'highs:highs'
    """
    name = default_backend(problem_class)
    return SolverSpec(name, BACKENDS[name].default_solver[problem_class])


def resolve_solver(solver: str | SolverSpec | Mapping[str, Any] | None, kind: str, **overrides: Any) -> SolverSpec:
    """Parse a user's ``solver`` value once and resolve it for problem ``kind``: ``None`` takes
    the registry's default for the kind (:func:`default_spec`); anything else goes through
    :meth:`SolverSpec.parse` and :func:`check_spec`, so an unknown or unfit solver raises the
    typed error listing the installed solvers that accept the kind.

    Examples
    --------
    >>> str(resolve_solver(None, "threshold")), str(resolve_solver("cvxpy", "LP"))
    ('native:native', 'cvxpy:CLARABEL')
    >>> resolve_solver("cvxpy:NOPE", "LP")
    Traceback (most recent call last):
    ...
    fairopt.errors.UnknownSolverError: cvxpy has no inner solver 'NOPE'; ...
    """
    if solver is None and not any(v is not None for v in overrides.values()):
        return check_spec(default_spec(kind), kind)
    return check_spec(SolverSpec.parse(solver, default=default_spec(kind), **overrides), kind)


def parse_solver(solver: str | SolverSpec | Mapping[str, Any] | None) -> SolverSpec | None:
    """Parse an estimator's ``solver`` parameter once, where it enters: ``None`` stays ``None``
    (the formulation's kind picks the registry's default), anything else becomes a typed
    :class:`SolverSpec` (an unknown back end raises :class:`~fairopt.errors.UnknownSolverError`
    listing the registered ones); the formulation then checks it for its kind.

    Examples
    --------
    >>> parse_solver(None) is None, parse_solver("cvxpy:SCS").solver
    (True, 'SCS')
    """
    return None if solver is None else SolverSpec.parse(solver)


def accepts(spec: str | SolverSpec | Mapping[str, Any] | None, kind: str) -> bool:
    """Whether the solver named by ``spec`` declares problem ``kind`` (for a spec without an
    inner solver: whether the back end's default inner solver for the kind exists). Used to
    dispatch a problem that can be solved as a structured kind or lowered to a Program.

    Examples
    --------
    >>> accepts("native", "threshold"), accepts("highs", "threshold"), accepts(None, "LP")
    (True, False, True)
    """
    parsed = default_spec(kind) if spec is None else SolverSpec.parse(spec)
    info = backend_info(parsed.backend)
    if parsed.solver is None:
        return kind in info.default_solver
    name = info.canonical_solver(str(parsed.solver))
    return name is not None and kind in info.kinds(name)


def capabilities(spec: SolverSpec) -> dict[str, Any]:
    """Capabilities of the inner solver of a resolved ``spec`` (:meth:`BackendInfo.capabilities`).

    Examples
    --------
    >>> capabilities(resolve_solver(None, "LP"))["duals"]
    True
    """
    return backend_info(spec.backend).capabilities(str(spec.solver))


def form_solver(model: Any, kind: str) -> str:
    """The default inner solver for ``kind`` of the back end whose declarative form is the
    library of a user's own ``model`` (a pyomo block, a cvxpy ``Problem``): what a fairness block
    embedded in that model re-solves it with.

    Examples
    --------
    >>> import cvxpy as cp
    >>> form_solver(cp.Problem(cp.Minimize(0)), "MILP")
    'HIGHS'
    """
    library = type(model).__module__.split(".", 1)[0]
    info = next((b for b in BACKENDS.values() if b.form == library), None)
    if info is None or kind not in info.default_solver:
        raise ConfigError(f"no registered back end solves {library} models of kind {kind}; back ends with a "
                          f"declarative form: {', '.join(b.name for b in BACKENDS.values() if b.form)}.")
    return info.default_solver[kind]


def check_spec(spec: SolverSpec, problem_class: str) -> SolverSpec:
    """Resolve ``spec`` for ``problem_class``: the one gate before any back end runs.

    Fills in the default inner solver; checks that it is known (:class:`ConfigError` listing
    valid names), that the back end and the solver take the problem class
    (:class:`~fairopt.errors.WrongProblemClassError`, a :class:`ConfigError` listing the back
    ends that do), that they are installed (:class:`SolverNotAvailableError` listing installed
    alternatives), that the options are valid, and that a time limit can be honoured. Nothing is
    substituted silently.

    Examples
    --------
    >>> check_spec(SolverSpec.parse("cvxpy"), "LP").solver
    'CLARABEL'
    """
    info = backend_info(spec.backend)
    if problem_class not in PROBLEM_CLASSES:
        raise ConfigError(f"unknown problem class {problem_class!r}; one of {PROBLEM_CLASSES}.")

    def wrong_class(message: str) -> WrongProblemClassError:
        return WrongProblemClassError(
            f"{message} Back ends that take {problem_class} problems: "
            f"{', '.join(backends_for(problem_class))}.", installed_specs(problem_class))

    def unavailable(message: str) -> SolverNotAvailableError:
        # probing the other back ends imports them: only do it when reporting an error
        return SolverNotAvailableError(message, installed_specs(problem_class))
    if problem_class not in info.problem_classes:
        raise wrong_class(f"back end {spec.backend!r} does not take {problem_class} problems "
                          f"(it takes {', '.join(info.problem_classes)}).")
    if not backend_installed(spec.backend):
        raise unavailable(
            f"back end {spec.backend!r} needs the Python package {info.module!r}, which is not "
            f"installed (pip install {info.module}).")
    installed = inner_solvers(spec.backend)
    if spec.solver is None:
        solver = info.default_solver.get(problem_class)
        if solver not in installed:  # e.g. cvxpy without CLARABEL: first installed that fits
            solver = next((s for s in installed if problem_class in info.solvers.get(s, ())), solver)
        if solver is None:
            raise wrong_class(f"{spec.backend} names no default solver for {problem_class} problems.")
    else:
        solver = info.canonical_solver(str(spec.solver))
        if solver is None:
            raise UnknownSolverError(
                f"{spec.backend} has no inner solver {spec.solver!r}; valid names: "
                f"{', '.join(info.solvers)} (installed here: {', '.join(installed) or 'none'}).",
                installed_specs(problem_class))
    if problem_class not in info.solvers.get(solver, ()):
        raise wrong_class(f"{spec.backend} solver {solver!r} does not take {problem_class} problems "
                          f"(it takes {', '.join(info.solvers[solver])}).")
    if spec.time_limit is not None and info.time_limit_option(solver, problem_class) is None:
        own = [f"{s}: {k}" for s, k in info.time_limit_key.items()
               if k and problem_class in info.solvers.get(s, ())]
        hint = (f"pass the inner solver's own limit in the solver options ({', '.join(own)})"
                if own else "drop it")
        takes = [b.name for b in BACKENDS.values() if problem_class in b.problem_classes and any(
            b.time_limit_option(s, problem_class) for s in b.solvers
            if problem_class in b.solvers[s])]
        raise ConfigError(f"time_limit is not supported by the {spec.backend} back end for "
                          f"{problem_class} problems ({spec.backend}:{solver}); {hint}, or choose "
                          f"a back end that honours it ({', '.join(takes)}).")
    if solver not in installed:
        how = info.install_hint.get(solver)
        raise unavailable(f"{spec.backend} solver {solver!r} is not installed on this machine"
                          + (f" ({how})." if how else "."))
    if spec.options and info.check_options is not None:
        info.check_options(solver, dict(spec.options))
    if solver != spec.solver:
        spec = SolverSpec(spec.backend, solver, spec.options, spec.time_limit, spec.verbose)
    return spec


def iteration_limit_option(backend: str, solver: str | None = None) -> str | None:
    """The option carrying the iteration limit of ``backend:solver`` (default inner solver when
    ``solver`` is None), or None when fairopt knows none.

    Examples
    --------
    >>> iteration_limit_option("highs"), iteration_limit_option("cvxpy", "SCS")
    ('simplex_iteration_limit', 'max_iters')
    """
    info = backend_info(backend)
    name = info.canonical_solver(str(solver)) if solver else next(iter(info.default_solver.values()))
    return info.iteration_limit_key.get(name) if name else None


def mip_gap_options(spec: SolverSpec, gap: float) -> dict[str, Any]:
    """Options asking the MILP solver of ``spec`` to stop at relative gap ``gap`` (empty when
    the back end declares no gap option for it).

    Examples
    --------
    >>> mip_gap_options(SolverSpec("highs"), 1e-4)
    {'mip_rel_gap': 0.0001}
    """
    spec = check_spec(SolverSpec.parse(spec), "MILP")
    assert spec.solver is not None  # check_spec fills in the default solver
    key = BACKENDS[spec.backend].mip_gap_key.get(spec.solver)
    return {key: float(gap)} if key else {}


def with_feasibility_tolerance(spec: SolverSpec, tol: float, problem_class: str = "LP") -> SolverSpec:
    """``spec`` (its inner solver filled in for ``problem_class``) with its primal feasibility
    tolerance set to ``tol``, for a formulation whose rows must hold more tightly than a solver's
    default (a fairness band narrower than ``1e-7``). The options are unchanged when the back end
    declares no such option or the user already set it.

    Examples
    --------
    >>> with_feasibility_tolerance(SolverSpec.parse("highs"), 1e-9).options
    {'primal_feasibility_tolerance': 1e-09}
    """
    spec = check_spec(SolverSpec.parse(spec), problem_class)
    key = capabilities(spec)["feasibility_tolerance"]
    if key is None or key in spec.options:
        return spec
    return SolverSpec(spec.backend, spec.solver, {**spec.options, key: float(tol)}, spec.time_limit, spec.verbose)


def solve_own(problem: Any, spec: str | SolverSpec | Mapping[str, Any] | None, problem_class: str,
              **options: Any) -> Any:
    """Solve a problem of a kind other than Program and smooth (statistics problems, column- and
    row-generation masters) with the solver named by ``spec``, after :func:`check_spec`. The
    result's ``backend`` names the solver that ran (a problem's own algorithm labels its result
    :data:`OWN_ALGORITHM`, not knowing which registered solver calls it)."""
    # ``problem`` is any problem of the kind; the result is its own type
    spec = resolve_solver(spec, problem_class)
    result = load_backend(spec.backend).solve_own(problem, spec, **options)
    if hasattr(result, "backend"):
        result.backend = spec.backend
    return result


def compile_program(program: Any, spec: SolverSpec) -> CompiledModel:
    """Compile ``program`` for a spec that :func:`check_spec` resolved, with the reference back
    ends of :data:`REFERENCES` attached for status certification."""
    # ``program`` is a fairopt.modeling.Program, not imported: the registry sits below it
    model = load_backend(spec.backend).compile(program, spec)
    model.references = partial(_references, model)
    compiled: CompiledModel = model
    return compiled


def _references(model: CompiledModel) -> Iterator[tuple[str, CompiledModel]]:
    """``(label, compiled model)`` of each installed reference back end other than ``model``'s."""
    for label in REFERENCES.get(model.canon.problem_class, ()):
        backend, solver = label.split(":")
        if (backend, solver) == (model.backend, model.spec.solver) or not backend_installed(backend) \
                or solver not in inner_solvers(backend):
            continue
        yield label, load_backend(backend).compile(
            model.program, SolverSpec(backend, solver, time_limit=model.spec.time_limit))



# ------------------------------------------------------------------ models fairopt does not own
def model_backend(model: Any) -> str | None:
    """The back end whose own modelling objects ``model`` is made of: a pyomo model or block
    (``"pyomo"``), a cvxpy ``Problem`` (``"cvxpy"``); ``None`` for anything else (a
    :class:`~fairopt.modeling.Program` compiles for any back end).

    Blocks that act on a user's model ask this instead of naming a back end.

    Examples
    --------
    >>> import cvxpy as cp
    >>> model_backend(cp.Problem(cp.Minimize(0))), model_backend(object())
    ('cvxpy', None)
    """
    if hasattr(model, "component_data_objects") and hasattr(model, "add_component"):
        return "pyomo"
    if model.__class__.__name__ == "Problem" and hasattr(model, "variables") and hasattr(model, "constraints"):
        return "cvxpy"
    return None


def model_spec(backend: str, solver: str | SolverSpec | None, problem_class: str,
               mip_gap: float | None = None) -> SolverSpec:
    """Resolve the solver a user asks for a model of back end ``backend`` (see
    :func:`model_backend`): ``None`` takes the back end's default for ``problem_class``, a bare
    inner-solver name (``"HIGHS"``) or ``"backend:solver"`` is checked by :func:`check_spec`;
    the spec's options gain the back end's declared tolerances and, for a MILP with ``mip_gap``,
    the gap option. The spec's ``options`` are what the model's own ``solve`` receives.

    Examples
    --------
    >>> spec = model_spec("cvxpy", None, "MILP", mip_gap=1e-6)
    >>> spec.backend, spec.options["mip_rel_gap"]
    ('cvxpy', 1e-06)
    """
    if isinstance(solver, SolverSpec):
        spec = solver
    elif solver is None or ":" not in str(solver):
        spec = SolverSpec(backend, None if solver is None else str(solver))
    else:
        spec = SolverSpec.parse(solver)
    if spec.backend != backend:
        raise ConfigError(f"a {backend} model is solved by {backend}'s own solvers; got {str(spec)!r} "
                          f"(give an inner solver of {backend}, e.g. {default_spec_for(backend, problem_class)!r}).")
    spec = check_spec(spec, problem_class)
    assert spec.solver is not None  # check_spec fills in the default solver
    info = BACKENDS[backend]
    options = {**info.tolerance_options(spec.solver, problem_class), **dict(spec.options)}
    if problem_class == "MILP" and mip_gap is not None and info.mip_gap_key.get(spec.solver):
        options.setdefault(info.mip_gap_key[spec.solver], float(mip_gap))
    return SolverSpec(spec.backend, spec.solver, options, spec.time_limit, spec.verbose)


def default_spec_for(backend: str, problem_class: str) -> str:
    """``"backend:solver"`` of ``backend``'s default inner solver for ``problem_class`` (empty
    solver part when it declares none).

    Examples
    --------
    >>> default_spec_for("highs", "LP")
    'highs:highs'
    """
    return f"{backend}:{backend_info(backend).default_solver.get(problem_class, '')}"


def restricted_master_options(spec: SolverSpec, problem_class: str = "LP") -> dict[str, Any]:
    """Options a back end declares for restricted master problems (a few rows at a time,
    re-solved after each new batch): e.g. presolve off, where presolving costs more than the
    warm-started simplex it precedes. Empty when the back end declares none; the spec's own
    options win.

    Examples
    --------
    >>> restricted_master_options(SolverSpec("highs"))["presolve"]
    'off'
    """
    spec = check_spec(SolverSpec.parse(spec), problem_class)
    assert spec.solver is not None  # check_spec fills in the default solver
    declared = dict(BACKENDS[spec.backend].master_options.get(spec.solver, {}))
    return {**declared, **dict(spec.options)}


def master_resolve_options(spec: SolverSpec, problem_class: str = "LP") -> dict[str, Any]:
    """Options a back end declares for a restricted master's re-solves, after its first solve
    (see :func:`restricted_master_options`); empty when it declares none.

    Examples
    --------
    >>> master_resolve_options(SolverSpec("highs"))
    {'solver': 'simplex'}
    """
    spec = check_spec(SolverSpec.parse(spec), problem_class)
    assert spec.solver is not None  # check_spec fills in the default solver
    return dict(BACKENDS[spec.backend].master_resolve_options.get(spec.solver, {}))
