"""Model-card runner of regression debiasing (``formulation.name = "regression_debiasing"``).

Fits a linear regression on the training half of law school (``ugpa / 4``) or communities & crime,
post-processes its predictions with :class:`fairopt.postprocessing.RegressionDebiaser` on that
half (``prefit``), and reports the loss against the original predictions, the mean squared error
against the target and the per-group CDF gaps before and after, on both halves.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from fairopt.runs.base import FrontierSpec, Progress, RunOutput, Table

if TYPE_CHECKING:
    from fairopt.modeling import SolverSpec
    from fairopt.runs.card import Card

#: what `fairopt frontier` plots: test error against the test CDF gap
FRONTIER = FrontierSpec("test_mse_after", "min", {"test_cdf_gap_after": "min"})


class Data(BaseModel):
    """``[data]``: ``dataset = "law"`` or ``"crime"`` (read from ``path`` or ``$FAIROPT_DATA_HOME``)."""

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["law", "crime"] = "law"
    path: str | None = None
    subsample: int | None = Field(default=None, gt=100)
    random_state: int = 0


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.postprocessing.RegressionDebiaser`."""

    model_config = ConfigDict(extra="forbid")
    eps: float = Field(default=0.0, ge=0, le=1)
    loss: Literal["squared", "absolute"] = "squared"
    grid: int | None = Field(default=200, ge=1)
    test_size: float = Field(default=0.5, gt=0, lt=1)
    random_state: int = 0


def _gaps(pred: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """Per-group Kolmogorov-Smirnov distance between the group's and the pooled prediction CDFs."""
    z = np.unique(pred)
    pooled = np.searchsorted(np.sort(pred), z, side="right") / pred.size
    out = {}
    for g in np.unique(groups):
        s = np.sort(pred[groups == g])
        out[str(g)] = float(np.max(np.abs(np.searchsorted(s, z, side="right") / s.size - pooled)))
    return out


def _prepare(params: Parameters, data: Data) -> tuple[dict[str, Any], Any]:
    """The data set's splits and the linear regression trained on the training split."""
    from sklearn.linear_model import LinearRegression

    from fairopt.runs.fair_regression import prepare_data
    d = prepare_data(data.dataset, data.path, data.subsample, data.random_state, params.test_size)
    return d, LinearRegression().fit(d["X_train"], d["y_train"])


def _debiaser(params: Parameters, reg: Any, solver: SolverSpec | None) -> Any:
    from fairopt.postprocessing import RegressionDebiaser
    return RegressionDebiaser(estimator=reg, prefit=True, eps=params.eps, loss=params.loss, grid=params.grid,
                              solver=solver, random_state=params.random_state)


def frontier_inputs(card: Card, params: Parameters, data: Data) -> tuple[Any, Any, Any, Any]:
    """The card's debiaser (unfitted, its regressor prefit) and the training split, for
    ``fairopt frontier CARD.toml`` (one exact fit per tolerance)."""
    d, reg = _prepare(params, data)
    return _debiaser(params, reg, card.solver), d["X_train"], None, d["a_train"]


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None, progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    d, reg = _prepare(params, data)
    progress(1, 3, "debiasing")
    t1 = time.perf_counter()
    deb = _debiaser(params, reg, solver)
    deb.fit(d["X_train"], sensitive_features=d["a_train"])
    fit_s = time.perf_counter() - t1
    metrics: dict[str, float] = {"train_loss": deb.train_loss_, "train_cdf_gap_before": deb.input_gap_,
                                 "train_cdf_gap_after": deb.train_gap_, "fit_seconds": fit_s,
                                 "lp_rounds": float(deb.solution_.rounds), "grid_points": float(deb.grid_.size)}
    rows = []
    for part in ("train", "test"):
        X, y, a = d[f"X_{part}"], d[f"y_{part}"], d[f"a_{part}"]
        before = reg.predict(X)
        after = deb.predict(X, sensitive_features=a)
        gb, ga = _gaps(before, a), _gaps(after, a)
        metrics |= {f"{part}_mse_before": float(np.mean((before - y) ** 2)),
                    f"{part}_mse_after": float(np.mean((after - y) ** 2)),
                    f"{part}_change_after": float(np.mean((after - before) ** 2)),
                    f"{part}_cdf_gap_before": max(gb.values()), f"{part}_cdf_gap_after": max(ga.values())}
        rows += [[part, g, gb[g], ga[g]] for g in gb]
    progress(3, 3, "done")
    sol = deb.solution_.solution
    tables = [Table("Per-group CDF gap (KS distance to the pooled CDF)", ["split", "group", "before", "after"], rows)]
    return RunOutput(backend=sol.backend if sol else "none", solver=sol.solver if sol else "none",
                     status=str(sol.status) if sol else "optimal", metrics=metrics, build_seconds=t1 - t0,
                     solve_seconds=fit_s, tables=tables)
