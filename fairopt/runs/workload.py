"""Model-card runner of fair workload balancing (``formulation.name = "workload_balance"``).

Tasks that each need one skill for some hours are assigned to workers who have the skill, within
each worker's weekly capacity; every task is assigned. The data are the seeded synthetic workload
of :func:`fairopt.data.workload.make_workload` (interchangeable tasks counted by type, an
integer decision per eligible (type, worker) pair: a MIP). The plan is one of

- ``utilitarian``: the cheapest plan (hourly costs grow with seniority, so the cheapest workers
  are filled to capacity);
- ``leximin``: lexicographically smallest utilisations (hours / capacity), largest first, over
  the teams (:func:`fairopt.constraints.solve_leximin` on minus the utilisation, exact on the MIP
  by ordered outcomes), then the cheapest plan whose teams stay within the leximin plan's
  largest utilisation and total;
- ``gini``: the cheapest plan whose Gini coefficient of the utilisations is at most
  ``gini_max`` (:func:`fairopt.constraints.balance`);
- ``minmax``: the cheapest plan among those with the smallest largest utilisation.

Fairness is over the teams' utilisations (``over = "team"``, the default: 10 teams) or over
every worker's (``over = "worker"``: 200 loads, a much harder MIP). It prints the cost, the
spread of utilisations and the teams' utilisations.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from fairopt.data.workload import Workload, make_workload
from fairopt.modeling import SolverSpec
from fairopt.runs.base import Progress, RunOutput, Table

if TYPE_CHECKING:
    from fairopt.modeling import Program, Solution
    from fairopt.runs.card import Card


class Data(BaseModel):
    """``[data]``: the synthetic workload's size and seed (``dataset = "builtin:workload"``)."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["builtin:workload"] = "builtin:workload"
    n_workers: int = Field(default=200, ge=16)
    n_tasks: int = Field(default=2000, ge=1)
    n_skills: int = Field(default=8, ge=1, le=64)
    n_teams: int = Field(default=10, ge=2)
    load: float = Field(default=0.75, gt=0, le=0.9)
    random_state: int = 0


class Parameters(BaseModel):
    """``[parameters]``: the plan and its fairness tolerance."""

    model_config = ConfigDict(extra="forbid")
    plan: Literal["utilitarian", "leximin", "gini", "minmax"] = "leximin"
    gini_max: float = Field(default=0.02, ge=0, lt=1, description="largest Gini of utilisations (plan = gini)")
    over: Literal["team", "worker"] = Field(default="team", description="whose utilisations are balanced")
    mip_gap: float = Field(default=1e-4, gt=0, lt=1)
    cost_slack: float = Field(default=1e-6, ge=0, description="relative slack of the fixed fairness level "
                                                             "when the cost is minimised after it")


def _base(w: Workload) -> Program:
    from fairopt.modeling import Program
    prog = Program("workload")
    counts = w.types["count"].to_numpy(float)
    prog.add_variables("y", len(w.pairs), lb=0, ub=counts[w.pairs["type"].to_numpy()], integer=True)
    prog.add_constraints("cover", {"y": w.cover_matrix}, lb=counts, ub=counts)
    prog.add_constraints("capacity", {"y": w.hours_matrix}, ub=w.workers["capacity"].to_numpy(float))
    return prog


def _cost(w: Workload) -> np.ndarray:
    return np.asarray(w.workers["cost"].to_numpy(float) @ w.hours_matrix).ravel()


def _utilisation_spec(w: Workload, by: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``(var, groups, weights)``: the utilisation of each worker (``by = "worker"``) or team."""
    worker = w.pairs["worker"].to_numpy()
    hours = w.types["hours"].to_numpy(float)[w.pairs["type"].to_numpy()]
    if by == "worker":
        return "y", worker, hours / w.workers["capacity"].to_numpy(float)[worker]
    team = w.workers["team"].to_numpy()
    team_cap = np.bincount(team, weights=w.workers["capacity"].to_numpy(float))
    return "y", team[worker], hours / team_cap[team[worker]]


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The cheapest-plan MIP (with the Gini rows for ``plan = "gini"``), for ``fairopt inspect``."""
    w = _workload(data)
    prog = _base(w)
    if params.plan == "gini":
        from fairopt.constraints import balance
        balance(_utilisation_spec(w, params.over), "gini", max_value=params.gini_max, name="gini").add_to(prog)
    prog.set_objective(linear={"y": _cost(w)})
    return prog


def _workload(data: Data) -> Workload:
    return make_workload(data.n_workers, data.n_tasks, n_skills=data.n_skills, n_teams=data.n_teams, load=data.load,
                         seed=data.random_state)


def solve_plan(w: Workload, params: Parameters, solver: SolverSpec | str | None) -> tuple[np.ndarray, Solution]:
    """The plan's decisions ``y`` and the final solve (the cheapest plan at the fairness level)."""
    from fairopt.constraints import balance, solve_leximin
    from fairopt.modeling.registry import mip_gap_options, resolve_solver
    spec = resolve_solver(solver, "MILP")   # None: the registry's MILP solver
    gap = mip_gap_options(spec, params.mip_gap)
    prog = _base(w)
    if params.plan == "gini":
        balance(_utilisation_spec(w, params.over), "gini", max_value=params.gini_max, name="gini").add_to(prog)
    elif params.plan == "minmax":
        fair = _base(w)
        balance(_utilisation_spec(w, params.over), "minmax", name="peak").as_objective().add_to(fair)
        peak = fair.solve(spec, options=gap, require_optimal=True).objective
        var, g, wt = _utilisation_spec(w, params.over)
        import scipy.sparse as sp
        rows = sp.csr_matrix((wt, (g, np.arange(wt.size))), shape=(int(g.max()) + 1, wt.size))
        prog.add_constraints("peak", {"y": rows}, ub=peak * (1 + params.cost_slack) + params.cost_slack)
    elif params.plan == "leximin":
        var, g, wt = _utilisation_spec(w, params.over)
        lex = solve_leximin(prog, (var, g, -wt), solver=spec, mip_gap=params.mip_gap)
        # keep the leximin vector (as cumulated sums of the k largest team utilisations) and
        # minimise the cost: the k largest are bounded through the same ordered-outcome rows
        import scipy.sparse as sp
        K = int(g.max()) + 1
        T = sp.csr_matrix((wt, (g, np.arange(wt.size))), shape=(K, wt.size))
        levels = np.sort(-lex.levels)[::-1]              # team utilisations, largest first
        # every team at or below the leximin plan's largest utilisation
        prog.add_constraints("leximin_peak", {"y": T}, ub=levels[0] * (1 + params.cost_slack) + params.cost_slack)
        prog.add_constraints("leximin_total", {"y": sp.csr_matrix(np.ones((1, K))) @ T},
                             ub=levels.sum() * (1 + params.cost_slack) + params.cost_slack)
    prog.set_objective(linear={"y": _cost(w)})
    sol = prog.solve(spec, options=gap, require_optimal=True)
    return np.asarray(sol.primal["y"]), sol


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    from fairopt.constraints import measure_value
    t0 = time.perf_counter()
    progress(0, 2, "generating the workload")
    w = _workload(data)
    t1 = time.perf_counter()
    progress(1, 2, f"solving the {params.plan} plan")
    y, sol = solve_plan(w, params, solver)
    solve_s = time.perf_counter() - t1
    hours = w.hours_matrix @ y
    cap = w.workers["capacity"].to_numpy(float)
    util = hours / cap
    team = w.workers["team"].to_numpy()
    team_util = np.bincount(team, weights=hours) / np.bincount(team, weights=cap)
    cover = w.cover_matrix @ y
    metrics = {
        "cost": float(_cost(w) @ y), "n_workers": float(len(w.workers)), "n_tasks": float(w.n_tasks),
        "n_task_types": float(len(w.types)), "n_decisions": float(len(w.pairs)),
        "utilisation_max": float(util.max()), "utilisation_min": float(util.min()),
        "utilisation_mean": float(util.mean()), "utilisation_gini": measure_value(util, "gini"),
        "utilisation_mad": measure_value(util, "mad"), "team_utilisation_range": measure_value(team_util, "range"),
        "uncovered_tasks": float(np.abs(cover - w.types["count"].to_numpy()).sum()),
        "capacity_violation": float(max(0.0, (hours - cap).max())),
        "mip_gap": float(sol.mip_gap or 0.0),
    }
    per_team = pd.DataFrame({"team": np.arange(team_util.size), "workers": np.bincount(team),
                             "utilisation": team_util})
    tables = [
        Table(f"Plan: {params.plan}", ["quantity", "value"],
              [["cost", metrics["cost"]], ["largest utilisation", metrics["utilisation_max"]],
               ["smallest utilisation", metrics["utilisation_min"]],
               ["Gini of utilisations", metrics["utilisation_gini"]],
               ["team utilisation range", metrics["team_utilisation_range"]]]),
        Table("Teams", ["team", "workers", "utilisation"], per_team.to_numpy().tolist()),
    ]
    progress(2, 2, "done")
    return RunOutput(backend=sol.backend, solver=sol.solver, status=str(sol.status), metrics=metrics,
                     build_seconds=t1 - t0, solve_seconds=solve_s, tables=tables,
                     extra={"utilisation": util.tolist()})
