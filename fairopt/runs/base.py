"""Shared types of the model-card runners."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

#: progress callback: ``progress(done, total, description)``
Progress = Callable[[int, int, str], None]


def no_progress(done: int, total: int, description: str = "") -> None:
    """Progress callback that ignores its arguments."""


@dataclass
class Table:
    """A small table printed by the CLI (and stored in ``result.json`` under ``tables``)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class RunOutput:
    """What a runner returns to the CLI.

    ``metrics`` must be a flat ``{name: float}`` mapping; ``status`` is a
    :class:`fairopt.modeling.Status` value string (``"optimal"``, ``"time_limit"``, ...).
    """

    backend: str
    solver: str
    status: str
    metrics: dict[str, float]
    build_seconds: float
    solve_seconds: float
    tables: list[Table] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
