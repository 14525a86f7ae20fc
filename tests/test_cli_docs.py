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
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(block, f"{page.name}[python block {i + 1}]", "exec"), namespace)
        except DataNotFoundError:
            if DATA_HOME:
                raise
            pytest.skip(f"{page.name} block {i + 1} reads benchmark files: set FAIROPT_DATA_HOME")
