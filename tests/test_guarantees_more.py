"""``confidence`` beyond ThresholdDebiaser and FairClassifier: held-out certificates of
FairLogLossClassifier and MulticlassDebiaser cover the population gap, the margins are the stated
union-bounded Hoeffding slacks, and every other estimator with a fairness tolerance refuses a
confidence with the reason."""
from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from fairopt.errors import CertificateWarning, DataValidationError, InfeasibleError
from fairopt.guarantees import (
    HOLDOUT_ATTEMPTS,
    attempt_confidence,
    event_certificate,
    gap_margin,
    hoeffding_margin,
    holdout_certificate,
)
from fairopt.inprocessing import FairLogLossClassifier
from fairopt.postprocessing import MulticlassDebiaser


# ---------------------------------------------------------------- event_certificate
def test_event_certificate_reduces_to_holdout_certificate() -> None:
    rng = np.random.default_rng(3)
    n = 3000
    g, y, p = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.uniform(size=n)
    for conditions in ((), (1,), (1, 0)):
        for kind in ("deviation", "range"):
            ref = holdout_certificate(p, g, y, 0.9, conditions=conditions, kind=kind)
            masks = np.ones((n, 1), bool) if not conditions else np.column_stack([y == c for c in conditions])
            got = event_certificate(np.repeat(p[:, None], masks.shape[1], 1), masks, g, 0.9, kind=kind)
            assert got.sample_gap == pytest.approx(ref.sample_gap, abs=1e-12)
            assert got.margin == pytest.approx(ref.margin, abs=1e-12)
            assert got.per_rate == pytest.approx(ref.per_rate)


def test_event_certificate_refuses_bad_input() -> None:
    with pytest.raises(DataValidationError, match="probability"):
        event_certificate(np.full((4, 1), 1.5), np.ones((4, 1), bool), [0, 0, 1, 1], 0.9)
    with pytest.raises(DataValidationError, match="one shape"):
        event_certificate(np.zeros((4, 2)), np.ones((4, 1), bool), [0, 0, 1, 1], 0.9)
    with pytest.raises(DataValidationError, match="no rows"):     # group 1 has no row of the event
        event_certificate(np.zeros((4, 1)), np.array([[1], [1], [0], [0]], bool), [0, 0, 1, 1], 0.9)


# ---------------------------------------------------------------- FairLogLossClassifier
def _binary(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = (rng.uniform(size=n) < 0.35).astype(int)
    X = np.column_stack([rng.normal(size=n) + 0.8 * g, rng.normal(size=n)])
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.5).astype(int)
    return X, g, y


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_fair_logloss_certificate_covers_the_population(constraint: str) -> None:
    rng = np.random.default_rng(5)
    X_pop, g_pop, y_pop = _binary(rng, 200_000)
    masks = [np.ones_like(y_pop, bool)] if constraint == "demographic_parity" else [y_pop == 1, y_pop == 0]
    conf, trials, misses = 0.9, 12, 0
    for t in range(trials):
        X, g, y = _binary(rng, 2000)
        clf = FairLogLossClassifier(constraint=constraint, confidence=conf, random_state=t).fit(
            X, y, sensitive_features=g)
        c = clf.guarantee_
        assert c.method == "hoeffding-holdout" and c.n_rows == 600 and clf.eps_ == 0.0
        assert clf.certified_eps_ == pytest.approx(c.sample_gap + c.margin)
        # two groups: the range of the group rates, union bound over the group rates of each condition
        n_cells = np.array(list(c.per_rate.values()))
        assert len(n_cells) == 2 * len(masks)
        per_cond = n_cells.reshape(2, len(masks))
        assert c.margin == pytest.approx(per_cond.sum(axis=0).max())
        p = clf.predict_proba(X_pop, g_pop)[:, 1]
        pop_gap = max(abs(p[m & (g_pop == 0)].mean() - p[m & (g_pop == 1)].mean()) for m in masks)
        misses += pop_gap > clf.certified_eps_
    assert misses / trials <= 1 - conf


def test_fair_logloss_margin_is_the_union_bounded_hoeffding_slack() -> None:
    X, g, y = _binary(np.random.default_rng(8), 1500)
    clf = FairLogLossClassifier(constraint="demographic_parity", confidence=0.95, random_state=0).fit(
        X, y, sensitive_features=g)
    counts = np.bincount(g, minlength=2) * 0.3          # the stratified held-out share
    e = hoeffding_margin(np.round(counts), 0.05 / 2)
    assert clf.guarantee_.margin == pytest.approx(e.sum(), rel=1e-3)
    plain = FairLogLossClassifier(constraint="demographic_parity").fit(X, y, sensitive_features=g)
    assert plain.guarantee_ is None and not hasattr(plain, "certified_eps_")
    with pytest.raises(DataValidationError, match="constraint=None"):
        FairLogLossClassifier(constraint=None, confidence=0.9).fit(X, y, sensitive_features=g)
    with pytest.raises((DataValidationError, ValueError)):
        FairLogLossClassifier(confidence=1.0).fit(X, y, sensitive_features=g)


# ---------------------------------------------------------------- MulticlassDebiaser
def _multiclass(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = (rng.uniform(size=n) < 0.4).astype(int)
    S = rng.dirichlet([2, 2, 2], n)
    S[g == 1] = 0.5 * S[g == 1] + [0.5, 0.0, 0.0]
    S = np.round(S * 10) / 10
    S /= S.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=n)[:, None] > np.cumsum(S, axis=1)).sum(axis=1).clip(0, 2)   # calibrated labels
    return S, g, y


def _pop_gap(P: np.ndarray, g: np.ndarray, y: np.ndarray, constraint: str) -> float:
    K = P.shape[1]
    events = [(None, k) for k in range(K)] if constraint == "demographic_parity" else [(k, k) for k in range(K)]
    gaps = []
    for j, k in events:
        m = np.ones_like(g, bool) if j is None else y == j
        gaps += [abs(P[m & (g == a), k].mean() - P[m, k].mean()) for a in (0, 1)]
    return max(gaps)


@pytest.mark.parametrize("constraint", ["demographic_parity", "equal_opportunity"])
def test_multiclass_certificate_covers_the_population(constraint: str) -> None:
    rng = np.random.default_rng(13)
    S_pop, g_pop, y_pop = _multiclass(rng, 200_000)
    conf, eps, trials, misses = 0.9, 0.4, 15, 0
    for t in range(trials):
        S, g, y = _multiclass(rng, 3000)
        deb = MulticlassDebiaser(constraint=constraint, eps=eps, confidence=conf, score_bins=10, random_state=t)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CertificateWarning)
            deb.fit(S, y, sensitive_features=g)
        c = deb.guarantee_
        assert (deb.certified_eps_ > eps + 1e-12) == any(issubclass(w.category, CertificateWarning) for w in caught)
        assert c.method == "hoeffding-holdout" and c.n_rows == 900
        # one of the training tolerances fixed before the held-out rows are read
        schedule = [(eps - c.margin) * (HOLDOUT_ATTEMPTS - j) / HOLDOUT_ATTEMPTS for j in range(HOLDOUT_ATTEMPTS)]
        assert min(abs(deb.eps_ - t) for t in schedule) < 1e-12
        assert deb.train_gap_ <= deb.eps_ + 1e-7
        assert deb.certified_eps_ == pytest.approx(c.sample_gap + c.margin)
        misses += _pop_gap(deb.predict_proba(S_pop, g_pop), g_pop, y_pop, constraint) > deb.certified_eps_
    assert misses / trials <= 1 - conf


def test_multiclass_margin_counts_every_event() -> None:
    S, g, y = _multiclass(np.random.default_rng(2), 4000)
    deb = MulticlassDebiaser(constraint="equalized_odds", eps=0.9, confidence=0.95, score_bins=10,
                             random_state=0).fit(S, y, sensitive_features=g)
    # 3 x 3 events (true j, predicted k), two groups: 18 group rates + 9 pooled rates
    assert len(deb.guarantee_.per_rate) == 27
    # the held-out rows are a stratified 30 % of every (group, class) cell
    counts = np.array([[0.3 * np.sum((g == a) & (y == j)) for j in (0, 0, 0, 1, 1, 1, 2, 2, 2)] for a in (0, 1)])
    approx, _ = gap_margin(np.round(counts), attempt_confidence(0.95), kind="deviation")
    assert deb.guarantee_.margin == pytest.approx(approx, rel=0.02)


def test_multiclass_uncertifiable_eps_and_refusals() -> None:
    S, g, y = _multiclass(np.random.default_rng(4), 1200)
    with pytest.raises(InfeasibleError, match="smallest certifiable eps") as info:
        MulticlassDebiaser(eps=0.02, confidence=0.95, random_state=0).fit(S, y, sensitive_features=g)
    tight = info.value.tightest["eps"]
    deb = MulticlassDebiaser(eps=tight + 1e-9, confidence=0.95, random_state=0).fit(S, y, sensitive_features=g)
    assert deb.eps_ == pytest.approx(0.0, abs=1e-8) and deb.guarantee_.margin == pytest.approx(tight)
    with pytest.raises(DataValidationError, match="unweighted"):
        MulticlassDebiaser(eps=0.5, confidence=0.9).fit(S, y, sensitive_features=g,
                                                        sample_weight=np.linspace(1, 2, g.size))
    with pytest.raises(DataValidationError, match="needs the labels y"):
        MulticlassDebiaser(constraint="equal_opportunity", eps=0.5, confidence=0.9).fit(S, sensitive_features=g)
    plain = MulticlassDebiaser(eps=0.1).fit(S, y, sensitive_features=g)
    assert plain.guarantee_ is None and plain.eps_ == 0.1 and not hasattr(plain, "certified_eps_")


def test_multiclass_certifies_without_labels_for_demographic_parity() -> None:
    S, g, _ = _multiclass(np.random.default_rng(6), 3000)
    frame = pd.DataFrame(S, columns=["a", "b", "c"]).assign(grp=np.where(g == 1, "x", "y"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CertificateWarning)
        deb = MulticlassDebiaser(eps=0.3, confidence=0.9, random_state=0).fit(frame, sensitive_features="grp")
    assert deb.guarantee_.n_rows == 900 and list(deb.groups_) == ["x", "y"]
    assert (deb.certified_eps_ > 0.3) == bool(caught)     # a certified gap above eps is said, and only then
    held = MulticlassDebiaser(eps=0.3, confidence=0.9, random_state=0)
    from fairopt.postprocessing._certify import MulticlassHoldout
    part = MulticlassHoldout(held, frame, None, "grp", None)
    P = deb.predict_proba(frame.iloc[part.cert])           # the same split: the certificate's rates
    rates = np.array([P[part.grp.codes[part.cert] == a].mean(axis=0) for a in (0, 1)])
    assert deb.guarantee_.sample_gap == pytest.approx(np.abs(rates - P.mean(axis=0)).max())


# ---------------------------------------------------------------- refusals
def _refusals() -> list:
    from fairopt.filtering import BalancedFilter
    from fairopt.inprocessing import FairRegressor
    from fairopt.postprocessing import RegressionDebiaser
    from fairopt.preprocessing import MaxEntResampler, TVRepairResampler
    from fairopt.preprocessing.tv_repair import TVRepair

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    g = np.repeat([0, 1], 30)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 60), "s": g, "y": rng.integers(0, 2, 60)})
    return [
        (FairRegressor, "eps", lambda e: e.fit(X, X[:, 0], sensitive_features=g), "FairClassifier"),
        (RegressionDebiaser, "eps", lambda e: e.fit(X[:, 0], sensitive_features=g), "ThresholdDebiaser"),
        (TVRepairResampler, "statistical_rate",
         lambda e: e.fit(frame.drop(columns="y"), frame["y"], sensitive_features="s"), "FairClassifier"),
        (TVRepair, "epsilon", lambda e: e.fit(frame.drop(columns="y"), frame["y"], sensitive_features="s"),
         "FairClassifier"),
        (MaxEntResampler, "tau", lambda e: e.fit(frame.drop(columns="y"), frame["y"], sensitive_features="s"),
         "FairClassifier"),
        (BalancedFilter, "alpha", lambda e: e.fit(X, sensitive_features=g), "hold out rows"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_estimators_without_a_population_bound_refuse_confidence(case: int) -> None:
    cls, tolerance, fit, instead = _refusals()[case]
    with pytest.raises(DataValidationError, match="no population guarantee") as info:
        fit(cls(confidence=0.9))
    message = str(info.value)
    assert cls.__name__ in message and tolerance in message and instead in message
    assert "confidence=None" in message
    with pytest.raises((DataValidationError, ValueError)):     # an invalid level is refused as such
        fit(cls(confidence=1.5))


def test_confidence_none_changes_nothing() -> None:
    from fairopt.postprocessing import RegressionDebiaser

    rng = np.random.default_rng(1)
    f, g = rng.normal(size=200) + np.repeat([0.0, 1.0], 100), np.repeat([0, 1], 100)
    a = RegressionDebiaser(eps=0.1).fit(f, sensitive_features=g)
    b = RegressionDebiaser(eps=0.1, confidence=None).fit(f, sensitive_features=g)
    np.testing.assert_array_equal(a.predict(f, sensitive_features=g, random_state=0),
                                  b.predict(f, sensitive_features=g, random_state=0))
    assert b.train_gap_ <= 0.1 + 1e-7


TOLERANCES = {"eps", "epsilon", "statistical_rate", "alpha", "tau"}


def test_every_estimator_with_a_fairness_tolerance_takes_confidence() -> None:
    found = {}
    for name in ("fairopt", "fairopt.inprocessing", "fairopt.postprocessing", "fairopt.preprocessing",
                 "fairopt.filtering", "fairopt.ranking"):
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[obj] = set(inspect.signature(obj.__init__).parameters)
    with_tolerance = {cls.__name__ for cls, params in found.items() if params & TOLERANCES}
    assert {"FairClassifier", "FairRegressor", "ThresholdDebiaser", "MulticlassDebiaser", "RegressionDebiaser",
            "TVRepairResampler", "TVRepair", "MaxEntResampler", "BalancedFilter"} <= with_tolerance
    missing = [cls.__name__ for cls, params in found.items() if params & TOLERANCES and "confidence" not in params]
    assert not missing, f"estimators with a fairness tolerance but no confidence: {missing}"
    for cls, params in found.items():
        if "confidence" in params:
            assert inspect.signature(cls.__init__).parameters["confidence"].default is None
            assert "confidence" in cls._parameter_constraints
            assert "confidence :" in (cls.__doc__ or ""), cls.__name__
    assert "confidence" in found[FairLogLossClassifier]


def test_the_rule_never_sees_the_certification_rows() -> None:
    from fairopt.guarantees import certification_split

    X, g, y = _binary(np.random.default_rng(9), 2000)
    clf = FairLogLossClassifier(confidence=0.9, random_state=3).fit(X, y, sensitive_features=g)
    assert np.asarray(clf.solution_.P).size == 1400                     # fitted on the 70 % share
    assert np.abs(clf.solution_.gaps).max() < 1e-6                      # exactly fair there
    fit, cert = certification_split(g, None, 0.3, random_state=3)       # the same stratified split
    refit = FairLogLossClassifier().fit(X[fit], y[fit], sensitive_features=g[fit])
    np.testing.assert_allclose(refit.coef_, clf.coef_, atol=1e-6)
    p = clf.predict_proba(X[cert], g[cert])[:, 1]
    assert clf.guarantee_.sample_gap == pytest.approx(abs(p[g[cert] == 0].mean() - p[g[cert] == 1].mean()))

    S, gm, ym = _multiclass(np.random.default_rng(9), 3000)
    deb = MulticlassDebiaser(eps=0.5, confidence=0.9, random_state=1).fit(S, ym, sensitive_features=gm)
    assert deb.atoms_.weight.sum() == pytest.approx(2100)                # LP over the fitting share only
    top = 0.5 - deb.guarantee_.margin                                   # the first training tolerance
    assert deb.train_gap_ <= deb.eps_ + 1e-7
    assert min(abs(deb.eps_ - top * (HOLDOUT_ATTEMPTS - j) / HOLDOUT_ATTEMPTS) for j in range(HOLDOUT_ATTEMPTS)) < 1e-12


def test_multiclass_tries_the_next_tolerance_when_a_certificate_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from fairopt.postprocessing._certify import MulticlassHoldout
    S, g, y = _multiclass(np.random.default_rng(5), 3000)
    real, seen = MulticlassHoldout.certify, []

    def first_misses(self: MulticlassHoldout, estimator: MulticlassDebiaser) -> object:
        cert = real(self, estimator)
        seen.append(estimator.eps_)
        # the first attempt's held-out gap is reported far above eps: the fit must move on
        return replace(cert, sample_gap=1.0, certified_eps=1.0 + cert.margin) if len(seen) == 1 else cert
    monkeypatch.setattr(MulticlassHoldout, "certify", first_misses)
    deb = MulticlassDebiaser(eps=0.5, confidence=0.9, random_state=0).fit(S, y, sensitive_features=g)
    top = 0.5 - deb.guarantee_.margin
    assert seen[:2] == pytest.approx([top, top * (HOLDOUT_ATTEMPTS - 1) / HOLDOUT_ATTEMPTS])
    assert deb.eps_ == pytest.approx(seen[1]) and deb.train_gap_ <= deb.eps_ + 1e-7
    assert deb.guarantee_.confidence == 0.9 and deb.certified_eps_ <= 0.5
