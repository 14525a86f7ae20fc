r"""Best-response oracles for statistical parity (Agarwal, Dudik & Wu 2019, Sec. 4.4 and App. F).

The LS and LR heuristics fit an estimator to the targets :math:`U_i`; the hinge-LP oracle solves
the weighted hinge LP of :mod:`fairopt.formulations.cost_sensitive`. Public names are re-exported
by :mod:`fairopt.reductions.oracles`.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import issparse as sp_issparse
from sklearn.base import clone, is_classifier

from fairopt._docstrings import fill_doc
from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.cost_sensitive import WeightedHingeLP
from fairopt.reductions.discretization import prefix_table
from fairopt.reductions.game import keep_training_predictions, training_predictions
from fairopt.reductions.losses import Loss, ScaledLogisticLoss
from fairopt.reductions.oracle_base import ClippedRegressor, LinearScore, LogisticScore, Oracle
from fairopt.reductions.problems import CostTable

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.modeling import SolverSpec
    from fairopt.reductions.moments import Moment, StatisticalParity

#: slack of the deterministic tie rule for the targets U_i
TIE_TOLERANCE = 1e-12

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
    out: NDArray[np.float64] = U[moment.ycode, moment.group]
    return out


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
        super().prepare(moment, X)
        self.n_fits = 0
        # the risk-minimisation design (X stacked twice) and its labels, built on first use
        self._stacked: tuple[Any, ...] | None = None
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


@fill_doc
class LeastSquaresOracle(_HeuristicSP):
    """LS heuristic for statistical parity: fit ``estimator`` to the targets ``U_i`` (unit weights,
    or the moment's sample weights). A plain ``LinearRegression`` is factored once per game
    (:class:`FactoredLeastSquares`); other regressors are refitted.

    Examples
    --------
    {example_regression_data}
    >>> game = ExponentiatedGradient(StatisticalParity(eps=0.05, grid_size=10),
    ...                              LeastSquaresOracle(LinearRegression()))
    >>> game.run(X, y, a).status
    'converged'
    """

    def prepare(self, moment: Moment, X: ArrayLike) -> LeastSquaresOracle:
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


@fill_doc
class RiskMinimizationOracle(_HeuristicSP):
    """LR heuristic for statistical parity: two weighted copies of each row with labels 1 and 0.

    For the logistic loss, ``estimator`` must be a classifier exposing ``decision_function``; its
    logit is mapped to the score scale of :class:`~fairopt.reductions.losses.ScaledLogisticLoss`.
    For other losses it is a regressor fitted to labels {0, 1}.

    Examples
    --------
    {example_regression_data}
    >>> from sklearn.linear_model import LogisticRegression
    >>> moment = StatisticalParity(eps=0.05, grid_size=10, loss="logistic")   # the classifier path
    >>> result = ExponentiatedGradient(moment, RiskMinimizationOracle(LogisticRegression())).run(X, y, a)
    >>> result.status, bool(result.max_violation <= 1e-9)
    ('converged', True)
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
    out: np.ndarray | None = (X @ coef.T + est.intercept_).reshape(-1)
    return out

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

    @fill_doc
    def hinge_lp(self, lam: NDArray[np.float64]) -> WeightedHingeLP:
        """The weighted hinge LP of the best response to ``lam`` (built, not solved): the LP this
        oracle solves, for inspection and export.

        Parameters
        ----------
        {lam}

        Returns
        -------
        WeightedHingeLP
            Over the prepared augmented rows ``r = i N + j``, costs ``|C|`` and labels ``sign(-C)``.
        """
        C = self.augmented_costs(lam)
        return WeightedHingeLP(self._features, self._z, np.abs(C), np.where(C <= 0, 1.0, -1.0),
                               self.moment.grid.alpha, form=self.form)

    def best_response(self, lam: NDArray[np.float64]) -> LinearScore:
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
