"""The cost-sensitive oracle's LogisticRegression fast path (fairopt.reductions.logistic)."""
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import check_grad
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from fairopt.inprocessing import FairClassifier
from fairopt.reductions.logistic import WarmLogistic
from fairopt.reductions.moments import DemographicParity
from fairopt.reductions.oracles import ClassifierHypothesis, CostSensitiveOracle


def _problem(seed=0, n=600, d=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d)
    y = (X @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(int)
    w = rng.uniform(0.1, 3, n)
    return X, y, w * (n / w.sum())


def _objective(est, X, y, w, C=1.0):
    z = X @ est.coef_.ravel() + est.intercept_[0]
    return float(w @ (np.logaddexp(0, z) - y * z) + 0.5 * est.coef_.ravel() @ est.coef_.ravel() / C)


@pytest.mark.parametrize("C, fit_intercept", [(1.0, True), (0.05, True), (10.0, False)])
def test_warm_logistic_solves_sklearns_problem(C, fit_intercept):
    X, y, w = _problem()
    base = LogisticRegression(C=C, fit_intercept=fit_intercept, tol=1e-10, max_iter=5000)
    ref = base.fit(X, y, sample_weight=w)
    fast = WarmLogistic(base, X).fit(y, w)
    assert type(fast) is LogisticRegression and fast.coef_.shape == ref.coef_.shape
    np.testing.assert_allclose(fast.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(fast.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_array_equal(fast.predict(X), ref.predict(X))
    np.testing.assert_allclose(fast.predict_proba(X), ref.predict_proba(X), atol=1e-6)


def test_warm_logistic_gradient_and_tolerance():
    X, y, w = _problem(1)
    wl = WarmLogistic(LogisticRegression(C=0.3), X)
    yf, S = y.astype(float), w.sum()
    theta = np.random.default_rng(0).standard_normal(X.shape[1] + 1)
    assert check_grad(lambda t: wl._loss_grad(t, yf, w, S)[0], lambda t: wl._loss_grad(t, yf, w, S)[1],
                      theta) < 1e-6
    # the default tolerance is the estimator's: the answer is first-order optimal to 1e-4
    est = wl.fit(y, w)
    g = wl._loss_grad(np.r_[est.coef_.ravel(), est.intercept_], yf, w, S)[1]
    assert np.abs(g).max() <= 1e-4
    # a second fit of a nearby problem starts from the first answer and needs fewer evaluations
    before = wl.n_evaluations
    w2 = w * np.where(y == 1, 1.02, 0.98)
    first_cost = before
    wl.fit(y, w2 * (w2.size / w2.sum()))
    assert wl.n_evaluations - before < first_cost
    # and it is no worse than scikit-learn's own lbfgs at the same tolerance
    sk = LogisticRegression(C=0.3).fit(X, y, sample_weight=w)
    assert _objective(est, X, y, w, 0.3) <= _objective(sk, X, y, w, 0.3) + 1e-6 * S


def test_warm_logistic_applies_only_to_plain_l2_lbfgs_on_arrays():
    X, _, _ = _problem()
    assert WarmLogistic.applies(LogisticRegression(), X)
    assert not WarmLogistic.applies(LogisticRegression(), pd.DataFrame(X))
    assert not WarmLogistic.applies(LogisticRegression(solver="liblinear"), X)
    assert not WarmLogistic.applies(LogisticRegression(class_weight="balanced"), X)
    assert not WarmLogistic.applies(LogisticRegression(solver="saga", l1_ratio=1.0), X)
    assert not WarmLogistic.applies(DecisionTreeClassifier(), X)


def test_cost_sensitive_oracle_fast_path_and_fallback_agree():
    X, y, _ = _problem(2, n=800)
    a = np.where(X[:, 0] + np.random.default_rng(0).standard_normal(800) > 0, "p", "q")
    lam = np.array([0.0, 0.4, 0.1, 0.0])
    out = {}
    for warm in (True, False):
        m = DemographicParity(eps=0.02).fit(y, a)
        oracle = CostSensitiveOracle(LogisticRegression(tol=1e-9, max_iter=5000), warm_start=warm,
                                     response_tol=None).prepare(m, X)
        assert (oracle._warm is not None) == warm
        h = oracle.best_response(lam)
        assert isinstance(h, ClassifierHypothesis)
        out[warm] = h.estimator
    np.testing.assert_allclose(out[True].coef_, out[False].coef_, atol=1e-5)
    # other classifiers take the generic refit
    tree = CostSensitiveOracle(DecisionTreeClassifier(max_depth=2, random_state=0)).prepare(
        DemographicParity(eps=0.02).fit(y, a), X)
    assert tree._warm is None and isinstance(tree.best_response(lam).estimator, DecisionTreeClassifier)


def test_fair_classifier_fast_path_matches_refits():
    X, y, _ = _problem(3, n=1500, d=6)
    a = np.where(X[:, 1] > 0.3, "b", "a")
    res = {}
    for warm in (True, False):
        est = LogisticRegression(max_iter=1000)
        est = est if warm else CostSensitiveOracle(est, warm_start=False)
        fc = FairClassifier(est, eps=0.02, random_state=0).fit(X, y, sensitive_features=a)
        p = fc.predict_proba(X)[:, 1]
        rates = [p[a == g].mean() for g in ("a", "b")]
        assert max(abs(r - p.mean()) for r in rates) <= 0.02 + 1e-7 and fc.status_ == "converged"
        res[warm] = np.mean(np.abs(p - y))
    assert abs(res[True] - res[False]) <= 0.002


def test_response_tolerance_floor_only_replaces_the_default_tol():
    X, y, _ = _problem(2, n=400)
    a = np.where(X[:, 0] > 0, "p", "q")
    m = DemographicParity(eps=0.02).fit(y, a)
    default = CostSensitiveOracle(LogisticRegression()).prepare(m, X)
    chosen = CostSensitiveOracle(LogisticRegression(tol=1e-7)).prepare(m, X)
    exact = CostSensitiveOracle(LogisticRegression(), response_tol=None).prepare(m, X)
    assert default._warm.tol == 1e-3
    assert chosen._warm.tol == 1e-7
    assert exact._warm.tol == 1e-4
