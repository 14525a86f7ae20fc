"""Prior-shift baseline (Saerens et al. 2002): :class:`ShiftInference`."""
from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from fairopt._param_validation import HasMethods, StrOptions
from fairopt.errors import DataValidationError, NotFittedError
from fairopt.postprocessing._scores import SCORE_MAPS, ScoreMap, _ScoreMixin
from fairopt.validation import check_dense, check_weights, decode_labels, proba_columns, validate_params

__all__ = ["ShiftInference"]


class ShiftInference(_ScoreMixin, ClassifierMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
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
    pos_label : str, int, bool or None, default None
        The favourable label of ``y``, whose prior is corrected. ``None`` means 1 when the labels
        are 0/1, otherwise the greater of the two sorted labels (``classes_[1]``). The prior
        correction is symmetric in the two labels, so the choice only relabels the fit. ``y`` is
        encoded once to 0/1 (1 = ``pos_label``) and predictions are decoded back to its labels.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels (sorted); ``predict`` returns them and ``predict_proba``'s columns follow
        their order.
    pos_label_ : object
        The favourable label (``pos_label`` resolved).
    prior_, group_priors_ : float, ndarray
        Overall and per-group rates of ``pos_label_`` on the fitting sample.

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

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        # a prefit model only needs a scoring method; fit is checked when it is called
        "estimator": [None, HasMethods(["predict_proba"]), HasMethods(["decision_function"]),
                      HasMethods(["predict"])],
        "prefit": ["boolean"],
        "score_map": [StrOptions(set(SCORE_MAPS))],
        "pos_label": [None, str, Real, "boolean"],   # checked against the labels of y at fit
    }

    def __init__(self, estimator: BaseEstimator | None = None, prefit: bool = False,
                 score_map: ScoreMap = "auto", pos_label: str | int | bool | None = None) -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.score_map = score_map
        self.pos_label = pos_label

    def __sklearn_clone__(self) -> ShiftInference:
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, prefit=self.prefit, score_map=self.score_map, pos_label=self.pos_label)

    def fit(self, X: ArrayLike, y: ArrayLike, sensitive_features: ArrayLike | None = None,
            sample_weight: ArrayLike | None = None) -> ShiftInference:
        """Estimate the overall and per-group priors of ``pos_label`` (``y`` holds two labels)."""
        validate_params(self)
        n = self._n_rows(X)
        if self.estimator is None:   # X is the score array: refuse what predict could not read
            check_dense(X, "X (the scores)")
        if y is None:   # scikit-learn's wording, which its estimator checks look for
            raise DataValidationError("ShiftInference.fit: y: this estimator requires y to be passed, but the "
                                      "target y is None.")
        yv = self._fit_labels(y, n, "ShiftInference.fit")     # 0/1, 1 = pos_label
        assert yv is not None
        w = check_weights(sample_weight, n)
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
        """Prior-corrected posteriors, columns in the order of ``classes_`` (``[1 - p', p']`` for
        0/1 labels, ``p'`` the posterior of ``pos_label_``)."""
        if not hasattr(self, "prior_"):
            raise NotFittedError("ShiftInference is not fitted; call fit first.")
        n = self._n_rows(X)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        k = self._groups_at_predict(X, sensitive_features, n)
        p = np.clip(0.5 * (f + 1.0), 1e-12, 1 - 1e-12)
        pk = self.group_priors_[k]
        logit = np.log(p / (1 - p)) + np.log(self.prior_ / (1 - self.prior_)) - np.log(pk / (1 - pk))
        q = 1.0 / (1.0 + np.exp(-logit))
        out: np.ndarray = proba_columns(q, self._pos_index)
        return out

    def predict(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """Deterministic predictions: ``pos_label_`` where ``p' > 1/2``, else the other label."""
        return decode_labels(self.predict_proba(X, sensitive_features)[:, self._pos_index] > 0.5, self.classes_,
                             self._pos_index)
