"""Fairness and distribution metrics, vectorised over any number of (intersectional) groups.

Every metric accepts ``sample_weight`` (frequency semantics: weight k equals k repeated rows)
and raises :class:`fairopt.errors.DataValidationError` on malformed input instead of dropping
rows. Groups may be a 1-D array, a Series, or a DataFrame / dict of several columns (one group
per observed combination). See ``docs/metrics.md`` for formulas and the papers using each metric.

The metrics fairlearn also has take fairlearn's signature ``(y_true, y_pred, *, sensitive_features,
sample_weight=None)``; fairopt's own (:func:`statistical_rate`, :func:`group_rates`, ...) keep
``(y_pred, sensitive_features)``. :class:`MetricFrame` is fairlearn's per-group report.

Group rates of binary (or soft) predictions
    :func:`statistical_rate`, :func:`demographic_parity_ratio`,
    :func:`demographic_parity_difference`, :func:`equal_opportunity_difference`,
    :func:`equalized_odds_difference`, :func:`representation_rate`, :func:`group_rates`,
    :func:`group_summary`.
Real-valued predictions
    :func:`ks_statistical_parity`, :func:`statistical_parity_gamma`.
Distributions
    :func:`kl_divergence`, :func:`covariance_difference_norm`.
"""
from fairopt.metrics.classification import (
    MetricSignatureError,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equalized_odds_difference,
    group_rates,
    group_summary,
    representation_rate,
    statistical_rate,
)
from fairopt.metrics.distribution import DEFAULT_KL_SMOOTHING, covariance_difference_norm, kl_divergence
from fairopt.metrics.frame import MetricFrame
from fairopt.metrics.scores import ks_statistical_parity, statistical_parity_gamma

__all__ = [   # grouped by the module that defines them, as in the docstring above
    "MetricSignatureError", "demographic_parity_difference", "demographic_parity_ratio", "equal_opportunity_difference",
    "equalized_odds_difference", "group_rates", "group_summary", "representation_rate", "statistical_rate",
]
__all__ += ["DEFAULT_KL_SMOOTHING", "covariance_difference_norm", "kl_divergence"]
__all__ += ["MetricFrame"]
__all__ += ["ks_statistical_parity", "statistical_parity_gamma"]
