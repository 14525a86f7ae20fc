"""Fair robust log-loss (Rezaei et al. 2020): exact λ*, ℚ, gradient, convexity, back ends, estimator."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import load_benchmark, requires_data
from scipy.special import expit

from fairopt.errors import ConfigError, DataValidationError, SolverNotAvailableError
from fairopt.formulations.constrained_classification.logloss import FairLogLoss
from fairopt.formulations.constrained_classification.logloss_fairness import (
    CONSTRAINTS,
    approximator,
    exact_lambda,
    fairness_rows,
    no_truncation_interval,
    truncate,
)
from fairopt.formulations.constrained_classification.logloss_predict import FairLogLossRule
from fairopt.inprocessing import FairLogLossClassifier


def _synthetic(rng, n=600, d=4, shift=1.5):
    a = (rng.random(n) < 0.4).astype(int)
    X = np.c_[rng.normal(size=(n, d)), a]
    w = np.r_[rng.normal(size=d), shift]
    y = (rng.random(n) < expit(X @ w - 0.3)).astype(int)
    return X, y, a


def _terms(rows, s, lam=None, method="sort"):
    pe, pb = expit(s), expit(-s)
    if lam is None:
        lam, _ = exact_lambda(pe, pb, rows, method=method)
    c = rows.c(lam)
    P, Pb, cap, fl = truncate(pe, pb, c)
    return lam, c, P, Pb, cap, fl, pe


# ----------------------------------------------------------------------------- exact λ*(θ)
@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_exact_lambda_equalises_group_means_for_random_theta(rng, constraint):
    for _ in range(60):
        n = int(rng.integers(20, 500))
        a = (rng.random(n) < rng.uniform(0.15, 0.85)).astype(int)
        y = (rng.random(n) < 0.5).astype(int)
        try:
            rows = fairness_rows(a, y, constraint)
        except DataValidationError:
            continue
        s = rng.normal(scale=rng.uniform(0.2, 6), size=n) + rng.normal(scale=2) * a
        lam, _c, P, _Pb, _cap, _fl, _pe = _terms(rows, s)
        assert np.max(np.abs(rows.gaps(P))) <= 1e-9
        lam_b, *_ = _terms(rows, s, method="bisect")
        np.testing.assert_allclose(lam_b, lam, rtol=1e-10, atol=0)
        for r in range(rows.n_rows):      # min(p1, p0) <= |λ*| <= p1 + p0 whenever d != 0
            p1, p0 = rows.shares(r)
            if lam[r] != 0:
                assert min(p1, p0) - 1e-12 <= abs(lam[r]) <= p1 + p0 + 1e-12
        # already-equal untruncated means give λ* = 0 exactly
        lam0, *_ = _terms(rows, np.zeros(n))
        assert np.all(lam0 == 0)
        # swapping the group labels negates λ* and leaves P unchanged
        lam_s, _, P_s, *_ = _terms(fairness_rows(1 - a, y, constraint), s)
        np.testing.assert_allclose(lam_s, -lam, rtol=1e-10)
        np.testing.assert_allclose(P_s, P, atol=1e-14)


def test_approximator_is_a_distribution_and_binary_exactly_at_truncated_rows(rng):
    X, y, a = _synthetic(rng, n=800, shift=3.0)
    for constraint in CONSTRAINTS:
        rows = fairness_rows(a, y, constraint)
        for scale in (0.5, 2.0, 6.0):
            lam, c, P, Pb, cap, fl, pe = _terms(rows, scale * (X @ rng.normal(size=X.shape[1])))
            q1, q0 = approximator(P, Pb, c, cap, fl)
            assert np.all(q1 >= 0) and np.all(q1 <= 1) and np.allclose(q1 + q0, 1, atol=1e-15)
            trunc = cap | fl
            assert np.all(q1[cap] == 1.0) and np.all(q1[fl] == 0.0)
            inner = ~trunc & (pe > 1e-8) & (pe < 1 - 1e-8)      # away from float saturation
            assert np.all((q1[inner] > 0) & (q1[inner] < 1))
            free = rows.c(lam) == 0                 # unconstrained rows (EOpp: y = 0)
            assert np.all(q1[free] == P[free]) and np.all(P[free] == pe[free])


# ----------------------------------------------------------------------------- objective
def test_gradient_matches_central_differences_and_eq71_does_not(rng):
    X, y, a = _synthetic(rng, n=400)
    checked = 0
    for constraint in CONSTRAINTS:
        m = FairLogLoss(X, y, a, constraint, C=0.05)
        prob = m.to_problem()
        for _ in range(6):
            theta = rng.normal(scale=0.8, size=m.dim)
            t, _ = m.terms(theta)
            if np.max(np.abs(m.rows.gaps(t.pe))) <= 1e-6:    # on the kink J is not differentiable
                continue
            g = prob.value_grad(theta)[1]
            h = 1e-6
            fd = np.array([(prob.value(theta + h * e) - prob.value(theta - h * e)) / (2 * h)
                           for e in np.eye(m.dim)])
            assert np.linalg.norm(fd - g) <= 1e-6 * np.linalg.norm(g)
            # Eqs. 67-71 keep P_e at untruncated constrained rows: off by c P_e (1 - P_e) x
            q71 = np.where(t.capped, 1.0, np.where(t.floored, 0.0, t.pe))
            g71 = m.X.T @ (q71 - m.y) / m.n + m.C * m.penalized * theta
            assert np.linalg.norm(fd - g71) > 1e-3 * np.linalg.norm(g)
            checked += 1
    assert checked >= 12


def test_midpoint_convexity_on_random_pairs(rng):
    X, y, a = _synthetic(rng, n=300)
    straddle = 0
    for constraint in CONSTRAINTS:
        m = FairLogLoss(X, y, a, constraint, C=0.01)
        for _ in range(340):
            ta, tb = rng.normal(scale=1.5, size=(2, m.dim))
            da = m.rows.gaps(expit(m.X @ ta))[0]
            db = m.rows.gaps(expit(m.X @ tb))[0]
            straddle += da * db < 0
            assert m.objective(0.5 * (ta + tb)) <= 0.5 * (m.objective(ta) + m.objective(tb)) + 1e-12
    assert straddle >= 100


def test_no_constraint_and_already_fair_data_equal_sklearn_logistic_regression(rng):
    from sklearn.linear_model import LogisticRegression
    X, y, _a = _synthetic(rng, n=1500)
    n, C = len(y), 0.02
    sk = LogisticRegression(C=1 / (n * C), tol=1e-12, max_iter=10_000).fit(X, y)
    est = FairLogLossClassifier(constraint=None, C=C).fit(X, y)
    np.testing.assert_allclose(est.coef_, sk.coef_, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, sk.intercept_, atol=1e-5)
    sk0 = LogisticRegression(C=1 / (n * C), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    est0 = FairLogLossClassifier(constraint=None, C=C, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(est0.coef_, sk0.coef_, atol=1e-5)
    # already fair: every record appears once in each group, so LR's group means coincide
    Xf = np.vstack([np.c_[X[:, :-1], np.zeros(n)], np.c_[X[:, :-1], np.ones(n)]])
    yf, af = np.r_[y, y], np.r_[np.zeros(n, int), np.ones(n, int)]
    skf = LogisticRegression(C=1 / (2 * n * C), tol=1e-12, max_iter=10_000).fit(Xf, yf)
    for constraint in CONSTRAINTS:
        fair = FairLogLossClassifier(constraint=constraint, C=C).fit(Xf, yf, af)
        assert fair.status_ == "optimal" and fair.solution_.n_truncated == 0
        np.testing.assert_allclose(fair.coef_, skf.coef_, atol=1e-5)
        np.testing.assert_allclose(fair.solution_.P, skf.predict_proba(Xf)[:, 1], atol=1e-6)
        if constraint != "equalized_odds":   # EOdd's two gradients ∇d are parallel here: λ not unique
            np.testing.assert_allclose(fair.lambda_, 0.0, atol=1e-6)
            np.testing.assert_allclose(fair.predict_proba(Xf, af), skf.predict_proba(Xf), atol=1e-6)


# ----------------------------------------------------------------------------- fitted models
def _task_sample(name, n=1500, seed=0):
    from fairopt.runs.fair_logloss import load_task
    task = load_task(name)
    rows = np.sort(np.random.default_rng(seed).choice(len(task.y), n, replace=False))
    Xtr, _ = task.split(rows, rows[:1])
    return Xtr, task.y[rows], task.group[rows]


@requires_data
@pytest.mark.parametrize("name", ["adult", "compas", "law"])
def test_native_and_cvxpy_agree_on_paper_data(name):
    X, y, a = _task_sample(name)
    kinds = set()
    for constraint in ("demographic_parity", "equalized_odds"):
        m = FairLogLoss(X, y, a, constraint, C=0.01)
        nat = m.solve("native", tol=1e-9)
        cvx = m.solve("cvxpy")
        assert nat.is_optimal and cvx.status.value in ("optimal", "numerical")
        np.testing.assert_allclose(cvx.primal["theta"], nat.primal["theta"], atol=1e-4)
        assert abs(cvx.objective - nat.objective) <= 1e-7
        assert abs(m.objective(cvx.primal["theta"]) - m.objective(nat.primal["theta"])) <= 1e-7
        np.testing.assert_allclose(cvx.lam, nat.lam, atol=1e-5)              # λ from the multipliers
        np.testing.assert_allclose(-m.n * cvx.dual["epigraph_1"], nat.q, atol=1e-4)   # ℚ from duals
        np.testing.assert_allclose(cvx.primal["p"], nat.P, atol=1e-4)
        # exact fairness of the unthresholded training predictor
        assert np.max(np.abs(nat.gaps)) <= 1e-9
        kinds.add("kink" if nat.on_kink else "truncated" if nat.n_truncated else "interior")
    assert kinds & {"kink", "truncated"}


@requires_data
def test_kink_and_truncated_optima_both_occur_and_are_fair():
    X, y, a = _task_sample("compas", n=3000, seed=1)
    seen = {}
    for constraint in CONSTRAINTS:
        for C in (0.001, 0.1):
            sol = FairLogLoss(X, y, a, constraint, C=C).solve("native")
            assert sol.is_optimal and np.max(np.abs(sol.gaps)) <= 1e-9
            seen["kink" if sol.on_kink else "truncated"] = sol
    assert {"kink", "truncated"} <= set(seen)
    assert seen["truncated"].n_truncated > 10


def test_limits_are_reported_not_optimal(rng):
    from fairopt.modeling import SolverSpec, Status
    X, y, a = _synthetic(rng, n=500)
    m = FairLogLoss(X, y, a, "equalized_odds", C=0.01)
    sol = m.solve(SolverSpec("native", time_limit=1e-9))
    assert sol.status is Status.TIME_LIMIT and not sol.is_optimal
    sol = m.solve("native", max_iter=1, tol=1e-14)
    assert sol.status is Status.ITERATION_LIMIT and sol.iterations <= 1
    with pytest.warns(RuntimeWarning, match="raise max_iter"):
        FairLogLossClassifier(constraint="equalized_odds", max_iter=1, tol=1e-14).fit(X, y, a)


def test_more_than_two_groups_use_the_joint_form(rng):
    n = 900
    g = rng.integers(0, 3, size=n)
    X = np.c_[rng.normal(size=(n, 3)), np.eye(3)[g][:, 1:]]
    y = (rng.random(n) < expit(X @ [1.0, -0.5, 0.3, 1.0, -1.0])).astype(int)
    est = FairLogLossClassifier(constraint="demographic_parity", C=0.01, solver="cvxpy").fit(X, y, g)
    P = est.solution_.P
    means = np.array([P[g == k].mean() for k in range(3)])
    assert np.max(np.abs(means - P.mean())) <= 1e-7 and est.lambda_.shape == (2,)
    # test time on the training rows reproduces the training predictor
    np.testing.assert_allclose(est.predict_proba(X, g)[:, 1], P, atol=1e-6)
    with pytest.raises(ConfigError, match="cvxpy"):
        FairLogLossClassifier(C=0.01).fit(X, y, g)
    with pytest.raises(ConfigError, match="binary protected attribute"):
        FairLogLossClassifier(constraint="equalized_odds", solver="cvxpy").fit(X, y, g)


def test_pyomo_model_builds_and_needs_ipopt(rng):
    import pyomo.environ as pyo
    X, y, a = _synthetic(rng, n=60)
    m = FairLogLoss(X, y, a, "equalized_odds", C=0.1)
    model = m.build("pyomo")
    assert len(model.theta) == m.dim and len(model.p) == len(model.t) == m.n
    assert len(model.epigraph_1) == len(model.epigraph_0) == m.n and len(model.fairness) == 2
    sol = m.solve("native")
    for j in range(m.dim):
        model.theta[j].value = float(sol.primal["theta"][j])
    for i in range(m.n):
        model.p[i].value = float(sol.P[i])
        model.t[i].value = float(max(pyo.value(model.score[i]) - np.log(sol.P[i]), -np.log1p(-sol.P[i])))
    assert abs(pyo.value(model.loss) - sol.objective) <= 1e-10
    assert max(abs(pyo.value(model.fairness[r].body)) for r in range(2)) <= 1e-12
    if pyo.SolverFactory("ipopt").available(exception_flag=False):
        assert m.solve("pyomo").status.value == "optimal"
    else:
        with pytest.raises(SolverNotAvailableError, match="Ipopt"):
            m.solve("pyomo")


# ----------------------------------------------------------------------------- estimator
def test_sklearn_estimator_checks_pass_without_constraint():
    from sklearn.utils.estimator_checks import check_estimator
    results = check_estimator(FairLogLossClassifier(constraint=None), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert not failed and len(results) > 40


def test_fair_predictions(rng):
    # construction and parameter conventions: tests/test_estimator_conventions.py
    from sklearn.base import clone
    est = FairLogLossClassifier()
    X, y, a = _synthetic(rng, n=1200, shift=2.0)
    labels, groups = np.where(y == 1, "yes", "no"), np.where(a == 1, "m", "f")
    for constraint in CONSTRAINTS:
        e = clone(est).set_params(constraint=constraint).fit(X, labels, groups)
        assert e.status_ == "optimal" and list(e.classes_) == ["no", "yes"]
        proba = e.predict_proba(X, groups)
        assert proba.shape == (len(y), 2) and np.allclose(proba.sum(axis=1), 1.0)
        assert set(e.predict(X, groups)) <= {"no", "yes"}
        np.testing.assert_array_equal(e.decision_function(X, groups) > 0, proba[:, 1] > 0.5)
        if constraint == "demographic_parity":   # test-time rule = training predictor on training rows
            np.testing.assert_allclose(proba[:, 1], e.solution_.P, atol=1e-12)
            P = proba[:, 1]
            assert abs(P[a == 1].mean() - P[a == 0].mean()) <= 1e-9
    with pytest.raises(DataValidationError, match="sensitive_features"):
        FairLogLossClassifier().fit(X, y)
    # the protected attribute named as a column of a DataFrame (it stays a feature)
    import pandas as pd
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3", "a"])
    by_name = FairLogLossClassifier().fit(frame, y, "a")
    by_array = FairLogLossClassifier().fit(X, y, a)
    np.testing.assert_allclose(by_name.predict_proba(frame), by_array.predict_proba(X, a), atol=1e-12)
    with pytest.raises(DataValidationError, match="not seen at fit"):
        e.predict(X, np.where(a == 1, "m", "x"))


def test_label_conditioned_rule_guards_a_zero_denominator():
    # group 1: capped under y=1 (ℚ(ŷ=0|y=1) = 0) and floored under y=0 (ℚ(ŷ=1|y=0) = 0)
    table = np.zeros((2, 2, 2))
    table[0, 1, 1], table[0, 0, 1] = 10.0, -10.0
    table[1, 1, 0], table[1, 0, 0] = 10.0, -10.0
    rule = FairLogLossRule(np.array([0.0, 0.0]), np.array([0.5, -0.5]), table, True, True)
    X = np.array([[0.0], [3.0]])
    P, Pb, r, guarded = rule.proba(X, np.array([1, 0]))
    assert guarded.tolist() == [True, False]
    assert r[0] == 0.5 and np.isfinite(r).all() and 0 < r[1] < 1
    np.testing.assert_allclose(P + Pb, 1.0)


@requires_data
def test_card_runs_with_a_bare_set_key(tmp_path, capsys):
    from fairopt.cli import main
    out = tmp_path / "run"
    code = main(["run", "models/fair-logloss-compas.toml", "--set", "constraint=equalized_odds",
                 "--set", "data.subsample=2000", "--out", str(out)])   # not --quiet: the tables are checked
    assert code == 0
    res = json.loads((out / "result.json").read_text())
    assert res["parameters"]["constraint"] == "equalized_odds" and res["status"] == "optimal"
    for key in ("test_error", "test_dp_violation", "test_eodd_violation", "train_max_gap"):
        assert key in res["metrics"]
    assert res["metrics"]["train_max_gap"] <= 1e-9
    assert "eodd_violation" in capsys.readouterr().out


@requires_data
def test_benchmark_smoke(tmp_path):
    bench = load_benchmark("fair_logloss")
    results = bench.main(["--splits", "1", "--subsample", "400", "--datasets", "compas", "--grid", "0.01",
                          "0.1", "--eg-eps", "0.01", "--eg-max-iter", "10", "--out", str(tmp_path), "--quiet"])
    res = json.loads((tmp_path / "fair_logloss.json").read_text())["results"]["compas"]
    assert (tmp_path / "fair_logloss.png").stat().st_size > 10_000
    for method in ("fair_logloss_dp", "fair_logloss_eodd", "lr", "reweighing_lr", "eg_dp_0.01",
                   "eg_eodd_0.01", "threshold_optimizer_eodd"):
        assert 0 <= res["summary"][method]["error"]["mean"] <= 1
    assert res["splits"][0]["fair_logloss_dp"]["n_not_optimal"] == 0
    cc = res["crosscheck"]["dp"]
    assert cc["theta_max_abs_diff"] <= 1e-4 and abs(cc["objective_diff"]) <= 1e-7
    assert isinstance(results["compas"]["pareto_dp"]["on_pareto_set"], bool)


# ----------------------------------------------------------------------------- every back end fair
def _groups_data(K, seed=0, n=900):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, K, size=n)
    X = np.c_[rng.normal(size=(n, 3)), np.eye(K)[g][:, 1:]]
    y = (rng.random(n) < expit(X @ np.r_[1.0, -0.5, 0.3, [1.0, -1.0][:K - 1]])).astype(int)
    return X, y, g


LOOSE_CLARABEL = {"tol_gap_abs": 1e-6, "tol_gap_rel": 1e-6, "tol_feas": 1e-6}


@pytest.mark.parametrize("K, constraint, solver, options", [
    (2, "demographic_parity", "cvxpy:CLARABEL", LOOSE_CLARABEL),
    (3, "demographic_parity", "cvxpy:CLARABEL", LOOSE_CLARABEL),
    (2, "equalized_odds", "cvxpy:SCS", None),
])
def test_any_back_end_returns_a_predictor_fair_to_1e_9(K, constraint, solver, options):
    # the solvers stop at their own tolerances (gaps of 2e-8 to 4e-7 before the post-solve step)
    X, y, g = _groups_data(K)
    m = FairLogLoss(X, y, g, constraint, C=0.01)
    sol = m.solve(solver, options=options, tol=1e-6)
    P = sol.P
    for r in range(m.rows.n_rows):                       # the definition, not the solver's rows
        assert abs(m.rows.coef[r] @ P / m.n) <= 1e-9
    means = np.array([P[g == k].mean() for k in range(K)])
    if constraint == "demographic_parity":
        assert np.max(np.abs(means - P.mean())) <= 1e-9
    assert sol.is_optimal and np.max(np.abs(sol.gaps)) <= 1e-9 and sol.kkt <= 1e-6
    gnorm, gapnorm, _ = m.saddle_residual(sol.primal["theta"], sol.lam)   # a saddle point of V
    assert gnorm <= 1e-6 and gapnorm <= 1e-9
    if K == 2:   # the same optimum as the native solver
        nat = m.solve("native", tol=1e-9)
        np.testing.assert_allclose(sol.primal["theta"], nat.primal["theta"], atol=1e-5)
        assert abs(sol.objective - nat.objective) <= 1e-8


def test_post_solve_step_keeps_theta_off_the_kink_and_polishes_on_it():
    # truncated optimum: the exact λ*(θ) of the back end's θ is fair and stationary; θ is kept
    X, y, a = _synthetic(np.random.default_rng(0), n=600, shift=3.0)
    m = FairLogLoss(X, y, a, "demographic_parity", C=0.01)
    nat = m.solve("native", tol=1e-10)
    assert nat.n_truncated > 0 and not nat.on_kink
    theta = nat.primal["theta"]
    th, lam, moved = m.exact_fairness(theta, nat.lam * (1 + 1e-4), 1e-8)
    assert not moved and np.array_equal(th, theta)
    np.testing.assert_array_equal(lam, m.terms(theta)[0].lam)
    assert m.saddle_residual(th, lam)[1] <= 1e-9
    # kink optimum: λ*(θ) would jump to an end of the no-truncation interval and break
    # stationarity; the polish moves θ onto the kink and keeps λ near the solver's
    X, y, a = _synthetic(np.random.default_rng(0), n=600)
    m = FairLogLoss(X, y, a, "demographic_parity", C=0.01)
    nat = m.solve("native", tol=1e-10)
    assert nat.on_kink
    theta = nat.primal["theta"] + 1e-6                   # a solver's θ, 1e-6 off
    g0, gap0, _ = m.saddle_residual(theta, nat.lam)
    assert gap0 > 1e-8                                   # not fair as returned
    th, lam, moved = m.exact_fairness(theta, nat.lam, 1e-8)
    g, gap, _ = m.saddle_residual(th, lam)
    assert moved and gap <= 1e-9 and g <= max(1e-8, g0)
    assert np.max(np.abs(lam - nat.lam)) <= 1e-4 and np.max(np.abs(th - nat.primal["theta"])) <= 1e-5
    box = no_truncation_interval(expit(m.X @ th), expit(-(m.X @ th)), m.rows)
    assert abs(m.terms(th)[0].lam[0]) >= min(abs(box[0])) - 1e-12   # λ*(θ) sits at an end


def test_classifier_on_scs_is_fair_to_1e_9():
    from fairopt.inprocessing import FairLogLossClassifier
    X, y, g = _groups_data(2)
    est = FairLogLossClassifier(constraint="equalized_odds", C=0.01, solver="cvxpy:SCS").fit(X, y, g)
    P = est.solution_.P                        # the training predictor ℙ
    for label in (0, 1):
        rows = y == label
        assert abs(P[rows & (g == 1)].mean() - P[rows & (g == 0)].mean()) <= 1e-9
    assert est.status_ == "optimal"
