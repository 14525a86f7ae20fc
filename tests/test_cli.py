"""The command line and model cards, per the public contract."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairopt.cli import main
from fairopt.errors import ConfigError
from fairopt.runs.card import load_card

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "models" / "quickstart.toml"
CONTRACT_KEYS = {"card", "formulation", "backend", "solver", "status", "metrics", "timings", "parameters"}


def _run(tmp_path, *extra, name="out"):
    out = tmp_path / name
    assert main(["run", str(QUICKSTART), "--out", str(out), "--quiet", *extra]) == 0
    return json.loads((out / "result.json").read_text())


def test_quickstart_same_tv_on_three_backends(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIROPT_DATA_HOME", raising=False)  # built-in data only
    results = {s: _run(tmp_path, "--solver", s, name=s.replace(":", "_"))
               for s in ("highs", "pyomo:appsi_highs", "cvxpy:CLARABEL")}
    for spec, res in results.items():
        assert CONTRACT_KEYS <= set(res), spec
        assert set(res["timings"]) >= {"build_seconds", "solve_seconds", "total_seconds"}
        assert res["status"] == "optimal"
        assert all(isinstance(v, float) for v in res["metrics"].values())
        assert res["metrics"]["statistical_rate_after"] == pytest.approx(1.0, abs=1e-7)
    tv = [r["metrics"]["tv_distance"] for r in results.values()]
    assert max(tv) - min(tv) < 1e-6
    assert results["pyomo:appsi_highs"]["backend"] == "pyomo"
    assert results["pyomo:appsi_highs"]["solver"] == "appsi_highs"
    assert results["cvxpy:CLARABEL"]["solver"] == "CLARABEL"


def test_set_overrides_the_card(tmp_path):
    res = _run(tmp_path, "--set", "parameters.statistical_rate=0.9")
    assert res["parameters"]["statistical_rate"] == 0.9
    assert res["metrics"]["statistical_rate_after"] == pytest.approx(0.9, abs=1e-7)
    res = _run(tmp_path, "--set", "parameters.protected=sex", "--set", "parameters.statistical_rate=0.8",
               name="sex")
    assert res["metrics"]["statistical_rate_after"] >= 0.8 - 1e-9


@pytest.mark.parametrize("override, key", [
    ("parameters.statistical_rate=1.5", "parameters.statistical_rate"),
    ("parameters.statisticl_rate=0.9", "parameters.statisticl_rate"),
    ("data.dataset=builtin:german", "data.dataset"),
    ("card.nmae=x", "card.nmae"),
    ("formulation.name=magic", "formulation.name"),
])
def test_bad_cards_name_the_key(override, key):
    with pytest.raises(ConfigError) as err:
        load_card(QUICKSTART, [override])
    assert key in str(err.value) or repr(key.split(".")[-1]) in str(err.value) or "magic" in str(err.value)


def test_bad_card_exits_2_with_message(tmp_path, capsys):
    code = main(["run", str(QUICKSTART), "--out", str(tmp_path), "--set", "parameters.statistical_rate=2"])
    assert code == 2
    assert "parameters.statistical_rate" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.toml")]) == 2
    assert main(["run", str(QUICKSTART), "--solver", "cvxpy:NOPE", "--out", str(tmp_path)]) == 2
    assert "Installed alternatives" in capsys.readouterr().err


def test_solvers_json_lists_backends(capsys):
    assert main(["solvers", "--json"]) == 0
    rows = {r["backend"]: r for r in json.loads(capsys.readouterr().out)}
    assert {"highs", "osqp", "scipy", "cvxpy", "pyomo"} <= set(rows)
    assert all(rows[b]["installed"] for b in ("highs", "osqp", "scipy", "cvxpy", "pyomo"))
    assert "appsi_highs" in rows["pyomo"]["solvers"] and "CLARABEL" in rows["cvxpy"]["solvers"]
    assert "LP" in rows["scipy"]["problem_classes"] and "QP" not in rows["scipy"]["problem_classes"]
    assert rows["native"]["installed"] and "threshold" in rows["native"]["problem_classes"]


def test_inspect_prints_summary_and_exports(tmp_path, capsys):
    mps = tmp_path / "quick.mps"
    assert main(["inspect", str(QUICKSTART), "--export", str(mps), "--set", "parameters.form=full"]) == 0
    out = capsys.readouterr().out
    assert "group_mass" in out and "statistical_rate" in out and "LP" in out
    text = mps.read_text()
    assert "statistical_rate_0" in text and "gain_143" in text


def test_entry_point_installed(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FAIROPT_DATA_HOME"}
    proc = subprocess.run([sys.executable, "-m", "fairopt.cli", "run", str(QUICKSTART), "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "statistical rate" in proc.stdout
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "optimal"


def test_undefined_metrics_are_listed_not_written_as_null(tmp_path):
    # exact parity among the 7 age-decade groups of Adult: the price of fairness is undefined (NaN)
    res = _run(tmp_path, "--set", 'data.dataset="builtin:adult"', "--set", 'parameters.protected="age_decade"')
    assert "price_of_fairness" not in res["metrics"]
    assert res["undefined_metrics"] == ["price_of_fairness"]
    assert all(isinstance(v, float) for v in res["metrics"].values())


def test_non_optimal_run_is_not_a_success(tmp_path):
    out = tmp_path / "limited"
    code = main(["run", str(QUICKSTART), "--out", str(out), "--quiet", "--set", "parameters.form=full",
                 "--set", "solver.options.simplex_iteration_limit=1", "--set", 'solver.options.presolve="off"'])
    res = json.loads((out / "result.json").read_text())
    # a limit exits 3 on every formulation (docs/cli.md); the message names the limit to raise
    assert code == 3 and res["status"] in ("iteration_limit", "time_limit")
    assert res["backend"] == "highs" and "iteration" in res["error"]
    assert res["hint"].startswith("raise the iteration limit: --set solver.options.simplex_iteration_limit=")


def test_iteration_limit_exits_3_with_a_result(tmp_path):
    card = ROOT / "models" / "maxent-compas-small.toml"
    out = tmp_path / "me"
    assert main(["run", str(card), "--out", str(out), "--quiet", "--set", "parameters.max_iter=1"]) == 3
    res = json.loads((out / "result.json").read_text())
    assert res["status"] == "iteration_limit" and CONTRACT_KEYS <= set(res)


# ---- the command line as a person meets it (issue 13) ------------------------------------------------------
def test_unknown_keys_suggest_the_closest_and_name_their_source(tmp_path, capsys):
    card = tmp_path / "typo.toml"
    card.write_text(QUICKSTART.read_text().replace("statistical_rate = 1.0", "statistcal_rate = 1.0"))
    assert main(["run", str(card), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "parameters.statistcal_rate: unknown key in the card; did you mean 'statistical_rate'?" in err
    assert main(["run", str(QUICKSTART), "--out", str(tmp_path / "o"), "--set", "parameters.protectd=sex"]) == 2
    assert "unknown key in --set; did you mean 'protected'?" in capsys.readouterr().err
    assert main(["run", str(ROOT / "models")]) == 2                    # a folder, not a card
    err = capsys.readouterr().err
    assert "is a folder; give one model card file" in err and "quickstart.toml" in err


def test_missing_data_error_gives_the_cli_form(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("FAIROPT_DATA_HOME", raising=False)
    code = main(["run", str(ROOT / "models" / "fair-regression-law.toml"), "--out", str(tmp_path)])
    assert code == 2
    assert "--set data.path=" in capsys.readouterr().err


def test_default_out_dir_keeps_each_solver(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(QUICKSTART), "--quiet"]) == 0
    assert main(["run", str(QUICKSTART), "--quiet", "--solver", "cvxpy:CLARABEL"]) == 0
    default = json.loads((tmp_path / "fairopt-results" / "quickstart" / "result.json").read_text())
    other = json.loads((tmp_path / "fairopt-results" / "quickstart@cvxpy-CLARABEL" / "result.json").read_text())
    assert (default["backend"], other["backend"], other["solver"]) == ("highs", "cvxpy", "CLARABEL")
    capsys.readouterr()
    assert main(["run", str(QUICKSTART), "--quiet", "--solver", "scipy", "--out", "fairopt-results/quickstart"]) == 0
    assert "replaced the highs result" in capsys.readouterr().err    # an explicit --out is told, not silent


@pytest.mark.parametrize("command", [["run", str(QUICKSTART), "--out", "OUT"], ["solvers", "--json"]])
def test_closed_pipe_ends_quietly(tmp_path, command):
    env = {k: v for k, v in os.environ.items() if k != "FAIROPT_DATA_HOME"}
    args = " ".join(c.replace("OUT", str(tmp_path / "o")) for c in command)
    proc = subprocess.run(f"{sys.executable} -m fairopt.cli {args} | head -c 10", shell=True, capture_output=True,
                          text=True, env=env, timeout=120)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    if command[0] == "run":
        assert json.loads((tmp_path / "o" / "result.json").read_text())["status"] == "optimal"


@pytest.mark.parametrize("solver, backend, inner", [("cvxpy:CLARABEL", "cvxpy", "CLARABEL"), ("scipy", "scipy", None),
                                                    ("highs", "highs", None)])
def test_result_json_records_backend_and_solver_apart(tmp_path, solver, backend, inner):
    for card in (QUICKSTART, ROOT / "models" / "maxent-compas-small.toml"):
        if card.stem.startswith("maxent") and solver != "cvxpy:CLARABEL":
            continue
        out = tmp_path / card.stem
        assert main(["run", str(card), "--out", str(out), "--quiet", "--solver", solver]) == 0
        res = json.loads((out / "result.json").read_text())
        assert res["backend"] == backend and ":" not in str(res["solver"])
        assert inner is None or res["solver"] == inner
        assert not [k for k in res["metrics"] if "seconds" in k]            # durations live in timings
        assert {"build_seconds", "solve_seconds", "total_seconds"} <= set(res["timings"])
    quick = json.loads((tmp_path / "quickstart" / "result.json").read_text())
    assert quick["parameters"]["favourable_label"] == 0 and quick["parameters"]["protected"] == "race"
    assert "setup_seconds" in quick["timings"]


def test_limits_exit_3_on_every_formulation(tmp_path):
    """A time or iteration limit is exit 3 with the limit named, whichever formulation hit it."""
    cases = [(QUICKSTART, ["--set", "solver.time_limit=1e-9", "--set", "parameters.form=full"]),
             (ROOT / "models" / "maxent-compas-small.toml", ["--set", "parameters.max_iter=1"])]
    scores = tmp_path / "scores.csv"
    rng = np.random.default_rng(0)
    g = rng.integers(0, 2, 3000)
    pd.DataFrame({"score": np.tanh(rng.normal(0.3 * g, 1.0)), "group": g,
                  "label": rng.integers(0, 2, 3000)}).to_csv(scores, index=False)
    cases.append((ROOT / "models" / "threshold-debiasing-adult.toml",
                  ["--set", 'data.dataset="scores"', "--set", f'data.path="{scores}"', "--set", "data.sensitive=[]",
                   "--solver", "highs", "--set", "solver.time_limit=1e-9"]))
    for i, (card, extra) in enumerate(cases):
        out = tmp_path / f"c{i}"
        code = main(["run", str(card), "--out", str(out), "--quiet", *extra])
        res = json.loads((out / "result.json").read_text())
        assert (code, res["status"]) in ((3, "time_limit"), (3, "iteration_limit")), (card.name, res)
        assert "limit" in res["hint"] and "--set " in res["hint"]


def test_inspect_export_says_what_and_refuses_huge_files(tmp_path, monkeypatch, capsys):
    import fairopt.cli as cli
    mps = tmp_path / "quick.mps"
    monkeypatch.setattr(cli, "EXPORT_LIMIT_BYTES", 1000.0)
    assert main(["inspect", str(QUICKSTART), "--export", str(mps)]) == 2
    assert "would be about" in capsys.readouterr().err and not mps.exists()
    assert main(["inspect", str(QUICKSTART), "--export", str(mps), "--force"]) == 0
    assert mps.stat().st_size > 1000


@pytest.mark.skipif(not os.environ.get("FAIROPT_DATA_HOME"), reason="needs FAIROPT_DATA_HOME")
def test_inspect_exports_only_what_the_card_solves(tmp_path, capsys):
    card = ROOT / "models" / "fair-regression-law.toml"            # least-squares oracle: no LP to export
    assert main(["inspect", str(card), "--export", str(tmp_path / "x.mps")]) == 2
    assert "--set parameters.oracle=hinge_lp" in capsys.readouterr().err
    assert main(["inspect", str(card), "--export", str(tmp_path / "x.lp"), "--set", "parameters.oracle=hinge_lp",
                 "--set", "data.subsample=300"]) == 0
    assert "exporting the weighted hinge LP" in capsys.readouterr().out and (tmp_path / "x.lp").is_file()


def test_documented_forms_work_from_set(tmp_path):
    # explicit group masses, and unsetting the card's statistical_rate to use the difference form
    res = _run(tmp_path, "--set", "parameters.representation=[0.5, 0.5]", name="masses")
    assert res["metrics"]["representation_rate_after"] == pytest.approx(1.0, abs=1e-9)
    res = _run(tmp_path, "--set", "parameters.statistical_rate=", "--set", "parameters.sr_difference=0.05",
               name="difference")
    assert "statistical_rate" not in res["parameters"] or res["parameters"]["statistical_rate"] is None
    assert res["metrics"]["statistical_rate_after"] > res["metrics"]["statistical_rate_before"]
    # a target mapping {column: level probabilities}: uniform levels everywhere
    from fairopt.data import load_builtin
    dom = load_builtin("compas").domain
    target = ", ".join(f"{n} = [{', '.join([repr(1 / len(dom.levels[n]))] * len(dom.levels[n]))}]" for n in dom.names)
    out = tmp_path / "target"
    assert main(["run", str(ROOT / "models" / "maxent-compas-small.toml"), "--out", str(out), "--quiet",
                 "--set", f"parameters.target={{{target}}}"]) == 0
    res = json.loads((out / "result.json").read_text())
    assert res["status"] == "optimal" and res["metrics"]["representation_rate"] == pytest.approx(1.0, abs=1e-6)
