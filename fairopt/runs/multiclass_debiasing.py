"""Model-card runner of fair multiclass post-processing (``formulation.name = "multiclass_debiasing"``).

Builds a three-class target from a column of a shipped data set (Adult's ``hours_per_week``:
``part_time`` below 35 hours, ``full_time`` 35 to 44, ``long`` 45 and more; the column is then
dropped from the features), trains a multinomial logistic regression on one split, fits
:class:`fairopt.postprocessing.MulticlassDebiaser` on a disjoint post-processing split and reports
the expected error and the per-group class rates before (the classifier's argmax) and after (the
fair rule's expected class probabilities) on the post-processing and test splits.
"""
from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from fairopt.runs.base import Columns, RunOutput, Table, ThreeSplits, split_rows

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from fairopt.modeling import SolverSpec
    from fairopt.runs.base import Progress
    from fairopt.runs.card import Card

#: hours-per-week bins of the three-class target: [0, 35) part time, [35, 45) full time, [45, inf) long
HOURS_BINS = (35, 45)
HOURS_CLASSES = ("part_time", "full_time", "long")


class Data(BaseModel):
    """``[data]``: Adult (read from ``path`` or ``$FAIROPT_DATA_HOME``), the sensitive column(s)."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["adult"] = "adult"
    path: str | None = None
    sensitive: Columns = Field(default_factory=lambda: ["sex"])
    subsample: int | None = Field(default=None, gt=100)
    random_state: int = 0



class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.postprocessing.MulticlassDebiaser`."""

    model_config = ConfigDict(extra="forbid")
    constraint: Literal["demographic_parity", "equal_opportunity", "equalized_odds"] = "demographic_parity"
    eps: float = Field(default=0.0, ge=0)
    deterministic: bool = False
    calibration: Literal["isotonic", "isotonic_per_group"] | None = None
    score_bins: int | None = Field(default=None, ge=2)
    splits: ThreeSplits = Field(default_factory=lambda: [0.4, 0.3, 0.3],
                                description="train / post-processing / test fractions")
    random_state: int = 0



def hours_target(df: pd.DataFrame) -> np.ndarray:
    """The three-class target of Adult's ``hours_per_week`` (see :data:`HOURS_BINS`).

    Examples
    --------
    >>> hours_target(pd.DataFrame({"hours_per_week": [20, 40, 60]})).tolist()
    ['part_time', 'full_time', 'long']
    """
    hours: NDArray[np.float64] = df["hours_per_week"].to_numpy(float)   # pandas: untyped
    codes = np.searchsorted(np.asarray(HOURS_BINS), hours, side="right")
    return np.asarray(HOURS_CLASSES, dtype=object)[codes]


def _rates(P: np.ndarray, groups: np.ndarray) -> np.ndarray:
    return np.array([P[groups == k].mean(axis=0) for k in range(int(groups.max()) + 1)])


def _prepare(params: Parameters, data: Data, progress: Progress | None = None) -> dict[str, Any]:
    """Adult with its three-class target, the splits, and the classifier trained on the first."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairopt.data import load_adult
    from fairopt.validation import check_groups

    rng = np.random.default_rng(data.random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = load_adult(data.path)
    if data.subsample and data.subsample < len(df):
        df = df.iloc[np.sort(rng.choice(len(df), data.subsample, replace=False))].reset_index(drop=True)
    y = hours_target(df)
    X = df.drop(columns=["hours_per_week", "income"])
    grp = check_groups(df[data.sensitive], len(df))
    tr, post, test = split_rows(len(y), params.splits[:2], rng)
    num = list(X.select_dtypes("number").columns)
    cat = [c for c in X.columns if c not in num]
    clf = make_pipeline(ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), cat),
                                           ("n", StandardScaler(), num)]), LogisticRegression(max_iter=2000))
    if progress is not None:
        progress(0, 3, f"training a multinomial logistic regression on {tr.shape[0]} rows")
    clf.fit(X.iloc[tr], y[tr])
    return {"X": X, "y": y, "grp": grp, "sens": df[data.sensitive], "clf": clf, "post": post, "test": test}


def _debiaser(params: Parameters, clf: Any, solver: SolverSpec | None) -> Any:
    from fairopt.postprocessing import MulticlassDebiaser
    return MulticlassDebiaser(clf, prefit=True, constraint=params.constraint, eps=params.eps,
                              deterministic=params.deterministic, calibration=params.calibration,
                              score_bins=params.score_bins, solver=solver, random_state=params.random_state)


def frontier_inputs(card: Card, params: Parameters, data: Data) -> tuple[Any, Any, Any, Any]:
    """The card's debiaser (unfitted, its classifier prefit) and the post-processing split, for
    ``fairopt frontier CARD.toml`` (the exact frontier of the expected cost in ``eps``)."""
    d = _prepare(params, data)
    post = d["post"]
    return _debiaser(params, d["clf"], card.solver), d["X"].iloc[post], d["y"][post], d["sens"].iloc[post]


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    d = _prepare(params, data, progress)
    X, y, grp, sens, clf, post, test = (d[k] for k in ("X", "y", "grp", "sens", "clf", "post", "test"))
    g = grp.codes
    deb = _debiaser(params, clf, solver)
    progress(1, 3, "fitting the fair rule")
    t1 = time.perf_counter()
    deb.fit(X.iloc[post], y[post], sensitive_features=sens.iloc[post])
    fit_s = time.perf_counter() - t1
    progress(2, 3, "evaluating")
    K = len(deb.classes_)
    metrics: dict[str, float] = {"fit_seconds": fit_s, "train_cost": deb.train_cost_, "train_gap": deb.train_gap_,
                                 "randomized_cost": deb.randomized_cost_, "randomized_gap": deb.randomized_gap_,
                                 "determinism_bound": deb.determinism_bound_, "n_atoms": float(deb.n_atoms_),
                                 "eps": params.eps}
    tables = []
    for split, rows in (("post", post), ("test", test)):
        S = clf.predict_proba(X.iloc[rows])
        before = np.eye(K)[np.argmax(S, axis=1)]
        after = deb.predict_proba(X.iloc[rows], sensitive_features=sens.iloc[rows])
        yc = pd.Index(deb.classes_).get_indexer(y[rows])
        for name, P in (("before", before), ("after", after)):
            metrics[f"{split}_error_{name}"] = float(1.0 - P[np.arange(len(rows)), yc].mean())
            R = _rates(P, g[rows])
            metrics[f"{split}_dp_gap_{name}"] = float(np.abs(R - P.mean(axis=0)).max())
            if split == "test":
                tables.append(Table(f"Test class rates per group, {name}", ["group", *map(str, deb.classes_)],
                                    [[str(lbl), *map(float, r)] for lbl, r in zip(grp.labels, R, strict=True)]))
    price = deb.price_of_fairness_.stack()     # long form: one row per (group, event)
    tables.append(Table("Price of fairness: |dual| of each gap row (cost per unit of eps)",
                        ["group", "event", "price"],
                        [[str(i[0]), str(i[1]), float(v)] for i, v in price.items()]))
    progress(3, 3, "done")
    sol = deb.solution_
    extra: dict[str, Any] = {"classes": [str(c) for c in deb.classes_], "groups": [str(x) for x in grp.labels]}
    return RunOutput(backend=sol.backend, solver=sol.solver, status=sol.status, metrics=metrics,
                     build_seconds=t1 - t0, solve_seconds=fit_s, tables=tables, extra=extra)
