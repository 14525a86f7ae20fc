r"""Warm-started weighted logistic regression: the cost-sensitive oracle's fast path.

The exponentiated-gradient game asks its learner for a weighted classification fit at every
multiplier :math:`\lambda` it tries, on the same features ``X``. For a plain
:class:`sklearn.linear_model.LogisticRegression` (lbfgs, L2) :class:`WarmLogistic` solves the
same problem with the same solver as scikit-learn,

.. math:: \min_{\beta,\beta_0}\ \frac1S\sum_i s_i\,\bigl[\log(1+e^{z_i}) - y_i z_i\bigr]
          + \frac{\|\beta\|^2}{2CS},\qquad z_i = x_i^\top\beta+\beta_0,\ S=\sum_i s_i,

by scipy's L-BFGS-B with scikit-learn's options (``gtol = tol``, ``ftol = 64 eps``,
``maxls = 50``, ``maxiter = max_iter``), and returns a fitted ``LogisticRegression``. Two things
differ, both about cost, not about the problem: the design is prepared once per game (no input
validation per fit; one fused pass for loss and gradient), and the solver starts from the
previous solution with the smallest objective under the new weights instead of from zero
(consecutive multipliers give nearby problems). The answer meets the same first-order tolerance
as scikit-learn's; it is not bit-identical to it, since L-BFGS stops at a different point of the
tolerance ball. The oracle may also ask for a looser tolerance (see
:class:`~fairopt.reductions.oracles.CostSensitiveOracle`).
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator
    from sklearn.linear_model import LogisticRegression

#: previous solutions tried as starting points
WARM_CANDIDATES = 8


def _softplus(Z: ArrayLike) -> NDArray[np.float64]:
    """``log(1 + e^Z)`` without overflow."""
    return np.log1p(np.exp(-np.abs(Z))) + np.maximum(Z, 0.0)


class WarmLogistic:
    """Repeated weighted fits of one ``LogisticRegression`` on a fixed dense design.

    Parameters
    ----------
    estimator : LogisticRegression
        Its ``C``, ``tol``, ``max_iter`` and ``fit_intercept`` define the problem (see
        :meth:`applies` for the configurations covered).
    X : ndarray of shape (n, d)
        Training features (dense, finite).
    tol : float, optional
        Gradient tolerance of L-BFGS (default: the estimator's ``tol``).
    """

    def __init__(self, estimator: LogisticRegression, X: ArrayLike, tol: float | None = None) -> None:
        self.estimator = estimator
        params = estimator.get_params()
        self.C, self.max_iter = float(params["C"]), int(params["max_iter"])
        self.tol = float(params["tol"] if tol is None else tol)
        self.fit_intercept = bool(params["fit_intercept"])
        self.X = np.ascontiguousarray(X, dtype=float)
        self.d = self.X.shape[1]
        self.solutions: list[np.ndarray] = []
        #: scores ``z = X @ coef + intercept`` of the last solutions (starting-point candidates)
        #: and their softplus terms ``log(1 + e^z)``, which do not depend on the weights
        self.scores: list[np.ndarray] = []
        self.softplus: list[np.ndarray] = []
        #: scores of the last fit on the training rows
        self.last_scores: np.ndarray | None = None
        self.n_evaluations = 0

    @staticmethod
    def applies(estimator: BaseEstimator, X: object) -> bool:
        """A binary L2 ``LogisticRegression`` with the lbfgs solver, no class weights, finite
        ``C``, on a dense numeric array (not a DataFrame or a sparse matrix)."""
        from sklearn.linear_model import LogisticRegression
        if type(estimator) is not LogisticRegression or not isinstance(X, np.ndarray) or X.ndim != 2:
            return False
        p = estimator.get_params()
        l2 = p.get("penalty", "l2") in ("l2", "deprecated") and p.get("l1_ratio") in (None, 0, 0.0)
        return (l2 and p["solver"] == "lbfgs" and p["class_weight"] is None and np.isfinite(p["C"])
                and p["C"] > 0 and X.dtype.kind in "fiub")

    # ---- the objective ------------------------------------------------------------------------
    def _z(self, theta: np.ndarray) -> np.ndarray:
        z = self.X @ theta[:self.d]
        if self.fit_intercept:
            z += theta[self.d]
        out: np.ndarray = z
        return out

    def _loss_grad(self, theta: NDArray[np.float64], y: NDArray[np.float64], s: NDArray[np.float64],
                   S: float) -> tuple[float, NDArray[np.float64]]:
        """Scikit-learn's normalised objective and its gradient, from one pass over the rows."""
        self.n_evaluations += 1
        z = self._z(theta)
        e = np.exp(-np.abs(z))                       # overflow-free softplus and sigmoid
        loss = np.log1p(e)
        loss += np.maximum(z, 0.0)
        loss -= y * z
        p = np.where(z >= 0, 1.0, e)
        p /= 1.0 + e                                  # sigmoid(z)
        p -= y
        p *= s                                        # s_i (p_i - y_i)
        coef = theta[:self.d]
        f = float(s @ loss) / S + 0.5 * float(coef @ coef) / (self.C * S)
        g = np.empty_like(theta)
        g[:self.d] = self.X.T @ p
        g[:self.d] /= S
        g[:self.d] += coef / (self.C * S)
        if self.fit_intercept:
            g[self.d] = p.sum() / S
        return f, g

    def _start(self, y: NDArray[np.float64], s: NDArray[np.float64], S: float) -> NDArray[np.float64]:
        """Zero (scikit-learn's start) or the previous solution with the smallest objective."""
        cands = [np.zeros(self.d + int(self.fit_intercept)), *self.solutions[-WARM_CANDIDATES:]]
        Theta = np.vstack(cands)
        # the candidates' scores and softplus terms were kept when they were fitted: under the new
        # weights their objectives cost one product, no pass over X and no transcendental
        n = self.X.shape[0]
        Z = np.column_stack([np.zeros(n), *self.scores[-WARM_CANDIDATES:]])
        SP = np.column_stack([np.full(n, _softplus(0.0)), *self.softplus[-WARM_CANDIDATES:]])
        coef = Theta[:, :self.d]
        values = (s @ (SP - y[:, None] * Z)) / S + 0.5 * np.einsum("kj,kj->k", coef, coef) / (self.C * S)
        out: NDArray[np.float64] = Theta[int(np.argmin(values))].copy()
        return out

    # ---- fits ---------------------------------------------------------------------------------
    def fit(self, labels: ArrayLike, sample_weight: ArrayLike) -> LogisticRegression:
        """A fitted ``LogisticRegression`` (clone of the estimator) for 0/1 ``labels``."""
        y = np.asarray(labels, dtype=float)
        s = np.asarray(sample_weight, dtype=float)
        S = float(s.sum())
        res = minimize(self._loss_grad, self._start(y, s, S), args=(y, s, S), method="L-BFGS-B", jac=True,
                       options={"maxiter": self.max_iter, "maxls": 50, "gtol": self.tol,
                                "ftol": 64 * np.finfo(float).eps})
        if res.status == 1 or not np.all(np.isfinite(res.x)):
            warnings.warn(f"WarmLogistic: lbfgs did not converge in {self.max_iter} iterations "
                          f"({res.message}); raise the estimator's max_iter.", ConvergenceWarning, stacklevel=3)
        theta = res.x
        self.solutions.append(theta)
        self.last_scores = self._z(theta)
        self.scores = [*self.scores[-(WARM_CANDIDATES - 1):], self.last_scores]
        self.softplus = [*self.softplus[-(WARM_CANDIDATES - 1):], _softplus(self.last_scores)]
        est = clone(self.estimator)
        est.classes_ = np.array([0, 1])
        est.coef_ = theta[None, :self.d].copy()
        est.intercept_ = np.array([theta[self.d] if self.fit_intercept else 0.0])
        est.n_iter_ = np.array([min(int(res.nit), self.max_iter)], dtype=np.int32)
        est.n_features_in_ = self.d
        return est
