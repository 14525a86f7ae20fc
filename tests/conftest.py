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
