"""Model-card runner of randomized-threshold debiasing (``formulation.name = "threshold_debiasing"``).

Trains a classifier on one split of Adult or credit default (or reads precomputed scores), fits
:class:`fairopt.postprocessing.ThresholdDebiaser` on a disjoint post-processing split, and
reports accuracy and fairness before and after on a test split, the per-group thresholds and
the price of fairness (the duals ``theta_k``).
"""
from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from fairopt.errors import ConfigError, DataValidationError
from fairopt.modeling.registry import accepts, capabilities, resolve_solver
from fairopt.runs.base import Columns, FrontierSpec, Progress, RunOutput, Table, ThreeSplits, split_rows

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    from fairopt.modeling import Program, SolverSpec
    from fairopt.postprocessing import ThresholdDebiaser
    from fairopt.runs.card import Card

#: what `fairopt frontier` plots: test accuracy against the test fairness gaps
FRONTIER = FrontierSpec("test_accuracy_after", "max", {"test_dp_gap_after": "min", "test_eo_gap_after": "min"})

#: default sensitive column and target of each data set
DATASETS = {"adult": ("sex", "income"), "credit": ("SEX", "default")}


class Data(BaseModel):
    """``[data]``: a benchmark data set, or a CSV of precomputed scores.

    ``dataset = "adult"`` / ``"credit"`` reads ``path`` or ``$FAIROPT_DATA_HOME``. With
    ``dataset = "scores"``, ``path`` is a CSV with columns ``score`` (in [-1, 1], or set
    ``score_map``), ``group`` and optionally ``label``: the scores of any model, Python or not.
    """

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["adult", "credit", "scores"] = "adult"
    path: str | None = None
    sensitive: Columns | None = None
    subsample: int | None = Field(default=None, gt=100)
    random_state: int = 0



def _default() -> dict[str, Any]:
    from fairopt.postprocessing import ThresholdDebiaser
    params: dict[str, Any] = ThresholdDebiaser().get_params()   # scikit-learn: untyped
    return params


#: the estimator's defaults, the one place they are set
_DEFAULT = _default()
#: card parameters that are ThresholdDebiaser parameters of the same name and meaning
ESTIMATOR_KEYS = ("constraint", "gamma", "eps", "rho", "random_state", "score_map", "calibration")


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.postprocessing.ThresholdDebiaser` (its defaults apply,
    except a fixed ``random_state``)."""

    model_config = ConfigDict(extra="forbid")
    constraint: Literal["demographic_parity", "equal_opportunity", "equalized_odds"] = _DEFAULT["constraint"]

    @field_validator("constraint", mode="before")
    @classmethod
    def _canonical_criterion(cls, v: object) -> object:
        # aliases (statistical_parity, ...) resolve in fairopt.criteria, as the estimator's do
        from fairopt.criteria import canonical
        return (canonical(v) or v) if isinstance(v, str) else v
    gamma: float = Field(default=_DEFAULT["gamma"], ge=0)
    eps: float = Field(default=_DEFAULT["eps"], ge=0)
    rho: float | None = Field(default=_DEFAULT["rho"], ge=0, le=1)
    classifier: Literal["lr", "rf", "knn", "mlp"] = "lr"
    inject_bias: bool | None = Field(default=None, description="credit: drop training rows with sex != label "
                                     "w.p. 0.5 (default: True for credit)")
    splits: ThreeSplits = Field(default_factory=lambda: [0.4, 0.3, 0.3],
                                description="train / post-processing / test fractions")
    score_map: Literal["auto", "proba", "logit", "identity"] = _DEFAULT["score_map"]
    calibration: Literal["isotonic", "isotonic_per_group"] | None = Field(
        default=_DEFAULT["calibration"], description="isotonic calibration of the scores on the fitting sample")
    sgd_steps: int = Field(default=4000, ge=1)
    random_state: int = 0



def _classifier(name: str, df: pd.DataFrame, seed: int) -> Pipeline:
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    num = list(df.select_dtypes("number").columns)
    cat = [c for c in df.columns if c not in num]
    pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat), ("num", StandardScaler(), num)])
    model = {"lr": lambda: LogisticRegression(max_iter=2000),
             "rf": lambda: RandomForestClassifier(max_depth=10, random_state=seed),
             "knn": lambda: KNeighborsClassifier(n_neighbors=10),
             "mlp": lambda: MLPClassifier(hidden_layer_sizes=(128,), early_stopping=True, random_state=seed)}[name]()
    return make_pipeline(pre, model)


def prepare(params: Parameters, data: Data, progress: Progress | None = None) -> dict[str, Any]:
    """Scores, groups and labels of the post-processing and test splits."""
    rng = np.random.default_rng(data.random_state)
    if data.dataset == "scores":
        if not data.path:
            raise ConfigError("data.dataset = 'scores' needs data.path, a CSV with columns score, group[, label].")
        df = pd.read_csv(data.path)
        missing = {"score", "group"} - set(df.columns)
        if missing:
            raise DataValidationError(f"{data.path}: missing column(s) {sorted(missing)}.")
        cut = round(len(df) * params.splits[1] / (params.splits[1] + params.splits[2]))
        post, test = split_rows(len(df), None, rng, sizes=[cut])
        parts = {"post": post, "test": test}
        lab = df["label"].to_numpy().astype(int) if "label" in df else None
        return {k: {"X": df["score"].to_numpy(float)[v], "groups": df["group"].to_numpy()[v],
                    "y": None if lab is None else lab[v]} for k, v in parts.items()} | {"estimator": None}
    from fairopt.data import load_adult, load_credit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = load_adult(data.path) if data.dataset == "adult" else load_credit(data.path)
    sens_default, target = DATASETS[data.dataset]
    sens = data.sensitive or [sens_default]
    y = df.pop(target).to_numpy().astype(int)
    if "ID" in df:
        df = df.drop(columns=["ID"])
    if data.subsample and data.subsample < len(y):
        keep = np.sort(rng.choice(len(y), data.subsample, replace=False))
        df, y = df.iloc[keep].reset_index(drop=True), y[keep]
    tr, post, test = split_rows(len(y), params.splits[:2], rng)
    inject = params.inject_bias if params.inject_bias is not None else data.dataset == "credit"
    if inject:
        s = (df[sens[0]].astype(str).to_numpy()[tr] == "Female").astype(int)
        tr = tr[(s == y[tr]) | (rng.random(tr.shape[0]) < 0.5)]
    if progress:
        progress(0, 3, f"training {params.classifier} on {tr.shape[0]} rows")
    clf = _classifier(params.classifier, df, params.random_state).fit(df.iloc[tr], y[tr])
    groups = df[sens] if len(sens) > 1 else df[sens[0]]
    return {k: {"X": df.iloc[v], "groups": groups.iloc[v].to_numpy() if len(sens) == 1 else groups.iloc[v],
                "y": y[v]} for k, v in (("post", post), ("test", test))} | {"estimator": clf}


def _debiaser(params: Parameters, estimator: BaseEstimator | None, solver: SolverSpec | None) -> ThresholdDebiaser:
    from fairopt.postprocessing import ThresholdDebiaser
    options = None
    if accepts(solver, "threshold"):
        caps = capabilities(resolve_solver(solver, "threshold"))
        if not caps["exact"] and caps["iteration_limit"]:   # a stochastic method: the card's step count
            options = {caps["iteration_limit"]: params.sgd_steps}
    # the card's values go through set_params: the estimator keeps the one list of defaults
    debiaser = ThresholdDebiaser()
    debiaser.set_params(estimator=estimator, prefit=estimator is not None, solver=solver, solver_options=options,
                        **{k: getattr(params, k) for k in ESTIMATOR_KEYS})
    return debiaser


def frontier_inputs(card: Card, params: Parameters, data: Data) -> tuple[ThresholdDebiaser, Any, Any, Any]:
    """The card's debiaser (unfitted, its classifier prefit) and the post-processing split, for
    ``fairopt frontier CARD.toml`` (the exact frontier of the card's criterion in ``eps``)."""
    parts = prepare(params, data)
    p = parts["post"]
    if p["y"] is None:
        raise ConfigError("the frontier's value is the expected error: the scores CSV needs a label column.")
    return _debiaser(params, parts["estimator"], None), p["X"], p["y"], p["groups"]


def _metrics(h: np.ndarray, y: np.ndarray | None, groups: Any) -> dict[str, float]:
    from fairopt.metrics import demographic_parity_difference, equalized_odds_difference
    out = {"dp_gap": float(demographic_parity_difference(None, h, sensitive_features=groups)),
           "positive_rate": float(np.mean(h))}
    if y is not None:
        out["accuracy"] = float(np.mean(h * y + (1 - h) * (1 - y)))
        out["eo_gap"] = float(equalized_odds_difference(y, h, sensitive_features=groups))
    return out


#: what `fairopt inspect --export` writes for this formulation
EXPORT_NOTE = ("the threshold program over (group, score) atoms of the post-processing split; its objective is "
               "the paper's times the mean atom weight c_bar = N / n_atoms (scaled for HiGHS), so row k's dual "
               "is -theta_k n_k / c_bar")


def build(card: Card, params: Parameters, data: Data) -> Program:
    """The QP/LP of the card (statistical parity only) as a :class:`fairopt.modeling.Program`."""
    from fairopt.formulations.constrained_classification import RandomizedThresholdParity
    from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
    parts = prepare(params, data)
    p = parts["post"]
    # fit as `run` does (native solver: exact and fast), so the program gets the same calibrated
    # scores and atoms as the one `run` solves
    deb = _debiaser(params, parts["estimator"], None).fit(p["X"], p["y"], sensitive_features=p["groups"])
    f = deb.mapped_scores(p["X"])
    codes = deb.group_codes(p["X"], p["groups"])
    if deb.calibrator_ is not None:
        f = deb.calibrator_.transform(f, codes)
    if params.constraint == "demographic_parity":
        return RandomizedThresholdParity(f, codes, params.gamma, params.eps, params.rho,
                                         n_groups=len(deb.groups_)).build()
    return ThresholdMixtureOdds(f, codes, p["y"], params.constraint, params.eps, n_groups=len(deb.groups_)).build()


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    parts = prepare(params, data, progress)
    post, test = parts["post"], parts["test"]
    deb = _debiaser(params, parts["estimator"], solver)
    progress(1, 3, "fitting thresholds")
    t1 = time.perf_counter()
    deb.fit(post["X"], post["y"], sensitive_features=post["groups"])
    fit_s = time.perf_counter() - t1
    progress(2, 3, "evaluating")
    f_test = deb.mapped_scores(test["X"])
    before = _metrics((f_test > 0).astype(float), test["y"], test["groups"])
    after = _metrics(deb.decision_probability(test["X"], test["groups"]), test["y"], test["groups"])
    fitted = _metrics(deb.decision_probability(post["X"], post["groups"]), post["y"], post["groups"])
    sol = deb.solution_
    metrics = {f"test_{k}_before": v for k, v in before.items()}
    metrics |= {f"test_{k}_after": v for k, v in after.items()}
    metrics |= {f"fit_{k}": v for k, v in fitted.items()}
    metrics |= {"gamma": deb.gamma_, "rho": deb.rho_, "eps": deb.eps_, "fit_seconds": fit_s,
                "n_post": float(len(post["X"])), "n_test": float(len(test["X"]))}
    if hasattr(sol, "theta"):
        metrics["objective"] = sol.objective
        metrics["n_atoms"] = float(sol.q.shape[0])
        if np.allclose(deb.thresholds_, sol.theta):     # the paper's rule: the threshold is the dual
            rows = [[str(g), float(t), float(r)]
                    for g, t, r in zip(deb.groups_, deb.thresholds_, deb.fitted_rates_, strict=False)]
            cols = ["group", "threshold = theta (price of fairness)", "fitted positive rate"]
        else:
            rows = [[str(g), float(t), float(th), float(r)] for g, t, th, r in
                    zip(deb.groups_, deb.thresholds_, sol.theta, deb.fitted_rates_, strict=False)]
            cols = ["group", "threshold", "theta (price of fairness)", "fitted positive rate"]
        tables = [Table("Per-group rule (fitting sample)", cols, rows)]
    else:
        rows = [[str(g), float(tp), float(fp)] for g, tp, fp in zip(deb.groups_, sol.tpr, sol.fpr, strict=False)]
        tables = [Table("Per-group fitted rates", ["group", "TPR", "FPR"], rows)]
    tables.append(Table("Test split before / after", ["metric", "before", "after"],
                        [[k, before[k], after[k]] for k in before]))
    progress(3, 3, "done")
    return RunOutput(backend=sol.backend, solver=sol.solver, status=str(sol.status), metrics=metrics,
                     build_seconds=t1 - t0, solve_seconds=fit_s, tables=tables,
                     extra={"groups": [str(g) for g in deb.groups_]})
