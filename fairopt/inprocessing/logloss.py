"""Fair robust log-loss classifier (Rezaei, Fathony, Memarrast & Ziebart, AAAI 2020).

A scikit-learn estimator over
:class:`~fairopt.formulations.constrained_classification.logloss.FairLogLoss`.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from fairopt._param_validation import Interval, StrOptions
from fairopt.criteria import accepted_names
from fairopt.errors import DataValidationError
from fairopt.formulations.constrained_classification.logloss import FairLogLoss
from fairopt.formulations.constrained_classification.logloss_fairness import CONSTRAINTS
from fairopt.inprocessing._certify import Holdout
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import parse_solver
from fairopt.validation import (
    RANDOM_STATE,
    as_1d,
    check_groups,
    check_numeric_columns,
    check_unique_columns,
    check_weights,
    check_X,
    validate_params,
)

if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.utils import Tags


# Features go through scikit-learn's validate_data (feature counts and names as its checks
# expect); labels follow scikit-learn's classifier conventions (any two labels, ``classes_``);
# groups go through fairopt.validation like every fairopt estimator.
def _check_X(X: ArrayLike | None, estimator: BaseEstimator, reset: bool) -> NDArray[np.float64] | sp.csr_matrix:
    if X is None:
        raise DataValidationError(f"{type(estimator).__name__}: X is required but was None.")
    from scipy.sparse import issparse
    check_unique_columns(X, f"{type(estimator).__name__}: X")
    if isinstance(X, pd.DataFrame):
        check_numeric_columns(X, f"{type(estimator).__name__}: X")
    if not issparse(X):  # NaN: fairopt's typed error, not scikit-learn's ValueError
        X = check_X(X, type(estimator).__name__)
    return validate_data(estimator, X, reset=reset, accept_sparse="csr", dtype=np.float64)


def _check_binary_target(y: Any, n: int) -> tuple[NDArray[Any], NDArray[np.intp]]:
    if y is None:
        raise DataValidationError("FairLogLossClassifier requires y to be passed, but the target y is None.")
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise DataValidationError(f"y must hold one label per row of X ({n}), got {y.shape[0]}.")
    kind = type_of_target(y)
    if kind == "continuous":
        raise DataValidationError("Unknown label type: continuous; FairLogLossClassifier needs two "
                                  "class labels.")
    if kind not in ("binary", "multiclass"):
        raise DataValidationError(f"Unknown label type: {kind}; pass one class label per row.")
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size > 2:
        raise DataValidationError(
            "Only binary classification is supported. The type of the target is multiclass "
            f"({classes.size} classes).")
    if classes.size < 2:
        raise DataValidationError(
            f"FairLogLossClassifier needs two classes in y, got 1 class ({classes.tolist()}); the "
            "second in sorted order is the favourable outcome.")
    return classes, codes


class FairLogLossClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Fair robust log-loss classifier: truncated logistic regression that is exactly fair on
    the training sample.

    The predictor ℙ minimises the worst-case log loss against an approximator ℚ that matches
    the training feature moments, subject to a group-fairness equality on ℙ (Eq. 9). It is a
    logistic model whose probabilities are capped for one group and floored for the other
    (Eq. 11), fitted by L-BFGS on θ with the exact multiplier λ*(θ).

    Parameters
    ----------
    constraint : {"demographic_parity", "equal_opportunity", "equalized_odds"} or None
        Equality imposed on the training predictions ℙ:

        - ``"demographic_parity"``: equal mean ℙ(ŷ=1) in every protected group (two groups, or
          K > 2 groups with ``solver="cvxpy"``: each group equal to the overall mean);
        - ``"equal_opportunity"``: equal mean ℙ(ŷ=1) among rows with ``y = 1``;
        - ``"equalized_odds"``: equal opportunity and equal mean ℙ(ŷ=1) among ``y = 0``;
        - ``None``: no constraint (L2 logistic regression; ``sensitive_features`` optional).
    C : float, default 0.01
        L2 weight on the mean-loss scale, ``J = mean ℓ + (C/2)‖w‖²`` (larger = stronger
        regularisation; scikit-learn's ``LogisticRegression(C=1/(n·C))`` is the same model
        without constraint). The intercept is not penalised.
    solver : str, SolverSpec, dict or None, default None
        ``"native"`` (L-BFGS, exact λ*, Newton polish on the kink), ``"scipy"``,
        ``"cvxpy[:CLARABEL|SCS]"`` (joint exponential-cone form; required for K > 2 groups) or
        ``"pyomo[:ipopt]"`` (needs Ipopt).
    fit_intercept : bool, default True
        Fit an unpenalised intercept.
    max_iter : int, default 1000
        Iteration limit of the solver.
    tol : float, default 1e-8
        Saddle residual (stationarity and training fairness gap) at which the fit is optimal.
    confidence : float in (0, 1) or None, default None
        Certify the fairness gap on the population: a share ``certify_size`` of the rows
        (stratified by group and, for the error-rate criteria, by label) is held out, the exactly
        fair rule is fitted on the rest, and a Hoeffding bound on the held-out rows gives
        ``certified_eps_``: with probability at least ``confidence`` the population gap of
        ``predict_proba`` is at most it (see :doc:`/guarantees`). The gap is the range of the
        group rates for two groups, each group's distance to the pooled rate for more. The
        training gap is already 0, so nothing is tightened; ``certified_eps_`` is what the
        held-out sample supports.
    certify_size : float in (0, 1), default 0.3
        Share of the rows held out to certify the rule when ``confidence`` is set.
    random_state : int, RandomState, Generator or None, default None
        Seed of the certification split (used only with ``confidence``).

    Attributes
    ----------
    coef_ : ndarray (1, n_features)
        θ without the intercept (φ(x, ŷ) = ŷ·x).
    intercept_ : ndarray (1,)
    lambda_ : ndarray (n_constraint_rows,)
        The fairness multipliers λ in the paper's scale (one per row: one for DP and EOpp,
        ``[y=1, y=0]`` for EOdd, ``K − 1`` for K-group DP). λ > 0 caps the second group
        (``groups_[1]``) and floors the first.
    n_iter_ : int
    classes_ : ndarray (2,)
        ``classes_[1]`` is the favourable outcome ``y = 1``.
    groups_ : pandas.Index
        Protected groups in sorted order (code ``k`` is ``groups_[k]``).
    solution_ : FairLogLossSolution
        The solved model (status, multipliers, training ℙ and ℚ, saddle residual).
    status_ : str
    n_features_in_ : int
    eps_ : float
        Training tolerance of the fairness equality (0: exact on the fitting rows).
    guarantee_ : Certificate or None
        With ``confidence``: the held-out gap, the margin and the method
        (:class:`~fairopt.guarantees.Certificate`); None otherwise.
    certified_eps_ : float
        With ``confidence``: population bound on the fairness gap at that confidence.

    Notes
    -----
    ``predict`` thresholds ℙ(ŷ=1|x,a) at ½; ``predict_proba`` is the fair probabilistic
    prediction. For ``equal_opportunity`` / ``equalized_odds`` the test-time rule mixes the two
    label-conditioned predictors (Eqs. 14–16). Fairness holds exactly on the training sample for
    ℙ, and approximately on new data.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 300)
    >>> X = np.column_stack([rng.normal(size=300), group + rng.normal(size=300)])
    >>> y = (X.sum(axis=1) > 0.5).astype(int)
    >>> clf = FairLogLossClassifier(constraint="demographic_parity", C=0.01)
    >>> clf = clf.fit(X, y, sensitive_features=group)
    >>> clf.predict_proba(X, group).shape
    (300, 2)
    >>> bool(np.abs(clf.solution_.gaps).max() < 1e-8)
    True
    """

    #: the multipliers, set by ``fit`` (read back by the group encoder at predict time)
    lambda_: np.ndarray

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "constraint": [StrOptions(accepted_names(CONSTRAINTS)), None],
        "C": [Interval(Real, 0, None, closed="left")],
        "solver": [None, str, SolverSpec, dict],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
        "certify_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, constraint: str | None = "demographic_parity", C: float = 0.01,
                 solver: str | SolverSpec | Mapping[str, Any] | None = None, fit_intercept: bool = True,
                 max_iter: int = 1000, tol: float = 1e-8, confidence: float | None = None,
                 certify_size: float = 0.3,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None) -> None:
        self.constraint = constraint
        self.C = C
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.confidence = confidence
        self.certify_size = certify_size
        self.random_state = random_state

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        validate_params(self)   # _parameter_constraints (non-finite numbers refused too)

    def _encode_groups(self, sensitive_features: ArrayLike | None, X: ArrayLike, n: int,
                       fitting: bool) -> NDArray[np.int64]:
        """Group codes (``fairopt.validation``): one attribute, several (intersectional
        groups) or column names of ``X``; ``None`` only where no group is needed."""
        needs = self.constraint is not None if fitting else self.lambda_.size > 0
        if sensitive_features is None and not needs:
            return np.zeros(n, dtype=np.int64)
        name = f"{type(self).__name__}: sensitive_features"
        if fitting:
            grp = check_groups(sensitive_features, n, X=X, min_groups=2 if needs else 1, name=name)
            self.group_index_, self.groups_ = grp, grp.labels
            return np.asarray(grp.codes, dtype=np.int64)
        if getattr(self, "group_index_", None) is None:
            return np.zeros(n, dtype=np.int64)
        return np.asarray(self.group_index_.encode(sensitive_features, n, X=X, name=name), dtype=np.int64)

    def fit(self, X: ArrayLike, y: ArrayLike, sensitive_features: ArrayLike | None = None, *,
            x0: ArrayLike | None = None) -> FairLogLossClassifier:
        """Fit θ and λ on the training sample.

        Parameters
        ----------
        X : array-like or sparse matrix (n_samples, n_features)
            Features; include the protected attribute to follow the paper.
        y : array-like (n_samples,)
            Two classes; ``classes_[1]`` is the favourable outcome.
        sensitive_features : array-like, DataFrame or column name(s) of X
            Protected group of each row (needed unless ``constraint=None``); several columns
            define intersectional groups (demographic parity with ``solver="cvxpy"``).
        x0 : array, optional
            Warm start for θ (coefficients, then the intercept), e.g. from a neighbouring ``C``.

        Returns
        -------
        self

        Raises
        ------
        DataValidationError
            Malformed inputs, one class, an empty compared group.
        ConfigError
            Unknown parameters, or K > 2 groups with a solver other than cvxpy/pyomo.
        SolverError
            The solver failed without a point. A fit that stops at a limit or short of ``tol``
            warns (``RuntimeWarning``) and keeps the point; ``status_`` says which.
        """
        self._check_params()
        for attr in ("coef_", "intercept_", "lambda_", "n_iter_", "solution_", "status_", "groups_",
                     "group_index_", "certified_eps_"):
            self.__dict__.pop(attr, None)
        X_in = X
        X = _check_X(X, self, reset=True)
        self.classes_, y01 = _check_binary_target(y, X.shape[0])
        group = self._encode_groups(sensitive_features, X_in, X.shape[0], fitting=True)
        n_groups = len(self.groups_) if hasattr(self, "groups_") else 1
        holdout = None
        if self.confidence is not None:
            if self.constraint is None:
                raise DataValidationError("FairLogLossClassifier.fit: confidence certifies a fairness constraint, and "
                                          "constraint=None has none; set a constraint or confidence=None.")
            holdout = Holdout(self, y01, self.group_index_, None, "FairLogLossClassifier.fit",
                              kind="range" if n_groups == 2 else "deviation")
            X_all, y_all, group_all = X, y01, group
            X, y01, group = X[holdout.fit], y01[holdout.fit], group[holdout.fit]
        model = FairLogLoss(X, y01, group, self.constraint, float(self.C), self.fit_intercept,
                            n_groups=max(n_groups, 2 if self.constraint is not None else 1))
        sol = model.solve(parse_solver(self.solver), tol=float(self.tol), max_iter=int(self.max_iter), x0=x0)
        if not sol.is_optimal:
            assert sol.gaps is not None  # FairLogLoss.solve always reports the training gaps
            warnings.warn(f"FairLogLossClassifier: the {sol.backend} solver ended with status "
                          f"{sol.status} (saddle residual {sol.kkt:.3g}, training gaps "
                          f"{np.abs(sol.gaps).max(initial=0):.3g}); raise max_iter or loosen tol.",
                          RuntimeWarning, stacklevel=2)
        theta = sol.primal["theta"]
        self.coef_ = (theta[:-1] if self.fit_intercept else theta).reshape(1, -1).copy()
        self.intercept_ = np.array([theta[-1] if self.fit_intercept else 0.0])
        self.lambda_ = np.asarray(sol.lam, dtype=float)
        self.n_iter_ = int(sol.iterations or 0)
        self.solution_ = sol
        self.status_ = str(sol.status)
        self.eps_, self.guarantee_ = 0.0, None
        if holdout is not None:
            assert sol.rule is not None  # FairLogLoss.solve always attaches the rule
            proba = sol.rule.proba(X_all[holdout.cert], group_all[holdout.cert])[0]
            self.guarantee_ = holdout.certify(proba, y_all, self.group_index_)
            self.certified_eps_ = self.guarantee_.certified_eps
        return self

    def _proba(self, X: ArrayLike, sensitive_features: ArrayLike | None) -> tuple[
            NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None, NDArray[np.bool_]]:
        check_is_fitted(self, "solution_")
        X_in = X
        X = _check_X(X, self, reset=False)
        group = self._encode_groups(sensitive_features, X_in, X.shape[0], fitting=False)
        rule = self.solution_.rule
        assert rule is not None  # FairLogLoss.solve always attaches the rule
        return rule.proba(X, group)

    def predict_proba(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """ℙ(ŷ|x, a): Eq. 11 (demographic parity), the Eqs. 14–16 mixture (y-conditional
        constraints) or the logistic probability (no constraint); columns follow ``classes_``."""
        P, P_bar, _, _ = self._proba(X, sensitive_features)
        return np.column_stack([P_bar, P])

    def decision_function(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """``log ℙ(ŷ=1|x,a) − log ℙ(ŷ=0|x,a)``; positive means ``classes_[1]``."""
        P, P_bar, _, _ = self._proba(X, sensitive_features)
        with np.errstate(divide="ignore"):
            return np.log(P) - np.log(P_bar)

    def predict(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> np.ndarray:
        """``classes_[1]`` where ℙ(ŷ=1|x,a) > ½, else ``classes_[0]``."""
        P, P_bar, _, _ = self._proba(X, sensitive_features)
        out: np.ndarray = self.classes_[(P > P_bar).astype(int)]
        return out

    def mixture_weights(self, X: ArrayLike, sensitive_features: ArrayLike | None = None) -> tuple[
            NDArray[np.float64] | None, NDArray[np.bool_]]:
        """For y-conditional constraints: ``(r, guarded)``, the Eq. 16 estimate of P(y=1|x,a)
        and where its denominator vanished (``r = P_e`` there); ``(None, …)`` otherwise."""
        _, _, r, guarded = self._proba(X, sensitive_features)
        return r, guarded

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
              sensitive_features: ArrayLike | None = None) -> float:
        """Accuracy of :meth:`predict` (groups needed unless ``constraint=None``).

        ``y`` must hold labels of ``classes_``; ``sample_weight`` must be finite and >= 0.
        """
        pred = self.predict(X, sensitive_features)
        what = f"{type(self).__name__}.score"
        y = as_1d(y, f"{what}: y", pred.shape[0])
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise DataValidationError(f"{what}: y has labels {pd.unique(y[unknown])[:5].tolist()} not seen at fit "
                                      f"(classes_ = {self.classes_.tolist()}), first at position "
                                      f"{int(np.argmax(unknown))}; pass labels of the fitted classes.")
        w = check_weights(sample_weight, pred.shape[0], f"{what}: sample_weight")
        return float(np.average(pred == y, weights=w))


__all__ = ["FairLogLossClassifier"]

