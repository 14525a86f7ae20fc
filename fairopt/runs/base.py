"""Shared types of the model-card runners."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairopt._progress import Progress, no_progress

__all__ = ["Progress", "RunOutput", "Table", "no_progress"]


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
