"""Benchmark: exposure-fair rankings at scale, and the plots of docs/ranking.md.

Protocol:

* scale: one query of ``n = 1,000`` items (``P`` has 10^6 entries) with exposure parity across
  3 groups (eps = 0.01), by column generation; the LP over ``P`` (the reference, HiGHS through
  ``Program``) at n = 50, 100, 200 for comparison; a batch of 1,000 queries of 20 items (2
  groups, eps = 0.02) solved as one block-diagonal master;
* the same column generation with its restricted masters re-solved by another LP solver with
  duals (``solver="scipy:highs-ds"``: no warm start) at n = 50, 100, 200;
* checks: column generation equals the LP optimum where both run (1e-7), the other LP solver's
  loop equals it (1e-6), disparity <= eps;
* plots: utility against eps (parity and merit) of a law-school-like list of 30 candidates, and
  the probability of each position per group before and after (``ranking_tradeoff.png``,
  ``ranking_positions.png``).

Run: ``python benchmarks/ranking.py``; writes ``benchmarks/results/ranking.json``. The machine is
a shared 2-core box under load: the JSON records the load average.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from fairopt.errors import InfeasibleError
from fairopt.ranking import fair_ranking

RESULTS = Path(__file__).resolve().parent / "results"
#: an LP solver with duals that re-solves the restricted masters (the generic pricing path)
OTHER_LP = "scipy:highs-ds"


def instance(n: int, K: int, seed: int):
    rng = np.random.default_rng(seed)
    g = np.array([f"g{i}" for i in range(K)])[rng.integers(0, K, n)]
    u = rng.random(n) + 0.3 * (g == "g0")
    return u, g


def scale() -> dict:
    out = {}
    u, g = instance(1000, 3, 0)
    t0 = time.perf_counter()
    res = fair_ranking(u, g, 0.01)
    out["n1000_colgen"] = {"seconds": time.perf_counter() - t0, "utility": res.utility,
                           "utility_unfair": res.utility_unfair, "disparity": res.disparity,
                           "rounds": res.info["rounds"], "permutations": len(res.decomposition)}
    for n in (50, 100, 200):
        u, g = instance(n, 3, n)
        t0 = time.perf_counter()
        cg = fair_ranking(u, g, 0.01)
        t_cg = time.perf_counter() - t0
        t0 = time.perf_counter()
        lp = fair_ranking(u, g, 0.01, method="lp")
        t_lp = time.perf_counter() - t0
        t0 = time.perf_counter()
        other = fair_ranking(u, g, 0.01, solver=OTHER_LP)
        out[f"n{n}"] = {"colgen_seconds": t_cg, "lp_seconds": t_lp,
                        "utility_difference": abs(cg.utility - lp.utility),
                        f"colgen_{OTHER_LP}_seconds": time.perf_counter() - t0,
                        f"colgen_{OTHER_LP}_utility_difference": abs(other.utility - cg.utility)}
        assert abs(cg.utility - lp.utility) <= 1e-7 and abs(other.utility - cg.utility) <= 1e-6
    rng = np.random.default_rng(1)
    U, G = rng.random((1000, 20)), rng.choice(["a", "b"], size=(1000, 20))
    U[G == "a"] += 0.3
    t0 = time.perf_counter()
    batch = fair_ranking(U, G, 0.02)
    out["batch_1000x20"] = {"seconds": time.perf_counter() - t0,
                            "max_disparity": max(r.disparity for r in batch),
                            "rounds": batch[0].info["rounds"], "columns": batch[0].info["columns"]}
    return out


def plots() -> dict:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rng = np.random.default_rng(3)
    n = 30
    g = np.where(rng.random(n) < 0.6, "A", "B")
    u = np.clip(rng.normal(0.6, 0.15, n) + np.where(g == "A", 0.1, -0.1), 0.05, None)
    grid = np.linspace(0.0, 0.12, 25)
    curves = {}
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for crit in ("parity", "merit"):
        vals = []
        for eps in grid:
            try:
                vals.append(fair_ranking(u, g, eps, criterion=crit).utility)
            except InfeasibleError:  # below the tightest feasible eps (merit)
                vals.append(np.nan)
        curves[crit] = vals
        ax.plot(grid, vals, marker=".", label=f"exposure {crit}")
    unfair = fair_ranking(u, g, 1.0).utility_unfair
    ax.axhline(unfair, color="grey", ls="--", label="ranking by relevance")
    ax.set_xlabel("eps (largest difference between groups)")
    ax.set_ylabel("utility u'Pv")
    ax.set_title("Utility against eps (30 items, 2 groups)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "ranking_tradeoff.png", dpi=110)
    plt.close(fig)
    fair = fair_ranking(u, g, 0.0)
    before = np.zeros((n, n))
    before[np.argsort(-u, kind="stable"), np.arange(n)] = 1.0
    v = 1.0 / np.log2(2.0 + np.arange(n))
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    panels = (("ranking by relevance", before), ("exposure parity, eps = 0", fair.P))
    for ax, (title, P) in zip(axes, panels, strict=False):
        for grp in ("A", "B"):
            # exposure a group's average item collects from positions 1..j
            ax.plot(np.arange(1, n + 1), np.cumsum(P[g == grp].mean(axis=0) * v), marker=".",
                    label=f"group {grp}")
        ax.set_title(title)
        ax.set_xlabel("position j")
    axes[0].set_ylabel("exposure from positions 1..j\n(mean per item of the group)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "ranking_positions.png", dpi=110)
    plt.close(fig)
    return {"eps": grid.tolist(), "utility": curves, "utility_unfair": unfair}


def main() -> None:
    RESULTS.mkdir(exist_ok=True)
    res = {"note": "shared 2-core machine, loaded by other sessions' jobs during the run: times are "
                   "inflated and noisy (see the load averages)",
           "load_average_at_start": os.getloadavg()}
    res["plots"] = plots()
    res["scale"] = scale()
    res["load_average_at_end"] = os.getloadavg()
    (RESULTS / "ranking.json").write_text(json.dumps(res, indent=2, default=float))
    print(json.dumps(res["scale"], indent=2, default=float))


if __name__ == "__main__":
    main()
