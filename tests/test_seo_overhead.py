"""SEORegressor builds its design in one copy and checks numeric features once, at the edge."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.errors import DataValidationError
from fairopt.inprocessing import SEORegressor
from fairopt.inprocessing import seo as seo_module


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n), a + rng.normal(scale=0.5, size=n), rng.normal(size=n)])
    y = np.clip(0.5 + 0.1 * X[:, 0] + 0.2 * a, 0, 1)
    return X, y, a


def test_numeric_features_are_not_checked_twice(monkeypatch):
    X, y, a = _data()

    def fail(*args, **kwargs):
        raise AssertionError("as_float called on a checked numeric array")
    monkeypatch.setattr(seo_module, "as_float", fail)
    est = SEORegressor().fit(X, y, sensitive_features=a)
    monkeypatch.undo()                       # predict validates its own input
    # the closed form on the design with its intercept column
    Xt = np.hstack([X, np.ones((X.shape[0], 1))])
    A = (a == 1).astype(float)[:, None]
    M = np.linalg.pinv(Xt.T @ Xt)
    beta = M @ (Xt.T @ y)
    K = Xt.T @ (A - A.mean(axis=0))
    ref = beta - M @ K @ np.linalg.solve(K.T @ M @ K, K.T @ beta)
    np.testing.assert_allclose(est.coef_, ref, rtol=0, atol=1e-10)
    pred = est.predict(X)
    assert abs(pred[a == 0].mean() - pred[a == 1].mean()) < 1e-9


def test_integer_and_boolean_features_match_float_ones():
    X, y, a = _data()
    Xi = np.round(X * 10).astype(np.int64)
    ref = SEORegressor().fit(Xi.astype(float), y, sensitive_features=a).coef_
    np.testing.assert_array_equal(SEORegressor().fit(Xi, y, sensitive_features=a).coef_, ref)
    Xb = X > 0
    ref = SEORegressor().fit(Xb.astype(float), y, sensitive_features=a).coef_
    np.testing.assert_array_equal(SEORegressor().fit(Xb, y, sensitive_features=a).coef_, ref)


def test_non_numeric_features_still_get_a_typed_error():
    X, y, a = _data()
    Xo = X.astype(object)
    Xo[3, 1] = "high"
    with pytest.raises(DataValidationError, match="numeric"):
        SEORegressor().fit(Xo, y, sensitive_features=a)
