"""Metadata routing (issue 24 §4): ``sensitive_features`` and ``sample_weight`` reach fairopt's
estimators and fairness-aware scorers through Pipeline, GridSearchCV and cross_validate."""
from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairopt.inprocessing import FairClassifier, FairRegressor
from fairopt.metrics import demographic_parity_difference


@pytest.fixture(autouse=True)
def _routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["p", "q"], n)
    X = np.column_stack([rng.normal(size=n) + 1.2 * (a == "p"), rng.normal(size=n)])
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0.6).astype(int)
    return X, y, a


def _dp_gap(y_true, y_prob, *, sensitive_features):
    """Negative demographic-parity gap of the expected predictions: larger is fairer."""
    return -demographic_parity_difference(y_true, y_prob, sensitive_features=sensitive_features)


def test_grid_search_over_eps_routes_groups_and_picks_the_fairest():
    X, y, a = _data()
    seen = []

    def fair_score(y_true, y_prob, *, sensitive_features):
        seen.append(len(sensitive_features))
        return _dp_gap(y_true, y_prob, sensitive_features=sensitive_features)

    scorer = make_scorer(fair_score, response_method="predict_proba").set_score_request(sensitive_features=True)
    est = FairClassifier(max_iter=20, random_state=0).set_fit_request(sensitive_features=True)
    cv = KFold(3, shuffle=True, random_state=0)
    grid = GridSearchCV(est, {"eps": [0.3, 0.02, 0.1]}, scoring=scorer, cv=cv).fit(X, y, sensitive_features=a)
    # the scorer read the held-out groups of every split (a third of the rows each time)
    assert seen and set(seen) == {200}
    assert grid.best_params_ == {"eps": 0.02}
    # the routed search equals the explicit loop over folds
    for eps, mean in zip(grid.cv_results_["param_eps"], grid.cv_results_["mean_test_score"], strict=False):
        scores = []
        for tr, te in cv.split(X):
            m = FairClassifier(eps=eps, max_iter=20, random_state=0).fit(X[tr], y[tr], sensitive_features=a[tr])
            scores.append(_dp_gap(y[te], m.predict_proba(X[te])[:, 1], sensitive_features=a[te]))
        assert mean == pytest.approx(np.mean(scores), abs=1e-12)
    # unconstrained-ish eps is visibly less fair than the chosen one on held-out data
    res = dict(zip(grid.cv_results_["param_eps"], grid.cv_results_["mean_test_score"], strict=False))
    assert res[0.02] > res[0.3] + 0.05


def test_pipeline_and_cross_validate_route_groups_and_weights():
    X, y, a = _data(seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False),
                         FairClassifier(eps=0.02, max_iter=20, random_state=0)
                         .set_fit_request(sensitive_features=True, sample_weight=True)
                         .set_score_request(sample_weight=True))
    out = cross_validate(pipe, X, y, cv=KFold(3), params={"sensitive_features": a, "sample_weight": w},
                         return_estimator=True)
    assert out["test_score"].shape == (3,)
    # the groups and weights reached the final step: same fit as a direct call on the scaled data
    for est, (tr, _) in zip(out["estimator"], KFold(3).split(X), strict=False):
        Xs = StandardScaler().fit_transform(X[tr])
        ref = FairClassifier(eps=0.02, max_iter=20, random_state=0).fit(
            Xs, y[tr], sensitive_features=a[tr], sample_weight=w[tr])
        np.testing.assert_allclose(est[-1].weights_, ref.weights_, atol=1e-12)
        assert list(est[-1].groups_) == ["p", "q"]
    # without the request, the pipeline refuses instead of dropping the groups
    bare = make_pipeline(StandardScaler(), FairClassifier(max_iter=5))
    with pytest.raises(Exception, match="sensitive_features"):
        bare.fit(X, y, sensitive_features=a)


def test_regressor_routes_through_grid_search():
    X, _, a = _data(n=300, seed=3)
    y = 1.0 / (1.0 + np.exp(-X[:, 0]))
    est = FairRegressor(max_iter=10, random_state=0).set_fit_request(sensitive_features=True)
    grid = GridSearchCV(est, {"eps": [0.05, 0.2]}, cv=2).fit(X, y, sensitive_features=a)
    assert grid.best_estimator_.groups_ is not None
    assert np.isfinite(grid.cv_results_["mean_test_score"]).all()
