"""Benchmark: FairClassifier (fair classification by reductions) against fairlearn's ExponentiatedGradient.

Protocol: same data, same learner (``LogisticRegression(max_iter=1000)``), same demographic-parity
bound ``eps`` (fairlearn ``DemographicParity(difference_bound=eps)``, ``eps=eps``); both with their
defaults otherwise. Metrics of the randomized classifiers are exact expectations: error
``mean |P(h=1) - y|`` and DP gap ``max_a |E[h | A=a] - E[h]|`` on the training and test splits;
fit seconds and oracle calls measured in the same run (the machine may be loaded: compare ratios).

Data: Adult (sensitive ``sex``; standardised numeric and one-hot categorical features; 70/30
stratified split, seed 0) and a small synthetic set (n = 2000, 4 Gaussian features shifted by
group).

Run: ``FAIROPT_DATA_HOME=../shared/datasets python benchmarks/fair_classification.py [--quick]``;
writes ``benchmarks/results/fair_classification.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fairopt.inprocessing import FairClassifier

RESULTS = Path(__file__).resolve().parent / "results"


def dp_gap(p, a) -> float:
    return float(max(abs(p[a == g].mean() - p.mean()) for g in np.unique(a)))


def synthetic(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = rng.standard_normal((n, 4)) + 0.8 * a[:, None]
    y = (X @ [1, -0.5, 0.3, 0.2] + 0.5 * rng.standard_normal(n) > 0.5).astype(int)
    return train_test_split(X, y, np.where(a == 1, "b", "a"), test_size=0.3, random_state=0)


def adult():
    from fairopt.data.loaders import load_adult
    df = load_adult()
    y = df.pop("income").to_numpy().astype(int)
    a = df["sex"].to_numpy()
    num = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    cat = ["workclass", "marital_status", "occupation", "relationship", "race", "sex"]
    ct = ColumnTransformer([("num", StandardScaler(), num),
                            ("cat", OneHotEncoder(sparse_output=False, handle_unknown="ignore"), cat)])
    Xtr, Xte, ytr, yte, atr, ate = train_test_split(df, y, a, test_size=0.3, random_state=0, stratify=y)
    return ct.fit_transform(Xtr), ct.transform(Xte), ytr, yte, atr, ate


def compare(data, eps: float) -> dict:
    """Fit both on the same split; return their train/test error and DP gap."""
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    Xtr, Xte, ytr, yte, atr, ate = data
    out = {}
    t0 = time.perf_counter()
    fl = ExponentiatedGradient(LogisticRegression(max_iter=1000), DemographicParity(difference_bound=eps),
                               eps=eps).fit(Xtr, ytr, sensitive_features=atr)
    out["fairlearn"] = {"seconds": time.perf_counter() - t0, "oracle_calls": int(fl.n_oracle_calls_),
                        "proba": lambda X: fl._pmf_predict(X)[:, 1]}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fo = FairClassifier(eps=eps, random_state=0).fit(Xtr, ytr, sensitive_features=atr)
    out["fairopt"] = {"seconds": time.perf_counter() - t0, "oracle_calls": int(fo.n_oracle_calls_),
                      "status": fo.status_, "warnings": len(caught),
                      "proba": lambda X: fo.predict_proba(X)[:, 1]}
    for rec in out.values():
        proba = rec.pop("proba")
        for split, (X, y, a) in {"train": (Xtr, ytr, atr), "test": (Xte, yte, ate)}.items():
            p = proba(X)
            rec[f"{split}_error"] = float(np.mean(np.abs(p - y)))
            rec[f"{split}_dp_gap"] = dp_gap(p, a)
    for split in ("train", "test"):
        out[f"{split}_error_difference_points"] = 100 * (out["fairopt"][f"{split}_error"]
                                                         - out["fairlearn"][f"{split}_error"])
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="synthetic data only (smoke test)")
    parser.add_argument("--out", type=Path, default=RESULTS / "fair_classification.json")
    args = parser.parse_args(argv)
    results = {"synthetic": {str(eps): compare(synthetic(), eps) for eps in (0.01, 0.05)}}
    if not args.quick:
        results["adult"] = {"0.01": compare(adult(), 0.01)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    for data, runs in results.items():
        for eps, r in runs.items():
            print(f"{data} eps={eps}: train error fairopt {r['fairopt']['train_error']:.4f} vs fairlearn "
                  f"{r['fairlearn']['train_error']:.4f}; test {r['fairopt']['test_error']:.4f} vs "
                  f"{r['fairlearn']['test_error']:.4f}; fit {r['fairopt']['seconds']:.1f}s vs "
                  f"{r['fairlearn']['seconds']:.1f}s")
    return results


if __name__ == "__main__":
    main()
