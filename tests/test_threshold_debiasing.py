"""Randomized-threshold post-processing (Alabdulmohsin & Lucic 2021): formulation, back ends, estimator."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import requires_data
from pydantic import ValidationError

from fairopt.errors import ConfigError, DataValidationError, NotFittedError
from fairopt.formulations.constrained_classification import (
    CellRamp,
    RandomizedThresholdParity,
    ThresholdSGD,
    collapse_atoms,
)
from fairopt.formulations.constrained_classification.covariance import RandomizedThresholdCovariance
from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
from fairopt.postprocessing import ShiftInference, ThresholdDebiaser, scores_from_logits, scores_from_proba

QP_SOLVERS = ["osqp", "highs", "pyomo"]


# ----------------------------------------------------------------------------------- fixtures
def example1():
    """Paper Example 1 with f = 2 eta - 1 and counts x12: group 1 = (f=-1: 3, f=0: 4), group 0 = (f=-1: 3, f=1: 2)."""
    f = np.repeat([-1.0, 0.0, -1.0, 1.0], [3, 4, 3, 2])
    g = np.repeat([1, 1, 0, 0], [3, 4, 3, 2])
    return f, g


def random_scores(seed=0, sizes=(300, 1000, 150), decimals=3):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    mu = np.linspace(0.5, -0.3, len(sizes))
    f = np.concatenate([np.tanh(rng.normal(m, 1.0, n)) for m, n in zip(mu, sizes, strict=False)])
    return np.round(f, decimals), g


def group_rates(q, atoms):
    return np.bincount(atoms.cell, weights=atoms.weight * q) / atoms.cell_weight


# ----------------------------------------------------------------------------------- Example 1
@pytest.mark.parametrize("gamma", [0.1, 0.5, 1.0])
def test_example1_native_gives_0_07_1(gamma):
    f, g = example1()
    sol = RandomizedThresholdParity(f, g, gamma=gamma, rho=0.4).solve()
    assert sol.thresholds[1] == pytest.approx(-0.7 * gamma, abs=1e-12)
    assert -1.0 <= sol.thresholds[0] <= 1.0 - gamma          # flat root: any theta_0 in [-1, 1 - gamma]
    assert sol.thresholds[0] == 0.0                            # convention: the point nearest 0
    deb = ThresholdDebiaser(gamma=gamma, rho=0.4).fit(f, sensitive_features=g)
    p = deb.predict_proba(np.array([-1.0, 0.0, -1.0, 1.0]), sensitive_features=[1, 1, 0, 0])[:, 1]
    np.testing.assert_allclose(p, [0.0, 0.7, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(sol.rates, [0.4, 0.4], atol=1e-12)


def test_example1_lp_free_rho():
    f, g = example1()
    for solver in ("native", "highs"):
        sol = RandomizedThresholdParity(f, g, gamma=0.0, rho=None).solve(solver)
        assert sol.rho == pytest.approx(0.4, abs=1e-9)
        atoms = collapse_atoms(f, g)
        j = np.flatnonzero((atoms.cell == 1) & (atoms.score == 0.0))[0]
        assert sol.q[j] == pytest.approx(0.7, abs=1e-9)


@pytest.mark.parametrize("solver", ["native", *QP_SOLVERS])
def test_example1_qp_free_rho(solver):
    f, g = example1()
    sol = RandomizedThresholdParity(f, g, gamma=1.0, rho=None).solve(solver)
    assert sol.rho == pytest.approx(20 / 99, abs=1e-6)
    np.testing.assert_allclose(sol.thresholds, [49 / 99, -35 / 99], atol=1e-6)
    assert 5 * sol.thresholds[0] + 7 * sol.thresholds[1] == pytest.approx(0.0, abs=1e-5)
    half = RandomizedThresholdParity(f, g, gamma=0.5, rho=None).solve(solver)   # gamma <= 50/99
    assert half.rho == pytest.approx(0.4, abs=1e-6)


# ----------------------------------------------------------------------------------- back ends agree
@pytest.mark.parametrize("eps", [0.0, 0.05])
@pytest.mark.parametrize("rho", [0.45, None])
def test_backends_agree_on_thresholds(eps, rho):
    f, g = random_scores()
    ref = RandomizedThresholdParity(f, g, gamma=0.2, eps=eps, rho=rho).solve()
    for solver in QP_SOLVERS:
        sol = RandomizedThresholdParity(f, g, gamma=0.2, eps=eps, rho=rho).solve(solver)
        np.testing.assert_allclose(sol.thresholds, ref.thresholds, atol=1e-6, err_msg=solver)
        assert sol.rho == pytest.approx(ref.rho, abs=1e-6)
    cv = RandomizedThresholdParity(f, g, gamma=0.2, eps=eps, rho=rho).solve("cvxpy")
    np.testing.assert_allclose(cv.thresholds, ref.thresholds, atol=1e-4)   # interior point
    if rho is not None:
        sgd = RandomizedThresholdParity(f, g, gamma=0.2, eps=eps, rho=rho).solve("sgd", random_state=1)
        np.testing.assert_allclose(sgd.thresholds, ref.thresholds, atol=1e-2)
        assert sgd.status == "iteration_limit"


def test_lp_limit_matches_small_gamma():
    f, g = random_scores(seed=3)
    for rho in (0.45, None):
        small = RandomizedThresholdParity(f, g, gamma=1e-6, rho=rho).solve()
        lp = RandomizedThresholdParity(f, g, gamma=0.0, rho=rho).solve("highs")
        knap = RandomizedThresholdParity(f, g, gamma=0.0, rho=rho).solve("native")
        np.testing.assert_allclose(small.rates, lp.rates, atol=1e-6)
        assert small.objective == pytest.approx(lp.objective, abs=1e-5)
        assert knap.objective == pytest.approx(lp.objective, abs=1e-12)
        np.testing.assert_allclose(knap.rates, lp.rates, atol=1e-9)
        q = lp.info["q_solver"]
        frac = (q > 1e-9) & (q < 1 - 1e-9)
        assert np.bincount(lp_atoms_cell(f, g)[frac], minlength=3).max() <= 1   # one fractional atom per group
        has_frac = np.bincount(lp_atoms_cell(f, g)[frac], minlength=3) == 1
        np.testing.assert_allclose(small.thresholds[has_frac], lp.thresholds[has_frac], atol=1e-5)


def lp_atoms_cell(f, g):
    return collapse_atoms(f, g).cell


# ----------------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("eps", [0.0, 0.03, 0.1])
def test_band_holds_exactly_on_fitting_sample(eps):
    f, g = random_scores(seed=5, sizes=(400, 90, 1200, 35))
    rho = 0.4
    sol = RandomizedThresholdParity(f, g, gamma=0.15, eps=eps, rho=rho).solve()
    assert np.all(np.abs(sol.rates - rho) <= eps / 2 + 1e-12)
    moved = sol.thresholds != 0
    np.testing.assert_allclose(np.abs(sol.rates[moved] - rho), eps / 2, atol=1e-12)  # on the boundary
    free = RandomizedThresholdParity(f, g, gamma=0.15, eps=eps, rho=None).solve()
    assert free.rates.max() - free.rates.min() <= eps + 1e-12


def test_groups_already_inside_band_keep_theta_zero():
    rng = np.random.default_rng(2)
    f = rng.uniform(-1, 1, 3000)
    g = rng.integers(0, 3, 3000)
    m0 = RandomizedThresholdParity(f, g, gamma=0.2, rho=0.5).ramps()
    rates0 = np.array([r(0.0) for r in m0])
    eps = 2 * np.abs(rates0 - 0.5).max() + 1e-9
    sol = RandomizedThresholdParity(f, g, gamma=0.2, eps=eps, rho=0.5).solve()
    np.testing.assert_array_equal(sol.thresholds, 0.0)
    free = RandomizedThresholdParity(f, g, gamma=0.2, eps=rates0.max() - rates0.min() + 1e-9).solve()
    np.testing.assert_array_equal(free.thresholds, 0.0)


def test_raising_rho_never_raises_theta():
    f, g = random_scores(seed=7)
    form = RandomizedThresholdParity(f, g, gamma=0.1, eps=0.02, rho=0.1)
    ths = np.array([form.with_parameters(rho=r).solve().thresholds for r in np.linspace(0.05, 0.95, 19)])
    assert np.all(np.diff(ths, axis=0) <= 1e-12)


def test_ramp_table_matches_direct_evaluation():
    rng = np.random.default_rng(0)
    f, a = rng.uniform(-1, 1, 500), rng.uniform(0.5, 2, 500)
    a /= a.sum()
    r = CellRamp(f, a, 0.3)
    th = np.linspace(-1.5, 1.2, 101)
    np.testing.assert_allclose(r.values(th), [r(t) for t in th], atol=1e-12)
    for c in (0.05, 0.37, 0.9):
        assert r(r.root(c)) == pytest.approx(c, abs=1e-13)


def test_collapse_atoms_counts_and_weights():
    f = np.array([0.2, 0.2, -0.1, 0.2, 0.5, -0.1])
    g = np.array([1, 1, 0, 0, 1, 0])
    at = collapse_atoms(f, g, sample_weight=[1, 2, 1, 1, 0, 3], labels=[1, 0, 0, 1, 1, 1], keep_rows=False)
    np.testing.assert_array_equal(at.cell, [0, 0, 1])
    np.testing.assert_allclose(at.score, [-0.1, 0.2, 0.2])
    np.testing.assert_allclose(at.weight, [4, 1, 3])
    np.testing.assert_allclose(at.positive, [3, 1, 1])


def test_collapse_fast_path_matches_permutation_path():
    # counts-only collapse (value sort per cell) == the argsort path forced by unit weights,
    # with ties inside cells and the same score in adjacent cells
    rng = np.random.default_rng(3)
    f = np.round(rng.normal(size=5000), 2)
    g = rng.integers(0, 4, 5000)
    fast, ref = collapse_atoms(f, g, 4), collapse_atoms(f, g, 4, sample_weight=np.ones(5000))
    for name in ("cell", "score", "weight", "offsets"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name))
    distinct = collapse_atoms(rng.normal(size=300), rng.integers(0, 3, 300), 3)
    assert distinct.n_atoms == 300 and np.all(np.diff(distinct.offsets) > 0)
    with pytest.raises(DataValidationError, match="cells \\[2\\]"):
        collapse_atoms(f, g % 2, 3)


def test_parity_ramp_table_matches_general_table():
    # the z = 1 fast table is bit-identical to the general one with explicit z = 1
    rng = np.random.default_rng(4)
    f = np.sort(np.round(rng.uniform(-1, 1, 2000), 3))
    a = rng.uniform(0.5, 2, 2000)
    a /= a.sum()
    fast, ref = CellRamp(f, a, 0.07), CellRamp(f, a, 0.07, z=np.ones_like(f))
    for name in ("b", "v", "flat"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(ref, name))
    for c in (0.1, 0.5, 0.93):
        assert fast.root(c) == ref.root(c) and fast.root_fast(c) == ref.root_fast(c)


def test_sgd_streaming_partial_fit_converges():
    f, g = random_scores(seed=9, sizes=(2000, 6000, 800))
    ref = RandomizedThresholdParity(f, g, gamma=0.2, rho=0.4).solve()
    rng = np.random.default_rng(0)
    sgd = ThresholdSGD(3, gamma=0.2, target=0.4)
    for _ in range(15):
        order = rng.permutation(f.shape[0])
        sgd.partial_fit(f[order], g[order], batch_size=256)
    np.testing.assert_allclose(sgd.thresholds, ref.thresholds, atol=2e-2)


# ----------------------------------------------------------------------------------- extensions
def test_covariance_extension_native_matches_qp_and_bound_holds():
    rng = np.random.default_rng(1)
    n = 2000
    k = rng.integers(0, 3, n)
    s = (rng.random(n) < 0.3 + 0.2 * k).astype(int)
    f = np.tanh(rng.normal(0.3 * s - 0.2, 1.0, n))
    for eps in (0.0, 0.01):
        ref = RandomizedThresholdCovariance(f, s, k, gamma=0.2, eps=eps).solve()
        assert np.all(np.abs(ref.rates) <= eps + 1e-12)
        qp = RandomizedThresholdCovariance(f, s, k, gamma=0.2, eps=eps).solve("osqp")
        np.testing.assert_allclose(qp.theta, ref.theta, atol=1e-6)
        # direct check of Cov(h, 1_S | k) from the deployed per-cell thresholds
        h = np.clip((f - ref.thresholds[2 * k + s]) / 0.2, 0, 1)
        cov = [np.mean(h[k == j] * s[k == j]) - h[k == j].mean() * s[k == j].mean() for j in range(3)]
        assert np.max(np.abs(cov)) <= eps + 1e-12


def _labelled(seed=2, n=5000):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    eta = 1 / (1 + np.exp(-(rng.normal(0, 1.5, n) + 0.5 * g - 0.5)))
    y = (rng.random(n) < eta).astype(int)
    return np.round(2 * eta - 1, 4), g, y


@pytest.mark.parametrize("constraint", ["equal_opportunity", "equalized_odds"])
@pytest.mark.parametrize("eps", [0.0, 0.05])
def test_odds_lp_constraints_hold(constraint, eps):
    f, g, y = _labelled()
    sol = ThresholdMixtureOdds(f, g, y, constraint, eps).solve()
    assert sol.tpr.max() - sol.tpr.min() <= eps + 1e-9
    if constraint == "equalized_odds":
        assert sol.fpr.max() - sol.fpr.min() <= eps + 1e-9
    deb = ThresholdDebiaser(constraint=constraint, eps=eps).fit(f, y, sensitive_features=g)
    h = deb.decision_probability(f, g)
    tpr = [h[(g == k) & (y == 1)].mean() for k in range(3)]
    assert max(tpr) - min(tpr) <= eps + 1e-9
    assert np.all(np.diff(np.sort(f[g == 0])) >= 0) and np.all(np.diff(h[g == 0][np.argsort(f[g == 0])]) >= -1e-12)


def test_mixture_lp_with_score_objective_equals_parity_lp():
    f, g, y = _labelled(seed=4)
    mix = ThresholdMixtureOdds(f, g, y, "demographic_parity", 0.0, objective="scores").solve()
    lp = RandomizedThresholdParity(f, g, gamma=0.0, rho=None).solve()
    assert mix.objective == pytest.approx(-lp.objective, abs=1e-9)
    np.testing.assert_allclose(mix.rate, lp.rates, atol=1e-7)


# ----------------------------------------------------------------------------------- estimator
def test_estimator_validation_and_errors():
    f, g = example1()
    with pytest.raises(DataValidationError, match="not seen at fit"):
        ThresholdDebiaser(gamma=0.5, rho=0.4).fit(f, sensitive_features=g).predict(f[:2], sensitive_features=[1, 7])
    with pytest.raises(DataValidationError, match=r"\[-1, 1\]"):
        ThresholdDebiaser().fit(f * 3, sensitive_features=g)
    with pytest.raises(ConfigError, match="gamma"):
        ThresholdDebiaser(gamma=-1).fit(f, sensitive_features=g)
    with pytest.raises(ConfigError, match="rho"):
        ThresholdDebiaser(solver="sgd").fit(f, sensitive_features=g)
    with pytest.raises(NotFittedError):
        ThresholdDebiaser().predict(f, sensitive_features=g)
    with pytest.raises(DataValidationError, match="labels y"):
        ThresholdDebiaser(constraint="equal_opportunity").fit(f, sensitive_features=g)


@pytest.mark.parametrize("cls", [ThresholdDebiaser, ShiftInference], ids=lambda c: c.__name__)
def test_sample_weights_are_validated(cls):
    f, g = random_scores(seed=4)
    y = (np.random.default_rng(4).random(f.size) < 0.5 * (f + 1)).astype(int)
    n = f.size
    bad = {"missing value": np.where(np.arange(n) == 5, np.nan, 1.0),
           "non-finite": np.where(np.arange(n) == 5, np.inf, 1.0),
           "negative value": np.where(np.arange(n) == 2, -0.5, 1.0),
           "rows but the other inputs have": np.ones(n + 1)}
    for message, w in bad.items():
        with pytest.raises(DataValidationError, match=message):
            cls().fit(f, y, sensitive_features=g, sample_weight=w)
    # zero weights are rows left out
    w = np.where(np.arange(n) % 3 == 0, 0.0, 1.0)
    keep = w > 0
    a = cls().fit(f, y, sensitive_features=g, sample_weight=w)
    b = cls().fit(f[keep], y[keep], sensitive_features=g[keep])
    np.testing.assert_allclose(a.predict_proba(f, sensitive_features=g),
                               b.predict_proba(f, sensitive_features=g), atol=1e-12)


def test_predict_is_seeded_and_matches_probabilities():
    f, g = random_scores(seed=11, sizes=(20000, 30000))
    deb = ThresholdDebiaser(gamma=0.3, rho=0.4, random_state=5).fit(f, sensitive_features=g)
    a, b = deb.predict(f, sensitive_features=g), deb.predict(f, sensitive_features=g)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, deb.predict(f, sensitive_features=g, random_state=6))
    h = deb.predict_proba(f, sensitive_features=g)[:, 1]
    for k in (0, 1):
        assert a[g == k].mean() == pytest.approx(0.4, abs=4 * np.sqrt(0.24 / (g == k).sum()))
        assert h[g == k].mean() == pytest.approx(0.4, abs=1e-12)


def test_score_maps_and_intersectional_groups():
    np.testing.assert_allclose(scores_from_proba([0.0, 0.5, 1.0]), [-1, 0, 1])
    np.testing.assert_allclose(scores_from_logits([0.0, np.log(3)]), [0.0, 0.5])
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 4000)
    sf = pd.DataFrame({"sex": rng.choice(["F", "M"], 4000), "race": rng.choice(["a", "b", "c"], 4000)})
    deb = ThresholdDebiaser(gamma=0.1, score_map="proba").fit(p, sensitive_features=sf)
    assert len(deb.groups_) == 6
    h = deb.decision_probability(p, sf)
    rates = pd.Series(h).groupby([sf["sex"], sf["race"]]).mean()
    assert rates.max() - rates.min() <= 1e-12


def test_sklearn_pipeline_and_cross_val_score_with_prefit_estimator():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    rng = np.random.default_rng(0)
    n = 3000
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "sex": rng.integers(0, 2, n)})
    y = (X["a"] + 0.8 * X["sex"] + rng.normal(size=n) > 0.5).astype(int).to_numpy()
    clf = make_pipeline(StandardScaler(), LogisticRegression()).fit(X.iloc[:1500], y[:1500])
    Xp, yp = X.iloc[1500:].reset_index(drop=True), y[1500:]
    deb = ThresholdDebiaser(estimator=clf, prefit=True, gamma=0.1, random_state=0)
    scores = cross_val_score(deb, Xp, yp, params={"sensitive_features": "sex"}, cv=3)
    assert scores.shape == (3,) and np.all((scores > 0.6) & (scores <= 1.0))
    assert not hasattr(clf, "estimator_")     # the prefit model is shared, never refitted
    outer = Pipeline([("identity", FunctionTransformer()), ("debias", ThresholdDebiaser(estimator=clf, prefit=True))])
    outer.fit(Xp, yp, debias__sensitive_features=Xp["sex"])
    h = outer.predict_proba(Xp, sensitive_features=Xp["sex"])[:, 1]
    assert abs(h[Xp["sex"] == 0].mean() - h[Xp["sex"] == 1].mean()) <= 1e-12
    assert outer.predict(Xp.iloc[:10], sensitive_features=Xp["sex"].iloc[:10]).shape == (10,)


def test_shift_inference_moves_priors_not_parity():
    f, g, y = _labelled(seed=6, n=20000)
    si = ShiftInference().fit(f, y, sensitive_features=g)
    before = [(f[g == k] > 0).mean() for k in range(3)]
    pred = si.predict(f, sensitive_features=g)
    after = [pred[g == k].mean() for k in range(3)]
    assert max(after) - min(after) < max(before) - min(before)      # moves rates toward each other
    assert si.prior_ == pytest.approx(y.mean())


# ----------------------------------------------------------------------------------- isotonic calibration
def _miscalibrated(seed=3, n=6000):
    """Scores inflated by 2 logits in group 0 (eta = sigmoid(z), f = tanh((z + 2) / 2) there)."""
    rng = np.random.default_rng(seed)
    g = (rng.random(n) < 0.4).astype(int)
    z = rng.normal(0.3 * g - 0.6, 1.5, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    f = np.round(np.tanh(z + 2.0 * (g == 0)), 3)
    return f, g, y


def _accuracy(h, y):
    return float(np.mean(h * y + (1 - h) * (1 - y)))


def _best_parity_accuracy(f, g, y):
    """Reference: the most accurate exact-parity rule constant on each group's isotonic blocks.
    Per group the best accuracy at rate r is concave piecewise linear (blocks by decreasing eta);
    the maximum over a common r sits at one of the groups' block boundaries."""
    from sklearn.isotonic import IsotonicRegression
    curves = []
    for k in np.unique(g):
        m = g == k
        levels, inv = np.unique(IsotonicRegression().fit_transform(f[m], y[m]), return_inverse=True)
        order = np.argsort(-levels)
        cnt, gain = np.bincount(inv)[order], np.bincount(inv, weights=2 * y[m] - 1)[order]
        curves.append((np.r_[0, np.cumsum(cnt)] / m.sum(), np.r_[0, np.cumsum(gain)]))
    rates = np.unique(np.concatenate([r for r, _ in curves]))
    total = sum(np.interp(rates, r, a) for r, a in curves)
    return (total.max() + np.sum(1 - y)) / y.size


def test_calibration_map_is_monotone_per_group_and_equals_isotonic_fit():
    from sklearn.base import clone
    from sklearn.isotonic import IsotonicRegression
    f, g, y = _miscalibrated()
    deb = ThresholdDebiaser(gamma=0.05, calibration="isotonic_per_group").fit(f, y, sensitive_features=g)
    assert clone(deb).calibration == "isotonic_per_group"
    eta = deb.calibrator_.eta(f, g)
    grid = np.linspace(-1.2, 1.2, 2001)                       # also outside the fitted range (clipped)
    for k in (0, 1):
        m = g == k
        np.testing.assert_allclose(eta[m], IsotonicRegression().fit_transform(f[m], y[m]), atol=1e-12)
        e = deb.calibrator_.eta(grid, np.full(grid.size, k))
        assert np.all(np.diff(e) >= 0) and 0 <= e.min() and e.max() <= 1
        iso = IsotonicRegression(out_of_bounds="clip").fit(f[m], y[m])
        np.testing.assert_allclose(e, iso.predict(grid), atol=1e-12)
    # raw f = 0.5 means eta = sigmoid(atanh(0.5) - 2) = 0.19 in group 0 and sigmoid(atanh(0.5)) = 0.63
    # in group 1, i.e. calibrated scores near -0.62 and 0.27
    np.testing.assert_allclose(deb.calibrator_.transform([0.5, 0.5], [0, 1]), [-0.62, 0.27], atol=0.1)
    pooled = ThresholdDebiaser(gamma=0.05, calibration="isotonic").fit(f, y, sensitive_features=g)
    assert len(pooled.calibrator_.breakpoints_) == 1 and len(deb.calibrator_.breakpoints_) == 2
    np.testing.assert_allclose(pooled.calibrator_.eta(f, g), IsotonicRegression().fit_transform(f, y), atol=1e-12)


def test_calibration_counts_example_exact_accuracies():
    # two groups x three raw levels (0.1, 0.5, 0.9), 10 rows each; positives (1, 5, 9) and (0, 2, 6).
    # Every raw score is > 0, so the uncalibrated free-rho rule predicts 1 everywhere (23/60); after
    # calibration only the top level of each group is positive (rate 1/3, accuracy 47/60).
    f = np.tile(np.repeat([0.1, 0.5, 0.9], 10), 2)
    g = np.repeat([0, 1], 30)
    y = np.concatenate([np.r_[np.ones(p), np.zeros(10 - p)] for p in (1, 5, 9, 0, 2, 6)]).astype(int)
    for gamma in (0.0, 0.01):
        raw = ThresholdDebiaser(gamma=gamma, calibration=None).fit(f, y, sensitive_features=g)
        assert _accuracy(raw.decision_probability(f, g), y) == pytest.approx(23 / 60, abs=1e-12)
        for cal in ("isotonic", "isotonic_per_group"):
            deb = ThresholdDebiaser(gamma=gamma, calibration=cal).fit(f, y, sensitive_features=g)
            h = deb.decision_probability(f, g)
            assert _accuracy(h, y) == pytest.approx(47 / 60, abs=1e-12)
            assert deb.rho_ == pytest.approx(1 / 3, abs=1e-9)
            np.testing.assert_allclose([h[g == 0].mean(), h[g == 1].mean()], [1 / 3, 1 / 3], atol=1e-12)


def test_per_group_calibration_is_the_most_accurate_parity_rule_on_fitting_sample():
    f, g, y = _miscalibrated()
    ref = _best_parity_accuracy(f, g, y)
    acc = {}
    for cal in (None, "isotonic", "isotonic_per_group"):
        deb = ThresholdDebiaser(gamma=0.0, calibration=cal).fit(f, y, sensitive_features=g)
        h = deb.decision_probability(f, g)
        assert abs(h[g == 0].mean() - h[g == 1].mean()) <= 1e-12     # exact parity on the fitting sample
        acc[cal] = _accuracy(h, y)
    assert acc["isotonic_per_group"] == pytest.approx(ref, abs=1e-12)
    assert acc["isotonic_per_group"] >= max(acc.values()) - 1e-15
    # inflated scores pull the uncalibrated free rho up (0.69) and cost 9 points of accuracy
    assert acc[None] == pytest.approx(0.6572, abs=5e-4) and ref == pytest.approx(0.7463, abs=5e-4)
    assert acc["isotonic"] == pytest.approx(0.7447, abs=5e-4)
    # a narrow ramp stays within gamma-order of the LP optimum
    small = ThresholdDebiaser(gamma=0.01, calibration="isotonic_per_group").fit(f, y, sensitive_features=g)
    assert _accuracy(small.decision_probability(f, g), y) >= ref - 1e-3


@pytest.mark.parametrize("eps, rho", [(0.0, 0.35), (0.0, None), (0.06, 0.3), (0.06, None)])
def test_band_holds_exactly_with_calibration(eps, rho):
    f, g, y = _miscalibrated(seed=4)
    for cal in ("isotonic", "isotonic_per_group"):
        deb = ThresholdDebiaser(gamma=0.1, eps=eps, rho=rho, calibration=cal).fit(f, y, sensitive_features=g)
        h = deb.decision_probability(f, g)
        rates = np.array([h[g == k].mean() for k in (0, 1)])
        np.testing.assert_allclose(rates, deb.fitted_rates_, atol=1e-12)
        if rho is None:
            assert rates.max() - rates.min() <= eps + 1e-12
        else:
            assert np.all(np.abs(rates - rho) <= eps / 2 + 1e-12)


def test_calibration_validation():
    f, g, y = _miscalibrated(n=500)
    with pytest.raises(DataValidationError, match="labels y"):
        ThresholdDebiaser(calibration="isotonic").fit(f, sensitive_features=g)
    with pytest.raises(ConfigError, match="calibration"):
        ThresholdDebiaser(calibration="platt").fit(f, y, sensitive_features=g)


# ----------------------------------------------------------------------------------- benchmark smoke test
@requires_data
def test_benchmark_smoke(tmp_path):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import threshold_debiasing as bench
    res = bench.run(datasets=("adult",), classifiers=("rf",), subsample=3000, roc_grid=(5, 3), speed=False,
                    plots=False, out=tmp_path / "r.json", resplits=1, progress=lambda *a: None)
    pair = res["datasets"]["adult"]["classifiers"]["rf"]
    assert pair["original"]["test"]["dp_gap"] > 0.05
    assert pair["ours"]["test"]["dp_gap"] < pair["original"]["test"]["dp_gap"]
    assert 0.6 < pair["ours"]["test"]["accuracy"] <= 1.0
    assert res["datasets"]["adult"]["speed"]["speedup_free_rho"] > 1.0
    assert (tmp_path / "r.json").exists()


def test_runner_on_a_score_csv(tmp_path):
    from fairopt.runs import get_runner
    runner = get_runner("threshold_debiasing")
    f, g, y = _labelled(seed=8, n=4000)
    path = tmp_path / "scores.csv"
    pd.DataFrame({"score": f, "group": g, "label": y}).to_csv(path, index=False)
    data = runner.Data(dataset="scores", path=str(path))
    params = runner.Parameters(gamma=0.05, splits=[0.2, 0.4, 0.4])
    out = runner.run(None, params, data, None, lambda *a: None)
    assert out.status == "optimal" and out.backend == "native"
    assert out.metrics["fit_dp_gap"] <= 1e-12
    assert out.metrics["test_dp_gap_after"] < out.metrics["test_dp_gap_before"]
    prog = runner.build(None, params, data)
    assert prog.summary().problem_class == "QP"
    with pytest.raises(ValidationError, match="splits must be three positive fractions"):
        runner.Parameters(splits=[0.5, 0.5])


def test_unit_weight_atoms_match_explicit_weights_bit_for_bit():
    # distinct unweighted scores keep a broadcast 1 as atom weights (no n-long arrays of ones or
    # of 1/n_k); thresholds and rho equal those of the same data with explicit unit weights
    rng = np.random.default_rng(12)
    f, g = np.tanh(rng.normal(size=30000)), rng.integers(0, 4, 30000)
    lean = RandomizedThresholdParity(f, g, gamma=0.07)
    full = RandomizedThresholdParity(f, g, gamma=0.07, sample_weight=np.ones(f.size))
    assert lean.atoms.unit_weight and not full.atoms.unit_weight
    a, b = lean.solve(), full.solve()
    assert a.rho == b.rho and np.array_equal(a.thresholds, b.thresholds)
    np.testing.assert_allclose(a.rates, b.rates, rtol=0, atol=1e-14)


def test_formulations_without_data_or_atoms_name_what_to_pass():
    # scores/groups/labels may be None only when precomputed atoms are given
    with pytest.raises(DataValidationError, match="pass scores, groups and labels"):
        ThresholdMixtureOdds(None, None, None)
    with pytest.raises(DataValidationError, match="pass scores, groups and labels"):
        ThresholdMixtureOdds(np.array([0.1, 0.2]), np.array([0, 1]), None)
    with pytest.raises(DataValidationError, match="pass scores and sensitive"):
        RandomizedThresholdCovariance(None, None)
    with pytest.raises(DataValidationError, match="pass scores and sensitive"):
        RandomizedThresholdCovariance(np.array([0.1, 0.2]), None)
