"""TVRepair on numeric data (``n_bins``) and as a scikit-learn transformer (issue 24 §3)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from fairopt.errors import DataValidationError
from fairopt.preprocessing import Reweighing, TVRepair


@pytest.fixture(scope="module")
def numeric():
    rng = np.random.default_rng(3)
    n = 600
    sex = rng.integers(0, 2, n)
    age = np.round(rng.normal(38 + 6 * sex, 12), 1)
    hours = rng.normal(40, 8, n)
    y = (age + rng.normal(0, 8, n) > 42).astype(int)
    return np.column_stack([age, hours]), y, sex


def test_numeric_columns_without_n_bins_keep_the_level_guard(numeric):
    X, y, sex = numeric
    with pytest.raises(DataValidationError, match=r"the mapping needs \d+ cells .*n_bins"):
        TVRepair().fit(X, y, sensitive_features=sex)


def test_binned_fit_is_the_fit_on_the_bin_codes(numeric):
    X, y, sex = numeric
    est = TVRepair(epsilon=0.05, n_bins=4, random_state=0).fit(X, y, sensitive_features=sex)
    edges = np.quantile(X[:, 0], np.linspace(0, 1, 5), method="inverted_cdf")
    np.testing.assert_allclose(est.bins_["x0"].edges, edges)
    codes = np.column_stack([b.codes(X[:, j]) for j, b in enumerate(est.bins_.values())])
    np.testing.assert_array_equal(codes[:, 0], np.searchsorted(edges[1:-1], X[:, 0], side="right"))
    on_codes = TVRepair(epsilon=0.05).fit(codes, y, sensitive_features=sex)
    assert est.objective_ == pytest.approx(on_codes.objective_, abs=1e-9)
    # every representative is a training value of its bin (the weighted median)
    for j, b in enumerate(est.bins_.values()):
        for k, rep in enumerate(b.representatives):
            assert rep in X[codes[:, j] == k, j]


def test_transform_keeps_values_whose_bin_stays_and_moves_the_others_to_representatives(numeric):
    X, y, sex = numeric
    est = TVRepair(epsilon=0.0, discrimination="additive", n_bins=3, random_state=0).fit(X, y, sensitive_features=sex)
    X_new = est.transform(X, sensitive_features=sex)
    assert isinstance(X_new, np.ndarray) and X_new.dtype == X.dtype and X_new.shape == X.shape
    for j, b in enumerate(est.bins_.values()):
        old, new = b.codes(X[:, j]), b.codes(X_new[:, j])
        kept = old == new
        np.testing.assert_array_equal(X_new[kept, j], X[kept, j])
        np.testing.assert_array_equal(X_new[~kept, j], b.representatives[new[~kept]])
    assert (X_new != X).any()        # parity at epsilon 0 moves records on this data
    # test values beyond the training range fall in the end bins
    far = np.array([[-1e3, 0.0], [1e3, 0.0]])
    assert est.bins_["x0"].codes(far[:, 0]).tolist() == [0, 2]


def test_uniform_binning_splits_the_range_evenly(numeric):
    X, y, sex = numeric
    est = TVRepair(n_bins=5, binning="uniform").fit(X, y, sensitive_features=sex)
    np.testing.assert_allclose(est.bins_["x1"].edges, np.linspace(X[:, 1].min(), X[:, 1].max(), 6))


def test_weights_are_repetitions_for_the_bins(numeric):
    X, y, sex = numeric
    w = np.random.default_rng(0).integers(0, 3, len(y))
    weighted = TVRepair(n_bins=4).fit(X, y, sensitive_features=sex, sample_weight=w)
    repeated = TVRepair(n_bins=4).fit(np.repeat(X, w, axis=0), np.repeat(y, w), sensitive_features=np.repeat(sex, w))
    for c in ("x0", "x1"):
        np.testing.assert_array_equal(weighted.bins_[c].edges, repeated.bins_[c].edges)
        np.testing.assert_array_equal(weighted.bins_[c].representatives, repeated.bins_[c].representatives)
    assert weighted.objective_ == pytest.approx(repeated.objective_, abs=1e-9)


def test_fit_transform_is_fit_then_transform_and_works_in_a_pipeline(numeric):
    X, y, sex = numeric
    frame = pd.DataFrame({"sex": sex, "age": X[:, 0], "hours": X[:, 1]})
    est = TVRepair(epsilon=0.05, n_bins=4, random_state=1)
    out = est.fit_transform(frame, y, sensitive_features="sex")
    pd.testing.assert_frame_equal(out, est.transform(frame))
    assert est.get_feature_names_out().tolist() == ["sex", "age", "hours"]
    pipe = Pipeline([("repair", TVRepair(epsilon=0.05, n_bins=4, random_state=1)), ("lr", LogisticRegression())])
    pipe.fit(frame, y, repair__sensitive_features="sex")
    lr = LogisticRegression().fit(out, y)
    np.testing.assert_allclose(pipe.predict_proba(frame), lr.predict_proba(est.transform(frame)), atol=1e-12)


def test_arrays_are_named_like_scikit_learn(numeric):
    X, y, sex = numeric
    est = TVRepair(n_bins=3).fit(X, y, sensitive_features=sex)
    assert est.get_feature_names_out().tolist() == ["x0", "x1"] and not hasattr(est, "feature_names_in_")
    with pytest.raises(ValueError, match="X has 1 features, but TVRepair is expecting 2"):
        est.transform(X[:, :1], sensitive_features=sex)
    with pytest.raises(ValueError, match="Reshape your data"):
        est.transform(X[0], sensitive_features=sex[:1])
    on_frame = TVRepair(n_bins=3).fit(pd.DataFrame({"age": X[:, 0], "hours": X[:, 1]}), y, sensitive_features=sex)
    with pytest.raises(DataValidationError, match=r"X lacks column\(s\) \['age', 'hours'\] seen at fit"):
        on_frame.transform(X, sensitive_features=sex)


@pytest.mark.parametrize("bad, word", [(np.inf, "inf"), (np.nan, "NaN")])
def test_non_finite_values_are_refused_naming_the_column(numeric, bad, word):
    X, y, sex = numeric
    X = X.copy()
    X[5, 1] = bad
    with pytest.raises(DataValidationError, match=rf"\['x1'\].*{word}"):
        TVRepair(n_bins=3).fit(X, y, sensitive_features=sex)
    with pytest.raises(DataValidationError, match=rf"\['x1'\].*{word}"):
        Reweighing().fit(np.column_stack([X[:, 0] > 40, X[:, 1]]), y, sensitive_features=sex)


def test_resamplers_read_integer_column_names_and_refuse_unhashable_cells():
    X = pd.DataFrame({0: ["a", "b"] * 10, 1: [0, 1, 1, 0] * 5})
    y = np.array([0, 1] * 10)
    rw = Reweighing(random_state=0).fit(X, y, sensitive_features=np.array([0, 0, 1, 1] * 5))
    assert list(rw.sample(3).columns) == ["0", "1", "sensitive_feature", "y"]
    X[0] = pd.Series([{"a": 1}] + ["a", "b"] * 9 + ["a"], dtype=object)
    with pytest.raises(TypeError, match="column '0' holds an unhashable value"):
        Reweighing().fit(X, y, sensitive_features=np.array([0, 0, 1, 1] * 5))


def test_a_domain_keeps_its_columns_and_n_bins_bins_the_others(numeric):
    from fairopt.data import Domain
    X, y, sex = numeric
    frame = pd.DataFrame({"age": X[:, 0], "band": (X[:, 1] > 40).astype(int)})
    dom = Domain([("sensitive_feature", [0, 1]), ("band", [0, 1]), ("y", [0, 1])])
    est = TVRepair(n_bins=3, domain=dom).fit(frame, y, sensitive_features=sex)
    assert list(est.bins_) == ["age"] and est.domain_.levels["age"] == (0, 1, 2)
    assert est.domain_["band"] == dom["band"]
    with pytest.raises(DataValidationError, match="domain lacks columns"):
        TVRepair(domain=dom).fit(frame, y, sensitive_features=sex)


def test_array_groups_route_through_a_pipeline_and_set_output_converts(numeric):
    import sklearn
    X, y, sex = numeric
    with sklearn.config_context(enable_metadata_routing=True):
        rep = TVRepair(n_bins=3, random_state=0).set_fit_request(sensitive_features=True) \
            .set_transform_request(sensitive_features=True)
        pipe = Pipeline([("repair", rep), ("lr", LogisticRegression())]).fit(X, y, sensitive_features=sex)
        got = pipe.predict_proba(X, sensitive_features=sex)
    alone = TVRepair(n_bins=3, random_state=0)
    lr = LogisticRegression().fit(alone.fit_transform(X, y, sensitive_features=sex), y)
    np.testing.assert_allclose(got, lr.predict_proba(alone.transform(X, sensitive_features=sex)), atol=1e-12)
    polars_out = TVRepair(n_bins=3, random_state=0).set_output(transform="polars").fit_transform(
        X, y, sensitive_features=sex)
    assert type(polars_out).__module__.startswith("polars") and polars_out.columns == ["x0", "x1"]
    np.testing.assert_array_equal(polars_out.to_numpy(), alone.transform(X, sensitive_features=sex))
