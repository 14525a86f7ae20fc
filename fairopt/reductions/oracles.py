r"""Best-response oracles :math:`\mathrm{Best}_h(\lambda)` for the exponentiated-gradient game.

An oracle is prepared once per game with the moment and the training features
(:meth:`Oracle.prepare`) and then answers :meth:`Oracle.best_response` for multipliers
:math:`\lambda`. It returns a *hypothesis*: an object whose ``predict(X)`` gives real-valued
predictions in ``[0, 1]`` (regression) or labels in ``{0, 1}`` (classification).

Oracles for statistical parity (Agarwal, Dudík & Wu 2019, Sec. 4.4 and App. F):

* :class:`LeastSquaresOracle` -- targets :math:`U_i = \arg\min_u g_\lambda(\underline Y_i, A_i, u)`
  (smallest minimising cell, its midpoint) fitted by weighted least squares;
* :class:`RiskMinimizationOracle` -- the same targets realised as stationary points of a
  two-label weighted risk under the task loss (logistic: weight :math:`\sigma(C(2U_i-1))` on label 1);
* :class:`HingeLPOracle` -- the weighted hinge LP of :mod:`fairopt.formulations.cost_sensitive`.

For bounded group loss, :class:`WeightedLossOracle` (one weighted fit); for classification
moments, :class:`CostSensitiveOracle`; for tests, :class:`FiniteClassOracle` (exact enumeration).
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import issparse as sp_issparse
from sklearn.base import clone, is_classifier

from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.cost_sensitive import WeightedHingeLP
from fairopt.reductions.discretization import prefix_table
from fairopt.reductions.game import keep_training_predictions, training_predictions
from fairopt.reductions.losses import Loss, ScaledLogisticLoss
from fairopt.reductions.problems import CostTable, ExampleCosts, SampleWeights

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.modeling import SolverSpec
    from fairopt.reductions.logistic import WarmLogistic
    from fairopt.reductions.moments import BoundedGroupLoss, Moment, StatisticalParity, _ClassificationMoment

#: slack of the deterministic tie rule for the targets U_i
TIE_TOLERANCE = 1e-12


# ---- hypotheses ----------------------------------------------------------------------------
class ClippedRegressor:
    """A fitted regressor whose predictions are clipped into ``[0, 1]``."""

    def __init__(self, estimator: BaseEstimator) -> None:
        self.estimator = estimator

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        return np.clip(np.asarray(self.estimator.predict(X), dtype=float), 0.0, 1.0)


class LogisticScore:
    """Score ``u = (logit/C + 1)/2`` of a fitted classifier, so that ``sigma(C(2u-1))`` is its probability."""

    def __init__(self, estimator: BaseEstimator, loss: ScaledLogisticLoss) -> None:
        self.estimator = estimator
        self.loss = loss

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        return self.loss.score_from_logit(self.estimator.decision_function(X))


class ClassifierHypothesis:
    """A fitted 0/1 classifier; ``score`` gives its probability of class 1 when available."""

    def __init__(self, estimator: BaseEstimator) -> None:
        self.estimator = estimator

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        return (np.asarray(self.estimator.predict(X)).astype(float) > 0.5).astype(float)

    def score(self, X: ArrayLike) -> NDArray[np.float64]:
        if hasattr(self.estimator, "predict_proba"):
            return np.asarray(self.estimator.predict_proba(X))[:, 1]
        return self.predict(X)


class ConstantHypothesis:
    """Predicts the same value for every row."""

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def predict(self, X: NDArray[Any] | Sequence[Any]) -> NDArray[np.float64]:
        return np.full(len(X), self.value)

    def score(self, X: NDArray[Any] | Sequence[Any]) -> NDArray[np.float64]:
        return self.predict(X)


class IndexedHypothesis:
    """Looks predictions up by row index (``X[:, 0]``); used for finite classes in tests."""

    def __init__(self, values: ArrayLike, index: int | None = None) -> None:
        self.values = np.asarray(values, dtype=float)
        self.index = index

    def predict(self, X: NDArray[Any] | Sequence[Any]) -> NDArray[np.float64]:
        """Look up the stored prediction of each row index in ``X[:, 0]``."""
        return self.values[np.asarray(X).reshape(len(X), -1)[:, 0].astype(np.int64)]


# ---- oracles ---------------------------------------------------------------------------------
class Oracle:
    """Base class. Subclasses set ``problems`` (learner problem classes of
    :mod:`fairopt.reductions.problems` they solve) and ``best_response``."""

    problems: tuple[type, ...] = ()
    #: whether ``best_response`` returns an exact minimiser of the Lagrangian over its class;
    #: fitted estimators minimise a surrogate, so only enumeration is exact
    exact: bool = False
    #: the moment bound by :meth:`prepare`
    moment: Moment

    def prepare(self, moment: Moment, X: ArrayLike) -> Oracle:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        if not issubclass(moment.problem, self.problems):
            raise ConfigError(f"{type(self).__name__} cannot answer best responses for the "
                              f"{moment.name!r} moment (a {moment.problem.__name__} problem); it solves "
                              f"{[p.__name__ for p in self.problems]}.")
        self.moment = moment
        self.X = X
        return self

    def best_response(self, lam: NDArray[np.float64]) -> Any:  # pragma: no cover - interface
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        raise AttributeError("subclasses define best_response")


def sp_targets(moment: StatisticalParity, lam: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Targets :math:`U_i` of the LS/LR heuristics with the deterministic tie rule.

    ``G[y, a, k]`` tabulates :math:`g_\lambda` on cells ``k = 0..N``; the target cell is the smallest
    ``k`` within ``1e-12`` of the minimum and the target is its midpoint ``min(k alpha + alpha/2, 1)``.
    """
    G = prefix_table(moment.cost_sensitive_table(lam))              # (|Y~|, |A|, N+1)
    near = G <= G.min(axis=-1, keepdims=True) + TIE_TOLERANCE
    kstar = np.argmax(near, axis=-1)                                 # first minimising cell
    alpha = moment.grid.alpha
    U = np.minimum(kstar * alpha + 0.5 * alpha, 1.0)
    return U[moment.ycode, moment.group]


class _HeuristicSP(Oracle):
    r"""Shared part of the LS/LR heuristics: targets, optional multi-scale pricing and refinement.

    The heuristics only approximate :math:`\arg\min_h L(h,\lambda)`; two optional extensions
    produce more candidates and return the one with the smallest :math:`L(\cdot,\lambda)` at the
    *given* ``lambda`` (the published targets are always the first candidate):

    ``lambda_scales``
        one fit per scaled multiplier ``s * lambda``;
    ``refine_rounds`` / ``refine_weights``
        proximal refinement: with the current fit ``f``, new targets
        :math:`U_i=\arg\min_{u}\ g_\lambda(\underline Y_i,A_i,u)+\rho\,(u-f(X_i))^2` over cell
        midpoints (smallest cell on ties), refit, repeat ``refine_rounds`` times for each
        :math:`\rho` in ``refine_weights``. Rows whose :math:`g_\lambda` is flat stay near the
        current fit instead of jumping to an arbitrary minimiser.
    """

    problems = (CostTable,)
    moment: StatisticalParity

    def __init__(self, estimator: BaseEstimator, lambda_scales: Sequence[float] = (1.0,), refine_rounds: int = 0,
                 refine_weights: Sequence[float] = (0.3, 1.0, 3.0)) -> None:
        self.estimator = estimator
        self.lambda_scales = lambda_scales
        self.refine_rounds = refine_rounds
        self.refine_weights = refine_weights

    def prepare(self, moment: Moment, X: ArrayLike) -> _HeuristicSP:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        super().prepare(moment, X)
        self.n_fits = 0
        # the risk-minimisation design (X stacked twice) and its labels, built on first use
        self._stacked: tuple | None = None
        return self

    def _fit_targets(self, U: NDArray[np.float64]) -> Any:  # pragma: no cover - interface
        raise AttributeError

    def _train_pred(self, h: Any) -> np.ndarray:
        """``h``'s training predictions, computed once and kept on ``h`` for the pool."""
        pred = training_predictions(h, self.X)
        keep_training_predictions(h, self.X, pred)
        return pred

    def _value(self, h: Any, lam: NDArray[np.float64]) -> float:
        return float(self.moment.lagrangian(*self.moment.stats(self._train_pred(h)), lam))

    def _fit(self, lam: NDArray[np.float64]) -> Any:
        m = self.moment
        self.n_fits += 1
        h = self._fit_targets(sp_targets(m, lam))
        if not self.refine_rounds:
            return h
        G = prefix_table(m.cost_sensitive_table(lam))[m.ycode, m.group]      # (n, N+1)
        N = m.grid.size
        mids = np.minimum(np.arange(N + 1) / N + 0.5 / N, 1.0)
        best, best_value = h, self._value(h, lam)
        for rho in self.refine_weights:
            f = self._train_pred(best)
            for _ in range(int(self.refine_rounds)):
                # G + rho (mids - f)^2, the same operations in place (no temporaries of n x (N+1))
                D = mids[None, :] - f[:, None]
                D *= D
                D *= rho
                D += G
                U = mids[np.argmin(D, axis=1)]
                self.n_fits += 1
                h = self._fit_targets(U)
                f = self._train_pred(h)
                value = float(m.lagrangian(*m.stats(f), lam))
                if value < best_value:
                    best, best_value = h, value
        return best

    def best_response(self, lam: NDArray[np.float64]) -> Any:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        scales = tuple(self.lambda_scales)
        if len(scales) == 1:
            return self._fit(scales[0] * np.asarray(lam))
        best, best_value = None, np.inf
        for s in scales:
            h = self._fit(s * np.asarray(lam))
            value = self._value(h, lam)
            if value < best_value:
                best, best_value = h, value
        return best


class FactoredLeastSquares:
    """Weighted least squares on a fixed design, factored once: ``fit(U)`` costs two products.

    Reproduces :class:`sklearn.linear_model.LinearRegression` (centring for the intercept,
    ``sqrt(w)`` row scaling, minimum-norm solution without numerically null directions)
    through the thin SVD of the centred design,
    so the oracle's ~10 fits per call with the same ``X`` stop refactoring it.
    """

    def __init__(self, estimator: BaseEstimator, X: ArrayLike, sample_weight: ArrayLike | None = None) -> None:
        X = np.asarray(X, dtype=float)
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.estimator, self.fit_intercept = estimator, bool(estimator.fit_intercept)
        self.x_mean = (w @ X) / w.sum() if self.fit_intercept else np.zeros(X.shape[1])
        self.w, self.sw = w, np.sqrt(w)
        Uf, S, Vt = np.linalg.svd((X - self.x_mean) * self.sw[:, None], full_matrices=False)
        # numerically null directions (collinear columns): the pinv cut max(n, d) * eps * s_max,
        # robust to the rounding noise that decides gelsd's eps * s_max cut either way
        keep = S > max(X.shape) * np.finfo(float).eps * (S[0] if S.size else 0.0)
        self.Ut, self.V_over_s = Uf[:, keep].T, Vt[keep].T / S[keep]
        # an unfitted clone, copied per fit: LinearRegression's parameters are immutable scalars, so a
        # shallow copy is a clone without scikit-learn's signature inspection (~0.15 ms a fit)
        self._unfitted = clone(estimator)

    @staticmethod
    def applies(estimator: BaseEstimator) -> bool:
        """Plain ``LinearRegression`` (no ``positive`` constraint) only."""
        from sklearn.linear_model import LinearRegression
        return type(estimator) is LinearRegression and not estimator.get_params().get("positive", False)

    def fit(self, U: ArrayLike) -> ClippedRegressor:
        """Least-squares fit to targets ``U`` from the stored factorisation; a fitted clipped regressor."""
        U = np.asarray(U, dtype=float)
        u_mean = float(self.w @ U / self.w.sum()) if self.fit_intercept else 0.0
        coef = self.V_over_s @ (self.Ut @ ((U - u_mean) * self.sw))
        est = copy.copy(self._unfitted)
        est.coef_, est.intercept_ = coef, u_mean - float(self.x_mean @ coef)
        est.n_features_in_, est.rank_ = coef.shape[0], self.Ut.shape[0]
        return ClippedRegressor(est)


class LeastSquaresOracle(_HeuristicSP):
    """LS heuristic for statistical parity: fit ``estimator`` to the targets ``U_i`` (unit weights,
    or the moment's sample weights). A plain ``LinearRegression`` is factored once per game
    (:class:`FactoredLeastSquares`); other regressors are refitted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import ExponentiatedGradient, StatisticalParity
    >>> rng = np.random.default_rng(0)
    >>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a, 0, 1)
    >>> game = ExponentiatedGradient(StatisticalParity(eps=0.05, grid_size=10),
    ...                              LeastSquaresOracle(LinearRegression()))
    >>> game.run(X, y, a).status
    'converged'
    """

    def prepare(self, moment: Moment, X: ArrayLike) -> LeastSquaresOracle:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        super().prepare(moment, X)
        self._factored = (FactoredLeastSquares(self.estimator, X, moment.sample_weight)
                          if FactoredLeastSquares.applies(self.estimator) and not hasattr(X, "columns")
                          else None)
        return self

    def _fit_targets(self, U: NDArray[np.float64]) -> ClippedRegressor:
        factored: FactoredLeastSquares | None = getattr(self, "_factored", None)
        if factored is not None:
            h = factored.fit(U)
            if isinstance(self.X, np.ndarray) and self.X.dtype == np.float64:
                # the training predictions by LinearRegression's own product, without its validation
                est = h.estimator
                keep_training_predictions(h, self.X, np.clip(self.X @ est.coef_ + est.intercept_, 0.0, 1.0))
            return h
        w = self.moment.sample_weight
        kw = {} if w is None else {"sample_weight": w}
        return ClippedRegressor(clone(self.estimator).fit(self.X, U, **kw))


def two_label_weights(loss: Loss, U: ArrayLike) -> NDArray[np.float64]:
    r"""Weight on label 1 making ``U`` stationary for ``W l(1, u) + (1 - W) l(0, u)`` (F.3).

    With :math:`d_0 = \partial_u\ell(0,U) \ge 0 \ge d_1 = \partial_u\ell(1,U)`,
    :math:`W = d_0/(d_0 - d_1)`; ``1/2`` when both vanish. Square loss gives ``U``; the scaled
    logistic loss gives :math:`\sigma(C(2U-1))`.
    """
    d0 = np.asarray(loss.derivative(0.0, U), dtype=float)
    d1 = np.asarray(loss.derivative(1.0, U), dtype=float)
    den = d0 - d1
    return np.where(den > 0, d0 / np.where(den > 0, den, 1.0), 0.5)


class RiskMinimizationOracle(_HeuristicSP):
    """LR heuristic for statistical parity: two weighted copies of each row with labels 1 and 0.

    For the logistic loss, ``estimator`` must be a classifier exposing ``decision_function``; its
    logit is mapped to the score scale of :class:`~fairopt.reductions.losses.ScaledLogisticLoss`.
    For other losses it is a regressor fitted to labels {0, 1}.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import ExponentiatedGradient
    >>> rng = np.random.default_rng(0)
    >>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a, 0, 1)
    >>> from fairopt.reductions import StatisticalParity
    >>> game = ExponentiatedGradient(StatisticalParity(eps=0.05, grid_size=10),
    ...                              RiskMinimizationOracle(LinearRegression()))
    >>> game.run(X, y, a).status
    'converged'
    """

    def _fit_targets(self, U: NDArray[np.float64]) -> LogisticScore | ClippedRegressor:
        m = self.moment
        w1 = two_label_weights(m.loss_, U)
        stacked = getattr(self, "_stacked", None)
        if stacked is None:           # the same two-label design at every call
            stacked = self._stacked = (_stack_rows(self.X, self.X),
                                       np.concatenate([np.ones(U.size), np.zeros(U.size)]))
        X2, y2 = stacked
        w2 = np.concatenate([w1, 1.0 - w1])
        if m.sample_weight is not None:
            w2 = w2 * np.concatenate([m.sample_weight, m.sample_weight])
        if isinstance(m.loss_, ScaledLogisticLoss):
            if not is_classifier(self.estimator):
                raise ConfigError("the logistic risk-minimisation oracle needs a classifier "
                                  "with decision_function (e.g. LogisticRegression).")
            est = clone(self.estimator).fit(X2, y2, sample_weight=w2)
            h = LogisticScore(est, m.loss_)
            logit = _linear_decision(est, self.X)
            if logit is not None:      # the training scores without a validated predict per fit
                keep_training_predictions(h, self.X, m.loss_.score_from_logit(logit))
            return h
        est = clone(self.estimator).fit(X2, y2, sample_weight=w2)
        return ClippedRegressor(est)


def _linear_decision(est: Any, X: Any) -> np.ndarray | None:
    """``est.decision_function(X)`` for a fitted scikit-learn linear classifier on the validated
    dense training array, by the same product (``X @ coef_.T + intercept_``); None otherwise."""
    from sklearn.linear_model._base import LinearClassifierMixin
    if not (isinstance(X, np.ndarray) and X.dtype == np.float64 and isinstance(est, LinearClassifierMixin)
            and type(est).decision_function is LinearClassifierMixin.decision_function):
        return None
    coef = getattr(est, "coef_", None)
    if coef is None or coef.shape[0] != 1 or sp_issparse(coef):
        return None
    return (X @ coef.T + est.intercept_).reshape(-1)


class WeightedLossOracle(Oracle):
    r"""Bounded group loss best response: one fit with weights :math:`W_i = 1/n + \lambda_{A_i}/n_{A_i}`
    rescaled to sum to ``n`` (the scale of unit sample weights, for which a regularised
    estimator's penalty is calibrated).

    A classifier is fitted to binary labels and read through the logistic score map; any other
    estimator is a regressor whose predictions are clipped into ``[0, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import ExponentiatedGradient
    >>> rng = np.random.default_rng(0)
    >>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a, 0, 1)
    >>> from fairopt.reductions import BoundedGroupLoss
    >>> result = ExponentiatedGradient(BoundedGroupLoss(bound=0.1),
    ...                                WeightedLossOracle(LinearRegression())).run(X, y, a)
    >>> result.status, bool(result.max_violation <= 1e-9)
    ('converged', True)
    """

    problems = (SampleWeights,)
    moment: BoundedGroupLoss

    def __init__(self, estimator: BaseEstimator) -> None:
        self.estimator = estimator

    def best_response(self, lam: NDArray[np.float64]) -> LogisticScore | ClippedRegressor:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        m = self.moment
        W = m.learner_problem(lam).weights
        # the Lagrangian's weights sum to 1 + sum(lam); an estimator's regulariser is calibrated
        # for weights summing to n (unit weights), so rescale to sum n: same minimiser without a
        # regulariser, and the regularisation strength the user chose with one
        total = float(W.sum())
        if total > 0:
            W = W * (m.n / total)
        if is_classifier(self.estimator):
            if not isinstance(m.loss_, ScaledLogisticLoss):
                raise ConfigError("a classifier oracle for bounded group loss needs loss='logistic'.")
            est = clone(self.estimator).fit(self.X, m.y, sample_weight=W)
            return LogisticScore(est, m.loss_)
        est = clone(self.estimator).fit(self.X, m.y, sample_weight=W)
        return ClippedRegressor(est)


def _default_logistic_tol() -> float:
    from sklearn.linear_model import LogisticRegression
    return float(LogisticRegression().get_params()["tol"])


class CostSensitiveOracle(Oracle):
    """Classification moments: weighted classification with label ``1{c_i < 0}`` and weight ``|c_i|``.

    Any scikit-learn classifier accepting ``sample_weight`` is refitted per call. A plain L2
    ``LogisticRegression`` (lbfgs) on a dense array takes the fast path
    :class:`~fairopt.reductions.logistic.WarmLogistic` unless ``warm_start=False``: the same
    objective and solver, the design prepared once, warm starts from earlier answers, and a
    gradient tolerance of ``max(estimator.tol, response_tol)`` when ``estimator.tol`` is
    scikit-learn's default (a tolerance set by the user is kept). The game needs approximate best
    responses only: its gaps are computed from each hypothesis's actual error and constraint
    values, and its stopping certificate is checked on them, so a looser fit costs at most more
    rounds (on Adult, DP at eps = 0.01: 10 calls either way, error 0.16742 at 1e-3 vs 0.16737
    at 1e-4, same DP gap, 2.5x less time).

    Parameters
    ----------
    estimator : classifier
    warm_start : bool, default=True
        Use the fast path where it applies.
    response_tol : float or None, default=1e-3
        Floor of the fast path's gradient tolerance when the estimator keeps scikit-learn's
        default ``tol`` (``None``: always the estimator's ``tol``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairopt.reductions import DemographicParity, ExponentiatedGradient
    >>> rng = np.random.default_rng(0)
    >>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> game = ExponentiatedGradient(DemographicParity(eps=0.02),
    ...                              CostSensitiveOracle(LogisticRegression()), max_iter=30)
    >>> game.run(X, y, a).status
    'converged'
    """

    problems = (ExampleCosts,)
    moment: _ClassificationMoment

    def __init__(self, estimator: BaseEstimator, warm_start: bool = True, response_tol: float | None = 1e-3) -> None:
        self.estimator = estimator
        self.warm_start = warm_start
        self.response_tol = response_tol

    def prepare(self, moment: Moment, X: ArrayLike) -> CostSensitiveOracle:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        from fairopt.reductions.logistic import WarmLogistic
        super().prepare(moment, X)
        self._warm: WarmLogistic | None = None
        if self.warm_start and WarmLogistic.applies(self.estimator, X):
            tol = float(self.estimator.get_params()["tol"])
            # the floor applies to scikit-learn's default tolerance only: a tolerance the user
            # chose is kept as given
            if self.response_tol is not None and tol == _default_logistic_tol():
                tol = max(tol, float(self.response_tol))
            self._warm = WarmLogistic(self.estimator, X, tol)
        return self

    def best_response(self, lam: NDArray[np.float64]) -> ConstantHypothesis | ClassifierHypothesis:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        problem = self.moment.learner_problem(lam)
        labels, w = problem.labels(), problem.weights()
        if labels.min() == labels.max():
            return ConstantHypothesis(float(labels[0]))
        warm: WarmLogistic | None = getattr(self, "_warm", None)
        if warm is not None:
            h = ClassifierHypothesis(warm.fit(labels, w))
            # the fit's training scores give its training predictions (the estimator's predict)
            scores = warm.last_scores
            assert scores is not None  # set by every fit
            return keep_training_predictions(h, self.X, (scores > 0).astype(float))
        est = clone(self.estimator).fit(self.X, labels, sample_weight=w)
        return ClassifierHypothesis(est)


class FiniteClassOracle(Oracle):
    """Exact best response over a finite class given by its training predictions ``(K, n)``.

    Ties go to the smallest index. Hypotheses are :class:`IndexedHypothesis` objects, so the game
    must be run with ``X = arange(n)[:, None]``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions import StatisticalParity
    >>> y = np.array([0.2, 0.8, 0.5, 0.1])
    >>> moment = StatisticalParity(eps=0.05, grid_size=4).fit(y, ["a", "a", "b", "b"])
    >>> oracle = FiniteClassOracle([y, np.full(4, 0.5)]).prepare(moment, np.zeros((4, 1)))
    >>> oracle.best_response(np.zeros(moment.n_rows)).index     # no penalty: the exact predictor
    0
    """

    problems = (CostTable, SampleWeights, ExampleCosts)
    exact = True

    def __init__(self, predictions: ArrayLike) -> None:
        self.predictions = np.asarray(predictions, dtype=float)

    def prepare(self, moment: Moment, X: ArrayLike) -> FiniteClassOracle:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        super().prepare(moment, X)
        stats = [moment.stats(p) for p in self.predictions]
        self.costs = np.array([s[0] for s in stats])
        self.G = np.vstack([s[1] for s in stats])
        return self

    def best_response(self, lam: NDArray[np.float64]) -> IndexedHypothesis:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        k = int(np.argmin(self.moment.lagrangian(self.costs, self.G, lam)))
        return IndexedHypothesis(self.predictions[k], index=k)


class LinearScore:
    """Linear score ``clip(<beta, [scaled x, 1]>, 0, 1)`` returned by :class:`HingeLPOracle`."""

    def __init__(self, beta: ArrayLike, lo: NDArray[np.float64], scale: NDArray[np.float64]) -> None:
        self.beta = np.asarray(beta, dtype=float)
        self.lo, self.scale = lo, scale

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        Xs = (np.asarray(X, dtype=float) - self.lo) / self.scale
        return np.clip(Xs @ self.beta[:-1] + self.beta[-1], 0.0, 1.0)


class HingeLPOracle(Oracle):
    """Cost-sensitive oracle for statistical parity: the weighted hinge LP on ``nN`` augmented rows.

    Features are min-max scaled to ``[0, 1]`` on the training data (the box on ``beta`` makes the
    oracle scale-dependent) and a constant column is appended. Row ``r = (i, j)`` carries cost
    :math:`C_{i,z_j}` from Eq. (12): weight ``|C|``, label ``+1`` iff ``C <= 0``.

    Parameters
    ----------
    solver : str or SolverSpec, optional
        Any LP back end of :mod:`fairopt.modeling` (a ``SolverSpec`` carries time limit and options).
    form : {"auto", "primal", "dual"}, default="auto"
    warm_start : bool, default=True
        Keep the compiled dual model and update only bounds and costs between calls.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions import ExponentiatedGradient, StatisticalParity
    >>> rng = np.random.default_rng(0)
    >>> X, a = rng.normal(size=(60, 2)), rng.integers(0, 2, 60)
    >>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a, 0, 1)
    >>> game = ExponentiatedGradient(StatisticalParity(eps=0.1, grid_size=4), HingeLPOracle(),
    ...                              max_iter=10)
    >>> game.run(X, y, a).status
    'converged'
    """

    problems = (CostTable,)
    moment: StatisticalParity

    def __init__(self, solver: str | SolverSpec | Mapping[str, Any] | None = None,
                 form: Literal["auto", "primal", "dual"] = "auto", warm_start: bool = True) -> None:
        self.solver = solver
        self.form = form
        self.warm_start = warm_start

    def prepare(self, moment: Moment, X: ArrayLike) -> HingeLPOracle:
        """Bind the oracle to a fitted moment and the training features.

        Parameters
        ----------
        moment : Moment
            The fitted constraint moment whose learner problems this oracle answers.
        X : array-like of shape (n_samples, n_features)
            Training features.

        Returns
        -------
        self
            The prepared oracle.

        Raises
        ------
        ConfigError
            If the oracle cannot solve the moment's learner problem.
        """
        super().prepare(moment, X)
        Xd = np.asarray(X, dtype=float)
        if Xd.ndim != 2 or not np.all(np.isfinite(Xd)):
            raise DataValidationError("the hinge LP oracle needs a finite numeric feature matrix.")
        self.lo = Xd.min(axis=0)
        span = Xd.max(axis=0) - self.lo
        self.scale = np.where(span > 0, span, 1.0)
        Xs = np.hstack([(Xd - self.lo) / self.scale, np.ones((Xd.shape[0], 1))])
        N = self.moment.grid.size
        self._features = np.repeat(Xs, N, axis=0)                    # row r = i * N + j
        self._z = np.tile(self.moment.grid.grid, Xd.shape[0])
        self._lp: WeightedHingeLP | None = None
        self.solve_seconds: list[float] = []
        return self

    def augmented_costs(self, lam: NDArray[np.float64]) -> NDArray[np.float64]:
        """:math:`C_{i,z}` for all augmented rows, flattened with ``r = i N + j``."""
        return self.moment.learner_problem(lam).row_costs().ravel()

    def hinge_lp(self, lam: NDArray[np.float64]) -> WeightedHingeLP:
        """The weighted hinge LP of the best response to ``lam`` (built, not solved): the LP this
        oracle solves, for inspection and export.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        WeightedHingeLP
            Over the prepared augmented rows ``r = i N + j``, costs ``|C|`` and labels ``sign(-C)``.
        """
        C = self.augmented_costs(lam)
        return WeightedHingeLP(self._features, self._z, np.abs(C), np.where(C <= 0, 1.0, -1.0),
                               self.moment.grid.alpha, form=self.form)

    def best_response(self, lam: NDArray[np.float64]) -> LinearScore:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers of the moment's rows.

        Returns
        -------
        hypothesis
            A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).
        """
        if self._lp is None:
            self._lp = self.hinge_lp(lam)
        else:
            C = self.augmented_costs(lam)
            self._lp.set_costs(np.abs(C), np.where(C <= 0, 1.0, -1.0))
        sol = self._lp.solve(self.solver, warm_start=self.warm_start)
        self.solve_seconds.append(sol.solve_seconds)
        self.last_solution = sol
        return LinearScore(sol.beta, self.lo, self.scale)


def _stack_rows(A: Any, B: Any) -> Any:
    """Vertically stack two feature matrices (dense arrays, sparse matrices or DataFrames)."""
    import scipy.sparse as sp
    if sp.issparse(A):
        return sp.vstack([A, B]).tocsr()
    if hasattr(A, "iloc"):
        import pandas as pd
        return pd.concat([A, B], ignore_index=True)
    return np.vstack([np.asarray(A), np.asarray(B)])


def make_oracle(moment: Moment, estimator: BaseEstimator | Oracle | str, oracle: str = "auto",
                **heuristic_options: Any) -> Oracle:
    """Pick the oracle for ``moment`` around ``estimator`` (or return ``estimator`` if it is one).

    ``oracle`` is ``"auto"``, ``"least_squares"``, ``"risk_minimization"`` or ``"hinge_lp"``.
    ``"auto"`` uses risk minimisation for a classifier under the logistic loss, least squares
    otherwise (statistical parity), the weighted-loss oracle for bounded group loss and the
    cost-sensitive classification oracle for classification moments. ``heuristic_options``
    (``lambda_scales``, ``refine_rounds``, ``refine_weights``) go to the LS/LR heuristics.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression, LogisticRegression
    >>> from fairopt.reductions import DemographicParity, StatisticalParity
    >>> type(make_oracle(StatisticalParity(), LinearRegression())).__name__
    'LeastSquaresOracle'
    >>> type(make_oracle(DemographicParity(), LogisticRegression())).__name__
    'CostSensitiveOracle'
    """
    if isinstance(estimator, Oracle):
        return estimator
    if oracle == "hinge_lp" or estimator == "hinge_lp":
        return HingeLPOracle()
    if issubclass(moment.problem, SampleWeights):
        return WeightedLossOracle(estimator)
    if issubclass(moment.problem, ExampleCosts):
        return CostSensitiveOracle(estimator)
    if oracle == "least_squares":
        return LeastSquaresOracle(estimator, **heuristic_options)
    if oracle == "risk_minimization":
        return RiskMinimizationOracle(estimator, **heuristic_options)
    if oracle != "auto":
        raise ConfigError(f"oracle={oracle!r} is not known; use 'auto', 'least_squares', "
                          "'risk_minimization' or 'hinge_lp'.")
    loss = getattr(moment, "loss_", getattr(moment, "loss", None))
    if isinstance(loss, ScaledLogisticLoss) and is_classifier(estimator):
        return RiskMinimizationOracle(estimator, **heuristic_options)
    return LeastSquaresOracle(estimator, **heuristic_options)
