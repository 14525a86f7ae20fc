"""Calmon-style total-variation repair: the simple distribution baseline and the full mapping.

``TVRepair`` (:mod:`.simple`)
    The baseline of Celis et al. (2020): the distribution closest in TV to the data whose groups
    meet a statistical rate, solved exactly on any domain size by (group, label) aggregation.
``OptimizedPreprocessing`` (:mod:`.mapping`)
    Calmon et al. (2017): a randomised mapping P(x̂, ŷ | d, x, y) with discrimination and
    distortion control, built sparsely; TV (LP) or KL (exponential cone).
Distortion functions live in :mod:`.distortion`.
"""
from fairopt.formulations.tv_repair.distortion import (
    AdultDistortion,
    AttributeRule,
    CallableDistortion,
    CompasDistortion,
    Distortion,
    DistortionTable,
    as_distortion,
    bank_distortion,
)
from fairopt.formulations.tv_repair.mapping import OptimizedPreprocessing
from fairopt.formulations.tv_repair.result import MappingResult
from fairopt.formulations.tv_repair.simple import MAX_FULL_CELLS, TVRepair, TVRepairResult

__all__ = [
    "MAX_FULL_CELLS",
    "AdultDistortion",
    "AttributeRule",
    "CallableDistortion",
    "CompasDistortion",
    "Distortion",
    "DistortionTable",
    "MappingResult",
    "OptimizedPreprocessing",
    "TVRepair",
    "TVRepairResult",
    "as_distortion",
    "bank_distortion",
]
