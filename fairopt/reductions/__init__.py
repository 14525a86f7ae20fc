"""Reductions: Lagrangian games with pluggable moments, learner oracles and multiplier players.

See :mod:`fairopt.reductions.game` (the loop and its player protocols),
:mod:`~fairopt.reductions.exponentiated_gradient` (the EG players),
:mod:`~fairopt.reductions.moments` (constraints), :mod:`~fairopt.reductions.problems` (the learner
problems moments produce) and :mod:`~fairopt.reductions.oracles` (best responses).
"""
from fairopt.reductions.discretization import Grid, label_cover
from fairopt.reductions.exponentiated_gradient import ExponentiatedGradient, FaithfulEG, GameResult, PracticalEG
from fairopt.reductions.game import Game, HypothesisPool, Learner, MultiplierPlayer
from fairopt.reductions.losses import AbsoluteLoss, ScaledLogisticLoss, SquareLoss, get_loss
from fairopt.reductions.moments import (
                                                       BoundedGroupLoss,
                                                       DemographicParity,
                                                       EqualizedOdds,
                                                       EqualOpportunity,
                                                       Moment,
                                                       StatisticalParity,
)
from fairopt.reductions.oracles import (
                                                       CostSensitiveOracle,
                                                       FiniteClassOracle,
                                                       HingeLPOracle,
                                                       LeastSquaresOracle,
                                                       RiskMinimizationOracle,
                                                       WeightedLossOracle,
                                                       make_oracle,
)

__all__ = [
    "AbsoluteLoss", "BoundedGroupLoss", "CostSensitiveOracle", "DemographicParity",
    "EqualOpportunity", "EqualizedOdds", "ExponentiatedGradient", "FaithfulEG", "FiniteClassOracle",
    "Game", "GameResult", "Grid", "HingeLPOracle", "HypothesisPool", "Learner", "LeastSquaresOracle",
    "Moment", "MultiplierPlayer", "PracticalEG", "RiskMinimizationOracle", "ScaledLogisticLoss",
    "SquareLoss", "StatisticalParity", "WeightedLossOracle", "get_loss", "label_cover", "make_oracle",
]
