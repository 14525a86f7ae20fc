"""Every fenced Python block in README.md and docs/*.md runs as written.

The blocks of one page run in order in one namespace (later blocks may use earlier names), from a
scratch folder that links ``models/`` so the pages' relative card paths work and any file a block
writes stays out of the repository. Pages whose blocks read benchmark files run when
``FAIROPT_DATA_HOME`` is set.
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest
import sklearn
from conftest import DATA_HOME

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def python_blocks(page: Path) -> list[str]:
    return FENCE.findall(page.read_text())


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


def test_pages_are_collected():
    assert ROOT / "README.md" in PAGES_WITH_CODE and len(PAGES_WITH_CODE) >= 5


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: p.name)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    from fairopt.errors import DataNotFoundError
    (tmp_path / "models").symlink_to(ROOT / "models")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(python_blocks(page)):
        try:
            # a page may switch on a global scikit-learn setting (metadata routing): keep it to the page
            with contextlib.redirect_stdout(io.StringIO()), sklearn.config_context():
                exec(compile(block, f"{page.name}[python block {i + 1}]", "exec"), namespace)
        except DataNotFoundError:
            if DATA_HOME:
                raise
            pytest.skip(f"{page.name} block {i + 1} reads benchmark files: set FAIROPT_DATA_HOME")


# ---- every exit code docs/cli.md lists happens, as a real process exit status --------------------------------
_INTERRUPTED_RUN = """
import sys, time
import fairopt.runs.execute as ex
def slow(card, progress=None):
    print("ready", file=sys.stderr, flush=True)
    time.sleep(60)
ex.execute = slow
from fairopt.cli import main
sys.exit(main(["run", sys.argv[1], "--out", sys.argv[2], "--quiet"]))
"""


def documented_exit_codes() -> dict[int, str]:
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| (.*) \|$", section, re.M)}


def test_every_documented_exit_code_is_what_the_process_returns(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    codes = documented_exit_codes()
    assert set(codes) == {0, 1, 2, 3, 130}
    assert "closed standard output" in (ROOT / "docs" / "cli.md").read_text().lower()
    env = {k: v for k, v in os.environ.items() if k != "FAIROPT_DATA_HOME"}
    models = ROOT / "models"
    runs = {0: ["run", models / "quickstart.toml"],
            1: ["run", models / "tv-repair-adult.toml", "--set", "parameters.discrimination=target"],
            2: ["run", models / "quickstart.toml", "--set", "parameters.statistical_rate=2"],
            3: ["run", models / "quickstart.toml", "--set", "parameters.form=full", "--set", "solver.time_limit=1e-9"]}
    for code, args in runs.items():
        proc = subprocess.run([sys.executable, "-m", "fairopt.cli", *map(str, args), "--out", str(tmp_path / str(code)),
                               "--quiet"], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == code, (code, proc.stderr)
        assert "Traceback" not in proc.stderr
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_RUN, str(models / "quickstart.toml"),
                             str(tmp_path / "130")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted; nothing written"
