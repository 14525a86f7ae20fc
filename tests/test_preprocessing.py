"""Pre-processing estimators: MaxEntResampler and the reweighting / TV-repair baselines."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from fairopt.data import load_builtin
from fairopt.errors import DataValidationError, NotFittedError, SolverError
from fairopt.metrics import representation_rate, statistical_rate
from fairopt.preprocessing import MaxEntResampler, RepresentationReweighing, Reweighing, TVRepairResampler


@pytest.fixture(scope="module")
def compas():
    df = load_builtin("compas").expand(shuffle=True, random_state=1)
    return df.drop(columns="two_year_recid"), df["two_year_recid"]


def test_maxent_resampler_fit_attributes_and_exact_rates(compas):
    X, y = compas
    m = MaxEntResampler(C=0.5, target="balanced", random_state=0).fit(X, y, "race")
    assert (m.marginals() - m.theta_).abs().max() <= 1e-8 and m.max_violation_ <= 1e-8
    assert m.n_iter_ >= 1 and m.solve_seconds_ > 0 and m.kl_ > 0
    assert m.theta_["race=Caucasian"] == pytest.approx(0.5, abs=1e-15)
    # lambda_: reference (first, here sorted) levels carry 0
    assert m.lambda_["race=Caucasian"] == 0.0 and m.lambda_["race=Not-Caucasian"] != 0.0
    assert m.lambda_.index.equals(m.theta_.index)
    # prior weights: Algorithm 1, so the weighted training data have statistical rate exactly 1
    assert m.prior_weights_.shape == (len(X),) and m.prior_weights_.sum() == pytest.approx(1, abs=1e-12)
    assert statistical_rate(y, X["race"], sample_weight=m.prior_weights_) == pytest.approx(1, abs=1e-12)
    assert m.statistical_rate("prior") == pytest.approx(1, abs=1e-12)
    assert m.representation_rate() == pytest.approx(1, abs=1e-8)
    # exact rates agree with a large sample
    s = m.sample(400_000, random_state=3)
    assert statistical_rate(s["two_year_recid"], s["race"]) == pytest.approx(m.statistical_rate(), abs=0.01)
    assert representation_rate(s["race"]) == pytest.approx(m.representation_rate(), abs=0.01)


def test_prior_rates_follow_a_refit_on_new_labels(compas):
    X, y = compas
    keep = np.random.default_rng(0).random(len(y)) < 0.3            # Caucasian positives mostly dropped
    flipped = pd.Series(np.where(X["race"] == "Caucasian", y * keep, y), name=y.name, index=y.index)
    m = MaxEntResampler(prior="data", target="prior").fit(X, y, "race")
    before = m.statistical_rate("prior")
    m.fit(X, flipped, "race")
    fresh = MaxEntResampler(prior="data", target="prior").fit(X, flipped, "race")
    assert m.statistical_rate("prior") == fresh.statistical_rate("prior")
    assert abs(m.statistical_rate("prior") - before) > 0.1        # the labels did change the prior
    assert (m.marginals("prior") == fresh.marginals("prior")).all()


def test_sample_keeps_columns_values_and_dtypes(compas):
    X, y = compas
    Xc = X.assign(age_cat=pd.Categorical(X["age_cat"], categories=["Less than 25", "25 - 45",
                                                                      "Greater than 45"]))
    m = MaxEntResampler(random_state=5).fit(Xc, y, "sex")
    s = m.sample(1000)
    assert list(s.columns) == [*list(X.columns), "two_year_recid"]
    assert isinstance(s["age_cat"].dtype, pd.CategoricalDtype)
    assert list(s["age_cat"].cat.categories) == ["Less than 25", "25 - 45", "Greater than 45"]
    for c in X.columns:
        assert set(s[c].astype(str)) <= set(X[c].astype(str))
    assert set(s["two_year_recid"]) <= {0, 1} and s["two_year_recid"].dtype == y.dtype
    pd.testing.assert_frame_equal(m.sample(1000), s)                 # default random_state
    pd.testing.assert_frame_equal(m.sample(50, random_state=9), m.sample(50, random_state=9))
    prior = m.sample(2000, random_state=1, distribution="prior")
    assert list(prior.columns) == list(s.columns)


def test_external_sensitive_feature_and_user_target(compas):
    X, y = compas
    z = X["race"].rename("group")
    Xn = X.drop(columns="race")
    target = {c: None for c in [*list(Xn.columns), "group", "two_year_recid"]}
    base = MaxEntResampler(target="data").fit(Xn, y, z)
    theta = {k.split("=")[0]: None for k in base.theta_.index}
    for key in theta:
        theta[key] = base.theta_[[i for i in base.theta_.index if i.split("=")[0] == key]].to_numpy()
    theta["group"] = {"Caucasian": 0.4, "Not-Caucasian": 0.6}
    m = MaxEntResampler(target=theta).fit(Xn, y, z)
    assert "group" in m.sample(10).columns and len(target) == len(theta)
    assert m.marginals()["group=Caucasian"] == pytest.approx(0.4, abs=1e-9)
    assert m.representation_rate() == pytest.approx(0.4 / 0.6, abs=1e-9)


def test_solver_choice_gives_same_marginals(compas):
    X, y = compas
    a = MaxEntResampler(target="weighted").fit(X, y, "sex")
    b = MaxEntResampler(target="weighted", solver="cvxpy:CLARABEL").fit(X, y, "sex")
    assert (a.marginals() - b.marginals()).abs().max() <= 1e-6


def test_estimator_conventions_and_errors(compas):
    X, y = compas
    est = MaxEntResampler(C=0.3, target="data", tau=0.8)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.sample(5)
    with pytest.raises(DataValidationError, match="not a column"):
        MaxEntResampler().fit(X, y, "gender")
    with pytest.raises(DataValidationError, match="DataFrame"):
        MaxEntResampler().fit(X.to_numpy(), y, "sex")
    with pytest.raises(DataValidationError, match="also a column"):
        MaxEntResampler().fit(X.assign(two_year_recid=1), y, "sex")
    with pytest.raises(DataValidationError, match="missing values"):
        MaxEntResampler().fit(X.assign(sex=X["sex"].where(X.index != X.index[0])), y, "sex")
    with pytest.raises(SolverError, match="did not converge"):
        MaxEntResampler(tol=1e-14, max_iter=1).fit(X, y, "sex")
    # tau sets the representation rate of θ^w (τ scales the first level, here Female)
    m = MaxEntResampler(target="weighted", tau=0.8).fit(X, y, "sex")
    assert m.representation_rate() == pytest.approx(0.8, abs=1e-8)


def test_declared_but_unseen_level_needs_smoothing(compas):
    from fairopt.data import Domain

    X, y = compas
    frame = X.assign(two_year_recid=y)
    dom = Domain.from_frame(frame, levels={"priors_count": ["0", "1-3", ">3", "unused"]})
    with pytest.raises(DataValidationError, match="'priors_count' level 'unused'"):
        MaxEntResampler(domain=dom).fit(X, y, "sex")
    m = MaxEntResampler(domain=dom, theta_smoothing=1e-6).fit(X, y, "sex")
    assert m.marginals()["priors_count=unused"] == pytest.approx(1e-6 / 4, abs=1e-8)


@pytest.mark.parametrize("protected", ["race", "sex"])
def test_reweighing_and_representation_weights(compas, protected):
    X, y = compas
    kc = Reweighing(random_state=0).fit(X, y, protected)
    assert kc.sample_weight_.mean() == pytest.approx(1, abs=1e-12)
    assert statistical_rate(y, X[protected], sample_weight=kc.sample_weight_) == pytest.approx(1, abs=1e-12)
    assert representation_rate(X[protected], sample_weight=kc.sample_weight_) == \
        pytest.approx(representation_rate(X[protected]), abs=1e-12)
    rw = RepresentationReweighing(random_state=0).fit(X, y, protected)
    assert representation_rate(X[protected], sample_weight=rw.sample_weight_) == pytest.approx(1, abs=1e-12)
    assert statistical_rate(y, X[protected], sample_weight=rw.sample_weight_) == \
        pytest.approx(statistical_rate(y, X[protected]), abs=1e-12)
    s = kc.sample(200_000, random_state=2)
    assert statistical_rate(s["two_year_recid"], s[protected]) == pytest.approx(1, abs=0.02)
    pd.testing.assert_frame_equal(kc.sample(100), kc.sample(100))
    assert list(s.columns) == [*list(X.columns), "two_year_recid"]


def test_tv_repair_resampler_reaches_parity_and_keeps_groups(compas):
    X, y = compas
    tv = TVRepairResampler(statistical_rate=1.0, representation="data").fit(X, y, "race")
    assert tv.tv_ > 0 and tv.point_weights_.sum() == pytest.approx(1, abs=1e-12)
    z = tv.points_[:, tv.domain_.index("race")]
    lab = tv.points_[:, tv.domain_.index("two_year_recid")] == 1
    w = tv.point_weights_
    rates = np.bincount(z, w * lab) / np.bincount(z, w)
    assert rates.min() / rates.max() >= 1 - 1e-7
    shares = np.bincount(z, w)
    raw = X["race"].value_counts(normalize=True)
    levels = tv.domain_.levels["race"]
    np.testing.assert_allclose(shares, [raw[v] for v in levels], atol=1e-7)


# ------------------------------------------------------------------------- sample weights
RESAMPLERS = [MaxEntResampler, Reweighing, RepresentationReweighing, TVRepairResampler]
BAD_WEIGHTS = {"nan": (lambda n: np.where(np.arange(n) == 7, np.nan, 1.0), "missing value"),
               "inf": (lambda n: np.where(np.arange(n) == 7, np.inf, 1.0), "non-finite"),
               "negative": (lambda n: np.where(np.arange(n) == 3, -1.0, 1.0), "negative value"),
               "length": (lambda n: np.ones(n - 1), "rows but the other inputs have"),
               "all zero": (lambda n: np.zeros(n), "sums to 0")}


@pytest.mark.parametrize("bad", list(BAD_WEIGHTS))
@pytest.mark.parametrize("cls", RESAMPLERS, ids=lambda c: c.__name__)
def test_resamplers_reject_bad_sample_weights(compas, cls, bad):
    X, y = compas
    make, message = BAD_WEIGHTS[bad]
    with pytest.raises(DataValidationError, match=message):
        cls().fit(X, y, "race", sample_weight=make(len(X)))


@pytest.mark.parametrize("cls", [Reweighing, RepresentationReweighing], ids=lambda c: c.__name__)
def test_zero_sample_weights_act_like_dropped_rows(compas, cls):
    X, y = compas
    half = len(X) // 2
    w = np.r_[np.zeros(half), np.ones(len(X) - half)]
    full = cls().fit(X, y, "race", sample_weight=w)
    kept = cls().fit(X.iloc[half:], y.iloc[half:], "race")
    assert np.all(full.sample_weight_[:half] == 0) and np.all(np.isfinite(full.sample_weight_))
    rest = full.sample_weight_[half:]
    np.testing.assert_allclose(rest / rest.mean(), kept.sample_weight_, rtol=1e-12)
    # a (label, group) cell whose rows all weigh 0 gets no mass instead of NaN
    cell = ((X["race"] == "Caucasian") & (y == 1)).to_numpy()
    rw = cls().fit(X, y, "race", sample_weight=np.where(cell, 0.0, 1.0)).sample_weight_
    assert np.all(np.isfinite(rw)) and np.all(rw[cell] == 0)


def test_maxent_zero_weights_give_finite_row_weights(compas):
    X, y = compas
    same = (X == X.iloc[0]).all(axis=1).to_numpy() & (y == y.iloc[0]).to_numpy()
    w = np.where(same, 0.0, 1.0)              # every copy of one record weighs 0
    m = MaxEntResampler().fit(X, y, "race", sample_weight=w)
    assert np.all(np.isfinite(m.prior_weights_)) and np.all(m.prior_weights_[same] == 0)
    assert m.prior_weights_.sum() == pytest.approx(1, abs=1e-12)


def test_one_random_state_helper_is_shared():
    import fairopt.formulations.maxent.model as maxent_model
    import fairopt.postprocessing as post
    import fairopt.preprocessing as pre
    from fairopt._utils import as_generator
    for module in (pre, post, maxent_model):
        assert not hasattr(module, "_rng") and module.as_generator is as_generator
    g = np.random.default_rng(3)
    assert as_generator(g) is g                                   # a Generator is used as is
    assert as_generator(7).random() == np.random.default_rng(7).random()
    X = pd.DataFrame({"a": ["x", "y"] * 50})
    y = pd.Series([0, 1, 1, 0] * 25, name="y")
    rw = Reweighing().fit(X, y, "a")
    np.testing.assert_array_equal(rw.sample_codes(20, random_state=np.random.default_rng(1)),
                                  rw.sample_codes(20, random_state=1))

