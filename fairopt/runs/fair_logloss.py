"""Model-card runner of fair robust log-loss classification (``formulation.name = "fair_logloss"``).

Loads Adult (gender), COMPAS (race) or law school (bar passage, White vs Black), keeps the
protected attribute as a feature (as the paper does), splits 70/30, standardises the non-binary
columns with training statistics, fits :class:`fairopt.inprocessing.FairLogLossClassifier` and
an unconstrained L2 logistic regression, and reports test error (thresholded at ½ and expected),
demographic-parity and equalized-odds violations (EOdd summed over y), and the training gaps.
"""
from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from fairopt.errors import DataValidationError
from fairopt.runs.base import Progress, RunOutput, Table, split_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from fairopt.formulations.constrained_classification.logloss import FairLogLoss
    from fairopt.inprocessing import FairLogLossClassifier
    from fairopt.modeling import SolverSpec
    from fairopt.runs.card import Card

#: data set -> (label column, protected column, compared values (G0, G1), columns dropped)
TASKS: dict[str, tuple[str, str, tuple[str, str], tuple[str, ...]]] = {
    "adult": ("income", "sex", ("Female", "Male"), ()),
    "compas": ("two_year_recid", "race", ("Not-Caucasian", "Caucasian"),
               ("c_charge_desc", "decile_score", "score_text")),
    "law": ("pass_bar", "race", ("Black", "White"), ()),
}


@dataclass
class Task:
    """Design matrix (protected attribute included), labels and protected group of a data set."""

    X: pd.DataFrame
    y: np.ndarray
    group: np.ndarray          # 0/1 codes: values[1] is G1
    values: tuple[str, str]    # (G0, G1) as written in the data
    name: str

    def split(self, train: np.ndarray, test: np.ndarray) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(X_train, X_test)`` as float arrays, non-binary columns standardised on ``train``."""
        X = self.X.to_numpy(dtype=float)
        Xtr, Xte = X[train], X[test]
        binary = np.all((Xtr == 0) | (Xtr == 1), axis=0)
        mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
        scale = np.where(binary | (sd == 0), 1.0, sd)
        shift = np.where(binary, 0.0, mu)
        return (Xtr - shift) / scale, (Xte - shift) / scale


def load_task(name: str, path: str | None = None) -> Task:
    """Adult / COMPAS / law school as in Rezaei et al. (2020, Sec. Datasets)."""
    from fairopt.data import load_dataset
    label, protected, values, drop = TASKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = load_dataset(name, path)
    if name == "law":   # the paper compares White and Black applicants only
        df = df[df[protected].isin(values)].reset_index(drop=True)
    df = df.drop(columns=list(drop))
    y = df.pop(label).to_numpy().astype(int)
    group = (df[protected].astype(str).to_numpy() == values[1]).astype(np.int64)
    num = list(df.select_dtypes("number").columns)
    cat = [c for c in df.columns if c not in num]
    X = pd.get_dummies(df, columns=cat, drop_first=True, dtype=float)
    return Task(X, y, group, values, name)


def train_test(n: int, test_size: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Sorted train and test rows (:func:`fairopt.runs.base.split_rows`, train first)."""
    return tuple(split_rows(n, [1 - test_size], rng, sort=True))


def violations(prob: np.ndarray, y: np.ndarray, group: np.ndarray) -> dict[str, float]:
    """Error and fairness violations of probabilities ``prob`` and of ``prob > ½``."""
    from fairopt.metrics import demographic_parity_difference, equalized_odds_difference
    out: dict[str, float] = {}
    for kind, pred in (("", (prob > 0.5).astype(float)), ("expected_", prob)):
        out[f"{kind}error"] = float(np.mean(np.abs(pred - y)))
        out[f"{kind}dp_violation"] = float(demographic_parity_difference(None, pred, sensitive_features=group))
        out[f"{kind}eodd_violation"] = float(equalized_odds_difference(y, pred, sensitive_features=group, agg="sum"))
    return out


class Data(BaseModel):
    """``[data]``: ``adult`` (sex), ``compas`` (race: Caucasian vs not) or ``law`` (race: White vs
    Black; label ``pass_bar``), read from ``path`` or ``$FAIROPT_DATA_HOME``."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["adult", "compas", "law"] = "compas"
    path: str | None = None
    subsample: int | None = Field(default=None, gt=50, description="use a random subset of rows")
    test_size: float = Field(default=0.3, gt=0, lt=1)
    random_state: int = 0


def _default() -> dict[str, Any]:
    from fairopt.inprocessing import FairLogLossClassifier
    params: dict[str, Any] = FairLogLossClassifier().get_params()   # scikit-learn: untyped
    return params


#: the estimator's defaults, the one place they are set
_DEFAULT = _default()
#: card parameters that are FairLogLossClassifier parameters of the same name and meaning
ESTIMATOR_KEYS = ("C", "fit_intercept", "max_iter", "tol")


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.inprocessing.FairLogLossClassifier` (its defaults
    apply; ``constraint = "none"`` is its ``constraint=None``)."""

    model_config = ConfigDict(extra="forbid")
    constraint: Literal["demographic_parity", "equal_opportunity", "equalized_odds", "none"] = \
        _DEFAULT["constraint"]

    @field_validator("constraint", mode="before")
    @classmethod
    def _canonical_criterion(cls, v: object) -> object:
        # aliases (statistical_parity, ...) resolve in fairopt.criteria, as the estimator's do
        from fairopt.criteria import canonical
        return (canonical(v) or v) if isinstance(v, str) else v
    C: float = Field(default=_DEFAULT["C"], ge=0, description="L2 weight on the mean-loss scale")
    fit_intercept: bool = _DEFAULT["fit_intercept"]
    max_iter: int = Field(default=_DEFAULT["max_iter"], ge=1)
    tol: float = Field(default=_DEFAULT["tol"], gt=0)


def _estimator(params: Parameters, solver: SolverSpec | None) -> FairLogLossClassifier:
    from fairopt.inprocessing import FairLogLossClassifier
    # the card's values go through set_params: the estimator keeps the one list of defaults
    est = FairLogLossClassifier()
    est.set_params(constraint=None if params.constraint == "none" else params.constraint,
                   solver=solver or _DEFAULT["solver"], **{k: getattr(params, k) for k in ESTIMATOR_KEYS})
    return est


def _prepare(params: Parameters, data: Data) -> tuple[Task, NDArray[np.float64], NDArray[np.float64], np.ndarray,
                                                     np.ndarray]:
    task = load_task(data.dataset, data.path)
    rng = np.random.default_rng(data.random_state)
    rows = np.arange(len(task.y))
    if data.subsample is not None and data.subsample < rows.size:
        rows = np.sort(rng.choice(rows, data.subsample, replace=False))
    tr, te = train_test(rows.size, data.test_size, rng)
    tr, te = rows[tr], rows[te]
    Xtr, Xte = task.split(tr, te)
    return task, Xtr, Xte, tr, te


def build(card: Card, params: Parameters, data: Data) -> _Inspectable:
    """The joint convex (exponential-cone) model of the training split, for ``fairopt inspect``."""
    from fairopt.formulations.constrained_classification.logloss import FairLogLoss
    task, Xtr, _, tr, _ = _prepare(params, data)
    constraint = None if params.constraint == "none" else params.constraint
    return _Inspectable(FairLogLoss(Xtr, task.y[tr], task.group[tr], constraint, params.C,
                                    params.fit_intercept))


class _Inspectable:
    def __init__(self, model: FairLogLoss) -> None:
        self.model = model

    def summary(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.model.summary().items())

    def write(self, path: str | os.PathLike[str]) -> None:
        from fairopt.errors import ConfigError
        raise ConfigError("the fair log-loss model is an exponential-cone program, not an LP/QP; "
                          "use FairLogLoss.build('cvxpy') or build('pyomo') to embed it.")


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    from sklearn.linear_model import LogisticRegression
    t0 = time.perf_counter()
    progress(0, 3, f"loading {data.dataset}")
    task, Xtr, Xte, tr, te = _prepare(params, data)
    if len(np.unique(task.group[tr])) < 2:
        raise DataValidationError("the training split holds a single protected group; use more rows.")
    build_seconds = time.perf_counter() - t0
    progress(1, 3, f"fitting ({params.constraint}, C={params.C})")
    est = _estimator(params, solver)
    t1 = time.perf_counter()
    est.fit(Xtr, task.y[tr], task.group[tr])
    prob = est.predict_proba(Xte, task.group[te])[:, 1]
    fit_seconds = time.perf_counter() - t1
    progress(2, 3, "baseline logistic regression")
    n = len(tr)
    lr = LogisticRegression(C=1.0 / (n * params.C) if params.C > 0 else np.inf, max_iter=5000)
    lr.fit(Xtr, task.y[tr])
    ours = violations(prob, task.y[te], task.group[te])
    base = violations(lr.predict_proba(Xte)[:, 1], task.y[te], task.group[te])
    sol = est.solution_
    assert sol.gaps is not None    # the solve always reports the training gaps
    metrics = {f"test_{k}": v for k, v in ours.items()}
    metrics |= {f"lr_test_{k}": v for k, v in base.items()}
    metrics |= {"train_max_gap": float(np.max(np.abs(sol.gaps), initial=0.0)),
                "saddle_residual": float(sol.kkt), "objective": float(sol.objective),
                "n_truncated": float(sol.n_truncated), "on_kink": float(sol.on_kink),
                "fit_predict_seconds": fit_seconds, "n_train": float(n), "n_test": float(len(te))}
    metrics |= {f"lambda[{name}]": float(v) for name, v in zip(sol.rows, est.lambda_, strict=False)}
    rows = [[k, ours[k], base[k]] for k in ours]
    tables = [Table(f"Test split ({len(te)} rows): fair log-loss vs logistic regression",
                    ["metric", "fair log-loss", "logistic regression"], rows),
              Table("Fairness rows (training sample)", ["row", "lambda", "gap of P"],
                    [[name, float(v), float(g)] for name, v, g in zip(sol.rows, est.lambda_, sol.gaps, strict=False)])]
    progress(3, 3, "done")
    return RunOutput(backend=sol.backend, solver=sol.solver, status=str(sol.status), metrics=metrics,
                     build_seconds=build_seconds, solve_seconds=sol.solve_seconds, tables=tables,
                     extra={"groups": list(task.values), "coef": est.coef_.ravel().tolist(),
                            "intercept": float(est.intercept_[0]), "features": list(task.X.columns)})
