"""Model-card runner of fair selection (``formulation.name = "fair_selection"``).

A lender approves credit applicants to maximise expected profit under a lending budget, with
approval-rate parity across groups (a :mod:`fairopt.constraints` block on the approval decisions).
A logistic regression trained on one split of UCI credit default estimates each applicant's
default probability ``p_i``; on the applicant pool (the other split), approving credit line
``L_i`` earns ``L_i (margin (1 - p_i) - lgd p_i)`` in expectation::

    max  sum_i profit_i x_i
    s.t. sum_i L_i x_i <= budget_fraction * sum_i L_i            (lending budget)
         max_a r_a(x) - min_a r_a(x) <= eps  (or ratio form)     (approval-rate parity)
         x in [0, 1]^n  (LP relaxation)  or  x in {0, 1}^n  (MIP)

It prints profit, approval rates per group before (budget only) and after (with parity), the
price of fairness (profit lost, and d profit / d eps from the duals of the parity rows).
"""
from __future__ import annotations

import itertools
import time
import warnings
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fairopt.constraints import selection_rate_parity
from fairopt.modeling import Program, SolverSpec, default_spec
from fairopt.modeling.registry import mip_gap_options
from fairopt.runs.base import Columns, Progress, RunOutput, Table, split_rows

if TYPE_CHECKING:
    from fairopt.constraints import FairnessBlock
    from fairopt.runs.card import Card

UNITS = "NT$ thousand"


class Data(BaseModel):
    """``[data]``: UCI credit default (``path`` or ``$FAIROPT_DATA_HOME``), the sensitive columns
    (``AGE`` is cut into bands at ``age_bins``) and the share of rows forming the applicant pool."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["credit"] = "credit"
    path: str | None = None
    sensitive: Columns = Field(default_factory=lambda: ["SEX", "AGE"])
    age_bins: list[float] = Field(default_factory=lambda: [35.0])
    pool_fraction: float = Field(default=0.5, gt=0, lt=1)
    random_state: int = 0



class Parameters(BaseModel):
    """``[parameters]``: the lending economics, the parity tolerance and the solve modes."""

    model_config = ConfigDict(extra="forbid")
    eps: float | None = Field(default=None, ge=0, le=1, description="max approval-rate difference")
    ratio: float | None = Field(default=None, gt=0, le=1, description="min/max approval-rate ratio")
    margin: float = Field(default=0.12, gt=0, description="profit per unit of credit repaid")
    loss_given_default: float = Field(default=0.6, gt=0, le=1)
    budget_fraction: float = Field(default=0.3, gt=0, le=1, description="share of the total requested credit")
    integer: bool = Field(default=True, description="also solve the 0/1 approval problem (MIP)")
    mip_gap: float = Field(default=1e-4, ge=0, description="relative MIP gap at which to stop")
    random_state: int = 0

    @model_validator(mode="after")
    def _one_tolerance(self) -> Parameters:
        if self.eps is None and self.ratio is None:
            self.eps = 0.02
        if self.eps is not None and self.ratio is not None:
            raise ValueError("give eps (difference form) or ratio (ratio form), not both")
        return self


def score_applicants(data: Data, params: Parameters) -> pd.DataFrame:
    """The applicant pool: group, credit line ``exposure`` (NT$ thousand), predicted default
    probability ``p_default``, observed ``default`` and expected ``profit`` of approval."""
    from fairopt.data import load_credit
    from fairopt.errors import ConfigError
    from fairopt.runs.threshold_debiasing import _classifier
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known SEX recoding of the shared copy
        df = load_credit(data.path)
    missing = [c for c in data.sensitive if c not in df.columns]
    if missing:
        raise ConfigError(f"data.sensitive: unknown column(s) {missing}; credit has {list(df.columns)}.")
    parts = []
    for c in data.sensitive:
        col = df[c]
        if c == "AGE" and data.age_bins:
            edges = [-np.inf, *sorted(data.age_bins), np.inf]
            names = [f"<{edges[1]:g}"] + [f"{a:g}-{b:g}" for a, b in itertools.pairwise(edges[1:-1])] \
                + [f">={edges[-2]:g}"]
            col = pd.cut(col, edges, right=False, labels=names).astype(str)
        parts.append(col.astype(str))
    group = parts[0].str.cat(parts[1:], sep=", ") if len(parts) > 1 else parts[0]
    y = df["default"].to_numpy().astype(int)
    features = df.drop(columns=["ID", "default", *data.sensitive])
    rng = np.random.default_rng(data.random_state)
    train, pool = split_rows(len(df), [1 - data.pool_fraction], rng)
    pool = np.sort(pool)
    clf = _classifier("lr", features, params.random_state).fit(features.iloc[train], y[train])
    p = clf.predict_proba(features.iloc[pool])[:, 1]
    exposure = df["LIMIT_BAL"].to_numpy(float)[pool] / 1000.0
    profit = exposure * (params.margin * (1 - p) - params.loss_given_default * p)
    return pd.DataFrame({"group": group.to_numpy()[pool], "exposure": exposure, "p_default": p,
                         "default": y[pool], "profit": profit})


def approval_program(pool: pd.DataFrame, budget: float, block: FairnessBlock | None = None, integer: bool = False,
                     name: str = "fair_selection") -> Program:
    """Maximise expected profit of the approvals ``approve`` under the lending ``budget`` row,
    with the fairness ``block`` added on ``approve`` if given."""
    prog = Program(name)
    n = len(pool)
    prog.add_variables("approve", shape=n, lb=0.0, ub=1.0, **({"integer": True} if integer else {}))
    prog.add_constraints("budget", {"approve": pool["exposure"].to_numpy()[None, :]}, ub=budget)
    prog.set_objective(linear={"approve": pool["profit"].to_numpy()}, sense="maximize")
    if block is not None:
        block.add_to(prog, "approve")
    return prog


def parity_block(pool: pd.DataFrame, params: Parameters, eps: float | None = None) -> FairnessBlock:
    if eps is not None:
        return selection_rate_parity(pool["group"], eps=eps, name="parity")
    return selection_rate_parity(pool["group"], eps=params.eps, ratio=params.ratio, name="parity")


def _budget(pool: pd.DataFrame, params: Parameters) -> float:
    return params.budget_fraction * float(pool["exposure"].sum())


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The fair LP relaxation (or MIP with ``integer = true``) of the card."""
    pool = score_applicants(data, params)
    return approval_program(pool, _budget(pool, params), parity_block(pool, params), params.integer)


def _rates(x: np.ndarray, groups: pd.Series) -> pd.Series:
    return pd.Series(x).groupby(groups.to_numpy()).mean()


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    progress(0, 4, "scoring applicants")
    pool = score_applicants(data, params)
    budget = _budget(pool, params)
    block = parity_block(pool, params)
    spec = solver or default_spec("MILP" if params.integer else "LP")
    t1 = time.perf_counter()
    solves = {}
    progress(1, 4, "budget only (LP)")
    solves["before_lp"] = approval_program(pool, budget).solve(spec)
    progress(2, 4, "with parity (LP relaxation)")
    solves["after_lp"] = approval_program(pool, budget, block).solve(spec)
    if params.integer:
        progress(3, 4, "with parity (MIP)")
        mip_options = mip_gap_options(spec, params.mip_gap) or None   # the back end names its option
        solves["before_mip"] = approval_program(pool, budget, integer=True).solve(spec, options=mip_options)
        solves["after_mip"] = approval_program(pool, budget, block, integer=True).solve(spec, options=mip_options)
    solve_s = time.perf_counter() - t1
    price = block.price_of_fairness(solves["after_lp"])
    realized = pool["exposure"].to_numpy() * np.where(pool["default"].to_numpy() == 1,
                                                       -params.loss_given_default, params.margin)
    metrics = {"n_applicants": float(len(pool)), "n_groups": float(len(block.groups)), "budget": budget}
    rates = {}
    for key, sol in solves.items():
        x = sol.primal["approve"]
        rates[key] = _rates(x, pool["group"])
        metrics[f"profit_{key}"] = sol.objective
        metrics[f"realized_profit_{key}"] = float(realized @ x)
        metrics[f"approval_rate_{key}"] = float(x.mean())
        metrics[f"parity_gap_{key}"] = float(rates[key].max() - rates[key].min())
        if sol.mip_gap is not None:
            metrics[f"mip_gap_{key}"] = float(sol.mip_gap)
    for mode in ("lp", "mip"):
        if f"after_{mode}" in solves:
            lost = metrics[f"profit_before_{mode}"] - metrics[f"profit_after_{mode}"]
            metrics[f"price_of_fairness_{mode}"] = lost
            metrics[f"price_of_fairness_{mode}_relative"] = lost / abs(metrics[f"profit_before_{mode}"])
    for key, value in price.parameters.items():
        metrics[f"dprofit_d{key}"] = value
    groups = list(rates["before_lp"].index)
    cols = [k for k in ("before_lp", "after_lp", "before_mip", "after_mip") if k in rates]
    tables = [
        Table("Approval rate per group", ["group", *cols], [[g, *(float(rates[k][g]) for k in cols)]
                                                             for g in groups]),
        Table(f"Profit ({UNITS})", ["solve", "expected profit", "realized profit", "status"],
              [[k, metrics[f"profit_{k}"], metrics[f"realized_profit_{k}"], str(solves[k].status)] for k in cols]),
        Table(f"Price of fairness: duals of the parity rows ({UNITS} per unit of bound)",
              ["row", "activity", "bound", "dual"],
              price.rows[["activity", "bound", "dual"]].astype(float).reset_index().to_numpy().tolist()),
    ]
    progress(4, 4, "done")
    # a time limit on any solve makes the run "not optimal" (exit code 3), never a success
    not_optimal = [str(s.status) for s in solves.values() if not s.is_optimal]
    main = solves.get("after_mip", solves["after_lp"])
    return RunOutput(backend=main.backend, solver=main.solver,
                     status=not_optimal[0] if not_optimal else "optimal", metrics=metrics,
                     build_seconds=t1 - t0, solve_seconds=solve_s, tables=tables,
                     extra={"groups": [str(g) for g in groups], "units": UNITS,
                            "tolerance": dict(block.parameters)})
