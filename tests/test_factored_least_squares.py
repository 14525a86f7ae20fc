"""The least-squares oracle's factored fit equals scikit-learn's LinearRegression, and the practical
EG stop is scale-aware (issue 14, items 1 and 2)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from fairopt.reductions.exponentiated_gradient import GAP_REL_TOL, PracticalEG
from fairopt.reductions.oracles import FactoredLeastSquares


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_factored_fit_matches_linear_regression_with_collinear_columns(fit_intercept, weighted):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    X = np.column_stack([X, X[:, 0] - 2 * X[:, 3], X[:, 1]])       # two exactly collinear columns
    w = rng.uniform(0.2, 3.0, 300) if weighted else None
    fac = FactoredLeastSquares(LinearRegression(fit_intercept=fit_intercept), X, w)
    for _ in range(3):   # one factorisation, several target vectors
        U = rng.random(300)
        ref = LinearRegression(fit_intercept=fit_intercept).fit(X, U, sample_weight=w)
        got = fac.fit(U)
        np.testing.assert_allclose(got.estimator.predict(X), ref.predict(X), atol=1e-12)
        assert got.estimator.rank_ == ref.rank_ == 6
        np.testing.assert_allclose(got.predict(X), np.clip(ref.predict(X), 0, 1), atol=1e-12)


def test_factored_fit_applies_only_to_plain_linear_regression():
    from sklearn.linear_model import Ridge
    assert FactoredLeastSquares.applies(LinearRegression())
    assert not FactoredLeastSquares.applies(LinearRegression(positive=True))
    assert not FactoredLeastSquares.applies(Ridge())


def test_gap_stop_is_scale_aware():
    player = PracticalEG(B=10.0, nu=1e-9, max_iter=10)
    player.B_lp = 10.0
    g = np.array([0.0052, 0.004])
    # the LP resolves the gap to GAP_REL_TOL of |cost| + B |gamma|: a smaller nu is unreachable
    assert player._gap_floor(0.005, g) == pytest.approx(GAP_REL_TOL * (0.005 + 10 * 0.0052))
    assert player._gap_floor(0.0, np.zeros(2)) == 1e-9     # nu itself when it is the larger
