"""Bounded, 1-Lipschitz losses on ``[0, 1]`` used by the fair-regression reductions.

Every loss follows the convention of Agarwal, Dudík & Wu (2019, Sec. 4.1): predictions are clipped
into ``[0, 1]`` before the loss is evaluated, so ``loss(y, u) = loss(y, 1)`` for ``u >= 1``. This is
what makes the discretised loss ``loss(y_cover, floor(u) + alpha/2)`` well defined on the top cell.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._docstrings import fill_doc, inherit_docs, register
from fairopt.errors import ConfigError


def _clip01(u: ArrayLike) -> NDArray[np.float64]:
    """``u`` as floats clipped into ``[0, 1]`` (the convention of every loss here)."""
    out: NDArray[np.float64] = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    return out


register("loss_arguments", """Parameters
----------
y : array-like
    Labels in ``[0, 1]``.
u : array-like
    Predictions, broadcast against ``y``.""")


class Loss:
    """Base class: ``value(y, u)`` and ``derivative(y, u)`` (in ``u``), both vectorised."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherit_docs(cls)   # overrides without a docstring document what this class's method does


    name = "loss"

    @fill_doc
    def value(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:  # pragma: no cover - interface
        """Loss of predicting ``u`` (clipped to ``[0, 1]``) for label ``y``.

        {loss_arguments}

        Returns
        -------
        ndarray
            Elementwise loss, in ``[0, 1]``.
        """
        raise AttributeError("subclasses define value")

    @fill_doc
    def derivative(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:  # pragma: no cover - interface
        """Derivative (a subgradient where needed) of the loss in ``u``.

        {loss_arguments}

        Returns
        -------
        ndarray
            Elementwise derivative.
        """
        raise AttributeError("subclasses define derivative")

    def __call__(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        return self.value(y, u)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquareLoss(Loss):
    r"""Square loss :math:`\ell(y,u) = (y-u)^2/2` of Example 1 (bounded by 1/2, 1-Lipschitz).

    Examples
    --------
    >>> SquareLoss().value([1.0, 0.0], [0.5, 0.5]).tolist()
    [0.125, 0.125]
    """

    name = "square"

    def value(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        u = _clip01(u)
        return 0.5 * (np.asarray(y, dtype=float) - u) ** 2

    def derivative(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        u = _clip01(u)
        out: np.ndarray = u - np.asarray(y, dtype=float)
        return out


class AbsoluteLoss(Loss):
    r"""Absolute loss :math:`\ell(y,u)=|y-u|`; the derivative is the subgradient ``sign(u-y)``.

    Examples
    --------
    >>> AbsoluteLoss().value([1.0], [0.25]).tolist()
    [0.75]
    """

    name = "absolute"

    def value(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        u = _clip01(u)
        return np.abs(np.asarray(y, dtype=float) - u)

    def derivative(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        u = _clip01(u)
        out: np.ndarray = np.sign(u - np.asarray(y, dtype=float))
        return out


class ScaledLogisticLoss(Loss):
    r"""Rescaled logistic loss of Example 2.

    The score :math:`u\in[0,1]` models :math:`P(Y=1\mid x)=\sigma(C(2u-1))` and

    .. math:: \ell(y,u) = \frac{\log\bigl(1+e^{-C(2y-1)(2u-1)}\bigr)}{2\log(1+e^{C})},

    which lies in ``[0, 1/2]`` and is 1-Lipschitz in each argument for every ``C > 0``.

    Parameters
    ----------
    scale : float, default=5.0
        The constant ``C``; probabilities range over ``[sigma(-C), sigma(C)]``.

    Examples
    --------
    >>> loss = ScaledLogisticLoss(scale=5.0)
    >>> loss.value([1.0, 0.0], [1.0, 1.0]).round(4).tolist()      # right, then wrong
    [0.0007, 0.5]
    """

    name = "logistic"

    def __init__(self, scale: float = 5.0):
        if not np.isfinite(scale) or scale <= 0:
            raise ConfigError(f"logistic scale C must be a positive number, got {scale!r}.")
        self.scale = float(scale)
        self._norm = 2.0 * np.logaddexp(0.0, self.scale)

    def margin(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        """Scaled margin ``C (2y - 1)(2u - 1)`` of the logistic loss.

        Parameters
        ----------
        y : array-like
            Labels in ``[0, 1]``.
        u : array-like
            Predictions, clipped to ``[0, 1]``.

        Returns
        -------
        ndarray
            Elementwise margin.
        """
        score = _clip01(u)
        return self.scale * (2.0 * np.asarray(y, dtype=float) - 1.0) * (2.0 * score - 1.0)

    def value(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        out: np.ndarray = np.logaddexp(0.0, -self.margin(y, u)) / self._norm
        return out

    def derivative(self, y: ArrayLike, u: ArrayLike) -> np.ndarray:
        s = 2.0 * np.asarray(y, dtype=float) - 1.0
        # d/du log(1+exp(-m)) = -sigma(-m) * dm/du, dm/du = 2 C s
        sig = 0.5 * (1.0 - np.tanh(0.5 * self.margin(y, u)))  # sigma(-m), overflow-free
        out: np.ndarray = -2.0 * self.scale * s * sig / self._norm
        return out

    def probability(self, u: ArrayLike) -> np.ndarray:
        """``P(Y=1)`` implied by score ``u``: ``sigma(C(2u-1))``."""
        score = _clip01(u)
        return 0.5 * (1.0 + np.tanh(0.5 * self.scale * (2.0 * score - 1.0)))

    def score_from_logit(self, logit: ArrayLike) -> np.ndarray:
        """Score ``u`` whose implied logit is ``logit`` (clipped into ``[0, 1]``)."""
        return np.clip((np.asarray(logit, dtype=float) / self.scale + 1.0) / 2.0, 0.0, 1.0)

    def __repr__(self) -> str:
        return f"ScaledLogisticLoss(scale={self.scale:g})"


def get_loss(loss: str | Loss, logistic_scale: float = 5.0) -> Loss:
    """Return a :class:`Loss` from a name (``"square"``, ``"logistic"``, ``"absolute"``) or instance.

    Examples
    --------
    >>> get_loss("square")
    SquareLoss()
    """
    if isinstance(loss, Loss):
        return loss
    if loss in ("square", "squared", "squared_error"):
        return SquareLoss()
    if loss in ("logistic", "log", "log_loss"):
        return ScaledLogisticLoss(logistic_scale)
    if loss in ("absolute", "absolute_error"):
        return AbsoluteLoss()
    raise ConfigError(f"loss={loss!r} is not supported; use 'square', 'logistic', 'absolute' "
                      "or a fairopt.reductions.losses.Loss instance.")
