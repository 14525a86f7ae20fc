"""Solver specifications and the back-end registry.

A solver is named ``"backend"`` or ``"backend:solver"`` (``"cvxpy:CLARABEL"``,
``"pyomo:appsi_highs"``), or given as a table ``{backend=..., solver=..., options={...},
time_limit=...}`` in a model card. The registry knows which back ends are importable, which
inner solvers each can reach, and which problem classes each accepts.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from fairopt.errors import ConfigError, SolverNotAvailableError

#: problem classes: "LP" (linear), "QP" (convex quadratic objective, linear constraints),
#: "smooth" (the max-entropy dual and other smooth convex models solved by formulation-specific
#: algorithms), "threshold" (randomized-threshold post-processing solved exactly or by SGD)
PROBLEM_CLASSES = ("LP", "QP", "smooth", "threshold")


@dataclass(frozen=True)
class BackendInfo:
    name: str
    module: str            # python package that must import
    problem_classes: tuple[str, ...]
    description: str
    default_solver: str | None = None


BACKENDS: dict[str, BackendInfo] = {
    "highs": BackendInfo("highs", "highspy", ("LP", "QP"),
                         "HiGHS through highspy, model passed as CSC arrays; warm starts", "highs"),
    "osqp": BackendInfo("osqp", "osqp", ("LP", "QP"), "OSQP operator-splitting QP solver", "osqp"),
    "scipy": BackendInfo("scipy", "scipy", ("LP", "smooth"),
                         "scipy.optimize: linprog for LPs, trust-region/L-BFGS for smooth duals", "highs"),
    "native": BackendInfo("native", "numpy", ("smooth", "threshold"),
                          "fairopt's own vectorised algorithms (max-ent Newton, exact threshold roots)",
                          "native"),
    "sgd": BackendInfo("sgd", "numpy", ("threshold",),
                       "projected stochastic gradient with averaging (streaming threshold debiasing)", "sgd"),
    "cvxpy": BackendInfo("cvxpy", "cvxpy", ("LP", "QP", "smooth"), "cvxpy Problem; any installed cvxpy solver",
                         None),
    "pyomo": BackendInfo("pyomo", "pyomo", ("LP", "QP", "smooth"),
                         "pyomo ConcreteModel with named indexed components; any pyomo solver",
                         "appsi_highs"),
}

#: pyomo solver names probed by :func:`pyomo_solvers`
PYOMO_CANDIDATES = ("appsi_highs", "highs", "ipopt", "gurobi", "gurobi_direct", "cplex", "cbc",
                    "glpk", "scip", "xpress")


@dataclass(frozen=True)
class SolverSpec:
    """A back end, an optional inner solver, and options.

    Parameters
    ----------
    backend : str
        One of :data:`BACKENDS`.
    solver : str, optional
        Inner solver of the back end (cvxpy and pyomo only; e.g. ``"CLARABEL"``).
    options : mapping, optional
        Passed to the solver untouched (HiGHS option names, OSQP settings, cvxpy
        ``solve`` keywords, pyomo solver options).
    time_limit : float, optional
        Wall-clock limit in seconds; reaching it yields ``Status.TIME_LIMIT``.
    verbose : bool
        Show the solver's own log.
    """

    backend: str
    solver: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    verbose: bool = False

    @classmethod
    def parse(cls, spec: "str | Mapping[str, Any] | SolverSpec | None", default: str = "highs",
              **overrides) -> "SolverSpec":
        """Build a spec from ``"backend[:solver]"``, a config mapping, or another spec."""
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
            base = cls(backend=str(spec["backend"]).lower(), solver=spec.get("solver"),
                       options=dict(spec.get("options") or {}), time_limit=spec.get("time_limit"),
                       verbose=bool(spec.get("verbose", False)))
        else:
            raise ConfigError(f"cannot read a solver from {spec!r}; use 'backend[:solver]'.")
        if base.backend not in BACKENDS:
            raise ConfigError(f"unknown solver back end {base.backend!r}; choose one of "
                              f"{sorted(BACKENDS)} (see `fairopt solvers`).")
        if base.time_limit is not None and not base.time_limit > 0:
            raise ConfigError(f"time_limit must be positive, got {base.time_limit!r}.")
        if overrides:
            fields = {k: v for k, v in overrides.items() if v is not None}
            if "options" in fields:
                fields["options"] = {**base.options, **fields["options"]}
            base = SolverSpec(**{**base.__dict__, **fields})
        return base

    def __str__(self) -> str:
        return self.backend + (f":{self.solver}" if self.solver else "")


@lru_cache(maxsize=None)
def backend_installed(name: str) -> bool:
    """Whether the Python package behind back end ``name`` can be imported."""
    return importlib.util.find_spec(BACKENDS[name].module) is not None


@lru_cache(maxsize=None)
def cvxpy_solvers() -> tuple[str, ...]:
    if not backend_installed("cvxpy"):
        return ()
    import cvxpy as cp
    return tuple(cp.installed_solvers())


@lru_cache(maxsize=None)
def pyomo_solvers() -> tuple[str, ...]:
    """Names of pyomo solvers that report themselves available on this machine."""
    if not backend_installed("pyomo"):
        return ()
    import logging

    import pyomo.environ as pyo
    found = []
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    for name in PYOMO_CANDIDATES:
        try:
            if pyo.SolverFactory(name).available(exception_flag=False):
                found.append(name)
        except Exception:  # a broken plugin is "not available", never a crash
            continue
    return tuple(found)


def inner_solvers(backend: str) -> tuple[str, ...]:
    if backend == "cvxpy":
        return cvxpy_solvers()
    if backend == "pyomo":
        return pyomo_solvers()
    default = BACKENDS[backend].default_solver
    return (default,) if default and backend_installed(backend) else ()


def available_backends() -> list[dict[str, Any]]:
    """One record per back end: name, installed, inner solvers, problem classes."""
    return [{
        "backend": b.name,
        "installed": backend_installed(b.name),
        "solvers": list(inner_solvers(b.name)) if backend_installed(b.name) else [],
        "problem_classes": list(b.problem_classes),
        "description": b.description,
    } for b in BACKENDS.values()]


def installed_specs(problem_class: str | None = None) -> list[str]:
    """``backend:solver`` strings that are installed (and take ``problem_class``)."""
    out = []
    for b in BACKENDS.values():
        if not backend_installed(b.name):
            continue
        if problem_class and problem_class not in b.problem_classes:
            continue
        out.extend(f"{b.name}:{s}" for s in inner_solvers(b.name))
    return out


_CVXPY_QP = {"CLARABEL", "SCS", "OSQP", "ECOS", "MOSEK", "GUROBI", "CPLEX", "PIQP", "PROXQP",
             "QOCO", "XPRESS", "COPT", "DAQP", "HIGHS"}


def check_spec(spec: SolverSpec, problem_class: str) -> SolverSpec:
    """Raise :class:`SolverNotAvailableError` unless ``spec`` can solve ``problem_class``.

    Fills in the default inner solver when the spec names none.
    """
    info = BACKENDS[spec.backend]

    def unavailable(message: str) -> SolverNotAvailableError:
        # probing the other back ends imports them: only do it when reporting an error
        return SolverNotAvailableError(message, installed_specs(problem_class))
    if not backend_installed(spec.backend):
        raise unavailable(
            f"back end {spec.backend!r} needs the Python package {info.module!r}, which is not "
            f"installed (pip install {info.module}).")
    if problem_class not in info.problem_classes:
        raise unavailable(
            f"back end {spec.backend!r} does not take {problem_class} problems "
            f"(it takes {', '.join(info.problem_classes)}).")
    solver = spec.solver or info.default_solver
    solvers = inner_solvers(spec.backend) if spec.backend in ("cvxpy", "pyomo") else (solver,)
    if spec.backend == "cvxpy":
        if solver is None:
            solver = "CLARABEL" if "CLARABEL" in solvers else (solvers[0] if solvers else None)
        solver = solver.upper() if solver else None
        if problem_class == "QP" and solver not in _CVXPY_QP:
            raise unavailable(f"cvxpy solver {solver!r} does not take QP problems.")
    if spec.backend == "pyomo" and problem_class == "QP" and spec.solver is None:
        solver = "highs"  # appsi_highs passes only linear objectives
    if spec.backend == "pyomo" and problem_class == "QP" and solver in ("glpk", "cbc", "appsi_highs"):
        raise unavailable(f"pyomo solver {solver!r} does not take QP problems.")
    if spec.backend in ("cvxpy", "pyomo") and solver not in solvers:
        raise unavailable(
            f"{spec.backend} solver {solver!r} is not installed on this machine.")
    if solver != spec.solver:
        spec = SolverSpec(spec.backend, solver, spec.options, spec.time_limit, spec.verbose)
    return spec


def load_backend(name: str):
    """Import the back-end module ``fairopt.modeling.backends.<name>``."""
    return importlib.import_module(f"fairopt.modeling.backends.{name}_backend")
