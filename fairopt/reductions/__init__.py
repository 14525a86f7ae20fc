"""Reductions: the exponentiated-gradient Lagrangian game with pluggable moments and oracles.

See :mod:`fairopt.reductions.exponentiated_gradient` (the game), :mod:`~fairopt.reductions.moments`
(constraints) and :mod:`~fairopt.reductions.oracles` (best responses).
"""
from fairopt.reductions.discretization import Grid, label_cover
from fairopt.reductions.exponentiated_gradient import ExponentiatedGradient, GameResult
from fairopt.reductions.losses import AbsoluteLoss, ScaledLogisticLoss, SquareLoss, get_loss
from fairopt.reductions.moments import (BoundedGroupLoss, DemographicParity, EqualizedOdds,
                                        EqualOpportunity, StatisticalParity)
from fairopt.reductions.oracles import (CostSensitiveOracle, FiniteClassOracle, HingeLPOracle,
                                        LeastSquaresOracle, RiskMinimizationOracle,
                                        WeightedLossOracle, make_oracle)

__all__ = [
    "AbsoluteLoss", "BoundedGroupLoss", "CostSensitiveOracle", "DemographicParity",
    "EqualOpportunity", "EqualizedOdds", "ExponentiatedGradient", "FiniteClassOracle", "GameResult",
    "Grid", "HingeLPOracle", "LeastSquaresOracle", "RiskMinimizationOracle", "ScaledLogisticLoss",
    "SquareLoss", "StatisticalParity", "WeightedLossOracle", "get_loss", "label_cover", "make_oracle",
]
