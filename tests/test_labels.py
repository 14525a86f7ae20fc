"""Any two class labels in, the same labels out (issue 24 §3): ``pos_label`` on FairClassifier,
ThresholdDebiaser and ShiftInference; ``DataTypeError`` for non-numeric values."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairopt.errors import DataTypeError, DataValidationError
from fairopt.inprocessing import FairClassifier
from fairopt.metrics import demographic_parity_difference, equal_opportunity_difference
from fairopt.postprocessing import ShiftInference, ThresholdDebiaser


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    a = np.where(X[:, 0] + rng.normal(size=n) > 0, "p", "q")
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    return X, y, a


def _make(name: str, **kw: object) -> object:
    if name == "FairClassifier":
        return FairClassifier(eps=0.02, random_state=0, max_iter=20, **kw)
    if name == "ThresholdDebiaser":
        return ThresholdDebiaser(estimator=LogisticRegression(), random_state=0, **kw)
    return ShiftInference(estimator=LogisticRegression(), **kw)


def _fit(est, X, y, a):
    return est.fit(X, y, sensitive_features=a)


ESTIMATORS = ["FairClassifier", "ThresholdDebiaser", "ShiftInference"]
#: the two labels (negative first, the default favourable one second) of each encoding
LABELS = {"strings": ("bad", "good"), "one_two": (1, 2), "minus_plus": (-1, 1), "booleans": (False, True)}


@pytest.mark.parametrize("kind", LABELS)
@pytest.mark.parametrize("name", ESTIMATORS)
def test_two_labels_fit_as_their_0_1_encoding(name, kind):
    X, y, a = _data()
    neg, pos = LABELS[kind]
    labels = np.where(y == 1, pos, neg)
    ref = _fit(_make(name), X, y, a)
    est = _fit(_make(name), X, labels, a)
    assert est.classes_.tolist() == [neg, pos] and est.pos_label_ == pos
    # same fit: the greater label is favourable, as 1 is; predict_proba's columns follow classes_
    np.testing.assert_array_equal(est.predict_proba(X, sensitive_features=a) if name != "FairClassifier"
                                  else est.predict_proba(X),
                                  ref.predict_proba(X, sensitive_features=a) if name != "FairClassifier"
                                  else ref.predict_proba(X))
    kw = {} if name == "FairClassifier" else {"sensitive_features": a}
    pred, pred01 = est.predict(X, **kw), ref.predict(X, **kw)
    assert set(np.unique(pred).tolist()) <= {neg, pos}
    np.testing.assert_array_equal(pred == pos, pred01 == 1)
    assert est.score(X, labels, **kw) == pytest.approx(ref.score(X, y, **kw))
    # fairopt's metrics read the predictions in the caller's labels
    assert demographic_parity_difference(labels, pred, sensitive_features=a, pos_label=pos) == pytest.approx(
        demographic_parity_difference(y, pred01, sensitive_features=a))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_0_1_floats_and_booleans_fit_as_ints(name):
    X, y, a = _data()
    kw = {} if name == "FairClassifier" else {"sensitive_features": a}
    ref = _fit(_make(name), X, y, a)
    assert ref.classes_.tolist() == [0, 1] and ref.pos_label_ == 1 and ref.predict(X, **kw).dtype == np.int64
    for other in (y.astype(float), pd.Series(y.astype(bool))):
        est = _fit(_make(name), X, other, a)
        np.testing.assert_array_equal(est.predict_proba(X, **kw), ref.predict_proba(X, **kw))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_pos_label_picks_the_other_label_and_orders_proba_by_classes(name):
    X, y, a = _data()
    labels = np.where(y == 1, "good", "bad")
    kw = {} if name == "FairClassifier" else {"sensitive_features": a}
    est = _fit(_make(name, pos_label="bad"), X, labels, a)
    assert est.classes_.tolist() == ["bad", "good"] and est.pos_label_ == "bad"
    # the same fit as 0/1 labels with 1 = "bad"
    ref = _fit(_make(name), X, (labels == "bad").astype(int), a)
    np.testing.assert_allclose(est.predict_proba(X, **kw), ref.predict_proba(X, **kw)[:, ::-1], atol=1e-12)
    np.testing.assert_array_equal(est.predict(X, **kw) == "bad", ref.predict(X, **kw) == 1)


def test_demographic_parity_fit_is_the_same_up_to_relabelling():
    # DP bounds selection rates, and the rate of one label is one minus the other's: choosing the
    # favourable label relabels the fit (the learner, logistic regression, is symmetric in the labels)
    X, y, a = _data()
    labels = np.where(y == 1, "good", "bad")
    good = FairClassifier(eps=0.02, random_state=0, max_iter=20).fit(X, labels, sensitive_features=a)
    bad = FairClassifier(eps=0.02, random_state=0, max_iter=20, pos_label="bad").fit(X, labels, sensitive_features=a)
    np.testing.assert_allclose(good.predict_proba(X), bad.predict_proba(X), atol=1e-6)
    p = good.predict_proba(X)[:, 1]
    assert abs(p[a == "p"].mean() - p[a == "q"].mean()) <= 0.04 + 1e-6


def test_equal_opportunity_follows_pos_label():
    # TPR parity counts the rows of the favourable label, so it changes with pos_label: each fit
    # equalises the true-positive rates of its own favourable label, and the two rules differ
    X, y, a = _data(n=2000, seed=1)
    labels = np.where(y == 1, "good", "bad")
    fits = {pos: ThresholdDebiaser(estimator=LogisticRegression(), constraint="equal_opportunity", eps=0.01,
                                   pos_label=pos, random_state=0).fit(X, labels, sensitive_features=a)
            for pos in ("good", "bad")}
    gaps = {}
    for fitted_pos, est in fits.items():
        proba = pd.DataFrame(est.predict_proba(X, sensitive_features=a), columns=est.classes_)
        for pos in ("good", "bad"):     # expected TPR gap of each label, from the rule's probabilities
            rows = labels == pos
            tpr = [proba[pos][rows & (a == g)].mean() for g in ("p", "q")]
            gaps[fitted_pos, pos] = abs(tpr[0] - tpr[1])
    assert gaps["good", "good"] <= 0.01 + 1e-6 and gaps["bad", "bad"] <= 0.01 + 1e-6
    # the other label's TPR gap is left free: above eps on this sample (0.037 and 0.085), so the two
    # fits are different rules, not relabellings of one another
    assert gaps["good", "bad"] > 0.03 and gaps["bad", "good"] > 0.03
    assert np.abs(fits["good"].predict_proba(X, sensitive_features=a)
                  - fits["bad"].predict_proba(X, sensitive_features=a)).max() > 0.1
    # the metric on the sampled labels agrees with the fitted constraint to sampling noise
    pred = fits["bad"].predict(X, sensitive_features=a)
    assert equal_opportunity_difference(labels, pred, sensitive_features=a, pos_label="bad") < 0.06


@pytest.mark.parametrize("name", ESTIMATORS)
def test_bad_pos_label_names_the_labels_seen(name):
    X, y, a = _data()
    with pytest.raises(DataValidationError, match=re.escape("pos_label='yes' is not one of the labels ['bad', "
                                                            "'good']")):
        _fit(_make(name, pos_label="yes"), X, np.where(y == 1, "good", "bad"), a)
    with pytest.raises(DataValidationError, match=re.escape("pos_label=2 is not one of the labels [0, 1]")):
        _fit(_make(name, pos_label=2), X, y, a)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_three_labels_raise_naming_them(name):
    X, y, a = _data()
    labels = np.where(y == 1, 2, 1)
    labels[:5] = 3
    with pytest.raises(DataValidationError, match=re.escape("3 labels [1, 2, 3]") + ".*multiclass"):
        _fit(_make(name), X, labels, a)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_score_refuses_labels_not_seen_at_fit(name):
    X, y, a = _data()
    est = _fit(_make(name), X, np.where(y == 1, "good", "bad"), a)
    kw = {} if name == "FairClassifier" else {"sensitive_features": a}
    with pytest.raises(DataValidationError, match=re.escape("labels [1, 0] not seen at fit") + ".*'bad', 'good'"):
        est.score(X, y, **kw)


def test_prefit_estimator_gives_the_labels_without_y():
    X, y, a = _data()
    labels = np.where(y == 1, "good", "bad")
    lr = LogisticRegression().fit(X, labels)
    deb = ThresholdDebiaser(estimator=lr, prefit=True, random_state=0).fit(X, sensitive_features=a)
    assert deb.classes_.tolist() == ["bad", "good"] and deb.pos_label_ == "good"
    ref = ThresholdDebiaser(estimator=LogisticRegression().fit(X, y), prefit=True,
                            random_state=0).fit(X, sensitive_features=a)
    np.testing.assert_allclose(deb.predict_proba(X, sensitive_features=a), ref.predict_proba(X, sensitive_features=a),
                               atol=1e-9)
    # "bad" favourable: the score is the prefit model's probability of "bad" (decision function negated)
    flip = ThresholdDebiaser(estimator=lr, prefit=True, pos_label="bad", score_map="logit",
                             random_state=0).fit(X, sensitive_features=a)
    ref = ThresholdDebiaser(estimator=LogisticRegression().fit(X, 1 - y), prefit=True, score_map="logit",
                            random_state=0).fit(X, sensitive_features=a)
    np.testing.assert_allclose(flip.predict_proba(X, sensitive_features=a)[:, ::-1],
                               ref.predict_proba(X, sensitive_features=a), atol=1e-6)


def test_chunked_fit_says_it_needs_0_1_labels(tmp_path):
    rng = np.random.default_rng(0)
    f, g = rng.uniform(-1, 1, 200), rng.integers(0, 2, 200)
    np.save(tmp_path / "f.npy", f)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "y.npy", np.where(f > 0, 2, 1))
    with pytest.raises(DataValidationError, match="pos_label='x': chunked and Dask fits read y as 0/1"):
        ThresholdDebiaser(pos_label="x").fit(tmp_path / "f.npy", tmp_path / "y.npy", tmp_path / "g.npy")
    with pytest.raises(DataValidationError, match=r"0/1 labels.*chunked and Dask inputs read y as 0/1"):
        ThresholdDebiaser().fit(tmp_path / "f.npy", tmp_path / "y.npy", tmp_path / "g.npy")
    np.save(tmp_path / "y.npy", (f > 0).astype(int))
    deb = ThresholdDebiaser().fit(tmp_path / "f.npy", tmp_path / "y.npy", tmp_path / "g.npy")
    assert deb.classes_.tolist() == [0, 1] and deb.pos_label_ == 1


def test_a_dict_in_a_numeric_input_is_a_data_type_error():
    X, y, a = _data(n=100)
    Xo = X.astype(object)
    Xo[0, 1] = {"foo": "bar"}
    with pytest.raises(DataTypeError) as err:
        FairClassifier().fit(Xo, y, sensitive_features=a)
    # both a fairopt data error (a ValueError) and numpy's TypeError, worded as scikit-learn's checks expect
    assert isinstance(err.value, DataValidationError) and isinstance(err.value, TypeError)
    assert re.search("argument must be .* string.* number", str(err.value))
    assert "column 1 holds a dict" in str(err.value) and "pass numbers" in str(err.value)
    frame = pd.DataFrame({"x": X[:, 0], "w": ["a", "b"] * 50})
    with pytest.raises(DataTypeError, match=r"non-numeric column\(s\) \['w'\]"):
        FairClassifier().fit(frame, y, sensitive_features=a)


def test_resamplers_raise_the_same_data_type_error():
    from fairopt.preprocessing import Reweighing
    X = pd.DataFrame({"c": pd.Series([{"a": 1}] + ["a", "b"] * 9 + ["a"], dtype=object), "d": [0, 1, 1, 0] * 5})
    with pytest.raises(DataTypeError, match=r"column 'c' holds an unhashable value.*argument must be .* string.* "
                                            r"number"):
        Reweighing().fit(X, np.array([0, 1] * 10), sensitive_features=np.array([0, 0, 1, 1] * 5))
