"""The pre-/post-processing overhead benchmark (smoke profile) and the frame encoding it sped up."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import load_benchmark, requires_data

from fairopt.data import Domain
from fairopt.errors import DataValidationError
from fairopt.preprocessing._frame import _domain_codes

ENTRIES = ("threshold_debiaser", "threshold_debiaser_isotonic", "shift_inference", "reweighing",
           "representation_reweighing", "maxent_resampler", "balanced_filter", "fair_selection")


@requires_data
def test_overhead_benchmark_smoke(tmp_path):
    bench = load_benchmark("overhead_pre_post")
    out = tmp_path / "overhead.json"
    bench.run("smoke", out)
    res = json.loads(out.read_text())
    assert res["profile"] == "smoke" and res["cpus"] >= 1 and "machine_note" in res
    assert set(res["estimators"]) == set(ENTRIES)
    for name, e in res["estimators"].items():
        assert e["fit_seconds"] > 0 and e["bare_seconds"] > 0, name
        assert e["ratio"] == pytest.approx(e["fit_seconds"] / e["bare_seconds"]), name
        # the two timings are of the same program: same objective (or fitted numbers)
        assert e["agreement"] <= 1e-6, name
        if e["fit_objective"] is not None:
            assert e["fit_objective"] == pytest.approx(e["bare_objective"], abs=1e-6), name
        # the bare solve from the raw input (its own encoding inside the timer) is of the same program too
        assert e["bare_input_seconds"] > 0, name
        assert e["ratio_input"] == pytest.approx(e["fit_seconds"] / e["bare_input_seconds"]), name
        assert e["input_agreement"] <= 1e-6, name
        if e["fit_objective"] is not None:
            assert e["fit_objective"] == pytest.approx(e["bare_input_objective"], abs=1e-6), name


def _frames():
    rng = np.random.default_rng(0)
    n = 300
    yield pd.DataFrame({"s": rng.choice(["b", "a", "c"], n), "k": rng.integers(3, 9, n),
                        "y": rng.integers(0, 2, n)})
    yield pd.DataFrame({"s": pd.Categorical(rng.choice(["m", "f"], n), categories=["m", "x", "f"]),
                        "b": rng.random(n) < 0.5, "v": rng.choice([0.5, -1.0, 2.25], n),
                        "ic": pd.Categorical(rng.integers(0, 4, n)),     # categoricals: pandas' codes are read
                        "oc": pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "hi"], ordered=True)})
    yield pd.DataFrame({"o": pd.Series(rng.choice(["u", "v"], n), dtype=object), "y": np.zeros(n, int)})
    # NumPy int32 / uint8 columns (coded through a table over their range), a sparse int range
    # (factorised), and an Arrow string column in several chunks (Arrow's dictionary_encode)
    chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(
        [pa.array(rng.choice(["q", "p"], n // 2)).cast(pa.large_string()),
         pa.array(rng.choice(["r", "p", "s"], n - n // 2)).cast(pa.large_string())])))
    yield pd.DataFrame({"i32": rng.integers(-4, 3, n).astype(np.int32), "u8": rng.integers(0, 5, n).astype(np.uint8),
                        "far": rng.choice([-10**12, 0, 10**12], n), "c": chunked})


@pytest.mark.parametrize("frame", list(_frames()))
def test_domain_codes_equal_from_frame_and_encode(frame):
    dom, codes = _domain_codes(frame, None)
    ref = Domain.from_frame(frame)
    assert dom == ref and dom.levels == ref.levels
    np.testing.assert_array_equal(codes, ref.encode(frame))
    wider = Domain([(c, (*reversed(ref.levels[c]), "zz") if frame[c].dtype == object else ref.levels[c])
                    for c in frame.columns])   # a user domain with another level order
    dom2, codes2 = _domain_codes(frame, wider)
    assert dom2 == wider.subdomain(list(frame.columns))
    np.testing.assert_array_equal(codes2, wider.encode(frame))


def test_domain_codes_missing_value_is_refused_for_every_column_kind():
    from fairopt.preprocessing._frame import _assemble
    n = 6
    base = pd.DataFrame({"s": ["a", "b"] * 3, "k": np.arange(n)})
    for col in (pd.Series(["a", None, "b", "a", "b", "a"], dtype="str"), pd.Series([1.0, np.nan, 2, 1, 2, 1]),
                pd.Series(["a", "b", None, "a", "b", "a"], dtype=object)):
        with pytest.raises(DataValidationError, match=r"columns \['m'\] have missing values"):
            _assemble(base.assign(m=col), np.zeros(n, int), "s")
    with pytest.raises(DataValidationError, match=r"columns \['m'\] hold inf"):
        _assemble(base.assign(m=[1.0, np.inf, 2, 1, 2, 1]), np.zeros(n, int), "s")
    X = base.copy()
    _assemble(X, pd.Series(np.zeros(n, int), name="lab"), "s")
    assert list(X.columns) == ["s", "k"]   # the caller's frame is left alone


def test_numpy_string_groups_code_like_sorted_factorize():
    from fairopt.validation import check_groups
    s = np.random.default_rng(2).choice(["b", "a", "cc"], 500)
    got = check_groups(s)
    codes, labels = pd.factorize(s, sort=True)
    np.testing.assert_array_equal(got.codes, codes)
    assert got.labels.equals(pd.Index(labels)) and got.codes.dtype == np.intp


def test_domain_codes_unknown_level_names_the_rows():
    frame = pd.DataFrame({"s": ["a", "b", "q", "a", "q"], "y": [0, 1, 0, 1, 1]})
    dom = Domain([("s", ("a", "b")), ("y", (0, 1))])
    with pytest.raises(DataValidationError) as got:
        _domain_codes(frame, dom)
    with pytest.raises(DataValidationError) as ref:
        dom.encode(frame)
    assert str(got.value) == str(ref.value) and "row 2" in str(got.value)


@pytest.mark.parametrize("per_group", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_calibration_on_atoms_equals_the_row_fit(per_group, weighted):
    from fairopt.formulations.constrained_classification import IsotonicScoreMap
    from fairopt.formulations.constrained_classification.atoms import collapse_atoms
    from fairopt.postprocessing._statistics import calibrate_atoms
    rng = np.random.default_rng(3)
    n, K = 2000, 3
    g = rng.integers(0, K, n)
    f = np.round(rng.uniform(-1, 1, n) + 0.2 * g, 2)          # many tied scores
    y = (rng.uniform(size=n) < (f + 1.4) / 2.8).astype(int)
    w = rng.choice([0.0, 0.5, 1.0, 2.0], n) if weighted else None
    rows = IsotonicScoreMap(per_group=per_group).fit(f, y, g, K, w)
    cal, merged = calibrate_atoms(collapse_atoms(f, g, K, w, labels=y), per_group)
    assert len(cal.breakpoints_) == len(rows.breakpoints_)
    for (x, e), (xr, er) in zip(cal.breakpoints_, rows.breakpoints_, strict=True):
        np.testing.assert_array_equal(x, xr)
        np.testing.assert_allclose(e, er, rtol=0, atol=1e-12)
    # the calibrated atoms are the atoms of the calibrated rows
    ref = collapse_atoms(rows.transform(f, g), g, K, w, labels=y)
    np.testing.assert_allclose(merged.score, ref.score, rtol=0, atol=1e-12)
    np.testing.assert_allclose(merged.weight, ref.weight, rtol=1e-12)
    np.testing.assert_allclose(merged.positive, ref.positive, rtol=1e-12)
    np.testing.assert_array_equal(merged.offsets, ref.offsets)


def test_calibrated_threshold_fit_equals_the_fit_on_calibrated_scores():
    from fairopt.formulations.constrained_classification import IsotonicScoreMap
    from fairopt.postprocessing import ThresholdDebiaser
    rng = np.random.default_rng(5)
    n = 3000
    g = rng.choice(["a", "b"], n)
    f = np.clip(rng.normal(0.2 * (g == "b"), 0.5), -1, 1)
    y = (rng.uniform(size=n) < (f + 1) / 2).astype(int)
    deb = ThresholdDebiaser(gamma=0.05, calibration="isotonic_per_group").fit(f, y, sensitive_features=g)
    codes = (g == "b").astype(int)
    fc = IsotonicScoreMap(per_group=True).fit(f, y, codes, 2).transform(f, codes)
    ref = ThresholdDebiaser(gamma=0.05, calibration=None).fit(fc, sensitive_features=g)
    np.testing.assert_allclose(deb.thresholds_, ref.thresholds_, rtol=0, atol=1e-12)
    assert deb.solution_.objective == pytest.approx(ref.solution_.objective, abs=1e-12)
    np.testing.assert_allclose(deb.fitted_rates_, ref.fitted_rates_, atol=1e-12)


def test_maxent_oracle_dense_and_histogram_paths_agree(monkeypatch):
    import fairopt.formulations.maxent.oracle as oracle_mod
    from fairopt.formulations.maxent import DualOracle, Encoding
    rng = np.random.default_rng(11)
    levels = (2, 3, 5, 4)
    enc = Encoding.make(levels, "onehot")
    points = np.unique(np.column_stack([rng.integers(0, k, 300) for k in levels]), axis=0)
    w = rng.random(points.shape[0])
    lam = rng.normal(0, 0.7, enc.dim)
    theta = np.full(enc.dim, 0.2)
    dense = DualOracle(enc, points, w, 0.4, theta)
    assert dense._dense_features() is not None
    monkeypatch.setattr(oracle_mod, "DENSE_FEATURES_MAX", 0)
    hist = DualOracle(enc, points, w, 0.4, theta)
    assert hist._dense_features() is None
    for a, b in zip(dense.value_grad_hess(lam), hist.value_grad_hess(lam), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_validate_params_skips_only_unchanged_scalar_parameters(monkeypatch):
    import fairopt._param_validation as pv
    from fairopt.data import Domain
    from fairopt.preprocessing import MaxEntResampler, Reweighing
    from fairopt.validation import ParameterError, validate_params
    calls = []
    real = pv.validate_parameter_constraints
    monkeypatch.setattr(pv, "validate_parameter_constraints", lambda *a, **k: calls.append(1) or real(*a, **k))
    est = MaxEntResampler(C=0.5)
    validate_params(est)
    validate_params(est)
    assert len(calls) == 1                      # unchanged scalars: checked once
    est.C = 1.5                                 # attribute assignment is seen
    with pytest.raises(ParameterError, match="'C'"):
        validate_params(est)
    est.set_params(C=0.25)
    validate_params(est)
    est.C = True                                # the extra no-bool check runs again too
    with pytest.raises(ParameterError, match="not a boolean"):
        validate_params(est)
    est.set_params(C=0.5, target={"sex": [0.5, 0.5]})   # a mapping may change in place: always checked
    n = len(calls)
    validate_params(est)
    validate_params(est)
    assert len(calls) == n + 2
    rw = Reweighing(domain=Domain([("sex", ("F", "M"))]))
    validate_params(rw)
    validate_params(rw)
    assert len(calls) == n + 4 and "_validated_params" not in rw.__dict__


def _group_inputs():
    rng = np.random.default_rng(4)
    n = 400
    s = rng.choice(["b", "a", "cc"], n)
    yield pd.Series(s)                                                       # Arrow strings (pandas 3)
    yield pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(             # several chunks
        [pa.array(s[:150]).cast(pa.large_string()), pa.array(s[150:]).cast(pa.large_string())])))
    yield pd.Series(pd.Categorical(s, categories=["zz", "cc", "b", "a"]))   # unobserved, unsorted categories
    yield pd.Series(pd.Categorical(rng.integers(0, 5, n)))
    yield pd.Series(pd.Categorical(rng.choice([0.5, -1.0], n)), name="f")
    yield pd.DataFrame({"s": pd.Categorical(s), "t": rng.choice(["x", "y"], n)})   # intersectional
    yield pd.Series(s, dtype=object)                                          # general path


@pytest.mark.parametrize("groups", list(_group_inputs()))
def test_check_groups_typed_series_equal_the_factorize_path(groups):
    from fairopt.validation import _columns, _factorize, as_1d, check_groups
    got = check_groups(groups)
    # the reference: every column through to_numpy and the sorted factorisation
    cols, names = _columns(groups)
    ref = [_factorize(as_1d(np.asarray(c.to_numpy()), "g", len(c)), "g") for c in cols]
    if len(ref) == 1:
        np.testing.assert_array_equal(got.codes, ref[0][0])
        assert got.labels.equals(pd.Index(ref[0][1], name=names[0]))
        assert got.labels.dtype == pd.Index(ref[0][1]).dtype
    else:
        keys = np.column_stack([c for c, _ in ref])
        _, expect = np.unique(keys, axis=0, return_inverse=True)
        np.testing.assert_array_equal(got.codes, expect.reshape(-1))
        assert list(got.labels) == sorted({tuple(u[c] for c, (_, u) in zip(row, ref, strict=True)) for row in keys})
    assert got.codes.dtype == np.intp


def test_check_groups_typed_series_missing_and_length_still_raise():
    from fairopt.validation import check_groups
    with pytest.raises(DataValidationError, match="missing"):
        check_groups(pd.Series(["a", None, "b"], dtype="str"))
    with pytest.raises(DataValidationError, match="missing"):
        check_groups(pd.Series(pd.Categorical(["a", None, "b"])))
    with pytest.raises(DataValidationError, match="rows"):
        check_groups(pd.Series(pd.Categorical(["a", "b", "b"])), 4)
    mixed = pd.Series(pd.Categorical(np.array(["a", 1, "a"], dtype=object), categories=["a", 1]))
    with pytest.raises(DataValidationError, match="mixes label types"):   # object categories: the general path
        check_groups(mixed)
