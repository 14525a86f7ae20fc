"""Model-card runner of balanced filtering (``formulation.name = "balanced_filtering"``).

Loads Bank Marketing (sensitive = job) or Adult (sensitive = race), splits it 2/3–1/3, fits
:class:`fairopt.filtering.BalancedFilter` on the training part and reports disclosivity,
imbalance and the group proportions before and after filtering on both parts.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from fairopt.data import load_dataset
from fairopt.filtering import BalancedFilter
from fairopt.formulations.proxy_weights import ProxyWeights
from fairopt.modeling import SolverSpec, default_spec
from fairopt.runs.base import Progress, RunOutput, Table, split_rows

if TYPE_CHECKING:
    import pandas as pd

    from fairopt.modeling import Program
    from fairopt.runs.card import Card

#: data set -> (default sensitive attribute, task label the method never uses)
DATASETS = {"bank": ("job", "y"), "adult": ("race", "income")}


class Data(BaseModel):
    """``[data]``: which data set and where (default ``$FAIROPT_DATA_HOME``)."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["bank", "adult"] = "bank"
    path: str | None = None


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.filtering.BalancedFilter`."""

    model_config = ConfigDict(extra="forbid")
    alpha: float = Field(default=0.2, ge=0, le=1, description="disclosure budget")
    proxy: Literal["tree", "relaxed_tree", "regression", "decision_tree"] = "relaxed_tree"
    weights: Literal["qp", "naive"] = "qp"
    encoding: Literal["onehot", "ordinal"] = "onehot"
    split_bins: int = Field(default=5, ge=0, description="quantile bins per numeric column for the tree's split "
                            "oracle (0: the paper's plain linear oracle)")
    sensitive: str | None = Field(default=None, description="sensitive attribute (default: the data set's)")
    gamma: float = Field(default=0.1, gt=0, lt=1)
    max_height: int = Field(default=20, ge=1)
    stop_distance: float = Field(default=0.1, ge=0)
    test_size: float = Field(default=1 / 3, gt=0, lt=1)
    random_state: int = 0


def split(df: pd.DataFrame, test_size: float, random_state: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random train/test split of a frame (the paper's 2/3–1/3)."""
    test, train = split_rows(len(df), [test_size], np.random.default_rng(random_state))
    return df.iloc[train].reset_index(drop=True), df.iloc[test].reset_index(drop=True)


def _setup(params: Parameters, data: Data, solver: SolverSpec | None) -> tuple[str, pd.DataFrame, pd.DataFrame,
                                                                              BalancedFilter]:
    sensitive, label = DATASETS[data.dataset]
    sensitive = params.sensitive or sensitive
    df = load_dataset(data.dataset, data.path).drop(columns=[label])
    train, test = split(df, params.test_size, params.random_state)
    est = BalancedFilter(alpha=params.alpha, proxy=params.proxy, weights=params.weights,
                         solver=solver, encoding=params.encoding,
                         split_bins=params.split_bins or None,
                         gamma=params.gamma, max_height=params.max_height,
                         stop_distance=params.stop_distance, random_state=params.random_state)
    return sensitive, train, test, est


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The proxy-weights QP over the fitted proxy's cells (fits the proxy first)."""
    sensitive, train, _, est = _setup(params, data, None)
    est.fit(train, sensitive)
    return ProxyWeights(est.conditional_matrix_, est.cell_mass_, relaxed=params.proxy == "relaxed_tree",
                        name="proxy_weights").build()


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    sensitive, train, test, est = _setup(params, data, solver)
    build_seconds = time.perf_counter() - t0
    progress(0, 1, f"fitting the {params.proxy} proxy at alpha={params.alpha}")
    t1 = time.perf_counter()
    est.fit(train, sensitive)
    fit_seconds = time.perf_counter() - t1
    progress(1, 1, "done")
    ev_train, ev_test = est.evaluate(train, sensitive), est.evaluate(test, sensitive)
    rows = [[str(g), ev_train["prior"][k], ev_train["distribution"][k], ev_test["prior"][k],
             ev_test["distribution"][k]] for k, g in enumerate(est.groups_)]
    K = len(est.groups_)
    tree = getattr(est.proxy_, "records_", None)
    metrics = {
        "alpha": params.alpha, "n_groups": float(K), "n_cells": float(est.conditional_matrix_.shape[0]),
        "n_splits": float(len(tree)) if tree is not None else float("nan"),
        "disclosivity_train": ev_train["disclosivity"], "disclosivity_test": ev_test["disclosivity"],
        "imbalance_before_train": est.imbalance_before_, "imbalance_train": ev_train["imbalance"],
        "imbalance_before_test": float(np.linalg.norm(ev_test["prior"] - 1 / K)),
        "imbalance_test": ev_test["imbalance"],
        "acceptance_rate_train": ev_train["acceptance_rate"], "acceptance_rate_test": ev_test["acceptance_rate"],
        "smallest_group_gain_test": float(ev_test["distribution"].min() / max(ev_test["prior"].min(), 1e-12)),
    }
    # the K-column conditional matrix goes to result.json; the table keeps 80 columns readable
    top = est.conditional_matrix_.argmax(axis=1)
    cells = Table("Cells (train): mass, sampling probability rho, most frequent group",
                  ["cell", "mass", "rho", "top group", "Pr[top | cell]"],
                  [[j, est.cell_mass_[j], est.sampling_probabilities_[j], str(est.groups_[top[j]]),
                    est.conditional_matrix_[j, top[j]]] for j in range(est.conditional_matrix_.shape[0])])
    spec = SolverSpec.parse(solver or default_spec("QP"))
    return RunOutput(backend=spec.backend, solver=spec.solver or spec.backend,
                     status="optimal", metrics=metrics, build_seconds=build_seconds, solve_seconds=fit_seconds,
                     extra={"groups": [str(g) for g in est.groups_],
                            "conditional_matrix": est.conditional_matrix_.tolist()},
                     tables=[Table(f"Group proportions of {sensitive}: original vs filtered",
                                   ["group", "train orig.", "train filt.", "test orig.", "test filt."], rows), cells])
