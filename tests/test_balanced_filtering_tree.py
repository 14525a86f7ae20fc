"""Split game (corrected Lemma-4 coefficient, disclosure rows) and the (α, β)-proxy tree."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from fairopt.formulations.proxy_weights import conditional_matrix, disclosivity
from fairopt.reductions.proxy_tree import DISCLOSURE_TOL, ProxyTree
from fairopt.reductions.split_game import EstimatorLearner, SplitMoment, learn_split, split_coefficients


def synthetic(n=3000, K=3, seed=0):
    """Group 0 dominates; features shift with the group, so splits can enrich minorities."""
    rng = np.random.default_rng(seed)
    groups = rng.choice(K, size=n, p=[0.75, 0.17, 0.08][:K])
    X = rng.normal(size=(n, 4)) + 0.9 * np.eye(K, 4)[groups]
    return X, groups


def test_corrected_coefficient_matches_normalised_condition():
    rng = np.random.default_rng(1)
    n, K = 400, 4
    groups = rng.integers(0, K, n)
    onehot = np.eye(K)[groups]
    flips = 0
    for trial in range(50):
        w = rng.random(n) * (rng.random(n) < 0.8)
        h = rng.random(n) if trial % 2 else (rng.random(n) < 0.4).astype(float)
        U_prime = rng.dirichlet(np.ones(K))
        phi = rng.random() * 0.5
        D = np.linalg.norm(U_prime - 1 / K)
        c = split_coefficients(w, groups, U_prime, margin=phi)
        H = w @ h
        R_V = w @ onehot / w.sum()
        R_V1 = (w * h) @ onehot / H
        progress = (R_V1 - R_V) @ (1 / K - U_prime)
        assert (w * h) @ c == pytest.approx(H * (D * phi - progress), abs=1e-10)
        # Eq. (2) with the corrected Q holds exactly when condition (1) with margin φ holds
        assert ((w * h) @ c <= 0) == (progress >= D * phi)
        # the printed Q = s̄ + Dφ tests ⟨R(V1) − R(V), U − U′⟩ ≥ −Dφ instead
        printed = c - 2 * D * phi
        flips += ((w * h) @ printed <= 0) != ((w * h) @ c <= 0)
    assert flips > 0


def test_disclosure_rows_are_cross_multiplied_posteriors(rng):
    n, K, alpha = 500, 3, 0.1
    groups = rng.integers(0, K, n)
    w = rng.random(n)
    prior = np.bincount(groups, minlength=K) / n
    m = SplitMoment(w, groups, prior, np.zeros(n), alpha)
    h = rng.random(n)
    _cost, g = m.stats(h)
    onehot = np.eye(K)[groups]
    W1, W0 = (w @ h) / w.sum(), (w @ (1 - h)) / w.sum()
    R1, R0 = (w * h) @ onehot / (w @ h), (w * (1 - h)) @ onehot / (w @ (1 - h))
    np.testing.assert_allclose(g[:K], W1 * (R1 - prior - alpha), atol=1e-12)
    np.testing.assert_allclose(g[K:2 * K], W1 * (prior - R1 - alpha), atol=1e-12)
    np.testing.assert_allclose(g[2 * K:3 * K], W0 * (R0 - prior - alpha), atol=1e-12)
    np.testing.assert_allclose(g[3 * K:], W0 * (prior - R0 - alpha), atol=1e-12)
    # the learner's per-sample cost difference is the Lagrangian's slope in h
    m = SplitMoment(w, groups, prior, rng.normal(size=n), alpha)
    lam = rng.random(4 * K)
    h0, h1 = rng.random(n), rng.random(n)
    L = [m.lagrangian(*m.stats(h), lam) for h in (h0, h1)]
    assert L[1] - L[0] == pytest.approx(m.cost_difference(lam) @ (h1 - h0), abs=1e-12)


@pytest.mark.parametrize("learner", [None, EstimatorLearner(DecisionTreeClassifier(max_depth=2))])
def test_split_game_meets_disclosure_exactly(learner):
    X, groups = synthetic()
    K = 3
    prior = np.bincount(groups) / len(groups)
    res = learn_split(X, np.ones(len(groups)), groups, prior, prior, alpha=0.05, learner=learner)
    assert res.weights.sum() == pytest.approx(1) and res.weights.min() > 0
    assert res.max_violation <= 1e-9
    assert res.cost <= 1e-12                      # never worse than h ≡ 0
    assert res.cost < -1e-3                       # and a real split was found
    h = sum(wt * hyp.predict(X) for hyp, wt in zip(res.hypotheses, res.weights, strict=False))
    A, r_hat, _ = conditional_matrix(np.column_stack([1 - h, h]), groups, K)
    assert disclosivity(A, r_hat, prior) <= 0.05 + DISCLOSURE_TOL


def test_alpha_zero_gives_no_split():
    X, groups = synthetic()
    tree = ProxyTree(0.0).fit(X, groups, 3)
    assert tree.n_games_ >= 1                     # the game was played and no split passed
    assert tree.records_ == [] and tree.conditional_matrix_.shape[0] == 1
    np.testing.assert_allclose(tree.conditional_matrix_[0], np.bincount(groups) / len(groups))
    np.testing.assert_allclose(tree.membership(X), 1.0)


@pytest.mark.parametrize("relaxed", [False, True])
def test_tree_invariants(relaxed):
    X, groups = synthetic()
    alpha, gamma = 0.25, 0.1
    tree = ProxyTree(alpha, relaxed=relaxed, gamma=gamma).fit(X, groups, 3)
    assert len(tree.records_) >= 1
    hist = np.asarray(tree.history_)
    assert np.all(hist[1:] <= (1 - gamma) * hist[:-1] + 1e-12)   # never increases; shrinks by 1 − γ
    for rec in tree.records_:
        assert rec.disclosivity <= alpha + DISCLOSURE_TOL
    M = tree.membership(X)
    np.testing.assert_allclose(M.sum(axis=1), 1.0, atol=1e-12)   # leaf weights sum to one
    np.testing.assert_allclose(M, tree.leaf_weights_, atol=1e-12)
    prior = np.bincount(groups) / len(groups)
    assert disclosivity(tree.conditional_matrix_, tree.cell_mass_, prior) <= alpha + DISCLOSURE_TOL
    # routing draws leaves with the membership probabilities
    leaves = tree.route(np.repeat(X[:50], 400, axis=0), random_state=0)
    freq = np.stack([np.bincount(leaves[i * 400:(i + 1) * 400], minlength=M.shape[1]) / 400
                     for i in range(50)])
    assert np.abs(freq - M[:50]).max() <= 0.1


def test_tree_same_on_every_p1_backend():
    X, groups = synthetic()
    ref = ProxyTree(0.25).fit(X, groups, 3)
    for solver in ("native", "osqp"):
        tree = ProxyTree(0.25, solver=solver).fit(X, groups, 3)
        assert len(tree.records_) == len(ref.records_)
        assert tree.distance_ == pytest.approx(ref.distance_, abs=1e-7)
