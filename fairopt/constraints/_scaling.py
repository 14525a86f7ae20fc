"""Row scaling of a block whose coefficients carry the scale of a user's vector (costs, relevances).

A solver's feasibility tolerance is absolute (about 1e-7 to 1e-9), so rows whose coefficients are
1e-9 are "satisfied" by any point and rows of 1e9 are never met exactly. Blocks built from a
cost or relevance vector therefore divide their rows by a power of two close to that vector's
magnitude when it lies outside ``[2^-10, 2^10]``: exact in floating point, the identity for
ordinary magnitudes (so the block's coefficients read as the user's numbers), and rows of
magnitude at most ``2^10`` at every scale. The bounds and the tolerance derivatives are scaled
with the rows, so :meth:`~fairopt.constraints.FairnessBlock.price_of_fairness` still returns
derivatives in the caller's units; the row table's ``bound`` and ``dual`` are those of the
scaled rows (their product, the objective change, is unchanged).
"""
from __future__ import annotations

import numpy as np


def power_of_two(magnitude: float) -> float:
    """The power of two nearest to ``magnitude``; 1 for a magnitude in ``[2^-10, 2^10]``, zero or
    non-finite.

    Examples
    --------
    >>> power_of_two(1e-9) == 2.0 ** -30, power_of_two(3.5), power_of_two(0.0), power_of_two(1e6)
    (True, 1.0, 1.0, 1048576.0)
    """
    if not np.isfinite(magnitude) or magnitude <= 0 or 2.0 ** -10 <= magnitude <= 2.0 ** 10:
        return 1.0
    return float(2.0 ** np.round(np.log2(magnitude)))
