"""Model-card runners: one module per formulation, looked up by the card's ``formulation.name``.

A runner module defines

``Parameters``
    a pydantic model (``extra="forbid"``) validating the card's ``[parameters]`` table;
``run(card, params, solver, progress) -> RunOutput``
    builds and solves the model described by the card;
``build(card, params) -> fairopt.modeling.Program`` (optional)
    the program solved, for ``fairopt inspect`` and LP/MPS export.

The CLI never imports formulations directly, so adding a formulation means adding one module
here and one line to ``RUNNERS``.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from fairopt.errors import ConfigError
from fairopt.runs.base import RunOutput, Table

#: formulation name -> runner module
RUNNERS: dict[str, str] = {
    "tv_repair": "fairopt.runs.tv_repair",
    "maxent": "fairopt.runs.maxent",
    "fair_regression": "fairopt.runs.fair_regression",
    "threshold_debiasing": "fairopt.runs.threshold_debiasing",
    "balanced_filtering": "fairopt.runs.balanced_filtering",
    "fair_logloss": "fairopt.runs.fair_logloss",
    "fair_selection": "fairopt.runs.fair_selection",
    "fair_ranking": "fairopt.runs.ranking",
    "regression_debiasing": "fairopt.runs.regression_debiasing",
}


def get_runner(name: str) -> ModuleType:
    """Return the runner module of formulation ``name``.

    Examples
    --------
    >>> get_runner("tv_repair").__name__
    'fairopt.runs.tv_repair'
    """
    if name not in RUNNERS:
        raise ConfigError(
            f"formulation.name = {name!r} is not a known formulation; "
            f"choose one of {sorted(RUNNERS)}."
        )
    try:
        return importlib.import_module(RUNNERS[name])
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a formulation is unfinished
        raise ConfigError(f"formulation {name!r} has no runner in this build ({exc}).") from exc


__all__ = ["RUNNERS", "RunOutput", "Table", "get_runner"]
