"""Prior-shift baseline (Saerens et al. 2002): :class:`ShiftInference`."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import HasMethods, StrOptions

from fairopt.errors import DataValidationError, NotFittedError
from fairopt.postprocessing._scores import SCORE_MAPS, ScoreMap, _ScoreMixin
from fairopt.validation import check_dense, check_target, check_weights, validate_params

__all__ = ["ShiftInference"]


class ShiftInference(_ScoreMixin, ClassifierMixin, BaseEstimator):
    """Prior-shift ("shift inference") baseline: re-weight each group's posterior to the overall prior.

    With ``p = P(y=1 | x)`` learned under the group's label prior ``pi_k``, the posterior under the
    common prior ``pi`` is ``p' = a p / (a p + b (1 - p))`` with ``a = pi / pi_k`` and
    ``b = (1 - pi) / (1 - pi_k)`` (Saerens et al. 2002); predict ``1{p' > 1/2}``. Priors are
    estimated on the fitting sample. This equalises the *priors* the classifier assumes, not the
    group positive rates.

    Parameters
    ----------
    estimator, prefit, score_map
        As in :class:`ThresholdDebiaser` (scores are read as ``2p - 1``).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"x": rng.normal(size=600), "sex": rng.integers(0, 2, 600)})
    >>> y = (X["x"] + 0.8 * X["sex"] + rng.normal(size=600) > 0.5).astype(int)
    >>> clf = LogisticRegression().fit(X[:300], y[:300])
    >>> shift = ShiftInference(estimator=clf, prefit=True).fit(X[300:], y[300:], sensitive_features=X["sex"][300:])
    >>> shift.predict(X[300:], sensitive_features=X["sex"][300:]).shape
    (300,)
    """

    _parameter_constraints: ClassVar[dict] = {
        # a prefit model only needs a scoring method; fit is checked when it is called
        "estimator": [None, HasMethods(["predict_proba"]), HasMethods(["decision_function"]),
                      HasMethods(["predict"])],
        "prefit": ["boolean"],
        "score_map": [StrOptions(set(SCORE_MAPS))],
    }

    def __init__(self, estimator: BaseEstimator | None = None, prefit: bool = False,
                 score_map: ScoreMap = "auto") -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.score_map = score_map

    def __sklearn_clone__(self) -> ShiftInference:
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, prefit=self.prefit, score_map=self.score_map)

    def fit(self, X: ArrayLike, y: ArrayLike, sensitive_features: ArrayLike | None = None,
            sample_weight: ArrayLike | None = None) -> ShiftInference:
        """Estimate the overall and per-group label priors."""
        validate_params(self)
        n = self._n_rows(X)
        if self.estimator is None:   # X is the score array: refuse what predict could not read
            check_dense(X, "X (the scores)")
        yv = check_target(y, n, kind="binary", name="ShiftInference.fit: y").astype(int)
        w = check_weights(sample_weight, n)
        self.classes_ = np.array([0, 1])
        codes = self._fit_groups(sensitive_features, X, n)
        self._fit_estimator(X, yv, None if sample_weight is None else w)
        G = len(self.groups_)
        mass = np.bincount(codes, weights=w, minlength=G)
        if np.any(mass <= 0):
            raise DataValidationError(f"group(s) {list(self.groups_[mass <= 0])} have zero total sample_weight, so "
                                      "their label prior is undefined; give them positive weight or drop them.")
        pk = np.bincount(codes, weights=w * yv, minlength=G) / mass
        eps = 1e-6  # keep log-odds finite for groups with one label only
        self.group_priors_ = np.clip(pk, eps, 1 - eps)
        self.prior_ = float(np.clip(np.average(yv, weights=w), eps, 1 - eps))
        return self

    def predict_proba(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """Prior-corrected posteriors ``[1 - p', p']``."""
        if not hasattr(self, "prior_"):
            raise NotFittedError("ShiftInference is not fitted; call fit first.")
        n = self._n_rows(X)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        k = self._groups_at_predict(X, sensitive_features, n)
        p = np.clip(0.5 * (f + 1.0), 1e-12, 1 - 1e-12)
        pk = self.group_priors_[k]
        logit = np.log(p / (1 - p)) + np.log(self.prior_ / (1 - self.prior_)) - np.log(pk / (1 - pk))
        q = 1.0 / (1.0 + np.exp(-logit))
        return np.column_stack([1.0 - q, q])

    def predict(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """Deterministic predictions ``1{p' > 1/2}``."""
        return (self.predict_proba(X, sensitive_features)[:, 1] > 0.5).astype(np.int64)
