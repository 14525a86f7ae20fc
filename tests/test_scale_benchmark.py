"""Smoke test of benchmarks/scale.py at tiny sizes: every section runs and its numbers hold."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"


def test_scale_benchmark_smoke(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIROPT_DATA_HOME", raising=False)     # the Adult section needs the data: skipped
    spec = importlib.util.spec_from_file_location("scale_benchmark", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "scale.json"
    res = mod.run("smoke", out, note="test")
    assert json.loads(out.read_text())["profile"] == "smoke"
    imp = res["import"]
    assert imp["import_fairopt"] > 0 and imp["python_pass"] > 0
    rates = res["dask_threshold"]["fitted_rates"]
    assert max(rates) - min(rates) <= 1e-9                 # parity on the Dask sample
    assert len(res["dask_threshold"]["worker_peak_rss_mb"]) == 2
    assert res["dask_metrics"]["demographic_parity_difference"] <= 1e-9
    assert res["dask_metrics"]["statistical_rate"] == pytest.approx(1.0, abs=1e-9)
    assert res["dask_maxent"]["distinct_records"] <= 2 * 7 * 4 * 2
    ch = res["chunked_threshold"]
    assert ch["peak_rss_mb"] < ch["limit_mb"]
    assert max(ch["fitted_rates"]) - min(ch["fitted_rates"]) <= 1e-9
    for gamma in ("gamma=0.0", "gamma=0.01"):
        q = res["quantised_vs_exact"][gamma]
        assert -1e-12 <= q["objective_loss"] <= q["objective_bound"]
        assert q["fairness_gap_difference"] <= 1e-9


def test_scale_benchmark_partial_run_updates_only_its_sections(tmp_path):
    spec = importlib.util.spec_from_file_location("scale_benchmark_partial", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "scale.json"
    out.write_text(json.dumps({"profile": "smoke", "mapping": {"kept": 1}, "section_notes": {"mapping": "old"}}))
    res = mod.run("smoke", out, note="quiet", only=("import",))
    stored = json.loads(out.read_text())
    assert stored == res
    assert stored["mapping"] == {"kept": 1} and stored["import"]["import_fairopt"] > 0
    assert stored["section_notes"] == {"mapping": "old", "import": "quiet"}
    with pytest.raises(SystemExit, match="unknown sections"):
        mod.run("smoke", out, only=("nope",))
    with pytest.raises(SystemExit, match="holds the 'smoke' profile"):
        mod.run("quick", out, only=("import",))     # a partial run never mixes profiles
