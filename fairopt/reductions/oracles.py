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

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone, is_classifier

from fairopt._docstrings import fill_doc
from fairopt.errors import ConfigError
from fairopt.reductions._sp_oracles import TIE_TOLERANCE as TIE_TOLERANCE
from fairopt.reductions._sp_oracles import FactoredLeastSquares as FactoredLeastSquares
from fairopt.reductions._sp_oracles import HingeLPOracle as HingeLPOracle
from fairopt.reductions._sp_oracles import LeastSquaresOracle as LeastSquaresOracle
from fairopt.reductions._sp_oracles import RiskMinimizationOracle as RiskMinimizationOracle
from fairopt.reductions._sp_oracles import _HeuristicSP as _HeuristicSP
from fairopt.reductions._sp_oracles import sp_targets as sp_targets
from fairopt.reductions._sp_oracles import two_label_weights as two_label_weights
from fairopt.reductions.discretization import prefix_table as prefix_table
from fairopt.reductions.game import keep_training_predictions
from fairopt.reductions.losses import ScaledLogisticLoss
from fairopt.reductions.oracle_base import ClassifierHypothesis as ClassifierHypothesis
from fairopt.reductions.oracle_base import ClippedRegressor as ClippedRegressor
from fairopt.reductions.oracle_base import ConstantHypothesis as ConstantHypothesis
from fairopt.reductions.oracle_base import IndexedHypothesis as IndexedHypothesis
from fairopt.reductions.oracle_base import LinearScore as LinearScore
from fairopt.reductions.oracle_base import LogisticScore as LogisticScore
from fairopt.reductions.oracle_base import Oracle as Oracle
from fairopt.reductions.problems import CostTable, ExampleCosts, SampleWeights

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.reductions.logistic import WarmLogistic
    from fairopt.reductions.moments import BoundedGroupLoss, Moment, _ClassificationMoment


@fill_doc
class WeightedLossOracle(Oracle):
    r"""Bounded group loss best response: one fit with weights :math:`W_i = 1/n + \lambda_{A_i}/n_{A_i}`
    rescaled to sum to ``n`` (the scale of unit sample weights, for which a regularised
    estimator's penalty is calibrated).

    A classifier is fitted to binary labels and read through the logistic score map; any other
    estimator is a regressor whose predictions are clipped into ``[0, 1]``.

    Examples
    --------
    {example_regression_data}
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
    >>> group = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(size=400), group + rng.normal(size=400)])
    >>> y = (X.sum(axis=1) > 0.5).astype(int)
    >>> game = ExponentiatedGradient(DemographicParity(eps=0.02),
    ...                              CostSensitiveOracle(LogisticRegression()), max_iter=30)
    >>> result = game.run(X, y, group)
    >>> result.status, bool(result.max_violation <= 1e-6)
    ('converged', True)
    """

    problems = (ExampleCosts,)
    moment: _ClassificationMoment

    def __init__(self, estimator: BaseEstimator, warm_start: bool = True, response_tol: float | None = 1e-3) -> None:
        self.estimator = estimator
        self.warm_start = warm_start
        self.response_tol = response_tol

    def prepare(self, moment: Moment, X: ArrayLike) -> CostSensitiveOracle:
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
        super().prepare(moment, X)
        stats = [moment.stats(p) for p in self.predictions]
        self.costs = np.array([s[0] for s in stats])
        self.G = np.vstack([s[1] for s in stats])
        return self

    def best_response(self, lam: NDArray[np.float64]) -> IndexedHypothesis:
        k = int(np.argmin(self.moment.lagrangian(self.costs, self.G, lam)))
        return IndexedHypothesis(self.predictions[k], index=k)

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
