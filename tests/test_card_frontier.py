"""``fairopt frontier CARD.toml``: the exact frontier of a card's estimator, from the command line.

Each card that offers ``frontier_inputs`` runs on a subsample; the files it writes must hold a
non-increasing training objective, the breakpoints of the exact LP methods inside the range, and
with ``--confidence`` a certified gap at least the training ``eps`` of every point.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA_HOME

from fairopt.cli import main

ROOT = Path(__file__).resolve().parents[1]
CASES = [("threshold-debiasing-adult", "data.subsample=4000", "exact LP", "expected error"),
         ("multiclass-debiasing-adult", "data.subsample=3000", "exact LP", "expected cost"),
         ("regression-debiasing-law", "data.subsample=1500", "exact fits", "expected loss")]


@pytest.mark.skipif(not DATA_HOME, reason="the cards read benchmark files: set FAIROPT_DATA_HOME")
@pytest.mark.parametrize("card, subsample, method, objective", CASES, ids=[c[0] for c in CASES])
def test_card_frontier_writes_a_falling_curve(card, subsample, method, objective, tmp_path):
    out = tmp_path / "fr"
    args = ["frontier", str(ROOT / "models" / f"{card}.toml"), "--set", subsample, "--out", str(out), "--no-plot"]
    assert main(args) == 0
    res = json.loads((out / "frontier.json").read_text())
    assert (res["method"], res["objective"]) == (method, objective)
    eps = np.array([p["eps"] for p in res["points"]])
    value = np.array([p["value"] for p in res["points"]])
    assert eps.size >= 3 and np.all(np.diff(eps) > 0) and np.all(np.diff(value) <= 1e-9)
    assert value[0] > value[-1]                         # the constraint binds at eps = 0 on this data
    if method == "exact LP":
        bp = np.array(res["breakpoints"])
        assert bp.size > 0 and bp.min() >= eps[0] - 1e-12 and bp.max() <= eps[-1] + 1e-12
    assert (out / "frontier.csv").read_text().splitlines()[0].startswith("eps")


@pytest.mark.skipif(not DATA_HOME, reason="the card reads benchmark files: set FAIROPT_DATA_HOME")
def test_card_frontier_with_confidence_reports_certified_gaps(tmp_path):
    out = tmp_path / "fr"
    assert main(["frontier", str(ROOT / "models" / "threshold-debiasing-adult.toml"), "--set", "data.subsample=4000",
                 "--eps", "0.02,0.05,0.1", "--confidence", "0.9", "--out", str(out), "--no-plot"]) == 0
    res = json.loads((out / "frontier.json").read_text())
    assert res["confidence"] == 0.9
    for p in res["points"]:
        assert p["eps"] < p["certified_eps"] <= 1.0


def test_card_without_a_frontier_exits_2_and_says_to_sweep(tmp_path, capsys):
    assert main(["frontier", str(ROOT / "models" / "quickstart.toml"), "--out", str(tmp_path / "fr")]) == 2
    assert "sweep" in capsys.readouterr().err


@pytest.mark.parametrize("eps", ["0.1,abc", "", "0.1,,0.2"])
def test_card_frontier_refuses_a_bad_eps_list(eps, tmp_path, capsys):
    assert main(["frontier", str(ROOT / "models" / "quickstart.toml"), "--eps", eps, "--out", str(tmp_path)]) == 2
    assert "--eps takes comma-separated numbers" in capsys.readouterr().err
