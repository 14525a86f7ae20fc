"""Predictions an oracle kept on a hypothesis for the training features.

Re-exported by :mod:`fairopt.reductions.game`.
"""
from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

#: a hypothesis type (anything with ``predict``)
_H = TypeVar("_H")

#: attribute under which an oracle leaves a hypothesis's predictions on the training features
_TRAINING_PREDICTIONS = "_training_predictions"


def keep_training_predictions(h: _H, X: Any, pred: np.ndarray) -> _H:
    """Attach ``pred``, the predictions of ``h`` on the training features ``X``, to ``h``.

    An oracle that already computed them while fitting ``h`` leaves them here, so that the pool
    does not predict again; :func:`training_predictions` returns them for that same ``X`` object
    only, and the pool releases them once it has scored ``h`` (fitted models stay small).

    Parameters
    ----------
    h : hypothesis
        Any object with ``predict``.
    X : array-like
        The training features ``pred`` was computed on (compared by identity).
    pred : ndarray of shape (n_samples,)
        ``h.predict(X)``.

    Returns
    -------
    hypothesis
        ``h`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.oracles import ConstantHypothesis
    >>> X = np.zeros((3, 1))
    >>> h = keep_training_predictions(ConstantHypothesis(0.5), X, np.full(3, 0.5))
    >>> training_predictions(h, X).tolist(), training_predictions(h, X.copy()).tolist()
    ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    """
    setattr(h, _TRAINING_PREDICTIONS, (X, pred))
    return h


def training_predictions(h: Any, X: Any, release: bool = False) -> np.ndarray:
    """``h.predict(X)``, or the predictions an oracle kept on ``h`` for this very ``X``.

    Parameters
    ----------
    h : hypothesis
        Any object with ``predict``.
    X : array-like
        Features.
    release : bool, default=False
        Drop the kept predictions from ``h`` afterwards.

    Returns
    -------
    ndarray of shape (n_samples,)
        The predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.oracles import ConstantHypothesis
    >>> training_predictions(ConstantHypothesis(1.0), np.zeros((2, 1))).tolist()
    [1.0, 1.0]
    """
    kept = getattr(h, _TRAINING_PREDICTIONS, None)
    if kept is not None and release:
        delattr(h, _TRAINING_PREDICTIONS)
    if kept is not None and kept[0] is X:
        out: np.ndarray = kept[1]
        return out
    out = h.predict(X)
    return out
