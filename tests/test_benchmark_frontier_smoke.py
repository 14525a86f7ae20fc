"""Smoke test of benchmarks/frontier.py: the frontier and the single fits agree on small data."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_frontier_benchmark_runs_and_agrees() -> None:
    pytest.importorskip("error_parity", reason="the peer of the frontier benchmark: pip install error-parity")
    spec = importlib.util.spec_from_file_location("bench_frontier", ROOT / "benchmarks" / "frontier.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.run(rows=4000, groups=3, constraint="equalized_odds", points=10)
    assert res["max_abs_diff_vs_fits"] < 1e-9
    assert res["frontier_solves"] >= 2 and res["breakpoints"] >= 1
