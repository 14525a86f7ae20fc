"""Model-card runner of exposure-fair ranking (``formulation.name = "fair_ranking"``).

Law school admissions data (LSAC): a ridge regression trained on one split predicts each
student's first-year grade (``zfya``) from LSAT and undergraduate GPA; the other split is the pool
from which ``n_queries`` candidate lists of ``query_size`` students are drawn. Each list is
ranked by predicted grade (relevance = predicted grade shifted to be nonnegative), and then with
group fairness of exposure across the protected attribute (:func:`fairopt.ranking.fair_ranking`,
column generation over permutations)::

    max  sum_i u_i (P v)_i     s.t.  P doubly stochastic,  max_a f_a(P) - min_a f_a(P) <= eps

It prints the utility and the exposure per group before (ranking by score) and after, and the
price of fairness (utility lost, and d utility / d eps from the duals).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from fairopt.modeling import SolverSpec, default_spec
from fairopt.modeling.registry import resolve_solver
from fairopt.runs.base import Progress, RunOutput, Table, split_rows

if TYPE_CHECKING:
    from fairopt.modeling import Program
    from fairopt.ranking import RankingResult
    from fairopt.runs.card import Card


class Data(BaseModel):
    """``[data]``: law school data (``path`` or ``$FAIROPT_DATA_HOME``), the protected column
    and the share of students used to train the score model."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["law"] = "law"
    path: str | None = None
    sensitive: Literal["race", "sex"] = "race"
    binary: bool = Field(default=True, description="race: White vs non-White")
    train_fraction: float = Field(default=0.5, gt=0, lt=1)
    random_state: int = 0


class Parameters(BaseModel):
    """``[parameters]``: the fairness criterion and tolerance, and the candidate lists."""

    model_config = ConfigDict(extra="forbid")
    eps: float = Field(default=0.01, ge=0, description="largest exposure difference between groups")
    criterion: Literal["parity", "merit", "impact"] = "parity"
    n_queries: int = Field(default=100, ge=1)
    query_size: int = Field(default=40, ge=2)
    k: int | None = Field(default=None, ge=1, description="positions shown (top-k)")
    method: Literal["colgen", "lp"] = "colgen"
    random_state: int = 0


def candidate_lists(data: Data, params: Parameters) -> tuple[np.ndarray, np.ndarray]:
    """``(relevance, groups)`` of shape ``(n_queries, query_size)``."""
    from sklearn.linear_model import Ridge

    from fairopt.data import load_law
    df = load_law(data.path)
    grp = df[data.sensitive].astype(str)
    if data.sensitive == "race" and data.binary:
        grp = grp.where(grp == "White", "non-White")
    X = df[["lsat", "ugpa"]].to_numpy(float)
    y = df["zfya"].to_numpy(float)
    rng = np.random.default_rng(data.random_state)
    train, pool = split_rows(len(df), [data.train_fraction], rng)
    model = Ridge(alpha=1.0).fit(X[train], y[train])
    score = model.predict(X[pool])
    relevance = score - score.min()          # nonnegative, in grade units
    draw = np.random.default_rng(params.random_state)
    pick = np.stack([draw.choice(pool.size, params.query_size, replace=False) for _ in range(params.n_queries)])
    return relevance[pick], grp.to_numpy()[pool][pick]


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The LP over ``P`` of the first candidate list (the reference the column generation
    matches), for ``fairopt inspect`` and LP/MPS export."""
    from fairopt.constraints import doubly_stochastic, exposure_block, position_weights
    from fairopt.modeling import Program
    rel, grp = candidate_lists(data, params)
    u, g = rel[0], grp[0]
    n = u.size
    m = params.k or n
    v = position_weights(m)
    prog = Program("fair_ranking")
    prog.add_variables("P", shape=(n, m), lb=0.0, ub=1.0)
    doubly_stochastic(n, m).add_to(prog, "P")
    exposure_block(g, params.eps, criterion=params.criterion, relevance=u, v=v).add_to(prog, "P")
    prog.set_objective(linear={"P": np.outer(u, v).ravel()}, sense="maximize")
    return prog


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    from fairopt.ranking import fair_ranking
    t0 = time.perf_counter()
    progress(0, 2, "scoring candidates")
    rel, grp = candidate_lists(data, params)
    t1 = time.perf_counter()
    progress(1, 2, f"ranking {params.n_queries} lists of {params.query_size}")
    spec = resolve_solver(solver, "LP")   # method="lp" solves on it; column generation prices HiGHS masters
    # a (n_queries, query_size) batch gives one result per query
    results = cast("list[RankingResult]", fair_ranking(rel, grp, params.eps, criterion=params.criterion, k=params.k,
                                                      method=params.method, solver=spec))
    solve_s = time.perf_counter() - t1
    util = np.array([r.utility for r in results])
    util0 = np.array([r.utility_unfair for r in results])
    table = pd.concat([r.exposure.assign(query=q) for q, r in enumerate(results)])
    per_group = table.groupby(level="group")[["merit", "exposure_unfair", "exposure", "fairness_unfair",
                                              "fairness"]].mean()
    disp = np.array([r.disparity for r in results])
    disp0 = np.array([float(r.exposure["fairness_unfair"].max() - r.exposure["fairness_unfair"].min())
                      for r in results])
    metrics = {
        "n_queries": float(len(results)), "query_size": float(params.query_size),
        "utility_before": float(util0.mean()), "utility_after": float(util.mean()),
        "price_of_fairness": float((util0 - util).mean()),
        "price_of_fairness_relative": float(((util0 - util) / util0).mean()),
        "dutility_deps": float(np.mean([r.price_of_fairness for r in results])),
        "disparity_before": float(disp0.mean()), "disparity_after": float(disp.mean()),
        "max_disparity_after": float(disp.max()),
        "rankings_per_query": float(np.mean([len(r.decomposition) for r in results])),
    }
    names = per_group.index.astype(str)
    metrics.update(zip("exposure_before[" + names + "]", per_group["exposure_unfair"].astype(float), strict=True))
    metrics.update(zip("exposure_after[" + names + "]", per_group["exposure"].astype(float), strict=True))
    table = per_group[["merit", "exposure_unfair", "exposure"]].astype(float).reset_index()
    table.iloc[:, 0] = names
    tables = [
        Table("Exposure per group (mean over lists)", ["group", "merit", "before", "after"],
              table.to_numpy().tolist()),
        Table("Utility (mean over lists)", ["ranking", "utility", "max group gap"],
              [["by score", metrics["utility_before"], metrics["disparity_before"]],
               [f"fair (eps={params.eps:g})", metrics["utility_after"], metrics["disparity_after"]]]),
        Table("Price of fairness", ["quantity", "value"],
              [["utility lost", metrics["price_of_fairness"]],
               ["relative", metrics["price_of_fairness_relative"]],
               ["d utility / d eps (duals)", metrics["dutility_deps"]]]),
    ]
    progress(2, 2, "done")
    # the ranking's column generation runs its restricted masters on the registry's LP solver
    backend = spec.backend if params.method == "lp" else default_spec("LP").backend
    return RunOutput(backend=backend, solver="column generation" if params.method == "colgen" else str(spec.solver),
                     status="optimal", metrics=metrics, build_seconds=t1 - t0, solve_seconds=solve_s,
                     tables=tables, extra={"groups": [str(g) for g in per_group.index]})
