"""Smoke run of benchmarks/multiclass_debiasing.py (tiny sizes, fairopt sides only)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import multiclass_debiasing as bench


def test_binary_case_smoke():
    fit, test = bench.synthetic(3000, 3, 0), bench.synthetic(3000, 3, 1)
    rows = bench.binary_case(fit, test, "equalized_odds", 0.02, repeats=1, peers=False)
    assert set(rows) == {"fairopt_threshold", "fairopt_multiclass", "fairopt_multiclass_eps_t"}
    for r in rows.values():
        assert r["fit_seconds"] > 0 and 0.5 < r["test_accuracy"] <= 1.0
        assert 0 <= r["test_gap_expected"] < 0.2       # fitted to 0.02; test noise on ~500 rows per cell
    # the gap measure itself: equal predictions in every group have no gap
    p, y, g = test
    assert bench.odds_gap(p * 0 + 0.3, y, g, "equalized_odds") < 1e-12


def test_scale_smoke():
    res = bench.run(only=("scale", "chunked"), smoke=True, out=None)
    for run in res["scale"]["runs"]:
        assert run["train_gap"] <= run["eps"] + 1e-8 and run["atoms"] == 5000
    ch = res["chunked"]
    assert ch["rows"] == 200_000 and ch["train_gap"] <= 0.01 + 1e-8 and ch["peak_rss_mb"] > 0
    assert ch["atoms"] <= 4 * 11 ** 3
