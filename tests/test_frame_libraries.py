"""pandas, polars and pyarrow inputs give identical fits (issue 24 §1-2, §5): one conversion at the
edge (fairopt.validation.to_native), outputs in the caller's frame library."""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import fairopt.filtering as filt
import fairopt.inprocessing as inp
import fairopt.postprocessing as post
import fairopt.preprocessing as pre
from fairopt.validation import frame_kind

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

LIBS = ["pandas", "polars", "pyarrow"]
#: fits on the same data in different frame libraries agree to this relative tolerance (never bit for bit:
#: a library's memory layout may change the order of floating-point sums in BLAS and the solvers)
RTOL, ATOL = 1e-9, 1e-12


def _close(actual, desired, err_msg=""):
    np.testing.assert_allclose(np.asarray(actual, float), np.asarray(desired, float), rtol=RTOL, atol=ATOL,
                               err_msg=err_msg)


def _to(lib, obj):
    """``obj`` (pandas DataFrame or Series) in frame library ``lib``."""
    if lib == "pandas":
        return obj
    if isinstance(obj, pd.Series):
        return pl.Series(obj.name, obj.to_numpy()) if lib == "polars" else pa.chunked_array([obj.to_numpy()])
    return pl.from_pandas(obj) if lib == "polars" else pa.Table.from_pandas(obj, preserve_index=False)


def _numeric(n=300, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.choice(["f", "m"], n)
    X = pd.DataFrame({"x0": rng.normal(size=n) + (s == "f"), "x1": rng.normal(size=n)})
    y = pd.Series((X["x0"] + X["x1"] + 0.5 * rng.normal(size=n) > 0.5).astype(int), name="y")
    return X, y, pd.Series(s, name="sex")


def _categorical(n=400, seed=1):
    rng = np.random.default_rng(seed)
    s = rng.choice(["f", "m"], n)
    edu = np.where(rng.random(n) < np.where(s == "f", 0.3, 0.6), "hi", "lo")
    y = ((edu == "hi") & (rng.random(n) < 0.8)) | (rng.random(n) < 0.2)
    X = pd.DataFrame({"sex": s, "edu": edu, "age": rng.choice(["young", "old"], n)})
    return X, pd.Series(y.astype(int), name="y")


def _fit_numeric(make, method, lib, target=None, groups_as="series"):
    X, y, s = _numeric()
    if target is not None:
        y = target(X)
    if groups_as == "column":     # a 0/1 column (FairLogLossClassifier keeps it as a feature)
        Xs = X.assign(sex=(s == "f").astype(int))
        est = make().fit(_to(lib, Xs), _to(lib, y), sensitive_features="sex")
        return np.asarray(getattr(est, method)(_to(lib, Xs)))
    est = make().fit(_to(lib, X), _to(lib, y), sensitive_features=_to(lib, s))
    takes_groups = "sensitive_features" in inspect.signature(getattr(est, method)).parameters
    kw = {"sensitive_features": _to(lib, s)} if takes_groups else {}
    return np.asarray(getattr(est, method)(_to(lib, X), **kw))


NUMERIC = {
    "FairClassifier": (lambda: inp.FairClassifier(eps=0.05, max_iter=10, random_state=0), "predict_proba", None),
    "FairRegressor": (lambda: inp.FairRegressor(eps=0.05, max_iter=10, random_state=0), "predict_mean",
                      lambda X: pd.Series(1 / (1 + np.exp(-X["x0"])), name="y")),
    "SEORegressor": (lambda: inp.SEORegressor(), "predict", lambda X: pd.Series(1 / (1 + np.exp(-X["x0"])), name="y")),
    "FairLogLossClassifier": (lambda: inp.FairLogLossClassifier(), "predict_proba", None),
    "ShiftInference": (lambda: post.ShiftInference(estimator=LogisticRegression()), "predict_proba", None),
    "ThresholdDebiaser": (lambda: post.ThresholdDebiaser(estimator=LogisticRegression(), random_state=0),
                          "predict_proba", None),
}


@pytest.mark.parametrize("groups_as", ["series", "column"])
@pytest.mark.parametrize("name", list(NUMERIC))
def test_numeric_estimators_fit_identically_on_every_frame_library(name, groups_as):
    make, method, target = NUMERIC[name]
    ref = _fit_numeric(make, method, "pandas", target, groups_as)
    for lib in ("polars", "pyarrow"):
        _close(_fit_numeric(make, method, lib, target, groups_as), ref, err_msg=lib)
    assert np.ptp(ref) > 0      # a real fit, not a constant


@pytest.mark.parametrize("lib", LIBS)
def test_balanced_filter_takes_every_frame_library_and_sensitive_features(lib):
    X, _, s = _numeric()
    ref = filt.BalancedFilter(proxy="regression", random_state=0).fit(X, s).acceptance_probability(X)
    f = filt.BalancedFilter(proxy="regression", random_state=0).fit(_to(lib, X), sensitive_features=_to(lib, s))
    _close(f.acceptance_probability(_to(lib, X)), ref)
    # a column name of X, like every other estimator
    g = filt.BalancedFilter(proxy="regression", random_state=0).fit(_to(lib, X.assign(sex=s)), sensitive_features="sex")
    _close(g.acceptance_probability(_to(lib, X.assign(sex=s))), ref)


RESAMPLERS = {
    "Reweighing": lambda: pre.Reweighing(random_state=0),
    "RepresentationReweighing": lambda: pre.RepresentationReweighing(random_state=0),
    "MaxEntResampler": lambda: pre.MaxEntResampler(random_state=0),
    "TVRepairResampler": lambda: pre.TVRepairResampler(random_state=0),
}


@pytest.mark.parametrize("name", list(RESAMPLERS))
def test_resamplers_fit_identically_and_return_the_frame_type_given(name):
    X, y = _categorical()
    ref = RESAMPLERS[name]().fit(X, y, "sex").sample(200, random_state=3)
    assert isinstance(ref, pd.DataFrame)
    for lib, typ in (("polars", pl.DataFrame), ("pyarrow", pa.Table)):
        est = RESAMPLERS[name]().fit(_to(lib, X), _to(lib, y), "sex")
        out = est.sample(200, random_state=3)
        assert isinstance(out, typ), lib
        back = out.to_pandas()
        np.testing.assert_array_equal(back.to_numpy().astype(str), ref.to_numpy().astype(str))
        assert list(back.columns) == list(ref.columns)
        # set_output overrides the input's library
        assert isinstance(est.set_output(transform="pandas").sample(5, random_state=0), pd.DataFrame)
        assert isinstance(est.set_output(transform="polars").sample(5, random_state=0), pl.DataFrame)


def test_tv_repair_is_a_transformer_in_every_frame_library():
    from sklearn.base import TransformerMixin
    X, y = _categorical()
    est = pre.TVRepair(epsilon=0.05, random_state=0)
    assert isinstance(est, TransformerMixin)
    ref = est.fit(X, y, "sex").transform(X, random_state=1)
    assert list(est.get_feature_names_out()) == ["sex", "edu", "age"]
    for lib, typ in (("polars", pl.DataFrame), ("pyarrow", pa.Table)):
        est_l = pre.TVRepair(epsilon=0.05, random_state=0).fit(_to(lib, X), _to(lib, y), "sex")
        out = est_l.transform(_to(lib, X), random_state=1)
        assert isinstance(out, typ), lib
        np.testing.assert_array_equal(out.to_pandas().to_numpy().astype(str), ref.to_numpy().astype(str))
        _close(est_l.objective_, est.objective_)
    polars_out = pre.TVRepair(epsilon=0.05, random_state=0).set_output(transform="polars").fit(X, y, "sex") \
        .transform(X, random_state=1)
    assert isinstance(polars_out, pl.DataFrame)
    np.testing.assert_array_equal(polars_out.to_pandas().to_numpy().astype(str), ref.to_numpy().astype(str))
    pandas_out = pre.TVRepair(epsilon=0.05, random_state=0).set_output(transform="pandas") \
        .fit(_to("polars", X), _to("polars", y), "sex").transform(_to("polars", X), random_state=1)
    assert isinstance(pandas_out, pd.DataFrame)


def test_metrics_and_groups_read_every_frame_library():
    from fairopt.metrics import MetricFrame, demographic_parity_difference
    X, y, s = _numeric()
    yhat = (X["x0"] > 0.3).astype(int)
    ref = demographic_parity_difference(y, yhat, sensitive_features=s)
    for lib in ("polars", "pyarrow"):
        assert demographic_parity_difference(_to(lib, y), _to(lib, yhat), sensitive_features=_to(lib, s)) == ref
        sf_frame = _to(lib, pd.DataFrame({"sex": s}))
        assert demographic_parity_difference(y, yhat, sensitive_features=sf_frame) == ref
    from sklearn.metrics import accuracy_score
    mf = MetricFrame(metrics=accuracy_score, y_true=_to("polars", y), y_pred=_to("polars", yhat),
                     sensitive_features=_to("polars", s))
    assert list(mf.by_group.index) == ["f", "m"] and mf.difference() > 0


def test_string_categorical_and_missing_values_read_the_same():
    from fairopt.errors import DataValidationError
    from fairopt.validation import check_groups, check_X
    s = pd.Series(["a", "b", "a", "b"], dtype="str")       # pandas 3's default string dtype
    cat = s.astype("category")
    for obj in (s, cat, pl.Series("s", ["a", "b", "a", "b"]), pl.Series("s", ["a", "b", "a", "b"]).cast(pl.Categorical),
                pa.chunked_array([["a", "b", "a", "b"]]), pa.chunked_array([["a", "b", "a", "b"]]).dictionary_encode()):
        g = check_groups(obj, 4)
        assert list(g.labels) == ["a", "b"] and g.codes.tolist() == [0, 1, 0, 1], type(obj)
    for missing in (pd.Series(["a", None, "b", "a"]), pl.Series("s", ["a", None, "b", "a"]),
                    pa.chunked_array([["a", None, "b", "a"]])):
        with pytest.raises(DataValidationError, match="missing"):
            check_groups(missing, 4)
    for frame in (pd.DataFrame({"x": [1.0, None]}), pl.DataFrame({"x": [1.0, None]}), pa.table({"x": [1.0, None]})):
        with pytest.raises(DataValidationError, match="NaN/inf or missing values in column"):
            check_X(frame)
    assert frame_kind(pl.DataFrame({"x": [1]})) == "polars" and frame_kind(pa.table({"x": [1]})) == "pyarrow"


def test_fair_classifier_takes_the_numpy_fast_path_for_a_dataframe(monkeypatch):
    """§6: the default LogisticRegression's fast path (WarmLogistic, numpy only) is taken for
    every frame library, because the frame is converted once at the edge."""
    from fairopt.reductions.logistic import WarmLogistic
    seen = []
    orig = WarmLogistic.__init__

    def spy(self, estimator, X, *args, **kwargs):
        seen.append(type(X))
        orig(self, estimator, X, *args, **kwargs)
    monkeypatch.setattr(WarmLogistic, "__init__", spy)
    X, y, s = _numeric()
    for lib in LIBS:
        seen.clear()
        inp.FairClassifier(max_iter=5, random_state=0).fit(_to(lib, X), _to(lib, y), sensitive_features=_to(lib, s))
        assert seen == [np.ndarray], (lib, seen)


def test_import_fairopt_loads_no_dataframe_library():
    import subprocess
    import sys
    code = ("import sys, fairopt, fairopt.validation, fairopt.metrics; "
            "print(sorted(m for m in ('polars',) if m in sys.modules))")   # pandas 3 itself loads pyarrow
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.parametrize("name", list(NUMERIC))
def test_every_estimator_takes_the_groups_in_the_same_forms(name):
    """Array, list, Series, one-column DataFrame (any library) and column name of X: one fit."""
    make, method, target = NUMERIC[name]
    X, y, s = _numeric()
    if target is not None:
        y = target(X)
    code = pd.Series((s == "f").astype(int), name="sex")
    Xs = X.assign(sex=code)

    def run(sf, X_fit):
        est = make().fit(X_fit, y, sensitive_features=sf)
        takes = "sensitive_features" in inspect.signature(getattr(est, method)).parameters
        kw = {"sensitive_features": sf} if takes and not isinstance(sf, str) else {}
        return np.asarray(getattr(est, method)(X_fit, **kw))
    forms = [code.to_numpy(), code.tolist(), code, code.to_frame(), _to("polars", code), _to("pyarrow", code),
             _to("polars", code.to_frame())]
    # a column of X is a feature for FairLogLossClassifier and the wrapped estimators: compare like with like
    keeps_column = name in ("FairLogLossClassifier", "ShiftInference", "ThresholdDebiaser")
    X_fit = Xs if keeps_column else X
    ref = run(forms[0], X_fit)
    for sf in [*forms[1:], "sex"]:
        _close(run(sf, Xs if isinstance(sf, str) else X_fit), ref, err_msg=repr(type(sf)))


@pytest.mark.parametrize("lib", ["polars", "pyarrow"])
def test_constraint_builders_read_every_frame_library(lib):
    from fairopt.constraints.builders import equal_opportunity, selection_rate_parity
    g = pd.Series(["a", "b", "b", "a"] * 10, name="g")
    y = pd.Series([0, 1, 1, 1, 0] * 8, name="y")
    ref = selection_rate_parity(g, eps=0.1).A.toarray()
    np.testing.assert_array_equal(selection_rate_parity(_to(lib, g), eps=0.1).A.toarray(), ref)
    ref = equal_opportunity(g, y, eps=0.1).A.toarray()
    np.testing.assert_array_equal(equal_opportunity(_to(lib, g), _to(lib, y), eps=0.1).A.toarray(), ref)


def test_float_frames_are_copied_at_most_once_on_the_fast_path():
    from fairopt.validation import as_numeric_array, check_X, to_native
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(50, 4)), columns=list("abcd"))
    # pandas: the float array is a view of the frame (no copy)
    assert np.shares_memory(as_numeric_array(check_X(X)), X["a"].to_numpy())
    for lib in ("polars", "pyarrow"):
        native = to_native(_to(lib, X))                 # the one copy
        assert np.shares_memory(as_numeric_array(check_X(native)), native["a"].to_numpy()), lib
        np.testing.assert_array_equal(as_numeric_array(native), X.to_numpy())


@pytest.mark.parametrize("lib", ["polars", "pyarrow"])
def test_numeric_frames_reach_the_fit_array_in_one_conversion(lib, monkeypatch):
    """Issue 24 §1: a mixed int/float/bool polars or pyarrow frame becomes the float array of the
    numeric fast path natively, never through a pandas frame of its dtypes (a second copy)."""
    import tracemalloc

    import narwhals as nw

    from fairopt.inprocessing._mixture import check_fit_inputs
    from fairopt.validation import as_numeric_array, to_native_numeric
    rng = np.random.default_rng(0)
    n = 20_000
    X = pd.DataFrame({"i0": rng.integers(0, 9, n), "f0": rng.normal(size=n), "b": rng.random(n) < 0.5,
                      "i1": rng.integers(-5, 5, n).astype("int32"), "f1": rng.normal(size=n).astype("float32"),
                      "u": rng.integers(0, 2**40, n).astype("uint64")})
    y = pd.Series((X["f0"] > 0).astype(int), name="y")
    s = pd.Series(rng.choice(["f", "m"], n), name="sex")
    ref_est, est = inp.FairClassifier(), inp.FairClassifier()
    ref = check_fit_inputs(ref_est, X, y, s, None, "fit", target="binary", numeric=True)[0]
    frame = _to(lib, X)

    def no_pandas(self, *args, **kwargs):
        raise AssertionError("the numeric fast path converted the frame to pandas")

    monkeypatch.setattr(nw.DataFrame, "to_pandas", no_pandas)
    arr = check_fit_inputs(est, frame, y, s, None, "fit", target="binary", numeric=True)[0]
    # bit-identical to the pandas route, in the same memory layout, with the same feature names
    assert arr.dtype == np.float64 and arr.flags.f_contiguous == ref.flags.f_contiguous
    np.testing.assert_array_equal(arr, ref, strict=True)
    np.testing.assert_array_equal(est.feature_names_in_, ref_est.feature_names_in_, strict=True)
    assert est.n_features_in_ == ref_est.n_features_in_ == X.shape[1]
    # one float64 allocation of the array's size: the frame is a view of it, the fit array too
    tracemalloc.start()
    native = to_native_numeric(frame)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.1 * arr.nbytes, (peak, arr.nbytes)
    assert np.shares_memory(as_numeric_array(native), native["i0"].to_numpy())


@pytest.mark.parametrize("lib", ["polars", "pyarrow"])
def test_numeric_fast_path_keeps_the_pandas_route_where_dtypes_matter(lib):
    """Groups read from an integer column of X keep integer labels; a string column or a null keeps
    the frame on the pandas route (same errors, same dtypes)."""
    from fairopt.errors import DataValidationError
    from fairopt.inprocessing._mixture import check_fit_inputs
    from fairopt.validation import to_native_numeric
    X, y, s = _numeric()
    Xs = X.assign(sex=(s == "f").astype(int))
    ref = check_fit_inputs(inp.FairClassifier(), Xs, y, "sex", None, "fit", target="binary", numeric=True)
    got = check_fit_inputs(inp.FairClassifier(), _to(lib, Xs), y, "sex", None, "fit", target="binary", numeric=True)
    assert got[2].labels.equals(ref[2].labels) and got[2].labels.dtype == ref[2].labels.dtype == np.int64
    np.testing.assert_array_equal(got[0], ref[0], strict=True)
    assert to_native_numeric(_to(lib, Xs.assign(sex=s))).dtypes["sex"] != np.float64
    with_null = pl.DataFrame({"a": [1, None, 3], "b": [0.5, 1.5, 2.5]})
    with pytest.raises(DataValidationError, match=r"column\(s\) \['a'\]"):
        check_fit_inputs(inp.FairClassifier(), with_null if lib == "polars" else with_null.to_arrow(), [0, 1, 0],
                         ["f", "m", "f"], None, "fit", target="binary", numeric=True)


# ---------------------------------------------------------------------- level order (issue 31)
def _as_kind(lib, X, kind):
    """``X`` (string columns) in frame library ``lib``, its string columns as strings or as *unordered*
    categoricals: pandas' categories declared in reverse order, polars' and Arrow's in order of appearance."""
    if kind == "string":
        return _to(lib, X)
    cols = [c for c in X.columns if X[c].dtype == object or pd.api.types.is_string_dtype(X[c])]
    if lib == "pandas":
        return X.astype({c: pd.CategoricalDtype(sorted(X[c].unique(), reverse=True)) for c in cols})
    if lib == "polars":
        return pl.from_pandas(X).with_columns([pl.col(c).cast(pl.Categorical) for c in cols])
    table = pa.Table.from_pandas(X, preserve_index=False)
    for c in cols:
        table = table.set_column(table.schema.get_field_index(c), c, table[c].dictionary_encode())
    return table


FORMS = [(lib, kind) for lib in LIBS for kind in ("string", "categorical")]


def test_resampler_levels_do_not_depend_on_the_frame_library_or_categorical_order():
    X, y = _categorical()
    X = X.iloc[::-1].reset_index(drop=True)          # "m" and "old" appear first
    y = y.iloc[::-1].reset_index(drop=True)
    ref_me = pre.MaxEntResampler(random_state=0).fit(X, y, "sex")
    ref_tv = pre.TVRepair(epsilon=0.05, random_state=0).fit(X, y, "sex")
    ref_sample = ref_me.sample(300, random_state=4).astype(str).to_numpy()
    assert list(ref_me.theta_.index[:2]) == ["sex=f", "sex=m"]    # sorted levels
    for lib, kind in FORMS:
        Xk = _as_kind(lib, X, kind)
        me = pre.MaxEntResampler(random_state=0).fit(Xk, _to(lib, y), "sex")
        assert list(me.theta_.index) == list(ref_me.theta_.index), (lib, kind)
        _close(me.theta_, ref_me.theta_, f"{lib}/{kind}")
        _close(me.lambda_, ref_me.lambda_, f"{lib}/{kind}")
        sample = me.sample(300, random_state=4)
        sample = sample if isinstance(sample, pd.DataFrame) else sample.to_pandas()
        np.testing.assert_array_equal(sample.astype(str).to_numpy(), ref_sample, err_msg=f"{lib}/{kind}")
        tv = pre.TVRepair(epsilon=0.05, random_state=0).fit(Xk, _to(lib, y), "sex")
        mapping, ref_map = tv.mapping_, ref_tv.mapping_
        key = [c for c in ref_map.columns if c != "probability"]
        assert mapping[key].astype(str).equals(ref_map[key].astype(str)), (lib, kind)
        _close(mapping["probability"], ref_map["probability"], f"{lib}/{kind}")
        _close(tv.objective_, ref_tv.objective_, f"{lib}/{kind}")


def test_an_ordered_categorical_keeps_its_declared_order():
    X, y = _categorical()
    order = pd.CategoricalDtype(["young", "old"], ordered=True)
    me = pre.MaxEntResampler(random_state=0).fit(X.astype({"age": order}), y, "sex")
    assert [i for i in me.theta_.index if i.startswith("age=")] == ["age=young", "age=old"]
    enum = pl.from_pandas(X).with_columns(pl.col("age").cast(pl.Enum(["young", "old"])))
    me_pl = pre.MaxEntResampler(random_state=0).fit(enum, _to("polars", y), "sex")
    assert list(me_pl.theta_.index) == list(me.theta_.index)
    _close(me_pl.theta_, me.theta_)


@pytest.mark.parametrize("name", [*NUMERIC, "BalancedFilter"])
def test_every_estimator_gives_the_same_fit_whatever_the_library_and_group_dtype(name):
    """The sensitive feature as strings or an unordered categorical, in pandas, polars or pyarrow."""
    X, y, s = _numeric()
    s = pd.Series(np.where(s == "f", "female", "male"), name="sex")
    target = None if name == "BalancedFilter" else NUMERIC[name][2]
    if target is not None:
        y = target(X)

    def run(lib, kind):
        sf = _as_kind(lib, s.to_frame(), kind)
        if name == "BalancedFilter":
            est = filt.BalancedFilter(proxy="regression", random_state=0).fit(_to(lib, X), sensitive_features=sf)
            return est.acceptance_probability(_to(lib, X))
        make, method, _ = NUMERIC[name]
        est = make().fit(_to(lib, X), _to(lib, y), sensitive_features=sf)
        takes = "sensitive_features" in inspect.signature(getattr(est, method)).parameters
        return getattr(est, method)(_to(lib, X), **({"sensitive_features": sf} if takes else {}))

    ref = np.asarray(run("pandas", "string"))
    assert np.ptp(ref) > 0
    for lib, kind in FORMS[1:]:
        _close(run(lib, kind), ref, f"{lib}/{kind}")
