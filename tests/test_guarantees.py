"""The margins of fairopt.guarantees cover the population with the stated probability."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fairopt.errors import DataValidationError
from fairopt.guarantees import check_confidence, dkw_margin, gap_margin, hoeffding_margin, range_margin


def test_dkw_margin_covers_every_threshold_rule_at_once() -> None:
    """Over 2,000 samples of n = 200 Beta(2, 5) scores, the sup-deviation of the empirical CDF
    (hence of every threshold rule's rate) exceeds the DKW margin at most delta of the time."""
    rng = np.random.default_rng(0)
    n, delta, trials = 200, 0.1, 2000
    m = float(dkw_margin(n, delta))
    s = np.sort(rng.beta(2, 5, size=(trials, n)), axis=1)
    F = stats.beta(2, 5).cdf(s)
    i = np.arange(1, n + 1)
    sup = np.maximum(np.abs(i / n - F), np.abs((i - 1) / n - F)).max(axis=1)   # exact KS statistic
    miss = float(np.mean(sup > m))
    assert miss <= delta            # the bound is conservative: observed ~0.07 at delta = 0.1
    assert miss > 0.01              # and not vacuous


def test_hoeffding_is_the_two_sided_mean_bound() -> None:
    rng = np.random.default_rng(1)
    n, delta = 300, 0.05
    p = rng.uniform(size=n)         # a fixed randomized rule's probabilities on held-out rows
    draws = rng.uniform(size=(4000, n)) < p
    miss = np.mean(np.abs(draws.mean(axis=1) - p.mean()) > hoeffding_margin(n, delta))
    assert miss <= delta


def test_gap_margin_union_bound_and_kinds() -> None:
    counts = np.array([[500, 200], [800, 900], [100, 50]])
    margin, rates = gap_margin(counts, 0.9)
    e = dkw_margin(counts, 0.1 / 6)
    assert margin == pytest.approx(max(np.sort(e[:, c])[-2:].sum() for c in range(2)))
    assert len(rates) == 6
    dev, rates = gap_margin(counts, 0.9, kind="deviation")
    e, e0 = dkw_margin(counts, 0.1 / 8), dkw_margin(counts.sum(axis=0), 0.1 / 8)
    assert dev == pytest.approx(float(np.max(e.max(axis=0) + e0)))
    assert len(rates) == 8
    assert range_margin([0.3, 0.1]) == pytest.approx(0.4)


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.9", None])
def test_confidence_is_validated(bad: object) -> None:
    with pytest.raises(DataValidationError, match="strictly between 0 and 1"):
        check_confidence(bad, "here")


def test_empty_groups_cannot_be_certified() -> None:
    with pytest.raises(DataValidationError, match="no rows cannot be certified"):
        gap_margin([[10], [0]], 0.9)


def test_holdout_certificate_covers_a_fixed_rule() -> None:
    """A fixed randomized rule with a known population gap: the held-out certificate's bound is
    below the population gap at most 1 - confidence of the time."""
    from fairopt.guarantees import certification_split, holdout_certificate
    rng = np.random.default_rng(3)
    miss = 0
    trials = 300
    for _ in range(trials):
        g = rng.integers(0, 3, 900)
        x = rng.uniform(size=900)
        proba = np.clip(x + 0.1 * g, 0, 1)          # population rates E[min(U + 0.1 g, 1)]
        fit, cert = certification_split(g, None, 0.5, random_state=int(rng.integers(1 << 30)))
        assert np.intersect1d(fit, cert).size == 0 and fit.size + cert.size == 900
        c = holdout_certificate(proba[cert], g[cert], None, 0.9)
        pop = np.array([0.5, 0.5 + 0.1 - 0.005, 0.5 + 0.2 - 0.02])   # exact: E[min(U + s, 1)] = 1/2 + s - s^2/2
        pooled = pop.mean()
        miss += c.certified_eps < np.max(np.abs(pop - pooled))
    assert miss / trials <= 0.1


def test_certify_in_turn_follows_its_fixed_schedule() -> None:
    """Tolerances are fixed in advance (not moved by the held-out results), the first certified
    attempt is kept, otherwise the smallest certificate, and the overall confidence is reported."""
    from fairopt.errors import InfeasibleError
    from fairopt.guarantees import Certificate, attempt_confidence, certify_in_turn

    def run(excess: dict[int, float]) -> tuple[list[float], tuple]:
        tried: list[float] = []

        def fit(t: float) -> int:
            tried.append(t)
            return len(tried) - 1

        def certify(j: int) -> Certificate:
            return Certificate(attempt_confidence(0.9), tried[j] + excess[j] + 0.05, tried[j] + excess[j], 0.05,
                               "hoeffding-holdout")
        return tried, certify_in_turn(fit, certify, 0.2, 0.05, 0.9, "here", attempts=3)

    tried, (state, cert, t) = run({0: -0.01, 1: 0.0, 2: 0.0})
    assert tried == [pytest.approx(0.15)] and state == 0 and cert.confidence == 0.9
    tried, (state, cert, t) = run({0: 0.04, 1: 0.02, 2: 0.0})
    np.testing.assert_allclose(tried, [0.15, 0.1])         # 0.1 + 0.02 + 0.05 <= 0.2: stop there
    assert state == 1 and t == pytest.approx(0.1)
    tried, (state, cert, t) = run({0: 0.2, 1: 0.3, 2: 0.16})
    np.testing.assert_allclose(tried, [0.15, 0.1, 0.05])   # none holds: the smallest certificate
    assert state == 2 and cert.certified_eps == pytest.approx(0.26)
    with pytest.raises(InfeasibleError) as err:
        certify_in_turn(lambda t: t, lambda t: None, 0.04, 0.05, 0.9, "here")
    assert err.value.tightest == {"eps": 0.05}


@pytest.mark.parametrize("attempts", [0, -1, 1.5, True, "3"])
def test_attempt_confidence_refuses_bad_attempts(attempts: object) -> None:
    from fairopt.guarantees import attempt_confidence
    with pytest.raises(DataValidationError, match="positive integer"):
        attempt_confidence(0.95, attempts)  # type: ignore[arg-type]
