"""Tiny helpers shared by several fairopt modules."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_generator(random_state: int | Sequence[int] | np.random.SeedSequence | np.random.BitGenerator
                 | np.random.Generator | np.random.RandomState | None) -> np.random.Generator:
    """``random_state`` itself if it is a :class:`numpy.random.Generator`, else a new one seeded with it.

    ``None`` gives fresh OS entropy; an int (or anything :func:`numpy.random.default_rng` takes)
    gives a reproducible generator; a legacy :class:`numpy.random.RandomState` lends its bit generator.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)
