"""Sweeps (`fairopt sweep`), executors with shared inputs, resume, and frontiers (`fairopt frontier`)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairopt.cli import main
from fairopt.errors import ConfigError
from fairopt.parallel import get_executor, parse_executor
from fairopt.runs import tv_repair
from fairopt.runs.frontier import frontier, pareto_mask
from fairopt.runs.sweep import expand, parse_grid, run_sweep, split_values

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "models" / "quickstart.toml"
MAXENT = ROOT / "models" / "maxent-compas-small.toml"
#: 6 x 2 x 2 = 24 tasks on the built-in COMPAS domain
GRID24 = ["statistical_rate=0.5,0.6,0.7,0.8,0.9,1.0", "parameters.protected=race,sex",
          "representation=data,balanced"]


@pytest.fixture(scope="module")
def dask_address():
    """One local Dask cluster of two worker processes shared by this module's Dask tests."""
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    assert len(cluster.scheduler_info["workers"]) == 2
    yield cluster.scheduler_address
    cluster.close()


def _metrics_by_task(summary):
    return {r["task"]["id"]: (r["status"], r["metrics"]) for r in summary.records}


# ---- grid ----------------------------------------------------------------------------------------------------
def test_grid_values_keys_and_product():
    assert split_values("0.8, 0.9,[1, 2],'a,b',\"c\"") == ["0.8", "0.9", "[1, 2]", "'a,b'", '"c"']
    grid = parse_grid(["statistical_rate=0.8,0.9", "data.dataset=builtin:compas", "form=aggregated,full"],
                      tv_repair)
    assert list(grid) == ["parameters.statistical_rate", "data.dataset", "parameters.form"]
    tasks = expand(grid, folds=None)
    assert len(tasks) == 4 and len({t.id for t in tasks}) == 4
    assert tasks[0].values == {"parameters.statistical_rate": 0.8, "data.dataset": "builtin:compas",
                               "parameters.form": "aggregated"}
    assert [t.id for t in expand(grid)] == [t.id for t in tasks]          # ids are stable across runs
    with pytest.raises(ConfigError, match="did you mean 'statistical_rate'"):
        parse_grid(["statisticl_rate=0.8"], tv_repair)
    with pytest.raises(ConfigError, match="key=v1,v2"):
        parse_grid(["statistical_rate"], tv_repair)
    assert parse_executor("dask://10.0.0.5:8786") == ("dask", "tcp://10.0.0.5:8786")
    assert parse_executor("local") == ("serial", None)
    with pytest.raises(ConfigError):
        parse_executor("threads")


@pytest.mark.parametrize("kind", ["serial", "processes"])
def test_shared_input_reaches_every_item(kind):
    with get_executor(kind, n_workers=2) as ex:
        assert ex.map(_scale, [1.0, 2.0, 3.0], shared={"k": 10.0}) == [10.0, 20.0, 30.0]
        outcomes = dict(ex.as_completed(_scale, [1.0, -1.0], shared={"k": 2.0}))
    assert outcomes[0] == 2.0 and isinstance(outcomes[1], ValueError)   # errors are handed back, not raised


def _scale(x, shared):
    if x < 0:
        raise ValueError("negative")
    return x * shared["k"]


# ---- Dask -----------------------------------------------------------------------------------------------------
def test_dask_sweep_of_24_tasks_equals_serial(tmp_path, dask_address):
    serial = run_sweep(QUICKSTART, GRID24, executor="serial", out=tmp_path / "serial")
    dask = run_sweep(QUICKSTART, GRID24, executor=f"dask://{dask_address.split('://')[1]}", out=tmp_path / "dask")
    assert len(serial.records) == len(dask.records) == 24 and dask.executor == "dask"
    assert _metrics_by_task(serial) == _metrics_by_task(dask)           # identical floats, every task
    assert all(r["status"] == "optimal" for r in dask.records)
    pids = {r["worker_pid"] for r in dask.records}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2               # ran on the cluster's workers
    for r in dask.records:
        target = r["task"]["values"]["parameters.statistical_rate"]
        assert r["metrics"]["statistical_rate_after"] >= target - 1e-7


def test_shared_data_is_scattered_to_dask_workers(dask_address):
    with get_executor("dask", address=dask_address) as ex:
        assert ex.map(_scale, [1.0, 2.0], shared={"k": 3.0}) == [3.0, 6.0]
        outcomes = dict(ex.as_completed(_scale, [4.0, -1.0], shared={"k": 1.0}))
    assert outcomes[0] == 4.0 and isinstance(outcomes[1], ValueError)


def test_cli_sweep_on_dask_without_a_cluster(tmp_path, capsys):
    pytest.importorskip("dask.distributed", reason="--executor dask needs the optional dask[distributed]")
    # what a new user types: no scheduler running, the short key form
    out = tmp_path / "qs"
    assert main(["sweep", str(QUICKSTART), "--grid", "statistical_rate=0.8,0.9,1.0", "--executor", "dask",
                 "--workers", "2", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "3 run now on dask" in text and "fairopt frontier" in text
    records = [json.loads(p.read_text()) for p in sorted((out / "tasks").glob("*/result.json"))]
    rates = sorted(r["metrics"]["statistical_rate_after"] for r in records)
    assert [r["status"] for r in records] == ["optimal"] * 3
    assert rates[1] == pytest.approx(0.9, abs=1e-7) and rates[2] == pytest.approx(1.0, abs=1e-7)


# ---- resume and failures ----------------------------------------------------------------------------------------
class _Interrupt:
    """Progress callback that stops the sweep (like Ctrl-C) after ``n`` tasks are stored."""

    def __init__(self, n):
        self.n = n

    def __call__(self, done, total, desc):
        if done >= self.n:
            raise KeyboardInterrupt


def _snapshot(out):
    return {p.parent.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in (out / "tasks").glob("*/result.json")}


def test_interrupted_sweep_resumes_only_missing_tasks(tmp_path):
    grid = ["statistical_rate=0.6,0.7,0.8,0.9,1.0", "protected=race,sex"]
    out = tmp_path / "sweep"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(QUICKSTART, grid, out=out, progress=_Interrupt(4))
    before = _snapshot(out)
    assert len(before) == 4
    resumed = run_sweep(QUICKSTART, grid, out=out)
    assert sorted(resumed.skipped) == sorted(before) and len(resumed.ran) == 6
    assert not set(resumed.ran) & set(before)                            # nothing finished is recomputed
    after = _snapshot(out)
    assert len(after) == 10 and all(after[k] == v for k, v in before.items())   # nor lost or rewritten
    again = run_sweep(QUICKSTART, grid, out=out)
    assert again.ran == [] and _snapshot(out) == after
    torn = next(iter(before))                                            # an unreadable record is rerun
    (out / "tasks" / torn / "result.json").write_text('{"status": "opt')
    assert run_sweep(QUICKSTART, grid, out=out).ran == [torn]


def test_killed_cli_sweep_resumes(tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fairopt.cli", "sweep", str(MAXENT), "--grid", "C=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8",
           "--set", "parameters.n_samples=20000", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and len(list(out.glob("tasks/*/result.json"))) < 2:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = _snapshot(out)
    assert before, "no task finished before the kill"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    after = _snapshot(out)
    assert len(after) == 8 and all(after[k] == v for k, v in before.items())
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary["skipped"]) == sorted(before) and len(summary["ran"]) == 8 - len(before)


def test_failing_task_is_recorded_and_others_finish(tmp_path, capsys):
    out = tmp_path / "fail"
    code = main(["sweep", str(QUICKSTART), "--grid", "protected=race,not_an_attribute,sex", "--out", str(out),
                 "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert "not_an_attribute" in err and "DataValidationError" in err
    summary = json.loads((out / "summary.json").read_text())
    status = {r["values"]["parameters.protected"]: r["status"] for r in summary["results"]}
    assert status == {"race": "optimal", "not_an_attribute": "error", "sex": "optimal"}
    failed = next(r for r in summary["results"] if r["status"] == "error")
    assert "not_an_attribute" in failed["error"]
    # a rerun retries only the failed task
    rerun = run_sweep(QUICKSTART, ["protected=race,not_an_attribute,sex"], out=out)
    assert len(rerun.ran) == 1 and len(rerun.skipped) == 2


def test_sweep_input_errors_exit_2_before_running(tmp_path, capsys):
    out = tmp_path / "bad"
    assert main(["sweep", str(QUICKSTART), "--grid", "statistical_rate=0.9,3", "--out", str(out)]) == 2
    assert "parameters.statistical_rate" in capsys.readouterr().err and not out.exists()
    assert main(["sweep", str(QUICKSTART), "--grid", "statistical_rate=0.9", "--folds", "2", "--out", str(out)]) == 2
    assert "random_state" in capsys.readouterr().err
    run_sweep(QUICKSTART, ["statistical_rate=0.9"], out=out)
    with pytest.raises(ConfigError, match="different card"):            # never mix two cards' results
        run_sweep(QUICKSTART, ["statistical_rate=0.9"], out=out, overrides=["parameters.form=full"])


# ---- frontier ---------------------------------------------------------------------------------------------------
def test_pareto_mask_matches_brute_force(rng):
    pts = np.round(rng.random((60, 2)), 1)                               # ties and duplicates included
    pts[3] = np.nan
    mask = pareto_mask(pts[:, 0], pts[:, 1])
    for i, (c, u) in enumerate(pts):
        if np.isnan(c):
            assert not mask[i]
            continue
        dominated = any((pts[j, 0] <= c and pts[j, 1] <= u) and (pts[j, 0] < c or pts[j, 1] < u)
                        for j in range(len(pts)) if j != i and not np.isnan(pts[j, 0]))
        duplicate_first = any((pts[j] == pts[i]).all() for j in range(i))
        assert mask[i] == (not dominated and not duplicate_first)


def test_frontier_table_png_and_pareto_points(tmp_path, capsys):
    out = tmp_path / "fr"
    run_sweep(MAXENT, ["C=0.2,0.5,0.8", "tau=0.8,1.0"], folds=2, out=out,
              overrides=["data.subsample=3000", "parameters.n_samples=0"])
    assert main(["frontier", str(out)]) == 0
    assert "Pareto" in capsys.readouterr().out
    csv = pd.read_csv(out / "frontier.csv")
    assert len(csv) == 12 and set(csv["fold"]) == {0, 1}                 # one row per task
    assert {"parameters.C", "parameters.tau", "parameters.prior", "metrics.kl_to_prior",
            "metrics.statistical_rate", "status"} <= set(csv.columns)
    f0 = csv[csv["fold"] == 0].set_index("parameters.C")["metrics.kl_to_prior"]
    f1 = csv[csv["fold"] == 1].set_index("parameters.C")["metrics.kl_to_prior"]
    assert not np.allclose(f0.to_numpy(), f1.to_numpy())                 # folds are different subsamples
    png = (out / "frontier.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    res = frontier(out, plot=False)
    pts = res.points
    assert len(pts) == 6 and (pts["n_folds"] == 2).all()
    cost = pts["metrics.kl_to_prior"].to_numpy()
    unfair = -pts["metrics.representation_rate"].to_numpy()               # higher rate is fairer
    flags = pts["pareto.representation_rate"].to_numpy()
    assert flags.any()
    for i in range(len(pts)):
        dominated = any(cost[j] <= cost[i] and unfair[j] <= unfair[i] and (cost[j] < cost[i] or unfair[j] < unfair[i])
                        for j in range(len(pts)))
        assert flags[i] == (not dominated)
    mean = csv[(csv["parameters.C"] == 0.5) & (csv["parameters.tau"] == 1.0)]["metrics.kl_to_prior"].mean()
    row = pts[(pts["parameters.C"] == 0.5) & (pts["parameters.tau"] == 1.0)]
    assert row["metrics.kl_to_prior"].item() == pytest.approx(mean)
    data = json.loads((out / "frontier.json").read_text())
    assert len(data["tasks"]) == 12 and data["objective"] == ["kl_to_prior", "min"]


# ---- a runner's inner sweep ------------------------------------------------------------------------------------
def _point(x, shared, progress=None):
    if progress:
        progress(1, 1, "fitted")
    return x * shared["k"], os.getpid()


def test_map_points_stays_serial_when_a_pool_would_not_pay(monkeypatch):
    from fairopt.runs import sweep
    notes, seen = [], []
    out = sweep.map_points(_point, [1, 2, 3], {"k": 2}, executor="processes", n_workers=2, notes=notes,
                           progress=lambda d, t, s: seen.append((d, t)))
    assert [v for v, _ in out] == [2, 4, 6] and {pid for _, pid in out} == {os.getpid()}
    assert "ran the 3 points here" in notes[0] and seen[-1] == (3, 3)
    monkeypatch.setattr(sweep, "SMALL_SWEEP_SECONDS", 0.0)             # pretend each point is slow
    notes = []
    out = sweep.map_points(_point, [1, 2, 3], {"k": 2}, executor="processes", n_workers=2, notes=notes)
    assert [v for v, _ in out] == [2, 4, 6] and not notes
    assert out[0][1] == os.getpid() and {pid for _, pid in out[1:]} - {os.getpid()}   # the rest ran in the pool
