"""The oracle interface of the exponentiated-gradient game and the hypotheses oracles return.

A hypothesis is an object whose ``predict(X)`` gives real-valued predictions in ``[0, 1]``
(regression) or labels in ``{0, 1}`` (classification). Public names are re-exported by
:mod:`fairopt.reductions.oracles`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._docstrings import fill_doc, inherit_docs, register
from fairopt.errors import ConfigError
from fairopt.reductions import game as _game  # noqa: F401 -- registers the Learner protocol's docstring pieces
from fairopt.reductions.losses import ScaledLogisticLoss

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.reductions.moments import Moment


#: the data of the oracles' examples: a regression task with two groups
register("example_regression_data", """>>> import numpy as np
>>> from sklearn.linear_model import LinearRegression
>>> from fairopt.reductions import ExponentiatedGradient, StatisticalParity
>>> rng = np.random.default_rng(0)
>>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
>>> y = np.clip(0.5 + 0.2 * X[:, 0] + 0.1 * a, 0, 1)""")


# ---- hypotheses ----------------------------------------------------------------------------
class ClippedRegressor:
    """A fitted regressor whose predictions are clipped into ``[0, 1]``."""

    def __init__(self, estimator: BaseEstimator) -> None:
        self.estimator = estimator

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.clip(np.asarray(self.estimator.predict(X), dtype=float), 0.0, 1.0)
        return out


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

class LinearScore:
    """Linear score ``clip(<beta, [scaled x, 1]>, 0, 1)`` returned by :class:`HingeLPOracle`."""

    def __init__(self, beta: ArrayLike, lo: NDArray[np.float64], scale: NDArray[np.float64]) -> None:
        self.beta = np.asarray(beta, dtype=float)
        self.lo, self.scale = lo, scale

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        Xs = (np.asarray(X, dtype=float) - self.lo) / self.scale
        out: NDArray[np.float64] = np.clip(Xs @ self.beta[:-1] + self.beta[-1], 0.0, 1.0)
        return out


# ---- oracles ---------------------------------------------------------------------------------
class Oracle:
    """Base class. Subclasses set ``problems`` (learner problem classes of
    :mod:`fairopt.reductions.problems` they solve) and ``best_response``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherit_docs(cls)   # overrides without a docstring document what this class's method does


    problems: tuple[type, ...] = ()
    #: whether ``best_response`` returns an exact minimiser of the Lagrangian over its class;
    #: fitted estimators minimise a surrogate, so only enumeration is exact
    exact: bool = False
    #: the moment bound by :meth:`prepare`
    moment: Moment

    @fill_doc
    def prepare(self, moment: Moment, X: ArrayLike) -> Oracle:
        """Bind the oracle to a fitted moment and the training features.

        {learner_prepare}
        """
        if not issubclass(moment.problem, self.problems):
            raise ConfigError(f"{type(self).__name__} cannot answer best responses for the "
                              f"{moment.name!r} moment (a {moment.problem.__name__} problem); it solves "
                              f"{[p.__name__ for p in self.problems]}.")
        self.moment = moment
        self.X = X
        return self

    @fill_doc
    def best_response(self, lam: NDArray[np.float64]) -> Any:  # pragma: no cover - interface
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        {lam}

        {learner_best_response}
        """
        raise AttributeError("subclasses define best_response")
