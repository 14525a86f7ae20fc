"""Counting estimators on Dask DataFrames and Parquet files equal the in-memory fit; the
conditional matrix of balanced filtering from Dask / chunked cell codes equals the in-memory one."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairopt import stats
from fairopt.data import load_builtin
from fairopt.errors import DataValidationError
from fairopt.formulations.proxy_weights import conditional_matrix
from fairopt.preprocessing import MaxEntResampler, TVRepair

PARAMS = {"distortion": "adult", "clist": [0.99, 1.99, 2.99], "dlist": [0.1, 0.05, 0.0],
          "discrimination": "additive", "epsilon": 0.05}


@pytest.fixture(scope="module")
def adult():
    data = load_builtin("adult")
    frame = data.expand(shuffle=True, random_state=0)
    frame = frame[["sex", "age_decade", "education_years", "income"]].iloc[:12000].reset_index(drop=True)
    return data, frame


def _dask(frame, n=5):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(frame, npartitions=n)


@pytest.mark.parametrize("kind", ["dask", "parquet"])
def test_tv_repair_from_dask_and_parquet_equals_in_memory(adult, kind, tmp_path):
    data, frame = adult
    X, y = frame.drop(columns="income"), frame["income"]
    ref = TVRepair(**PARAMS, domain=data.domain).fit(X, y, sensitive_features="sex")
    if kind == "dask":
        src = _dask(frame)
    else:
        src = tmp_path / "adult.parquet"
        frame.to_parquet(src, row_group_size=1000)
    got = TVRepair(**PARAMS, domain=data.domain).fit(src, "income", sensitive_features="sex")
    assert got.objective_ == pytest.approx(ref.objective_, abs=1e-12)
    pd.testing.assert_frame_equal(got.rates_.reset_index(drop=True), ref.rates_.reset_index(drop=True),
                                  atol=1e-12)


def test_maxent_from_dask_equals_in_memory(adult):
    data, frame = adult
    X, y = frame.drop(columns="income"), frame["income"]
    ref = MaxEntResampler(C=0.5, target="balanced", domain=data.domain).fit(X, y, "sex")
    got = MaxEntResampler(C=0.5, target="balanced", domain=data.domain).fit(_dask(frame), "income", "sex")
    np.testing.assert_allclose(got.lambda_.to_numpy(), ref.lambda_.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(got.theta_.to_numpy(), ref.theta_.to_numpy(), atol=1e-12)
    assert got.kl_ == pytest.approx(ref.kl_, abs=1e-9)


def test_collapse_records_with_dask_series_and_weights(adult):
    _, frame = adult
    w = np.random.default_rng(0).random(len(frame))
    ddf = _dask(frame.assign(w=w))
    Xc, yc, sc, wc = stats.collapse_records(ddf.drop(columns=["income", "sex", "w"]), ddf["income"], ddf["sex"],
                                            sample_weight=ddf["w"])
    assert wc.sum() == pytest.approx(w.sum(), rel=1e-12)
    ref = frame.assign(w=w).groupby(["age_decade", "education_years", "income", "sex"])["w"].sum()
    got = pd.Series(wc.to_numpy(), index=pd.MultiIndex.from_frame(
        Xc.assign(income=yc.to_numpy(), sex=sc.to_numpy())[["age_decade", "education_years", "income", "sex"]]))
    np.testing.assert_allclose(got.sort_index().to_numpy(), ref.sort_index().to_numpy(), rtol=1e-12)
    with pytest.raises(DataValidationError, match="column 'nope'"):
        stats.collapse_records(ddf, "nope", "sex")
    with pytest.raises(DataValidationError, match="missing"):
        stats.collapse_records(_dask(frame.assign(age_decade=frame["age_decade"].where(frame.index > 5))),
                               "income", "sex")


@pytest.mark.parametrize("kind", ["dask", "memmap"])
def test_conditional_matrix_from_lazy_codes_equals_in_memory(kind, tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    n, L, K = 7000, 13, 3
    cells, groups, w = rng.integers(0, L, n), rng.integers(0, K, n), rng.random(n)
    cells[cells == 4] = 5           # an empty cell gets the prior row
    ref = conditional_matrix(cells, groups, K, sample_weight=w)
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        args = [da.from_array(a, chunks=900) for a in (cells, groups, w)]
    else:
        monkeypatch.setattr(stats._sources, "CHUNK_ROWS", 500)
        args = []
        for i, a in enumerate((cells, groups, w)):
            np.save(tmp_path / f"{i}.npy", a)
            args.append(np.load(tmp_path / f"{i}.npy", mmap_mode="r"))
    got = conditional_matrix(args[0], args[1], K, sample_weight=args[2], n_cells=L)
    for a, b in zip(got, ref, strict=False):
        np.testing.assert_allclose(a, b, atol=1e-12)
