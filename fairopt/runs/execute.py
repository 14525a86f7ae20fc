"""Run one validated model card and describe the outcome as its ``result.json`` record.

Shared by ``fairopt run`` (which prints the record) and the sweep tasks (which store one record
per task), so both write the same keys and map statuses to the same exit codes.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fairopt._version import __version__
from fairopt.errors import InfeasibleError, SolverError
from fairopt.modeling.registry import accepts, capabilities, iteration_limit_option, resolve_solver
from fairopt.runs.base import Progress, no_progress

if TYPE_CHECKING:
    from fairopt.runs.card import Card

#: statuses of a run that stopped at a limit before proving optimality (exit code 3)
LIMIT_STATUSES = ("time_limit", "iteration_limit")


def exit_code(status: str | None) -> int:
    """0 optimal; 3 a time or iteration limit was hit; 1 anything else (infeasible, solver failure)."""
    if status == "optimal":
        return 0
    return 3 if status in LIMIT_STATUSES else 1


def solver_label(backend: str | None, solver: str | None) -> str:
    """``cvxpy:CLARABEL``, or just ``highs`` when the inner solver is the back end itself."""
    if not solver or solver == backend:
        return str(backend)
    return f"{backend}:{solver}"


def json_safe(obj: Any) -> Any:
    """Floats that JSON cannot hold (nan, inf) become null; numpy scalars become Python."""
    if isinstance(obj, dict):
        return json_safe_record(obj)
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_safe_record(record: Mapping[Any, Any]) -> dict[str, Any]:
    """:func:`json_safe` of a mapping: a JSON object with text keys."""
    return {str(k): json_safe(v) for k, v in record.items()}


def limit_hint(card: Card, status: str | None, solver_stopped: bool = False) -> str | None:
    """Which card key to raise after a limit, in ``--set`` form (``None`` for other statuses).

    ``solver_stopped``: the solver raised at its own limit (raise a solver option), rather than
    the formulation's loop stopping at ``parameters.max_iter``.
    """
    if status == "iteration_limit":
        spec = card.solver
        options = getattr(spec, "options", None) or {}
        for key, value in options.items():              # a limit the card set on the solver
            if "iter" in key and isinstance(value, (int, float)):
                return f"raise the iteration limit: --set solver.options.{key}={max(2 * int(value), 1000)}"
        backend = str(getattr(spec, "backend", "") or "")
        params: Any = card.parameters   # the formulation's own model: its fields are checked by name below
        fields = type(params).model_fields
        if "sgd_steps" in fields and spec is not None and accepts(spec, "threshold") \
                and not capabilities(resolve_solver(spec, "threshold"))["exact"]:   # the card's stochastic steps
            return f"raise the iteration limit: --set parameters.sgd_steps={2 * params.sgd_steps}"
        key = iteration_limit_option(backend, getattr(spec, "solver", None)) if backend else None
        if solver_stopped and key:   # the back end declares its own iteration-limit option
            return (f"raise the {backend} iteration limit (--set solver.options.{key}"
                    "=...) or choose another solver with --solver")
        if "max_iter" in fields:
            return f"raise the iteration limit: --set parameters.max_iter={max(2 * int(params.max_iter), 10)}"
        return "raise the solver's iteration limit (--set solver.options.<limit>=...)"
    if status == "time_limit":
        current = getattr(card.solver, "time_limit", None)
        value = f"{max(2 * current, 60):g}" if current else "600"
        return f"raise the time limit: --set solver.time_limit={value}"
    return None


def _split_timings(metrics: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """Durations reported by a runner (``*_seconds``) belong under ``timings``, not ``metrics``."""
    timings = {k: v for k, v in metrics.items() if "seconds" in k}
    return {k: v for k, v in metrics.items() if k not in timings}, timings


def execute(card: Card, progress: Progress = no_progress) -> dict[str, Any]:
    """Run ``card`` and return its ``result.json`` record (never raises for infeasible or failed
    solves: those are results with ``status`` and ``error``)."""
    t0 = time.perf_counter()
    params = card.parameters.model_dump(mode="json")
    result: dict[str, Any] = {"card": card.name, "card_path": str(card.path), "formulation": card.formulation,
                              "fairopt_version": __version__, "parameters": params,
                              "data": card.data.model_dump(mode="json")}
    try:
        output = card.runner.run(card, card.parameters, card.data, card.solver, progress)
    except SolverError as exc:
        status = "infeasible" if isinstance(exc, InfeasibleError) else str(exc.status or "error")
        # the card's spec, parsed once when the card was read; its fields travel as they are
        backend = card.solver.backend if card.solver else None
        solver = card.solver.solver if card.solver else None
        result.update(status=status, backend=backend, solver=solver, metrics={}, undefined_metrics=[],
                      error=str(exc), tables=[], extra={},
                      timings={"build_seconds": None, "solve_seconds": None,
                               "total_seconds": time.perf_counter() - t0})
        if isinstance(exc, InfeasibleError):
            result.update(infeasible_constraint=exc.constraint, tightest=exc.tightest)
        hint = limit_hint(card, status, solver_stopped=True)
        if hint:
            result["hint"] = hint
        return json_safe_record(result)
    metrics, timings = _split_timings({k: float(v) for k, v in output.metrics.items()})
    undefined = sorted(k for k, v in metrics.items() if not math.isfinite(v))
    backend, solver = output.backend, output.solver   # typed fields: the back end and its inner solver
    # the values the run actually used (e.g. a data set's default favourable label)
    params.update(getattr(output, "parameters", None) or {})
    result.update(backend=backend, solver=solver, status=str(output.status),
                  # metrics stay a flat dict of finite floats; undefined ones are listed by name
                  metrics={k: v for k, v in metrics.items() if k not in undefined},
                  undefined_metrics=undefined,
                  timings={"build_seconds": output.build_seconds, "solve_seconds": output.solve_seconds,
                           "total_seconds": time.perf_counter() - t0, **timings},
                  tables=[{"title": t.title, "columns": list(t.columns), "rows": t.rows} for t in output.tables],
                  extra=output.extra)
    hint = limit_hint(card, result["status"])
    if hint:
        result["hint"] = hint
    if output.extra.get("notes"):         # what the run decided on its own (e.g. stayed serial)
        result["notes"] = list(output.extra["notes"])
    return json_safe_record(result)
