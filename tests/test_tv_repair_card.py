"""The Adult mapping card through the CLI: run on pyomo, export MPS and read it back in HiGHS,
infeasibility as a result; the exact aggregated baseline on the 10^10-cell COMPAS domain."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import requires_data

from fairopt.cli import main
from fairopt.modeling import installed_specs

CARD = Path(__file__).resolve().parents[1] / "models" / "tv-repair-adult.toml"


@pytest.mark.skipif("pyomo:appsi_highs" not in installed_specs("LP"), reason="pyomo appsi_highs missing")
def test_card_runs_on_pyomo_and_the_exported_mps_has_the_same_optimum(tmp_path):
    import highspy
    assert main(["run", str(CARD), "--solver", "pyomo:appsi_highs", "--out", str(tmp_path), "--quiet"]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "optimal" and result["backend"] == "pyomo"
    m = result["metrics"]
    assert m["statistical_rate_after"] >= 1 / 1.05 - 1e-9 and m["statistical_rate_before"] < 0.5
    assert m["distortion_excess>=0.99"] <= 0.1 + 1e-9 and m["distortion_excess>=2.99"] <= 1e-12
    assert m["mapping_variables"] == 2300 and m["dense_variables"] == 31752
    mps = tmp_path / "m.mps"
    assert main(["inspect", str(CARD), "--export", str(mps)]) == 0
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(mps))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(m["utility_loss"], abs=1e-9)


def test_infeasible_card_reports_the_constraint_and_minimal_epsilon(tmp_path):
    code = main(["run", str(CARD), "--out", str(tmp_path), "--quiet", "--set", "parameters.discrimination=target"])
    assert code == 1
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "infeasible" and result["infeasible_constraint"] == "discrimination"
    eps = result["tightest"]["epsilon"]
    assert 0.05 < eps < 1
    ok = tmp_path / "ok"
    assert main(["run", str(CARD), "--out", str(ok), "--quiet", "--set", "parameters.discrimination=target",
                 "--set", f"parameters.epsilon={eps + 1e-6}"]) == 0


def test_card_rejects_parameters_of_the_other_model(tmp_path, capsys):
    assert main(["run", str(CARD), "--out", str(tmp_path), "--set", "parameters.statistical_rate=0.9"]) == 2
    assert "do not apply" in capsys.readouterr().err


@requires_data
def test_aggregated_baseline_is_exact_on_the_large_compas_domain():
    from fairopt.formulations.maxent.datasets import load_paper_dataset
    from fairopt.formulations.tv_repair import TVRepair
    data = load_paper_dataset("compas-large")
    cells, counts = data.domain.unique_codes(data.frame)
    assert data.domain.size > 10**10
    for protected in ("sex", "race"):
        model = TVRepair(data.domain, cells, counts, protected=protected, label=data.label, favourable_label=1,
                         statistical_rate=1.0)
        res = model.solve("highs")
        # verify on the lifted cell distribution, independently of the block LP
        d, y = data.domain.index(protected), data.domain.index(data.label)
        q = dict(zip(data.domain.ravel(model.cells).tolist(), model.q, strict=False))
        p = dict(zip(data.domain.ravel(res.cells).tolist(), res.p, strict=False))
        tv = 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))
        assert tv == pytest.approx(res.tv, abs=1e-12)
        mass = np.bincount(res.cells[:, d], weights=res.p)
        fav = np.bincount(res.cells[:, d], weights=res.p * (res.cells[:, y] == 1))
        np.testing.assert_allclose(mass, model.r, atol=1e-12)
        assert abs(fav[0] / mass[0] - fav[1] / mass[1]) < 1e-9
        assert abs(res.p.sum() - 1) < 1e-12 and (res.p >= 0).all()


def test_benchmark_smoke(tmp_path):
    import sys
    pytest.importorskip("aif360")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import tv_repair_vs_aif360 as bench
    res = bench.run(quick=True, out=tmp_path / "r.json")
    adult = res["adult_252"]
    assert adult["aif360"]["status"] == "optimal" and adult["fairopt"]["highs"]["status"] == "optimal"
    assert adult["objective_difference_highs"] < 1e-4
    assert adult["fairopt"]["highs"]["variables"] < adult["aif360"]["variables"]
    assert json.loads((tmp_path / "r.json").read_text())["adult_252"]["records"] == 45222
