"""Every shipped model card, and every command its comments show, as a new user meets them.

Cards are discovered by globbing ``models/*.toml``, so new cards are covered automatically. Cards
that read benchmark files run when ``FAIROPT_DATA_HOME`` is set. Long cards run on a reduced
``--set`` (a subsample, fewer eps values) that keeps their model and defaults; each run must exit 0
with status ``optimal``, and each of its tables must fit 80 columns without cutting a cell.

Every metric a card reports is pinned in ``tests/data/card_metrics.json`` (written from a reviewed
run with ``FAIROPT_PIN_CARDS=1``): a refactor that changes a card's figures fails here, to 1e-9
absolute and 1e-7 relative (timings are not pinned).
"""
from __future__ import annotations

import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from fairopt._cli_output import _rich_table, format_column
from fairopt.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from conftest import DATA_HOME

ROOT = Path(__file__).resolve().parents[1]
CARDS = sorted((ROOT / "models").glob("*.toml"))
PINS = Path(__file__).resolve().parent / "data" / "card_metrics.json"

#: reductions per formulation, so the whole set stays quick (the model and its defaults are kept)
REDUCED = {
    "threshold_debiasing": ["data.subsample=4000"],
    "maxent": ["parameters.n_samples=2000"],
    "fair_selection": ["data.pool_fraction=0.2"],
    "fair_logloss": ["data.subsample=4000"],
    "multiclass_debiasing": ["data.subsample=4000"],
}
#: and per card, where the card itself is long
REDUCED_CARD = {"fair-regression-adult": ["data.subsample=3000"], "fair-regression-adult-2k": ["data.subsample=1000"]}


def _raw(card: Path) -> dict:
    return tomllib.loads(card.read_text())


def _needs_data(card: Path) -> bool:
    return not str(_raw(card).get("data", {}).get("dataset", "")).startswith("builtin:")


def _reduced(card: Path) -> list[str]:
    raw = _raw(card)
    sets = list(REDUCED.get(raw["formulation"]["name"], []))
    eps = raw.get("parameters", {}).get("eps")
    if raw["formulation"]["name"] == "fair_regression" and isinstance(eps, list) and eps:
        sets.append(f"parameters.eps=[{eps[0]}]")            # one point of the card's sweep
    sets += REDUCED_CARD.get(card.stem, [])
    return [a for s in sets for a in ("--set", s)]


def _skip_without_data(card: Path):
    if _needs_data(card) and not DATA_HOME:
        pytest.skip("card reads benchmark files: set FAIROPT_DATA_HOME")


def _comment_commands(card: Path) -> list[list[str]]:
    """The arguments after ``fairopt run <card>`` (or ``...``) of every command in the card's comments."""
    text = "\n".join(line.strip()[1:].strip() for line in card.read_text().splitlines()
                     if line.strip().startswith("#"))
    out = []
    for line in text.replace("\\\n", " ").splitlines():       # shell line continuations
        m = re.search(r"(?:fairopt run \S+\.toml|^\.\.\.)(.*)$", line)
        if m:
            out.append(shlex.split(re.split(r"\s#\s", m.group(1))[0]))
    return out


def _run(card: Path, tmp_path, extra: list[str]) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main(["run", str(card), "--out", str(out), "--quiet", *extra])
    return code, json.loads((out / "result.json").read_text())


def _assert_fits_80_columns(result: dict) -> None:
    from rich.console import Console
    tables = result["tables"] + [{"title": "Metrics", "columns": ["metric", "value"],
                                  "rows": list(result["metrics"].items())}]
    for t in tables:
        buf = io.StringIO()
        Console(file=buf, width=80, highlight=False, color_system=None).print(
            _rich_table(t["title"], t["columns"], t["rows"]))
        text = buf.getvalue()
        assert "…" not in text, text
        assert max(len(line) for line in text.splitlines()) <= 80
        lines = text.splitlines()
        columns = [format_column([r[i] for r in t["rows"]]) for i in range(len(t["columns"]))]
        for j, row in enumerate(t["rows"]):
            for i, cell in enumerate(row):
                # a number is whole on one line (as its column prints it); a label may wrap, but only between words
                parts = [columns[i][j]] if not isinstance(cell, str) else cell.split()
                for shown in parts:
                    assert any(shown in line for line in lines), f"cell {shown!r} is cut in:\n{text}"


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.stem)
def test_every_card_runs_optimal_and_fits_80_columns(card, tmp_path):
    _skip_without_data(card)
    code, res = _run(card, tmp_path, _reduced(card))
    assert (code, res["status"]) == (0, "optimal"), res.get("error") or res.get("hint")
    assert "setup_seconds" not in res["metrics"] and "sample_seconds" not in res["metrics"]
    assert ":" not in str(res["solver"]) and res["backend"]
    _assert_fits_80_columns(res)
    _assert_pinned(card.stem, res)


def _figures(res: dict) -> dict[str, float]:
    return {k: float(v) for k, v in res["metrics"].items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and "seconds" not in k}


def _assert_pinned(stem: str, res: dict) -> None:
    """The card's figures equal the pinned ones (or are pinned, with ``FAIROPT_PIN_CARDS=1``)."""
    import os
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if os.environ.get("FAIROPT_PIN_CARDS"):
        pins[stem] = _figures(res)
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
        return
    if stem not in pins:
        pytest.fail(f"{stem}: no pinned figures; review a run and pin it with FAIROPT_PIN_CARDS=1")
    got = _figures(res)
    assert set(got) == set(pins[stem]), f"{stem}: metric names changed"
    for name, want in pins[stem].items():
        assert got[name] == pytest.approx(want, rel=1e-7, abs=1e-9), f"{stem}: {name}"


COMMENT_COMMANDS = [pytest.param(card, args, id=f"{card.stem}:{' '.join(args)}")
                    for card in CARDS for args in _comment_commands(card) if args]


@pytest.mark.parametrize("card, args", COMMENT_COMMANDS)
def test_every_command_in_a_card_comment_runs_optimal(card, args, tmp_path):
    _skip_without_data(card)
    code, res = _run(card, tmp_path, _reduced(card) + args)
    assert (code, res["status"]) == (0, "optimal"), res.get("error") or res.get("hint")
    if "--solver" in args:
        backend, _, solver = args[args.index("--solver") + 1].partition(":")
        assert res["backend"] == backend and (not solver or res["solver"] == solver)


def test_card_comments_name_solvers_in_cli_form():
    # every solver a card comment offers is a runnable `--solver` command (so the test above runs it)
    for card in CARDS:
        for line in card.read_text().splitlines():
            if line.lstrip().startswith("#") and re.search(r"also work|works? too", line):
                pytest.fail(f"{card.name}: {line.strip()!r} names solvers outside a runnable command")
