"""Model-card runner of the max-entropy preprocessing (``formulation.name = "maxent"``).

The default back end is fairopt's native damped Newton method (no ``[solver]`` table needed);
``[solver] backend = "cvxpy"`` (``solver = "CLARABEL"`` or ``"SCS"``), ``backend = "scipy"``
(``solver = "trust-exact"``, ``"trust-krylov"`` or ``"L-BFGS-B"``) and ``backend = "pyomo"``
(``solver = "ipopt"``) solve the same dual.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from fairopt.data import load_builtin
from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.maxent import Encoding, MaxEnt
from fairopt.formulations.maxent.datasets import load_paper_dataset
from fairopt.modeling import SolverSpec, default_spec
from fairopt.runs.base import FrontierSpec, Progress, RunOutput, Table

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fairopt.data import Domain
    from fairopt.formulations.maxent import MaxEntDistribution
    from fairopt.runs.card import Card

#: what `fairopt frontier` plots: distance to the prior against the fairness of p*
FRONTIER = FrontierSpec("kl_to_prior", "min", {"statistical_rate": "max", "representation_rate": "max"})

_FILE_DATASETS = {"adult": "adult", "compas": "compas-small", "compas-small": "compas-small",
                  "compas-large": "compas-large"}


class Data(BaseModel):
    """``[data]``: a built-in domain (no files needed) or one of the paper's domains from the
    shared files (``path`` or ``$FAIROPT_DATA_HOME``).

    ``"builtin:compas"`` / ``"builtin:adult"``: the 144- / 504-cell counts shipped in the package;
    ``"compas"`` (= ``"compas-small"``), ``"adult"``: the same domains recounted from the files;
    ``"compas-large"``: every column of the COMPAS file, |Ω| ≈ 1.0e10.
    """

    model_config = ConfigDict(extra="forbid")
    dataset: Literal["builtin:compas", "builtin:adult", "compas", "compas-small", "adult",
                     "compas-large"] = "builtin:compas"
    path: str | None = None
    subsample: int | None = Field(default=None, gt=0, description="use a random subset of rows")
    random_state: int = 0


class Parameters(BaseModel):
    """``[parameters]``; see :class:`fairopt.preprocessing.MaxEntResampler` for their meaning."""

    model_config = ConfigDict(extra="forbid")
    protected: str | None = Field(default=None, description="protected attribute (default: the data set's)")
    pos_label: int = Field(default=1, description="label value whose rate defines the statistical rate")
    C: float = Field(default=0.5, ge=0, le=1, description="weight of the uniform distribution in the prior")
    prior: Literal["reweighted", "data"] = "reweighted"
    target: Literal["weighted", "balanced", "data", "prior"] | dict[str, float | list[float]] = Field(
        default="weighted", description="a named target, or {column: level probabilities or mean}")
    tau: float = Field(default=1.0, gt=0, le=1)
    tol: float = Field(default=1e-8, gt=0)
    max_iter: int = Field(default=100, gt=0)
    theta_smoothing: float = Field(default=0.0, ge=0, lt=1)
    # each record takes a few dozen bytes: 1e12 would ask for tens of TiB
    n_samples: int = Field(default=10_000, ge=0, le=10_000_000, description="records drawn from p* to report")
    sample_seed: int = 0


def _load(data: Data) -> tuple[Domain, np.ndarray, str, str]:
    """Records as codes of a domain, plus the label and default protected attribute."""
    if data.dataset.startswith("builtin:"):
        b = load_builtin(data.dataset)
        cells, counts = b.codes()
        codes = np.repeat(cells, counts, axis=0)
        dom, label, protected = b.domain, b.label, b.protected
    else:
        pdata = load_paper_dataset(_FILE_DATASETS[data.dataset], data.path)
        dom, label, protected = pdata.domain, pdata.label, pdata.protected[0]
        codes = dom.encode(pdata.frame)
    if data.subsample is not None and data.subsample < len(codes):
        rng = np.random.default_rng(data.random_state)
        codes = codes[np.sort(rng.choice(len(codes), data.subsample, replace=False))]
    return dom, codes, label, protected


def _model(params: Parameters, data: Data) -> tuple[Domain, np.ndarray, MaxEnt, int]:
    dom, codes, label, default_protected = _load(data)
    protected = params.protected or default_protected
    if protected not in dom.names or protected == label:
        raise ConfigError(f"parameters.protected = {protected!r} must be an attribute of "
                          f"{list(dom.names)} other than the label {label!r}.")
    levels = dom.levels[label]
    if params.pos_label not in levels:
        raise ConfigError(f"parameters.pos_label = {params.pos_label!r} is not a level of {label!r} "
                          f"({list(levels)}).")
    enc = Encoding.make(dom.cardinalities, "onehot", names=dom.names)
    model = MaxEnt(codes, enc, label=dom.index(label), protected=dom.index(protected), C=params.C,
                   prior=params.prior, target=params.target, tau=params.tau,
                   theta_smoothing=params.theta_smoothing,
                   level_names=[dom.levels[n] for n in dom.names])
    return dom, codes, model, levels.index(params.pos_label)


class _Inspectable:
    """What ``fairopt inspect`` prints for the (non-LP) max-entropy dual."""

    def __init__(self, model: MaxEnt):
        self.model = model

    def summary(self) -> str:
        s = self.model.summary()
        return "\n".join(f"{k}: {v}" for k, v in s.items())

    def write(self, path: str | os.PathLike[str]) -> None:
        raise ConfigError("the max-entropy dual is a smooth convex (log-sum-exp) program, not an "
                          "LP/QP, so it cannot be exported as MPS/LP; use MaxEnt.build('cvxpy') or "
                          "MaxEnt.build('pyomo') to embed it.")


def build(card: Card, params: Parameters, data: Data) -> _Inspectable:
    return _Inspectable(_model(params, data)[2])


def _group_rates(codes: np.ndarray, weights: NDArray[np.float64], label: int, protected: int, kz: int,
                 pos: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    mass = np.bincount(codes[:, protected], weights=weights, minlength=kz)
    fav = np.bincount(codes[:, protected], weights=weights * (codes[:, label] == pos), minlength=kz)
    return fav / np.where(mass > 0, mass, np.nan), mass / mass.sum()


def run(card: Card, params: Parameters, data: Data, solver: SolverSpec | None,
        progress: Progress) -> RunOutput:
    t0 = time.perf_counter()
    progress(0, 3, "loading data and building the prior")
    dom, codes, model, pos = _model(params, data)
    build_seconds = time.perf_counter() - t0
    progress(1, 3, "solving the max-entropy dual")
    sol = model.solve(solver or default_spec("smooth"), tol=params.tol, max_iter=params.max_iter)
    # MaxEnt.solve always sets the distribution
    dist, prior = cast("MaxEntDistribution", sol.distribution), model.prior_distribution()
    progress(2, 3, f"drawing {params.n_samples} records")
    lab, prot = model.label, model.protected
    kz = dom.cardinalities[prot]
    t1 = time.perf_counter()
    sample = dist.sample(params.n_samples, params.sample_seed) if params.n_samples else None
    sample_seconds = time.perf_counter() - t1
    progress(3, 3, "done")

    raw_rate, raw_share = _group_rates(codes, np.ones(len(codes)), lab, prot, kz, pos)
    J_q, J_p = prior.pair_marginal(lab, prot), dist.pair_marginal(lab, prot)
    q_rate, q_share = J_q[pos] / J_q.sum(axis=0), J_q.sum(axis=0)
    p_rate, p_share = J_p[pos] / J_p.sum(axis=0), J_p.sum(axis=0)
    cols = ["quantity", "raw data", "prior q", "fitted p*"]
    s_rate = s_share = None
    if sample is not None and len(sample):
        s_rate, s_share = _group_rates(sample, np.ones(len(sample)), lab, prot, kz, pos)
        cols.append(f"sample of {len(sample)}")

    def ratio(v: ArrayLike) -> float:
        v = np.asarray(v, float)
        return float(np.nanmin(v) / np.nanmax(v))

    def row(name: str, *vals: float) -> list[object]:
        out = [name, *[float(v) for v in vals[:3]]]
        if s_rate is not None:
            out.append(float(vals[3]))
        return out

    label_name, prot_name = dom.names[lab], dom.names[prot]
    ypos = dom.levels[label_name][pos]
    rows = [row("statistical rate", ratio(raw_rate), ratio(q_rate), ratio(p_rate),
                ratio(s_rate) if s_rate is not None else 0),
            row("representation rate", ratio(raw_share), ratio(q_share), ratio(p_share),
                ratio(s_share) if s_share is not None else 0)]
    for z, lev in enumerate(dom.levels[prot_name]):
        rows.append(row(f"P({label_name}={ypos} | {prot_name}={lev})", raw_rate[z], q_rate[z],
                        p_rate[z], s_rate[z] if s_rate is not None else 0))
        rows.append(row(f"P({prot_name}={lev})", raw_share[z], q_share[z], p_share[z],
                        s_share[z] if s_share is not None else 0))
    marg = dist.level_marginals()
    mrows = []
    for f in (prot, lab):
        name = dom.names[f]
        for v, lev in enumerate(dom.levels[name]):
            mrows.append([f"{name}={lev}", float(model.target[f][v]), float(marg[f][v]),
                          float(marg[f][v] - model.target[f][v])])
    metrics = {
        "statistical_rate_raw": ratio(raw_rate),
        "representation_rate_raw": ratio(raw_share),
        "statistical_rate_prior": ratio(q_rate),
        "representation_rate_prior": ratio(q_share),
        "statistical_rate": ratio(p_rate),
        "representation_rate": ratio(p_share),
        "max_marginal_violation": float(sol.max_violation),
        "kl_to_prior": float(sol.kl),
        "dual_objective": float(sol.objective),
        "n_iter": float(sol.iterations or 0),
        "uniform_branch_weight": float(dist.uniform_weight),
        "domain_size": float(dom.size),
        "dual_dimension": float(model.encoding.dim),
        "support_points": float(model.points.shape[0]),
        "records": float(len(codes)),
        "sample_seconds": sample_seconds,
    }
    if s_rate is not None:
        metrics["statistical_rate_sample"] = ratio(s_rate)
        metrics["representation_rate_sample"] = ratio(cast("NDArray[np.float64]", s_share))   # set with s_rate
    if not np.isfinite(metrics["statistical_rate"]):
        raise DataValidationError("the fitted distribution has an empty protected group.")
    return RunOutput(
        backend=sol.backend, solver=sol.solver, status=sol.status.value, metrics=metrics,
        build_seconds=build_seconds, solve_seconds=sol.solve_seconds,
        tables=[Table(f"Fairness before and after max-entropy preprocessing (C={params.C}, "
                      f"prior={params.prior}, target={params.target})", cols, rows),
                Table("Marginals of p* against the target θ", ["level", "theta", "p*", "p* − θ"],
                      mrows)],
        extra={"lambda": sol.primal["lambda"].tolist(), "summary": model.summary(),
               "protected": prot_name, "label": label_name})
