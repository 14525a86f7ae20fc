"""A 100-point exact threshold frontier against single-tolerance fits, on the same scores.

Synthetic calibrated scores (``--rows`` rows, ``--groups`` groups with shifted score
distributions, labels drawn from the scores). fairopt's frontier is :func:`fairopt.frontier`
on ``ThresholdDebiaser`` (the exact LP curve over every group's ROC-hull vertices, evaluated at 100
tolerances); it is timed against three fits of error-parity's ``RelaxedThresholdOptimizer`` (one
tolerance each) and ten fits of ``ThresholdDebiaser``, all on the same scores and in the same
process. error-parity's tolerance is its l-infinity gap between group ROC points, the same range
of group rates that ``ThresholdDebiaser``'s ``eps`` bounds. Writes
``benchmarks/results/frontier.json``.

    python benchmarks/frontier.py [--rows 1000000] [--groups 10] [--constraint equalized_odds]
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def data(rows: int, groups: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, rows)
    p = 1.0 / (1.0 + np.exp(-(rng.normal(size=rows) + 0.15 * (g - groups / 2))))
    y = (rng.uniform(size=rows) < p).astype(int)
    return p, g, y


def run(rows: int, groups: int, constraint: str, points: int) -> dict[str, Any]:
    import fairopt
    from fairopt.postprocessing import ThresholdDebiaser
    p, g, y = data(rows, groups)
    score = 2 * p - 1
    eps = np.linspace(0.0, 0.2, points)
    out: dict[str, Any] = {"rows": rows, "groups": groups, "constraint": constraint, "points": points,
                           "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores"}
    t0 = time.perf_counter()
    front = fairopt.frontier(ThresholdDebiaser(constraint=constraint), score, y, sensitive_features=g, eps=eps)
    out["frontier_seconds"] = time.perf_counter() - t0
    out["frontier_solves"] = front.solves
    out["breakpoints"] = int(front.breakpoints.size)
    t0 = time.perf_counter()
    errors = []
    for e in np.linspace(0.0, 0.2, 10):
        deb = ThresholdDebiaser(constraint=constraint, eps=float(e)).fit(score, y, sensitive_features=g)
        errors.append(1 - deb.solution_.accuracy)
    out["threshold_debiaser_10_fits_seconds"] = time.perf_counter() - t0
    # the frontier and the fits agree where they meet (the same LP)
    out["max_abs_diff_vs_fits"] = float(np.max(np.abs(np.interp(np.linspace(0, 0.2, 10), front.eps, front.value)
                                                      - np.array(errors))))
    try:
        from error_parity import RelaxedThresholdOptimizer
    except ImportError:
        out["error_parity"] = {"skipped": "pip install error-parity"}
    else:
        t0 = time.perf_counter()
        for tol in (0.01, 0.05, 0.1):
            RelaxedThresholdOptimizer(predictor=lambda X: X, constraint=constraint, tolerance=tol,
                                      seed=0).fit(X=p, y=y, group=g, y_scores=p)
        out["error_parity_3_fits_seconds"] = time.perf_counter() - t0
    out["ratio_frontier_vs_3_error_parity_fits"] = (out["frontier_seconds"] / out["error_parity_3_fits_seconds"]
                                                    if "error_parity_3_fits_seconds" in out else None)
    out["ratio_frontier_vs_10_debiaser_fits"] = out["frontier_seconds"] / out["threshold_debiaser_10_fits_seconds"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=10)
    ap.add_argument("--constraint", default="equalized_odds")
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=str(RESULTS / "frontier.json"))
    args = ap.parse_args()
    res = run(args.rows, args.groups, args.constraint, args.points)
    res["note"] = args.note
    print(json.dumps(res, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
