"""Post-processing a regressor to statistical parity: :class:`RegressionDebiaser`."""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted as sk_check_is_fitted

from fairopt._param_validation import HasMethods, Interval, StrOptions
from fairopt._utils import as_generator
from fairopt.errors import DataValidationError, NotFittedError
from fairopt.guarantees import no_guarantee
from fairopt.modeling import SolverSpec
from fairopt.validation import (
    RANDOM_STATE,
    Groups,
    check_group_weights,
    check_groups,
    check_weights,
    num_rows,
    validate_params,
)

__all__ = ["RegressionDebiaser"]


class RegressionDebiaser(RegressorMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # sklearn: no stubs
    """Least-loss post-processing of any regressor's predictions to statistical parity.

    Statistical parity in the sense of Agarwal, Dudik & Wu (2019): for every threshold ``z``,
    ``|P(f >= z | A = a) - P(f >= z)| <= eps`` (each group's output CDF within ``eps`` of the pooled
    one). Each group's distribution of predictions is transported to output values on ``grid`` at
    the least expected loss against the original predictions; the transport is a linear program in
    the output CDFs (see ``fairopt.formulations.regression_parity``), solved exactly: in closed
    form at ``eps = 0`` (both losses), by a sweep over the pooled CDF at ``eps > 0`` (the squared
    loss on any grid, the absolute loss on a grid holding every prediction, as the default one
    does), and by the LP otherwise. At ``eps = 0`` with squared loss the outputs follow the
    Wasserstein-2 barycenter of the groups' prediction distributions (Chzhen et al. 2020; Le Gouic
    et al. 2020).

    Parameters
    ----------
    estimator : regressor or None, default None
        Model whose predictions are post-processed. ``None``: ``X`` is itself the 1-D array of
        predictions (or a single column; a DataFrame may also hold the sensitive columns, named in
        ``sensitive_features``).
    prefit : bool, default False
        ``estimator`` is already fitted; ``fit`` only learns the transport. Otherwise it is fitted
        on ``(X, y)`` (the only use of ``y``).
    eps : float in [0, 1], default 0.0
        Largest allowed distance (Kolmogorov-Smirnov) between a group's output CDF and the pooled
        output CDF on the fitting sample. ``0`` makes the groups' output distributions equal.
    loss : {"squared", "absolute"}, default "squared"
        Cost of moving a prediction ``s`` to ``y``: ``(s - y)^2`` or ``|s - y|``.
    grid : int, array-like or None, default None
        Output values. ``None``: every distinct prediction plus the support of the squared-loss
        barycenter, so ``eps = 0`` is exact (for the absolute loss the median-CDF barycenter lives
        on the predictions). An int ``M``: ``M // 2`` quantiles of the pooled predictions and
        ``M - M // 2`` of the barycenter (a coarser output; with the absolute loss at ``eps > 0`` an
        int grid misses predictions and runs the LP, slow above ~10^4 distinct predictions). A 1-D
        array: those values, as a set (sorted, repeats dropped; the absolute loss at ``eps > 0``
        skips the LP when they hold every prediction).
    solver : str, SolverSpec, dict or None, default None
        LP back end (``None``: the registry's default for LPs) when the LP runs.
    random_state : int, Generator or None
        Seed of ``predict``'s draws.
    confidence : float in (0, 1) or None, default None
        Refused (a typed error at fit) unless None: no population guarantee is offered for
        ``eps`` here (see :doc:`/guarantees`). Kept for a uniform interface with the
        estimators that certify their tolerance.

    Attributes
    ----------
    grid_ : ndarray (M,)
        Output values.
    groups_ : pandas.Index
        Group labels (tuples for several sensitive columns).
    support_ : list of ndarray
        Each group's distinct fitted predictions.
    plan_ : list of scipy.sparse.csr_matrix
        Each group's transport plan: ``plan_[a][i, j]`` = P(prediction ``support_[a][i]`` is sent to
        ``grid_[j]`` | group ``a``).
    output_cdf_ : ndarray (n_groups, M)
        Each group's fitted output CDF on ``grid_``; ``pooled_cdf_`` is their weighted mean.
    train_loss_ : float
        Expected loss against the original predictions on the fitting sample.
    train_gap_ : float
        Largest ``|output_cdf_ - pooled_cdf_|`` (the largest CDF gap).
    input_gap_ : float
        The same gap of the original predictions.
    price_of_fairness_ : ndarray (n_groups, M - 1)
        Duals of the CDF rows (``d train_loss / d bound``); the loss falls by
        ``abs(price_of_fairness_).sum()`` per unit of extra ``eps``. Computed when first read:
        from the closed form at ``eps = 0`` (the duals with the least ``sum |price|``, i.e. the
        slope as ``eps`` leaves 0), in closed form after the sweeps at ``eps > 0`` (the grid
        intervals' own duals, no LP).

    Notes
    -----
    ``predict`` maps a prediction seen at fit through its row of the plan; an unseen one mixes the
    rows of its two neighbouring fitted values, weighted by linear interpolation between them (the
    nearest one outside their range), so the map is continuous in the prediction and equal to the
    plan on the fitting sample.

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([0.0, 1.0, 2.0, 3.0])
    >>> deb = RegressionDebiaser().fit(f, sensitive_features=[0, 0, 1, 1])
    >>> deb.predict(f, sensitive_features=[0, 0, 1, 1]).tolist()
    [1.0, 2.0, 1.0, 2.0]
    >>> round(deb.train_loss_, 6), deb.train_gap_
    (1.0, 0.0)
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": [None, HasMethods(["predict"])],
        "prefit": ["boolean"],
        "eps": [Interval(Real, 0, 1, closed="both")],
        "loss": [StrOptions({"squared", "absolute"})],
        "grid": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
        "solver": [None, str, SolverSpec, dict],
        "random_state": RANDOM_STATE,
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator: BaseEstimator | None = None, prefit: bool = False, eps: float = 0.0,
                 loss: str = "squared", grid: int | ArrayLike | None = None,
                 solver: str | SolverSpec | dict[str, Any] | None = None,
                 random_state: int | np.random.Generator | None = None,
                 confidence: float | None = None) -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.eps = eps
        self.loss = loss
        self.grid = grid
        self.solver = solver
        self.random_state = random_state
        self.confidence = confidence

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.estimator is None:
            tags.input_tags.one_d_array, tags.input_tags.two_d_array = True, False
        else:
            from sklearn.utils import get_tags
            tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        tags.non_deterministic = True
        return tags

    def __sklearn_clone__(self) -> RegressionDebiaser:
        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items() if k != "estimator"}
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, **params)

    # ------------------------------------------------------------------ inputs
    def _predictions(self, X: Any) -> np.ndarray:
        if self.estimator is None:
            if isinstance(X, pd.DataFrame) and getattr(self, "sensitive_columns_", None):
                X = X.drop(columns=self.sensitive_columns_)
            if hasattr(X, "to_pandas") and not isinstance(X, (pd.DataFrame, pd.Series)):
                X = X.to_pandas()
            try:
                raw = np.asarray(X, dtype=float)
            except (TypeError, ValueError) as exc:
                raise DataValidationError(f"without an estimator X must hold numeric predictions ({exc}).") from exc
            if raw.ndim == 2 and raw.shape[1] == 1:
                raw = raw[:, 0]
            if raw.ndim != 1:
                raise DataValidationError(f"without an estimator X must be a 1-D array of predictions (or one "
                                          f"column), got shape {raw.shape}; pass estimator=... to predict from "
                                          "features.")
        else:
            est = getattr(self, "estimator_", None)
            if est is None:
                raise NotFittedError("RegressionDebiaser is not fitted; call fit first.")
            raw = np.asarray(est.predict(X), dtype=float).reshape(-1)
        if not np.isfinite(raw).all():
            raise DataValidationError("the predictions contain NaN or infinite values.")
        return raw

    def _fit_estimator(self, X: Any, y: Any, sw: np.ndarray | None) -> None:
        if self.estimator is None:
            return
        if self.prefit:
            try:
                sk_check_is_fitted(self.estimator)
            except Exception as exc:
                raise NotFittedError(f"prefit=True but {type(self.estimator).__name__} is not fitted; fit it "
                                     "first or use prefit=False.") from exc
            self.estimator_ = self.estimator
        else:
            if y is None:
                raise DataValidationError("y is required to fit the wrapped estimator (prefit=False): this "
                                          "estimator requires y to be passed, but the target y is None.")
            self.estimator_ = clone(self.estimator)
            self.estimator_.fit(X, y, **({} if sw is None else {"sample_weight": sw}))
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, attr):
                setattr(self, attr, getattr(self.estimator_, attr))

    def _grid(self, dists: list[Any], shares: np.ndarray, cells: Any = None) -> np.ndarray:
        from fairopt.formulations.regression_closed_form import default_grid
        from fairopt.formulations.regression_parity import barycenter
        if self.grid is None:
            return default_grid(dists, shares, cells)
        bary, bary_w = barycenter(dists, shares)
        if isinstance(self.grid, Integral) and not isinstance(self.grid, bool):
            M = int(self.grid)
            pooled_w = np.concatenate([p * d.weights for p, d in zip(shares, dists, strict=True)])
            pooled_v = np.concatenate([d.values for d in dists])
            order = np.argsort(pooled_v, kind="stable")
            q_pool = _weighted_quantiles(pooled_v[order], pooled_w[order], M // 2)
            q_bary = _weighted_quantiles(bary, bary_w, M - M // 2)
            return np.unique(np.concatenate([q_pool, q_bary]))
        try:
            grid = np.asarray(self.grid, dtype=float)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(f"grid must be a 1-D array of output values (or an int or None); "
                                      f"{exc}.") from exc
        if grid.ndim != 1:
            raise DataValidationError(f"grid must be a 1-D array of output values (or an int or None), got "
                                      f"shape {grid.shape}.")
        if grid.size == 0 or not np.isfinite(grid).all():
            raise DataValidationError("grid must hold finite output values (or be an int or None).")
        return np.unique(grid)   # a set of output values: their order and repeats carry no meaning

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any = None,
            sample_weight: Any = None) -> RegressionDebiaser:
        """Learn each group's transport to the fair output distribution.

        Parameters
        ----------
        X : array-like
            Features for ``estimator``, or (``estimator=None``) the 1-D predictions.
        y : array-like, optional
            Targets; used only to fit a non-prefit ``estimator``.
        sensitive_features : array-like, DataFrame, or column name(s) of X
            Group of every row; several columns define intersectional groups.
        sample_weight : array-like, optional
            Row weights (integer weights are repetitions).

        Returns
        -------
        RegressionDebiaser
            The fitted estimator.
        """
        from fairopt.formulations.regression_closed_form import input_gap, merged_cells
        from fairopt.formulations.regression_parity import RegressionParity, collapse_groups
        validate_params(self)
        no_guarantee(self, "RegressionDebiaser.fit",
                     "its eps bounds a Kolmogorov-Smirnov distance between output CDFs of a transport rule"
                     " fitted on the same rows, and no bound for that rule class is implemented",
                     "ThresholdDebiaser(confidence=...) for a thresholded decision")
        if X is None:
            raise DataValidationError("RegressionDebiaser.fit: X is required.")
        n = num_rows(X)
        if n == 0:
            raise DataValidationError("X has no rows.")
        sw = None if sample_weight is None else check_weights(sample_weight, n)
        grp = check_groups(sensitive_features, n, X=X, min_groups=2)   # a constraint compares groups
        self.groups_ = grp.labels
        self.sensitive_columns_ = None if grp.columns is None else list(grp.columns)
        codes = grp.codes.astype(np.int64, copy=False)
        if sw is not None:
            check_group_weights(Groups(codes, self.groups_), sw, "RegressionDebiaser.fit")
        self._fit_estimator(X, y, sw)
        pred = self._predictions(X)
        if pred.shape[0] != n:
            raise DataValidationError(f"got {pred.shape[0]} predictions for {n} rows.")
        dists, shares = collapse_groups(pred, codes, len(self.groups_), sw)
        cells = merged_cells(dists, shares)
        self.grid_ = self._grid(dists, shares, cells)
        form = RegressionParity(dists, shares, self.grid_, float(self.eps), self.loss, cells)
        sol = form.solve(self.solver)
        self.solution_ = sol
        self.support_ = [d.values for d in dists]
        self._levels = [d.levels for d in dists]
        self.group_shares_ = shares
        self.plan_ = sol.plans(dists)
        self.output_cdf_, self.pooled_cdf_ = sol.cdf, sol.pooled_cdf
        self.train_loss_, self.train_gap_ = sol.loss, sol.gap
        self.input_gap_ = input_gap(dists, shares)
        return self

    @property
    def price_of_fairness_(self) -> np.ndarray:
        """Duals of the CDF rows, ``(n_groups, M - 1)`` (computed on first access on the closed-form path)."""
        if not hasattr(self, "solution_"):
            raise AttributeError("price_of_fairness_ is set by fit")
        return self.solution_.prices()

    def _neighbours(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Group code, the two neighbouring fitted values (indices) and the weight of the upper one."""
        if not hasattr(self, "solution_"):
            raise NotFittedError("RegressionDebiaser is not fitted; call fit(X, sensitive_features=...) first.")
        pred = self._predictions(X)
        n = pred.shape[0]
        if sensitive_features is None and self.sensitive_columns_:
            sensitive_features = self.sensitive_columns_
        if sensitive_features is None:
            raise DataValidationError("sensitive_features is required at predict: pass the group of every row.")
        codes = Groups(np.zeros(0, np.intp), self.groups_).encode(sensitive_features, n, X=X)
        lo, hi, lam = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n)
        for a, s in enumerate(self.support_):      # a loop over groups, not rows
            rows = np.flatnonzero(codes == a)
            x = pred[rows]
            idx = np.searchsorted(s, x, side="left")
            exact = (idx < s.size) & (s[np.minimum(idx, s.size - 1)] == x)
            l_ = np.clip(np.where(exact, idx, idx - 1), 0, s.size - 1)
            h_ = np.clip(idx, 0, s.size - 1)
            span = s[h_] - s[l_]
            lam[rows] = np.where(span > 0, (x - s[l_]) / np.where(span > 0, span, 1.0), 0.0)
            lo[rows], hi[rows] = l_, h_
        lam_c: np.ndarray = np.asarray(np.clip(lam, 0.0, 1.0))
        return codes, lo, hi, lam_c

    def predict_distribution(self, X: Any, *, sensitive_features: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Each row's output distribution on the grid.

        Parameters
        ----------
        X : array-like
            As in :meth:`fit`.
        sensitive_features : array-like or column name(s), optional
            Group of every row (defaults to the columns named at fit).

        Returns
        -------
        grid : ndarray (M,)
            ``grid_``.
        proba : ndarray (n_rows, M)
            Row ``i``'s probabilities of each output value (rows sum to 1).
        """
        codes, lo, hi, lam = self._neighbours(X, sensitive_features)
        out = np.zeros((codes.shape[0], self.grid_.shape[0]))
        for a, lev in enumerate(self._levels):
            rows = np.flatnonzero(codes == a)
            cdf = self.output_cdf_[a]

            def row_cdf(k: np.ndarray, lev: np.ndarray = lev, cdf: np.ndarray = cdf) -> np.ndarray:
                w = (lev[k + 1] - lev[k])[:, None]
                out: np.ndarray = np.clip((cdf[None, :] - lev[k][:, None]) / w, 0.0, 1.0)
                return out

            mix = (1 - lam[rows, None]) * row_cdf(lo[rows]) + lam[rows, None] * row_cdf(hi[rows])
            mix[:, -1] = 1.0
            out[rows] = np.diff(mix, axis=1, prepend=0.0)
        return self.grid_, np.maximum(out, 0.0)

    def predict(self, X: Any, *, sensitive_features: Any = None,
                random_state: int | np.random.Generator | None = None) -> np.ndarray:
        """One seeded draw per row from its output distribution (see :meth:`predict_distribution`).

        Parameters
        ----------
        X : array-like
            As in :meth:`fit`.
        sensitive_features : array-like or column name(s), optional
            Group of every row.
        random_state : int, Generator or None
            Seed of the draws (default: the estimator's ``random_state``).

        Returns
        -------
        ndarray (n_rows,)
            Fair predictions, values of ``grid_``.
        """
        codes, lo, hi, lam = self._neighbours(X, sensitive_features)
        rng = as_generator(self.random_state if random_state is None else random_state)
        pick, where = np.asarray(rng.random(codes.shape[0])), np.asarray(rng.random(codes.shape[0]))
        k = np.where(pick < lam, hi, lo)
        out = np.empty(codes.shape[0])
        for a, lev in enumerate(self._levels):
            rows = np.flatnonzero(codes == a)
            u = lev[k[rows]] + where[rows] * (lev[k[rows] + 1] - lev[k[rows]])
            j = np.searchsorted(self.output_cdf_[a], u, side="left")
            out[rows] = self.grid_[np.minimum(j, self.grid_.shape[0] - 1)]
        return out

    def score(self, X: Any, y: Any, sample_weight: Any = None, *, sensitive_features: Any = None) -> float:
        """R^2 of :meth:`predict` against ``y``.

        Parameters
        ----------
        X, y : array-like
            Inputs and targets.
        sample_weight : array-like, optional
            Row weights.
        sensitive_features : array-like, optional
            Group of every row.

        Returns
        -------
        float
            The coefficient of determination.
        """
        from sklearn.metrics import r2_score
        return float(r2_score(y, self.predict(X, sensitive_features=sensitive_features), sample_weight=sample_weight))


def _weighted_quantiles(values: np.ndarray, weights: np.ndarray, m: int) -> np.ndarray:
    """``m`` inverted-CDF quantiles (levels evenly spaced in [0, 1], ends included) of sorted values."""
    if m <= 0:
        return np.zeros(0)
    cum = np.cumsum(weights) / weights.sum()
    levels = np.linspace(0.0, 1.0, m) if m > 1 else np.array([0.5])
    out: np.ndarray = values[np.minimum(np.searchsorted(cum, levels - 1e-12, side="left"), values.shape[0] - 1)]
    return out
