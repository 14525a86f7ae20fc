"""Scores of the post-processors: the wrapped estimator, the map to ``[-1, 1]``, groups at predict."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from fairopt.errors import ConfigError, DataValidationError, NotFittedError
from fairopt.validation import (
    Groups,
    check_dense,
    check_groups,
    check_numeric_columns,
    check_unique_columns,
    check_weights,
    check_X,
    encode_labels,
    label_codes,
    num_rows,
)

if TYPE_CHECKING:
    from os import PathLike

    from sklearn.utils import Tags

SCORE_MAPS = ("auto", "proba", "logit", "identity")
#: the ``score_map`` parameter of the post-processors
ScoreMap = Literal["auto", "proba", "logit", "identity"]
#: an input of the post-processors: in memory (array, frame, column names), or read in chunks (a Dask
#: collection, a memmap or the path of a ``.npy`` file)
Source = Union[ArrayLike, str, "PathLike[str]"]


def scores_from_proba(p: ArrayLike) -> NDArray[np.float64]:
    """Map probabilities ``P(y=1|x)`` to the ``[-1, 1]`` score scale: ``2p - 1``.

    Examples
    --------
    >>> scores_from_proba([0.8, 0.3]).round(6).tolist()
    [0.6, -0.4]
    """
    return 2.0 * np.asarray(p, dtype=float) - 1.0


def scores_from_logits(z: ArrayLike) -> NDArray[np.float64]:
    """Map log-odds (or any real margin) to ``[-1, 1]``: ``tanh(z/2) = 2 sigmoid(z) - 1``.

    Examples
    --------
    >>> scores_from_logits([0.0, 2.0]).round(6).tolist()
    [0.0, 0.761594]
    """
    return np.tanh(0.5 * np.asarray(z, dtype=float))



def map_scores(raw: np.ndarray, kind: str) -> np.ndarray:
    """Raw scores of ``score_map`` kind ``kind`` ("proba", "logit" or scores already in [-1, 1])
    mapped to the paper's [-1, 1] scores; module level so that it can be shipped to Dask workers.

    Examples
    --------
    >>> map_scores(np.array([0.0, 0.25, 1.0]), "proba").tolist()
    [-1.0, -0.5, 1.0]
    """
    if kind == "proba":
        if raw.size and (raw.min() < 0 or raw.max() > 1):
            raise DataValidationError("score_map='proba' needs probabilities in [0, 1].")
        return scores_from_proba(raw)
    if kind == "logit":
        return scores_from_logits(raw)
    if raw.size and (raw.min() < -1 - 1e-12 or raw.max() > 1 + 1e-12):
        raise DataValidationError(
            f"scores must lie in [-1, 1] (got [{raw.min():.4g}, {raw.max():.4g}]); map probabilities "
            "with 2p - 1 (score_map='proba') or log-odds/margins with tanh(z/2) (score_map='logit').")
    # clip only when needed: a copy of 10^7 scores costs more than the rest of the fit's setup
    return np.clip(raw, -1.0, 1.0) if raw.size and (raw.min() < -1.0 or raw.max() > 1.0) else raw

class _ScoreMixin:
    """Shared handling of the wrapped estimator and of the score map."""

    # parameters and methods of the estimators that use the mixin (declared for the type checker)
    estimator: Any
    score_map: ScoreMap
    prefit: bool
    predict: Callable[..., Any]
    # fitted labels: the two labels of y (sorted), the favourable one and its position
    classes_: np.ndarray
    pos_label_: Any
    _pos_index: int

    def __sklearn_tags__(self) -> Tags:
        # two class labels; without a wrapped estimator X is a 1-D array of scores
        tags = super().__sklearn_tags__()  # type: ignore[misc]  # a mixin: the estimator's BaseEstimator has it
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_class = False
        if self.estimator is None:
            tags.input_tags.one_d_array, tags.input_tags.two_d_array = True, False
        else:   # X goes to the wrapped estimator: it decides about sparse input
            from sklearn.utils import get_tags
            tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags

    def _check_score_map(self) -> None:
        if self.score_map not in SCORE_MAPS:
            raise ConfigError(f"score_map must be one of {SCORE_MAPS}, got {self.score_map!r}.")

    def _fit_estimator(self, X: Source, y: ArrayLike | None, sample_weight: ArrayLike | None) -> None:
        if self.estimator is None:
            return
        if self.prefit:
            try:
                check_is_fitted(self.estimator)
            except Exception as exc:
                raise NotFittedError(f"prefit=True but the estimator {type(self.estimator).__name__} is not "
                                     "fitted; fit it first or use prefit=False.") from exc
            self.estimator_ = self.estimator
        else:
            if y is None:
                raise DataValidationError("y is required to fit the wrapped estimator (prefit=False): it requires y "
                                          "to be passed, but the target y is None.")
            self._check_estimator_X(X)
            self.estimator_ = clone(self.estimator)
            kw = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.estimator_.fit(X, y, **kw)
        # the feature count (and names) the wrapped estimator saw, as scikit-learn's meta-estimators do
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))

    def _check_estimator_X(self, X: Source) -> None:
        """In-memory features for the wrapped estimator: fairopt's typed errors for duplicate column
        names, and for NaN unless the estimator declares it takes missing values (its ``allow_nan`` tag)."""
        if not isinstance(X, (pd.DataFrame, np.ndarray)):
            return
        from sklearn.utils import get_tags
        check_unique_columns(X, f"{type(self).__name__}: X")
        if not get_tags(self.estimator).input_tags.allow_nan:
            check_X(X, type(self).__name__)

    def _scores(self, X: Source, drop: list[str] | None = None) -> np.ndarray:
        """Scores on ``[-1, 1]`` for the rows of ``X`` (see the module docstring)."""
        self._check_score_map()
        kind = self.score_map
        est = getattr(self, "estimator_", None) if self.estimator is not None else None
        if self.estimator is not None and est is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first.")
        if est is None:
            if isinstance(X, pd.DataFrame):
                X = X.drop(columns=drop or [])
            check_dense(X, "X (the scores)")
            check_numeric_columns(X, "X (the scores)")
            raw = np.asarray(X, dtype=float)
            if raw.ndim == 2 and raw.shape[1] == 1:
                raw = raw[:, 0]
            if raw.ndim != 1:
                raise DataValidationError(f"without an estimator X must be a 1-D array of scores, got shape "
                                          f"{raw.shape}; pass estimator=... to score features.")
            kind = "identity" if kind == "auto" else kind
        else:
            self._check_estimator_X(X)
            pos = self._estimator_positive_column(est)
            if kind in ("auto", "proba") and hasattr(est, "predict_proba"):
                proba = np.asarray(est.predict_proba(X), dtype=float)
                raw, kind = proba[:, pos], "proba"
            elif kind in ("auto", "logit") and hasattr(est, "decision_function"):
                # a binary decision function is positive for classes_[1]
                sign = -1.0 if pos == 0 else 1.0
                raw, kind = sign * np.asarray(est.decision_function(X), dtype=float).reshape(-1), "logit"
            elif kind == "identity":
                raw = np.asarray(est.predict(X), dtype=float).reshape(-1)
            else:
                raise ConfigError(f"score_map={self.score_map!r}: the estimator has no suitable method "
                                  "(predict_proba for 'proba', decision_function for 'logit').")
        if not np.isfinite(raw).all():
            raise DataValidationError("scores contain NaN or infinite values.")
        return map_scores(raw, kind)

    def mapped_scores(self, X: Source) -> np.ndarray:
        """The scores on ``[-1, 1]`` that the fitted rule reads for the rows of ``X``.

        The wrapped estimator's output (``predict_proba`` or ``decision_function``; without an
        estimator, ``X`` itself, less the sensitive columns named at fit) mapped by ``score_map``,
        before any per-group calibration (``calibrator_``).

        Parameters
        ----------
        X : array-like or DataFrame
            Features for the wrapped estimator, or the scores themselves.

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> import numpy as np
        >>> from fairopt.postprocessing import ThresholdDebiaser
        >>> deb = ThresholdDebiaser(score_map="proba")
        >>> deb.mapped_scores(np.array([0.0, 0.75, 1.0])).tolist()
        [-1.0, 0.5, 1.0]
        """
        drop = getattr(self, "sensitive_columns_", None) if self.estimator is None else None
        return self._scores(X, drop=drop)

    def group_codes(self, X: Source, sensitive_features: Source | None = None) -> np.ndarray:
        """Index into ``groups_`` of every row's group.

        Parameters
        ----------
        X : array-like or DataFrame
            The rows (their count; the group columns when the fit named columns of ``X``).
        sensitive_features : array-like, optional
            Group of every row; default: the columns of ``X`` named at fit.

        Returns
        -------
        ndarray of int of shape (n_samples,)

        Raises
        ------
        NotFittedError
            Before ``fit``.
        DataValidationError
            A group not seen at fit, or no groups given.

        Examples
        --------
        >>> import numpy as np
        >>> from fairopt.postprocessing import ThresholdDebiaser
        >>> f = np.array([-0.5, 0.2, 0.4, 0.9])
        >>> deb = ThresholdDebiaser().fit(f, sensitive_features=["b", "a", "b", "a"])
        >>> deb.group_codes(f, ["a", "a", "b", "b"]).tolist(), list(deb.groups_)
        ([0, 0, 1, 1], ['a', 'b'])
        """
        if not hasattr(self, "groups_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first.")
        return self._groups_at_predict(X, sensitive_features, self._n_rows(X))

    def _estimator_positive_column(self, est: Any) -> int:
        """Column of the favourable label in the wrapped estimator's ``predict_proba``: the label 1
        of the encoded ``y`` it was fitted on, or, for a prefit estimator, ``pos_label_`` among its
        own ``classes_`` (then 1, then the last column)."""
        classes = list(getattr(est, "classes_", [0, 1]))
        targets = [getattr(self, "pos_label_", 1), 1] if self.prefit else [1]
        for t in targets:
            hits = [i for i, c in enumerate(classes) if isinstance(c, str) == isinstance(t, str) and c == t]
            if hits:
                return hits[0]
        return len(classes) - 1

    def _fit_labels(self, y: Source | None, n: int, what: str) -> np.ndarray | None:
        """``y`` encoded to int 0/1 (1 = ``pos_label``), with ``classes_`` and ``pos_label_`` set.

        Without ``y`` the labels are those of a prefit estimator's two ``classes_`` when it has
        them, else 0/1; ``pos_label`` must then be one of them.
        """
        pos_label = getattr(self, "pos_label", None)
        if y is not None:
            enc = encode_labels(y, n, pos_label=pos_label, name=f"{what}: y")
            self.classes_, self._pos_index = enc.classes, enc.pos_index
            self.pos_label_ = enc.classes.tolist()[enc.pos_index]
            return enc.y.astype(int)
        est_classes = getattr(self.estimator, "classes_", None) if self.prefit else None
        classes = np.asarray(est_classes) if est_classes is not None and len(est_classes) == 2 else np.array([0, 1])
        # the labels' own rule, run on one row of each (it resolves pos_label or names the labels)
        enc = encode_labels(classes, 2, pos_label=pos_label, name=f"{what}: the labels (classes_ of the "
                            "estimator, or 0/1)")
        self.classes_, self._pos_index = enc.classes, enc.pos_index
        self.pos_label_ = enc.classes.tolist()[enc.pos_index]
        return None

    def _fit_groups(self, sensitive_features: Source | None, X: Source, n: int, min_groups: int = 1) -> np.ndarray:
        """Group codes at fit; sets ``groups_`` and ``sensitive_columns_`` (names of ``X``'s columns,
        or ``None`` when the groups were passed as data); ``min_groups=2`` for a fairness constraint."""
        grp = check_groups(sensitive_features, n, X=X, min_groups=min_groups)
        self.groups_ = grp.labels
        self.sensitive_columns_ = None if grp.columns is None else list(grp.columns)
        return grp.codes.astype(np.int64, copy=False)

    def _groups_at_predict(self, X: Source, sensitive_features: Source | None, n: int) -> np.ndarray:
        if sensitive_features is None and getattr(self, "sensitive_columns_", None):
            sensitive_features = self.sensitive_columns_
        if sensitive_features is None:
            raise DataValidationError("sensitive_features is required at predict: pass the group of every row "
                                      "(or fit with the name(s) of columns of X so that predict finds them).")
        return Groups(np.zeros(0, np.intp), self.groups_).encode(sensitive_features, n, X=X)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
              sensitive_features: ArrayLike | None = None, **predict_params: Any) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)`` (``predict_params`` go to ``predict``, e.g.
        ``subgroups``); ``y`` holds labels of ``classes_`` and ``sample_weight`` must be finite, >= 0."""
        what = f"{type(self).__name__}.score"
        pred = np.asarray(self.predict(X, sensitive_features=sensitive_features, **predict_params))
        n = pred.shape[0]
        codes = label_codes(y, self.classes_, n, f"{what}: y")
        w = check_weights(sample_weight, n, f"{what}: sample_weight")
        return float(np.average(label_codes(pred, self.classes_, n) == codes, weights=w))

    def _n_rows(self, X: Source | None) -> int:
        if X is None:
            raise DataValidationError(f"{type(self).__name__}: X is required but was None; pass the features "
                                      "(or, without an estimator, the 1-D array of scores).")
        return num_rows(X)
