"""Data inputs a user can trust (issue 31): level guards that measure what each estimator pays for,
Dask and chunked inputs taking the in-memory forms, file inputs validated before use, memory-hungry
requests refused with their size, and level order independent of the frame library."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import requires_data

from fairopt.errors import DataTypeError, DataValidationError, ParameterError


# ----------------------------------------------------------------------------- 1. level guards
@requires_data
def test_maxent_fits_compas_large_domain_with_every_charge_description():
    """The 389-level c_charge_desc column costs max-ent 389 dual parameters, not a factor 389."""
    from fairopt.data import Attribute, Domain, load_compas
    from fairopt.formulations.maxent.datasets import compas_large_domain
    from fairopt.preprocessing import MaxEntResampler

    raw = load_compas()
    charges = tuple(sorted(raw["c_charge_desc"].unique()))
    assert len(charges) == 389
    dom = Domain([a if a.name != "c_charge_desc" else Attribute("c_charge_desc", charges)
                  for a in compas_large_domain(raw).attributes])
    frame = dom.decode(dom.encode(raw, discretize=True))
    assert dom.size > 7e10 and sum(dom.cardinalities) == 499
    X, y = frame.drop(columns="two_year_recid"), frame["two_year_recid"]
    m = MaxEntResampler(target="balanced", domain=dom).fit(X, y, "sex")
    assert (m.marginals() - m.theta_).abs().max() <= 1e-8
    assert m.representation_rate() >= 1 - 1e-8
    assert len(m.theta_) == 499


def test_maxent_guard_counts_the_sum_of_levels_and_is_overridable():
    from fairopt.preprocessing import MaxEntResampler
    rng = np.random.default_rng(0)
    n = 3000
    # three 300-level columns: a 2.7e7 x 4 domain, but only 904 levels in total
    X = pd.DataFrame({f"c{j}": rng.integers(0, 300, n) for j in range(3)})
    X["s"] = rng.integers(0, 2, n)
    y = pd.Series(rng.integers(0, 2, n), name="y")
    m = MaxEntResampler(C=0.5, target="data").fit(X, y, "s")
    assert (m.marginals() - m.theta_).abs().max() <= 1e-8
    with pytest.raises(DataValidationError, match=r"904 levels in total.*max_levels=500") as info:
        MaxEntResampler(max_levels=500).fit(X, y, "s")
    assert "MiB" in str(info.value) or "KiB" in str(info.value)
    with pytest.raises(ParameterError, match="max_levels"):   # a parameter mistake, refused at the edge
        MaxEntResampler(max_levels=0).fit(X, y, "s")


def test_tv_repair_refuses_a_large_product_domain_with_its_cell_count():
    from fairopt.preprocessing import TVRepair
    rng = np.random.default_rng(0)
    n = 20000
    X = pd.DataFrame({"s": rng.integers(0, 2, n), "a": rng.integers(0, 60, n), "b": rng.integers(0, 60, n)})
    y = rng.integers(0, 2, n)
    n_obs = len(np.unique(np.column_stack([X["s"], X["a"], X["b"], y]), axis=0))
    cells = n_obs * 60 * 60 * 2
    with pytest.raises(DataValidationError, match=rf"needs {cells} cells .*GiB.*max_cells=4000000"):
        TVRepair().fit(X, y, "s")
    # a column with 150 levels is no problem in itself (the old per-column guard refused it)
    X2 = pd.DataFrame({"s": rng.integers(0, 2, 600), "a": rng.integers(0, 150, 600)})
    y2 = rng.integers(0, 2, 600)
    r = TVRepair(epsilon=0.2).fit(X2, y2, "s")
    assert r.domain_.cardinalities[r.domain_.index("a")] == X2["a"].nunique() > 100
    with pytest.raises(DataValidationError, match=r"needs \d+ cells"):
        TVRepair(epsilon=0.2, max_cells=1000).fit(X2, y2, "s")


# ----------------------------------------------------------------------------- 4. memory-hungry requests
@pytest.mark.parametrize("where", ["memory", "npy"])
def test_huge_score_bins_are_refused_with_the_bytes_they_would_need(where, tmp_path):
    from fairopt.postprocessing import ThresholdDebiaser
    from fairopt.stats import HISTOGRAM_BYTES_PER_BIN, MAX_HISTOGRAM_BYTES
    rng = np.random.default_rng(0)
    f, g, y = rng.random(200), rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    if where == "npy":
        np.save(tmp_path / "f.npy", f)
        np.save(tmp_path / "g.npy", g)
        f, g = tmp_path / "f.npy", tmp_path / "g.npy"
    need = 2 ** 41 * 2 * HISTOGRAM_BYTES_PER_BIN
    assert need > MAX_HISTOGRAM_BYTES
    with pytest.raises(DataValidationError, match=rf"needs {need / 2**40:.1f} TiB .*score_bins=None"):
        ThresholdDebiaser(score_bins=2 ** 41).fit(f, y, sensitive_features=g)
    # the largest request the message allows still fits, and a moderate grid solves
    fits = MAX_HISTOGRAM_BYTES // (2 * HISTOGRAM_BYTES_PER_BIN)
    from fairopt.stats import check_histogram_size
    check_histogram_size(fits, 2)
    with pytest.raises(DataValidationError):
        check_histogram_size(fits + 1, 2)
    est = ThresholdDebiaser(score_bins=64).fit(f, y, sensitive_features=g)
    assert est.score_grid_[2] == 64


# ----------------------------------------------------------------------------- 3. file inputs
def _npy_files(tmp_path):
    rng = np.random.default_rng(1)
    f = rng.random(100)
    good = tmp_path / "f.npy"
    np.save(good, f)
    raw = good.read_bytes()
    files = {"truncated": raw[:300], "header_only": raw[:128], "junk": b"not an array at all"}
    out = {}
    for name, data in files.items():
        (tmp_path / f"{name}.npy").write_bytes(data)
        out[name] = tmp_path / f"{name}.npy"
    np.save(tmp_path / "object.npy", f.astype(object), allow_pickle=True)
    np.save(tmp_path / "string.npy", f.astype(str))
    out["object"], out["string"] = tmp_path / "object.npy", tmp_path / "string.npy"
    return out


@pytest.mark.parametrize("kind, error, words", [
    ("truncated", DataValidationError, r"is truncated: its header promises shape \(100,\) of float64 \(928 bytes"),
    ("header_only", DataValidationError, r"is truncated: .* the file has 128 bytes"),
    ("junk", DataValidationError, r"is not a valid \.npy file"),
    ("object", DataTypeError, r"holds Python objects"),
    ("string", DataTypeError, r"holds <U\d+ values but X must be numbers"),
])
def test_damaged_or_mistyped_npy_files_are_refused_naming_the_file(tmp_path, kind, error, words):
    from fairopt.metrics import demographic_parity_difference  # noqa: F401  (import check only)
    from fairopt.postprocessing import ThresholdDebiaser
    files = _npy_files(tmp_path)
    rng = np.random.default_rng(2)
    np.save(tmp_path / "g.npy", rng.integers(0, 2, 100))
    y = rng.integers(0, 2, 100)
    with pytest.raises(error, match=words) as info:
        ThresholdDebiaser().fit(files[kind], y, sensitive_features=tmp_path / "g.npy")
    assert str(files[kind]) in str(info.value) and "numpy.save" in str(info.value)


def test_string_groups_in_a_npy_file_stay_valid_labels(tmp_path):
    """Strings are refused where numbers are needed (scores), not as group labels."""
    from fairopt.postprocessing import ThresholdDebiaser
    rng = np.random.default_rng(3)
    f, y = rng.random(400), rng.integers(0, 2, 400)
    g = rng.choice(["f", "m"], 400)
    np.save(tmp_path / "f.npy", f)
    np.save(tmp_path / "g.npy", g)
    lazy = ThresholdDebiaser(eps=0.05).fit(tmp_path / "f.npy", y, sensitive_features=tmp_path / "g.npy")
    eager = ThresholdDebiaser(eps=0.05).fit(f, y, sensitive_features=g)
    np.testing.assert_allclose(lazy.thresholds_, eager.thresholds_, rtol=1e-9, atol=1e-12)
    with pytest.raises(DataTypeError, match="the scores"):
        from fairopt.stats import score_range
        score_range(f.astype(str), g, np.array(["f", "m"]))


@pytest.mark.parametrize("damage", ["half", "page"])
def test_a_corrupt_parquet_file_is_refused_naming_the_file(tmp_path, damage):
    from fairopt.preprocessing import MaxEntResampler
    path = tmp_path / "records.parquet"
    rng = np.random.default_rng(4)
    pd.DataFrame({"a": rng.integers(1, 3, 100), "s": rng.choice(["f", "m"], 100),
                  "y": rng.integers(0, 2, 100)}).to_parquet(path)
    raw = path.read_bytes()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(raw[: len(raw) // 2] if damage == "half" else raw[:100] + b"\0" * 60 + raw[160:])
    with pytest.raises(DataValidationError, match=r"bad\.parquet.*re-write it") as info:
        MaxEntResampler().fit(bad, "y", "s")
    assert info.value.__cause__ is not None      # the Arrow error is chained, not shown raw
    assert MaxEntResampler(C=0.5).fit(path, "y", "s").theta_.size == 6


# ----------------------------------------------------------------------------- 2. Dask takes the in-memory forms
def _scores_frame(n=600, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"score": rng.random(n), "group": rng.choice(["a", "b"], n), "race": rng.choice(["x", "y"], n)})
    y = pd.Series((rng.random(n) < 0.3 + 0.4 * df["score"]).astype(int), name="income")
    return df, y


@pytest.mark.parametrize("sensitive", ["group", ["group", "race"]])
def test_dask_threshold_debiaser_takes_column_names_like_memory(sensitive):
    dd = pytest.importorskip("dask.dataframe", reason="Dask inputs need the optional dask[dataframe]")
    from fairopt.postprocessing import ThresholdDebiaser
    df, y = _scores_frame()
    cols = ["score", *([sensitive] if isinstance(sensitive, str) else sensitive)]
    ddf, dy = dd.from_pandas(df[cols], npartitions=3), dd.from_pandas(y, npartitions=3)
    eager = ThresholdDebiaser(eps=0.02).fit(df[cols], y, sensitive_features=sensitive)
    lazy = ThresholdDebiaser(eps=0.02).fit(ddf, dy, sensitive_features=sensitive)
    assert list(lazy.groups_) == list(eager.groups_)
    np.testing.assert_allclose(np.asarray(lazy.thresholds_, float), np.asarray(eager.thresholds_, float),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lazy.fitted_rates_, eager.fitted_rates_, rtol=1e-9, atol=1e-12)
    # predict on the Dask frame with the fitted columns (no sensitive_features: they are X's columns)
    h_lazy = lazy.decision_probability(ddf).compute()
    np.testing.assert_allclose(h_lazy, eager.decision_probability(df[cols]), rtol=1e-9, atol=1e-12)
    # the same typed errors as in memory
    with pytest.raises(DataValidationError, match=r"not a column of X"):
        ThresholdDebiaser().fit(ddf, dy, sensitive_features="sex")
    with pytest.raises(DataValidationError, match=r"the score column and the sensitive column"):
        ThresholdDebiaser().fit(dd.from_pandas(df.assign(extra=1.0), npartitions=2)[[*cols, "extra"]], dy,
                                sensitive_features=sensitive)


def test_dask_records_keep_the_label_name_and_refuse_as_memory_does():
    dd = pytest.importorskip("dask.dataframe", reason="Dask inputs need the optional dask[dataframe]")
    from fairopt.preprocessing import MaxEntResampler, TVRepair
    rng = np.random.default_rng(6)
    n = 500
    rec = pd.DataFrame({"edu": rng.choice(["lo", "mid", "hi"], n), "sex": rng.choice(["f", "m"], n)})
    y = pd.Series((rng.random(n) < np.where(rec["sex"] == "m", 0.6, 0.3)).astype(int), name="income")
    drec, dy = dd.from_pandas(rec, npartitions=3), dd.from_pandas(y, npartitions=3)
    eager, lazy = MaxEntResampler(C=0.5).fit(rec, y, "sex"), MaxEntResampler(C=0.5).fit(drec, dy, "sex")
    assert list(lazy.theta_.index) == list(eager.theta_.index) and "income=1" in lazy.theta_.index
    np.testing.assert_allclose(lazy.lambda_.to_numpy(), eager.lambda_.to_numpy(), rtol=1e-6, atol=1e-8)

    def distortion(old, new):   # a distortion that names the label column
        return (old["income"] != new["income"]).to_numpy() * 1.0 + (old["edu"] != new["edu"]).to_numpy() * 0.5
    t_eager = TVRepair(epsilon=0.1, distortion=distortion, clist=[1.0], dlist=[0.5]).fit(rec, y, "sex")
    t_lazy = TVRepair(epsilon=0.1, distortion=distortion, clist=[1.0], dlist=[0.5]).fit(drec, dy, "sex")
    assert t_lazy.label_name_ == "income" and "income_hat" in t_lazy.mapping_.columns
    assert t_lazy.objective_ == pytest.approx(t_eager.objective_, rel=1e-7, abs=1e-9)
    # several sensitive columns: the same refusal as in memory
    with pytest.raises(DataValidationError, match=r"must name one column, got \['sex', 'edu'\]") as mem:
        MaxEntResampler().fit(rec, y, ["sex", "edu"])
    with pytest.raises(DataValidationError) as dask_err:
        MaxEntResampler().fit(drec, dy, ["sex", "edu"])
    assert str(dask_err.value) == str(mem.value)


def test_dask_frame_of_several_sensitive_columns_gives_the_joint_groups():
    dd = pytest.importorskip("dask.dataframe", reason="Dask inputs need the optional dask[dataframe]")
    from fairopt.postprocessing import ThresholdDebiaser
    df, y = _scores_frame(seed=8)
    groups = df[["group", "race"]]
    eager = ThresholdDebiaser(eps=0.02).fit(df["score"].to_numpy(), y, sensitive_features=groups)
    f, g = dd.from_pandas(df["score"], npartitions=4), dd.from_pandas(groups, npartitions=4)
    lazy = ThresholdDebiaser(eps=0.02).fit(f, dd.from_pandas(y, npartitions=4), sensitive_features=g)
    assert list(lazy.groups_) == list(eager.groups_) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]
    np.testing.assert_allclose(lazy.fitted_rates_, eager.fitted_rates_, rtol=1e-9, atol=1e-12)
    h = lazy.decision_probability(f, sensitive_features=g).compute()
    np.testing.assert_allclose(h, eager.decision_probability(df["score"].to_numpy(), sensitive_features=groups),
                               rtol=1e-9, atol=1e-12)
    unseen = dd.from_pandas(groups.assign(race="z"), npartitions=2)
    with pytest.raises(DataValidationError, match="not seen at fit"):
        lazy.decision_probability(f, sensitive_features=unseen).compute()
