"""Smoke test of benchmarks/sidebyside.py (smallest sizes): the report is complete and each side's
quality is comparable, so a speed ratio never stands for a different answer. No timed asserts."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from conftest import requires_data


@requires_data
def test_sidebyside_smoke(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import sidebyside as bench
    res = bench.run(smoke=True, repeats=1, out=tmp_path)
    w = res["workloads"]
    thr = w["threshold_dp_1e+04"]["sides"]
    # held-out quality: parity up to sampling noise on both sides, comparable error
    assert thr["fairopt"]["violation"] <= 0.03 and thr["ThresholdOptimizer"]["violation"] <= 0.03
    assert thr["fairopt"]["error"] <= thr["ThresholdOptimizer"]["error"] + 0.01
    me = w["maxent_adult"]["sides"]
    objs = [s["objective"] for s in me.values()]
    assert all(s["status"] == "optimal" for s in me.values()) and np.ptp(objs) <= 1e-8
    bgl = w["bgl_law"]["sides"]
    assert bgl["fairopt"]["violation"] <= bgl["fairlearn_EG"]["violation"] + 1e-9
    assert bgl["fairopt"]["loss"] <= bgl["fairlearn_EG"]["loss"] + 1e-9
    for name in ("threshold_scaling", "maxent_scaling"):
        assert np.isfinite(w[name]["slope_fit_cpu"]) and len(w[name]["rows"]) == 2
    assert all(r["status"] == "optimal" for r in w["maxent_scaling"]["rows"])
    assert "fair_classifier_5x" in res["targets"] and "load average" in res["note"]
    saved = json.loads((tmp_path / "sidebyside.json").read_text())
    assert saved["workloads"].keys() == w.keys()
    table = (tmp_path / "sidebyside.md").read_text()
    assert "ratio peer/ours" in table and "bgl_law" in table and "slope" in table
