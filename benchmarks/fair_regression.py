"""Reproduce Agarwal, Dudík & Wu (2019), Sec. 6 / App. G: fair regression under statistical parity.

Writes ``benchmarks/results/fair_regression.json``, ``fair_regression.png`` (the paper's Figure 1:
relative test loss against worst SP violation, per data set) and ``fair_regression_table1.md``
(seconds per oracle call on the 1,000-row law-school sample, Table 1 format), plus the
bounded-group-loss comparison with fairlearn's ExponentiatedGradient on law school.

    FAIROPT_DATA_HOME=../shared/datasets python benchmarks/fair_regression.py            # Dask sweep
    FAIROPT_DATA_HOME=../shared/datasets python benchmarks/fair_regression.py --executor serial
    FAIROPT_DATA_HOME=../shared/datasets python benchmarks/fair_regression.py --quick    # smoke run

Protocol: 50/50 train/test split, N = 40 thresholds, a sweep of eps; for each method the sweep
points on the *training* Pareto front (convex envelope) are evaluated on test. Relative loss =
loss minus the smallest baseline loss (unconstrained, SEO, fair classification). 95% intervals:
loss +- 1.96 standard errors; SP +- the DKW half-width (the same for every method).
"""
from __future__ import annotations

import os

# Single-threaded BLAS: the sweep parallelises over points; threaded BLAS on 2 shared cores
# oversubscribes (a 1000x146 least-squares fit went from 0.03 s to 0.5 s under load).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairopt.inprocessing import FairClassifier, FairRegressor, SEORegressor  # noqa: E402
from fairopt.metrics import ks_statistical_parity  # noqa: E402
from fairopt.parallel import get_executor  # noqa: E402
from fairopt.reductions import StatisticalParity  # noqa: E402
from fairopt.reductions.evaluation import dkw_halfwidth, lower_convex_envelope, mixture_sp_disparity  # noqa: E402
from fairopt.reductions.losses import get_loss  # noqa: E402
from fairopt.reductions.oracles import HingeLPOracle, LeastSquaresOracle, RiskMinimizationOracle  # noqa: E402
from fairopt.runs.fair_regression import prepare_data  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
EPS = [0.2, 0.15, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01]
FC_EPS = [0.1, 0.05, 0.02, 0.01, 0.005, 0.001]
#: data set -> (loader name, subsample, methods)
DATASETS = {
    "adult": ("adult", None, ["LS", "LR"]),
    "adult-2k": ("adult", 2000, ["LS", "LR", "CS"]),
    "law": ("law", None, ["LS"]),
    "law-2k": ("law", 2000, ["LS", "CS"]),
    "crime": ("crime", None, ["LS", "CS"]),
}
GAME = {"LS": dict(max_iter=30, min_iter=15), "LR": dict(max_iter=12, min_iter=6),
        "CS": dict(max_iter=12, min_iter=6)}


def _oracle(method: str, loss: str, n_train: int):
    if method == "CS":
        return HingeLPOracle(solver="highs")
    big = n_train > 5000
    if method == "LR":
        kw = dict(refine_rounds=1, refine_weights=(1.0,)) if big else dict(refine_rounds=3)
        return RiskMinimizationOracle(LogisticRegression(max_iter=2000), **kw)
    return LeastSquaresOracle(LinearRegression(), refine_rounds=3)


def _loss_ci(losses: np.ndarray) -> float:
    return float(1.96 * losses.std(ddof=1) / np.sqrt(losses.size))


def fit_point(job: dict) -> dict:
    """One (data set, method, eps) sweep point; picklable for the executors."""
    data, method, eps, loss_name = job["data"], job["method"], job["eps"], job["loss"]
    loss = get_loss(loss_name)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "FC":
            est = FairClassifier(constraint="demographic_parity", eps=eps,
                                 estimator=LogisticRegression(max_iter=2000), max_iter=30)
            est.fit(data["X_train"], data["y_train"].astype(int), sensitive_features=data["a_train"])
            comps = {p: np.vstack([loss.score_from_logit(h.estimator.decision_function(data[f"X_{p}"]))
                                   if hasattr(h, "estimator") else np.full(len(data[f"y_{p}"]), h.value)
                                   for h in est.predictors_]) for p in ("train", "test")}
            calls = est.n_oracle_calls_
        else:
            est = FairRegressor(estimator=_oracle(method, loss_name, len(data["y_train"])), eps=eps,
                                loss=loss_name, grid_size=40, round="mid", eta0=2.0, **GAME[method])
            est.fit(data["X_train"], data["y_train"], sensitive_features=data["a_train"])
            comps = {p: est.predict_components(data[f"X_{p}"]) for p in ("train", "test")}
            calls = est.n_oracle_calls_
    seconds = time.perf_counter() - t0
    w = est.weights_
    out = {"dataset": job["dataset"], "method": method, "eps": eps, "seconds": seconds,
           "oracle_calls": int(calls), "support": int(w.size), "status": est.status_}
    for p in ("train", "test"):
        per_row = w @ loss.value(data[f"y_{p}"][None, :], comps[p])
        out[f"{p}_loss"] = float(per_row.mean())
        out[f"{p}_loss_ci"] = _loss_ci(per_row)
        out[f"{p}_sp"] = mixture_sp_disparity(comps[p], w, data[f"a_{p}"])
    return out


def baselines(name: str, data: dict, loss_name: str) -> list[dict]:
    loss = get_loss(loss_name)
    models = {}
    if loss_name == "logistic":
        clf = LogisticRegression(max_iter=2000).fit(data["X_train"], data["y_train"])
        models["unconstrained"] = lambda X: loss.score_from_logit(clf.decision_function(X))
    else:
        lr = LinearRegression().fit(data["X_train"], data["y_train"])
        seo = SEORegressor().fit(data["X_train"], data["y_train"], sensitive_features=data["a_train"])
        models["unconstrained"] = lambda X: np.clip(lr.predict(X), 0, 1)
        models["SEO"] = seo.predict
    rows = []
    for method, predict in models.items():
        row = {"dataset": name, "method": method}
        for p in ("train", "test"):
            s = predict(data[f"X_{p}"])
            per_row = loss.value(data[f"y_{p}"], s)
            row.update({f"{p}_loss": float(per_row.mean()), f"{p}_loss_ci": _loss_ci(per_row),
                        f"{p}_sp": float(ks_statistical_parity(s, data[f"a_{p}"]))})
        rows.append(row)
    return rows


def frontier(points: list[dict]) -> list[dict]:
    """Sweep points on the training convex envelope (loss vs SP), sorted by train SP."""
    if not points:
        return []
    idx = lower_convex_envelope([p["train_sp"] for p in points], [p["train_loss"] for p in points])
    return [points[i] for i in idx]


def oracle_timing(data: dict, repeats: int = 3) -> list[dict]:
    """Seconds per Best_h call on the law-school training half (Table 1)."""
    y, a, X = data["y_train"], data["a_train"], data["X_train"]
    rng = np.random.default_rng(0)
    rows = []
    setups = [
        ("CS", "linear", "square", HingeLPOracle(solver="highs")),
        ("LS", "linear", "square", LeastSquaresOracle(LinearRegression())),
        ("LS", "tree ensemble", "square", LeastSquaresOracle(HistGradientBoostingRegressor(random_state=0))),
        ("LR", "linear", "logistic", RiskMinimizationOracle(LogisticRegression(max_iter=2000))),
        ("LR", "tree ensemble", "logistic",
         RiskMinimizationOracle(HistGradientBoostingClassifier(random_state=0))),
    ]
    for oracle_name, model, loss_name, oracle in setups:
        moment = StatisticalParity(eps=0.05, grid_size=40, loss=loss_name).fit(y, a)
        oracle.prepare(moment, X)
        lams = [rng.exponential(0.002, moment.n_rows) for _ in range(repeats + 1)]
        t0 = time.perf_counter()
        oracle.best_response(lams[0])                 # first call (builds/compiles)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for lam in lams[1:]:
            oracle.best_response(lam)
        rest = (time.perf_counter() - t0) / repeats
        row = {"oracle": oracle_name, "model": model, "first_call_seconds": first,
               "seconds_per_call": rest, "n": int(y.size), "N": 40}
        if oracle_name == "CS":
            row.update({"augmented_rows": int(y.size * 40), "lp_form": oracle._lp.chosen_form,
                        "lp_rows": 2 * oracle._features.shape[1]})
        rows.append(row)
    return rows


def bgl_vs_fairlearn(data: dict, zetas: list[float]) -> list[dict]:
    """Bounded group loss on law school: fairopt vs fairlearn ExponentiatedGradient, same estimator.

    Losses in the paper's units (square loss / 2); fairlearn's SquareLoss is (y - u)^2, so its
    bound is 2 zeta. Violation = max(0, max_a group loss - zeta).
    """
    from fairlearn.reductions import BoundedGroupLoss, ExponentiatedGradient, SquareLoss
    X, y, a = data["X_train"], data["y_train"], data["a_train"]
    groups = np.unique(a)

    def evaluate(comps, w):
        losses = (y[None, :] - comps) ** 2 / 2
        group = [float(w @ losses[:, a == g].mean(axis=1)) for g in groups]
        return float(w @ losses.mean(axis=1)), group

    rows = []
    for zeta in zetas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            fl = ExponentiatedGradient(LinearRegression(), constraints=BoundedGroupLoss(
                SquareLoss(0, 1), upper_bound=2 * zeta), max_iter=50)
            fl.fit(X, y, sensitive_features=a)
            t_fl = time.perf_counter() - t0
            t0 = time.perf_counter()
            ours = FairRegressor(constraint="bounded_group_loss", eps=zeta).fit(
                X, y, sensitive_features=a)
            t_ours = time.perf_counter() - t0
        w_fl = fl.weights_.to_numpy()
        keep = w_fl > 0
        comps_fl = np.vstack([np.clip(h.predict(X), 0, 1) for h, k in zip(fl.predictors_, keep, strict=False) if k])
        loss_fl, group_fl = evaluate(comps_fl, w_fl[keep] / w_fl[keep].sum())
        loss_o, group_o = evaluate(ours.predict_components(X), ours.weights_)
        rows.append({
            "zeta": zeta, "fairlearn_train_loss": loss_fl, "fairopt_train_loss": loss_o,
            "fairlearn_group_loss": group_fl, "fairopt_group_loss": group_o,
            "fairlearn_violation": max(0.0, max(group_fl) - zeta),
            "fairopt_violation": max(0.0, max(group_o) - zeta),
            "fairlearn_seconds": t_fl, "fairopt_seconds": t_ours, "speedup": t_fl / t_ours,
            "fairopt_oracle_calls": ours.n_oracle_calls_, "fairopt_status": ours.status_,
            "loss_not_worse": loss_o <= loss_fl + 1e-12,
            "violation_not_worse": max(0.0, max(group_o) - zeta) <= max(0.0, max(group_fl) - zeta) + 1e-12,
        })
    return rows


def plot(results: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results["datasets"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), squeeze=False)
    colours = {"LS": "tab:blue", "LR": "tab:green", "CS": "tab:red", "FC": "tab:purple"}
    for ax, name in zip(axes[0], names, strict=False):
        res = results["datasets"][name]
        ref = res["reference_test_loss"]
        half = res["sp_halfwidth"]
        for method, pts in res["frontiers"].items():
            if not pts:
                continue
            x = [p["test_sp"] for p in pts]
            yv = [p["test_loss"] - ref for p in pts]
            ci = [p["test_loss_ci"] for p in pts]
            ax.plot(x, yv, "o-", color=colours.get(method, "k"), label=f"ours ({method})"
                    if method != "FC" else "fair classification")
            ax.fill_between(x, np.subtract(yv, ci), np.add(yv, ci), color=colours.get(method, "k"),
                            alpha=0.12)
        for b in res["baselines"]:
            marker = "s" if b["method"] == "unconstrained" else "^"
            ax.errorbar(b["test_sp"], b["test_loss"] - ref, xerr=half, fmt=marker, color="k",
                        capsize=3, label=b["method"])
        ax.set_title(f"{name} (n_train={res['n_train']}, {res['loss']} loss)")
        ax.legend(fontsize=7)
        ax.set_xlabel("worst SP violation (test)")
        ax.axhline(0, color="grey", lw=0.5)
    axes[0][0].set_ylabel("relative test loss")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def table1_markdown(rows: list[dict]) -> str:
    paper = {("CS", "linear"): 18.94, ("LS", "linear"): 3.48, ("LS", "tree ensemble"): 3.60,
             ("LR", "linear"): 3.62, ("LR", "tree ensemble"): 3.69}
    lines = ["# Seconds per oracle call (Best_h), law school subsample, n = 1,000 training rows, N = 40",
             "", "| oracle | model class | seconds per call (fairopt) | first call | paper |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['oracle']} | {r['model']} | {r['seconds_per_call']:.3f} | "
                     f"{r['first_call_seconds']:.3f} | {paper[(r['oracle'], r['model'])]:.2f} |")
    cs = next(r for r in rows if r["oracle"] == "CS")
    lines += ["", f"CS = weighted hinge LP, {cs['augmented_rows']:,} augmented rows, solved in its "
              f"{cs['lp_form']} form ({cs['lp_rows']} rows) by HiGHS with warm starts; 'first call' "
              "includes building and compiling the LP. Tree ensembles: scikit-learn "
              "HistGradientBoosting (XGBoost is not installed). Paper: 2.7 GHz Intel, 16 GB, Gurobi."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executor", default="dask", choices=["dask", "processes", "serial"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (law subsample only)")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--replot", action="store_true", help="redraw the PNG from the existing JSON")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        results = json.loads((out / "fair_regression.json").read_text())
        plot(results, out / "fair_regression.png")
        return results
    t_start = time.perf_counter()
    datasets = DATASETS
    eps_values, fc_eps = EPS, FC_EPS
    if args.quick:
        datasets = {"law-2k": ("law", 600, ["LS"])}
        eps_values, fc_eps = [0.1, 0.03], []
    prepared = {name: prepare_data(src, None, sub, 0) for name, (src, sub, _) in datasets.items()}
    jobs = []
    for name, (_, _, methods) in datasets.items():
        d = prepared[name]
        for method in methods:
            jobs += [{"dataset": name, "method": method, "eps": e, "data": d, "loss": d["loss"]}
                     for e in eps_values]
        if d["loss"] == "logistic":
            jobs += [{"dataset": name, "method": "FC", "eps": e, "data": d, "loss": d["loss"]}
                     for e in fc_eps]
    jobs.sort(key=lambda j: (j["method"] != "CS", j["dataset"] not in ("adult",)))  # long ones first

    def report(done, total, desc):
        print(f"\r[{done}/{total}] {desc}", end="", flush=True)

    t0 = time.perf_counter()
    with get_executor(args.executor, n_workers=args.workers) as ex:
        points = ex.map(fit_point, jobs, progress=report, description="sweep points")
    sweep_seconds = time.perf_counter() - t0
    print()
    results = {"paper": "Agarwal, Dudik & Wu (ICML 2019), Figure 1 / Table 1",
               "protocol": {"split": "50/50", "grid_size": 40, "eps": eps_values, "fc_eps": fc_eps,
                            "executor": args.executor, "workers": args.workers, "round": "mid",
                            "game": GAME},
               "machine": {"python": platform.python_version(), "processor": platform.processor(),
                           "cpu_count": os.cpu_count(),
                           "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")},
               "sweep_seconds": sweep_seconds, "datasets": {}}
    for name in datasets:
        d = prepared[name]
        base = baselines(name, d, d["loss"])
        pts = [p for p in points if p["dataset"] == name]
        fronts = {m: frontier([p for p in pts if p["method"] == m])
                  for m in sorted({p["method"] for p in pts})}
        ref = min([b["test_loss"] for b in base] +
                  [p["test_loss"] for p in fronts.get("FC", [])])
        results["datasets"][name] = {
            "n_train": int(d["y_train"].size), "n_test": int(d["y_test"].size), "loss": d["loss"],
            "baselines": base, "points": pts, "frontiers": fronts, "reference_test_loss": ref,
            "sp_halfwidth": dkw_halfwidth(d["a_test"]),
        }
    law = prepare_data("law", None, 600 if args.quick else 2000, 0)
    results["table1"] = oracle_timing(law, repeats=1 if args.quick else 3)
    law_full = prepare_data("law", None, 3000 if args.quick else None, 0)
    results["bgl_vs_fairlearn"] = bgl_vs_fairlearn(law_full, [0.0053, 0.0052] if not args.quick else [0.0052])
    results["total_seconds"] = time.perf_counter() - t_start
    (out / "fair_regression.json").write_text(json.dumps(results, indent=1, default=float))
    (out / "fair_regression_table1.md").write_text(table1_markdown(results["table1"]))
    plot(results, out / "fair_regression.png")
    print(f"wrote {out / 'fair_regression.json'} ({results['total_seconds']:.0f} s)")
    return results


if __name__ == "__main__":
    main()
