"""Model-card runner of fair regression by reductions (``formulation.name = "fair_regression"``).

Loads law school, communities & crime or adult, splits it 50/50, fits the unconstrained
regressor (and SEO for square loss), then :class:`fairopt.inprocessing.FairRegressor` for each
value of ``eps`` (a sweep, optionally on a process pool or Dask), and reports the frontier of
loss against worst statistical-parity violation on train and test.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sklearn.linear_model import LinearRegression, LogisticRegression

from fairopt.data import load_dataset
from fairopt.data.loaders import CRIME_DERIVED_COLUMNS, crime_majority_white
from fairopt.errors import InfeasibleError
from fairopt.inprocessing import FairRegressor, SEORegressor
from fairopt.metrics import ks_statistical_parity
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import resolve_solver
from fairopt.reductions.evaluation import lower_convex_envelope
from fairopt.reductions.losses import ScaledLogisticLoss, get_loss
from fairopt.runs.base import FrontierSpec, Progress, RunOutput, Table, split_rows
from fairopt.runs.sweep import map_points

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from sklearn.base import BaseEstimator

    from fairopt.modeling import Program
    from fairopt.runs.card import Card

#: what `fairopt frontier` plots: test loss against test statistical-parity violation (of the
#: tightest eps of each task; sweep one eps value per task)
FRONTIER = FrontierSpec("tightest_test_loss", "min", {"tightest_test_sp": "min"})

#: per data set: target, protected attribute description and loss (paper Sec. 6)
DATASETS = {
    "law": ("ugpa / 4", "race: White vs non-white", "square"),
    "crime": ("ViolentCrimesPerPop", "majority-white community", "square"),
    "adult": ("income > 50K", "sex", "logistic"),
}


class Data(BaseModel):
    """``[data]``: which data set, where, and an optional random subsample (the paper's 2,000 rows)."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["law", "crime", "adult"] = "law"
    path: str | None = None
    subsample: int | None = Field(default=None, gt=10)
    random_state: int = 0


#: the estimator's defaults, the one place they are set
_DEFAULT = FairRegressor().get_params()


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.inprocessing.FairRegressor` (its defaults apply, except
    a list of ``eps`` values, a fixed ``random_state`` and midpoint rounding)."""

    model_config = ConfigDict(extra="forbid")
    constraint: Literal["statistical_parity", "bounded_group_loss"] = _DEFAULT["constraint"]
    eps: list[float] = Field(default_factory=lambda: [0.2, 0.1, 0.05, 0.02, 0.01])
    grid_size: int = Field(default=_DEFAULT["grid_size"], ge=1, le=100_000)
    loss: Literal["square", "logistic", "absolute"] | None = None
    oracle: Literal["auto", "least_squares", "risk_minimization", "hinge_lp"] = _DEFAULT["oracle"]
    B: float = Field(default=_DEFAULT["B"], gt=0)
    nu: float | None = Field(default=_DEFAULT["nu"], gt=0)
    max_iter: int = Field(default=_DEFAULT["max_iter"], ge=1)
    min_iter: int = Field(default=_DEFAULT["min_iter"], ge=1)
    eta0: float | None = Field(default=_DEFAULT["eta0"], gt=0)
    lambda_scales: list[float] = Field(default_factory=lambda: list(_DEFAULT["lambda_scales"]))
    refine_rounds: int = Field(default=_DEFAULT["refine_rounds"], ge=0)
    mode: Literal["practical", "faithful"] = _DEFAULT["mode"]
    round: Literal["down", "mid"] = "mid"
    test_size: float = Field(default=0.5, gt=0, lt=1)
    random_state: int = 0
    executor: Literal["serial", "processes", "dask"] = "serial"
    n_workers: int | None = Field(default=None, ge=1)
    blas_threads: int | None = Field(default=1, ge=1, description="BLAS threads per fit (None = library default)")

    @field_validator("eps", mode="before")
    @classmethod
    def _as_list(cls, v: object) -> object:
        return [v] if isinstance(v, (int, float)) else v


def prepare_data(dataset: str, path: str | os.PathLike[str] | None = None, subsample: int | None = None,
                 random_state: int = 0, test_size: float = 0.5) -> dict[str, Any]:
    """Features, ``[0, 1]`` targets and protected attribute of one paper data set, split in two.

    Numeric features are standardised with training statistics; categorical ones are one-hot
    encoded; the protected attribute is not a feature. Law's target is ``clip(ugpa / 4, 0, 1)``:
    18 rows have ``ugpa`` above 4 (up to 4.2) and get the target 1.0. Returns a dict with ``X_train``,
    ``X_test``, ``y_train``, ``y_test``, ``a_train``, ``a_test``, ``loss``, ``features``.
    """
    df = load_dataset(dataset, path)
    rng = np.random.default_rng(random_state)
    if subsample is not None and subsample < len(df):
        df = df.iloc[np.sort(rng.choice(len(df), size=subsample, replace=False))]
    df = df.reset_index(drop=True)
    if dataset == "law":
        y = np.clip(df["ugpa"].to_numpy(float) / 4.0, 0, 1)
        a = np.where(df["race"] == "White", "white", "non-white")
        feats = pd.get_dummies(df[["lsat", "zfya", "sex", "pass_bar"]], drop_first=True)
    elif dataset == "crime":
        y = df["ViolentCrimesPerPop"].to_numpy(float)
        a = np.where(crime_majority_white(df), "majority-white", "other")
        drop = ["ViolentCrimesPerPop", "communityname", "fold", *CRIME_DERIVED_COLUMNS]
        feats = df.drop(columns=[c for c in drop if c in df.columns])
    else:
        y = df["income"].to_numpy(float)
        a = df["sex"].astype(str).to_numpy()
        cat = [c for c in ("workclass", "education", "marital_status", "occupation", "relationship",
                           "race", "native_country") if c in df.columns]
        num = [c for c in ("age", "education_num", "capital_gain", "capital_loss", "hours_per_week")
               if c in df.columns]
        feats = pd.get_dummies(df[num + cat], columns=cat, drop_first=True)
    X = feats.to_numpy(float)
    te, tr = split_rows(len(y), [test_size], rng, sort=True)
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    X = (X - mu) / sd
    return {"X_train": X[tr], "X_test": X[te], "y_train": y[tr], "y_test": y[te],
            "a_train": a[tr], "a_test": a[te], "loss": DATASETS[dataset][2],
            "features": list(feats.columns)}


def _estimator(params: Parameters, loss: str, solver: SolverSpec | None) -> BaseEstimator:
    from fairopt.reductions.oracles import HingeLPOracle, LeastSquaresOracle, RiskMinimizationOracle
    base = LogisticRegression(max_iter=2000) if loss == "logistic" else LinearRegression()
    oracle = params.oracle
    if oracle == "auto":
        oracle = "risk_minimization" if loss == "logistic" else "least_squares"
    if params.constraint == "bounded_group_loss":
        return base
    if oracle == "hinge_lp":
        return HingeLPOracle(solver=solver)
    cls = RiskMinimizationOracle if oracle == "risk_minimization" else LeastSquaresOracle
    return cls(base, lambda_scales=tuple(params.lambda_scales), refine_rounds=params.refine_rounds)


#: card parameters that are FairRegressor parameters of the same name and meaning
ESTIMATOR_KEYS = ("constraint", "grid_size", "max_iter", "random_state", "B", "nu", "mode", "round", "min_iter",
                  "eta0")


def fit_one(eps: float, shared: dict[str, Any], progress: Progress | None = None) -> dict[str, Any]:
    """Fit one sweep point (``shared``: card parameters, prepared data, solver); picklable for
    process and Dask executors, which receive ``shared`` once per worker."""
    params, data, solver = shared["params"], shared["data"], shared["solver"]
    loss = params.loss or data["loss"]
    # the card's values go through set_params: the estimator keeps the one list of defaults
    est = FairRegressor().set_params(estimator=_estimator(params, loss, solver), eps=eps, loss=loss, solver=solver,
                                     **{k: getattr(params, k) for k in ESTIMATOR_KEYS})
    t0 = time.perf_counter()
    try:
        import warnings
        from contextlib import nullcontext

        from threadpoolctl import threadpool_limits
        # the many small fits of a game lose badly to BLAS thread oversubscription
        limits = nullcontext() if params.blas_threads is None else threadpool_limits(params.blas_threads)
        with warnings.catch_warnings(), limits:
            warnings.simplefilter("ignore", RuntimeWarning)
            est.fit(data["X_train"], data["y_train"], sensitive_features=data["a_train"],
                    progress=progress)
    except InfeasibleError as exc:
        return {"eps": eps, "status": "infeasible", "message": str(exc),
                "seconds": time.perf_counter() - t0, "tightest": (exc.tightest or {}).get("eps"),
                "constraint": exc.constraint}
    seconds = time.perf_counter() - t0
    out = {"eps": eps, "status": est.status_, "seconds": seconds, "gap": est.gap_,
           "oracle_calls": est.n_oracle_calls_, "iterations": est.n_iter_,
           "support": int(est.weights_.size)}
    for part in ("train", "test"):
        X, y, a = data[f"X_{part}"], data[f"y_{part}"], data[f"a_{part}"]
        out[f"{part}_loss"] = est.expected_loss(X, y)
        sp_est = est if params.constraint == "statistical_parity" else None
        if sp_est is not None:
            out[f"{part}_sp"] = est.disparity(X, a)
        else:
            from fairopt.reductions.evaluation import mixture_sp_disparity
            out[f"{part}_sp"] = mixture_sp_disparity(est.predict_components(X), est.weights_, a)
            out[f"{part}_worst_group_loss"] = est.disparity(X, a, y=y)
    return out


def _worst_group_loss(losses: np.ndarray, groups: np.ndarray) -> float:
    """Largest mean loss over the protected groups (what bounded group loss bounds)."""
    _, codes = np.unique(groups, return_inverse=True)
    return float(np.max(np.bincount(codes, weights=losses) / np.bincount(codes)))


def baselines(data: dict[str, Any], loss_name: str) -> list[dict[str, Any]]:
    """Unconstrained fit (and SEO for square loss), evaluated like the sweep points."""
    loss = get_loss(loss_name)
    rows = []
    models: dict[str, Callable[[NDArray[np.float64]], NDArray[np.float64]]]
    if loss_name == "logistic":
        clf = LogisticRegression(max_iter=2000).fit(data["X_train"], data["y_train"])
        assert isinstance(loss, ScaledLogisticLoss)
        models = {"unconstrained": lambda X: loss.score_from_logit(clf.decision_function(X))}
    else:
        lr = LinearRegression().fit(data["X_train"], data["y_train"])
        seo = SEORegressor().fit(data["X_train"], data["y_train"], sensitive_features=data["a_train"])
        models = {"unconstrained": lambda X: np.clip(lr.predict(X), 0, 1), "SEO": seo.predict}
    for name, predict in models.items():
        row: dict[str, Any] = {"method": name}
        for part in ("train", "test"):
            p = predict(data[f"X_{part}"])
            row[f"{part}_loss"] = float(np.mean(loss.value(data[f"y_{part}"], p)))
            row[f"{part}_sp"] = float(ks_statistical_parity(p, data[f"a_{part}"]))
            row[f"{part}_worst_group_loss"] = _worst_group_loss(loss.value(data[f"y_{part}"], p), data[f"a_{part}"])
        rows.append(row)
    return rows


#: a game's status in the run vocabulary
POINT_STATUS = {"converged": "optimal", "max_iter": "iteration_limit"}


def sweep_status(results: list[dict[str, Any]]) -> str:
    """Status of a sweep: ``"infeasible"`` if any point is, else ``"iteration_limit"`` if any
    game stopped at ``max_iter``, else ``"optimal"`` (every point converged)."""
    statuses = [r["status"] for r in results]
    if "infeasible" in statuses:
        return "infeasible"
    return "optimal" if all(s == "converged" for s in statuses) else "iteration_limit"


def _all_infeasible(params: Parameters, results: list[dict[str, Any]]) -> InfeasibleError:
    """The error of a sweep in which no ``eps`` value is feasible."""
    loosest = max(results, key=lambda r: r["eps"])
    reached = [r["tightest"] for r in results if r.get("tightest") is not None]
    tightest = {"eps": float(min(reached))} if reached else None
    hint = (f" The smallest worst-group loss the oracle's hypotheses reach is {tightest['eps']:.6g}; "
            "use eps values at least that large." if tightest else " Loosen eps.")
    eps = ", ".join(f"{r['eps']:g}" for r in results)
    return InfeasibleError(
        f"{params.constraint}: every eps value of the sweep ({eps}) is infeasible; at the loosest "
        f"(eps={loosest['eps']:g}) {loosest.get('constraint') or 'a group constraint'} cannot be met."
        + hint, program="fair_regression", constraint=loosest.get("constraint"), tightest=tightest)


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    prepared = prepare_data(data.dataset, data.path, data.subsample, data.random_state,
                            params.test_size)
    loss_name = params.loss or prepared["loss"]
    base = baselines(prepared, loss_name)
    build_seconds = time.perf_counter() - t0
    # the whole spec travels to the oracles and LPs, so the card's time_limit and options apply
    spec = resolve_solver(solver, "LP")
    eps_values = list(params.eps)
    shared = {"params": params, "data": prepared, "solver": spec}
    t1 = time.perf_counter()
    notes: list[str] = []
    results = map_points(fit_one, eps_values, shared, executor=params.executor, n_workers=params.n_workers,
                         progress=progress, steps=params.max_iter, label=lambda e: f"eps={e:g}", notes=notes)
    solve_seconds = time.perf_counter() - t1
    ok = [r for r in results if r["status"] != "infeasible"]
    if not ok:
        raise _all_infeasible(params, results)
    # the column eps bounds: statistical parity, or the worst group's loss; detail stays in result.json
    key, name = (("train_sp", "train SP") if params.constraint == "statistical_parity"
                 else ("train_worst_group_loss", "train worst-group loss"))
    test_key = key.replace("train", "test")
    rows = [[r["method"], "", r["train_loss"], r[key], r["test_loss"], r[test_key], ""] for r in base]
    for r in results:
        if r["status"] == "infeasible":
            rows.append(["fair", r["eps"], "", "", "", "", "infeasible"])
        else:
            rows.append(["fair", r["eps"], r["train_loss"], r[key], r["test_loss"], r[test_key],
                         POINT_STATUS.get(r["status"], r["status"])])
    ref = min(b["test_loss"] for b in base)
    metrics = {f"{b['method'].lower()}_{k}": float(b[k]) for b in base
               for k in ("train_loss", "train_sp", "test_loss", "test_sp")}
    metrics.update({"n_eps": float(len(eps_values)), "n_infeasible": float(len(results) - len(ok)),
                    "oracle_calls": float(sum(r.get("oracle_calls", 0) for r in ok))})
    if ok:
        frontier = lower_convex_envelope([r["train_sp"] for r in ok], [r["train_loss"] for r in ok])
        tightest = min(ok, key=lambda r: r["train_sp"])
        metrics.update({
            "tightest_test_sp": float(tightest["test_sp"]), "tightest_test_loss": float(tightest["test_loss"]),
            "tightest_relative_test_loss": float(tightest["test_loss"] - ref),
            "frontier_points": float(len(frontier)),
            "seconds_per_oracle_call": solve_seconds / max(1.0, metrics["oracle_calls"]),
        })
    status = sweep_status(results)
    table = Table(f"Fair regression frontier on {data.dataset} ({DATASETS[data.dataset][0]}; "
                  f"{params.constraint}; loss {loss_name})",
                  ["method", "eps", "train loss", name, "test loss", name.replace("train", "test"), "status"],
                  rows)
    return RunOutput(backend=spec.backend, solver=str(spec.solver), status=status,
                     metrics=metrics, build_seconds=build_seconds, solve_seconds=solve_seconds,
                     tables=[table], extra={"sweep": results, "baselines": base,
                                            "protected": DATASETS[data.dataset][1], "notes": notes})


#: what `fairopt inspect --export` writes for this formulation
EXPORT_NOTE = ("the weighted hinge LP of the first cost-sensitive best response (lambda = 0) on the training "
               "half, the LP the hinge_lp oracle re-solves every game iteration")


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The weighted hinge LP of the first CS best response (lambda = 0) on the training half.

    This is the LP the ``hinge_lp`` oracle solves in every game iteration (only its column bounds
    and costs change), in the form ``form="auto"`` picks (the 2d-row dual), for
    ``fairopt inspect`` and MPS/LP export.
    """
    from fairopt.errors import ConfigError
    from fairopt.reductions import HingeLPOracle, StatisticalParity
    if params.oracle != "hinge_lp" or params.constraint != "statistical_parity":
        raise ConfigError(
            f"this card's oracle ({params.oracle}, {params.constraint}) solves no LP that exists before the game "
            "runs: its fits are closed-form or scikit-learn, and its best-mixture LP is built from the hypotheses "
            "found. To inspect or export the cost-sensitive LP oracle, add --set parameters.oracle=hinge_lp.")
    prepared = prepare_data(data.dataset, data.path, data.subsample, data.random_state,
                            params.test_size)
    moment = StatisticalParity(eps=params.eps[0], grid_size=params.grid_size,
                               loss=params.loss or prepared["loss"])
    moment.fit(prepared["y_train"], prepared["a_train"])
    oracle = HingeLPOracle().prepare(moment, prepared["X_train"])
    return oracle.hinge_lp(np.zeros(moment.n_rows)).build()
