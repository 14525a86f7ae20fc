"""Smoke test of benchmarks/overhead_inprocessing.py: the JSON has its shape and each bare solve
is the estimator's own program (objectives agree); timings are the benchmark's business."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import load_benchmark, requires_data

ESTIMATORS = {"FairClassifier", "FairRegressor", "FairRegressor[least_squares]", "SEORegressor",
              "FairLogLossClassifier"}
TIMING_KEYS = ("fit_seconds", "bare_seconds", "ratio")


@requires_data
def test_overhead_inprocessing_smoke(tmp_path):
    bench = load_benchmark("overhead_inprocessing")
    out = tmp_path / "overhead.json"
    res = bench.run("smoke", out)
    assert json.loads(out.read_text()) == json.loads(json.dumps(res, default=float))
    assert res["profile"] == "smoke"
    assert res["machine"]["cpu_count"] >= 1 and len(res["machine"]["load_average_start"]) == 3
    assert set(res["estimators"]) == ESTIMATORS
    for name, rec in res["estimators"].items():
        for key in TIMING_KEYS:
            assert rec[key] > 0, (name, key)
        assert rec["ratio"] == pytest.approx(rec["fit_seconds"] / rec["bare_seconds"])
        assert len(rec["fit_seconds_all"]) == len(rec["bare_seconds_all"]) == res["repeats"]
        assert np.isfinite(rec["fit_objective"]) and np.isfinite(rec["bare_objective"])
        # the bare solve answers the same program as the estimator
        assert abs(rec["fit_objective"] - rec["bare_objective"]) <= 1e-6, name
        assert rec["same_program"] is True
    games = res["estimators"]
    assert games["FairClassifier"]["oracle_calls"] >= 1 and games["FairClassifier"]["lp_solves"] >= 1
    assert games["FairClassifier"]["max_theta_difference"] <= 1e-6
    assert games["FairRegressor"]["learner_fits"] >= 1
    assert games["FairRegressor"]["max_coef_difference"] <= 1e-9
    assert games["FairRegressor[least_squares]"]["learner_fits"] >= 1
    assert games["SEORegressor"]["max_coef_difference"] <= 1e-9
