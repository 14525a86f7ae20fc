"""The catalogue of registered solvers: every back end's declaration (:data:`BACKENDS`, read from
:data:`fairopt.modeling.backends.NAMES`), which are installed here and which problem kinds they
take. :mod:`fairopt.modeling.registry` re-exports every name and resolves specs against it."""
from __future__ import annotations

import importlib
import importlib.util
from functools import cache
from types import ModuleType
from typing import Any

from fairopt.errors import ConfigError
from fairopt.modeling.backends import NAMES
from fairopt.modeling.spec import DEFAULT_ACCURACY, PROBLEM_CLASSES, BackendInfo

__all__ = ["BACKENDS", "available_backends", "backend_info", "backend_installed", "backends_for", "exact_specs",
           "inner_solvers", "installed_specs", "load_backend", "solver_table", "takes"]

#: every registered solver (back end) by name, in the order of :data:`fairopt.modeling.backends.NAMES`
BACKENDS: dict[str, BackendInfo] = {}


def _load_backends() -> None:
    for name in NAMES:
        info = importlib.import_module(f"fairopt.modeling.backends.{name}_backend").INFO
        if info.name != name:  # a packaging error, not a user's
            raise RuntimeError(f"back-end module {name}_backend declares the name {info.name!r}")
        BACKENDS[name] = info
    for p in PROBLEM_CLASSES:
        owners = [b.name for b in BACKENDS.values() if p in b.default_for]
        if len(owners) != 1:  # a packaging error, not a user's
            raise RuntimeError(f"problem class {p} needs exactly one default back end, found {owners}")


def backend_info(name: str) -> BackendInfo:
    """The declaration of back end ``name``; :class:`ConfigError` listing the known ones.

    Examples
    --------
    >>> backend_info("highs").default_solver["LP"]
    'highs'
    """
    if name not in BACKENDS:
        raise ConfigError(f"unknown solver back end {name!r}; choose one of {sorted(BACKENDS)} "
                          "(see `fairopt solvers`).")
    return BACKENDS[name]


def backends_for(problem_class: str) -> list[str]:
    """Back ends that declare some inner solver taking ``problem_class``.

    Examples
    --------
    >>> "sgd" in backends_for("threshold") and "sgd" not in backends_for("LP")
    True
    """
    return [b.name for b in BACKENDS.values() if problem_class in b.problem_classes]


@cache
def backend_installed(name: str) -> bool:
    """Whether the Python package behind back end ``name`` can be imported."""
    return importlib.util.find_spec(backend_info(name).module) is not None


@cache
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
    those the back end can take with the right inner solver; ``declared`` maps every declared
    inner solver to its problem classes (kinds); ``capabilities`` maps it to
    :meth:`BackendInfo.capabilities`.

    Examples
    --------
    >>> rows = available_backends()
    >>> "highs" in {row["backend"] for row in rows}
    True
    """
    return [{
        "backend": b.name,
        "installed": backend_installed(b.name),
        "solvers": list(inner_solvers(b.name)),
        "problem_classes": _classes_installed(b) if backend_installed(b.name) else list(b.problem_classes),
        "declared_classes": list(b.problem_classes),
        "declared": {s: list(c) for s, c in b.solvers.items()},
        "default_for": list(b.default_for),
        "description": b.description,
        "capabilities": {s: b.capabilities(s) for s in b.solvers},
    } for b in BACKENDS.values()]


def installed_specs(problem_class: str | None = None) -> list[str]:
    """``backend:solver`` strings that are installed and take ``problem_class``.

    Examples
    --------
    >>> "highs:highs" in installed_specs("LP")
    True
    """
    return [f"{b.name}:{s}" for b in BACKENDS.values() if backend_installed(b.name)
            for s in inner_solvers(b.name)
            if problem_class is None or problem_class in b.solvers.get(s, ())]


def exact_specs(problem_class: str | None = None) -> list[str]:
    """Installed ``backend:solver`` pairs taking ``problem_class`` whose declared accuracy is
    exact (``1e-6`` relative or better; first-order methods at their defaults are not).

    Examples
    --------
    >>> "highs:highs" in exact_specs("LP") and "cvxpy:SCS" not in exact_specs("LP")
    True
    """
    return [s for s in installed_specs(problem_class)
            if BACKENDS[s.split(":")[0]].solver_accuracy(s.split(":", 1)[1]) <= DEFAULT_ACCURACY]


def solver_table() -> list[dict[str, Any]]:
    """One record per registered (back end, inner solver): the kinds it accepts, whether it is
    installed, and its capabilities (:meth:`BackendInfo.capabilities`); what ``fairopt solvers``
    prints.

    Examples
    --------
    >>> rows = {(r["backend"], r["solver"]): r for r in solver_table()}
    >>> rows["column_generation", "column_generation"]["kinds"]
    ['colgen']
    >>> rows["native", "projected_gradient"]["kinds"], rows["sgd", "sgd"]["exact"]
    (['simplex_qp'], False)
    """
    rows = []
    for b in BACKENDS.values():
        have = inner_solvers(b.name)
        for s in b.solvers:
            rows.append({"backend": b.name, "solver": s, "installed": s in have,
                         "default_for": [k for k in b.default_for if b.default_solver.get(k) == s],
                         **b.capabilities(s)})
    return rows


def takes(backend: str, problem_class: str) -> bool:
    """Whether back end ``backend`` declares some inner solver for ``problem_class``.

    Examples
    --------
    >>> takes("native", "threshold"), takes("highs", "threshold")
    (True, False)
    """
    return problem_class in backend_info(backend).problem_classes


def load_backend(name: str) -> ModuleType:
    """Import the back-end module ``fairopt.modeling.backends.<name>_backend``."""
    backend_info(name)
    return importlib.import_module(f"fairopt.modeling.backends.{name}_backend")


_load_backends()
