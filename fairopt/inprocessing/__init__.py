"""In-processing estimators: fair regression and fair classification by reductions, and SEO.

:class:`FairRegressor`
    Agarwal, Dudík & Wu (2019): least-loss randomized regressor under statistical parity (SP) on
    ``grid_size`` thresholds or under bounded group loss (BGL), via the exponentiated-gradient game
    of :mod:`fairopt.reductions`.
:class:`FairClassifier`
    Agarwal et al. (2018): the same game with classification moments (demographic parity, equal
    opportunity, equalized odds).
:class:`SEORegressor`
    Johnson, Foster & Stine (2016): the least-squares linear model whose predictions have zero
    sample covariance with the protected attribute, in closed form (a baseline).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.linear_model import LinearRegression, LogisticRegression

from fairopt.errors import (ConfigError, DataValidationError, InfeasibleError, NotFittedError,
                            SolverError)
from fairopt.reductions import (BoundedGroupLoss, ExponentiatedGradient, HingeLPOracle,
                                StatisticalParity, make_oracle)
from fairopt.reductions.evaluation import mixture_sp_disparity
from fairopt.reductions.losses import ScaledLogisticLoss, get_loss
from fairopt.reductions.moments import CLASSIFICATION_MOMENTS
from fairopt.validation import check_groups

REGRESSION_CONSTRAINTS = ("statistical_parity", "bounded_group_loss")


def _check_xy(X, y, sensitive_features, what: str):
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    y = np.asarray(y, dtype=float).reshape(-1)
    if y.size != n:
        raise DataValidationError(f"{what}: X has {n} rows but y has {y.size}.")
    if not np.all(np.isfinite(y)):
        raise DataValidationError(f"{what}: y contains NaN or infinite values; drop those rows.")
    if sensitive_features is None:
        raise DataValidationError(f"{what}: pass sensitive_features=<one protected value per row>.")
    s = np.asarray(sensitive_features).reshape(-1)
    if s.size != n:
        raise DataValidationError(f"{what}: sensitive_features has {s.size} values for {n} rows.")
    groups = check_groups(s, n).labels
    if groups.size < 2:
        raise DataValidationError(f"{what}: sensitive_features has a single group {groups.tolist()}; "
                                  "fairness constraints need at least two groups.")
    return y, s


def _min_max_group_loss(costs, G, solver) -> float:
    """Smallest ``max_a`` group loss over mixtures of the pool (tightest feasible bound)."""
    from fairopt.modeling import Program
    K, M = G.shape
    prog = Program("tightest_group_loss")
    prog.add_variables("q", shape=(K,), lb=0.0)
    prog.add_variables("t", shape=(1,), lb=None)
    prog.add_constraints("group_loss", {"q": G.T, "t": -np.ones((M, 1))}, ub=0.0)
    prog.add_constraints("simplex", {"q": np.ones((1, K))}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"t": [1.0]})
    sol = prog.solve(solver)
    if not sol.is_optimal:
        raise SolverError(f"the tightest-group-loss LP ended with status {sol.status}; raise the "
                          "time limit or choose another LP back end.", status=sol.status, log=sol.log)
    return float(sol.objective)


#: attributes set by :meth:`FairRegressor.fit` (all removed when a fit fails)
_FITTED_ATTRIBUTES = ("result_", "moment_", "groups_", "constraint_names_", "n_oracle_calls_",
                      "n_iter_", "gap_", "lambda_", "status_", "predictors_", "weights_")


def _fmt(value) -> str:
    return f"{float(value):.6g}" if np.ndim(value) == 0 and not isinstance(value, dict) else repr(value)


class _MixtureMixin:
    """Randomized prediction from ``predictors_`` and ``weights_``."""

    def _check_fitted(self):
        if not hasattr(self, "weights_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit(X, y, "
                                 "sensitive_features=...) first.")

    def _draw(self, components: np.ndarray, random_state):
        seed = self.random_state if random_state is None else random_state
        rng = np.random.default_rng(seed)
        pick = rng.choice(self.weights_.size, size=components.shape[1], p=self.weights_)
        return components[pick, np.arange(components.shape[1])]


class FairRegressor(_MixtureMixin, BaseEstimator):
    """Fair regression by reductions (Agarwal, Dudík & Wu 2019).

    Parameters
    ----------
    estimator : estimator, oracle or "hinge_lp", optional
        The learner called as oracle: any scikit-learn regressor accepting ``sample_weight``
        (default ``LinearRegression``), a classifier with ``decision_function`` for the logistic
        loss (default ``LogisticRegression``), ``"hinge_lp"`` for the weighted hinge LP
        (cost-sensitive oracle over linear threshold classifiers), or a
        :class:`fairopt.reductions.oracles.Oracle`.
    constraint : {"statistical_parity", "bounded_group_loss"}
        SP: the prediction's distribution may differ from the pooled one by at most ``eps`` in
        Kolmogorov-Smirnov distance, for every group. BGL: every group's mean loss at most ``eps``.
    eps : float, sequence or dict
        SP slack :math:`\\hat\\varepsilon_a` or BGL bound :math:`\\hat\\zeta_a` (per group allowed).
    grid_size : int, default=40
        Number of thresholds ``N`` of the SP discretisation (predictions are rounded down to
        multiples of ``1/N``).
    loss : {"square", "logistic", "absolute"} or Loss, default="square"
        Square :math:`(y-u)^2/2`; logistic is the scaled loss of Example 2 with
        ``logistic_scale`` ``C``; targets must lie in ``[0, 1]``.
    solver : str or SolverSpec, default="highs"
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
    """

    def __init__(self, estimator=None, constraint="statistical_parity", eps=0.05, grid_size=40,
                 loss="square", solver="highs", max_iter=50, random_state=None, oracle="auto",
                 B=10.0, nu=None, mode="practical", logistic_scale=5.0, round="down", min_iter=1,
                 eta0=None, refine_rounds=3, lambda_scales=(1.0,)):
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

    def _loss(self):
        return get_loss(self.loss, self.logistic_scale)

    def _moment(self):
        if self.constraint == "statistical_parity":
            return StatisticalParity(eps=self.eps, grid_size=self.grid_size, loss=self._loss())
        if self.constraint == "bounded_group_loss":
            return BoundedGroupLoss(bound=self.eps, loss=self._loss())
        raise ConfigError(f"constraint={self.constraint!r}; use one of {REGRESSION_CONSTRAINTS}.")

    def _oracle(self, moment):
        est = self.estimator
        if est == "hinge_lp" or self.oracle == "hinge_lp":
            return HingeLPOracle(solver=self.solver)
        if est is None:
            est = LogisticRegression(max_iter=1000) if isinstance(moment.loss, ScaledLogisticLoss) \
                else LinearRegression()
        if moment.kind != "statistical_parity":
            return make_oracle(moment, est, self.oracle)
        return make_oracle(moment, est, self.oracle, refine_rounds=self.refine_rounds,
                           lambda_scales=tuple(self.lambda_scales))

    def fit(self, X, y, *, sensitive_features, progress=None):
        """Play the game on ``(X, y)`` with protected attribute ``sensitive_features``.

        Raises
        ------
        DataValidationError
            Targets outside ``[0, 1]``, NaN, mismatched lengths, a single group.
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
        y, s = _check_xy(X, y, sensitive_features, "FairRegressor.fit")
        if y.min() < 0 or y.max() > 1:
            raise DataValidationError(f"FairRegressor needs targets in [0, 1] (got [{y.min():.4g}, "
                                      f"{y.max():.4g}]); rescale them, e.g. (y - lo) / (hi - lo).")
        if self.round not in ("down", "mid"):
            raise ConfigError(f"round={self.round!r}; use 'down' or 'mid'.")
        moment = self._moment()
        oracle = self._oracle(moment)
        game = ExponentiatedGradient(moment, oracle, B=self.B, nu=self.nu, max_iter=self.max_iter,
                                     mode=self.mode, solver=self.solver, eta0=self.eta0,
                                     min_iter=self.min_iter, progress=progress)
        res = game.run(X, y, s)
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
        if res.status != "converged" or res.lp_slack > 1e-7:
            warnings.warn(f"FairRegressor: game stopped with status {res.status!r}, gap {res.gap:.3g}, "
                          f"slack {res.lp_slack:.3g}; raise max_iter or B.", RuntimeWarning, stacklevel=2)
        return self

    def _infeasible(self, res) -> InfeasibleError:
        """The error of an infeasible bounded-group-loss game, with the tightest reachable bound."""
        head = (f"bounded group loss eps={_fmt(self.eps)} is out of reach: {res.violated_row} stays "
                f"{res.max_violation:.4g} above its bound after convergence (gap {res.gap:.2g}).")
        try:
            tightest = _min_max_group_loss(res.pool_costs, res.pool_G, self.solver)
        except SolverError as exc:  # the verdict stands; only the hint is missing
            return InfeasibleError(
                f"{head} The smallest reachable worst-group loss could not be computed ({exc}); "
                "raise eps, or add features/data for that group.",
                program="fair_regression", constraint=res.violated_row)
        return InfeasibleError(
            f"{head} The smallest worst-group loss the oracle's hypotheses reach is {tightest:.6g}; "
            "raise eps to at least that, or add features/data for that group.",
            program="fair_regression", constraint=res.violated_row, tightest={"eps": tightest})

    def predict_components(self, X) -> np.ndarray:
        """Predictions of every support member, shape ``(K, n)`` (rounded for SP)."""
        self._check_fitted()
        comps = np.vstack([np.asarray(h.predict(X), dtype=float) for h in self.predictors_])
        if self.constraint == "statistical_parity":
            grid = self.moment_.grid
            comps = grid.round_down(comps) if self.round == "down" else grid.round_mid(comps)
        return comps

    def predict(self, X, random_state=None) -> np.ndarray:
        """Randomized prediction: each row draws a support member with probability ``weights_``.

        Seeded by ``random_state`` (default: the estimator's), so repeated calls agree.
        """
        return self._draw(self.predict_components(X), random_state)

    def predict_mean(self, X) -> np.ndarray:
        """Deterministic expectation :math:`\\sum_f Q(f)\\,f(x)` (no fairness guarantee; audit it)."""
        return self.weights_ @ self.predict_components(X)

    def expected_loss(self, X, y) -> float:
        """Exact mean loss of the randomized predictor: :math:`\\sum_f Q(f)\\,\\widehat{loss}(f)`."""
        comps = self.predict_components(X)
        loss = self._loss()
        return float(self.weights_ @ loss.value(np.asarray(y, dtype=float)[None, :], comps).mean(axis=1))

    def disparity(self, X, sensitive_features, y=None) -> float:
        """Exact worst violation of the randomized predictor.

        SP: :math:`\\max_{a,z}|\\gamma_{a,z}(Q)|`. BGL: the largest group mean loss (needs ``y``).
        """
        comps = self.predict_components(X)
        if self.constraint == "statistical_parity":
            return mixture_sp_disparity(comps, self.weights_, sensitive_features)
        if y is None:
            raise DataValidationError("bounded group loss disparity needs the labels y.")
        grp = check_groups(sensitive_features, len(y)); groups, codes = grp.labels, grp.codes
        losses = self.weights_ @ self._loss().value(np.asarray(y, float)[None, :], comps)
        return float(np.max(np.bincount(codes, weights=losses) / np.bincount(codes)))


class FairClassifier(_MixtureMixin, ClassifierMixin, BaseEstimator):
    """Fair classification by reductions (Agarwal et al. 2018) through the same game.

    Parameters
    ----------
    estimator : classifier, optional
        Any scikit-learn classifier accepting ``sample_weight`` (default ``LogisticRegression``).
    constraint : {"demographic_parity", "equal_opportunity", "equalized_odds"}
        Selection rates (DP), true-positive rates (EO) or both true- and false-positive rates
        (equalized odds) of each group may differ from the overall rate by at most ``eps``.
    eps, solver, max_iter, random_state, B, nu, mode
        As in :class:`FairRegressor`.
    """

    def __init__(self, estimator=None, constraint="demographic_parity", eps=0.01, solver="highs",
                 max_iter=50, random_state=None, B=10.0, nu=None, mode="practical"):
        self.estimator = estimator
        self.constraint = constraint
        self.eps = eps
        self.solver = solver
        self.max_iter = max_iter
        self.random_state = random_state
        self.B = B
        self.nu = nu
        self.mode = mode

    def fit(self, X, y, *, sensitive_features, progress=None):
        y, s = _check_xy(X, y, sensitive_features, "FairClassifier.fit")
        if self.constraint not in CLASSIFICATION_MOMENTS:
            raise ConfigError(f"constraint={self.constraint!r}; use one of {sorted(CLASSIFICATION_MOMENTS)}.")
        self.classes_ = np.unique(y)
        if not np.array_equal(self.classes_, [0.0, 1.0]):
            raise DataValidationError(f"FairClassifier needs binary labels 0/1, got {self.classes_[:5]}.")
        moment = CLASSIFICATION_MOMENTS[self.constraint](eps=self.eps)
        est = self.estimator if self.estimator is not None else LogisticRegression(max_iter=1000)
        game = ExponentiatedGradient(moment, make_oracle(moment, est), B=self.B, nu=self.nu,
                                     max_iter=self.max_iter, mode=self.mode, solver=self.solver,
                                     progress=progress)
        res = game.run(X, y, s)
        self.result_, self.moment_ = res, moment
        self.predictors_, self.weights_ = res.hypotheses, res.weights
        self.lambda_, self.gap_, self.status_ = res.lambda_, res.gap, res.status
        self.n_oracle_calls_, self.n_iter_ = res.n_oracle_calls, res.n_iter
        self.constraint_names_ = moment.row_names()
        return self

    def predict_components(self, X) -> np.ndarray:
        self._check_fitted()
        return np.vstack([h.predict(X) for h in self.predictors_])

    def predict(self, X, random_state=None) -> np.ndarray:
        """Randomized labels (seeded)."""
        return self._draw(self.predict_components(X), random_state)

    def predict_proba(self, X) -> np.ndarray:
        """Probability that the randomized classifier predicts each class."""
        p1 = self.weights_ @ self.predict_components(X)
        return np.column_stack([1.0 - p1, p1])

    def decision_scores(self, X) -> np.ndarray:
        """Real-valued scores of the support members (their class-1 probabilities), ``(K, n)``."""
        self._check_fitted()
        return np.vstack([h.score(X) for h in self.predictors_])


class SEORegressor(RegressorMixin, BaseEstimator):
    """Least squares with zero sample covariance between predictions and the protected attribute.

    Closed form (Johnson, Foster & Stine 2016): with :math:`M=(\\tilde X^\\top\\tilde X)^{-1}`,
    :math:`K=\\tilde X^\\top(\\mathbf A-\\bar{\\mathbf A})` (group indicators, one group dropped),
    :math:`\\beta=\\beta_{OLS}-MK(K^\\top MK)^{-1}K^\\top\\beta_{OLS}`.

    Parameters
    ----------
    clip : bool, default=True
        Clip predictions into ``[0, 1]``.
    """

    def __init__(self, clip=True):
        self.clip = clip

    def fit(self, X, y, *, sensitive_features):
        y, s = _check_xy(X, y, sensitive_features, "SEORegressor.fit")
        Xt = np.hstack([np.asarray(X, dtype=float), np.ones((len(y), 1))])
        grp = check_groups(s, len(y)); groups, codes = grp.labels, grp.codes
        A = (codes[:, None] == np.arange(1, groups.size)[None, :]).astype(float)
        M = np.linalg.pinv(Xt.T @ Xt)
        beta = M @ (Xt.T @ y)
        K = Xt.T @ (A - A.mean(axis=0))
        KMK = K.T @ M @ K
        self.coef_ = beta - M @ K @ np.linalg.solve(KMK, K.T @ beta)
        self.groups_ = groups
        return self

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise NotFittedError("SEORegressor is not fitted; call fit first.")
        pred = np.asarray(X, dtype=float) @ self.coef_[:-1] + self.coef_[-1]
        return np.clip(pred, 0.0, 1.0) if self.clip else pred
