"""Benchmark of :class:`fairopt.postprocessing.RegressionDebiaser` at scale (issue 33 item 3).

Synthetic predictions (``n`` rows, ``n_groups`` groups with shifted and scaled normal
distributions), fitted at default settings (``grid=None``: every distinct prediction plus the
squared-loss barycenter's support) for both losses and every eps in ``eps_values``. Reports fit
seconds (collapse + grid + solve + plans), the path that solved it (closed form at eps = 0, the
sweep at eps > 0 for both losses, or the LP), the loss, the largest CDF gap, the machine's 1-minute
load average before the fit; at eps = 0 with squared loss also the loss of the exact W2 barycenter
computed independently (quantile averaging), which the default grid must reproduce.

    python benchmarks/regression_debiasing.py [--n 1000000] [--groups 16] [--note TEXT]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from fairopt.formulations.regression_parity import collapse_groups
from fairopt.postprocessing import RegressionDebiaser


def barycenter_loss(pred: np.ndarray, codes: np.ndarray, n_groups: int) -> float:
    """Squared-loss cost of the exact W2 barycenter (quantile averaging on the merged levels)."""
    dists, shares = collapse_groups(pred, codes, n_groups)
    cuts = np.unique(np.concatenate([d.levels for d in dists]))
    mids, mass = 0.5 * (cuts[1:] + cuts[:-1]), np.diff(cuts)
    q = np.vstack([d.quantile(mids) for d in dists])
    qbar = shares @ q
    return float(sum(p * np.dot(mass, (qa - qbar) ** 2) for p, qa in zip(shares, q, strict=True)))


def _path(deb: RegressionDebiaser) -> str:
    sol = deb.solution_
    if sol.solution is not None:
        return "lp"
    return "closed_form" if deb.eps == 0 else "sweep"


def fit_row(pred: np.ndarray, codes: np.ndarray, eps: float, loss: str, grid: int | None) -> dict[str, Any]:
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    deb = RegressionDebiaser(eps=eps, loss=loss, grid=grid, random_state=0).fit(pred, sensitive_features=codes)
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    deb.predict(pred, sensitive_features=codes)
    return {"loss_kind": loss, "eps": eps, "grid": "default" if grid is None else grid, "fit_seconds": fit_s,
            "predict_seconds": time.perf_counter() - t1, "path": _path(deb), "lp_rounds": deb.solution_.rounds,
            "loss": deb.train_loss_, "gap": deb.train_gap_, "input_gap": deb.input_gap_,
            "grid_points": int(deb.grid_.shape[0]), "load_average_1min": load}


def run(n: int = 10**6, n_groups: int = 16, eps_values: tuple[float, ...] = (0.0, 0.01, 0.05),
        losses: tuple[str, ...] = ("squared", "absolute"), seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_groups, n)
    pred = rng.normal(size=n) * (1 + 0.05 * codes) + 0.1 * codes
    rows = []
    for loss in losses:
        for eps in eps_values:
            rows.append(fit_row(pred, codes, eps, loss, None))
    out: dict[str, Any] = {"n": n, "n_groups": n_groups, "rows": rows}
    if "squared" in losses and 0.0 in eps_values:
        out["exact_barycenter_loss"] = barycenter_loss(pred, codes, n_groups)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--groups", type=int, default=16)
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    out = run(args.n, args.groups) | {"note": args.note, "cpu_count": os.cpu_count()}
    print(json.dumps(out, indent=2))
    path = Path(__file__).parent / "results" / "regression_debiasing.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
