"""Constrained classification: randomized-threshold post-processing of trained scores.

Alabdulmohsin & Lucic (2021) cast debiasing a trained score ``f`` as a strongly convex QP over
the prediction probabilities of the post-processing sample; its solution is a per-group ramp
``clip((f - theta_k)/gamma, 0, 1)``. This package holds that model for statistical parity
(:class:`RandomizedThresholdParity`), its covariance extension
(:class:`RandomizedThresholdCovariance`), the label-based equal-opportunity / equalized-odds
LP over score atoms (:class:`ThresholdMixtureOdds`), their solvers, and an optional isotonic
calibration of the scores (:class:`IsotonicScoreMap`), and the fair multiclass post-processing LP
over distinct score vectors (:class:`MulticlassTransportLP`).

It also holds the fair robust log-loss model of Rezaei et al. (2020), :class:`FairLogLoss`
(modules ``logloss*``): truncated logistic regression, exactly fair on the training sample,
solved natively (L-BFGS with the exact inner multiplier) or as a joint exponential-cone program.
"""
from fairopt.formulations.constrained_classification.atoms import ScoreAtoms, collapse_atoms
from fairopt.formulations.constrained_classification.calibration import IsotonicScoreMap
from fairopt.formulations.constrained_classification.logloss import FairLogLoss, FairLogLossSolution
from fairopt.formulations.constrained_classification.multiclass_lp import (
    MulticlassSolution,
    MulticlassTransportLP,
    collapse_vectors,
)
from fairopt.formulations.constrained_classification.parity import RandomizedThresholdParity
from fairopt.formulations.constrained_classification.ramp import CellRamp, ramp, smoothed_relu
from fairopt.formulations.constrained_classification.sgd import ThresholdSGD, sgd_thresholds
from fairopt.formulations.constrained_classification.solution import ThresholdSolution

__all__ = ["CellRamp", "FairLogLoss", "FairLogLossSolution", "IsotonicScoreMap", "MulticlassSolution",
           "MulticlassTransportLP", "RandomizedThresholdParity", "ScoreAtoms", "ThresholdSGD", "ThresholdSolution",
           "collapse_atoms", "collapse_vectors", "ramp", "sgd_thresholds", "smoothed_relu"]
