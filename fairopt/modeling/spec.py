"""What a back end declares about itself, and the one parser of solver requests.

Every back end is one module, ``fairopt/modeling/backends/<name>_backend.py``, that declares a
:class:`BackendInfo`: the inner solvers it can reach with the problem classes each takes, the
default per problem class, the options that carry time and iteration limits, the tolerances
fairopt asks of each solver, its status map, and the problem classes it is the default back end
for. :class:`SolverSpec` is the only parser of ``"backend[:solver]"`` strings and solver tables;
:func:`fairopt.modeling.registry.check_spec` resolves a spec against the declarations.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fairopt.errors import ConfigError, UnknownSolverError
from fairopt.modeling.backends import NAMES
from fairopt.modeling.kinds import PROBLEM_KINDS

#: problem kinds, the typed problems a solver declares it accepts (see :mod:`fairopt.modeling.kinds`)
PROBLEM_CLASSES = PROBLEM_KINDS
#: relative accuracy of objective and constraints an exact solver reaches
DEFAULT_ACCURACY = 1e-6
#: capability names a solver declares (:meth:`BackendInfo.capabilities`)
CAPABILITIES = ("duals", "warm_start", "exact", "time_limit", "iteration_limit", "tolerance")


def backend_names() -> list[str]:
    """Names of the registered solvers (back ends): the one list in :mod:`fairopt.modeling.backends`.

    Read without importing any back end, so that a spec can be checked cheaply.

    Examples
    --------
    >>> "highs" in backend_names() and "column_generation" in backend_names()
    True
    """
    return list(NAMES)


@dataclass(frozen=True)
class BackendInfo:
    """Capabilities a back end declares.

    Attributes
    ----------
    name : str
        Back-end name used in ``"backend[:solver]"``.
    module : str
        Python package that must import for the back end to be installed.
    description : str
        One line for ``fairopt solvers``.
    solvers : mapping of str to tuple of str
        Every inner solver the back end knows, with the problem classes each one takes.
    default_solver : mapping of str to str
        Inner solver used per problem class when the spec names none.
    time_limit_key : mapping of str to str or None
        Option that carries ``time_limit`` per inner solver; ``None`` means the solver cannot
        honour a time limit and a spec with one is refused.
    time_limit_classes : tuple of str, optional
        Problem classes for which ``time_limit`` is passed on (default: all); for the others a
        spec with a time limit is refused, and the message names ``time_limit_key`` as the
        option to set instead.
    iteration_limit_key : mapping of str to str or None
        Option that carries an iteration limit per inner solver (what to raise when the solver
        stopped at its limit); ``None``: the solver has none fairopt knows.
    mip_gap_key : mapping of str to str
        Per inner solver that takes MILPs, the option carrying the relative MIP gap at which it
        stops (what a caller sets to ask for a gap).
    tolerances : mapping of str to mapping of str to mapping
        Per inner solver and problem class, the tolerance options fairopt passes unless the
        spec sets them.
    accuracy : mapping of str to float
        Relative accuracy of the objective and of the constraints a solver reaches at those
        tolerances (default ``1e-6``); a first-order method declares a looser one.
    install_hint : mapping of str to str
        Per inner solver, how to install it (shown when it is missing).
    default_for : tuple of str
        Problem classes for which this back end is fairopt's default (one back end per class).
    status_map : mapping
        Native status (name or code) to :class:`~fairopt.modeling.solution.Status`; the back
        end reads it through :meth:`map_status`.
    duals : tuple of str
        Inner solvers that return duals (the price of fairness) with their solution.
    warm_start : tuple of str
        Inner solvers that re-solve from the previous basis or iterate after an update.
    form : str, optional
        The declarative form through which the back end solves a smooth problem (the problem's
        ``to_<form>()``); None when it reads the value/gradient oracles.
    tolerance_keys : mapping of str to tuple of str
        Per inner solver, the options that carry a relative tolerance a problem asks for
        (:attr:`fairopt.modeling.smooth.SmoothProblem.form_tolerance`).
    active_set_qp : tuple of str
        Inner solvers whose QP method is active-set: they cycle on some singular Hessians (the
        program is routed to a reference solver) and prefer condensed QP forms.
    qp_iteration_limit_key : str, optional
        Option capping the QP iterations of those solvers.
    feasibility_tolerance_key : mapping of str to str
        Per inner solver, the option carrying its primal feasibility tolerance (for a
        formulation that needs a face kept to a tolerance).
    choose_solver : callable, optional
        ``choose_solver(problem, kind)`` picks the inner solver from the problem itself when the
        spec names none (scipy picks a Hessian method when the smooth problem has a Hessian);
        ``None`` falls back to ``default_solver``.
    probe : callable, optional
        Returns the inner solvers actually available on this machine (default: all of
        ``solvers`` once ``module`` imports).
    check_options : callable, optional
        ``check_options(solver, options)`` raises :class:`~fairopt.errors.ConfigError` naming
        the valid options when one is unknown.
    master_options : mapping of str to mapping, optional
        Per inner solver, options for restricted master problems of row or column generation
        (small LPs re-solved after each batch of rows, where presolve costs more than the
        warm-started simplex); see :func:`fairopt.modeling.registry.restricted_master_options`.
    master_resolve_options : mapping of str to mapping, optional
        Per inner solver, options switched on after a restricted master's first solve (e.g.
        the first solve by interior point with crossover, the warm re-solves by simplex).

    Examples
    --------
    >>> from fairopt.modeling.registry import backend_info
    >>> info = backend_info("highs")
    >>> type(info).__name__, info.name
    ('BackendInfo', 'highs')
    """

    name: str
    module: str
    description: str
    solvers: Mapping[str, tuple[str, ...]]
    default_solver: Mapping[str, str]
    time_limit_key: Mapping[str, str | None] = field(default_factory=dict)
    time_limit_classes: tuple[str, ...] | None = None
    iteration_limit_key: Mapping[str, str | None] = field(default_factory=dict)
    mip_gap_key: Mapping[str, str] = field(default_factory=dict)
    tolerances: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    accuracy: Mapping[str, float] = field(default_factory=dict)
    install_hint: Mapping[str, str] = field(default_factory=dict)
    default_for: tuple[str, ...] = ()
    status_map: Mapping[Any, Any] = field(default_factory=dict)
    probe: Callable[[], tuple[str, ...]] | None = None
    check_options: Callable[[str, Mapping[str, Any]], None] | None = None
    duals: tuple[str, ...] = ()
    warm_start: tuple[str, ...] = ()
    choose_solver: Callable[[Any, str], str | None] | None = None
    form: str | None = None
    active_set_qp: tuple[str, ...] = ()
    qp_iteration_limit_key: str | None = None
    feasibility_tolerance_key: Mapping[str, str] = field(default_factory=dict)
    tolerance_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    master_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    master_resolve_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def map_status(self, native: Any) -> Any:
        """The :class:`~fairopt.modeling.solution.Status` of a native status (``ERROR`` when the
        back end declares no mapping for it: an unknown status is never read as success)."""
        from fairopt.modeling.solution import Status
        return self.status_map.get(native, Status.ERROR)

    def kinds(self, solver: str) -> tuple[str, ...]:
        """Problem kinds inner solver ``solver`` accepts."""
        return tuple(self.solvers.get(solver, ()))

    def capabilities(self, solver: str) -> dict[str, Any]:
        """What ``solver`` can do: ``duals``, ``warm_start``, ``exact`` (declared accuracy of
        ``1e-6`` or better), ``time_limit`` and ``iteration_limit`` (the option carrying each,
        or None), ``tolerance`` (the declared accuracy) and the ``kinds`` it accepts.

        Examples
        --------
        >>> from fairopt.modeling.registry import backend_info
        >>> caps = backend_info("highs").capabilities("highs")
        >>> caps["duals"], caps["exact"], caps["time_limit"]
        (True, True, 'time_limit')
        """
        return {"kinds": list(self.kinds(solver)), "duals": solver in self.duals,
                "warm_start": solver in self.warm_start,
                "exact": self.solver_accuracy(solver) <= DEFAULT_ACCURACY,
                "time_limit": self.time_limit_key.get(solver),
                "iteration_limit": self.iteration_limit_key.get(solver),
                "tolerance": self.solver_accuracy(solver), "active_set_qp": solver in self.active_set_qp,
                "feasibility_tolerance": self.feasibility_tolerance_key.get(solver)}

    @property
    def problem_classes(self) -> tuple[str, ...]:
        """Problem classes some known inner solver takes."""
        return tuple(p for p in PROBLEM_CLASSES if any(p in c for c in self.solvers.values()))

    def canonical_solver(self, name: str) -> str | None:
        """The declared spelling of inner solver ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((s for s in self.solvers if s.lower() == low), None)

    def time_limit_option(self, solver: str, problem_class: str) -> str | None:
        """The option carrying ``time_limit`` for ``solver`` on ``problem_class`` (None: refused)."""
        if self.time_limit_classes is not None and problem_class not in self.time_limit_classes:
            return None
        return self.time_limit_key.get(solver)

    def tolerance_options(self, solver: str, problem_class: str) -> dict[str, Any]:
        """Tolerance options fairopt asks of ``solver`` on ``problem_class`` (a copy)."""
        return dict(self.tolerances.get(solver, {}).get(problem_class, {}))

    def solver_accuracy(self, solver: str) -> float:
        """Declared relative accuracy of ``solver`` (``1e-6`` unless the back end says otherwise)."""
        return float(self.accuracy.get(solver, DEFAULT_ACCURACY))


@dataclass(frozen=True)
class SolverSpec:
    """A back end, an optional inner solver, and options.

    Parameters
    ----------
    backend : str
        A registered back end (see ``fairopt solvers``).
    solver : str, optional
        Inner solver of the back end (e.g. ``"CLARABEL"`` for cvxpy, ``"highs-ipm"`` for scipy).
    options : mapping, optional
        Passed to the solver (HiGHS option names, OSQP settings, cvxpy ``solve`` keywords,
        pyomo solver options); unknown names are refused with the valid ones listed.
    time_limit : float, optional
        Wall-clock limit in seconds (> 0); reaching it yields ``Status.TIME_LIMIT``.
    verbose : bool
        Show the solver's own log; otherwise solvers print nothing.

    Notes
    -----
    A spec is parsed once, where it enters (the CLI, a model card, an estimator's ``solver``
    parameter), and travels typed; ``str(spec)`` prints it back with its options in the form
    :meth:`parse` reads: ``backend:solver{option=value, ...}``.

    Examples
    --------
    >>> SolverSpec.parse("cvxpy:CLARABEL")
    SolverSpec(backend='cvxpy', solver='CLARABEL', options={}, time_limit=None, verbose=False)
    >>> SolverSpec.parse({"backend": "cvxpy", "solver": "SCS", "time_limit": 30}).time_limit
    30
    >>> spec = SolverSpec.parse("cvxpy:SCS", options={"max_iters": 500}, time_limit=30)
    >>> str(spec)
    'cvxpy:SCS{max_iters=500, time_limit=30}'
    >>> SolverSpec.parse(str(spec)) == spec
    True
    """

    backend: str
    solver: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    verbose: bool = False

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any] | SolverSpec | None,
              default: str | SolverSpec | None = None, **overrides: Any) -> SolverSpec:
        """Build a spec from ``"backend[:solver][{option=value, ...}]"``, a config mapping, or
        another spec.

        ``spec=None`` takes ``default``; with neither, :class:`ConfigError` (a caller that knows
        its problem kind uses :func:`fairopt.modeling.registry.resolve_solver`, which takes
        ``None`` to the registry's default for the kind).
        ``overrides`` (``time_limit``, ``verbose``, ``options``, ...) replace the spec's fields
        when not None; ``options`` are merged.
        """
        if spec is None:
            spec = default
        if spec is None:
            raise ConfigError("no solver given: name one ('backend[:solver]', see `fairopt solvers`), or "
                              "let fairopt.modeling.registry.resolve_solver(None, kind) choose the default.")
        if isinstance(spec, SolverSpec):
            base = spec
        elif isinstance(spec, str):
            base = cls._from_string(spec)
        elif isinstance(spec, Mapping):
            unknown = set(spec) - {"backend", "solver", "options", "time_limit", "verbose"}
            if unknown:
                raise ConfigError(f"solver table has unknown key(s) {sorted(unknown)}; allowed: "
                                  "backend, solver, options, time_limit, verbose.")
            if "backend" not in spec:
                raise ConfigError("solver table needs a 'backend' key, e.g. backend = \"highs\".")
            base = cls(backend=str(spec["backend"]).strip().lower(), solver=spec.get("solver"),
                       options=dict(spec.get("options") or {}), time_limit=spec.get("time_limit"),
                       verbose=bool(spec.get("verbose", False)))
        else:
            raise ConfigError(f"cannot read a solver from {spec!r}; use 'backend[:solver]'.")
        if overrides:
            fields = {k: v for k, v in overrides.items() if v is not None}
            unknown = set(fields) - {"backend", "solver", "options", "time_limit", "verbose"}
            if unknown:
                raise ConfigError(f"unknown solver setting(s) {sorted(unknown)}; allowed: "
                                  "solver, options, time_limit, verbose.")
            if "options" in fields:
                fields["options"] = {**base.options, **dict(fields["options"])}
            base = SolverSpec(**{**base.__dict__, **fields})
        if base.backend not in backend_names():
            raise UnknownSolverError(f"unknown solver back end {base.backend!r} (see `fairopt solvers`).",
                                     backend_names())
        if base.time_limit is not None:
            try:
                # a bool is an int to Python: time_limit=True is a mistake, not one second
                ok = type(base.time_limit).__name__ not in ("bool", "bool_") and float(base.time_limit) > 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ConfigError(f"time_limit must be a positive number of seconds, got "
                                  f"{base.time_limit!r}.")
        if not isinstance(base.options, Mapping):
            raise ConfigError(f"solver options must be a table/dict, got {base.options!r}.")
        return base

    @classmethod
    def _from_string(cls, text: str) -> SolverSpec:
        head, brace, rest = text.strip().partition("{")
        backend, _, solver = head.strip().partition(":")
        settings: dict[str, Any] = {}
        if brace:
            if not rest.rstrip().endswith("}"):
                raise ConfigError(f"cannot read solver {text!r}: options go in braces, "
                                  "'backend:solver{option=value, ...}'.")
            try:
                call = ast.parse(f"f({rest.rstrip()[:-1]})", mode="eval").body
                assert isinstance(call, ast.Call) and not call.args
                settings = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
            except (SyntaxError, ValueError, AssertionError):
                raise ConfigError(f"cannot read the options of solver {text!r}; write them as "
                                  "'backend:solver{option=value, ...}' with literal values.") from None
        time_limit = settings.pop("time_limit", None)
        verbose = bool(settings.pop("verbose", False))
        return cls(backend=backend.strip().lower(), solver=solver.strip() or None, options=settings,
                   time_limit=time_limit, verbose=verbose)

    @property
    def label(self) -> str:
        """``backend[:solver]`` without the options (what a result record names)."""
        return self.backend + (f":{self.solver}" if self.solver else "")

    def __str__(self) -> str:
        settings = {**dict(self.options)}
        if self.time_limit is not None:
            settings["time_limit"] = self.time_limit
        if self.verbose:
            settings["verbose"] = True
        if not settings:
            return self.label
        return self.label + "{" + ", ".join(f"{k}={v!r}" for k, v in settings.items()) + "}"


def reject_unknown_options(where: str, options: Mapping[str, Any], valid: Iterable[str]) -> None:
    """:class:`ConfigError` naming the unknown option(s), close matches and the valid names."""
    import difflib
    valid = sorted(set(valid))
    unknown = sorted(set(options) - set(valid))
    if unknown:
        close = {u: difflib.get_close_matches(u, valid, n=2) for u in unknown}
        hint = "; ".join(f"{u!r}: did you mean {', '.join(map(repr, c))}?" for u, c in close.items() if c)
        raise ConfigError(f"{where} has no option(s) {unknown}" + (f" ({hint})" if hint else "")
                          + f". Valid options: {', '.join(valid)}.")

