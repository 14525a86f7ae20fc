"""The fair-ranking model card on the law school data: exposure parity holds in every list, the
fair utility is at most the utility of ranking by score, and the duals price eps."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA_HOME

from fairopt.cli import main

CARD = Path(__file__).resolve().parents[1] / "models" / "fair-ranking-law.toml"
pytestmark = pytest.mark.skipif(not DATA_HOME, reason="card reads benchmark files: set FAIROPT_DATA_HOME")


def run(tmp_path, *sets):
    args = [a for s in sets for a in ("--set", s)]
    assert main(["run", str(CARD), "--out", str(tmp_path), "--quiet", *args]) == 0
    return json.loads((tmp_path / "result.json").read_text())


def test_card_exposure_parity_before_and_after(tmp_path):
    res = run(tmp_path, "parameters.n_queries=30")
    m = res["metrics"]
    assert res["status"] == "optimal" and res["formulation"] == "fair_ranking"
    assert m["max_disparity_after"] <= 0.01 + 1e-8 < m["disparity_before"]
    assert m["utility_after"] <= m["utility_before"] and m["price_of_fairness"] > 0
    assert m["dutility_deps"] > 0
    gap_before = abs(m["exposure_before[White]"] - m["exposure_before[non-White]"])
    gap_after = abs(m["exposure_after[White]"] - m["exposure_after[non-White]"])
    assert gap_after <= 0.01 + 1e-8 < gap_before                      # White lists ranked higher by score
    titles = [t["title"] for t in res["tables"]]
    assert "Exposure per group (mean over lists)" in titles


def test_card_lp_reference_agrees(tmp_path):
    cg = run(tmp_path / "cg", "parameters.n_queries=3", "parameters.query_size=12")
    lp = run(tmp_path / "lp", "parameters.n_queries=3", "parameters.query_size=12", "parameters.method=lp")
    assert lp["metrics"]["utility_after"] == pytest.approx(cg["metrics"]["utility_after"], abs=1e-7)


def test_card_build_is_the_lp_of_the_first_list():
    from fairopt.ranking import fair_ranking
    from fairopt.runs.ranking import Data, Parameters, build, candidate_lists
    params, data = Parameters(n_queries=2, query_size=15), Data()
    rel, grp = candidate_lists(data, params)
    sol = build(None, params, data).solve("highs")
    assert sol.objective == pytest.approx(fair_ranking(rel[0], grp[0], params.eps).utility, abs=1e-7)
