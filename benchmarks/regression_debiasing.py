"""Benchmark of :class:`fairopt.postprocessing.RegressionDebiaser` at scale (issue 33 item 3).

Synthetic predictions (``n`` rows, ``n_groups`` groups with shifted and scaled normal
distributions), a quantile grid of ``grid`` output values, squared loss, eps in ``eps_values``.
Reports fit seconds (collapse + LP rounds + plans), the loss, the largest CDF gap and the number of
LP rounds; at eps = 0 also the loss of the exact (continuous) W2 barycenter, so the grid's
accuracy is visible.

    python benchmarks/regression_debiasing.py [--n 1000000] [--groups 16] [--grid 200] [--note TEXT]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

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


def run(n: int = 10**6, n_groups: int = 16, grid: int = 200, eps_values: tuple[float, ...] = (0.0, 0.01, 0.05),
        loss: str = "squared", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_groups, n)
    pred = rng.normal(size=n) * (1 + 0.05 * codes) + 0.1 * codes
    rows = []
    for eps in eps_values:
        t0 = time.perf_counter()
        deb = RegressionDebiaser(eps=eps, loss=loss, grid=grid, random_state=0).fit(pred, sensitive_features=codes)
        fit_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        deb.predict(pred, sensitive_features=codes)
        rows.append({"eps": eps, "fit_seconds": fit_s, "predict_seconds": time.perf_counter() - t1,
                     "loss": deb.train_loss_, "gap": deb.train_gap_, "input_gap": deb.input_gap_,
                     "lp_rounds": deb.solution_.rounds, "grid_points": int(deb.grid_.shape[0]),
                     "backend": deb.solution_.solution.backend if deb.solution_.solution else None})
    out = {"n": n, "n_groups": n_groups, "grid": grid, "loss": loss, "rows": rows}
    if loss == "squared" and 0.0 in eps_values:
        out["exact_barycenter_loss"] = barycenter_loss(pred, codes, n_groups)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--groups", type=int, default=16)
    ap.add_argument("--grid", type=int, default=200)
    ap.add_argument("--loss", default="squared")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    out = run(args.n, args.groups, args.grid, loss=args.loss) | {"note": args.note}
    print(json.dumps(out, indent=2))
    path = Path(__file__).parent / "results" / f"regression_debiasing_{args.loss}_grid{args.grid}.json"
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
