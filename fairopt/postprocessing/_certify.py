"""Population guarantees of post-processing by group thresholds (see :mod:`fairopt.guarantees`).

Every rule :class:`~fairopt.postprocessing.ThresholdDebiaser` can return predicts 1 with a
probability that is non-decreasing in the (calibrated) score within each group: a ramp, a
threshold with one randomized level, a monotone mixture of thresholds, or any of these after an
isotonic (monotone) calibration or score binning. Each such rule is a mixture of threshold
rules on the raw score, so the DKW bound on each group's score CDF (per label value for the
error-rate criteria) covers the rule that the fit picked on the same rows.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from fairopt.criteria import criterion
from fairopt.errors import DataValidationError
from fairopt.guarantees import Certificate, check_confidence, gap_margin


def cell_counts(codes: ArrayLike, n_groups: int, y: ArrayLike | None, constraint: str) -> np.ndarray:
    """Rows per group (and per conditioning label): shape ``(n_groups, n_conditions)``."""
    g = np.asarray(codes, dtype=np.int64).reshape(-1)
    conditions = criterion(constraint).conditions
    if not conditions:
        return np.bincount(g, minlength=n_groups)[:, None].astype(float)
    if y is None:
        raise DataValidationError(f"confidence with constraint={constraint!r} needs the labels y at fit.")
    yv = np.asarray(y).reshape(-1)
    return np.column_stack([np.bincount(g[yv == c], minlength=n_groups) for c in conditions]).astype(float)


def threshold_margin(counts: np.ndarray, constraint: str, confidence: object,
                     sample_weight: ArrayLike | None, where: str) -> tuple[float, dict[str, float], int]:
    """DKW slack of the range of group rates: ``(margin, per-rate margins, rows)``.

    ``counts`` are :func:`cell_counts` of the fitting rows.

    Raises
    ------
    DataValidationError
        A criterion or input the bound does not cover: the covariance criterion, non-uniform
        sample weights (the i.i.d. reading of the sample), or a group (label cell) with no rows.
    """
    conf = check_confidence(confidence, where)
    if criterion(constraint).conditions is None:
        raise DataValidationError(f"{where}: confidence is offered for the rate criteria (demographic parity, "
                                  f"equal opportunity, equalized odds); {constraint!r} compares no rates, so it has "
                                  f"no population bound here (use confidence=None).")
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=float)
        if w.size and not np.allclose(w, w.flat[0]):
            raise DataValidationError(f"{where}: confidence needs unweighted rows (the DKW bound is for an i.i.d. "
                                      f"sample); fit without sample_weight or with confidence=None.")
    margin, per_rate = gap_margin(counts, conf, kind="range")
    return margin, per_rate, int(counts[:, 0].sum() if counts.shape[1] == 1 else counts.sum())


def certificate(rates: ArrayLike, margin: float, per_rate: dict[str, float], confidence: float,
                n_rows: int) -> Certificate:
    """Certificate of a fitted rule from its training rates (one row of rates per condition)."""
    r = np.atleast_2d(np.asarray(rates, dtype=float))
    gap = float(np.max(np.ptp(r, axis=-1))) if r.size else 0.0
    return Certificate(float(confidence), gap + margin, gap, margin, "dkw", per_rate, n_rows)
