"""Model-card runner of the TV repair (``formulation.name = "tv_repair"``).

``parameters.model = "simple"`` (default) solves the distribution baseline (:class:`TVRepair`);
``"mapping"`` solves Calmon et al.'s optimized pre-processing mapping
(:class:`OptimizedPreprocessing`) with discrimination and distortion control.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fairopt.data import BUILTIN_SPECS, load_builtin, load_dataset
from fairopt.errors import ConfigError
from fairopt.formulations.tv_repair import OptimizedPreprocessing, TVRepair
from fairopt.modeling import SolverSpec, default_spec
from fairopt.runs.base import FrontierSpec, Progress, RunOutput, Table

if TYPE_CHECKING:
    import numpy as np

    from fairopt.data.builtin import BuiltinSpec
    from fairopt.modeling import Program
    from fairopt.runs.card import Card

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
    representation: Literal["data", "balanced"] | list[float] = Field(
        default="data", description='"data", "balanced", or the group masses, e.g. [0.5, 0.5]')
    form: Literal["aggregated", "full"] = "aggregated"
    # --- the full mapping (model = "mapping"); see OptimizedPreprocessing
    model: Literal["simple", "mapping"] = Field(default="simple", description="distribution baseline or mapping")
    features: list[str] | None = Field(default=None, description="X (default: all other attributes)")
    discrimination: Literal["ratio", "target", "additive"] = "ratio"
    epsilon: float = Field(default=0.05, ge=0)
    distortion: str | dict[str, Any] | None = Field(default=None, description="built-in name or rule table")
    clist: list[float] = Field(default_factory=list)
    dlist: list[float] = Field(default_factory=list)
    max_expected_distortion: float | dict[str, float] | None = None
    conditioning: Literal["dxy", "xy"] = "dxy"
    utility: Literal["xy", "dxy"] = "xy"
    divergence: Literal["tv", "kl"] = "tv"
    columns: Literal["all", "observed"] = "all"

    @model_validator(mode="after")
    def _one_form(self) -> Parameters:
        if self.statistical_rate is not None and self.sr_difference is not None:
            raise ValueError("give statistical_rate (ratio form) or sr_difference (difference form), not both")
        simple_only = {"statistical_rate", "sr_difference", "representation", "form"}
        mapping_only = {"features", "discrimination", "epsilon", "distortion", "clist", "dlist",
                        "max_expected_distortion", "conditioning", "utility", "divergence", "columns"}
        wrong = (mapping_only if self.model == "simple" else simple_only) & self.model_fields_set
        if wrong:
            raise ValueError(f"{sorted(wrong)} do not apply to model = {self.model!r}")
        return self


def _counts(data: Data) -> tuple[BuiltinSpec, np.ndarray, np.ndarray]:
    name = data.dataset.split(":")[-1]
    spec = BUILTIN_SPECS[name]
    if data.dataset.startswith("builtin:"):
        cells, counts = load_builtin(name).codes()
    else:
        raw = load_dataset(spec.source_dataset, data.path)
        cells, counts = spec.domain.unique_codes(spec.to_levels(raw))
    return spec, cells, counts


def _mapping(data: Data, params: Parameters) -> OptimizedPreprocessing:
    spec, cells, counts = _counts(data)
    if params.favourable_label is not None and params.favourable_label not in spec.domain.levels[spec.label]:
        raise ConfigError(f"parameters.favourable_label = {params.favourable_label!r} is not a level of "
                          f"{spec.label!r}.")
    return OptimizedPreprocessing(
        spec.domain, cells, counts, protected=params.protected or spec.protected, label=spec.label,
        features=params.features, favourable_label=spec.favourable_label if params.favourable_label is None
        else params.favourable_label, discrimination=params.discrimination, epsilon=params.epsilon,
        distortion=params.distortion, clist=params.clist, dlist=params.dlist,
        max_expected_distortion=params.max_expected_distortion, conditioning=params.conditioning,
        utility=params.utility, divergence=params.divergence, columns=params.columns, name="tv_repair_mapping")


def _model(data: Data, params: Parameters) -> OptimizedPreprocessing | TVRepair:
    if params.model == "mapping":
        return _mapping(data, params)
    spec, cells, counts = _counts(data)
    return TVRepair(spec.domain, cells, counts, protected=params.protected or spec.protected,
                    label=spec.label,
                    favourable_label=spec.favourable_label if params.favourable_label is None
                    else params.favourable_label,
                    statistical_rate=params.statistical_rate, sr_difference=params.sr_difference,
                    representation=params.representation, form=params.form, name="tv_repair")


def build(card: Card, params: Parameters, data: Data) -> Program:
    return _model(data, params).build()


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None,
        progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    model = _model(data, params)
    if isinstance(model, OptimizedPreprocessing):   # params.model == "mapping"
        return _run_mapping(model, params, solver, progress, t0)
    progress(0, 1, "solving TV repair LP")
    res = model.solve(solver or default_spec("LP"))
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
    duals = Table("Dual of each statistical-rate row, per group pair (d TV*/d bound); "
                  "d TV*/d tau (metrics.price_of_fairness) weighs each |dual| by its reference group's rate",
                  ["pair", "dual"], [[k, float(v)] for k, v in res.fairness_duals.items()])
    target = (f"statistical rate >= {params.statistical_rate:g}" if params.statistical_rate is not None else
              f"rate difference <= {params.sr_difference:g}" if params.sr_difference is not None else "none")
    return RunOutput(backend=res.solution.backend, solver=res.solution.solver, status=res.status,
                     metrics=metrics, build_seconds=res.build_seconds, solve_seconds=res.solve_seconds,
                     tables=[Table(f"Fairness before and after TV repair (target: {target})",
                                   ["quantity", "before", "after"], rows), duals],
                     extra={"blocks": res.blocks.to_dict(orient="records")},
                     parameters={"protected": model.protected, "favourable_label": model.favourable_label})


def _run_mapping(model: OptimizedPreprocessing, params: Parameters, solver: SolverSpec | None, progress: Progress,
                 t0: float) -> RunOutput:
    progress(0, 1, "solving the optimized pre-processing mapping")
    res = model.solve(solver)   # None: the formulation asks the registry (KL: its cvxpy form)
    progress(1, 1, "done")
    fav = res.rates[res.rates[model.label] == model.favourable_label]
    ratio = {k: float(fav[k].min() / fav[k].max()) if fav[k].max() > 0 else 1.0 for k in ("before", "after")}
    gap = {k: float(fav[k].max() - fav[k].min()) for k in ("before", "after")}
    share = model.q_group[model.groups]   # D is copied through: the representation rate never changes
    metrics = {"utility_loss": res.objective, "representation_rate_before": float(share.min() / share.max()),
               "representation_rate_after": float(share.min() / share.max()),
               "statistical_rate_before": ratio["before"],
               "statistical_rate_after": ratio["after"], "rate_difference_before": gap["before"],
               "rate_difference_after": gap["after"], "d_objective_d_epsilon": res.d_objective_d_epsilon,
               "mapping_variables": float(model.n_variables), "dense_variables": float(model.n_dense),
               "observed_rows": float(len(model.q)),
               "setup_seconds": time.perf_counter() - t0 - res.solve_seconds}
    metrics.update({f"distortion_{k}": v for k, v in res.distortion.items()})
    if params.divergence == "tv":
        metrics["tv_distance"] = res.objective   # the name the frontier plots use
    rate_rows = [[f"P({model.label}={r[model.label]} | {model.protected}={r[model.protected]})", r["before"],
                  r["after"]] for r in res.rates.to_dict(orient="records")]
    price = Table("Price of fairness: discrimination duals per group pair",
                  ["pair", "sum |dual|", "d objective / d eps"],
                  [[r["pair"], r["sum_abs_dual"], r["d_objective_d_epsilon"]]
                   for r in res.price_of_fairness.to_dict(orient="records")])
    assert res.solution is not None  # a solved mapping carries its solution
    return RunOutput(backend=res.solution.backend, solver=res.solution.solver, status=res.status,
                     metrics=metrics, build_seconds=res.build_seconds, solve_seconds=res.solve_seconds,
                     tables=[Table("Label rates before and after the mapping", ["quantity", "before", "after"],
                                   rate_rows), price],
                     extra={"approximations": res.approximations,
                            "rates": res.rates.to_dict(orient="records")})
