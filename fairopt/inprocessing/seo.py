"""Zero-covariance least squares (Johnson, Foster & Stine 2016): :class:`SEORegressor`."""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin

from fairopt.inprocessing._mixture import check_fit_inputs
from fairopt.validation import (
    align_features,
    as_float,
    check_is_fitted,
    check_target,
    check_weights,
    check_X,
    validate_params,
)

__all__ = ["SEORegressor"]


class SEORegressor(RegressorMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Least squares with zero sample covariance between predictions and the protected attribute.

    Closed form (Johnson, Foster & Stine 2016): with :math:`M=(\\tilde X^\\top W\\tilde X)^{-1}`,
    :math:`K=\\tilde X^\\top W(\\mathbf A-\\bar{\\mathbf A})` (group indicators, one group dropped;
    ``W`` the sample weights, identity by default),
    :math:`\\beta=\\beta_{OLS}-MK(K^\\top MK)^{-1}K^\\top\\beta_{OLS}`.

    Parameters
    ----------
    clip : bool, default=True
        Clip predictions into ``[0, 1]``; the targets must then lie in ``[0, 1]`` (others are
        rejected at fit rather than silently clipped: use ``clip=False`` for other ranges).

    Attributes
    ----------
    coef_ : ndarray of shape (d + 1,)
        Coefficients, intercept last.
    groups_ : pandas.Index
    n_features_in_, feature_names_in_
        Columns seen at fit; a DataFrame at predict is reordered by name.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 200)
    >>> X = np.column_stack([rng.normal(size=200), a])
    >>> y = np.clip(0.5 + 0.1 * X[:, 0] + 0.2 * a, 0, 1)
    >>> pred = SEORegressor().fit(X, y, sensitive_features=a).predict(X)
    >>> bool(abs(pred[a == 0].mean() - pred[a == 1].mean()) < 1e-9)
    True
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {"clip": ["boolean"]}

    def __init__(self, clip: bool = True) -> None:
        self.clip = clip

    def fit(self, X: ArrayLike, y: ArrayLike, *, sensitive_features: ArrayLike,
            sample_weight: ArrayLike | None = None) -> SEORegressor:
        """Solve the zero-covariance least-squares problem (weighted by ``sample_weight``)."""
        validate_params(self)
        X, y, grp, w = check_fit_inputs(self, X, y, sensitive_features, sample_weight, "SEORegressor.fit",
                                        interval=(0.0, 1.0) if self.clip else None, dense=True, numeric=True)
        X = np.asarray(X)
        n, d = X.shape
        # the design with its intercept column, in one copy: numeric columns were checked finite
        # at the edge (check_X), other dtypes go through as_float's typed errors
        Xt = np.empty((n, d + 1))
        Xt[:, :d] = X if X.dtype.kind in "biuf" else as_float(X, "SEORegressor.fit: X")
        Xt[:, d] = 1.0
        w = np.ones(len(y)) if w is None else w
        # columns scaled by powers of two to unit RMS (exact, undone on coef_): pinv's relative cutoff
        # would otherwise drop features of magnitude 1e-9 next to the intercept
        rms = np.sqrt(np.average(Xt * Xt, axis=0, weights=w))
        col = np.exp2(np.round(np.log2(np.where(rms > 0, rms, 1.0))))
        Xt /= col
        A = (grp.codes[:, None] == np.arange(1, grp.n_groups)[None, :]).astype(float)
        XtW = Xt.T * w
        M = np.linalg.pinv(XtW @ Xt)
        beta = M @ (XtW @ y)
        K = XtW @ (A - np.average(A, axis=0, weights=w))
        KMK = K.T @ M @ K
        self.coef_ = (beta - M @ K @ np.linalg.solve(KMK, K.T @ beta)) / col
        self.groups_ = grp.labels
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict with the fitted linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features, in the columns seen at fit.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions, clipped to ``[0, 1]`` when ``clip=True``.

        Raises
        ------
        NotFittedError
            If called before ``fit``.
        """
        check_is_fitted(self, "coef_", "fit(X, y, sensitive_features=...)")
        X = align_features(self, check_X(X, "SEORegressor.predict"))
        pred = as_float(np.asarray(X), "SEORegressor.predict: X") @ self.coef_[:-1] + self.coef_[-1]
        out: np.ndarray = np.clip(pred, 0.0, 1.0) if self.clip else pred
        return out

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """:math:`R^2` of :meth:`predict` (``sample_weight`` finite and >= 0; ``y`` finite, and in
        ``[0, 1]`` like the training targets when ``clip``)."""
        from sklearn.metrics import r2_score
        pred = self.predict(X)
        y = check_target(y, pred.shape[0], name="SEORegressor.score: y", interval=(0.0, 1.0) if self.clip else None)
        w = check_weights(sample_weight, pred.shape[0], "SEORegressor.score: sample_weight")
        return float(r2_score(y, pred, sample_weight=w))
