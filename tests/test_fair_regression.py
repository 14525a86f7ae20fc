"""Fair regression: hinge LPs across back ends, estimators, baselines, executors, model-card runner."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import requires_data
from sklearn.linear_model import LinearRegression, LogisticRegression

from fairopt.errors import ConfigError, DataValidationError, InfeasibleError, NotFittedError, SolverError
from fairopt.formulations.cost_sensitive import WeightedHingeLP, hinge_objective
from fairopt.inprocessing import FairClassifier, FairRegressor, SEORegressor
from fairopt.metrics import demographic_parity_difference, ks_statistical_parity
from fairopt.parallel import get_executor
from fairopt.reductions import StatisticalParity
from fairopt.reductions.evaluation import dkw_halfwidth, lower_convex_envelope, mixture_sp_disparity, mixture_sp_gamma
from fairopt.reductions.losses import AbsoluteLoss

#: exact LP back ends (first-order solvers such as OSQP/SCS only reach ~1e-4..1e-7)
EXACT_LP = ["highs", "scipy", "cvxpy", "cvxpy:CLARABEL", "cvxpy:HIGHS", "pyomo:appsi_highs"]


def _regression_data(rng, n=400, d=3, shift=0.6):
    group = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d)) + shift * 2 * group[:, None]
    y = np.clip(0.4 + 0.12 * X @ np.linspace(1, 0.3, d) + 0.05 * rng.standard_normal(n), 0, 1)
    return X, y, np.where(group == 1, "b", "a")


def _hinge_instance(rng, n=60, N=10, d=3):
    X, y, a = _regression_data(rng, n=n, d=d)
    m = StatisticalParity(eps=0.05, grid_size=N).fit(y, a)
    C = m.cost_sensitive_table(rng.exponential(0.005, m.n_rows))[m.ycode, m.group].ravel()
    Xs = (X - X.min(0)) / (X.max(0) - X.min(0))
    F = np.repeat(np.hstack([Xs, np.ones((n, 1))]), N, axis=0)
    return F, np.tile(m.grid.grid, n), C, 1.0 / N


# ---- weighted hinge LP --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hinge_lp():
    F, z, C, alpha = _hinge_instance(np.random.default_rng(7))
    lp = WeightedHingeLP(F, z, np.abs(C), np.where(C <= 0, 1.0, -1.0), alpha)
    ref = lp.solve("highs", form="primal", warm_start=False)
    return lp, ref


@pytest.mark.parametrize("solver", EXACT_LP)
def test_primal_and_dual_hinge_lps_agree_on_every_backend(hinge_lp, solver):
    lp, ref = hinge_lp
    assert np.max(np.abs(ref.beta)) > 0.05          # a non-trivial optimum
    for form in ("primal", "dual"):
        sol = lp.solve(solver, form=form, warm_start=False)
        assert abs(sol.objective - ref.objective) <= 1e-6 * max(1.0, abs(ref.objective)), form
        assert np.max(np.abs(sol.beta - ref.beta)) <= 1e-6, form
        assert sol.certificate_gap <= 1e-6           # (P) at the recovered beta = (D)'s value
    assert lp.chosen_form == "dual" and lp.summary()["rows_dual"] == 2 * lp.shape[1]


def test_dual_row_duals_fill_the_box(hinge_lp):
    lp, _ref = hinge_lp
    sol = lp.build("dual").solve("highs")
    pi_p, pi_m = sol.dual["pos"], sol.dual["neg"]
    assert np.all(pi_p >= -1e-9) and np.all(pi_m >= -1e-9)
    assert np.allclose(pi_p + pi_m, 1.0, atol=1e-9)          # v free => pi+ + pi- = 1
    S = lp.features.T @ sol.primal["omega"]
    beta = pi_p - pi_m
    assert np.all(beta[S > 1e-7] > 1 - 1e-7) and np.all(beta[S < -1e-7] < -1 + 1e-7)


def test_warm_started_resolve_matches_cold_solve(rng):
    F, z, C, alpha = _hinge_instance(rng)
    lp = WeightedHingeLP(F, z, np.abs(C), np.where(C <= 0, 1.0, -1.0), alpha)
    lp.solve("highs")                                              # compiles and keeps the model
    C2 = C + rng.normal(0, 0.3, C.size)
    lp.set_costs(np.abs(C2), np.where(C2 <= 0, 1.0, -1.0))
    warm = lp.solve("highs", warm_start=True)
    cold = WeightedHingeLP(F, z, np.abs(C2), np.where(C2 <= 0, 1.0, -1.0), alpha).solve(
        "highs", form="primal", warm_start=False)
    assert abs(warm.objective - cold.objective) < 1e-7
    assert np.max(np.abs(warm.beta - cold.beta)) < 1e-6
    assert abs(hinge_objective(warm.beta, F, z, np.abs(C2), np.where(C2 <= 0, 1.0, -1.0), alpha)
               - cold.objective) < 1e-7


def test_hinge_lp_validates_inputs(rng):
    F, z, C, alpha = _hinge_instance(rng, n=10, N=4)
    with pytest.raises(DataValidationError):
        WeightedHingeLP(F, z, -np.abs(C), np.sign(C), alpha)
    with pytest.raises(ConfigError):
        WeightedHingeLP(F, z, np.abs(C), np.where(C <= 0, 1.0, -1.0), alpha, form="both")


# ---- FairRegressor ---------------------------------------------------------------------------------------
def test_fair_regressor_meets_sp_on_train_and_is_reproducible(rng):
    X, y, a = _regression_data(rng, n=600)
    base = LinearRegression().fit(X, y)
    sp0 = ks_statistical_parity(np.clip(base.predict(X), 0, 1), a)
    fr = FairRegressor(eps=0.05, grid_size=20, random_state=3).fit(X, y, sensitive_features=a)
    assert sp0 > 0.25
    assert fr.status_ == "converged" and fr.gap_ <= 1e-9
    assert abs(fr.weights_.sum() - 1) < 1e-12 and len(fr.predictors_) == fr.weights_.size
    assert fr.lambda_.shape == (2 * 2 * 20,) and np.all(fr.lambda_ >= 0)
    assert len(fr.constraint_names_) == fr.lambda_.size and fr.n_oracle_calls_ >= 2
    assert fr.disparity(X, a) <= 0.05 + 1e-9                       # exact mixture SP on train
    comps = fr.predict_components(X)
    gam, _ = mixture_sp_gamma(comps, fr.weights_, a, thresholds=np.arange(1, 21) / 20)
    assert np.max(np.abs(gam)) <= 0.05 + 1e-9                     # grid = all thresholds (Eq. 7)
    p1, p2 = fr.predict(X), fr.predict(X)
    assert np.array_equal(p1, p2) and not np.array_equal(p1, fr.predict(X, random_state=99))
    assert np.all(np.isin(np.round(p1 * 20, 9), np.arange(21)))   # rounded down to the grid
    assert np.allclose(fr.predict_mean(X), fr.weights_ @ comps)
    loss_sampled = np.mean([np.mean((y - fr.predict(X, random_state=s)) ** 2 / 2) for s in range(30)])
    assert abs(loss_sampled - fr.expected_loss(X, y)) < 5e-4
    assert fr.expected_loss(X, y) >= np.mean((y - np.clip(base.predict(X), 0, 1)) ** 2 / 2) - 1e-3


def test_fair_regressor_large_eps_returns_unconstrained_fit(rng):
    from fairopt.reductions.oracles import sp_targets
    X, y, a = _regression_data(rng)
    fr = FairRegressor(eps=1.0, grid_size=40, refine_rounds=0).fit(X, y, sensitive_features=a)
    assert fr.n_iter_ == 1 and fr.weights_.tolist() == [1.0] and np.allclose(fr.lambda_, 0)
    m = StatisticalParity(eps=1.0, grid_size=40).fit(y, a)
    ref = LinearRegression().fit(X, sp_targets(m, np.zeros(m.n_rows)))   # LS fit at lambda = 0
    assert np.allclose(fr.predictors_[0].predict(X), np.clip(ref.predict(X), 0, 1))


def test_fair_regressor_hinge_lp_oracle(rng):
    X, y, a = _regression_data(rng, n=120)
    fr = FairRegressor(estimator="hinge_lp", eps=0.1, grid_size=10, max_iter=8).fit(
        X, y, sensitive_features=a)
    assert fr.disparity(X, a) <= 0.1 + 1e-7
    assert isinstance(fr.result_.history, list) and fr.n_oracle_calls_ >= 2


def test_fair_regressor_logistic_loss(rng):
    X, y, a = _regression_data(rng, n=500)
    yb = (y > np.median(y)).astype(float)
    fr = FairRegressor(loss="logistic", eps=0.05, grid_size=20, max_iter=20).fit(
        X, yb, sensitive_features=a)
    assert fr.disparity(X, a) <= 0.05 + 1e-9
    assert 0 < fr.expected_loss(X, yb) < 0.5


def test_bounded_group_loss_regression(rng):
    X, y, a = _regression_data(rng, n=800)
    X[a == "b"] += 0.0                                                # same features
    y = y + np.where(a == "b", 0.08 * np.sin(4 * X[:, 1]), 0.0)
    y = np.clip(y, 0, 1)
    base = np.clip(LinearRegression().fit(X, y).predict(X), 0, 1)
    group_loss = [np.mean((y[a == g] - base[a == g]) ** 2 / 2) for g in ("a", "b")]
    with pytest.raises(InfeasibleError) as info:   # below the smallest reachable worst-group loss
        FairRegressor(constraint="bounded_group_loss", eps=min(group_loss)).fit(X, y, sensitive_features=a)
    tightest = info.value.tightest["eps"]
    assert min(group_loss) < tightest < max(group_loss)
    zeta = 0.5 * (tightest + max(group_loss))      # reachable and binding
    fr = FairRegressor(constraint="bounded_group_loss", eps=zeta).fit(X, y, sensitive_features=a)
    assert fr.status_ == "converged" and fr.result_.lp_slack <= 1e-9
    assert fr.disparity(X, a, y=y) <= zeta + 1e-9
    assert fr.expected_loss(X, y) >= np.mean((y - base) ** 2 / 2) - 1e-12


def test_unreachable_bounded_group_loss_raises(rng):
    n = 400
    X = rng.standard_normal((n, 2))
    y = rng.uniform(0, 1, n)
    a = rng.integers(0, 2, n)
    est = FairRegressor(constraint="bounded_group_loss", eps=0.0, loss=AbsoluteLoss(), B=10.0, nu=0.05)
    with pytest.raises(InfeasibleError) as info:
        est.fit(X, y, sensitive_features=a)
    assert info.value.constraint.startswith("bounded_group_loss[")
    assert info.value.tightest["eps"] > 0.2
    assert not hasattr(est, "weights_")


def test_failed_refit_leaves_the_estimator_unfitted(rng):
    X, y, a = _regression_data(rng, n=400)
    fr = FairRegressor(constraint="bounded_group_loss", eps=0.5).fit(X, y, sensitive_features=a)
    assert fr.status_ == "converged" and fr.predict(X).shape == (400,)
    fr.set_params(eps=0.0, loss=AbsoluteLoss(), nu=0.05)
    with pytest.raises(InfeasibleError):
        fr.fit(X, rng.uniform(0, 1, 400), sensitive_features=a)
    for name in ("result_", "moment_", "lambda_", "predictors_", "weights_", "status_", "gap_"):
        assert not hasattr(fr, name), name
    with pytest.raises(NotFittedError):
        fr.predict(X)                       # never the previous fit's predictors
    fr.set_params(eps=0.5, loss="square", nu=None).fit(X, y, sensitive_features=a)
    assert fr.status_ == "converged"        # refit after the failure works


def test_tightest_group_loss_lp_checks_its_status():
    from fairopt.inprocessing import _min_max_group_loss
    from fairopt.modeling import SolverSpec
    costs = np.array([0.3, 0.2, 0.4])
    G = np.array([[0.3, 0.1], [0.1, 0.4], [0.25, 0.25]])
    assert abs(_min_max_group_loss(costs, G, "highs") - 0.22) < 1e-9     # q = (0.6, 0.4, 0)
    capped = SolverSpec(backend="highs", options={"presolve": "off", "simplex_iteration_limit": 0})
    with pytest.raises(SolverError, match="iteration_limit"):
        _min_max_group_loss(costs, G, capped)


def test_fair_regressor_validation(rng):
    X, y, a = _regression_data(rng, n=50)
    with pytest.raises(DataValidationError, match=r"\[0, 1\]"):
        FairRegressor().fit(X, y * 4, sensitive_features=a)
    with pytest.raises(DataValidationError, match="single group"):
        FairRegressor().fit(X, y, sensitive_features=np.zeros(50))
    with pytest.raises(DataValidationError):
        FairRegressor().fit(X, y, sensitive_features=None)
    with pytest.raises(ConfigError):
        FairRegressor(constraint="equal_loss").fit(X, y, sensitive_features=a)
    with pytest.raises(NotFittedError):
        FairRegressor().predict(X)


# ---- baselines ----------------------------------------------------------------------------------------------
def test_seo_zero_covariance_and_least_squares_optimal(rng):
    X, y, a = _regression_data(rng, n=500)
    seo = SEORegressor(clip=False).fit(X, y, sensitive_features=a)
    pred = seo.predict(X)
    ind = (a == "b").astype(float)
    assert abs(np.mean((pred - pred.mean()) * (ind - ind.mean()))) < 1e-12
    # optimal among linear predictors with zero covariance: residual orthogonal to that subspace
    Xt = np.hstack([X, np.ones((500, 1))])
    k = Xt.T @ (ind - ind.mean())
    basis = np.linalg.svd(k[None, :])[2][1:]          # directions with k @ beta = 0
    assert np.max(np.abs(basis @ (Xt.T @ (y - pred)))) < 1e-9


def test_fair_classifier_demographic_parity(rng):
    X, y, a = _regression_data(rng, n=800)
    yb = (y > np.median(y)).astype(int)
    fc = FairClassifier(eps=0.02, random_state=0).fit(X, yb, sensitive_features=a)
    comps = fc.predict_components(X)
    rates = {g: fc.weights_ @ comps[:, a == g].mean(axis=1) for g in ("a", "b")}
    overall = fc.weights_ @ comps.mean(axis=1)
    assert max(abs(r - overall) for r in rates.values()) <= 0.02 + 1e-9
    proba = fc.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1) and fc.decision_scores(X).shape == comps.shape
    unconstrained = LogisticRegression(max_iter=1000).fit(X, yb).predict(X)
    assert demographic_parity_difference(None, unconstrained, sensitive_features=a) > 0.3


# ---- evaluation helpers -------------------------------------------------------------------------------------
def test_mixture_sp_exact(rng):
    s1, s2 = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300) ** 2
    a = rng.integers(0, 3, 300)
    assert abs(mixture_sp_disparity(s1[None], [1.0], a) - ks_statistical_parity(s1, a)) < 1e-12
    w = np.array([0.3, 0.7])
    zs = np.unique(np.concatenate([s1, s2]))
    brute = max(abs(w[0] * ((s1[a == g] >= z).mean() - (s1 >= z).mean())
                    + w[1] * ((s2[a == g] >= z).mean() - (s2 >= z).mean()))
                for g in range(3) for z in zs[::7])
    assert mixture_sp_disparity(np.vstack([s1, s2]), w, a) >= brute - 1e-12
    width = dkw_halfwidth(a, delta=0.05)
    counts = np.bincount(a)
    expect = math.sqrt(math.log(8 / 0.05) / (2 * counts.min())) + math.sqrt(math.log(8 / 0.05) / 600)
    assert abs(width - expect) < 1e-12


def test_lower_convex_envelope():
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.6])
    y = np.array([1.0, 0.5, 0.45, 0.2, 0.1, 0.3])
    assert lower_convex_envelope(x, y).tolist() == [0, 1, 3, 4]


# ---- executors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["serial", "processes", "dask"])
def test_executors_preserve_order(kind):
    if kind == "dask":
        pytest.importorskip("dask.distributed", reason="executor='dask' needs the optional dask[distributed]")
    seen = []
    with get_executor(kind, n_workers=2) as ex:
        out = ex.map(math.sqrt, [16.0, 1.0, 9.0, 4.0], progress=lambda d, t, s: seen.append((d, t)))
    assert out == [4.0, 1.0, 3.0, 2.0] and seen[-1] == (4, 4)
    with pytest.raises(ConfigError):
        get_executor("threads")


# ---- model-card runner -------------------------------------------------------------------------------------
@requires_data
def test_runner_on_law_subsample():
    from fairopt.runs import fair_regression as runner
    params = runner.Parameters(eps=[0.1, 0.03], max_iter=6, min_iter=3)
    data = runner.Data(dataset="law", subsample=800)
    calls = []
    out = runner.run(None, params, data, None, lambda d, t, s: calls.append((d, t)))
    assert out.status in ("optimal", "iteration_limit")
    assert calls and calls[-1][0] == calls[-1][1] == 12
    sweep = out.extra["sweep"]
    assert [r["eps"] for r in sweep] == [0.1, 0.03]
    for r in sweep:
        assert r["train_sp"] <= r["eps"] + 1e-9
    assert out.metrics["unconstrained_train_sp"] > 0.1
    assert out.tables[0].rows[0][0] == "unconstrained" and len(out.tables[0].rows) == 4
    with pytest.raises(ValueError):
        runner.Parameters(unknown=1)


@requires_data
def test_runner_sweep_with_no_feasible_point_raises_infeasible():
    from fairopt.runs import fair_regression as runner
    params = runner.Parameters(constraint="bounded_group_loss", eps=[0.0001, 0.0002], max_iter=300)
    data = runner.Data(dataset="law", subsample=600)
    with pytest.raises(InfeasibleError) as info:
        runner.run(None, params, data, None, lambda d, t, s: None)
    err = info.value
    assert err.constraint.startswith("bounded_group_loss[")
    assert err.tightest["eps"] > 0.0002                   # smallest reachable worst-group loss
    assert "every eps value" in str(err) and f"{err.tightest['eps']:.6g}" in str(err)


@requires_data
def test_runner_partially_infeasible_sweep_is_not_reported_optimal():
    from fairopt.runs import fair_regression as runner
    params = runner.Parameters(constraint="bounded_group_loss", eps=[0.0001, 0.1], max_iter=300)
    out = runner.run(None, params, runner.Data(dataset="law", subsample=600), None,
                     lambda d, t, s: None)
    assert out.status == "infeasible"
    assert out.metrics["n_infeasible"] == 1.0 and out.metrics["n_eps"] == 2.0
    feasible = [r for r in out.extra["sweep"] if r["status"] != "infeasible"]
    assert [r["eps"] for r in feasible] == [0.1]
    assert feasible[0]["train_worst_group_loss"] <= 0.1 + 1e-9
    assert runner.sweep_status([{"status": "converged"}, {"status": "max_iter"}]) == "iteration_limit"
    assert runner.sweep_status([{"status": "converged"}]) == "optimal"


@requires_data
@pytest.mark.parametrize("spec", [{"time_limit": 1e-6},
                                  {"options": {"presolve": "off", "simplex_iteration_limit": 0}}])
def test_runner_passes_the_solver_spec_to_the_lps(spec):
    from fairopt.modeling import SolverSpec, Status
    from fairopt.runs import fair_regression as runner
    params = runner.Parameters(eps=[0.05], max_iter=3, oracle="hinge_lp", grid_size=10)
    data = runner.Data(dataset="law", subsample=200)
    with pytest.raises(SolverError) as info:   # the card's limit reaches the LP: never "optimal"
        runner.run(None, params, data, SolverSpec(backend="highs", **spec), lambda d, t, s: None)
    assert info.value.status in (Status.TIME_LIMIT, Status.ITERATION_LIMIT)
    out = runner.run(None, params, data, SolverSpec(backend="highs", time_limit=60.0),
                     lambda d, t, s: None)
    assert out.solver == "highs" and out.extra["sweep"][0]["train_sp"] <= 0.05 + 1e-9


def test_solver_failure_is_not_silent(rng):
    F, z, C, alpha = _hinge_instance(rng, n=20, N=5)
    lp = WeightedHingeLP(F, z, np.abs(C), np.where(C <= 0, 1.0, -1.0), alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sol = lp.solve("osqp", form="dual", warm_start=False)
        except SolverError:
            return                                     # iteration limit reported, not "optimal"
    assert sol.certificate_gap < 1e-3


@requires_data
def test_benchmark_smoke(tmp_path):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "fair_regression.py"
    spec = importlib.util.spec_from_file_location("bench_fair_regression", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = bench.main(["--quick", "--executor", "serial", "--out", str(tmp_path)])
    assert (tmp_path / "fair_regression.json").is_file() and (tmp_path / "fair_regression.png").is_file()
    assert "| CS | linear |" in (tmp_path / "fair_regression_table1.md").read_text()
    pts = res["datasets"]["law-2k"]["points"]
    assert all(p["train_sp"] <= p["eps"] + 1e-9 for p in pts)
    bgl = res["bgl_vs_fairlearn"][0]
    assert bgl["fairopt_violation"] <= bgl["fairlearn_violation"] + 1e-9
    assert bgl["fairopt_train_loss"] <= bgl["fairlearn_train_loss"] + 1e-9
