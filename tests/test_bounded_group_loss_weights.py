"""The bounded-group-loss best response fits a regularised estimator with the Lagrangian's
weights rescaled to sum to n, so its penalty keeps the strength the user chose."""
import numpy as np
from sklearn.linear_model import Ridge

from fairopt.reductions import BoundedGroupLoss
from fairopt.reductions.oracles import WeightedLossOracle


def test_ridge_response_is_the_weighted_ridge_of_the_definition():
    rng = np.random.default_rng(0)
    n = 120
    X = rng.normal(size=(n, 3))
    a = rng.integers(0, 2, n)
    y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a + 0.05 * rng.normal(size=n), 0, 1)
    moment = BoundedGroupLoss(bound=0.1).fit(y, a)
    oracle = WeightedLossOracle(Ridge(alpha=5.0, fit_intercept=False))
    oracle.moment, oracle.X = moment, X
    lam = np.array([0.0, 3.0])
    h = oracle.best_response(lam)
    counts = np.bincount(a)
    W = 1.0 / n + (lam / counts)[a]                 # the Lagrangian's weights
    D = n * W / W.sum()                             # rescaled to sum n
    beta = np.linalg.solve(X.T @ (D[:, None] * X) + 5.0 * np.eye(3), X.T @ (D * y))
    np.testing.assert_allclose(h.estimator.coef_, beta, rtol=1e-8, atol=1e-10)
    # the unrescaled weights (sum 1 + sum(lam)) would over-regularise by n / sum(W)
    beta_raw = np.linalg.solve(X.T @ (W[:, None] * X) + 5.0 * np.eye(3), X.T @ (W * y))
    assert np.abs(beta - beta_raw).max() > 1e-2
