"""Randomized-threshold post-processing as a parametric LP in its tolerance (exact frontiers).

The mixture-of-thresholds LP of :mod:`~fairopt.formulations.constrained_classification.odds`
bounds each group's rate (per label value for the error-rate criteria) within ``eps/2`` of a free
common rate, so its rows move with ``eps`` through their bounds only, and its optimal accuracy is
a concave piecewise-linear function of ``eps``. With the accuracy objective the LP keeps only the
thresholds at each group's ROC-hull vertices (the same optimum), so a whole frontier costs one
sort and one hull per group plus small warm-started LPs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.modeling.parametric import MovingRows, ParametricProblem


def odds_problem(form: Any) -> ParametricProblem:
    """See :meth:`~fairopt.formulations.constrained_classification.ThresholdMixtureOdds.parametric_problem`
    (``form`` is that model, typed loosely: this module sits below it)."""
    if form.objective != "labels":
        raise DataValidationError("an exact frontier of threshold rules needs the accuracy objective "
                                  "(objective='labels'): the frontier's value is the expected error.")
    prog = form.build(form.support())
    # every rate row: |rate_k - common| <= eps/2
    rows = [MovingRows(name, lb0=0.0, ub0=0.0, dlb=-0.5, dub=0.5) for name in prog.constraints if name != "mass"]
    total = float(np.sum(form.atoms.weight))
    negatives = float(np.sum(form.neg))
    # the LP maximises sum d (R+ - R-) / N = accuracy - N-/N; its minimisation form is V = -that,
    # so the expected error 1 - accuracy = V + 1 - N-/N; rates lie in [0, 1], so eps = 1 never binds
    return ParametricProblem(prog, rows, 0.0, 1.0, "expected error", scale=1.0, offset=1.0 - negatives / total)
