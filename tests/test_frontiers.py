"""Exact and certified frontiers: the LP frontier equals cold fits, the game's dual bound is below the
best mixture of the hypotheses it returned."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.linear_model import LogisticRegression

from fairopt.data import load_builtin
from fairopt.errors import DataValidationError, InfeasibleError
from fairopt.formulations.tv_repair import OptimizedPreprocessing
from fairopt.frontiers import Frontier, frontier
from fairopt.inprocessing import FairClassifier
from fairopt.preprocessing import TVRepair


def _adult_frame() -> tuple:
    adult = load_builtin("adult")
    frame = adult.expand(shuffle=True, random_state=0)
    return adult, frame[["sex", "age_decade", "education_years"]], frame["income"]


@pytest.mark.parametrize("form", ["additive", "target"])
def test_tv_repair_frontier_equals_cold_fits(form: str) -> None:
    compas = load_builtin("compas")
    cells, counts = compas.codes()
    features = [c for c in compas.domain.names if c not in ("race", "two_year_recid")]

    def model(eps: float) -> OptimizedPreprocessing:
        return OptimizedPreprocessing(compas.domain, cells, counts, protected="race", label="two_year_recid",
                                      features=features, favourable_label=0, discrimination=form, epsilon=eps)

    problem = model(0.05).parametric_problem()
    from fairopt.frontiers import _exact
    exact = _exact(problem, None, None)
    rng = np.random.default_rng(1)
    eps = np.sort(rng.uniform(problem.eps_min, problem.eps_max, 200))
    curve = exact.details["curve"]
    cold = np.array([model(float(e)).solve().objective for e in eps])
    np.testing.assert_allclose(curve(eps), cold, atol=1e-7, rtol=0)
    # the shortfall falls to 0 where the identity mapping meets the rows, and is convex
    assert abs(exact.value[-1]) < 1e-9 and np.all(np.diff(curve.slopes) >= -1e-9)
    # breakpoints are kinks of the cold-solved curve
    h = 1e-6
    for k in curve.breakpoints[(curve.breakpoints > problem.eps_min + 1e-4)][:10]:
        left = (model(k).solve().objective - model(k - h).solve().objective) / h
        right = (model(k + h).solve().objective - model(k).solve().objective) / h
        assert right - left > 1e-5
    # below the smallest feasible eps the frontier says so, with the tightest eps
    if problem.eps_min > 1e-6:
        with pytest.raises(InfeasibleError) as info:
            _exact(problem, np.array([0.5 * problem.eps_min, problem.eps_max]), None)
        assert info.value.tightest["eps"] == pytest.approx(problem.eps_min)


def test_tv_repair_estimator_frontier_matches_fits() -> None:
    adult, X, y = _adult_frame()
    est = TVRepair(discrimination="additive", epsilon=0.05, distortion="adult", clist=[0.99, 1.99, 2.99],
                   dlist=[0.1, 0.05, 0.0], utility="xy", domain=adult.domain)
    grid = np.array([0.02, 0.05, 0.1])
    f = frontier(est, X, y, sensitive_features="sex", eps=grid)
    assert isinstance(f, Frontier) and f.method == "exact LP"
    fits = [est.set_params(epsilon=float(e)).fit(X, y, sensitive_features="sex").objective_ for e in grid]
    np.testing.assert_allclose(f.value, fits, atol=1e-7)


def _mixture_lp(est: FairClassifier) -> float:
    """Best cost of a mixture of the game's own hypotheses under the exact constraints."""
    res = est.result_
    c, G, b = res.pool_costs, res.pool_G, res.bound
    k = len(c)
    assert G.shape == (k, len(b))
    out = linprog(c, A_ub=G.T, b_ub=b, A_eq=np.ones((1, k)), b_eq=[1.0],
                  bounds=[(0, None)] * k, method="highs")
    assert out.status == 0
    return float(out.fun)


def test_game_frontier_lower_bound_below_mixture_optimum() -> None:
    rng = np.random.default_rng(0)
    n = 600
    group = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + 0.7 * group, rng.normal(size=n)])
    y = (X[:, 0] + rng.normal(scale=0.5, size=n) > 0.4).astype(int)
    est = FairClassifier(LogisticRegression(), eps=0.05)
    grid = np.array([0.0, 0.02, 0.05, 0.1])
    f = frontier(est, X, y, sensitive_features=group, eps=grid)
    assert f.method == "certified game" and f.breakpoints.size == 0
    for e, lower, value in zip(grid, f.lower_bound, f.value, strict=True):
        fitted = FairClassifier(LogisticRegression(), eps=float(e)).fit(X, y, sensitive_features=group)
        assert lower <= _mixture_lp(fitted) + 1e-9
        assert value - lower <= max(fitted.result_.nu, fitted.gap_) + 1e-9


def test_frontier_refuses_what_it_cannot_certify() -> None:
    with pytest.raises(DataValidationError, match="eps must be"):
        frontier(FairClassifier(LogisticRegression()), np.zeros((4, 1)), [0, 1, 0, 1],
                 sensitive_features=[0, 0, 1, 1], eps=[-0.1])
    with pytest.raises(DataValidationError, match="eps must be numbers"):
        frontier(FairClassifier(LogisticRegression()), np.zeros((4, 1)), [0, 1, 0, 1],
                 sensitive_features=[0, 0, 1, 1], eps="x")
    with pytest.raises(DataValidationError, match="scikit-learn style estimator"):
        frontier(object(), np.zeros((4, 1)), [0, 1, 0, 1], sensitive_features=[0, 0, 1, 1])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    group = rng.integers(0, 2, 200)
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(DataValidationError, match="no population guarantee"):
        frontier(FairClassifier(LogisticRegression()), X, y, sensitive_features=group, eps=[0.1], confidence=0.9)


def test_fair_regressor_frontier_is_certified() -> None:
    from sklearn.linear_model import LinearRegression

    from fairopt.inprocessing import FairRegressor
    rng = np.random.default_rng(4)
    n = 400
    group = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + group, rng.normal(size=n)])
    y = np.clip(0.3 * X[:, 0] + 0.1 * rng.normal(size=n) + 0.4, 0, 1)
    f = frontier(FairRegressor(LinearRegression(), eps=0.1), X, y, sensitive_features=group, eps=[0.05, 0.2])
    assert f.method == "certified game"
    assert np.all(f.lower_bound <= f.value + 1e-12)
    assert np.all(f.value - f.lower_bound >= -1e-12)


def _scores_data(seed: int, n: int = 3000, groups: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, groups, n)
    f = np.clip(rng.normal(0.3 * g - 0.3, 0.5, n), -1, 1)
    y = (rng.uniform(size=n) < (f + 1.1) / 2.2).astype(int)
    return f, g, y


@pytest.mark.parametrize("constraint", ["demographic_parity", "equal_opportunity", "equalized_odds"])
def test_threshold_frontier_equals_cold_fits(constraint: str) -> None:
    from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
    from fairopt.postprocessing import ThresholdDebiaser
    f, g, y = _scores_data(0)
    front = frontier(ThresholdDebiaser(constraint=constraint), f, y, sensitive_features=g)
    assert front.method == "exact LP" and front.objective == "expected error"
    curve = front.details["curve"]
    eps = np.sort(np.random.default_rng(1).uniform(0, front.eps[-1], 200))

    def cold(e: float) -> float:
        return 1.0 - ThresholdMixtureOdds(f, g, y, constraint, float(e)).solve().accuracy

    exact = np.array([cold(e) for e in eps])
    np.testing.assert_allclose(curve(eps) + 1.0 - np.mean(y == 0), exact, atol=1e-7)
    if constraint != "demographic_parity":   # the debiaser itself solves this LP for the label criteria
        fits = [1 - ThresholdDebiaser(constraint=constraint, eps=float(e)).fit(f, y, sensitive_features=g)
                .solution_.accuracy for e in eps[::40]]
        np.testing.assert_allclose(np.interp(eps[::40], front.eps, front.value), fits, atol=1e-7)
    # the error falls as eps grows, convexly, with kinks exactly at the breakpoints
    assert np.all(np.diff(front.value) <= 1e-12) and np.all(np.diff(curve.slopes) >= -1e-9)
    h = 1e-6
    inside = curve.breakpoints[(curve.breakpoints > 1e-4) & (curve.breakpoints < front.eps[-1] - 1e-4)]
    for k in inside[:: max(1, inside.size // 8)]:
        left = (cold(k) - cold(k - h)) / h
        right = (cold(k + h) - cold(k)) / h
        assert right - left > 1e-6


def test_game_frontier_on_adult_is_certified_at_20_tolerances() -> None:
    """FairClassifier on (built-in) Adult at 20 tolerances: each point's dual lower bound is below
    the best mixture of the hypotheses the game returned (an independent LP, exact constraints),
    and the achieved objective is within the game's own gap of it."""
    adult = load_builtin("adult")
    frame = adult.expand(shuffle=True, random_state=0).iloc[:8000]
    X = np.column_stack([frame["age_decade"].to_numpy(float), frame["education_years"].to_numpy(float)])
    y = frame["income"].to_numpy().astype(int)
    sex = frame["sex"].to_numpy()
    grid = np.linspace(0.0, 0.19, 20)
    f = frontier(FairClassifier(LogisticRegression(), eps=0.1), X, y, sensitive_features=sex, eps=grid)
    for e, lower, value in zip(grid, f.lower_bound, f.value, strict=True):
        fitted = FairClassifier(LogisticRegression(), eps=float(e)).fit(X, y, sensitive_features=sex)
        assert lower <= _mixture_lp(fitted) + 1e-9
        assert value - lower <= max(fitted.result_.nu, fitted.gap_) + 1e-9
    assert np.all(np.diff(f.lower_bound) <= 1e-6)    # looser tolerances never cost more


def test_game_frontier_points_run_on_a_sweep_executor() -> None:
    """Independent points go through fairopt.parallel's executors; a process pool gives the serial
    answer."""
    rng = np.random.default_rng(5)
    n = 300
    group = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n) + 0.6 * group, rng.normal(size=n)])
    y = (X[:, 0] + rng.normal(scale=0.5, size=n) > 0.3).astype(int)
    grid = [0.02, 0.08]
    serial = frontier(FairClassifier(LogisticRegression()), X, y, sensitive_features=group, eps=grid)
    pooled = frontier(FairClassifier(LogisticRegression()), X, y, sensitive_features=group, eps=grid,
                      executor="processes")
    np.testing.assert_allclose(pooled.value, serial.value, atol=1e-12)
    np.testing.assert_allclose(pooled.lower_bound, serial.lower_bound, atol=1e-12)


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_multiclass_frontier_equals_cold_fits(constraint: str) -> None:
    """MulticlassDebiaser's exact frontier: at 30 random eps the curve equals the randomized
    optimum of independent fits, it falls convexly, and its slope changes at the breakpoints."""
    from fairopt.postprocessing import MulticlassDebiaser
    rng = np.random.default_rng(3)
    n, K = 240, 3
    g = rng.integers(0, 3, n)
    S = rng.dirichlet(np.ones(K), n) * 0.7 + 0.3 * np.eye(K)[(g + rng.integers(0, 2, n)) % K]
    y = np.array([rng.choice(K, p=p) for p in S])
    cost = rng.uniform(0.5, 2.0, (K, K)) * (1 - np.eye(K))
    est = MulticlassDebiaser(constraint=constraint, cost=cost)
    front = frontier(est, S, y, sensitive_features=g)
    assert front.method == "exact LP" and front.objective == "expected cost"
    curve = front.details["curve"]
    assert front.eps[-1] > 0.05 and curve.breakpoints.size > 0      # the constraint binds on this data

    def cold(e: float) -> float:
        return MulticlassDebiaser(constraint=constraint, cost=cost, eps=float(e)).fit(
            S, y, sensitive_features=g).randomized_cost_

    eps = np.sort(rng.uniform(0, front.eps[-1], 30))
    np.testing.assert_allclose(curve(eps), [cold(e) for e in eps], atol=1e-7)
    np.testing.assert_allclose(front.value[-1], cold(1.0), atol=1e-9)      # flat past eps_max
    assert np.all(np.diff(front.value) <= 1e-12) and np.all(np.diff(curve.slopes) >= -1e-8)
    h = 1e-5
    inside = curve.breakpoints[(curve.breakpoints > 1e-3) & (curve.breakpoints < front.eps[-1] - 1e-3)]
    for k in inside[:: max(1, inside.size // 4)]:
        assert (cold(k + h) - cold(k)) / h - (cold(k) - cold(k - h)) / h > 1e-6


def test_regression_frontier_is_exact_fits() -> None:
    """RegressionDebiaser: one exact fit per point; values equal independent fits, fall with eps,
    and reach zero loss once eps covers the input's own CDF gap."""
    from fairopt.postprocessing import RegressionDebiaser
    rng = np.random.default_rng(5)
    g = rng.integers(0, 3, 120)
    pred = rng.normal(0.4 * g, 1.0)
    front = frontier(RegressionDebiaser(), pred, None, sensitive_features=g)
    assert front.method == "exact fits" and front.objective == "expected loss" and front.eps.size == 11
    fitted = RegressionDebiaser().fit(pred, sensitive_features=g)
    assert front.eps[-1] == pytest.approx(fitted.input_gap_)
    for e, v in zip(front.eps[::5], front.value[::5], strict=True):
        cold = RegressionDebiaser(eps=float(e)).fit(pred, sensitive_features=g)
        assert v == pytest.approx(cold.train_loss_, abs=1e-12)
    assert np.all(np.diff(front.value) <= 1e-9) and front.value[0] > 0.01 and abs(front.value[-1]) < 1e-9
    np.testing.assert_array_equal(front.lower_bound, front.value)


def test_debiasers_refuse_a_single_group() -> None:
    from fairopt.postprocessing import MulticlassDebiaser, RegressionDebiaser
    rng = np.random.default_rng(0)
    S = rng.dirichlet(np.ones(3), 50)
    with pytest.raises(DataValidationError, match="single group"):
        MulticlassDebiaser().fit(S, S.argmax(1), sensitive_features=np.zeros(50))
    with pytest.raises(DataValidationError, match="single group"):
        RegressionDebiaser().fit(rng.normal(size=50), sensitive_features=np.zeros(50))
