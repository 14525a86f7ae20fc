"""Sweeps cannot mix or wedge (issue 22, part 3): invalid records, corrupt manifests, records of
another card, equal grid values, two sweeps in one folder, atomic frontier files."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fairopt.cli import main
from fairopt.errors import ConfigError, OutputError
from fairopt.runs import tv_repair
from fairopt.runs.frontier import frontier
from fairopt.runs.sweep import LOCK_NAME, expand, parse_grid, run_sweep, sweep_lock

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "models" / "quickstart.toml"
GRID = ["statistical_rate=0.8,0.9,1.0"]


@pytest.fixture
def swept(tmp_path):
    out = tmp_path / "sw"
    summary = run_sweep(QUICKSTART, GRID, out=out)
    assert len(summary.ran) == 3
    return out, {r["task"]["id"]: r for r in summary.records}


@pytest.mark.parametrize("content", ["{}", "[]", "null", '"text"', "{\"status\": \"optimal\"}", "BROKEN"])
def test_records_that_are_not_records_are_recomputed_and_reported(swept, content, capsys):
    out, records = swept
    victim = sorted(records)[1]
    path = out / "tasks" / victim / "result.json"
    path.write_text(content)
    # frontier leaves it out and says so; it never crashes
    assert main(["frontier", str(out), "--no-plot"]) == 0
    err = capsys.readouterr().err
    assert str(path) in err and "rerun the sweep" in err
    again = run_sweep(QUICKSTART, GRID, out=out)
    assert again.ran == [victim] and len(again.skipped) == 2
    assert again.invalid and str(path) in again.invalid[0]
    rec = json.loads(path.read_text())
    assert rec["status"] == "optimal" and rec["metrics"] == records[victim]["metrics"]
    assert json.loads((out / "summary.json").read_text())["invalid_records"] == again.invalid


def test_a_string_metric_is_not_a_record(swept, capsys):
    out, records = swept
    victim = sorted(records)[0]
    path = out / "tasks" / victim / "result.json"
    rec = dict(records[victim])
    rec["metrics"] = {**rec["metrics"], "tv_distance": "0.1"}
    path.write_text(json.dumps(rec))
    assert main(["sweep", str(QUICKSTART), "--grid", GRID[0], "--out", str(out), "--quiet"]) == 0
    assert "metric 'tv_distance' is not a number" in capsys.readouterr().err
    assert json.loads(path.read_text())["metrics"]["tv_distance"] == records[victim]["metrics"]["tv_distance"]


def test_corrupt_manifest_is_an_error_that_says_how_to_recover(swept, capsys):
    out, _records = swept
    (out / "sweep.json").write_text('{"card": "quick')
    assert main(["sweep", str(QUICKSTART), "--grid", GRID[0], "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "sweep.json is not a valid sweep manifest" in err and "delete" in err
    # following the advice: the records of this card are reused, nothing is recomputed
    (out / "sweep.json").unlink()
    again = run_sweep(QUICKSTART, GRID, out=out)
    assert again.ran == [] and len(again.skipped) == 3
    for content in ("[]", "null", '{"tasks": 3}'):
        (out / "sweep.json").write_text(content)
        with pytest.raises(ConfigError, match="not a valid sweep manifest"):
            run_sweep(QUICKSTART, GRID, out=out)


def test_records_of_another_card_or_set_are_never_reused(swept, tmp_path):
    out, _records = swept
    (out / "sweep.json").unlink()                   # nothing left that names the old card
    other = run_sweep(QUICKSTART, GRID, out=out, overrides=["parameters.protected=sex"])
    assert len(other.ran) == 3 and other.skipped == [] and len(other.invalid) == 3
    assert all("another card" in p for p in other.invalid)
    for rec in other.records:
        assert rec["parameters"]["protected"] == "sex"
    # a different card file with the same grid into that folder is refused while the manifest names it
    card = tmp_path / "other.toml"
    card.write_text(QUICKSTART.read_text().replace('protected = "race"', 'protected = "sex"')
                    .replace("quickstart", "other"))
    with pytest.raises(ConfigError, match="different card"):
        run_sweep(card, GRID, out=out)


def test_numerically_equal_grid_values_are_one_task(tmp_path):
    grid = parse_grid(["statistical_rate=0.9,0.90,9e-1,1,1.0", "protected=race,'race',sex"], tv_repair)
    assert grid["parameters.statistical_rate"] == ["0.9", "1"]
    assert grid["parameters.protected"] == ["race", "sex"]
    tasks = expand(grid)
    assert len(tasks) == 4 and len({t.id for t in tasks}) == 4
    summary = run_sweep(QUICKSTART, ["statistical_rate=0.9,0.90"], out=tmp_path / "s")
    assert len(summary.records) == 1 and len(list((tmp_path / "s" / "tasks").iterdir())) == 1


def test_two_sweeps_in_one_folder_refuse_each_other(tmp_path, capsys):
    out = tmp_path / "sw"
    with sweep_lock(out):
        # another process holds the folder: refused, nothing written
        code = main(["sweep", str(QUICKSTART), "--grid", GRID[0], "--out", str(out), "--quiet"])
        assert code == 2
        err = capsys.readouterr().err
        assert f"another sweep (pid {os.getpid()}" in err and "another --out" in err
        assert not (out / "tasks").exists()
        # the same from a second process
        proc = subprocess.run([sys.executable, "-m", "fairopt.cli", "sweep", str(QUICKSTART), "--grid", GRID[0],
                               "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2 and "another sweep" in proc.stderr
    # a lock file left by a dead sweep (its pid no longer runs) does not wedge the folder
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (out / LOCK_NAME).write_text(f"{dead.stdout.strip()} somehost 0\n")
    assert main(["sweep", str(QUICKSTART), "--grid", GRID[0], "--out", str(out), "--quiet"]) == 0
    assert len(list((out / "tasks").glob("*/result.json"))) == 3


def test_frontier_files_are_written_atomically(swept, monkeypatch):
    from fairopt.runs import files
    out, _ = swept
    first = frontier(out)
    before = {k: p.read_bytes() for k, p in first.files.items()}
    real = os.replace

    def full(src, dst):
        if str(dst).endswith("frontier.png"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst)
    monkeypatch.setattr(files.os, "replace", full)
    with pytest.raises(OutputError, match=r"frontier\.png: the disk is full; the previous file is kept"):
        frontier(out)
    assert (out / "frontier.png").read_bytes() == before["png"]
    assert not [p for p in out.iterdir() if ".tmp" in p.name]


_SLOW_SWEEP = """
import sys, time
import fairopt.runs.sweep as sw
real = sw.run_task
def slow(payload):
    if payload["task"]["values"]["parameters.statistical_rate"] == 0.9:
        print("ready", file=sys.stderr, flush=True)
        time.sleep(60)
    return real(payload)
sw.run_task = slow
from fairopt.cli import main
sys.exit(main(["sweep", sys.argv[1], "--grid", "statistical_rate=0.8,0.9,1.0", "--out", sys.argv[2], "--quiet"]))
"""


def test_ctrl_c_during_a_sweep_exits_130_keeps_finished_tasks_and_frees_the_folder(tmp_path):
    import signal
    out = tmp_path / "sw"
    env = {k: v for k, v in os.environ.items() if k != "FAIROPT_DATA_HOME"}
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_SWEEP, str(QUICKSTART), str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err
    assert err.strip().startswith("interrupted: finished tasks are stored")
    assert len(list((out / "tasks").glob("*/result.json"))) == 1           # the 0.8 task, whole
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]
    again = run_sweep(QUICKSTART, GRID, out=out)                           # the lock went with the process
    assert len(again.skipped) == 1 and len(again.ran) == 2
