"""Fair regression by reductions (Agarwal, Dudík & Wu 2019): :class:`FairRegressor`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression, LogisticRegression

from fairopt._docstrings import fill_doc
from fairopt._param_validation import HasMethods, Interval, StrOptions
from fairopt.criteria import accepted_names, criterion
from fairopt.errors import DataValidationError, InfeasibleError, SolverError
from fairopt.formulations.cost_sensitive import min_max_group_loss
from fairopt.guarantees import no_guarantee
from fairopt.inprocessing._mixture import (
    RandomizedMixture,
    check_eps,
    check_fit_inputs,
    check_lambda_scales,
    moment_from,
    warn_if_not_optimal,
)
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import resolve_solver
from fairopt.reductions import BoundedGroupLoss, ExponentiatedGradient, HingeLPOracle, StatisticalParity, make_oracle
from fairopt.reductions.evaluation import mixture_sp_disparity
from fairopt.reductions.losses import Loss, ScaledLogisticLoss, get_loss
from fairopt.reductions.moments import Moment
from fairopt.reductions.oracles import Oracle
from fairopt.reductions.problems import CostTable
from fairopt.validation import RANDOM_STATE, check_groups, check_target, check_weights, validate_params

if TYPE_CHECKING:
    from fairopt._progress import Progress
    from fairopt.reductions.game import GameResult

__all__ = ["REGRESSION_CONSTRAINTS", "FairRegressor"]

REGRESSION_CONSTRAINTS = ("statistical_parity", "bounded_group_loss")

#: attributes set by :meth:`FairRegressor.fit` (all removed when a fit fails)
_FITTED_ATTRIBUTES = ("result_", "moment_", "groups_", "constraint_names_", "n_oracle_calls_",
                      "n_iter_", "gap_", "lambda_", "status_", "predictors_", "weights_")


def _fmt(value: Any) -> str:
    return f"{float(value):.6g}" if np.ndim(value) == 0 and not isinstance(value, dict) else repr(value)


@fill_doc
class FairRegressor(RandomizedMixture, RegressorMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Fair regression by reductions (Agarwal, Dudík & Wu 2019).

    Parameters
    ----------
    estimator : estimator, oracle or "hinge_lp", optional
        The learner called as oracle: any scikit-learn regressor accepting ``sample_weight``
        (default ``LinearRegression``), a classifier with ``decision_function`` for the logistic
        loss (default ``LogisticRegression``), ``"hinge_lp"`` for the weighted hinge LP
        (cost-sensitive oracle over linear threshold classifiers), or a
        :class:`fairopt.reductions.oracles.Oracle`.
    constraint : {"statistical_parity", "bounded_group_loss"} or Moment
        SP: the prediction's distribution may differ from the pooled one by at most ``eps`` in
        Kolmogorov-Smirnov distance, for every group. BGL: every group's mean loss at most ``eps``.
        A :class:`fairopt.reductions.Moment` instance is used as given (``eps``, ``grid_size``
        and ``loss`` then come from it).
    eps : float, sequence or dict
        SP slack :math:`\\hat\\varepsilon_a` or BGL bound :math:`\\hat\\zeta_a` (per group allowed): the
        constraint bound itself, not fairlearn's ``ExponentiatedGradient(eps=...)`` (see
        ``docs/fairlearn_differences.md``).
    grid_size : int, default=40
        Number of thresholds ``N`` of the SP discretisation (predictions are rounded down to
        multiples of ``1/N``).
    loss : {"square", "logistic", "absolute"} or Loss, default="square"
        Square :math:`(y-u)^2/2`; logistic is the scaled loss of Example 2 with
        ``logistic_scale`` ``C``; targets must lie in ``[0, 1]``.
    solver : str, SolverSpec, dict or None, default=None
        LP back end for the best-mixture LP and the hinge LP (a
        :class:`fairopt.modeling.SolverSpec` also carries its time limit and options).
    max_iter : int, default=50
        Iteration cap of the game.
    random_state : int or None
        Seed of the randomized ``predict``.
    oracle : {"auto", "least_squares", "risk_minimization", "hinge_lp"}, default="auto"
        SP heuristic (LS or LR of App. F) or the CS-LP oracle.
    B : float, default=10.0
        Bound on the multipliers' l1 norm.
    nu : float, optional
        Duality-gap tolerance (default 1e-9 practical, 0.01 faithful).
    mode : {"practical", "faithful"}, default="practical"
    logistic_scale : float, default=5.0
    round : {"down", "mid"}, default="down"
        SP predictions are rounded down to the grid (the guarantees' predictors) or to cell
        midpoints (same SP, loss closer to the discretised loss).
    min_iter : int, default=1
        Practical mode: game iterations played before the (estimated) gap may stop it.
    eta0 : float, optional
        Practical mode: initial EG step (default ``2 / B``).
    refine_rounds : int, default=3
        SP heuristics (LS/LR): proximal refinement rounds per weight after the published targets
        (0 = the published heuristic only); see :class:`fairopt.reductions.oracles.LeastSquaresOracle`.
    lambda_scales : tuple of float, default=(1.0,)
        SP heuristics: also price at these multiples of the multipliers and keep the best.
    {confidence_uncertified}

    Attributes
    ----------
    predictors_ : list
        Support of the randomized predictor (objects with ``predict``).
    weights_ : ndarray
        Their probabilities.
    lambda_ : ndarray
        Multipliers of the constraint rows (see ``constraint_names_``).
    gap_ : float
        Duality-gap certificate (an estimate with heuristic oracles).
    n_oracle_calls_ : int
    status_ : str
        ``"converged"`` or ``"max_iter"``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(size=400), a + rng.normal(scale=0.5, size=400)])
    >>> y = np.clip(0.4 + 0.15 * X[:, 0] + 0.1 * a, 0, 1)
    >>> reg = FairRegressor(eps=0.05, grid_size=20, random_state=0)
    >>> reg = reg.fit(X, y, sensitive_features=a)
    >>> bool(reg.disparity(X, a) <= 0.05 + 1e-6)
    True
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": [None, StrOptions({"hinge_lp"}), HasMethods(["fit"]), Oracle],
        "constraint": [StrOptions(accepted_names(REGRESSION_CONSTRAINTS)), Moment],
        # rates (statistical parity) lie in [0, 1]; a loss bound only needs eps >= 0 (checked in fit)
        "eps": [Interval(Real, 0, None, closed="left"), "array-like", dict],
        "grid_size": [Interval(Integral, 1, None, closed="left")],
        "loss": [StrOptions({"square", "squared", "squared_error", "logistic", "log", "log_loss", "absolute",
                             "absolute_error"}), Loss],
        "solver": [None, str, SolverSpec, dict],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "oracle": [StrOptions({"auto", "least_squares", "risk_minimization", "hinge_lp"})],
        "B": [Interval(Real, 0, None, closed="neither")],
        "nu": [None, Interval(Real, 0, None, closed="neither")],
        "mode": [StrOptions({"practical", "faithful"})],
        "logistic_scale": [Interval(Real, 0, None, closed="neither")],
        "round": [StrOptions({"down", "mid"})],
        "min_iter": [Interval(Integral, 0, None, closed="left")],
        "eta0": [None, Interval(Real, 0, None, closed="neither")],
        "refine_rounds": [Interval(Integral, 0, None, closed="left")],
        "lambda_scales": ["array-like"],
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator: BaseEstimator | Oracle | Literal["hinge_lp"] | None = None,
                 constraint: str | Moment = "statistical_parity",
                 eps: float | Sequence[float] | dict[Any, float] = 0.05, grid_size: int = 40,
                 loss: str | Loss = "square", solver: str | SolverSpec | Mapping[str, Any] | None = None,
                 max_iter: int = 50, random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 oracle: Literal["auto", "least_squares", "risk_minimization", "hinge_lp"] = "auto",
                 B: float = 10.0, nu: float | None = None, mode: Literal["practical", "faithful"] = "practical",
                 logistic_scale: float = 5.0, round: Literal["down", "mid"] = "down", min_iter: int = 1,
                 eta0: float | None = None, refine_rounds: int = 3, lambda_scales: Sequence[float] = (1.0,),
                 confidence: float | None = None) -> None:
        self.estimator = estimator
        self.constraint = constraint
        self.eps = eps
        self.grid_size = grid_size
        self.loss = loss
        self.solver = solver
        self.max_iter = max_iter
        self.random_state = random_state
        self.oracle = oracle
        self.B = B
        self.nu = nu
        self.mode = mode
        self.logistic_scale = logistic_scale
        self.round = round
        self.min_iter = min_iter
        self.eta0 = eta0
        self.refine_rounds = refine_rounds
        self.lambda_scales = lambda_scales
        self.confidence = confidence

    def _loss(self) -> Loss:
        return get_loss(self.loss, self.logistic_scale)

    def _moment(self) -> StatisticalParity | BoundedGroupLoss:
        known = {"statistical_parity": lambda: StatisticalParity(eps=self.eps, grid_size=self.grid_size,
                                                                 loss=self._loss()),
                 "bounded_group_loss": lambda: BoundedGroupLoss(bound=self.eps, loss=self._loss())}
        # a Moment passed as constraint must be a regression moment (it needs the loss)
        return cast("StatisticalParity | BoundedGroupLoss", moment_from(self.constraint, known, "FairRegressor"))

    def _oracle(self, moment: StatisticalParity | BoundedGroupLoss, solver: SolverSpec | None = None) -> Oracle:
        est = self.estimator
        if est == "hinge_lp" or self.oracle == "hinge_lp":
            return HingeLPOracle(solver=solver)
        if est is None:
            est = LogisticRegression(max_iter=1000) if isinstance(get_loss(moment.loss), ScaledLogisticLoss) \
                else LinearRegression()
        if not issubclass(moment.problem, CostTable):
            return make_oracle(moment, est, self.oracle)
        return make_oracle(moment, est, self.oracle, refine_rounds=self.refine_rounds,
                           lambda_scales=tuple(self.lambda_scales))

    def fit(self, X: ArrayLike, y: ArrayLike, *, sensitive_features: ArrayLike,
            sample_weight: ArrayLike | None = None, progress: Progress | None = None) -> FairRegressor:
        """Play the game on ``(X, y)`` with protected attribute ``sensitive_features``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,)
            Targets in ``[0, 1]`` (rescale others; they are never clipped).
        sensitive_features : array-like, list of row labels, or DataFrame / 2-D array
            Protected attribute of every row; several columns define intersectional groups.
        sample_weight : array-like, optional
            Row weights: the game runs on the weighted empirical distribution (losses, group
            shares and constraint rates are weighted means).
        progress : callable, optional

        Raises
        ------
        DataValidationError
            Targets outside ``[0, 1]``, NaN/inf, mismatched lengths, a single group, empty X.
        ParameterError
            A parameter outside what it accepts (unknown constraint, ``max_iter`` not a positive
            integer, non-positive ``B``/``nu``, a rate criterion's ``eps`` outside ``[0, 1]``).
        InfeasibleError
            Bounded group loss cannot be met: no mixture of the oracle's hypotheses reaches
            the bound (``constraint`` names the group; ``tightest`` the smallest bound found).

        A fit that raises leaves the estimator unfitted: the attributes of an earlier fit are
        removed, so ``predict`` raises :class:`~fairopt.errors.NotFittedError` instead of using
        stale predictors.
        """
        for name in _FITTED_ATTRIBUTES:
            if name in self.__dict__:
                delattr(self, name)
        validate_params(self)
        no_guarantee(self, "FairRegressor.fit",
                     "eps is met by a mixture of the oracle's regressors, a class with no uniform bound, "
                     "and neither the bounded group loss (an unbounded loss) nor statistical parity over a"
                     " grid of thresholds has a held-out bound implemented yet",
                     "FairClassifier(confidence=...) on a thresholded target, or "
                     "ThresholdDebiaser(confidence=...) on the regressor's scores")
        # a rate criterion's eps is a difference of rates, in [0, 1]; a loss bound only needs eps >= 0.
        # The name goes through the registry: an alias (demographic_parity) is checked the same way
        check_eps(self, high=1.0 if isinstance(self.constraint, str) and criterion(self.constraint).is_rate
                  else None)
        check_lambda_scales(self)
        X, y, groups, w = check_fit_inputs(self, X, y, sensitive_features, sample_weight,
                                           "FairRegressor.fit", interval=(0.0, 1.0), dense=True,
                                           numeric=self.estimator is None)
        solver = resolve_solver(self.solver, "LP")   # parsed once; an unknown solver is refused here
        moment = self._moment()
        oracle = self._oracle(moment, solver)
        game = ExponentiatedGradient(moment, oracle, B=self.B, nu=self.nu, max_iter=self.max_iter,
                                     mode=self.mode, solver=solver, eta0=self.eta0,
                                     min_iter=self.min_iter, progress=progress)
        res = game.run(X, y, groups, sample_weight=w)
        if res.status == "infeasible":
            raise self._infeasible(res)
        # every fitted attribute is set together, only after a successful game
        self.result_ = res
        self.moment_ = moment
        self.groups_ = moment.groups
        self.constraint_names_ = moment.row_names()
        self.n_oracle_calls_ = res.n_oracle_calls
        self.n_iter_ = res.n_iter
        self.gap_ = res.gap
        self.lambda_ = res.lambda_
        self.status_ = res.status
        self.predictors_ = res.hypotheses
        self.weights_ = res.weights
        warn_if_not_optimal(self, res)
        return self

    def _infeasible(self, res: GameResult) -> InfeasibleError:
        """The error of an infeasible bounded-group-loss game, with the tightest reachable bound."""
        head = (f"bounded group loss eps={_fmt(self.eps)} is out of reach: {res.violated_row} stays "
                f"{res.max_violation:.4g} above its bound after convergence (gap {res.gap:.2g}).")
        try:
            tightest = min_max_group_loss(res.pool_G, resolve_solver(self.solver, "LP")).value
        except SolverError as exc:  # the verdict stands; only the hint is missing
            return InfeasibleError(
                f"{head} The smallest reachable worst-group loss could not be computed ({exc}); "
                "raise eps, or add features/data for that group.",
                program="fair_regression", constraint=res.violated_row)
        return InfeasibleError(
            f"{head} The smallest worst-group loss the oracle's hypotheses reach is {tightest:.6g}; "
            "raise eps to at least that, or add features/data for that group.",
            program="fair_regression", constraint=res.violated_row, tightest={"eps": tightest})

    def predict_components(self, X: ArrayLike) -> np.ndarray:
        """Predictions of every support member, shape ``(K, n)`` (rounded for SP)."""
        X = self._features(X)
        comps = np.vstack([np.asarray(h.predict(X), dtype=float) for h in self.predictors_])
        if isinstance(self.moment_, StatisticalParity):
            grid = self.moment_.grid
            comps = grid.round_down(comps) if self.round == "down" else grid.round_mid(comps)
        return comps

    def predict(self, X: ArrayLike,
                random_state: int | np.random.RandomState | np.random.Generator | None = None) -> np.ndarray:
        """Randomized prediction: each row draws a support member with probability ``weights_``.

        Seeded by ``random_state`` (default: the estimator's), so repeated calls agree.
        """
        return self._draw(self.predict_components(X), random_state)

    def predict_mean(self, X: ArrayLike) -> np.ndarray:
        """Deterministic expectation :math:`\\sum_f Q(f)\\,f(x)` (no fairness guarantee; audit it)."""
        out: np.ndarray = self.weights_ @ self.predict_components(X)
        return out

    def expected_loss(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Exact mean loss of the randomized predictor: :math:`\\sum_f Q(f)\\,\\widehat{loss}(f)`.

        ``y`` must lie in ``[0, 1]`` like the training targets; ``sample_weight`` (finite, >= 0)
        makes it a weighted mean.
        """
        comps = self.predict_components(X)
        y = check_target(y, comps.shape[1], name="FairRegressor.expected_loss: y", interval=(0.0, 1.0))
        w = check_weights(sample_weight, comps.shape[1], "FairRegressor.expected_loss: sample_weight")
        return float(self.weights_ @ (self.moment_.loss_.value(y[None, :], comps) @ w) / w.sum())

    def disparity(self, X: ArrayLike, sensitive_features: ArrayLike, y: ArrayLike | None = None) -> float:
        """Exact worst violation of the randomized predictor.

        SP: :math:`\\max_{a,z}|\\gamma_{a,z}(Q)|`. BGL: the largest group mean loss (needs ``y``).
        """
        comps = self.predict_components(X)
        if isinstance(self.moment_, StatisticalParity):
            return mixture_sp_disparity(comps, self.weights_, sensitive_features)
        if y is None:
            raise DataValidationError("bounded group loss disparity needs the labels y.")
        grp = check_groups(sensitive_features, comps.shape[1])
        y = check_target(y, comps.shape[1])
        losses = self.weights_ @ self.moment_.loss_.value(y[None, :], comps)
        return float(np.max(grp.counts(losses) / grp.counts()))
