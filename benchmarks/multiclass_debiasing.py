"""Benchmark: fair post-processing for equalized odds / equal opportunity and multiclass scale
(issue 33).

Sections
--------
``binary``
    ``ThresholdDebiaser`` (and ``MulticlassDebiaser`` with two classes, equalized odds) against
    error-parity's ``RelaxedThresholdOptimizer`` and OxonFair's ``FairPredictor`` on the same
    scores, in one process: Adult logistic-regression scores (sex: 2 groups; sex x white/non-white:
    4 groups; tolerances 0.05 and 0.01) and synthetic scores (10^5 and 10^6 rows, 2 and 10
    groups, tolerance 0.02). Fit time (best of ``--repeats``), test accuracy of one seeded draw
    per row (and the expected accuracy of the randomized rules), and the test gap: the largest
    difference between two groups' true- (and false-) positive rates.
    Tolerances: error-parity's ``tolerance`` t bounds the largest pairwise gap (l-inf), as
    ``ThresholdDebiaser(eps=t)`` does; OxonFair gets ``equalized_odds_max`` /
    ``equal_opportunity`` at t. ``MulticlassDebiaser`` bounds ``|group rate - pooled rate|``, so
    ``eps = t/2`` guarantees a pairwise gap <= t and ``eps = t`` is implied by one (both run, with
    ``isotonic_per_group`` calibration); its equal opportunity is per class (true-negative rate too), so it runs in
    the equalized-odds rows only.
``accuracy``
    The accuracy criterion over many splits, not one: Adult (2 and 4 groups), equalized odds
    at t = 0.05 and 0.01, ``--splits`` random 50/25/25 splits (logistic regression / fit / test).
    Per split and method: test accuracy of one seeded draw per row, the expected test accuracy
    of fairopt's randomized rules, the test gap, and the accuracy on the fitting rows (where
    ``MulticlassDebiaser(eps = t)`` optimises over a superset of error-parity's feasible rules);
    reported as means with their standard errors and the number of splits on which fairopt is
    at least error-parity.
``scale``
    ``MulticlassDebiaser``, demographic parity, 10^6 rows x 10 classes x 64 intersectional
    groups, generic continuous scores (softmax of Gaussian logits, every score vector distinct),
    eps = 0 (default) and 0.01.
``chunked``
    10^8 rows x 5 classes x 8 groups through ``score_bins=10`` and the Dask statistics path, in
    a fresh process whose peak RSS (``resource.getrusage``) is reported.

Run: ``python benchmarks/multiclass_debiasing.py [--smoke] [--only binary,accuracy,scale] [--splits 20]``; writes
``benchmarks/results/multiclass_debiasing.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from fairopt.postprocessing import MulticlassDebiaser, ThresholdDebiaser

RESULTS = Path(__file__).resolve().parent / "results"
OXONFAIR_MAX_GROUPS = 4


# ----------------------------------------------------------------------------------- data
def adult_scores(groups: int, seed: int = 0):
    """Logistic-regression scores on Adult: (fit, test) tuples of (p, y, g)."""
    return adult_splits(seed)[groups]


def adult_splits(seed: int):
    """One random 50/25/25 split of Adult: logistic-regression scores and labels on the fitting
    and test quarters, with the 2-group (sex) and 4-group (sex x white/non-white) codes."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairopt.data import load_adult
    df = load_adult()
    y = df.pop("income").to_numpy().astype(int)
    female = (df["sex"].astype(str).to_numpy() == "Female").astype(int)
    groups = {2: female, 4: 2 * female + (df["race"].astype(str).to_numpy() != "White")}
    num = list(df.select_dtypes("number").columns)
    cat = [c for c in df.columns if c not in num]
    model = make_pipeline(ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), cat),
                                             ("n", StandardScaler(), num)]), LogisticRegression(max_iter=500))
    perm = np.random.default_rng(seed).permutation(len(y))
    tr, fi, te = np.split(perm, [len(y) // 2, 3 * len(y) // 4])
    model.fit(df.iloc[tr], y[tr])
    p = model.predict_proba(df)[:, 1]
    return {G: ((p[fi], y[fi], g[fi]), (p[te], y[te], g[te])) for G, g in groups.items()}


def _split_rows(fit, test, tol: float, seed: int) -> dict:
    """Equalized odds at tolerance ``tol`` on one split: every method's accuracies and gaps."""
    (pf, yf, gf), (pt, yt, gt) = fit, test
    rng = np.random.default_rng(seed)
    rows: dict = {}

    def record(name, h_fit, h_test, randomized=True):
        draw = (rng.random(h_test.shape[0]) < h_test).astype(int) if randomized else h_test.astype(int)
        rows[name] = {"test_accuracy": float(np.mean(draw == yt)),
                      "test_accuracy_expected": float(np.mean(h_test * yt + (1 - h_test) * (1 - yt))),
                      "test_gap": odds_gap(h_test, yt, gt, "equalized_odds"),
                      "fit_accuracy_expected": float(np.mean(h_fit * yf + (1 - h_fit) * (1 - yf)))}

    td = ThresholdDebiaser(constraint="equalized_odds", eps=tol, random_state=0).fit(pf, yf, sensitive_features=gf)
    record("fairopt_threshold", td.predict_proba(pf, sensitive_features=gf)[:, 1],
           td.predict_proba(pt, sensitive_features=gt)[:, 1])
    Sf, St = np.column_stack([1 - pf, pf]), np.column_stack([1 - pt, pt])
    for name, eps in (("fairopt_multiclass", tol / 2), ("fairopt_multiclass_eps_t", tol)):
        md = MulticlassDebiaser(constraint="equalized_odds", eps=eps, calibration="isotonic_per_group").fit(
            Sf, yf, sensitive_features=gf)
        record(name, md.predict_proba(Sf, sensitive_features=gf)[:, 1],
               md.predict_proba(St, sensitive_features=gt)[:, 1])
    from error_parity import RelaxedThresholdOptimizer
    ep = RelaxedThresholdOptimizer(predictor=lambda X: X, constraint="equalized_odds", tolerance=tol, seed=seed)
    ep.fit(X=pf, y=yf, group=gf, y_scores=pf)
    # error-parity's rule is randomized too; its predictions are one seeded draw (no probabilities)
    record("error_parity", np.asarray(ep(X=pf, group=gf), float), np.asarray(ep(X=pt, group=gt), float),
           randomized=False)
    return rows


def accuracy(splits: int) -> dict:
    """The accuracy criterion over ``splits`` random Adult splits (see the module docstring)."""
    try:
        import error_parity  # noqa: F401
    except ImportError:
        return {"skipped": "pip install error-parity"}
    per: dict = {}
    for seed in range(splits):
        for G, (fit, test) in adult_splits(seed).items():
            for tol in (0.05, 0.01):
                per.setdefault(f"adult_{G}groups_tol{tol}", []).append(_split_rows(fit, test, tol, seed))
    out: dict = {"splits": splits, "criterion": "equalized_odds",
                 "note": "error-parity's accuracies are of its own seeded draw (its rule is randomized and "
                         "it returns no probabilities), so its 'expected' columns equal its draw"}
    for case, runs in per.items():
        summary: dict = {}
        for method in runs[0]:
            cols = {k: np.array([r[method][k] for r in runs]) for k in runs[0][method]}
            summary[method] = {k: {"mean": float(v.mean()), "se": float(v.std(ddof=1) / np.sqrt(len(v)))}
                               for k, v in cols.items()}
            if method != "error_parity":
                ep_test = np.array([r["error_parity"]["test_accuracy"] for r in runs])
                ep_fit = np.array([r["error_parity"]["fit_accuracy_expected"] for r in runs])
                summary[method]["splits_test_at_least_error_parity"] = int(np.sum(cols["test_accuracy"] >= ep_test))
                summary[method]["splits_fit_at_least_error_parity"] = int(
                    np.sum(cols["fit_accuracy_expected"] >= ep_fit - 1e-12))
        out[case] = summary
        print(case, {m: round(v["test_accuracy"]["mean"], 4) for m, v in summary.items()}, flush=True)
    return out


def synthetic(n: int, groups: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    logit = rng.normal(0.0, 1.5, n) + 0.6 * (g % 3) - 0.3 * (g % 2)
    p = 1 / (1 + np.exp(-logit))
    y = (rng.random(n) < 1 / (1 + np.exp(-(logit + 0.2 * (g % 2))))).astype(int)
    return p, y, g


# ------------------------------------------------------------------------------ metrics
def odds_gap(pred: np.ndarray, y: np.ndarray, g: np.ndarray, constraint: str) -> float:
    """Largest difference between two groups' TPRs (and FPRs) of (probabilistic) predictions."""
    gaps = []
    for label in ((1, 0) if constraint == "equalized_odds" else (1,)):
        r = [pred[(g == k) & (y == label)].mean() for k in np.unique(g)]
        gaps.append(max(r) - min(r))
    return float(max(gaps))


def _best(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def binary_case(fit, test, constraint: str, tol: float, repeats: int, peers: bool = True) -> dict:
    (pf, yf, gf), (pt, yt, gt) = fit, test
    rng = np.random.default_rng(0)
    rows: dict = {}

    def record(name, seconds, draw, expected=None):
        rows[name] = {"fit_seconds": seconds, "test_accuracy": float(np.mean(draw == yt)),
                      "test_gap": odds_gap(draw.astype(float), yt, gt, constraint)}
        if expected is not None:
            rows[name]["test_accuracy_expected"] = float(np.mean(expected * yt + (1 - expected) * (1 - yt)))
            rows[name]["test_gap_expected"] = odds_gap(expected, yt, gt, constraint)

    sec, td = _best(lambda: ThresholdDebiaser(constraint=constraint, eps=tol, random_state=0).fit(
        pf, yf, sensitive_features=gf), repeats)
    h = td.predict_proba(pt, sensitive_features=gt)[:, 1]
    record("fairopt_threshold", sec, (rng.random(h.shape[0]) < h).astype(int), h)
    if constraint == "equalized_odds":
        Sf, St = np.column_stack([1 - pf, pf]), np.column_stack([1 - pt, pt])
        for name, eps in (("fairopt_multiclass", tol / 2), ("fairopt_multiclass_eps_t", tol)):
            sec, md = _best(lambda eps=eps: MulticlassDebiaser(constraint=constraint, eps=eps,
                                                               calibration="isotonic_per_group").fit(
                Sf, yf, sensitive_features=gf), repeats)
            h = md.predict_proba(St, sensitive_features=gt)[:, 1]
            record(name, sec, (rng.random(h.shape[0]) < h).astype(int), h)
    if not peers:
        return rows
    try:
        from error_parity import RelaxedThresholdOptimizer
    except ImportError:
        rows["error_parity"] = {"skipped": "pip install error-parity"}
    else:
        def ep():
            r = RelaxedThresholdOptimizer(predictor=lambda X: X, constraint=("equalized_odds"
                                          if constraint == "equalized_odds" else "true_positive_rate_parity"),
                                          tolerance=tol, seed=0)
            r.fit(X=pf, y=yf, group=gf, y_scores=pf)
            return r
        sec, r = _best(ep, repeats)
        record("error_parity", sec, np.asarray(r(X=pt, group=gt)).astype(int))
    if len(np.unique(gf)) > OXONFAIR_MAX_GROUPS:
        rows["oxonfair"] = {"skipped": f"OxonFair searches a grid of per-group thresholds, whose size grows "
                                       f"exponentially with the groups: 4 groups x 2000 rows took 8 s; not run "
                                       f"above {OXONFAIR_MAX_GROUPS} groups"}
        return rows
    try:
        from oxonfair import FairPredictor
        from oxonfair.utils import group_metrics as gm
    except ImportError:
        rows["oxonfair"] = {"skipped": "pip install oxonfair"}
    else:
        def logits(p):
            z = np.log(np.clip(p, 1e-12, 1) / np.clip(1 - p, 1e-12, 1))
            return np.column_stack([-z / 2, z / 2])
        metric = gm.equalized_odds_max if constraint == "equalized_odds" else gm.equal_opportunity

        def ox():
            fp = FairPredictor(None, {"data": logits(pf), "target": yf, "groups": gf})
            fp.fit(gm.accuracy, metric, tol)
            return fp
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sec, fp = _best(ox, repeats)
            pred = np.asarray(fp.predict({"data": logits(pt), "target": yt, "groups": gt})).astype(int)
        record("oxonfair", sec, pred)
    return rows


def binary(repeats: int, smoke: bool = False) -> dict:
    out: dict = {}
    cases = []
    if not smoke:
        for G in (2, 4):
            fit, test = adult_scores(G)
            cases += [(f"adult_{G}groups_tol{t}", fit, test, t) for t in (0.05, 0.01)]
    sizes = [(2000, 2), (2000, 4)] if smoke else [(10**5, 2), (10**5, 10), (10**6, 2), (10**6, 10)]
    for n, G in sizes:
        fit, test = synthetic(n, G, 0), synthetic(min(n, 10**5), G, 1)
        cases.append((f"synthetic_{n}_{G}groups", fit, test, 0.02))
    for name, fit, test, tol in cases:
        for constraint in ("equalized_odds", "equal_opportunity"):
            key = f"{name}_{constraint}"
            out[key] = binary_case(fit, test, constraint, tol, repeats)
            print(key, {m: round(v.get("fit_seconds", float("nan")), 3) for m, v in out[key].items()}, flush=True)
    return out


def softmax_scores(n: int, K: int, G: int, seed: int = 0):
    """Generic continuous scores: softmax of Gaussian logits with group-dependent means (every
    score vector distinct), and the groups."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, G, n)
    Z = rng.normal(0.0, 1.5, (n, K))
    Z += 0.5 * np.eye(K)[g % K] - 0.3 * np.eye(K)[(g // 8) % K]
    Z -= Z.max(axis=1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=1, keepdims=True)
    return Z, g


def scale(smoke: bool = False) -> dict:
    """10^6 rows x 10 classes x 64 groups, demographic parity, generic continuous scores (every
    row its own atom), at the default eps = 0 and at eps = 0.01: the scale path (smoothed
    small dual, then the LP over the near-tied atoms, certified by its duals)."""
    n, K, G = (5000, 4, 8) if smoke else (10**6, 10, 64)
    S, g = softmax_scores(n, K, G)
    out: dict = {"rows": n, "classes": K, "groups": G, "constraint": "demographic_parity",
                 "scores": "softmax of Gaussian logits (all score vectors distinct)", "runs": []}
    for eps in (0.0, 0.01):
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        deb = MulticlassDebiaser(constraint="demographic_parity", eps=eps).fit(S, sensitive_features=g)
        sec = time.perf_counter() - t0
        info = deb.solution_.info
        out["runs"].append({"eps": eps, "fit_seconds": sec, "atoms": deb.n_atoms_,
                            "solve_seconds": deb.solution_.solve_seconds,
                            "dual_seconds": info.get("dual_seconds"), "phase_seconds": info.get("phase_seconds"),
                            "lp_rounds": info.get("rounds"), "lp_free_atoms": info.get("n_free"),
                            "lp_columns": info.get("n_columns"), "load_1min_before": load,
                            "load_1min_after": os.getloadavg()[0],
                            "certified": info.get("certified"), "path": info.get("path", "full LP"),
                            "train_cost": deb.train_cost_, "train_gap": deb.train_gap_})
        print("scale", out["runs"][-1], flush=True)
    return out


def peak_rss_mb() -> float:
    """Peak resident memory of this process image: ``VmHWM`` of ``/proc/self/status`` (reset
    by ``exec``; ``ru_maxrss`` keeps the parent's peak across ``fork`` + ``exec`` on Linux),
    else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _chunked_child(n: int, K: int, G: int, bins: int, block: int) -> dict:
    """Run in a fresh process: a lazily generated Dask score matrix of ``n`` rows (blocks made on
    the workers, never all in memory) fitted with ``score_bins``; peak RSS of this process."""
    import dask
    import dask.array as da

    def make(i: int, rows: int, what: str):
        rng = np.random.default_rng([7, i])
        gg = rng.integers(0, G, rows)
        if what == "g":
            return gg
        Z = rng.normal(0.0, 1.2, (rows, K)) + 0.6 * np.eye(K)[gg % K]
        Z -= Z.max(axis=1, keepdims=True)
        np.exp(Z, out=Z)
        Z /= Z.sum(axis=1, keepdims=True)
        return Z
    sizes = [min(block, n - i) for i in range(0, n, block)]
    S = da.concatenate([da.from_delayed(dask.delayed(make)(i, r, "S"), (r, K), float) for i, r in enumerate(sizes)])
    g = da.concatenate([da.from_delayed(dask.delayed(make)(i, r, "g"), (r,), np.int64) for i, r in enumerate(sizes)])
    rss0 = peak_rss_mb()
    t0 = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=2):
        deb = MulticlassDebiaser(constraint="demographic_parity", eps=0.01, score_bins=bins).fit(
            S, sensitive_features=g)
    sec = time.perf_counter() - t0
    return {"rows": n, "classes": K, "groups": G, "score_bins": bins, "block_rows": block,
            "constraint": "demographic_parity", "eps": 0.01, "fit_seconds": sec, "atoms": deb.n_atoms_,
            "train_cost": deb.train_cost_, "train_gap": deb.train_gap_,
            "peak_rss_mb": peak_rss_mb(), "peak_rss_measure": "VmHWM of /proc/self/status (whole process)",
            "rss_before_fit_mb": rss0,
            "input": "Dask array generated block by block on the workers (threaded scheduler, 2 workers)"}


def chunked(smoke: bool = False) -> dict:
    """The 10^8-row chunked path in a fresh process (so its peak RSS is its own)."""
    import subprocess
    import sys
    n, K, G, bins, block = (200_000, 3, 4, 10, 50_000) if smoke else (10**8, 5, 8, 10, 10**6)
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import multiclass_debiasing as b; print(json.dumps(b._chunked_child({n}, {K}, {G}, {bins}, {block})))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    out = json.loads(res.stdout.strip().splitlines()[-1])
    print("chunked", out, flush=True)
    return out


SECTIONS = ("binary", "accuracy", "scale", "chunked")


def run(only=SECTIONS, repeats: int = 3, smoke: bool = False, out: Path | None = RESULTS, splits: int = 20):
    import scipy.linalg  # noqa: F401  (load every BLAS / OpenMP pool before pinning them)
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)   # tiny BLAS calls spin across threads on a loaded 2-core machine
    load = os.getloadavg()[0]
    res: dict = {"machine_note": f"2-core machine shared with other jobs (1-min load {load:.1f} at start); "
                                 "times are best of repeats; BLAS/OpenMP pools pinned to one thread",
           "smoke": smoke}
    if "binary" in only:
        res["binary"] = binary(repeats, smoke)
    if "accuracy" in only and not smoke:
        res["accuracy"] = accuracy(splits)
    if "scale" in only:
        res["scale"] = scale(smoke)
    if "chunked" in only:
        res["chunked"] = chunked(smoke)
    res["load_end"] = os.getloadavg()[0]
    if out is not None and not smoke:
        out.mkdir(parents=True, exist_ok=True)
        path = out / "multiclass_debiasing.json"
        if set(only) != set(SECTIONS) and path.exists():   # a partial rerun: keep the rest
            old = json.loads(path.read_text())
            old.update({k: v for k, v in res.items() if k in only})
            old.setdefault("reruns", []).append({"sections": list(only), "machine_note": res["machine_note"]})
            res = old
        path.write_text(json.dumps(res, indent=2, default=float))
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--splits", type=int, default=20, help="random Adult splits of the accuracy section")
    ap.add_argument("--no-write", action="store_true", help="print only; leave the results JSON alone")
    a = ap.parse_args(argv)
    return run(tuple(a.only.split(",")), a.repeats, a.smoke, out=None if a.no_write else RESULTS, splits=a.splits)


if __name__ == "__main__":
    main()
