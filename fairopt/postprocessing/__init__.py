"""Post-processing mitigators: debias the scores of an already trained model.

``ThresholdDebiaser``
    Randomized per-group thresholds (Alabdulmohsin & Lucic 2021) for statistical parity, its
    covariance extension, and (as an LP over score atoms) equal opportunity / equalized odds.
    Fitting costs one sort of the post-processing sample; no retraining.
``ShiftInference``
    Baseline: prior-shift correction of the posterior per group (Saerens et al. 2002), which
    moves group rates toward each other but does not control parity.

Score conventions
-----------------
The formulation reads a score ``f`` in ``[-1, 1]`` as an estimate of ``2 P(y=1|x) - 1``: the
objective ``E[h f]`` then tracks accuracy, ``f = 0`` means "even odds", and the ramp width
``gamma`` is in these units. Scores are mapped as follows (``score_map``):

* ``"proba"``: probabilities ``p in [0, 1]`` -> ``2p - 1``;
* ``"logit"``: real-valued margins or log-odds ``z`` -> ``tanh(z / 2)`` (``= 2 sigmoid(z) - 1``,
  monotone, exact for log-odds);
* ``"identity"``: scores already in ``[-1, 1]``;
* ``"auto"`` (default): with an estimator, ``predict_proba`` (``"proba"``) if it has one, else
  ``decision_function`` (``"logit"``); without one (``X`` is the score array), ``"identity"``.

Uncalibrated scores (random forests, kNN, networks) can additionally be recalibrated on the
labelled fitting sample with ``ThresholdDebiaser(calibration="isotonic" | "isotonic_per_group")``:
an isotonic regression of ``y`` on the mapped score gives ``eta_hat``, and the rule then works on
``f = 2 eta_hat - 1`` at fit and at predict time
(:class:`~fairopt.formulations.constrained_classification.IsotonicScoreMap`).
"""
from __future__ import annotations

from fairopt._utils import as_generator  # noqa: F401  (the one random-state helper)
from fairopt.postprocessing._scores import scores_from_logits, scores_from_proba
from fairopt.postprocessing.multiclass import MulticlassDebiaser
from fairopt.postprocessing.regression import RegressionDebiaser
from fairopt.postprocessing.shift import ShiftInference
from fairopt.postprocessing.threshold import ThresholdDebiaser

__all__ = ["MulticlassDebiaser", "RegressionDebiaser", "ShiftInference", "ThresholdDebiaser", "scores_from_logits",
           "scores_from_proba"]
