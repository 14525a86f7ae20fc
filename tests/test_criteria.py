"""One vocabulary of fairness criteria: every consumer resolves names and aliases in
fairopt.criteria, so an alias gives the same model as the canonical name everywhere and an
unknown name gets one message listing what the caller accepts."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.criteria import CRITERIA, canonical, criterion, resolve
from fairopt.errors import ConfigError


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    a = (rng.random(400) < 0.4).astype(int)
    y = (X[:, 0] + 0.8 * a + rng.normal(size=400) > 0).astype(int)
    return X, y, a


def test_names_and_aliases_resolve_in_one_place():
    assert resolve("statistical_parity") == resolve("demographic_parity") == "demographic_parity"
    assert canonical("true_positive_rate_parity") == "equal_opportunity"
    assert criterion("equalized_odds").conditions == (1, 0)
    assert criterion("demographic_parity").conditions == ()
    aliases = [a for c in CRITERIA.values() for a in c.aliases]
    assert len(aliases) == len(set(aliases)) and not set(aliases) & set(CRITERIA)
    with pytest.raises(ConfigError, match="'demographic_parity' \\(or 'statistical_parity'"):
        resolve("parity", allowed=("demographic_parity", "equalized_odds"))
    with pytest.raises(ConfigError, match="constraint='covariance'"):
        resolve("covariance", allowed=("demographic_parity",))


def test_fair_logloss_and_the_odds_lp_take_aliases(data):
    from fairopt.formulations.constrained_classification import FairLogLoss
    from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
    X, y, a = data
    ref = FairLogLoss(X, y, a, "demographic_parity", C=0.1).solve("native")
    alias = FairLogLoss(X, y, a, "statistical_parity", C=0.1).solve("native")
    np.testing.assert_array_equal(alias.primal["theta"], ref.primal["theta"])
    scores = 1 / (1 + np.exp(-X[:, 0]))
    ref = ThresholdMixtureOdds(scores, a, y, "equal_opportunity", 0.02).solve()
    alias = ThresholdMixtureOdds(scores, a, y, "true_positive_rate_parity", 0.02).solve()
    assert alias.objective == ref.objective
    with pytest.raises(ConfigError, match="one of 'equal_opportunity'"):
        ThresholdMixtureOdds(scores, a, y, "bounded_group_loss", 0.02)


def test_threshold_debiasing_and_reductions_take_aliases(data):
    from fairopt.inprocessing import FairClassifier, FairRegressor
    from fairopt.postprocessing import ThresholdDebiaser
    X, y, a = data
    scores = 1 / (1 + np.exp(-X[:, 0]))
    fits = [ThresholdDebiaser(constraint=c, eps=0.02).fit(scores, y, sensitive_features=a)
            for c in ("demographic_parity", "statistical_parity")]
    np.testing.assert_array_equal(fits[0].thresholds_, fits[1].thresholds_)
    assert fits[1].constraint_ == "demographic_parity"
    clf = [FairClassifier(constraint=c, eps=0.05, max_iter=20).fit(X, y, sensitive_features=a)
           for c in ("demographic_parity", "statistical_parity")]
    np.testing.assert_array_equal(clf[0].predict_proba(X), clf[1].predict_proba(X))
    target = 1 / (1 + np.exp(-(X[:, 0] + 0.5 * a)))   # in [0, 1], as FairRegressor needs
    reg = [FairRegressor(constraint=c, eps=0.05, max_iter=10, grid_size=10).fit(X, target, sensitive_features=a)
           for c in ("statistical_parity", "demographic_parity")]
    np.testing.assert_array_equal(reg[0].predict(X), reg[1].predict(X))
    # parameter validation (scikit-learn's constraints, built from the criterion registry) answers first
    with pytest.raises(ConfigError, match="'constraint' parameter of FairClassifier.*Got 'bounded_group_loss'"):
        FairClassifier(constraint="bounded_group_loss").fit(X, y, sensitive_features=a)


def test_constraint_blocks_by_criterion_name():
    from fairopt.constraints import equal_opportunity, rate_parity, selection_rate_parity
    g = np.array(["a", "a", "b", "b", "c", "c"])
    y = np.array([1, 0, 1, 1, 0, 1])
    for alias in ("demographic_parity", "statistical_parity", "selection_rate_parity"):
        block = rate_parity(alias, g, eps=0.1)
        ref = selection_rate_parity(g, eps=0.1, name=block.name)
        assert (block.A != ref.A).nnz == 0 and np.array_equal(block.bound, ref.bound)
    block = rate_parity("true_positive_rate_parity", g, y, eps=0.05)
    ref = equal_opportunity(g, y, eps=0.05)
    assert block.name == "equal_opportunity" and (block.A != ref.A).nnz == 0
    with pytest.raises(ConfigError, match="criterion='covariance'"):
        rate_parity("covariance", g, eps=0.1)
