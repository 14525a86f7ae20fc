"""Estimators with ``confidence``: the certified gap covers the population's, the training tolerance is
tightened by the stated margin, and what cannot be certified is refused with the reason."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from fairopt.errors import CertificateWarning, DataValidationError, InfeasibleError
from fairopt.guarantees import dkw_margin
from fairopt.postprocessing import ThresholdDebiaser


def _population(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = (rng.uniform(size=n) < 0.3).astype(int)          # a 30 % minority
    eta = np.clip(rng.beta(2 + 2 * (1 - g), 3, size=n), 1e-3, 1 - 1e-3)
    y = (rng.uniform(size=n) < eta).astype(int)
    return 2 * eta - 1, g, y


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_certified_gap_covers_the_population(constraint: str) -> None:
    rng = np.random.default_rng(7)
    f_pop, g_pop, y_pop = _population(rng, 400_000)      # the population, to measure true rates
    conf, eps, misses, trials = 0.9, 0.3, 0, 40
    for _ in range(trials):
        f, g, y = _population(rng, 1500)
        deb = ThresholdDebiaser(constraint=constraint, eps=eps, confidence=conf, calibration=None)
        deb.fit(f, y, sensitive_features=g)
        assert deb.certified_eps_ <= eps + 1e-9
        assert deb.eps_ == pytest.approx(eps - deb.guarantee_.margin)
        p = deb.predict_proba(f_pop, sensitive_features=g_pop)[:, 1]
        masks = [np.ones_like(y_pop, bool)] if constraint == "demographic_parity" else [y_pop == 1, y_pop == 0]
        pop_gap = max(np.ptp([p[m & (g_pop == k)].mean() for k in (0, 1)]) for m in masks)
        misses += pop_gap > deb.certified_eps_
    assert misses / trials <= 1 - conf


def test_margin_is_the_union_bounded_dkw_slack() -> None:
    rng = np.random.default_rng(0)
    f, g, y = _population(rng, 3000)
    deb = ThresholdDebiaser(constraint="equalized_odds", eps=0.4, confidence=0.95).fit(f, y, sensitive_features=g)
    counts = np.array([[np.sum((g == k) & (y == c)) for c in (1, 0)] for k in (0, 1)])
    e = dkw_margin(counts, 0.05 / 4)
    assert deb.guarantee_.margin == pytest.approx(max(e[:, 0].sum(), e[:, 1].sum()))
    assert deb.guarantee_.method == "dkw" and len(deb.guarantee_.per_rate) == 4


def test_uncertifiable_eps_names_the_smallest_certifiable() -> None:
    rng = np.random.default_rng(1)
    f, g, y = _population(rng, 400)
    with pytest.raises(InfeasibleError, match="smallest certifiable eps") as info:
        ThresholdDebiaser(eps=0.05, confidence=0.95).fit(f, y, sensitive_features=g)
    tight = info.value.tightest["eps"]
    deb = ThresholdDebiaser(eps=tight + 1e-9, confidence=0.95).fit(f, y, sensitive_features=g)
    assert deb.certified_eps_ <= tight + 1e-6


def test_what_is_not_certified_is_refused() -> None:
    rng = np.random.default_rng(2)
    f, g, y = _population(rng, 500)
    with pytest.raises(DataValidationError, match="unweighted"):
        ThresholdDebiaser(eps=0.5, confidence=0.9).fit(f, y, sensitive_features=g,
                                                       sample_weight=rng.uniform(size=500))
    with pytest.raises(DataValidationError, match="compares no rates"):
        ThresholdDebiaser(constraint="covariance", eps=0.5, confidence=0.9).fit(f, y, sensitive_features=g)
    with pytest.raises((DataValidationError, ValueError)):
        ThresholdDebiaser(eps=0.5, confidence=1.0).fit(f, y, sensitive_features=g)
    plain = ThresholdDebiaser(eps=0.1).fit(f, y, sensitive_features=g)
    assert plain.guarantee_ is None and plain.eps_ == 0.1


def test_fair_classifier_holdout_certificate_covers_the_population() -> None:
    from sklearn.linear_model import LogisticRegression

    from fairopt.inprocessing import FairClassifier

    def draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        g = (rng.uniform(size=n) < 0.35).astype(int)
        X = np.column_stack([rng.normal(size=n) + 0.8 * g, rng.normal(size=n)])
        y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.5).astype(int)
        return X, g, y

    rng = np.random.default_rng(11)
    X_pop, g_pop, _ = draw(rng, 200_000)
    misses, trials, conf = 0, 12, 0.9
    for _ in range(trials):
        X, g, y = draw(rng, 2000)
        clf = FairClassifier(LogisticRegression(), eps=0.2, confidence=conf, random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CertificateWarning)
            clf.fit(X, y, sensitive_features=g)
        # a certified gap above eps is said, and only then
        assert (clf.certified_eps_ > 0.2) == any(issubclass(w.category, CertificateWarning) for w in caught)
        assert clf.guarantee_.method == "hoeffding-holdout" and clf.guarantee_.n_rows == 600
        p = clf.predict_proba(X_pop)[:, 1]
        pop_gap = max(abs(p[g_pop == k].mean() - p.mean()) for k in (0, 1))
        misses += pop_gap > clf.certified_eps_
    assert misses / trials <= 1 - conf
    with pytest.raises(InfeasibleError, match="smallest certifiable eps"):
        FairClassifier(LogisticRegression(), eps=0.01, confidence=0.95).fit(X, y, sensitive_features=g)
    with pytest.raises(DataValidationError, match="one number eps"):
        FairClassifier(LogisticRegression(), eps={0: 0.2, 1: 0.3}, confidence=0.95).fit(X, y, sensitive_features=g)



def test_fair_classifier_certifies_in_turn_on_a_fixed_schedule() -> None:
    """The training tolerance is one of the fixed attempts (eps - m) (3 - j) / 3 with m the
    union-bound margin (the confidence shared by three attempts); attempt j is kept only when
    every earlier attempt, refitted independently, failed to certify eps on the held-out rows."""
    from sklearn.linear_model import LogisticRegression

    from fairopt.guarantees import (
        HOLDOUT_ATTEMPTS,
        attempt_confidence,
        certification_split,
        gap_margin,
        holdout_certificate,
    )
    from fairopt.inprocessing import FairClassifier

    rng = np.random.default_rng(4)
    n, eps, conf = 3000, 0.15, 0.9
    g = (rng.uniform(size=n) < 0.4).astype(int)
    X = np.column_stack([rng.normal(size=n) + g, rng.normal(size=n)])
    y = (X[:, 0] + rng.normal(scale=0.8, size=n) > 0.6).astype(int)
    kept = []
    for seed in range(5):
        clf = FairClassifier(LogisticRegression(), eps=eps, confidence=conf, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CertificateWarning)
            clf.fit(X, y, sensitive_features=g)
        cert = clf.guarantee_
        assert cert.confidence == conf
        fit, held = certification_split(g, y, clf.certify_size, random_state=seed)
        counts = np.bincount(g[held], minlength=2)[:, None].astype(float)
        margin, _ = gap_margin(counts, attempt_confidence(conf, HOLDOUT_ATTEMPTS), kind="deviation",
                               pooled=[float(held.size)])
        assert cert.margin == pytest.approx(margin, rel=1e-12)
        top = eps - margin
        j = round((1 - clf.eps_ / top) * HOLDOUT_ATTEMPTS)
        assert clf.eps_ == pytest.approx(top * (HOLDOUT_ATTEMPTS - j) / HOLDOUT_ATTEMPTS, abs=1e-12)
        for i in range(j):     # every earlier attempt, refitted on the fitting rows (the game's B is that of
            # the asked eps), did not certify eps
            t = top * (HOLDOUT_ATTEMPTS - i) / HOLDOUT_ATTEMPTS
            earlier = FairClassifier(LogisticRegression(), eps=t, B=1 / eps, random_state=seed).fit(
                X[fit], y[fit], sensitive_features=g[fit])
            c = holdout_certificate(earlier.predict_proba(X[held])[:, 1], g[held], None,
                                    attempt_confidence(conf, HOLDOUT_ATTEMPTS))
            assert c.certified_eps > eps
        kept.append(j)
        assert cert.certified_eps <= eps + 1e-12 or j == HOLDOUT_ATTEMPTS - 1 or clf.eps_ == 0.0
    assert kept.count(0) >= 1 and max(kept) >= 1, kept    # both paths are exercised on this data
    # constant weights are an unweighted sample: accepted, and the game sees the fitting rows' weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CertificateWarning)
        weighted = FairClassifier(LogisticRegression(), eps=eps, confidence=conf, random_state=0).fit(
            X, y, sensitive_features=g, sample_weight=np.full(n, 2.0))
    assert weighted.guarantee_.n_rows == held.size and weighted.guarantee_.confidence == conf
