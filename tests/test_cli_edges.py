"""The command line at its edges (issue 22, parts 1 and 2): files written atomically, bad output
paths, Ctrl-C, closed pipes, strict cards, quiet and truthful output."""
from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairopt._cli_output import _rich_table, format_column
from fairopt.cli import main
from fairopt.errors import ConfigError, OutputError
from fairopt.runs.card import load_card

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "models" / "quickstart.toml"
MAXENT = ROOT / "models" / "maxent-compas-small.toml"
TV_ADULT = ROOT / "models" / "tv-repair-adult.toml"
THRESHOLD = ROOT / "models" / "threshold-debiasing-adult.toml"
ENV = {k: v for k, v in os.environ.items() if k != "FAIROPT_DATA_HOME"}


def _cli(*args, limit_bytes: int | None = None, cwd=None, **kw) -> subprocess.CompletedProcess:
    def preexec():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "fairopt.cli", *map(str, args)], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=300, preexec_fn=preexec, **kw)


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if ".tmp" in p.name]


# ---- 1. files are written atomically and never lie -----------------------------------------------------------
def test_file_size_limit_keeps_the_previous_result(tmp_path):
    out = tmp_path / "o"
    assert _cli("run", QUICKSTART, "--out", out, "--quiet").returncode == 0
    before = (out / "result.json").read_bytes()
    assert len(before) > 1024
    proc = _cli("run", QUICKSTART, "--out", out, "--quiet", "--set", "parameters.statistical_rate=0.9",
                limit_bytes=1024)
    assert proc.returncode == 2, proc.stderr
    assert "could not write" in proc.stderr and "file-size limit" in proc.stderr and "previous file is kept" \
        in proc.stderr
    assert "Traceback" not in proc.stderr and "wrote" not in proc.stdout
    assert (out / "result.json").read_bytes() == before            # the good result is still there, whole
    assert json.loads(before)["parameters"]["statistical_rate"] == 1.0
    assert not _temp_files(tmp_path)


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_failed_write_raises_typed_error_and_keeps_old_file(tmp_path, monkeypatch, failing):
    from fairopt.runs import files
    target = tmp_path / "r.json"
    files.write_json_atomic(target, {"a": 1})
    real = getattr(os, failing)

    def broken(*args, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(files.os, failing, broken)
    with pytest.raises(OutputError, match="disk is full; the previous file is kept"):
        files.write_json_atomic(target, {"a": 2})
    monkeypatch.setattr(files.os, failing, real)
    assert json.loads(target.read_text()) == {"a": 1}
    assert not _temp_files(tmp_path)


def test_short_write_is_detected(tmp_path, monkeypatch):
    import io

    from fairopt.runs import files
    target = tmp_path / "r.json"
    real_open = open

    def short_open(path, mode="r", *a, **kw):
        fh = real_open(path, mode, *a, **kw)
        if "w" in mode and ".tmp" in str(path):
            write = fh.write
            fh.write = lambda data: write(data[: len(data) // 2])   # a writer that drops half silently
        return fh
    monkeypatch.setattr("builtins.open", short_open)
    with pytest.raises(OutputError, match=r"only .* bytes reached the disk"):
        files.write_bytes_atomic(target, b"x" * 1000)
    assert not target.exists() and not _temp_files(tmp_path)
    assert io


def test_export_cut_short_or_into_a_folder_is_an_error(tmp_path):
    mps = tmp_path / "full.mps"
    proc = _cli("inspect", QUICKSTART, "--export", mps, "--set", "parameters.form=full", limit_bytes=4096)
    assert proc.returncode == 2, proc.stderr
    assert "cut short" in proc.stderr and "wrote" not in proc.stdout and "Traceback" not in proc.stderr
    assert not mps.exists() and not _temp_files(tmp_path)
    folder = tmp_path / "folder.mps"
    folder.mkdir()
    proc = _cli("inspect", QUICKSTART, "--export", folder)
    assert proc.returncode == 2 and "is a folder" in proc.stderr and "wrote" not in proc.stdout
    # the exported file is whole: it reads back with the program's size and HiGHS solves it
    good = tmp_path / "good.lp"
    proc = _cli("inspect", QUICKSTART, "--export", good, "--set", "parameters.form=full")
    assert proc.returncode == 0 and good.read_text().rstrip().endswith("end")


def test_a_failed_export_keeps_the_previous_file(tmp_path, monkeypatch):
    from fairopt.modeling import Program
    mps = tmp_path / "x.mps"
    assert main(["inspect", str(QUICKSTART), "--export", str(mps)]) == 0
    before = mps.read_bytes()

    def half(self, path):
        Path(path).write_text("NAME broken\nROWS\n")           # an exporter that stops half way
    monkeypatch.setattr(Program, "write", half)
    assert main(["inspect", str(QUICKSTART), "--export", str(mps), "--set", "parameters.form=full"]) == 2
    assert mps.read_bytes() == before and not _temp_files(tmp_path)


@pytest.mark.parametrize("name", ["../../escaped", "ABSOLUTE", "a/b", "..", " padded"])
def test_card_name_cannot_leave_the_output_root(tmp_path, name, capsys):
    name = str(tmp_path / "absolute-name") if name == "ABSOLUTE" else name
    card = tmp_path / "card.toml"
    card.write_text(QUICKSTART.read_text().replace('name = "quickstart"', f"name = {json.dumps(name)}"))
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        assert main(["run", str(card), "--quiet"]) == 2
    finally:
        os.chdir(cwd)
    assert "card.name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["card.toml", "deep", "work"]


def test_bad_out_paths_exit_2_with_a_typed_error(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    dangling = tmp_path / "link"
    dangling.symlink_to(tmp_path / "missing-target")
    cases = {a_file: "is a file", a_file / "sub": "which is a file", dangling: "symbolic link",
             tmp_path / ("n" * 300): "longer than the file system"}
    for out, message in cases.items():
        proc = _cli("run", QUICKSTART, "--out", out, "--quiet")
        assert proc.returncode == 2, (out, proc.stderr)
        assert "OutputError" in proc.stderr and message in proc.stderr and "Traceback" not in proc.stderr
    assert a_file.read_text() == "x" and not (tmp_path / "missing-target").exists()


# ---- 2. the command line behaves like a Unix tool ----------------------------------------------------------
_SLOW_RUN = """
import sys, time
import fairopt.runs.execute as ex
def slow(card, progress=None):
    print("ready", file=sys.stderr, flush=True)
    time.sleep(60)
ex.execute = slow
from fairopt.cli import main
sys.exit(main(["run", sys.argv[1], "--out", sys.argv[2], "--quiet"]))
"""


def test_ctrl_c_during_run_exits_130_with_one_line_and_no_files(tmp_path):
    out = tmp_path / "new" / "out"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, str(QUICKSTART), str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stderr.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert stderr.strip() == "interrupted; nothing written" and stdout == ""
    assert not (tmp_path / "new").exists()                      # the folders the run created are gone


def test_ctrl_c_during_a_real_run(tmp_path):
    """SIGINT while a real (un-patched) run computes: exit 130, no traceback, no result file."""
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "fairopt.cli", "run", str(MAXENT), "--out", str(out), "--quiet",
                             "--set", "parameters.n_samples=5000000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    deadline = time.time() + 120
    while time.time() < deadline and not out.exists():       # the folder is made just before the work
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _stdout, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == 130 and "Traceback" not in stderr
    assert stderr.strip().splitlines() == ["interrupted; nothing written"]
    assert not out.exists()


def _closed_stdout(*args, cwd=None) -> subprocess.CompletedProcess:
    """Run the CLI with a standard output whose reader has already gone (`| true`)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "fairopt.cli", *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=ENV, cwd=cwd, timeout=300)
    finally:
        os.close(write)
    return proc


def test_closed_stdout_never_stops_a_command(tmp_path):
    out = tmp_path / "run"
    proc = _closed_stdout("run", QUICKSTART, "--out", out)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert json.loads((out / "result.json").read_text())["status"] == "optimal"
    # the run's own exit code is kept: a limit is still 3
    proc = _closed_stdout("run", QUICKSTART, "--out", tmp_path / "limit", "--set", "parameters.form=full",
                          "--set", "solver.time_limit=1e-9")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert json.loads((tmp_path / "limit" / "result.json").read_text())["status"] == "time_limit"
    for args in (["solvers"], ["solvers", "--json"], ["inspect", QUICKSTART],
                 ["inspect", QUICKSTART, "--export", tmp_path / "x.mps"],
                 ["sweep", QUICKSTART, "--grid", "statistical_rate=0.8,0.9", "--out", tmp_path / "sw"],
                 ["frontier", tmp_path / "sw"]):
        proc = _closed_stdout(*args)
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)
    assert (tmp_path / "x.mps").read_text().rstrip().endswith("ENDATA")
    assert len(list((tmp_path / "sw" / "tasks").glob("*/result.json"))) == 2
    assert {p.name for p in (tmp_path / "sw").glob("frontier.*")} == {"frontier.csv", "frontier.json", "frontier.png"}


def test_quiet_prints_the_result_line_only(tmp_path, capsys):
    assert main(["run", str(QUICKSTART), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("status optimal · solver highs") and "result.json" in lines[0]
    assert err == ""
    assert main(["run", str(TV_ADULT), "--out", str(tmp_path / "b"), "--quiet",
                 "--set", "parameters.discrimination=target"]) == 1
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 and out.startswith("status infeasible") and "infeasible" in err


def test_inspect_export_prints_no_solver_banner(tmp_path):
    # a fresh process: HiGHS prints its banner once per process, when its first instance is created
    proc = _cli("inspect", QUICKSTART, "--export", tmp_path / "q.mps")
    assert proc.returncode == 0
    assert "HiGHS" not in proc.stdout and "HiGHS" not in proc.stderr and "Copyright" not in proc.stdout
    assert f"wrote {tmp_path / 'q.mps'}" in proc.stdout


def test_inspect_exports_the_program_run_solves(tmp_path):
    """Threshold debiasing calibrates the scores before it solves; the export must use the same atoms."""
    highspy = pytest.importorskip("highspy")
    rng = np.random.default_rng(0)
    n = 3000
    g = rng.integers(0, 2, n)
    score = np.tanh(rng.normal(0.3 * g, 1.0))
    label = (rng.random(n) < (score + 1) / 2).astype(int)
    csv = tmp_path / "scores.csv"
    pd.DataFrame({"score": score, "group": g, "label": label}).to_csv(csv, index=False)
    extra = ["--set", 'data.dataset="scores"', "--set", f'data.path="{csv}"', "--set", "data.sensitive=[]"]
    assert main(["run", str(THRESHOLD), "--out", str(tmp_path / "r"), "--quiet", "--solver", "highs", *extra]) == 0
    res = json.loads((tmp_path / "r" / "result.json").read_text())
    mps = tmp_path / "t.mps"
    assert main(["inspect", str(THRESHOLD), "--export", str(mps), *extra]) == 0
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(mps))
    n_atoms = int(res["metrics"]["n_atoms"])
    assert n_atoms < n / 10                                     # calibration pooled the scores
    assert h.getLp().num_col_ == n_atoms + 1                    # q per atom, plus rho
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal


def test_tables_keep_differences_visible():
    import io

    from rich.console import Console
    buf = io.StringIO()
    Console(file=buf, width=80, color_system=None).print(
        _rich_table("Profit", ["mode", "objective"], [["LP", 57730.4], ["MIP", 57606.2]]))
    text = buf.getvalue()
    assert "57730" in text and "57606" in text                  # the price of fairness, 124, can be read off
    rng = np.random.default_rng(1)
    for _ in range(300):
        a = float(rng.normal() * 10.0 ** rng.integers(-6, 9))
        b = a + a * 10.0 ** -rng.integers(1, 9) * rng.choice([-1, 1])
        shown = format_column([a, b])
        assert shown[0] != shown[1], (a, b, shown)
        # the printed difference is the true one to within 10 %
        assert abs((float(shown[1]) - float(shown[0])) - (b - a)) <= 0.1 * abs(b - a), (a, b, shown)
    assert format_column([0.8404, 0.5164, 1.0]) == ["0.8404", "0.5164", "1"]   # plain values stay short
    assert format_column([0.99999999999999967, 1.0]) == ["1", "1"]            # float noise is not a difference


def test_frontier_panel_over_a_constant_metric_is_not_drawn(tmp_path):
    from fairopt.runs.base import FrontierSpec
    from fairopt.runs.frontier import frontier_figure
    points = pd.DataFrame({"metrics.loss": [0.3, 0.2, 0.1], "metrics.gap": [0.1, 0.2, 0.3],
                           "metrics.rate": [1.0, 1.0, 1.0], "n_folds": [1, 1, 1],
                           "pareto.gap": [True, True, True], "pareto.rate": [False, False, True]})
    tasks = points.assign(status="optimal")
    fig = frontier_figure(points, tasks, FrontierSpec("loss", "min", {"gap": "min", "rate": "max"}))
    varying, constant = fig.axes
    assert not constant.collections and not constant.lines and constant.get_legend() is None
    assert "at every point" in constant.texts[0].get_text()
    labels = [t.get_text() for t in varying.get_legend().get_texts()]
    assert "sweep point" in labels and not any("folds" in t for t in labels)   # one fold: no "mean over folds"


# ---- 2. cards: strict, named errors ------------------------------------------------------------------------
def test_non_utf8_card_is_a_config_error(tmp_path):
    card = tmp_path / "latin1.toml"
    card.write_bytes(QUICKSTART.read_text().replace("TV repair", "TV r\xe9paration").encode("latin-1"))
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        load_card(card)
    proc = _cli("run", card, "--out", tmp_path / "o")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "UTF-8" in proc.stderr


@pytest.mark.parametrize("override, key", [
    ("parameters.statistical_rate=true", "parameters.statistical_rate"),
    ("parameters.representation=[true, 0.5]", "parameters.representation[0]"),
    ("solver.time_limit=true", "solver.time_limit"),
])
def test_booleans_are_not_numbers(override, key):
    with pytest.raises(ConfigError, match="got a boolean") as err:
        load_card(QUICKSTART, [override])
    assert key in str(err.value)
    with pytest.raises(ConfigError, match=r"parameters\.n_samples"):
        load_card(MAXENT, ["parameters.n_samples=false"])
    assert load_card(THRESHOLD, ["parameters.inject_bias=true"]).parameters.inject_bias is True


def test_data_path_on_built_in_data_is_refused():
    with pytest.raises(ConfigError, match=r"data.path \(from --set\): data.dataset = 'builtin:compas' is built"):
        load_card(QUICKSTART, ["data.path=/tmp/elsewhere.csv"])


def test_absurd_sizes_are_refused_with_the_bound(capsys):
    assert main(["run", str(MAXENT), "--set", "parameters.n_samples=1e12"]) == 2
    err = capsys.readouterr().err
    assert "parameters.n_samples" in err and "less than or equal to 10000000" in err


def test_solver_option_dropped_by_solver_override_is_refused():
    with pytest.raises(ConfigError, match=r"solver\.options\.presolve \(from --set.* would be dropped"):
        load_card(QUICKSTART, ['solver.options.presolve="off"'], "cvxpy")
    # the same back end keeps its options, and a card's own options may be dropped as documented
    card = load_card(QUICKSTART, ['solver.options.presolve="off"'], "highs")
    assert card.solver.options == {"presolve": "off"}


# ---- one train/test split helper for every runner (issue 23, item 4) -------------------------------------------
def test_runners_share_one_split_helper():
    from fairopt.runs.base import split_rows
    for n in (1, 7, 10, 1001, 30162):
        for fraction in (0.3, 1 / 3, 0.5):
            perm = np.random.default_rng(5).permutation(n)
            cut = round(n * fraction)
            first, rest = split_rows(n, [fraction], np.random.default_rng(5))
            assert np.array_equal(first, perm[:cut]) and np.array_equal(rest, perm[cut:])
            c1, c2 = np.cumsum(np.round(np.array([0.4, 0.3]) * n).astype(int))
            blocks = split_rows(n, [0.4, 0.3], np.random.default_rng(5), sort=True)
            assert [b.tolist() for b in blocks] == [np.sort(perm[:c1]).tolist(), np.sort(perm[c1:c2]).tolist(),
                                                    np.sort(perm[c2:]).tolist()]
    # no runner draws its own permutation any more
    for path in (ROOT / "fairopt" / "runs").glob("*.py"):
        if path.name != "base.py":
            assert ".permutation(" not in path.read_text(), path.name


@pytest.mark.parametrize("args", [["run", str(QUICKSTART), "--out", ""], ["inspect", str(QUICKSTART), "--export", ""],
                                  ["run", str(QUICKSTART), "--solver", " "], ["frontier", ""]])
def test_empty_option_values_are_refused(args, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert "is empty" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())                         # nothing written "here" by default


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_unwritable_stderr_keeps_the_exit_code(tmp_path):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "fairopt.cli", "run", str(QUICKSTART), "--out", str(tmp_path),
                               "--set", "parameters.statistical_rate=2"], stdout=subprocess.DEVNULL, stderr=full,
                              env=ENV, timeout=120)
    assert proc.returncode == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_unwritable_stdout_still_computes_and_says_so(tmp_path):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "fairopt.cli", "run", str(QUICKSTART), "--out", str(tmp_path)],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=ENV, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: could not write to standard output (No space left on "
                                                "device); the output was discarded, the files were written."]
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "optimal"
