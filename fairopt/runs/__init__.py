"""Model-card runners: one module per formulation, looked up by the card's ``formulation.name``.

A runner module implements :class:`~fairopt.runs.base.Runner`: pydantic models ``Data`` and
``Parameters`` for the card's tables, ``run(card, params, data, solver, progress) -> RunOutput``,
and optionally ``build(card, params, data) -> Program`` (for ``fairopt inspect`` and export),
``EXPORT_NOTE`` and ``FRONTIER``. It uses estimators through their public API only.

The CLI never imports formulations directly, so adding a formulation means adding one module
here and one line to ``RUNNERS``.
"""
from __future__ import annotations

import importlib
from typing import cast

from fairopt.errors import ConfigError
from fairopt.runs.base import Runner, RunOutput, Table

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
    "multiclass_debiasing": "fairopt.runs.multiclass_debiasing",
    "regression_debiasing": "fairopt.runs.regression_debiasing",
    "workload_balance": "fairopt.runs.workload",
}


def get_runner(name: str) -> Runner:
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
        return cast("Runner", importlib.import_module(RUNNERS[name]))
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a formulation is unfinished
        raise ConfigError(f"formulation {name!r} has no runner in this build ({exc}).") from exc


__all__ = ["RUNNERS", "RunOutput", "Runner", "Table", "get_runner"]
