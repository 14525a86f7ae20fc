"""In-processing estimators: fair regression and fair classification by reductions, and SEO.

:class:`FairRegressor` (:mod:`~fairopt.inprocessing.regression`)
    Agarwal, Dudík & Wu (2019): least-loss randomized regressor under statistical parity (SP) on
    ``grid_size`` thresholds or under bounded group loss (BGL), via the exponentiated-gradient game
    of :mod:`fairopt.reductions`.
:class:`FairClassifier` (:mod:`~fairopt.inprocessing.classification`)
    Agarwal et al. (2018): the same game with classification moments (demographic parity, equal
    opportunity, equalized odds).
:class:`FairLogLossClassifier` (:mod:`~fairopt.inprocessing.logloss`)
    Rezaei et al. (2020): fair robust log-loss classification, truncated logistic regression that
    is exactly fair (DP, equal opportunity, equalized odds) on the training sample.
:class:`SEORegressor` (:mod:`~fairopt.inprocessing.seo`)
    Johnson, Foster & Stine (2016): the least-squares linear model whose predictions have zero
    sample covariance with the protected attribute, in closed form (a baseline).

Every ``fit`` validates its inputs with :mod:`fairopt.validation`, accepts ``sample_weight`` and
multi-column ``sensitive_features`` (intersectional groups). A new in-processing estimator goes in
its own module here, re-exported below.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairopt.formulations.cost_sensitive import min_max_group_loss
from fairopt.inprocessing.classification import FairClassifier
from fairopt.inprocessing.logloss import FairLogLossClassifier
from fairopt.inprocessing.regression import REGRESSION_CONSTRAINTS, FairRegressor
from fairopt.inprocessing.seo import SEORegressor

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import ArrayLike

    from fairopt.modeling import SolverSpec

__all__ = [
    "REGRESSION_CONSTRAINTS",
    "FairClassifier",
    "FairLogLossClassifier",
    "FairRegressor",
    "SEORegressor",
]


def _min_max_group_loss(costs: ArrayLike, G: ArrayLike, solver: str | SolverSpec | Mapping[str, Any]) -> float:
    """Smallest worst-group loss over mixtures of a pool (kept name; see
    :func:`fairopt.formulations.cost_sensitive.min_max_group_loss`)."""
    return min_max_group_loss(G, solver).value
