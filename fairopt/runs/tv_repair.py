"""Model-card runner of the TV repair (``formulation.name = "tv_repair"``)."""
from __future__ import annotations

import time
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fairopt.data import BUILTIN_SPECS, load_builtin, load_dataset
from fairopt.formulations.tv_repair import TVRepair
from fairopt.modeling import SolverSpec
from fairopt.runs.base import FrontierSpec, Progress, RunOutput, Table


#: what `fairopt frontier` plots: moved mass against the fairness reached
FRONTIER = FrontierSpec("tv_distance", "min", {"statistical_rate_after": "max", "representation_rate_after": "max"})


class Data(BaseModel):
    """``[data]``: a built-in domain, or the shared file it is counted from.

    ``dataset = "builtin:compas"`` (or ``"builtin:adult"``) uses the counts shipped in the package;
    ``dataset = "compas"`` / ``"adult"`` recounts the same domain from the benchmark file at
    ``path`` or in ``$FAIROPT_DATA_HOME``.
    """

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["builtin:compas", "builtin:adult", "compas", "adult"] = "builtin:compas"
    path: str | None = None


class Parameters(BaseModel):
    """``[parameters]`` of the TV repair; see :class:`fairopt.formulations.tv_repair.TVRepair`."""

    model_config = ConfigDict(extra="forbid")
    protected: str | None = Field(default=None, description="protected attribute (default: the data set's)")
    favourable_label: int | None = Field(default=None, description="favourable outcome (default: the data set's)")
    statistical_rate: float | None = Field(default=None, gt=0, le=1)
    sr_difference: float | None = Field(default=None, ge=0, le=1)
    representation: Literal["data", "balanced"] = "data"
    form: Literal["aggregated", "full"] = "aggregated"

    @model_validator(mode="after")
    def _one_form(self):
        if self.statistical_rate is not None and self.sr_difference is not None:
            raise ValueError("give statistical_rate (ratio form) or sr_difference (difference form), not both")
        return self


def _model(data: Data, params: Parameters) -> TVRepair:
    name = data.dataset.split(":")[-1]
    spec = BUILTIN_SPECS[name]
    if data.dataset.startswith("builtin:"):
        cells, counts = load_builtin(name).codes()
    else:
        raw = load_dataset(spec.source_dataset, data.path)
        cells, counts = spec.domain.unique_codes(spec.to_levels(raw))
    return TVRepair(spec.domain, cells, counts, protected=params.protected or spec.protected,
                    label=spec.label,
                    favourable_label=spec.favourable_label if params.favourable_label is None
                    else params.favourable_label,
                    statistical_rate=params.statistical_rate, sr_difference=params.sr_difference,
                    representation=params.representation, form=params.form, name="tv_repair")


def build(card, params: Parameters, data: Data):
    return _model(data, params).build()


def run(card, params: Parameters, data: Data, solver: SolverSpec | None,
        progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    model = _model(data, params)
    progress(0, 1, "solving TV repair LP")
    res = model.solve(solver or "highs")
    progress(1, 1, "done")
    blocks = res.blocks
    groups = blocks[model.protected].unique()
    fav = blocks[blocks[model.label] == model.favourable_label].set_index(model.protected)
    mass = blocks.groupby(model.protected, sort=False)[["raw_mass", "repaired_mass"]].sum()
    rows = [["statistical rate", res.statistical_rate["before"], res.statistical_rate["after"]],
            ["representation rate", res.representation_rate["before"], res.representation_rate["after"]]]
    for g in groups:
        rows.append([f"P({model.label}={model.favourable_label} | {model.protected}={g})",
                     fav.loc[g, "raw_mass"] / mass.loc[g, "raw_mass"],
                     fav.loc[g, "repaired_mass"] / mass.loc[g, "repaired_mass"]])
    metrics = {
        "tv_distance": res.tv,
        "statistical_rate_before": res.statistical_rate["before"],
        "statistical_rate_after": res.statistical_rate["after"],
        "representation_rate_before": res.representation_rate["before"],
        "representation_rate_after": res.representation_rate["after"],
        "price_of_fairness": res.price_of_fairness,
        "domain_size": float(model.domain.size),
        "observed_cells": float(len(model.cells)),
        "setup_seconds": time.perf_counter() - t0 - res.solve_seconds,
    }
    duals = Table("Price of fairness: dual of each statistical-rate row",
                  ["pair", "dual"], [[k, float(v)] for k, v in res.fairness_duals.items()])
    return RunOutput(backend=res.solution.backend, solver=res.solution.solver, status=res.status,
                     metrics=metrics, build_seconds=res.build_seconds, solve_seconds=res.solve_seconds,
                     tables=[Table("Fairness before and after TV repair", ["quantity", "before", "after"], rows),
                             duals],
                     extra={"blocks": res.blocks.to_dict(orient="records")},
                     parameters={"protected": model.protected, "favourable_label": model.favourable_label})
