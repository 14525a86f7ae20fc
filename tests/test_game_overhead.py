"""The reduction games predict each hypothesis on the training data once: the oracle keeps the
predictions it computed while fitting, the pool scores from them and then releases them."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from fairopt.reductions import (
    CostSensitiveOracle,
    DemographicParity,
    PracticalEG,
    RiskMinimizationOracle,
    StatisticalParity,
)
from fairopt.reductions import oracles as oracles_module
from fairopt.reductions.game import Game, training_predictions
from fairopt.reductions.logistic import WarmLogistic


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(size=n), a + rng.normal(scale=0.7, size=n), rng.normal(size=n)])
    return X, a, rng


def _count_predict(monkeypatch, cls):
    calls = []
    original = cls.predict

    def predict(self, X):
        calls.append(X)
        return original(self, X)
    monkeypatch.setattr(cls, "predict", predict)
    return calls


def _check_pool(game, X):
    """Every pool member's statistics are those of its own predictions, and none keeps them."""
    for i, h in enumerate(game.pool.hyps):
        assert not hasattr(h, "_training_predictions")
        cost, g = game.moment.stats(h.predict(X))
        assert cost == pytest.approx(game.pool.costs[i], abs=1e-12)
        np.testing.assert_allclose(g, game.pool.G[i], rtol=0, atol=1e-12)


def test_classification_game_never_predicts_on_training_rows(monkeypatch):
    X, a, rng = _data()
    y = (X[:, 0] + X[:, 1] + rng.normal(scale=0.5, size=X.shape[0]) > 0.5).astype(int)
    moment = DemographicParity(eps=0.02).fit(y, a)
    oracle = CostSensitiveOracle(LogisticRegression()).prepare(moment, X)
    calls = _count_predict(monkeypatch, oracles_module.ClassifierHypothesis)
    game = Game(moment, oracle, X)
    res = game.play(PracticalEG(B=50.0, nu=1e-9, max_iter=15), 15)
    assert game.n_calls >= 2 and len(game.pool) >= 2
    assert calls == []                  # the pool scored every answer from the fit's own scores
    monkeypatch.undo()
    _check_pool(game, X)
    assert res.max_violation <= 1e-7


def test_risk_minimisation_oracle_predicts_each_fit_once(monkeypatch):
    X, a, rng = _data(300, 1)
    y = np.clip(0.5 + 0.2 * X[:, 0] + 0.15 * a + 0.1 * rng.normal(size=X.shape[0]), 0, 1)
    moment = StatisticalParity(eps=0.05, grid_size=10, loss="logistic").fit(y, a)
    oracle = RiskMinimizationOracle(LogisticRegression(max_iter=1000), refine_rounds=2).prepare(moment, X)
    calls = _count_predict(monkeypatch, oracles_module.LogisticScore)
    game = Game(moment, oracle, X)
    game.play(PracticalEG(B=10.0, nu=1e-9, max_iter=4), 4)
    # the training scores of every fit (published targets and refinements) come from its
    # coefficients: no validated predict call, none by the pool either
    assert oracle.n_fits >= 4 * 3 and calls == []
    monkeypatch.undo()
    _check_pool(game, X)


def test_risk_minimisation_training_scores_equal_predict():
    X, a, rng = _data(300, 3)
    y = np.clip(0.5 + 0.2 * X[:, 0] + 0.15 * a + 0.1 * rng.normal(size=X.shape[0]), 0, 1)
    moment = StatisticalParity(eps=0.05, grid_size=10, loss="logistic").fit(y, a)
    oracle = RiskMinimizationOracle(LogisticRegression(max_iter=1000), refine_rounds=1).prepare(moment, X)
    h = oracle.best_response(np.linspace(0.0, 0.5, moment.n_rows))
    kept = training_predictions(h, X)
    assert hasattr(h, "_training_predictions")
    np.testing.assert_array_equal(kept, h.predict(X))      # bit for bit: the same product


def test_least_squares_oracle_keeps_exact_training_predictions(monkeypatch):
    from sklearn.linear_model import LinearRegression

    from fairopt.reductions import LeastSquaresOracle
    X, a, rng = _data(300, 4)
    y = np.clip(0.5 + 0.2 * X[:, 0] + 0.15 * a + 0.1 * rng.normal(size=X.shape[0]), 0, 1)
    moment = StatisticalParity(eps=0.05, grid_size=10).fit(y, a)
    oracle = LeastSquaresOracle(LinearRegression(), refine_rounds=2).prepare(moment, X)
    lam = np.linspace(0.0, 0.5, moment.n_rows)
    calls = _count_predict(monkeypatch, oracles_module.ClippedRegressor)
    h = oracle.best_response(lam)
    assert calls == [] and oracle.n_fits == 1 + 2 * 3     # no validated predict on the training rows
    monkeypatch.undo()
    np.testing.assert_array_equal(training_predictions(h, X), h.predict(X))   # bit for bit


def test_kept_predictions_are_for_that_training_array_only():
    X, a, _ = _data(50)
    y = (X[:, 0] > 0).astype(int)
    moment = DemographicParity(eps=0.05).fit(y, a)
    oracle = CostSensitiveOracle(LogisticRegression()).prepare(moment, X)
    h = oracle.best_response(np.zeros(moment.n_rows))
    other = X.copy()
    other[:, 0] = -other[:, 0]
    # another array (even of the same shape) is predicted for real
    np.testing.assert_array_equal(training_predictions(h, other), h.predict(other))
    np.testing.assert_array_equal(training_predictions(h, X, release=True), h.predict(X))
    assert not hasattr(h, "_training_predictions")


def test_warm_start_choice_matches_recomputed_scores():
    X, _, rng = _data(500, 2)
    y = (X[:, 0] - X[:, 2] > 0).astype(float)
    warm = WarmLogistic(LogisticRegression(), X, tol=1e-6)
    for _ in range(WARM := 5):
        warm.fit(y, rng.uniform(0.1, 2.0, X.shape[0]))
    s = rng.uniform(0.1, 2.0, X.shape[0])
    S = float(s.sum())
    Theta = np.vstack([np.zeros(X.shape[1] + 1), *warm.solutions[-WARM:]])
    Z = X @ Theta[:, :-1].T + Theta[:, -1]
    loss = np.log1p(np.exp(-np.abs(Z))) + np.maximum(Z, 0.0) - y[:, None] * Z
    values = (s @ loss) / S + 0.5 * (Theta[:, :-1] ** 2).sum(axis=1) / S
    np.testing.assert_allclose(warm._start(y, s, S), Theta[np.argmin(values)], rtol=0, atol=0)
    assert len(warm.scores) == len(warm.softplus) == WARM
