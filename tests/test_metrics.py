"""Tests for fairopt.metrics: hand-computed values, fairlearn agreement, exactness and invariances."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairopt.errors import DataValidationError
from fairopt.metrics import (
    covariance_difference_norm,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equalized_odds_difference,
    group_rates,
    group_summary,
    kl_divergence,
    ks_statistical_parity,
    representation_rate,
    statistical_parity_gamma,
    statistical_rate,
)

G2 = np.array(["a", "a", "a", "b", "b", "b"])


# --------------------------------------------------------------------------- hand-computed values
def test_rates_hand_computed():
    y = [1, 0, 1, 1, 0, 0]  # P(1|a) = 2/3, P(1|b) = 1/3
    assert statistical_rate(y, G2) == pytest.approx(0.5)
    assert demographic_parity_difference(None, y, sensitive_features=G2) == pytest.approx(1 / 3)
    assert demographic_parity_ratio(None, y, sensitive_features=G2) == pytest.approx(0.5)
    # overall rate 1/2: to_overall difference 1/6, ratio min(1/2 / 2/3, 1/3 / 1/2) = 2/3
    assert demographic_parity_difference(None, y, sensitive_features=G2, method="to_overall") == pytest.approx(1 / 6)
    assert demographic_parity_ratio(None, y, sensitive_features=G2, method="to_overall") == pytest.approx(2 / 3)
    w = [1, 1, 1, 1, 1, 3]  # P(1|b) = 1 / 5
    assert statistical_rate(y, G2, w) == pytest.approx(0.2 / (2 / 3))
    assert (demographic_parity_difference(None, y, sensitive_features=G2, sample_weight=w)
            == pytest.approx(2 / 3 - 1 / 5))
    assert representation_rate(G2) == 1.0
    assert representation_rate(G2, w) == pytest.approx((3 / 8) / (5 / 8))
    pd.testing.assert_series_equal(group_rates(y, G2), pd.Series([2 / 3, 1 / 3], index=["a", "b"], name="selection"))


def test_three_groups_and_labels():
    g = ["x", "y", "z", "x", "y", "z", "z"]
    y = ["yes", "no", "yes", "yes", "yes", "no", "no"]  # x: 1, y: 1/2, z: 1/3
    assert statistical_rate(y, g, pos_label="yes") == pytest.approx(1 / 3)
    assert demographic_parity_difference(None, y, sensitive_features=g, pos_label="yes") == pytest.approx(2 / 3)
    assert representation_rate(g) == pytest.approx(2 / 3)
    # pos_label=0 on hard labels: rates of the other class
    assert statistical_rate([1, 0, 1, 1, 0, 0], G2, pos_label=0) == pytest.approx((1 / 3) / (2 / 3))
    # {-1, +1} labels
    assert demographic_parity_difference(None, [1, -1, 1, 1, -1, -1], sensitive_features=G2) == pytest.approx(1 / 3)


def test_soft_predictions_are_expectations():
    y = [0.2, 0.4, 0.9, 0.1]  # a: 0.3, b: 0.5
    g = ["a", "a", "b", "b"]
    assert statistical_rate(y, g) == pytest.approx(0.6)
    assert demographic_parity_difference(None, y, sensitive_features=g) == pytest.approx(0.2)
    assert demographic_parity_difference(None, y, sensitive_features=g, pos_label=0) == pytest.approx(0.2)
    # expected TPR with soft predictions: y_true = [1, 0, 1, 0] -> TPR a 0.2, b 0.9
    assert equal_opportunity_difference([1, 0, 1, 0], y, sensitive_features=g) == pytest.approx(0.7)


def test_equal_opportunity_and_odds_hand_computed():
    y_true = [1, 1, 0, 1, 1, 0]
    y_pred = [1, 0, 1, 1, 1, 0]  # TPR a 1/2, b 1; FPR a 1, b 0
    assert equal_opportunity_difference(y_true, y_pred, sensitive_features=G2) == pytest.approx(0.5)
    assert equalized_odds_difference(y_true, y_pred, sensitive_features=G2) == pytest.approx(1.0)
    assert equalized_odds_difference(y_true, y_pred, sensitive_features=G2, agg="mean") == pytest.approx(0.75)
    assert equalized_odds_difference(y_true, y_pred, sensitive_features=G2, agg="sum") == pytest.approx(1.5)
    # weight 3 on row 0 (a, positive, predicted 1): TPR a = 3/4
    w = [3, 1, 1, 1, 1, 1]
    assert equal_opportunity_difference(y_true, y_pred, sensitive_features=G2, sample_weight=w) == pytest.approx(0.25)
    tab = group_summary(G2, y_pred=y_pred, y_true=y_true)
    np.testing.assert_allclose(tab["tpr"], [0.5, 1.0])
    np.testing.assert_allclose(tab["fpr"], [1.0, 0.0])
    np.testing.assert_allclose(tab["base_rate"], [2 / 3, 2 / 3])


def test_intersectional_groups_from_dataframe():
    sf = pd.DataFrame({"sex": ["F", "F", "M", "M", "F", "M"], "race": [0, 1, 0, 1, 0, 0]})
    y = [1, 0, 1, 1, 0, 0]
    # groups (F,0): rows 0,4 -> 1/2; (F,1): row 1 -> 0; (M,0): rows 2,5 -> 1/2; (M,1): row 3 -> 1
    rates = group_rates(y, sf)
    assert list(rates.index) == [("F", 0), ("F", 1), ("M", 0), ("M", 1)]
    np.testing.assert_allclose(rates.to_numpy(), [0.5, 0.0, 0.5, 1.0])
    assert rates.index.names == ["sex", "race"]
    assert demographic_parity_difference(None, y, sensitive_features=sf) == 1.0
    assert statistical_rate(y, sf) == 0.0
    assert representation_rate(sf) == pytest.approx(0.5)
    # a dict of columns and a 2-D array give the same groups
    assert demographic_parity_difference(None, y, sensitive_features={"s": sf["sex"], "r": sf["race"]}) == 1.0
    assert representation_rate(sf.to_numpy()) == pytest.approx(0.5)


def test_single_group_and_degenerate_rates():
    g = ["a"] * 4
    # issue 22: a fairness metric over one group is an error, not a perfect score (was 1.0 / 0.0)
    sf = {"sensitive_features": g}
    for metric, args, kw in [(statistical_rate, ([1, 0, 1, 1], g), {}),
                             (demographic_parity_difference, (None, [1, 0, 1, 1]), sf),
                             (demographic_parity_ratio, (None, [1, 0, 1, 1]), sf), (representation_rate, (g,), {}),
                             (ks_statistical_parity, ([0.1, 0.2, 0.3, 0.9], g), {}),
                             (equal_opportunity_difference, ([1, 0, 1, 1], [1, 0, 1, 1]), sf),
                             (equalized_odds_difference, ([1, 0, 1, 1], [1, 0, 1, 1]), sf)]:
        with pytest.raises(DataValidationError, match=f"{metric.__name__} compares groups.*single group"):
            metric(*args, **kw)
    # descriptive per-group tables still report one group
    assert group_rates([1, 0, 1, 1], g).tolist() == [0.75]
    # all-zero selection: equal rates, ratio 1 by convention
    assert statistical_rate([0, 0, 0, 0, 0, 0], G2) == 1.0
    # declared groups: an absent group has share 0
    assert representation_rate(g, groups=["a", "b"]) == 0.0
    assert group_rates(None, g, rate="share", groups=["a", "b"]).tolist() == [1.0, 0.0]


def test_ks_hand_computed():
    s = [0.1, 0.5, 0.9, 0.2, 0.3, 0.4]
    # z=0.5: P(f>=z|a)=2/3, pooled 2/6, b 0 -> |gamma| = 1/3 for both groups (the maximum)
    value, per = ks_statistical_parity(s, G2, return_groups=True)
    assert value == pytest.approx(1 / 3)
    np.testing.assert_allclose(per.to_numpy(), [1 / 3, 1 / 3])
    gam = statistical_parity_gamma(s, G2, grid=[0.2, 0.25, 0.4, 0.5, 1.0])
    np.testing.assert_allclose(gam.loc["a"].to_numpy(), [2 / 3 - 5 / 6, 2 / 3 - 4 / 6, 2 / 3 - 3 / 6, 1 / 3, 0])
    np.testing.assert_allclose(gam.loc["b"].to_numpy(), [1 - 5 / 6, 2 / 3 - 4 / 6, 1 / 3 - 3 / 6, -1 / 3, 0])
    assert ks_statistical_parity(s, G2, grid=[0.2, 0.25, 0.4]) == pytest.approx(1 / 6)


def test_kl_hand_computed():
    assert kl_divergence([0.5, 0.5], [0.25, 0.75], smoothing=0) == pytest.approx(
        0.5 * math.log(2) + 0.5 * math.log(2 / 3))
    assert kl_divergence([2, 2], [1, 3], smoothing=0) == pytest.approx(
        0.5 * math.log(2) + 0.5 * math.log(2 / 3))  # counts are normalised
    assert kl_divergence([1, 0], [0, 2], smoothing="laplace") == pytest.approx(math.log(4))  # q~ = [1/4, 3/4]
    assert kl_divergence([1, 1], [2, 0], smoothing=0) == math.inf
    s = 1e-7
    expect = 0.5 * math.log(0.5 * (1 + 2 * s) / (1 + s)) + 0.5 * math.log(0.5 * (1 + 2 * s) / s)
    assert kl_divergence([1, 1], [2, 0]) == pytest.approx(expect, rel=1e-12)
    # a larger domain takes more smoothing mass: q~ = (q + s) / (1 + s * 10)
    expect10 = 0.5 * math.log(0.5 * (1 + 10 * s) / (1 + s)) + 0.5 * math.log(0.5 * (1 + 10 * s) / s)
    assert kl_divergence([1, 1], [2, 0], domain_size=10) == pytest.approx(expect10, rel=1e-12)


def test_kl_records_align_by_value():
    p = pd.DataFrame({"a": [0, 0, 1, 1], "b": ["x", "y", "x", "x"]})  # (0,x) .25 (0,y) .25 (1,x) .5
    q = pd.DataFrame({"b": ["x", "x", "y", "z"], "a": [0, 1, 0, 1]})  # (0,x) (1,x) (0,y) (1,z) .25 each
    expect = 0.25 * math.log(1) + 0.25 * math.log(1) + 0.5 * math.log(2)
    assert kl_divergence(p, q, smoothing=0) == pytest.approx(expect)
    # same via counts Series aligned by index, and via aligned arrays over the union of cells
    pc = pd.Series({"0x": 1, "0y": 1, "1x": 2})
    qc = pd.Series({"0x": 1, "1x": 1, "0y": 1, "1z": 1})
    assert kl_divergence(pc, qc, smoothing=0) == pytest.approx(expect)
    assert kl_divergence(p, q) == pytest.approx(kl_divergence([1, 1, 2, 0], [1, 1, 1, 1]), rel=1e-12)
    # weights equal repeated records
    pw = pd.DataFrame({"a": [0, 0, 1], "b": ["x", "y", "x"]})
    assert kl_divergence(pw, q, sample_weight_p=[1, 1, 2]) == pytest.approx(kl_divergence(p, q), rel=1e-12)


def test_covariance_hand_computed_and_symmetry(rng):
    assert covariance_difference_norm([[0.0], [2.0]], [[0.0], [4.0]]) == pytest.approx(3.0)  # var 1 vs 4
    X1 = np.array([[0.0, 0.0], [2.0, 2.0]])  # cov [[1, 1], [1, 1]]
    X2 = np.array([[0.0, 0.0], [2.0, -2.0]])  # cov [[1, -1], [-1, 1]]
    assert covariance_difference_norm(X1, X2) == pytest.approx(math.sqrt(8))
    assert covariance_difference_norm(X1, X2, squared=True) == pytest.approx(8.0)
    assert covariance_difference_norm(X1 * 5, X2, kind="corr", squared=True) == pytest.approx(8.0)
    assert covariance_difference_norm(X1, X1, ddof=1) == 0.0
    A, B = rng.normal(size=(50, 4)), rng.normal(size=(70, 4)) @ rng.normal(size=(4, 4))
    wa, wb = rng.uniform(0, 2, 50), rng.uniform(0, 2, 70)
    assert covariance_difference_norm(A, B, wa, wb) == pytest.approx(covariance_difference_norm(B, A, wb, wa))
    ref = np.linalg.norm(np.cov(A, rowvar=False, aweights=wa, ddof=0) - np.cov(B, rowvar=False, aweights=wb, ddof=0))
    assert covariance_difference_norm(A, B, wa, wb) == pytest.approx(ref, rel=1e-10)
    ref1 = np.linalg.norm(np.cov(A, rowvar=False) - np.cov(B, rowvar=False))
    assert covariance_difference_norm(A, B, ddof=1) == pytest.approx(ref1, rel=1e-10)
    refc = np.sum((np.corrcoef(A, rowvar=False) - np.corrcoef(B, rowvar=False)) ** 2)
    assert covariance_difference_norm(A, B, kind="corr", squared=True) == pytest.approx(refc, rel=1e-10)
    # DataFrames align by column name
    dA, dB = pd.DataFrame(A, columns=list("pqrs")), pd.DataFrame(B, columns=list("pqrs"))
    assert covariance_difference_norm(dA, dB[list("srqp")]) == pytest.approx(covariance_difference_norm(A, B))


# --------------------------------------------------------------------------- fairlearn agreement
def _random_case(rng, n=300):
    k = int(rng.integers(2, 6))
    while True:
        g = rng.integers(0, k, n)
        y = rng.integers(0, 2, n)
        if all(len(np.unique(y[g == j])) == 2 for j in range(k)):
            break
    p = np.clip(0.3 + 0.1 * g + 0.2 * y, 0, 1)
    yhat = (rng.random(n) < p).astype(int)
    return y, yhat, g, rng.integers(1, 5, n).astype(float)


@pytest.mark.parametrize("seed", range(8))
def test_agreement_with_fairlearn(seed):
    flm = pytest.importorskip("fairlearn.metrics")
    rng = np.random.default_rng(seed)
    y, yhat, g, w = _random_case(rng)
    sf = pd.Series(np.array([f"g{v}" for v in g]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sw in (None, w):
            for method in ("between_groups", "to_overall"):
                kw = dict(sensitive_features=sf, sample_weight=sw, method=method)
                assert demographic_parity_difference(None, yhat, **kw) == pytest.approx(
                    flm.demographic_parity_difference(y, yhat, **kw), abs=1e-12)
                assert demographic_parity_ratio(None, yhat, **kw) == pytest.approx(
                    flm.demographic_parity_ratio(y, yhat, **kw), abs=1e-12)
                assert equal_opportunity_difference(y, yhat, **kw) == pytest.approx(
                    flm.equal_opportunity_difference(y, yhat, **kw), abs=1e-12)
                for agg in ("worst_case", "mean"):
                    assert equalized_odds_difference(y, yhat, agg=agg, **kw) == pytest.approx(
                        flm.equalized_odds_difference(y, yhat, agg=agg, **kw), abs=1e-12)
            assert statistical_rate(yhat, sf, sw) == pytest.approx(
                flm.demographic_parity_ratio(y, yhat, sensitive_features=sf, sample_weight=sw), abs=1e-12)


# --------------------------------------------------------------------------- KS exactness and invariances
def _ks_brute(s, g, w):
    """Definition, evaluated at every observed value and just above the maximum."""
    z = np.append(np.unique(s), np.inf)
    above = (s[:, None] >= z[None, :]).astype(float) * w[:, None]
    pooled = above.sum(0) / w.sum()
    return max(np.abs(above[g == a].sum(0) / w[g == a].sum() - pooled).max() for a in np.unique(g))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 8), min_size=n, max_size=n),
    st.lists(st.integers(0, 2), min_size=n, max_size=n),
    st.lists(st.integers(1, 4), min_size=n, max_size=n))))
def test_ks_exact_sweep_equals_brute_force(data):
    s, g, w = (np.asarray(v) for v in data)
    if np.unique(g).size < 2:   # issue 22: one group is an error, not a disparity of 0
        with pytest.raises(DataValidationError, match="single group"):
            ks_statistical_parity(s, g, w)
        return
    s = s / 8.0
    w = w.astype(float)
    assert ks_statistical_parity(s, g, w) == pytest.approx(_ks_brute(s, g, w), abs=1e-12)
    # between observed values nothing larger hides: a dense grid never beats the exact sweep
    dense = np.linspace(-0.1, 1.1, 241)
    assert ks_statistical_parity(s, g, w, grid=dense) <= ks_statistical_parity(s, g, w) + 1e-12
    # repeated rows equal integer weights
    rep = np.repeat(np.arange(len(s)), w.astype(int))
    assert ks_statistical_parity(s[rep], g[rep]) == pytest.approx(ks_statistical_parity(s, g, w), abs=1e-12)


def test_ks_random_large_matches_brute_and_invariance(rng):
    n = 3000
    g = rng.integers(0, 4, n)
    s = rng.normal(size=n) + 0.3 * g
    w = rng.uniform(0, 3, n)
    exact, per = ks_statistical_parity(s, g, w, return_groups=True)
    assert exact == pytest.approx(_ks_brute(s, g, w), abs=1e-12)
    for f in (np.exp, lambda x: x ** 3 + 2 * x, lambda x: np.argsort(np.argsort(x))):
        v2, per2 = ks_statistical_parity(f(s), g, w, return_groups=True)
        assert v2 == pytest.approx(exact, abs=1e-12)
        np.testing.assert_allclose(per2.to_numpy(), per.to_numpy(), atol=1e-12)
    # grid form: moments sum to 0 with group-share weights, and max |gamma| is the grid disparity
    grid = np.linspace(-2, 3, 41)
    gam = statistical_parity_gamma(s, g, grid, w)
    shares = group_rates(None, g, sample_weight=w, rate="share").to_numpy()
    np.testing.assert_allclose(shares @ gam.to_numpy(), 0.0, atol=1e-12)
    assert np.abs(gam.to_numpy()).max() == pytest.approx(ks_statistical_parity(s, g, w, grid=grid))


# --------------------------------------------------------------------------- weights = repeated rows
def test_weights_equal_repeated_rows(rng):
    n = 80
    y, yhat, g, w = _random_case(rng, n)
    wi = w.astype(int)
    rep = np.repeat(np.arange(n), wi)
    soft = rng.random(n)
    cases = [
        (lambda *a: statistical_rate(a[1], a[2], a[3])),
        (lambda *a: demographic_parity_difference(None, soft[a[4]], sensitive_features=a[2], sample_weight=a[3])),
        (lambda *a: equal_opportunity_difference(a[0], a[1], sensitive_features=a[2], sample_weight=a[3])),
        (lambda *a: equalized_odds_difference(a[0], a[1], sensitive_features=a[2], sample_weight=a[3])),
        (lambda *a: representation_rate(a[2], a[3])),
        (lambda *a: ks_statistical_parity(soft[a[4]], a[2], a[3])),
    ]
    for fn in cases:
        weighted = fn(y, yhat, g, w, np.arange(n))
        repeated = fn(y[rep], yhat[rep], g[rep], None, rep)
        assert weighted == pytest.approx(repeated, abs=1e-12)
    X1, X2 = rng.normal(size=(n, 3)), rng.normal(size=(30, 3))
    for ddof in (0, 1):
        assert covariance_difference_norm(X1, X2, w, ddof=ddof) == pytest.approx(
            covariance_difference_norm(X1[rep], X2, ddof=ddof), rel=1e-10)
    # scaling all weights changes nothing (ddof=0)
    assert statistical_rate(yhat, g, 3.5 * w) == pytest.approx(statistical_rate(yhat, g, w))


def test_kl_identity_and_nonnegativity(rng):
    p = rng.integers(0, 20, 50).astype(float)
    assert kl_divergence(p, p, smoothing=0) == 0.0
    assert kl_divergence(p, 3 * p) == pytest.approx(0.0, abs=1e-9)  # smoothing moves q by ~1e-7 per cell
    records = pd.DataFrame({"u": rng.integers(0, 3, 200), "v": rng.integers(0, 4, 200)})
    assert kl_divergence(records, records.sample(frac=1.0, random_state=0)) == pytest.approx(0.0, abs=1e-9)
    for _ in range(20):
        a, b = rng.random(30), rng.random(30)
        assert kl_divergence(a, b) >= 0.0


# --------------------------------------------------------------------------- validation
def test_errors_are_typed_and_say_what_to_fix():
    with pytest.raises(DataValidationError, match="same length"):
        statistical_rate([1, 0, 1], G2)
    with pytest.raises(DataValidationError, match="missing"):
        statistical_rate([1, 0, np.nan, 1, 0, 0], G2)
    with pytest.raises(DataValidationError, match="missing"):
        statistical_rate([1, 0, 1, 1, 0, 0], ["a", None, "a", "b", "b", "b"])
    with pytest.raises(DataValidationError, match="negative"):
        statistical_rate([1, 0, 1, 1, 0, 0], G2, [1, 1, -1, 1, 1, 1])
    with pytest.raises(DataValidationError, match="'b'"):  # zero-weight group named
        statistical_rate([1, 0, 1, 1, 0, 0], G2, [1, 1, 1, 0, 0, 0])
    with pytest.raises(DataValidationError, match=r"true positive rate.*'b'"):
        equal_opportunity_difference([1, 1, 0, 0, 0, 0], [1, 0, 1, 1, 0, 0], sensitive_features=G2)
    with pytest.raises(DataValidationError, match="false positive rate"):
        equalized_odds_difference([1, 0, 0, 1, 1, 1], [1, 0, 1, 1, 0, 0], sensitive_features=G2)
    with pytest.raises(DataValidationError, match="binary"):
        equal_opportunity_difference([0, 1, 2, 0, 1, 2], [1, 0, 1, 1, 0, 0], sensitive_features=G2)
    with pytest.raises(DataValidationError, match="ks_statistical_parity"):
        statistical_rate([-1.5, 0.2, 3.0, 1, 0, 2], G2)
    with pytest.raises(DataValidationError, match="pos_label"):
        statistical_rate(["no", "yes"] * 3, G2)
    with pytest.raises(DataValidationError, match="pos_label"):
        statistical_rate([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], G2, pos_label=2)
    with pytest.raises(DataValidationError, match="method"):
        demographic_parity_difference(None, [1, 0, 1, 1, 0, 0], sensitive_features=G2, method="pairwise")
    with pytest.raises(DataValidationError, match="agg"):
        equalized_odds_difference([1, 0] * 3, [1, 0] * 3, sensitive_features=G2, agg="max")
    with pytest.raises(DataValidationError, match="not in the declared groups"):
        representation_rate(G2, groups=["a"])
    with pytest.raises(DataValidationError, match="non-finite"):
        ks_statistical_parity([0.1, np.inf, 0.3, 0.4, 0.5, 0.6], G2)
    with pytest.raises(DataValidationError, match="empty"):
        ks_statistical_parity([0.1] * 6, G2, grid=[])
    with pytest.raises(DataValidationError, match="negative"):
        kl_divergence([1, -1], [1, 1])
    with pytest.raises(DataValidationError, match="same shape"):
        kl_divergence([1, 1, 1], [1, 1])
    with pytest.raises(DataValidationError, match=r"same .*columns"):
        kl_divergence(pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [1]}))
    with pytest.raises(DataValidationError, match="smoothing"):
        kl_divergence([1, 1], [1, 1], smoothing="add-one")
    with pytest.raises(DataValidationError, match="domain_size"):
        kl_divergence([1, 1, 1], [1, 1, 1], domain_size=2)
    with pytest.raises(DataValidationError, match="columns"):
        covariance_difference_norm(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(DataValidationError, match="constant column"):
        covariance_difference_norm(pd.DataFrame({"c": [1.0, 1.0], "d": [0.0, 1.0]}),
                                   pd.DataFrame({"c": [0.0, 1.0], "d": [0.0, 1.0]}), kind="corr")
    with pytest.raises(DataValidationError, match="non-numeric"):
        covariance_difference_norm(pd.DataFrame({"c": ["x", "y"]}), pd.DataFrame({"c": ["x", "y"]}))
    with pytest.raises(DataValidationError, match="ddof"):
        covariance_difference_norm([[1.0, 2.0]], [[1.0, 2.0], [0.0, 0.0]], ddof=1)


# --------------------------------------------------------------------------- fairlearn's signatures (issue 24)
def test_fairlearn_call_gives_fairlearn_number():
    flm = pytest.importorskip("fairlearn.metrics")
    from fairopt import metrics as fm
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    yhat = rng.integers(0, 2, 300)
    s = rng.choice(["a", "b", "c"], 300)
    w = rng.uniform(0.5, 2.0, 300)
    # the very call a fairlearn user writes, on both packages
    for name in ("demographic_parity_difference", "demographic_parity_ratio", "equal_opportunity_difference",
                 "equalized_odds_difference"):
        if not hasattr(flm, name):
            continue
        for kw in ({}, {"sample_weight": w}, {"method": "to_overall"}):
            ours = getattr(fm, name)(y, yhat, sensitive_features=s, **kw)
            theirs = getattr(flm, name)(y, yhat, sensitive_features=s, **kw)
            assert ours == pytest.approx(theirs, abs=1e-12), (name, kw)
    assert fm.demographic_parity_difference(y, yhat, sensitive_features=s) > 0.01   # not a vacuous 0 == 0


def test_old_positional_form_raises_instead_of_misreading():
    from fairopt.metrics import MetricSignatureError
    y, g = [1, 0, 1, 1, 0, 0], G2
    with pytest.raises(MetricSignatureError, match="sensitive_features="):
        demographic_parity_difference(y, g)              # old (y_pred, sensitive_features): g would be y_pred
    with pytest.raises(TypeError, match="old fairopt form"):
        demographic_parity_ratio(y, sensitive_features=g)
    with pytest.raises(MetricSignatureError, match="keyword-only"):
        equal_opportunity_difference(y, y, g)
    with pytest.raises(MetricSignatureError, match="keyword-only"):
        demographic_parity_difference(None, y, g, [1] * 6)


def test_metric_frame_matches_fairlearn():
    fl = pytest.importorskip("fairlearn.metrics")
    from sklearn.metrics import accuracy_score, recall_score

    from fairopt.metrics import MetricFrame
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 200)
    yhat = rng.integers(0, 2, 200)
    sf = pd.DataFrame({"sex": rng.choice(["f", "m"], 200), "race": rng.choice(["x", "y"], 200)})
    w = rng.uniform(0.5, 2.0, 200)
    metrics = {"acc": accuracy_score, "rec": recall_score}
    params = {"acc": {"sample_weight": w}, "rec": {"sample_weight": w}}
    ours = MetricFrame(metrics=metrics, y_true=y, y_pred=yhat, sensitive_features=sf, sample_params=params)
    theirs = fl.MetricFrame(metrics=metrics, y_true=y, y_pred=yhat, sensitive_features=sf, sample_params=params)
    np.testing.assert_allclose(ours.by_group.to_numpy(), theirs.by_group.to_numpy(), atol=1e-12)
    assert list(ours.by_group.index) == list(theirs.by_group.index)
    np.testing.assert_allclose(ours.overall.to_numpy(), theirs.overall.to_numpy(), atol=1e-12)
    for method in ("between_groups", "to_overall"):
        np.testing.assert_allclose(ours.difference(method).to_numpy(), theirs.difference(method=method).to_numpy(),
                                   atol=1e-12)
        np.testing.assert_allclose(ours.ratio(method).to_numpy(), theirs.ratio(method=method).to_numpy(), atol=1e-12)
    one = MetricFrame(metrics=accuracy_score, y_true=y, y_pred=yhat, sensitive_features=sf["sex"])
    ref = fl.MetricFrame(metrics=accuracy_score, y_true=y, y_pred=yhat, sensitive_features=sf["sex"])
    assert one.overall == pytest.approx(ref.overall) and one.difference() == pytest.approx(ref.difference())
    with pytest.raises(DataValidationError, match="method"):
        one.ratio("pairwise")


def test_scalar_sensitive_features_is_a_data_validation_error():
    from fairopt.errors import DataValidationError
    from fairopt.metrics import group_rates
    with pytest.raises(DataValidationError, match="scalar 0"):
        group_rates(1, 0)
