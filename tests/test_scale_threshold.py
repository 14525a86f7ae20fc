"""ThresholdDebiaser on statistics: Dask and chunked inputs equal the in-memory fit; the quantised
mode (score_bins) stays within its documented objective bound and meets the constraint exactly."""
import numpy as np
import pytest

from fairopt import stats
from fairopt.errors import ConfigError, DataValidationError
from fairopt.postprocessing import ThresholdDebiaser

SETTINGS = [{}, {"calibration": None}, {"calibration": "isotonic"}, {"gamma": 0.0, "calibration": None},
            {"constraint": "equalized_odds"}, {"constraint": "equal_opportunity", "eps": 0.02},
            {"constraint": "covariance", "gamma": 0.1, "calibration": None}]


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(3)
    n = 6000
    g = rng.integers(0, 3, n)
    y = (rng.random(n) < 0.3 + 0.2 * (g == 1)).astype(int)
    f = np.clip(np.round(rng.normal(0.4 * y - 0.2 + 0.1 * g, 0.4), 3), -1, 1)   # ties: real atoms
    w = rng.integers(1, 4, n).astype(float)
    return f, g, y, w


def _groups(kw, g):
    return (g > 0).astype(int) if kw.get("constraint") == "covariance" else g


def _flat(t):
    return np.concatenate([np.ravel(x) for x in t]) if isinstance(t, list) else np.ravel(t)


@pytest.mark.parametrize("kw", [*SETTINGS, {"score_bins": 512}, {"score_bins": 64, "constraint": "equalized_odds"}])
def test_dask_fit_equals_in_memory_fit(sample, kw):
    da = pytest.importorskip("dask.array")
    f, g, y, w = sample
    g = _groups(kw, g)
    ref = ThresholdDebiaser(**kw).fit(f, y, g, sample_weight=w)
    chunks = 1700
    dx = [da.from_array(a, chunks=chunks) for a in (f, y, g, w)]
    got = ThresholdDebiaser(**kw).fit(dx[0], dx[1], dx[2], sample_weight=dx[3])
    np.testing.assert_allclose(_flat(got.thresholds_), _flat(ref.thresholds_), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.fitted_rates_, ref.fitted_rates_, rtol=0, atol=1e-12)
    assert list(got.groups_) == list(ref.groups_)
    h = got.predict_proba(dx[0], sensitive_features=dx[2])
    assert hasattr(h, "dask")                       # per-row output stays a Dask collection
    np.testing.assert_allclose(h.compute(), ref.predict_proba(f, sensitive_features=g), atol=1e-12)
    yhat = got.predict(dx[0], sensitive_features=dx[2], random_state=0)
    assert hasattr(yhat, "dask") and set(np.unique(yhat.compute())) <= {0, 1}


def test_dask_fit_does_not_materialise_rows(sample, monkeypatch):
    da = pytest.importorskip("dask.array")
    f, g, y, _ = sample
    dx = [da.from_array(a, chunks=1000) for a in (f, y, g)]

    def no_array(self, *a, **k):
        raise AssertionError("the Dask array was converted to NumPy on the driver")
    monkeypatch.setattr(type(dx[0]), "__array__", no_array)
    est = ThresholdDebiaser(score_bins=256).fit(dx[0], dx[1], dx[2])
    assert est.fitted_rates_.shape == (3,)


@pytest.mark.parametrize("kw", SETTINGS[:5])
@pytest.mark.parametrize("kind", ["memmap", "npy"])
def test_chunked_fit_equals_in_memory_fit(sample, kw, kind, tmp_path, monkeypatch):
    monkeypatch.setattr(stats._sources, "CHUNK_ROWS", 777)
    f, g, y, _ = sample
    g = _groups(kw, g)
    ref = ThresholdDebiaser(**kw).fit(f, y, g)
    paths = []
    for name, a in (("f", f), ("y", y), ("g", g)):
        p = tmp_path / f"{name}.npy"
        np.save(p, a)
        paths.append(str(p) if kind == "npy" else np.load(p, mmap_mode="r"))
    got = ThresholdDebiaser(**kw).fit(*paths)
    np.testing.assert_allclose(_flat(got.thresholds_), _flat(ref.thresholds_), rtol=0, atol=1e-12)
    h = got.decision_probability(paths[0], sensitive_features=paths[2])
    np.testing.assert_allclose(h, ref.decision_probability(f, sensitive_features=g), atol=1e-12)


@pytest.mark.parametrize("gamma", [0.0, 0.01, 0.2])
@pytest.mark.parametrize("bins", [8, 64, 1024])
def test_quantised_fit_within_documented_bound(sample, gamma, bins):
    f, g, y, w = sample
    exact = ThresholdDebiaser(gamma=gamma, calibration=None).fit(f, y, g, sample_weight=w)
    quant = ThresholdDebiaser(gamma=gamma, calibration=None, score_bins=bins).fit(f, y, g, sample_weight=w)

    def objective(est):            # E[h f] - (gamma/2) E[h^2] on the raw scores of the sample
        h = est.decision_probability(f, sensitive_features=g)
        return np.average(h * f - 0.5 * gamma * h * h, weights=w)
    lo, hi, b = quant.score_grid_
    bound = np.max(hi - lo) / b
    loss = objective(exact) - objective(quant)
    assert -1e-12 <= loss <= bound + 1e-12, (loss, bound)
    # the quantised rule meets parity exactly on the sample (quantised again at predict time)
    h = quant.decision_probability(f, sensitive_features=g)
    rates = np.bincount(g, weights=h * w) / np.bincount(g, weights=w)
    np.testing.assert_allclose(rates, quant.fitted_rates_, atol=1e-9)
    assert np.ptp(rates) <= 1e-9


@pytest.mark.parametrize("kw", SETTINGS)
def test_quantised_every_setting_fits_with_exact_rates(sample, kw):
    f, g, y, _ = sample
    g = _groups(kw, g)
    est = ThresholdDebiaser(score_bins=512, **kw).fit(f, y, g)
    stats_size = est.solution_.q.shape[0]
    assert stats_size <= 512 * len(est.groups_)
    assert est.calibration_ == ThresholdDebiaser(**kw).fit(f, y, g).calibration_
    h = est.decision_probability(f, sensitive_features=g)
    if kw.get("constraint") in (None, "demographic_parity"):
        rates = np.bincount(g, weights=h) / np.bincount(g)
        assert np.ptp(rates) <= 1e-9


def test_score_bins_rejects_bad_values(sample):
    f, g, y, _ = sample
    for bad in (1, 0, 2.5, True, "64"):
        with pytest.raises(ConfigError, match="score_bins"):
            ThresholdDebiaser(score_bins=bad).fit(f, y, g)


def test_chunked_input_needs_score_array(sample, tmp_path):
    f, _g, y, _ = sample
    p = tmp_path / "f.npy"
    np.save(p, f)
    with pytest.raises(DataValidationError, match="sensitive_features"):
        ThresholdDebiaser().fit(str(p), y, "group")
    with pytest.raises(DataValidationError, match=r"\.npy"):
        ThresholdDebiaser().fit(np.load(p, mmap_mode="r"), y, str(tmp_path / "missing.npy"))
