"""Shared test fixtures.

Tests that read the real benchmark data use the ``requires_data`` marker helper; CI always sets
``FAIROPT_DATA_HOME`` (to ``../shared/datasets``), so those tests run there.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

DATA_HOME = os.environ.get("FAIROPT_DATA_HOME")

requires_data = pytest.mark.skipif(
    not DATA_HOME or not Path(DATA_HOME).is_dir(),
    reason="set FAIROPT_DATA_HOME to the shared benchmark data folder",
)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def load_benchmark(name: str):
    """Import ``benchmarks/<name>.py`` as a module (benchmarks are scripts, not a package)."""
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
