"""What a back end declares about itself, and the one parser of solver requests.

A back end module (``fairopt/modeling/backends/<name>_backend.py``) or a formulation that owns an
algorithm (``native``, ``sgd``) declares a :class:`BackendInfo`: the inner solvers it can reach
with the problem classes each takes, the default per problem class, the option that carries a
time limit, and its status map. :class:`SolverSpec` is the only parser of ``"backend[:solver]"``
strings and solver tables; :func:`fairopt.modeling.registry.check_spec` resolves a spec against
the declarations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from fairopt.errors import ConfigError

#: problem classes: "LP" (linear), "QP" (convex quadratic objective, linear constraints),
#: "smooth" (max-entropy dual and other smooth convex models), "threshold" (randomized-threshold
#: post-processing solved exactly or by SGD), "MILP" (an LP with integer variable blocks)
PROBLEM_CLASSES = ("LP", "QP", "smooth", "threshold", "MILP")


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
    status_map : mapping
        Native status (name or code) to :class:`~fairopt.modeling.solution.Status`.
    probe : callable, optional
        Returns the inner solvers actually available on this machine (default: all of
        ``solvers`` once ``module`` imports).
    check_options : callable, optional
        ``check_options(solver, options)`` raises :class:`~fairopt.errors.ConfigError` naming
        the valid options when one is unknown.

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
    status_map: Mapping[Any, Any] = field(default_factory=dict)
    probe: Callable[[], tuple[str, ...]] | None = None
    check_options: Callable[[str, Mapping[str, Any]], None] | None = None

    @property
    def problem_classes(self) -> tuple[str, ...]:
        """Problem classes some known inner solver takes."""
        return tuple(p for p in PROBLEM_CLASSES if any(p in c for c in self.solvers.values()))

    def canonical_solver(self, name: str) -> str | None:
        """The declared spelling of inner solver ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((s for s in self.solvers if s.lower() == low), None)


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

    Examples
    --------
    >>> SolverSpec.parse("cvxpy:CLARABEL")
    SolverSpec(backend='cvxpy', solver='CLARABEL', options={}, time_limit=None, verbose=False)
    >>> SolverSpec.parse({"backend": "cvxpy", "solver": "SCS", "time_limit": 30}).time_limit
    30
    """

    backend: str
    solver: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    verbose: bool = False

    @classmethod
    def parse(cls, spec: "str | Mapping[str, Any] | SolverSpec | None", default: str = "highs",
              **overrides) -> "SolverSpec":
        """Build a spec from ``"backend[:solver]"``, a config mapping, or another spec.

        ``overrides`` (``time_limit``, ``verbose``, ``options``, ...) replace the spec's fields
        when not None; ``options`` are merged.
        """
        from fairopt.modeling.registry import backend_info
        if spec is None:
            spec = default
        if isinstance(spec, SolverSpec):
            base = spec
        elif isinstance(spec, str):
            backend, _, solver = spec.strip().partition(":")
            base = cls(backend=backend.strip().lower(), solver=solver.strip() or None)
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
        backend_info(base.backend)  # unknown back end: ConfigError listing the known ones
        if base.time_limit is not None:
            try:
                ok = float(base.time_limit) > 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ConfigError(f"time_limit must be a positive number of seconds, got "
                                  f"{base.time_limit!r}.")
        if not isinstance(base.options, Mapping):
            raise ConfigError(f"solver options must be a table/dict, got {base.options!r}.")
        return base

    def __str__(self) -> str:
        return self.backend + (f":{self.solver}" if self.solver else "")


def reject_unknown_options(where: str, options: Mapping[str, Any], valid) -> None:
    """:class:`ConfigError` naming the unknown option(s), close matches and the valid names."""
    import difflib
    valid = sorted(set(valid))
    unknown = sorted(set(options) - set(valid))
    if unknown:
        close = {u: difflib.get_close_matches(u, valid, n=2) for u in unknown}
        hint = "; ".join(f"{u!r}: did you mean {', '.join(map(repr, c))}?" for u, c in close.items() if c)
        raise ConfigError(f"{where} has no option(s) {unknown}" + (f" ({hint})" if hint else "")
                          + f". Valid options: {', '.join(valid)}.")

