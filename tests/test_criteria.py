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
    # parameter validation (the constraints built from the criterion registry) answers first
    with pytest.raises(ParameterError, match=r"'constraint' parameter of FairClassifier.*Got 'bounded_group_loss'"):
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


# ---- issue 32 item 3: a criterion is meaning (its events), not a name ------------------------------
from fairopt.criteria import Criterion, Event  # noqa: E402
from fairopt.errors import DataValidationError, ParameterError  # noqa: E402


def _empirical_rates(pred, y, g, events):
    """``P(ŷ = k | Y = j, A = a)`` per event and group, straight from the rows (the reference)."""
    out = np.empty((len(events), g.max() + 1))
    for r, (j, k) in enumerate(events):
        for a in range(g.max() + 1):
            rows = (g == a) & (True if j is None else (y == j))
            out[r, a] = np.mean(pred[rows] == k)
    return out


def test_events_spell_out_each_criterion_for_any_number_of_classes():
    dp, eo, eodds = (criterion(c) for c in ("demographic_parity", "equal_opportunity", "equalized_odds"))
    assert dp.events(3) == ((None, 0), (None, 1), (None, 2))
    assert eo.events(3) == ((0, 0), (1, 1), (2, 2))                       # per-class recall
    assert eodds.events(3) == tuple((j, k) for j in range(3) for k in range(3))
    assert eo.events(("cat", "dog")) == (Event("cat", "cat"), Event("dog", "dog"))
    # the binary reduction (favourable class 1) is today's TPR parity, TPR + FPR parity, selection rate
    assert eo.events(2, positive=1) == ((1, 1),) and eo.conditions == (1,)
    assert eodds.events((1, 0), positive=1) == ((1, 1), (0, 1)) and eodds.conditions == (1, 0)
    assert dp.events(2, positive=1) == ((None, 1),) and dp.conditions == ()
    assert [c.needs_labels for c in (dp, eo, eodds)] == [False, True, True]
    assert eodds.label_cells(3) == (0, 1, 2) and dp.label_cells(3) == ()
    for bad in ((1,), (0, 0)):
        with pytest.raises(ConfigError, match="two distinct classes"):
            eo.events(bad)
    with pytest.raises(ConfigError, match="positive=2"):
        eo.events(2, positive=2)
    with pytest.raises(ConfigError, match="compares no rates"):
        criterion("covariance").events(2)
    assert not criterion("bounded_group_loss").is_rate and criterion("covariance").conditions is None


def test_per_class_equal_opportunity_is_what_its_events_say():
    # K = 3 classes: a rule that gives class 2 to every row of group 1 breaks per-class recall parity
    # exactly on the events (1, 1) and (2, 2), and (0, 0) stays equal; the events name those rates
    rng = np.random.default_rng(1)
    n = 3000
    g = rng.integers(0, 2, n)
    y = rng.integers(0, 3, n)
    pred = np.where((g == 1) & (y == 1) & (rng.random(n) < 0.5), 2, y)
    events = criterion("equal_opportunity").events(3)
    rates = _empirical_rates(pred, y, g, events)
    gap = np.abs(rates[:, 0] - rates[:, 1])
    assert gap[0] == 0.0 and gap[2] == 0.0 and gap[1] == pytest.approx(0.5, abs=0.05)
    # equalized odds on the same rule sees the moved mass also in (1, 2): P(ŷ=2 | Y=1) differs
    eodds = criterion("equalized_odds").events(3)
    gaps = dict(zip(eodds, np.abs(np.subtract(*_empirical_rates(pred, y, g, eodds).T)), strict=True))
    assert gaps[(1, 2)] == pytest.approx(gaps[(1, 1)]) and gaps[(0, 0)] == 0.0


def test_binary_consumers_compare_exactly_the_registry_events():
    # the reductions moment, the constraint block and the fair log-loss rows each compare the rates
    # that criterion(...).events((1, 0), positive=1) names, no more and no fewer
    from fairopt.constraints import rate_parity
    from fairopt.formulations.constrained_classification.logloss_fairness import fairness_rows
    from fairopt.reductions.moments import CLASSIFICATION_MOMENTS
    g = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    x = np.array([1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 0.0, 1.0])
    for name in ("demographic_parity", "equal_opportunity", "equalized_odds"):
        def ref_rates(events):   # x is P(ŷ=1): each group's mean of x over the event's rows
            return np.array([[x[(g == a) & (True if j is None else y == j)].mean() for a in (0, 1)]
                             for j, _ in events])
        # the moment orders its events by label (0, 1); its rows are gamma[group, event]
        events = criterion(name).events((0, 1), positive=1)
        moment = CLASSIFICATION_MOMENTS[name](eps=0.0).fit(y, g)
        assert moment.n_events == len(events)
        gam = moment.stats(x)[1][: 2 * len(events)].reshape(2, len(events)).T
        pooled = [x[True if j is None else y == j].mean() for j, _ in events]
        np.testing.assert_allclose(gam, ref_rates(events) - np.array(pooled)[:, None], atol=1e-12)
        # blocks and log-loss rows take the favourable label first
        events = criterion(name).events((1, 0), positive=1)
        ref = ref_rates(events)
        block = rate_parity(name, g, None if name == "demographic_parity" else y, eps=0.1)
        np.testing.assert_allclose((block.A @ x)[: 2 * len(events)], ref.ravel(), atol=1e-12)
        rows = fairness_rows(g, y, name)
        np.testing.assert_allclose(rows.gaps(x), ref[:, 1] - ref[:, 0], atol=1e-12)


def test_a_new_rate_criterion_is_one_registry_entry(monkeypatch):
    # registering an entry (no other edit) makes every generic consumer take it: the block by name,
    # the label check, and the messages listing the criteria
    import fairopt.criteria as crit
    from fairopt.constraints import equal_opportunity, rate_parity
    entry = Criterion("recall_parity", "equal per-class recall", "same", ("class_recall_parity",))
    monkeypatch.setitem(crit.CRITERIA, entry.name, entry)
    monkeypatch.setitem(crit._NAMES, entry.name, entry.name)
    monkeypatch.setitem(crit._NAMES, "class_recall_parity", entry.name)
    g = np.array(["a", "a", "b", "b", "c", "c"])
    y = np.array([1, 0, 1, 1, 0, 1])
    block = rate_parity("class_recall_parity", g, y, eps=0.05)
    ref = equal_opportunity(g, y, eps=0.05)
    assert block.name == "recall_parity" and (block.A != ref.A).nnz == 0
    assert criterion("class_recall_parity").events(3) == ((0, 0), (1, 1), (2, 2))
    with pytest.raises(ConfigError, match="'recall_parity' \\(or 'class_recall_parity'\\)"):
        rate_parity("parity", g, y, eps=0.05)


@pytest.mark.parametrize("alias", ["statistical_parity", "demographic_parity"])
def test_fair_regressor_checks_eps_by_meaning_not_by_name(data, alias):
    # before: "demographic_parity" skipped the rate range check (the raw name was compared)
    from fairopt.inprocessing import FairRegressor
    X, _, a = data
    target = 1 / (1 + np.exp(-X[:, 0]))
    with pytest.raises(ParameterError, match="'eps' parameter of FairRegressor"):
        FairRegressor(constraint=alias, eps=5, max_iter=2).fit(X, target, sensitive_features=a)


def test_the_label_cells_every_group_needs_come_from_the_events():
    # group 1 has no negatives: equalized odds (events given Y=1 and Y=0) cannot compare its FPR,
    # equal opportunity (given Y=1 only) and demographic parity (all rows) can
    from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
    scores = np.linspace(-1, 1, 8)
    g = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    y = np.array([1, 0, 1, 0, 1, 1, 1, 1])
    with pytest.raises(DataValidationError, match=r"groups \[1\] have no negative labels"):
        ThresholdMixtureOdds(scores, g, y, "equalized_odds", 0.1)
    for name in ("equal_opportunity", "demographic_parity"):
        assert ThresholdMixtureOdds(scores, g, y, name, 0.1).solve().accuracy > 0
    with pytest.raises(DataValidationError, match=r"groups \[1\] have no positive labels"):
        ThresholdMixtureOdds(scores, g, 1 - y, "equal_opportunity", 0.1)
    assert criterion("equalized_odds").label_cells((1, 0), positive=1) == (1, 0)


def test_model_cards_take_the_same_aliases_as_the_estimators():
    from pydantic import ValidationError

    from fairopt.runs.fair_logloss import Parameters as LogLossParameters
    from fairopt.runs.threshold_debiasing import Parameters as ThresholdParameters
    assert ThresholdParameters(constraint="statistical_parity").constraint == "demographic_parity"
    assert LogLossParameters(constraint="true_positive_rate_parity").constraint == "equal_opportunity"
    assert LogLossParameters(constraint="none").constraint == "none"
    with pytest.raises(ValidationError):
        ThresholdParameters(constraint="parity")
