"""Per-group sums of the chunked readers: every source kind (array, chunks, memory-mapped ``.npy``,
Dask) and both entry points (labels known, labels found in the same pass) give the sums that
``np.bincount`` gives on the whole data; sources of the wrong shape are refused with the typed
error; run records become JSON-safe objects; the DKW and Hoeffding margins are the formula."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fairopt.errors import DataValidationError
from fairopt.guarantees import dkw_margin, hoeffding_margin
from fairopt.runs.execute import json_safe, json_safe_record
from fairopt.stats import as_source, group_sums, keyed_group_sums, map_reduce


def _data(n: int = 1_003, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array([3, 7, 11]), size=n)
    w = rng.uniform(0.1, 2.0, n)
    v1, v2 = rng.normal(size=n), rng.integers(0, 2, n).astype(float)
    return g, w, v1, v2


def _reference(g: np.ndarray, w: np.ndarray | None, values: list[np.ndarray]) -> np.ndarray:
    labels, codes = np.unique(g, return_inverse=True)
    ww = np.ones(g.size) if w is None else w
    return np.stack([np.bincount(codes, weights=ww * v, minlength=labels.size)
                     for v in [np.ones(g.size), *values]])


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("chunk_rows", [None, 7, 250])
def test_group_sums_equal_bincount_on_whole_data(weighted: bool, chunk_rows: int | None) -> None:
    g, w, v1, v2 = _data()
    ref = _reference(g, w if weighted else None, [v1, v2])
    labels = np.unique(g)
    known = group_sums([v1, v2], g, labels, w if weighted else None, chunk_rows=chunk_rows)
    found_labels, found = keyed_group_sums([v1, v2], g, w if weighted else None, chunk_rows=chunk_rows)
    np.testing.assert_allclose(known, ref, rtol=1e-12, atol=1e-10)
    np.testing.assert_array_equal(found_labels, labels)
    np.testing.assert_allclose(found, ref, rtol=1e-12, atol=1e-10)
    assert known.dtype == np.float64 and known.shape == (3, labels.size)


def test_group_sums_from_memmap_and_dask_equal_numpy(tmp_path) -> None:
    da = pytest.importorskip("dask.array")
    g, w, v1, _ = _data(2_000, seed=4)
    ref = _reference(g, w, [v1])
    labels = np.unique(g)
    np.save(tmp_path / "v1.npy", v1)
    np.save(tmp_path / "g.npy", g)
    from_files = group_sums([str(tmp_path / "v1.npy")], str(tmp_path / "g.npy"), labels, w, chunk_rows=300)
    np.testing.assert_allclose(from_files, ref, rtol=1e-12, atol=1e-10)
    dv, dg = da.from_array(v1, chunks=450), da.from_array(g, chunks=450)
    from_dask = group_sums([dv], dg, labels, w)            # w in memory: aligned to the Dask blocks
    np.testing.assert_allclose(from_dask, ref, rtol=1e-12, atol=1e-10)
    lab, keyed = keyed_group_sums([dv], dg, w)
    np.testing.assert_array_equal(lab, labels)
    np.testing.assert_allclose(keyed, ref, rtol=1e-12, atol=1e-10)


def test_keyed_sums_apply_the_chunk_transform() -> None:
    g, w, v1, _ = _data(500, seed=2)

    def doubled(gc: np.ndarray, wc: np.ndarray | None, vc: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        return wc, 2.0 * vc

    _, plain = keyed_group_sums([v1], g, w, chunk_rows=64)
    _, twice = keyed_group_sums([v1], g, w, chunk_rows=64, transform=doubled)
    np.testing.assert_allclose(twice[0], plain[0], rtol=1e-12)
    np.testing.assert_allclose(twice[1], 2.0 * plain[1], rtol=1e-12)


def test_map_reduce_sum_is_exact_for_every_chunking() -> None:
    x = np.arange(1, 1_001, dtype=np.int64)
    for rows in (1, 3, 999, 1_000, 5_000):
        assert int(map_reduce(lambda a: a.sum(), lambda s, t: s + t, [x], chunk_rows=rows)) == 500_500


def test_sources_of_one_column_become_1d_and_others_are_refused() -> None:
    col = np.arange(6.0).reshape(6, 1)
    assert as_source(col).shape == (6,)
    with pytest.raises(DataValidationError, match=r"X must be one-dimensional, got shape \(3, 2\)"):
        as_source(np.zeros((3, 2)))
    da = pytest.importorskip("dask.array")
    assert as_source(da.from_array(col, chunks=(2, 1))).shape == (6,)
    with pytest.raises(DataValidationError, match=r"scores must be one-dimensional, got a Dask array of shape"):
        as_source(da.zeros((4, 2), chunks=2), name="scores")


def test_json_safe_record_makes_strict_json() -> None:
    record = {"a": np.float64(0.25), 3: [np.int64(2), float("nan"), (np.inf, -1.5)],
              "nested": {"x": np.float32(1.5), "y": None}}
    safe = json_safe_record(record)
    assert safe == {"a": 0.25, "3": [2, None, [None, -1.5]], "nested": {"x": 1.5, "y": None}}
    assert json.loads(json.dumps(safe, allow_nan=False)) == safe     # allow_nan=False: no nan/inf left
    assert type(safe["a"]) is float and type(safe["3"][0]) is int
    assert json_safe(record) == safe


@pytest.mark.parametrize("n,delta", [(1, 0.5), (37, 0.05), (10_000, 1e-6)])
def test_dkw_and_hoeffding_margins_are_the_formula(n: int, delta: float) -> None:
    expected = math.sqrt(math.log(2.0 / delta) / (2.0 * n))
    assert float(dkw_margin(n, delta)) == pytest.approx(expected, rel=1e-15)
    assert float(hoeffding_margin(n, delta)) == pytest.approx(expected, rel=1e-15)
    # four times the rows halve the margin
    assert float(dkw_margin(4 * n, delta)) == pytest.approx(expected / 2, rel=1e-14)
    with pytest.raises(DataValidationError, match="delta"):
        hoeffding_margin(n, 1.0)
    with pytest.raises(DataValidationError, match="at least 1"):
        dkw_margin([n, 0], delta)
