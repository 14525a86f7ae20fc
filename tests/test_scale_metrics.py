"""Group metrics of Dask and chunked inputs equal the in-memory metrics."""
import numpy as np
import pytest

from fairopt import metrics, stats
from fairopt.errors import DataValidationError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 5000
    g = rng.choice(np.array(["a", "b", "c"]), n)
    y = rng.integers(0, 2, n)
    p = rng.random(n)
    w = rng.random(n) * 3
    return g, y, p, w


CASES = [
    ("statistical_rate", lambda m, g, y, p, w: m.statistical_rate(p, g, sample_weight=w)),
    ("dp_difference",
     lambda m, g, y, p, w: m.demographic_parity_difference(None, p, sensitive_features=g, sample_weight=w)),
    ("dp_ratio", lambda m, g, y, p, w: m.demographic_parity_ratio(None, p, sensitive_features=g, method="to_overall")),
    ("eo", lambda m, g, y, p, w: m.equal_opportunity_difference(y, p, sensitive_features=g, sample_weight=w)),
    ("eodds", lambda m, g, y, p, w: m.equalized_odds_difference(y, (p > 0.5).astype(int), sensitive_features=g)),
    ("representation", lambda m, g, y, p, w: m.representation_rate(g, sample_weight=w)),
    ("rates_fpr", lambda m, g, y, p, w: m.group_rates(p, g, y_true=y, rate="fpr").to_numpy()),
    ("rates_base", lambda m, g, y, p, w: m.group_rates(None, g, y_true=y, rate="base_rate").to_numpy()),
]


@pytest.mark.parametrize("name,fn", CASES)
def test_dask_metrics_equal_in_memory(data, name, fn):
    da = pytest.importorskip("dask.array")
    ref = fn(metrics, *data)
    got = fn(metrics, *(da.from_array(a, chunks=1300) for a in data))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name,fn", CASES)
def test_memmap_metrics_equal_in_memory(data, name, fn, tmp_path, monkeypatch):
    monkeypatch.setattr(stats._sources, "CHUNK_ROWS", 999)
    ref = fn(metrics, *data)
    mm = []
    for i, a in enumerate(data):
        np.save(tmp_path / f"{i}.npy", a)
        mm.append(np.load(tmp_path / f"{i}.npy", mmap_mode="r"))
    np.testing.assert_allclose(fn(metrics, *mm), ref, rtol=0, atol=1e-12)


def test_dask_series_groups_and_declared_groups(data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    g, _y, p, _w = data
    frame = dd.from_pandas(pd.DataFrame({"g": g, "p": p}), npartitions=4)
    ref = metrics.group_rates(p, g, groups=["c", "a", "b", "z"], rate="share")
    got = metrics.group_rates(frame["p"], frame["g"], groups=["c", "a", "b", "z"], rate="share")
    assert list(got.index) == ["c", "a", "b", "z"]
    np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), atol=1e-12)
    with pytest.raises(DataValidationError, match="'z'"):
        metrics.group_rates(frame["p"], frame["g"], groups=["c", "a", "b", "z"])


def test_dask_metrics_reject_non_probability_predictions(data):
    da = pytest.importorskip("dask.array")
    g, _, p, _ = data
    with pytest.raises(DataValidationError, match="y_pred"):
        metrics.statistical_rate(da.from_array(p * 3, chunks=1000), da.from_array(g, chunks=1000))
