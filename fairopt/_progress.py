"""Progress reporting of long loops (game iterations, sweeps).

Lives at the bottom of the package so that the orchestration layer (``fairopt.reductions``)
can report progress without importing the runners above it; ``fairopt.runs.base`` re-exports
both names.
"""
from __future__ import annotations

from collections.abc import Callable

#: progress callback: ``progress(done, total, description)``
Progress = Callable[[int, int, str], None]


def no_progress(done: int, total: int, description: str = "") -> None:
    """Progress callback that ignores its arguments.

    Examples
    --------
    >>> from fairopt.runs.base import no_progress
    >>> no_progress(3, 10, "fitting") is None    # the default when no progress bar is wanted
    True
    """
