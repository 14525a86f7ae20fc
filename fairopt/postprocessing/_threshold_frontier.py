"""The exact frontier LP and the certified gap of a fitted :class:`~fairopt.postprocessing.ThresholdDebiaser`.

A mixin of the estimator (its public methods ``parametric_problem`` and ``certify_gap``).
"""
from __future__ import annotations

from typing import Any

from fairopt.criteria import criterion
from fairopt.errors import DataValidationError, NotFittedError
from fairopt.modeling.parametric import ParametricProblem
from fairopt.postprocessing._certify import threshold_margin
from fairopt.postprocessing._scores import Source, _ScoreMixin
from fairopt.validation import check_weights


class _ThresholdFrontierMixin(_ScoreMixin):
    """Frontier and certificate queries on a fitted threshold debiaser."""

    # fitted attributes of the estimator (declared for the type checker)
    constraint_: str
    groups_: Any

    def parametric_problem(self, X: Source, y: Source, *, sensitive_features: Source | None = None,
                           sample_weight: Source | None = None) -> ParametricProblem:
        """The exact-frontier LP of this debiaser's criterion on ``(X, y)`` (see :doc:`/frontiers`).

        The rules are the monotone mixtures of thresholds of the pure threshold limit
        (``gamma = 0``) that maximise training accuracy, so the optimal expected error is a convex
        piecewise-linear function of ``eps``; the LP keeps each group's ROC-hull vertices, which
        carry the same optimum, and a per-group monotone calibration (isotonic) leaves the hull
        unchanged, so the frontier does not depend on ``calibration``. Needs a fitted debiaser
        (its estimator, groups and labels) and the labels ``y`` of the rows.

        Examples
        --------
        >>> import numpy as np
        >>> from fairopt.modeling.parametric import value_curve
        >>> rng = np.random.default_rng(0)
        >>> f, g = rng.uniform(-1, 1, 600), rng.integers(0, 2, 600)
        >>> y = (rng.uniform(size=600) < (f + 1 + 0.3 * g) / 2.3).astype(int)
        >>> from fairopt.postprocessing import ThresholdDebiaser
        >>> deb = ThresholdDebiaser(constraint="equalized_odds").fit(f, y, sensitive_features=g)
        >>> problem = deb.parametric_problem(f, y, sensitive_features=g)
        >>> curve = value_curve(problem.program, problem.rows, 0.0, 1.0)
        >>> bool(curve.slopes[0] <= 0.0), curve.breakpoints.size > 0
        (True, True)
        """
        from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
        self._check_fitted()
        constraint = self.constraint_
        if criterion(constraint).conditions is None:
            raise DataValidationError(f"an exact frontier compares rates; {constraint!r} compares none.")
        f = self.mapped_scores(X)
        codes = self.group_codes(X, sensitive_features)
        yv = self._fit_labels(y, f.shape[0], "ThresholdDebiaser.parametric_problem")
        if yv is None:
            raise DataValidationError("the frontier's value is the expected error: pass the labels y.")
        sw = None if sample_weight is None else check_weights(sample_weight, f.shape[0])
        form = ThresholdMixtureOdds(f, codes, yv, constraint, 0.0, sample_weight=sw, n_groups=len(self.groups_))
        return form.parametric_problem()

    def certify_gap(self, eps: float, confidence: float) -> float:
        """Population gap certified at ``confidence`` for a rule fitted to the sample gap ``eps``
        on this fit's rows (``eps`` plus the DKW margin; see :doc:`/guarantees`).

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> f, g = rng.uniform(-1, 1, 2000), rng.integers(0, 2, 2000)
        >>> from fairopt.postprocessing import ThresholdDebiaser
        >>> deb = ThresholdDebiaser(eps=0.2, confidence=0.9).fit(f, sensitive_features=g)
        >>> round(deb.certify_gap(0.1, 0.95), 3), deb.certified_eps_ <= 0.2
        (0.194, True)
        """
        self._check_fitted()
        counts = getattr(self, "cell_counts_", None)
        if counts is None:
            raise DataValidationError("certify_gap needs an in-memory fit of a rate criterion (its cell counts); "
                                      "chunked, Dask and covariance fits have none.")
        margin, _, _ = threshold_margin(counts, self.constraint_, confidence, None, "ThresholdDebiaser.certify_gap")
        return float(eps) + margin

    def _check_fitted(self) -> None:
        if not hasattr(self, "solution_"):
            raise NotFittedError("ThresholdDebiaser is not fitted; call fit(X, y, sensitive_features) first.")
