"""RegressionDebiaser and the regression-parity transport LP (issue 33 item 3).

The fitted loss is checked against an independent LP over the full transport plan written here
with scipy's linprog, and at eps = 0 with squared loss against the closed-form Wasserstein-2
barycenter (quantile averaging).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.linear_model import LinearRegression

import fairopt.formulations.regression_parity as rp
from fairopt.errors import DataValidationError, ParameterError
from fairopt.postprocessing import RegressionDebiaser


def full_plan_lp(pred, codes, w, grid, eps, loss):
    """Independent reference: min sum_i w_i sum_j x_ij c(s_i - y_j) over row-level plans x >= 0 with
    rows summing to 1, subject to |CDF_a(y_j) - CDF(y_j)| <= eps (weighted, per group)."""
    n, M = pred.shape[0], grid.shape[0]
    W = w.sum()
    cost = np.abs(pred[:, None] - grid[None, :])
    cost = cost * cost if loss == "squared" else cost
    c = (w[:, None] / W * cost).ravel()
    rows = sp.kron(sp.identity(n), np.ones((1, M)), format="csr")
    cum = sp.csr_matrix(np.tril(np.ones((M, M)))[:-1])          # CDF at y_1..y_{M-1}: sum_{j' <= j}
    per_row = sp.kron(sp.identity(n), cum, format="csr")          # (n (M-1)) x (n M)
    blocks = []
    pooled = sp.kron(sp.csr_matrix(w / W), sp.identity(M - 1)) @ per_row
    for a in np.unique(codes):
        m = (codes == a) * w
        grp = sp.kron(sp.csr_matrix(m / m.sum()), sp.identity(M - 1)) @ per_row
        blocks += [grp - pooled, pooled - grp]
    res = linprog(c, A_ub=sp.vstack(blocks), b_ub=np.full(sum(b.shape[0] for b in blocks), eps),
                  A_eq=rows, b_eq=np.ones(n), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def instance(seed, n=None):
    rng = np.random.default_rng(seed)
    A = int(rng.integers(2, 5))
    n = int(rng.integers(30, 90)) if n is None else n
    codes = rng.integers(0, A, n)
    codes[:A] = np.arange(A)
    pred = np.round(rng.normal(size=n) * (1 + 0.3 * codes) + 0.8 * codes, 1)
    w = rng.random(n) + 0.05
    return pred, codes, w


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("eps", [0.02, 0.1])
def test_equals_the_full_plan_lp(seed, loss, eps):
    pred, codes, w = instance(seed)
    grid = np.unique(np.round(np.random.default_rng(100 + seed).normal(size=10) * 1.5 + 1, 2))
    deb = RegressionDebiaser(eps=eps, loss=loss, grid=grid).fit(pred, sensitive_features=codes, sample_weight=w)
    ref = full_plan_lp(pred, codes, w, deb.grid_, eps, loss)
    assert deb.train_loss_ == pytest.approx(ref, abs=1e-6)
    assert deb.train_gap_ <= eps + 1e-7
    # the loss recomputed from the stored plans agrees
    cost = sum(p * (plan.multiply(rp.transport_cost(s[:, None] - deb.grid_[None, :], loss))).sum()
               for p, plan, s in zip(deb.group_shares_, deb.plan_, deb.support_, strict=True))
    assert cost == pytest.approx(deb.train_loss_, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_eps0_squared_is_the_quantile_averaged_barycenter(seed):
    pred, codes, w = instance(seed)
    deb = RegressionDebiaser(eps=0.0).fit(pred, sensitive_features=codes, sample_weight=w)
    # closed form: sum_a p_a W2^2(mu_a, bary) with bary's quantile = sum_a p_a Q_a(u), on the merged u-cells
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    cuts = np.unique(np.concatenate([d.levels for d in dists]))
    mids, mass = 0.5 * (cuts[1:] + cuts[:-1]), np.diff(cuts)
    q = np.vstack([d.quantile(mids) for d in dists])
    qbar = shares @ q
    closed = float(sum(p * np.dot(mass, (qa - qbar) ** 2) for p, qa in zip(shares, q, strict=True)))
    assert deb.train_loss_ == pytest.approx(closed, abs=1e-6)
    assert deb.train_gap_ <= 1e-12                          # output CDFs coincide
    np.testing.assert_allclose(deb.output_cdf_, np.broadcast_to(deb.pooled_cdf_, deb.output_cdf_.shape), atol=1e-9)
    # and the common output distribution is the barycenter itself
    bv, bw = rp.barycenter(dists, shares)
    np.testing.assert_allclose(np.interp(bv, deb.grid_, deb.pooled_cdf_), np.cumsum(bw), atol=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_eps0_absolute_matches_the_lp_and_the_median_cdf_bound(seed):
    pred, codes, w = instance(seed, n=40)
    deb = RegressionDebiaser(eps=0.0, loss="absolute").fit(pred, sensitive_features=codes, sample_weight=w)
    ref = full_plan_lp(pred, codes, w, deb.grid_, 0.0, "absolute")
    assert deb.train_loss_ == pytest.approx(ref, abs=1e-6)
    # W1 = int |F_a - F| dt is minimised pointwise by the weighted median of the group CDFs
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    t = np.unique(pred)
    F = np.vstack([d.cdf(t) for d in dists])
    best = 0.0
    for i in range(t.size - 1):
        order = np.argsort(F[:, i])
        med = F[order, i][np.searchsorted(np.cumsum(shares[order]), 0.5)]
        best += (t[i + 1] - t[i]) * float(shares @ np.abs(F[:, i] - med))
    assert deb.train_loss_ == pytest.approx(best, abs=1e-6)
    assert deb.train_gap_ <= 1e-12


def test_cutting_planes_agree_with_the_full_model(monkeypatch):
    monkeypatch.setattr(rp, "squared_sweep", lambda form: None)     # this checks the LP itself
    pred, codes, w = instance(3)
    full = RegressionDebiaser(eps=0.05, grid=15).fit(pred, sensitive_features=codes, sample_weight=w)
    monkeypatch.setattr(rp, "FULL_LIMIT", 0)
    cut = RegressionDebiaser(eps=0.05, grid=15).fit(pred, sensitive_features=codes, sample_weight=w)
    assert cut.train_loss_ == pytest.approx(full.train_loss_, abs=1e-7)


def test_predict_draws_follow_the_plan_and_sample_weights_are_repetitions():
    pred, codes, _ = instance(1)
    w = np.random.default_rng(0).integers(1, 4, pred.shape[0])
    a = RegressionDebiaser(eps=0.05, random_state=3).fit(pred, sensitive_features=codes, sample_weight=w)
    b = RegressionDebiaser(eps=0.05).fit(np.repeat(pred, w), sensitive_features=np.repeat(codes, w))
    assert a.train_loss_ == pytest.approx(b.train_loss_, abs=1e-8)
    # predict_distribution on the fitting rows is the plan's conditional rows
    grid, proba = a.predict_distribution(pred, sensitive_features=codes)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    g0 = a.groups_.get_loc(codes[0])
    i0 = np.searchsorted(a.support_[g0], pred[0])
    row = a.plan_[g0][i0].toarray().ravel()
    np.testing.assert_allclose(proba[0], row / row.sum(), atol=1e-9)
    # many seeded draws reproduce the row distribution; the same seed gives the same draws
    rep = np.repeat(pred[:1], 20000)
    draws = a.predict(rep, sensitive_features=np.repeat(codes[:1], 20000), random_state=0)
    freq = np.array([(draws == v).mean() for v in grid])
    assert np.abs(freq - proba[0]).max() < 0.02
    np.testing.assert_array_equal(a.predict(pred, sensitive_features=codes), a.predict(pred, sensitive_features=codes))


def test_unseen_values_interpolate_by_rank():
    pred = np.array([0.0, 1.0, 2.0, 3.0])
    deb = RegressionDebiaser().fit(pred, sensitive_features=[0, 0, 1, 1])
    _, proba = deb.predict_distribution(np.array([0.5, -5.0, 9.0]), sensitive_features=[0, 0, 0])
    # grid = predictions and barycenter support {0, 1, 2, 3}; group 0 sends 0 -> 1 and 1 -> 2
    np.testing.assert_allclose(proba, [[0, 0.5, 0.5, 0], [0, 1, 0, 0], [0, 0, 1, 0]])


def test_frames_intersectional_groups_and_a_wrapped_regressor():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=300), "s": rng.integers(0, 2, 300), "r": rng.integers(0, 2, 300)})
    y = df["x"] + df["s"] + 0.5 * df["r"] + 0.1 * rng.normal(size=300)
    deb = RegressionDebiaser(estimator=LinearRegression(), eps=0.0, grid=40, random_state=0)
    deb.fit(df, y, sensitive_features=["s", "r"])
    assert len(deb.groups_) == 4 and deb.train_gap_ <= 1e-12 and deb.input_gap_ > 0.2
    out = deb.predict(df, sensitive_features=df[["s", "r"]])
    assert out.shape == (300,) and np.isin(out, deb.grid_).all()
    assert np.isfinite(deb.score(df, y, sensitive_features=df[["s", "r"]]))
    # predictions passed as a column, groups as a column name
    frame = pd.DataFrame({"pred": deb.estimator_.predict(df), "s": df["s"]})
    alone = RegressionDebiaser(eps=0.1).fit(frame, sensitive_features="s")
    assert alone.predict(frame).shape == (300,)


def test_bad_input_raises_typed_errors():
    with pytest.raises(DataValidationError):
        RegressionDebiaser().fit(np.array([0.0, np.nan]), sensitive_features=[0, 1])
    with pytest.raises(ParameterError, match="'eps' parameter of RegressionDebiaser"):   # a parameter mistake
        RegressionDebiaser(eps=-0.1).fit(np.array([0.0, 1.0]), sensitive_features=[0, 1])
    with pytest.raises(DataValidationError):
        RegressionDebiaser(estimator=LinearRegression()).fit(np.ones((3, 1)), sensitive_features=[0, 1, 0])
    deb = RegressionDebiaser().fit(np.array([0.0, 1.0]), sensitive_features=[0, 1])
    with pytest.raises(DataValidationError):
        deb.predict(np.array([0.0]))
    pred, g = np.array([0.0, 1.0, 2.0, 3.0]), [0, 1, 0, 1]
    for grid, what in ((np.ones((2, 2)), "1-D"), (["a", "b"], "1-D"), (np.array([]), "finite"),
                       (np.array([0.0, np.inf]), "finite")):
        with pytest.raises(DataValidationError, match=what):
            RegressionDebiaser(grid=grid).fit(pred, sensitive_features=g)
    # a grid is a set of output values: order and repeats do not change the fit
    a = RegressionDebiaser(eps=0.1, grid=np.array([3.0, 0.0, 1.5, 1.5])).fit(pred, sensitive_features=g)
    b = RegressionDebiaser(eps=0.1, grid=np.array([0.0, 1.5, 3.0])).fit(pred, sensitive_features=g)
    np.testing.assert_allclose(a.grid_, b.grid_)
    assert a.train_loss_ == pytest.approx(b.train_loss_, abs=1e-12)


def test_price_of_fairness_is_the_slope_of_the_loss_in_eps():
    pred, codes, w = instance(2)
    grid = np.linspace(pred.min(), pred.max(), 12)
    d = 1e-4
    a = RegressionDebiaser(eps=0.05, grid=grid).fit(pred, sensitive_features=codes, sample_weight=w)
    b = RegressionDebiaser(eps=0.05 + d, grid=grid).fit(pred, sensitive_features=codes, sample_weight=w)
    slope = (b.train_loss_ - a.train_loss_) / d
    assert slope == pytest.approx(-np.abs(a.price_of_fairness_).sum(), rel=1e-3, abs=1e-6)


def test_benchmark_smoke():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "regression_debiasing.py"
    spec = importlib.util.spec_from_file_location("regression_debiasing_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.run(n=20000, n_groups=4, eps_values=(0.0, 0.05))
    fitted = out["rows"]
    assert all(r["gap"] <= r["eps"] + 1e-7 for r in fitted)
    paths = {(r["loss_kind"], r["eps"], r["grid"]): r["path"] for r in fitted}
    assert paths == {("squared", 0.0, "default"): "closed_form", ("squared", 0.05, "default"): "sweep",
                     ("absolute", 0.0, "default"): "closed_form", ("absolute", 0.05, "default"): "sweep"}
    assert all(r["lp_rounds"] == 0 for r in fitted)
    # the default grid reproduces the exact (continuous) barycenter at eps = 0
    sq0 = next(r for r in fitted if r["loss_kind"] == "squared" and r["eps"] == 0.0)
    assert sq0["loss"] == pytest.approx(out["exact_barycenter_loss"], abs=1e-9)
