"""Benchmark: parity over >= 1,000 intersectional cells, full formulation vs row generation; and
the α-fair allocation plot of docs/allocation.md.

Protocol:

* instance: ``--n`` candidates (default 10^5) with three protected columns of 10 x 10 x 12
  levels (1,200 cells, about 83 members each), profit ``N(0, 1)`` shifted by the first and third
  column (so parity binds), costs ``U(0.5, 2)``, budget 30 % of the total cost; selection-rate
  parity over the cells with ``min_size = 20`` and ``eps = 0.05``;
* full: the block added with ``add_to`` and the program solved by HiGHS (interior point, then
  dual simplex);
* rows: :func:`fairopt.constraints.intersectional.solve_lazy` on the back end's compiled model
  with the restricted-master options HiGHS declares (presolve off, first master by interior
  point with crossover, warm dual-simplex re-solves), unseeded, seeded with every cell's upper
  row, and seeded with both rows of 10 % of the cells; ``parity_auto`` is
  :func:`~fairopt.constraints.intersectional.solve_parity` with its default (row generation from
  200 cells);
* the objectives must agree to 1e-7 (relative); rows generated, rounds and seconds are recorded;
* plot: per-capita group utilities of a budgeted allocation against α (0 = utilitarian,
  inf = max-min), ``benchmarks/results/allocation_alpha.png``.

Run: ``python benchmarks/intersectional.py [--n 100000] [--skip-lazy]``; writes
``benchmarks/results/intersectional.json``. The machine is a shared 2-core box under load: the
JSON records the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairopt.constraints import alpha_fairness
from fairopt.constraints.intersectional import intersectional_parity, solve_lazy, solve_parity
from fairopt.errors import FairoptError
from fairopt.modeling import Program

RESULTS = Path(__file__).resolve().parent / "results"


def instance(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 10, n), "b": rng.integers(0, 10, n), "c": rng.integers(0, 12, n)})
    profit = rng.normal(0, 1, n) + 0.05 * df["a"].to_numpy() - 0.03 * df["c"].to_numpy()
    cost = rng.uniform(0.5, 2.0, n)
    return df, profit, cost


def program(profit, cost) -> Program:
    n = profit.size
    prog = Program("intersectional")
    prog.add_variables("x", shape=n, lb=0, ub=1)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=0.3 * cost.sum())
    prog.set_objective(linear={"x": profit}, sense="maximize")
    return prog


def run_parity(n: int, skip_lazy: bool, time_limit: float) -> dict:
    df, profit, cost = instance(n)
    block = intersectional_parity(df, eps=0.05, min_size=20)
    out = {"n": n, "cells": len(block.groups), "full_rows": block.m}
    for name, opts in (("full_ipm", {"solver": "ipm"}), ("full_simplex", {"solver": "simplex"})):
        prog = program(profit, cost)
        block.add_to(prog, "x")
        t0 = time.perf_counter()
        sol = prog.solve("highs", options={**opts, "time_limit": time_limit})
        out[name] = {"seconds": time.perf_counter() - t0, "objective": sol.objective, "status": str(sol.status)}
        print(name, out[name], flush=True)
    K = len(block.groups)
    cells = np.random.default_rng(0).choice(K, K // 10, replace=False)
    variants = {"rows_seed_upper": np.arange(K, 2 * K),              # every cell's "<= eps" row
                "rows_seed_10pct": np.r_[cells, cells + K],          # both rows of 10 % of the cells
                "rows": None}                                        # no seed
    for name, seed in ([] if skip_lazy else variants.items()):
        t0 = time.perf_counter()
        try:
            lazy = solve_lazy(program(profit, cost), "x", block, seed=seed, options={"time_limit": time_limit})
            out[name] = {"seconds": time.perf_counter() - t0, "objective": lazy.objective,
                         "rows_generated": lazy.rows_generated, "rounds": lazy.rounds,
                         "round_log": lazy.log,
                         "matches_full": abs(lazy.objective - out["full_ipm"]["objective"])
                         <= 1e-7 * max(1.0, abs(out["full_ipm"]["objective"]))}
        except FairoptError as exc:  # a time limit is a result here, reported as such
            out[name] = {"seconds": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"}
        print(name, out[name], flush=True)
    if not skip_lazy:
        t0 = time.perf_counter()
        auto = solve_parity(program(profit, cost), "x", block)
        out["parity_auto"] = {"seconds": time.perf_counter() - t0, "objective": auto.objective,
                              "path": "rows" if auto.rows_generated < block.m else "full",
                              "matches_full": abs(auto.objective - out["full_ipm"]["objective"])
                              <= 1e-7 * max(1.0, abs(out["full_ipm"]["objective"]))}
        print("parity_auto", out["parity_auto"], flush=True)
        full_best = min(out["full_ipm"]["seconds"], out["full_simplex"]["seconds"])
        out["summary"] = {"full_fastest_seconds": full_best, "rows_seconds": out["rows"].get("seconds"),
                          "rows_faster_than_full": out["rows"].get("seconds", np.inf) < full_best,
                          "note": "shared 2-core machine loaded by 8 concurrent jobs; see load averages"}
    return out


def plot_alpha(path: Path) -> dict:
    import cvxpy as cp
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rng = np.random.default_rng(4)
    n = 60
    g = np.array(["a", "b", "c"])[np.r_[0, 1, 2, rng.integers(0, 3, n - 3)]]
    u = rng.uniform(0.5, 2.0, n) * pd.Series(g).map({"a": 2.0, "b": 1.0, "c": 0.6}).to_numpy()
    cost = rng.uniform(0.5, 1.5, n)
    alphas = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, np.inf]
    table = {}
    for alpha in alphas:
        obj = alpha_fairness(g, u, alpha)
        x = cp.Variable(n)
        objective, cons = obj.to_cvxpy(x)
        cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= 0.3 * cost.sum()]).solve(solver="CLARABEL")
        table[str(alpha)] = obj.group_utilities(x.value).to_dict()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = np.arange(len(alphas))
    for grp in ("a", "b", "c"):
        ax.plot(xs, [table[str(a)][grp] for a in alphas], marker="o", label=f"group {grp}")
    ax.set_xticks(xs, ["0", "0.5", "1", "2", "4", "8", "16", "inf"])
    ax.set_xlabel("alpha (0 = utilitarian, 1 = proportional, inf = max-min)")
    ax.set_ylabel("per-capita group utility")
    ax.set_title("alpha-fair allocation of a budget across 3 groups")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return table


def plot_eps(path: Path) -> dict:
    """Profit against eps with parity over 40 cells (full formulation), and the rows row
    generation needs at each eps (20,000 candidates)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rng = np.random.default_rng(5)
    n = 20_000
    df = pd.DataFrame({"race": rng.integers(0, 4, n), "sex": rng.integers(0, 2, n), "age": rng.integers(0, 5, n)})
    profit = rng.normal(0, 1, n) + 0.15 * (df["race"] == 0).to_numpy() - 0.15 * (df["age"] == 4).to_numpy()
    cost = rng.uniform(0.5, 2.0, n)
    grid = [0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12]
    rows, objective, full_rows = [], [], 0
    for eps in grid:
        block = intersectional_parity(df, eps=eps, min_size=20)
        prog = program(profit, cost)
        block.add_to(prog, "x")
        objective.append(prog.solve("highs").objective)
        rows.append(solve_lazy(program(profit, cost), "x", block).rows_generated)
        full_rows = block.m
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(grid, objective, marker="o", color="C0")
    ax.set_xlabel("eps (largest selection-rate difference between cells)")
    ax.set_ylabel("profit", color="C0")
    ax2 = ax.twinx()
    ax2.plot(grid, rows, marker="s", color="C1")
    ax2.set_ylabel(f"rows generated (of {full_rows})", color="C1")
    ax.set_title(f"Parity over {full_rows // 2} intersectional cells (race x sex x age)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"eps": grid, "objective": objective, "rows_generated": rows, "full_rows": full_rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--skip-lazy", action="store_true")
    ap.add_argument("--time-limit", type=float, default=600.0)
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    res = {"load_average_at_start": os.getloadavg()}
    res["alpha_plot"] = plot_alpha(RESULTS / "allocation_alpha.png")
    res["eps_plot"] = plot_eps(RESULTS / "intersectional_eps.png")
    res["parity"] = run_parity(args.n, args.skip_lazy, args.time_limit)
    res["load_average_at_end"] = os.getloadavg()
    (RESULTS / "intersectional.json").write_text(json.dumps(res, indent=2, default=float))
    print(json.dumps(res, indent=2, default=float))


if __name__ == "__main__":
    main()
