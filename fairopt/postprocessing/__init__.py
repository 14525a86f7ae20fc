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

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from fairopt._utils import as_generator
from fairopt.errors import ConfigError, DataValidationError, NotFittedError
from fairopt.metrics._validation import check_weights

__all__ = ["ShiftInference", "ThresholdDebiaser", "scores_from_logits", "scores_from_proba"]

CONSTRAINTS = ("demographic_parity", "covariance", "equal_opportunity", "equalized_odds")
_ALIASES = {"statistical_parity": "demographic_parity", "true_positive_rate_parity": "equal_opportunity"}
SCORE_MAPS = ("auto", "proba", "logit", "identity")
CALIBRATIONS = (None, "isotonic", "isotonic_per_group")


def scores_from_proba(p) -> np.ndarray:
    """Map probabilities ``P(y=1|x)`` to the ``[-1, 1]`` score scale: ``2p - 1``."""
    return 2.0 * np.asarray(p, dtype=float) - 1.0


def scores_from_logits(z) -> np.ndarray:
    """Map log-odds (or any real margin) to ``[-1, 1]``: ``tanh(z/2) = 2 sigmoid(z) - 1``."""
    return np.tanh(0.5 * np.asarray(z, dtype=float))


# ----------------------------------------------------------------------------------- helpers
def _sensitive_columns(sensitive_features, X):
    """Column name(s) of ``X`` when ``sensitive_features`` names them, else ``None``."""
    if isinstance(sensitive_features, str) or (
            isinstance(sensitive_features, (list, tuple)) and sensitive_features
            and all(isinstance(c, str) for c in sensitive_features)):
        cols = [sensitive_features] if isinstance(sensitive_features, str) else list(sensitive_features)
        if not isinstance(X, pd.DataFrame):
            raise DataValidationError(f"sensitive_features={sensitive_features!r} names columns, so X must be "
                                      "a pandas DataFrame containing them.")
        missing = [c for c in cols if c not in X.columns]
        if missing:
            raise DataValidationError(f"sensitive column(s) {missing} are not in X (columns: {list(X.columns)[:20]}).")
        return cols
    return None


def _group_frame(sensitive_features, X, n: int) -> list[np.ndarray]:
    cols = _sensitive_columns(sensitive_features, X)
    if cols is not None:
        return [X[c].to_numpy() for c in cols]
    if sensitive_features is None:
        raise DataValidationError("sensitive_features is required: pass the group of every row "
                                  "(array, Series, DataFrame, or the name(s) of columns of X). Inside "
                                  "cross_val_score, name the column (params={'sensitive_features': 'sex'}) "
                                  "so that predict finds the groups in X.")
    if isinstance(sensitive_features, pd.DataFrame):
        out = [sensitive_features.iloc[:, j].to_numpy() for j in range(sensitive_features.shape[1])]
    elif isinstance(sensitive_features, pd.Series):
        out = [sensitive_features.to_numpy()]
    else:
        arr = np.asarray(sensitive_features)
        if arr.ndim not in (1, 2):
            raise DataValidationError(f"sensitive_features must be 1-D or 2-D, got shape {arr.shape}.")
        out = [arr] if arr.ndim == 1 else [arr[:, j] for j in range(arr.shape[1])]
    if not out or any(len(c) != n for c in out):
        raise DataValidationError(f"sensitive_features must have one entry per row of X ({n} rows).")
    return out


def _encode(columns: list[np.ndarray]) -> tuple[np.ndarray, pd.Index]:
    """Codes ``0..G-1`` and sorted labels (tuples for several columns: intersectional groups)."""
    key = columns[0] if len(columns) == 1 else pd.MultiIndex.from_arrays(columns)
    try:
        codes, labels = pd.factorize(key, sort=True)
    except TypeError:
        codes, labels = pd.factorize(key, sort=False)
    if (codes < 0).any():
        raise DataValidationError("sensitive_features contains missing values; give every row a group.")
    return codes.astype(np.int64), pd.Index(labels)


class _ScoreMixin:
    """Shared handling of the wrapped estimator and of the score map."""

    def _check_score_map(self):
        if self.score_map not in SCORE_MAPS:
            raise ConfigError(f"score_map must be one of {SCORE_MAPS}, got {self.score_map!r}.")

    def _fit_estimator(self, X, y, sample_weight):
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
                raise DataValidationError("y is required to fit the wrapped estimator (prefit=False).")
            self.estimator_ = clone(self.estimator)
            kw = {} if sample_weight is None else {"sample_weight": sample_weight}
            self.estimator_.fit(X, y, **kw)

    def _scores(self, X, drop=None) -> np.ndarray:
        """Scores on ``[-1, 1]`` for the rows of ``X`` (see the module docstring)."""
        self._check_score_map()
        kind = self.score_map
        est = getattr(self, "estimator_", None) if self.estimator is not None else None
        if self.estimator is not None and est is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit first.")
        if est is None:
            if isinstance(X, pd.DataFrame):
                X = X.drop(columns=drop or [])
            raw = np.asarray(X, dtype=float)
            if raw.ndim == 2 and raw.shape[1] == 1:
                raw = raw[:, 0]
            if raw.ndim != 1:
                raise DataValidationError(f"without an estimator X must be a 1-D array of scores, got shape "
                                          f"{raw.shape}; pass estimator=... to score features.")
            kind = "identity" if kind == "auto" else kind
        else:
            if kind in ("auto", "proba") and hasattr(est, "predict_proba"):
                proba = np.asarray(est.predict_proba(X), dtype=float)
                classes = list(getattr(est, "classes_", [0, 1]))
                raw, kind = proba[:, classes.index(1) if 1 in classes else -1], "proba"
            elif kind in ("auto", "logit") and hasattr(est, "decision_function"):
                raw, kind = np.asarray(est.decision_function(X), dtype=float).reshape(-1), "logit"
            elif kind == "identity":
                raw = np.asarray(est.predict(X), dtype=float).reshape(-1)
            else:
                raise ConfigError(f"score_map={self.score_map!r}: the estimator has no suitable method "
                                  "(predict_proba for 'proba', decision_function for 'logit').")
        if not np.isfinite(raw).all():
            raise DataValidationError("scores contain NaN or infinite values.")
        if kind == "proba":
            if raw.min() < 0 or raw.max() > 1:
                raise DataValidationError("score_map='proba' needs probabilities in [0, 1].")
            return scores_from_proba(raw)
        if kind == "logit":
            return scores_from_logits(raw)
        if raw.size and (raw.min() < -1 - 1e-12 or raw.max() > 1 + 1e-12):
            raise DataValidationError(
                f"scores must lie in [-1, 1] (got [{raw.min():.4g}, {raw.max():.4g}]); map probabilities "
                "with 2p - 1 (score_map='proba') or log-odds/margins with tanh(z/2) (score_map='logit').")
        return np.clip(raw, -1.0, 1.0)

    def _groups_at_predict(self, X, sensitive_features, n) -> np.ndarray:
        if sensitive_features is None and getattr(self, "sensitive_columns_", None):
            sensitive_features = self.sensitive_columns_
        codes, labels = _encode(_group_frame(sensitive_features, X, n))
        pos = self.groups_.get_indexer(labels)
        if (pos < 0).any():
            unseen = [labels[i] for i in np.flatnonzero(pos < 0)[:5]]
            raise DataValidationError(f"group(s) {unseen} were not seen at fit (known groups: "
                                      f"{list(self.groups_)[:10]}); refit with rows from every group.")
        return pos[codes]

    def _n_rows(self, X) -> int:
        return X.shape[0] if hasattr(X, "shape") else len(X)


# ----------------------------------------------------------------------------------- estimators
class ThresholdDebiaser(_ScoreMixin, ClassifierMixin, BaseEstimator):
    """Randomized-threshold post-processing of a trained score (Alabdulmohsin & Lucic 2021).

    For a row with score ``f`` in group ``k`` the debiased rule predicts 1 with probability
    ``h = clip((f - t_k)/gamma, 0, 1)``: deterministic far from the group's threshold ``t_k`` and
    randomized on the ramp ``(t_k, t_k + gamma)``. The thresholds solve the strongly convex QP
    ``min (gamma/2) E[h^2] - E[h f]`` subject to the fairness constraint on the post-processing
    sample, so the rule changes as few confident predictions as possible.

    Parameters
    ----------
    estimator : estimator or None, default None
        Model whose scores are debiased. ``None``: ``X`` is itself a 1-D array of scores (from
        any model, including non-Python ones).
    prefit : bool, default False
        ``estimator`` is already fitted; ``fit`` only learns the thresholds. Keep the
        post-processing sample disjoint from the estimator's training data.
    constraint : {"demographic_parity", "covariance", "equal_opportunity", "equalized_odds"}
        Fairness criterion. ``demographic_parity``: every group's positive rate within
        ``eps/2`` of ``rho`` (or, with ``rho=None``, all rates within ``eps`` of each other).
        ``covariance``: ``|Cov(h, 1_S | subgroup)| <= eps`` for a binary sensitive attribute
        (Appendix E.1). ``equal_opportunity`` / ``equalized_odds``: true (and false) positive
        rates within ``eps`` of each other, with a monotone mixture of thresholds fitted by LP
        (needs ``y``; ``gamma`` is unused).
    gamma : float, default 0.1
        Width of the randomization ramp in score units. Larger values randomize more rows
        (smoother, more stable on new data, slightly less accurate); ``0`` is the pure
        threshold rule with one fractional level (LP).
    eps : float, default 0.0
        Tolerated unfairness (see ``constraint``). ``0`` is exact parity on the fitting sample.
    rho : float in [0, 1] or None, default None
        Common target positive rate for ``demographic_parity``; ``None`` lets the optimisation
        choose it (Definition 1 exactly). The paper tunes it near the base rate ``E[y]``.
    solver : str, default "native"
        ``"native"`` (exact, ``O(n log n)``), ``"sgd"`` (projected SGD, fixed ``rho``), or a
        :mod:`fairopt.modeling` solver (``"osqp"``, ``"highs"``, ``"cvxpy[:SOLVER]"``,
        ``"pyomo[:SOLVER]"``). Equal opportunity / odds use an LP solver (``"native"`` means
        ``"highs"`` there).
    random_state : int, Generator or None
        Seed of ``predict``'s sampling (and of the SGD).
    score_map : {"auto", "proba", "logit", "identity"}, default "auto"
        How raw scores are mapped to ``[-1, 1]`` (see the module docstring).
    calibration : {None, "isotonic", "isotonic_per_group"}, default None
        Optional recalibration of the mapped scores on the labelled fitting sample (needs ``y``
        at fit). The rule maximises ``E[h f]``, which is accuracy only when ``f = 2 eta - 1``.
        ``"isotonic"`` fits one non-decreasing regression ``eta_hat`` of ``y`` on the score and
        uses ``f = 2 eta_hat - 1``; it keeps the score order and merges blocks of scores into ties.
        ``"isotonic_per_group"`` fits one per group. On the fitting sample ``E[h f]`` is then the
        accuracy of every rule constant on the isotonic blocks, so with ``gamma -> 0`` and free
        ``rho`` the fitted rule is the most accurate such parity rule there. The same map is
        applied at predict time (linear between breakpoints, clipped outside the fitted range).
        ``None`` uses the scores as mapped by ``score_map``.
    solver_options : dict or None
        Extra options for the solver (e.g. ``{"n_steps": 8000}`` for SGD, ``{"time_limit": 10}``).

    Attributes
    ----------
    thresholds_ : ndarray of shape (n_groups,)
        Thresholds ``t_k`` aligned with ``groups_`` (for ``covariance``: shape
        ``(n_subgroups, 2)``, columns for outside / inside the sensitive class; for the label
        criteria: list of per-group arrays of cut points of the step rule).
    gamma_, rho_, eps_ : float
        Fitted ramp width, target rate (the optimal one when ``rho=None``) and tolerance.
    groups_ : pandas.Index
        Group labels seen at fit (tuples for several sensitive columns).
    fitted_rates_ : ndarray
        Constraint values on the fitting sample (group positive rates; covariances; TPRs).
    solution_ : object
        Full solver result (duals, objective, timings).
    calibrator_ : IsotonicScoreMap or None
        The fitted score calibration (``None`` without ``calibration``); its ``breakpoints_``
        hold the isotonic steps (per group for ``"isotonic_per_group"``).

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([-1, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, -1.0])
    >>> g = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    >>> deb = ThresholdDebiaser(gamma=0.5, rho=0.4).fit(f, sensitive_features=g)
    >>> deb.predict_proba(np.array([-1.0, 0.0, 1.0]), sensitive_features=[1, 1, 0])[:, 1].round(3)
    array([0. , 0.7, 1. ])
    """

    def __init__(self, estimator=None, prefit=False, constraint="demographic_parity", gamma=0.1, eps=0.0,
                 rho=None, solver="native", random_state=None, score_map="auto", solver_options=None,
                 calibration=None):
        self.estimator = estimator
        self.prefit = prefit
        self.constraint = constraint
        self.gamma = gamma
        self.eps = eps
        self.rho = rho
        self.solver = solver
        self.random_state = random_state
        self.score_map = score_map
        self.solver_options = solver_options
        self.calibration = calibration

    def __sklearn_clone__(self):
        """Clone without refitting: a prefit estimator is shared, not cloned into an unfitted copy
        (so ``cross_val_score`` over the post-processing sample works with ``prefit=True``)."""
        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items()
                  if k != "estimator"}
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, **params)

    def _constraint(self) -> str:
        c = _ALIASES.get(self.constraint, self.constraint)
        if c not in CONSTRAINTS:
            raise ConfigError(f"constraint must be one of {CONSTRAINTS}, got {self.constraint!r}.")
        return c

    def fit(self, X, y=None, sensitive_features=None, subgroups=None, sample_weight=None):
        """Learn the group thresholds on the post-processing sample.

        Parameters
        ----------
        X : array-like
            Features for ``estimator``, or a 1-D array of scores when ``estimator=None``.
        y : array-like of {0, 1}, optional
            Labels; needed for the label-based constraints, for ``calibration`` and to fit a
            non-prefit estimator.
        sensitive_features : array-like, DataFrame, or column name(s) of X
            Group of every row; several columns define intersectional groups (the paper's
            gender x ethnicity). For ``covariance``, the binary sensitive attribute.
        subgroups : array-like, optional
            Covariance only: subgroups ``k`` within which the covariance is bounded.
        sample_weight : array-like, optional
            Row weights.
        """
        from fairopt.formulations.constrained_classification import IsotonicScoreMap, RandomizedThresholdParity
        from fairopt.formulations.constrained_classification.covariance import RandomizedThresholdCovariance
        from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds
        constraint = self._constraint()
        if self.calibration not in CALIBRATIONS:
            raise ConfigError(f"calibration must be one of {CALIBRATIONS}, got {self.calibration!r}.")
        n = self._n_rows(X)
        if n == 0:
            raise DataValidationError("X has no rows.")
        sw = None if sample_weight is None else check_weights(sample_weight, n)
        yv = None
        if y is not None:
            yv = np.asarray(y).reshape(-1)
            if yv.shape[0] != n:
                raise DataValidationError(f"y has {yv.shape[0]} entries for {n} rows.")
            if not np.isin(yv, (0, 1)).all():
                raise DataValidationError(f"y must be binary 0/1 labels, got classes {np.unique(yv)[:5].tolist()}.")
        self.classes_ = np.array([0, 1])
        self.sensitive_columns_ = _sensitive_columns(sensitive_features, X)
        self._fit_estimator(X, yv, sw)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        codes, self.groups_ = _encode(_group_frame(sensitive_features, X, n))
        self.calibrator_ = None
        if self.calibration is not None:
            if yv is None:
                raise DataValidationError(f"calibration={self.calibration!r} fits P(y=1 | score) on the "
                                          "fitting sample, so fit needs its labels y; pass y or set "
                                          "calibration=None.")
            self.calibrator_ = IsotonicScoreMap(per_group=self.calibration == "isotonic_per_group").fit(
                f, yv, codes, len(self.groups_), sw)
            f = self.calibrator_.transform(f, codes)
        opts = dict(self.solver_options or {})
        solver_name = getattr(self.solver, "backend", self.solver)
        self.eps_ = float(self.eps)
        if constraint == "demographic_parity":
            if solver_name == "sgd" and "random_state" not in opts:
                opts["random_state"] = self.random_state
            form = RandomizedThresholdParity(f, codes, self.gamma, self.eps, self.rho, sw, len(self.groups_))
            sol = form.solve(self.solver, **opts)
            self.thresholds_, self.tie_probs_ = sol.thresholds, sol.tie_probs
            self.gamma_, self.rho_, self.fitted_rates_ = sol.gamma, sol.rho, sol.rates
        elif constraint == "covariance":
            if len(self.groups_) != 2:
                raise DataValidationError(f"constraint='covariance' needs a binary sensitive attribute; got "
                                          f"{len(self.groups_)} groups {list(self.groups_)[:5]}.")
            sub_codes, self.subgroups_ = (np.zeros(n, np.int64), pd.Index([None])) if subgroups is None \
                else _encode(_group_frame(subgroups, X, n))
            if solver_name == "sgd" and "random_state" not in opts:
                opts["random_state"] = self.random_state
            form = RandomizedThresholdCovariance(f, codes, sub_codes, self.gamma, self.eps, sw, len(self.subgroups_))
            sol = form.solve(self.solver, **opts)
            self.thresholds_ = sol.thresholds.reshape(-1, 2)
            self.gamma_, self.rho_, self.fitted_rates_ = sol.gamma, float("nan"), sol.rates
        else:
            if yv is None:
                raise DataValidationError(f"constraint={constraint!r} needs the labels y of the fitting sample.")
            form = ThresholdMixtureOdds(f, codes, yv, constraint, self.eps, sample_weight=sw,
                                        n_groups=len(self.groups_))
            sol = form.solve("highs" if solver_name == "native" else self.solver, **opts)
            self.rules_ = sol.rules
            self.thresholds_ = [r.cuts for r in sol.rules]
            self.gamma_, self.rho_, self.fitted_rates_ = 0.0, float(np.mean(sol.tpr)), sol.tpr
        self.solution_ = sol
        self.constraint_ = constraint
        return self

    def _check_fitted(self):
        if not hasattr(self, "solution_"):
            raise NotFittedError("ThresholdDebiaser is not fitted; call fit(X, y, sensitive_features) first.")

    def decision_probability(self, X, sensitive_features=None, subgroups=None) -> np.ndarray:
        """``P(y_hat = 1)`` of every row under the randomized rule (fully vectorised)."""
        self._check_fitted()
        n = self._n_rows(X)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        k = self._groups_at_predict(X, sensitive_features, n)
        if getattr(self, "calibrator_", None) is not None:
            f = self.calibrator_.transform(f, k)
        if self.constraint_ == "demographic_parity":
            t = self.thresholds_[k]
            if self.gamma_ > 0:
                return np.clip((f - t) / self.gamma_, 0.0, 1.0)
            return np.where(f > t, 1.0, np.where(f == t, self.tie_probs_[k], 0.0))
        if self.constraint_ == "covariance":
            if subgroups is None and len(self.subgroups_) == 1:
                sub = np.zeros(n, dtype=np.int64)
            else:
                codes, labels = _encode(_group_frame(subgroups, X, n))
                pos = self.subgroups_.get_indexer(labels)
                if (pos < 0).any():
                    raise DataValidationError(f"subgroup(s) {[labels[i] for i in np.flatnonzero(pos < 0)[:5]]} "
                                              "were not seen at fit.")
                sub = pos[codes]
            return np.clip((f - self.thresholds_[sub, k]) / self.gamma_, 0.0, 1.0)
        h = np.empty(n)
        for g, rule in enumerate(self.rules_):
            m = k == g
            h[m] = rule(f[m])
        return h

    def predict_proba(self, X, sensitive_features=None, subgroups=None) -> np.ndarray:
        """Columns ``[P(y_hat=0), P(y_hat=1)]`` of the randomized rule."""
        h = self.decision_probability(X, sensitive_features, subgroups)
        return np.column_stack([1.0 - h, h])

    def predict(self, X, sensitive_features=None, subgroups=None, random_state=None) -> np.ndarray:
        """Sampled 0/1 predictions ``y_hat ~ Bernoulli(h)``; reproducible through ``random_state``
        (the argument, else the estimator's)."""
        h = self.decision_probability(X, sensitive_features, subgroups)
        rng = as_generator(self.random_state if random_state is None else random_state)
        return (rng.random(h.shape[0]) < h).astype(np.int64)


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
    """

    def __init__(self, estimator=None, prefit=False, score_map="auto"):
        self.estimator = estimator
        self.prefit = prefit
        self.score_map = score_map

    def __sklearn_clone__(self):
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, prefit=self.prefit, score_map=self.score_map)

    def fit(self, X, y, sensitive_features=None, sample_weight=None):
        """Estimate the overall and per-group label priors."""
        n = self._n_rows(X)
        yv = np.asarray(y, dtype=float).reshape(-1)
        if yv.shape[0] != n or not np.isin(yv, (0, 1)).all():
            raise DataValidationError("y must be 0/1 labels, one per row of X.")
        w = check_weights(sample_weight, n)
        self.classes_ = np.array([0, 1])
        self.sensitive_columns_ = _sensitive_columns(sensitive_features, X)
        self._fit_estimator(X, yv, None if sample_weight is None else w)
        codes, self.groups_ = _encode(_group_frame(sensitive_features, X, n))
        G = len(self.groups_)
        pk = np.bincount(codes, weights=w * yv, minlength=G) / np.bincount(codes, weights=w, minlength=G)
        eps = 1e-6  # keep log-odds finite for groups with one label only
        self.group_priors_ = np.clip(pk, eps, 1 - eps)
        self.prior_ = float(np.clip(np.average(yv, weights=w), eps, 1 - eps))
        return self

    def predict_proba(self, X, sensitive_features=None) -> np.ndarray:
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

    def predict(self, X, sensitive_features=None) -> np.ndarray:
        """Deterministic predictions ``1{p' > 1/2}``."""
        return (self.predict_proba(X, sensitive_features)[:, 1] > 0.5).astype(np.int64)
