"""The house has no loops: imports (including those made inside functions) form no cycle between
files of ``fairopt/``, and every import points down the layers of ``docs/design.md``.

The import graph is read from the source with :mod:`ast`, so nothing is imported to draw it.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fairopt"

#: the layers of docs/design.md, top to bottom; a file may import only from its own layer or below
LAYERS = [
    ("facade", ["__init__.py"]),
    ("cli", ["cli.py", "_cli_output.py"]),
    ("runs", ["runs/"]),
    ("estimators", ["preprocessing/", "inprocessing/", "postprocessing/", "filtering.py", "ranking/"]),
    ("orchestration", ["reductions/", "frontiers.py"]),
    ("formulations", ["formulations/"]),
    ("blocks", ["constraints/", "metrics/", "data/"]),
    ("modeling", ["modeling/"]),
    ("shared", ["validation.py", "_frames.py", "_groups.py", "_arrays.py", "_labels.py", "_data_checks.py",
                "_param_validation.py", "parallel.py",
                "criteria.py", "guarantees.py", "stats/"]),
    ("ground", ["errors.py", "_docstrings.py", "_utils.py", "_progress.py", "_version.py"]),
]
#: inside fairopt/modeling/, bottom to top (the solve seam: declarations, certificates, back
#: ends, the registry that finds them, then the programs and smooth problems that ask it)
MODELING = [
    ["solution.py", "spec.py", "kinds.py", "backends/__init__.py"],
    ["canonical.py", "_summary.py"],
    ["certify.py"],
    ["diagnose.py"],
    ["backends/base.py"],
    ["backends/"],
    ["_catalog.py", "registry.py"],
    ["program.py"],
    ["parametric.py", "lazy_columns.py"],
    ["smooth.py"],
    ["planted.py", "__init__.py"],
]


def _module_files() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _module_files()


def _resolve(name: str) -> Path | None:
    while name:
        if name in MODULES:
            return MODULES[name]
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[Path, set[Path]]:
    """File -> files it imports anywhere in its body (module level or inside functions, and
    ``importlib.import_module`` of a literal module name)."""
    graph: dict[Path, set[Path]] = {}
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) \
                    == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]   # importlib.import_module("fairopt...")
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    mod = ".".join(base + ([mod] if mod else []))
                names = [f"{mod}.{a.name}" for a in node.names]
            else:
                continue
            for n in names:
                target = _resolve(n) if n.split(".")[0] == "fairopt" else None
                if target is not None and target != path:
                    targets.add(target)
        graph[path] = targets
    return graph


def cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components with more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)
    for v in graph:
        if v not in index:
            visit(v)
    return found


def _rank(path: Path, table, root: Path) -> int:
    """Index of the row of ``table`` (top first) holding ``path``; the longest match wins."""
    rel = path.relative_to(root).as_posix()
    best, best_len = None, -1
    for i, row in enumerate(table):
        for entry in (row[1] if isinstance(row, tuple) else row):
            hit = rel.startswith(entry) if entry.endswith("/") else rel == entry
            if hit and len(entry) > best_len:
                best, best_len = i, len(entry)
    assert best is not None, f"{rel} is on no layer: add it to the table (and to docs/design.md)"
    return best


GRAPH = import_graph()


def test_no_import_cycles_between_files():
    found = cycles(GRAPH)
    assert not found, "import loops: " + "; ".join(
        " <-> ".join(sorted(p.relative_to(ROOT).as_posix() for p in c)) for c in found)


def test_imports_point_down_the_layers():
    up = [(a, b) for a, targets in GRAPH.items() for b in targets
          if _rank(b, LAYERS, PKG) < _rank(a, LAYERS, PKG)]
    assert not up, "imports from a layer above: " + "; ".join(
        f"{a.relative_to(ROOT)} -> {b.relative_to(ROOT)}" for a, b in up)


def test_modeling_imports_point_down_the_seam():
    mod = PKG / "modeling"
    inner = {a: {b for b in t if mod in b.parents} for a, t in GRAPH.items() if mod in a.parents}
    rows = MODELING[::-1]   # top first, like LAYERS
    up = [(a, b) for a, targets in inner.items() for b in targets
          if _rank(b, rows, mod) < _rank(a, rows, mod)]
    assert not up, "modeling imports upward: " + "; ".join(
        f"{a.relative_to(ROOT)} -> {b.relative_to(ROOT)}" for a, b in up)


def test_the_checks_see_function_level_imports_and_loops():
    # the graph includes imports made inside functions ...
    threshold = PKG / "postprocessing" / "threshold.py"
    assert any("formulations" in p.parts for p in GRAPH[threshold])
    # ... and the loop finder finds a loop planted between two real files
    a, b = PKG / "errors.py", PKG / "_utils.py"
    assert cycles({**GRAPH, a: GRAPH[a] | {b}, b: GRAPH[b] | {a}})


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_design_doc_names_every_layer(layer):
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    picture = re.search(r"## Layers and seams(.*?)\n## ", text, re.S).group(1)
    assert re.search(rf"\b{layer}\b", picture), f"docs/design.md's layer picture has no {layer!r} layer"
