"""fairopt: fairness interventions as declarative, solver-backed optimization models.

The package root is a thin facade: ``import fairopt`` loads no numerical library. The names below
are imported on first use.

Examples
--------
>>> import fairopt
>>> callable(fairopt.frontier)
True
"""
from __future__ import annotations

import importlib
from typing import Any

from fairopt import errors
from fairopt._version import __version__

__all__ = ["Frontier", "__version__", "errors", "frontier"]

#: public names imported on first access, by the module that defines them
_LAZY = {"frontier": "fairopt.frontiers", "Frontier": "fairopt.frontiers"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'fairopt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
