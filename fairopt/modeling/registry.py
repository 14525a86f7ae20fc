"""The back-end registry: which back ends exist, which are installed, what each takes.

Back ends declare themselves (:data:`INFO` in each ``fairopt/modeling/backends/<name>_backend.py``,
found by scanning that package); formulations that own an algorithm (``native``, ``sgd``) register
it with :func:`register_algorithm`, and list their package in
``fairopt.formulations.ALGORITHM_OWNERS`` so that the registry can find it without importing
every formulation up front. :func:`check_spec` resolves a :class:`SolverSpec` against those
declarations, with no per-back-end special cases.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import lru_cache
from typing import Any

from fairopt.errors import ConfigError, SolverNotAvailableError, UnknownSolverError
from fairopt.modeling.spec import PROBLEM_CLASSES, BackendInfo, SolverSpec, reject_unknown_options

__all__ = ["BACKENDS", "PROBLEM_CLASSES", "BackendInfo", "SolverSpec", "available_backends",
           "backend_info", "backend_installed", "check_spec", "inner_solvers", "installed_specs",
           "load_backend", "register_algorithm", "reject_unknown_options"]

#: every known back end by name (module back ends, then registered algorithms)
BACKENDS: dict[str, BackendInfo] = {}
_ALGORITHMS_LOADED = False


def _scan_backends() -> None:
    import fairopt.modeling.backends as pkg
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.endswith("_backend"):
            info = getattr(importlib.import_module(f"{pkg.__name__}.{mod.name}"), "INFO", None)
            if info is not None:
                BACKENDS[info.name] = info


def register_algorithm(name: str, solver: str, problem_classes: tuple[str, ...],
                       description: str, module: str = "numpy", time_limit_key: str | None = None,
                       check_options=None) -> BackendInfo:
    """Register an algorithm a formulation owns (e.g. ``native`` Newton for max-entropy).

    Two formulations may register the same name: their inner solvers and problem classes merge.

    Examples
    --------
    >>> from fairopt.modeling import BACKENDS
    >>> info = register_algorithm("demo", "newton", ("smooth",), "a demo algorithm")
    >>> info.solvers, info.default_solver
    ({'newton': ('smooth',)}, {'smooth': 'newton'})
    >>> del BACKENDS["demo"]                            # leave the registry as it was
    """
    unknown = set(problem_classes) - set(PROBLEM_CLASSES)
    if unknown:
        raise ValueError(f"unknown problem classes {sorted(unknown)}")
    old = BACKENDS.get(name)
    solvers = dict(old.solvers) if old else {}
    solvers[solver] = tuple(sorted(set(solvers.get(solver, ())) | set(problem_classes),
                                   key=PROBLEM_CLASSES.index))
    defaults = {**(old.default_solver if old else {}), **{p: solver for p in problem_classes}}
    limits = {**(old.time_limit_key if old else {}), solver: time_limit_key}
    desc = description if old is None or description in old.description else \
        f"{old.description}; {description}"
    BACKENDS[name] = BackendInfo(name=name, module=module, description=desc, solvers=solvers,
                                 default_solver=defaults, time_limit_key=limits,
                                 check_options=check_options or (old.check_options if old else None))
    return BACKENDS[name]


def _load_algorithms() -> None:
    """Import the formulations that own algorithms (once), so their registrations run."""
    global _ALGORITHMS_LOADED
    if _ALGORITHMS_LOADED:
        return
    _ALGORITHMS_LOADED = True
    owners = getattr(importlib.import_module("fairopt.formulations"), "ALGORITHM_OWNERS", ())
    for owner in owners:
        importlib.import_module(owner)


def backend_info(name: str) -> BackendInfo:
    """The declaration of back end ``name``; :class:`ConfigError` listing the known ones."""
    if name not in BACKENDS:
        _load_algorithms()
    if name not in BACKENDS:
        raise ConfigError(f"unknown solver back end {name!r}; choose one of {sorted(BACKENDS)} "
                          "(see `fairopt solvers`).")
    return BACKENDS[name]


@lru_cache(maxsize=None)
def backend_installed(name: str) -> bool:
    """Whether the Python package behind back end ``name`` can be imported."""
    return importlib.util.find_spec(backend_info(name).module) is not None


@lru_cache(maxsize=None)
def inner_solvers(backend: str) -> tuple[str, ...]:
    """Inner solvers of ``backend`` available on this machine."""
    info = backend_info(backend)
    if not backend_installed(backend):
        return ()
    return tuple(info.probe()) if info.probe is not None else tuple(info.solvers)


def _classes_installed(info: BackendInfo) -> list[str]:
    have = inner_solvers(info.name)
    return [p for p in PROBLEM_CLASSES if any(p in info.solvers.get(s, ()) for s in have)]


def available_backends() -> list[dict[str, Any]]:
    """One record per back end: name, installed, inner solvers, problem classes.

    ``problem_classes`` are those an *installed* inner solver takes (pyomo takes smooth
    problems only when an NLP solver such as Ipopt is installed); ``declared_classes`` are
    those the back end can take with the right inner solver.

    Examples
    --------
    >>> rows = available_backends()
    >>> "highs" in {row["backend"] for row in rows}
    True
    """
    _load_algorithms()
    return [{
        "backend": b.name,
        "installed": backend_installed(b.name),
        "solvers": list(inner_solvers(b.name)),
        "problem_classes": _classes_installed(b) if backend_installed(b.name) else list(b.problem_classes),
        "declared_classes": list(b.problem_classes),
        "description": b.description,
    } for b in BACKENDS.values()]


def installed_specs(problem_class: str | None = None) -> list[str]:
    """``backend:solver`` strings that are installed and take ``problem_class``.

    Examples
    --------
    >>> "highs:highs" in installed_specs("LP")
    True
    """
    _load_algorithms()
    return [f"{b.name}:{s}" for b in BACKENDS.values() if backend_installed(b.name)
            for s in inner_solvers(b.name)
            if problem_class is None or problem_class in b.solvers.get(s, ())]


def check_spec(spec: SolverSpec, problem_class: str) -> SolverSpec:
    """Resolve ``spec`` for ``problem_class``: fill in the default inner solver, check that it is
    known (:class:`ConfigError` listing valid names), installed and takes the class
    (:class:`SolverNotAvailableError` listing installed alternatives), that its options are
    valid, and that a time limit can be honoured.

    Examples
    --------
    >>> from fairopt.modeling import SolverSpec
    >>> check_spec(SolverSpec.parse("cvxpy"), "LP")     # the default inner solver is filled in
    SolverSpec(backend='cvxpy', solver='CLARABEL', options={}, time_limit=None, verbose=False)
    """
    info = backend_info(spec.backend)

    def unavailable(message: str) -> SolverNotAvailableError:
        # probing the other back ends imports them: only do it when reporting an error
        return SolverNotAvailableError(message, installed_specs(problem_class))
    if not backend_installed(spec.backend):
        raise unavailable(
            f"back end {spec.backend!r} needs the Python package {info.module!r}, which is not "
            f"installed (pip install {info.module}).")
    if problem_class not in info.problem_classes:
        raise unavailable(f"back end {spec.backend!r} does not take {problem_class} problems "
                          f"(it takes {', '.join(info.problem_classes)}).")
    installed = inner_solvers(spec.backend)
    if spec.solver is None:
        solver = info.default_solver.get(problem_class)
        if solver not in installed:  # e.g. cvxpy without CLARABEL: first installed that fits
            solver = next((s for s in installed if problem_class in info.solvers.get(s, ())), solver)
    else:
        solver = info.canonical_solver(str(spec.solver))
        if solver is None:
            raise UnknownSolverError(
                f"{spec.backend} has no inner solver {spec.solver!r}; valid names: "
                f"{', '.join(info.solvers)} (installed here: {', '.join(installed) or 'none'}).",
                installed_specs(problem_class))
    if solver not in installed:
        raise unavailable(f"{spec.backend} solver {solver!r} is not installed on this machine.")
    if problem_class not in info.solvers.get(solver, ()):
        raise unavailable(f"{spec.backend} solver {solver!r} does not take {problem_class} problems "
                          f"(it takes {', '.join(info.solvers[solver])}).")
    if spec.time_limit is not None and info.time_limit_key.get(solver, "") is None:
        raise ConfigError(f"{spec.backend}:{solver} cannot honour time_limit; drop it or choose "
                          "a solver that can (e.g. highs, osqp, cvxpy:CLARABEL).")
    if spec.options and info.check_options is not None:
        info.check_options(solver, dict(spec.options))
    if solver != spec.solver:
        spec = SolverSpec(spec.backend, solver, spec.options, spec.time_limit, spec.verbose)
    return spec


def load_backend(name: str):
    """Import the back-end module ``fairopt.modeling.backends.<name>_backend``."""
    return importlib.import_module(f"fairopt.modeling.backends.{name}_backend")


_scan_backends()
