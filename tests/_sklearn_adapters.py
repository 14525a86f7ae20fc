"""Test helper for scikit-learn's estimator checks: each fairopt estimator with the groups a
check cannot pass supplied from the data.

The checks call ``fit(X, y)`` and ``predict(X)``; fairopt's fairness estimators need
``sensitive_features`` (as fairlearn's do). The adapter subclasses add nothing else: when a call
has no ``sensitive_features`` it gets a group read off each row's first feature (a function of
the row alone, so subsets, permutations and refits see the same groups; for the fit-only
resamplers, optionally adjusted so every (label, group) cell is observed), and everything else --
validation, the fit, the predictions -- is the estimator's own code.
"""
from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from fairopt.validation import num_rows


def _first_feature(X) -> np.ndarray | None:
    """Every row's first feature as finite floats (``None`` when it is not numeric)."""
    X = X.to_numpy() if hasattr(X, "to_numpy") else X
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    try:
        first = np.asarray(X, dtype=float).reshape(len(X), -1)[:, 0]
    except (TypeError, ValueError, IndexError):
        return None
    return np.nan_to_num(first, nan=0.0, posinf=0.0, neginf=0.0)


def row_groups(X) -> np.ndarray:
    """Group 0/1 of every row from its first feature (parity of ``floor(1001.5 x)``: mixed for small
    integer codes and for floats alike)."""
    first = _first_feature(X)
    if first is None:
        return np.arange(num_rows(X)) % 2
    return (np.floor(first * 1001.5) % 2).astype(int)


def covering_groups(X, y, sample_weight=None) -> np.ndarray:
    """:func:`row_groups`, except that a label whose rows (of positive weight) all fell in one group
    has its rows with the smallest first feature (its first row if they all share it) moved to the
    other group, so every (label, group) cell is observed whenever the label has two rows. The moved
    rows are chosen by value where possible, so repeating a row and weighting it give the same groups.

    Only for fit-only estimators (the resamplers): the groups then depend on the labels, which a
    predict-time call does not see."""
    groups = row_groups(X)
    if y is None or not len(groups):
        return groups
    labels = np.asarray(y).reshape(len(groups), -1)[:, 0].astype(str)
    first = _first_feature(X)
    first = np.arange(len(groups), dtype=float) if first is None else first
    try:     # malformed weights are the estimator's to refuse: then every row counts here
        weights = np.asarray(sample_weight, dtype=float).ravel() if sample_weight is not None else None
    except (TypeError, ValueError):
        weights = None
    live = weights > 0 if weights is not None and weights.shape == groups.shape else np.ones(len(groups), bool)
    for label in np.unique(labels[live]):          # a loop over labels, not rows
        rows = live & (labels == label)
        if rows.sum() < 2 or np.unique(groups[rows]).size > 1:
            continue
        if np.unique(first[rows]).size >= 2:
            moved = (labels == label) & (first == first[rows].min())
        else:                                       # identical first features: move the label's first row
            moved = np.zeros(len(groups), bool)
            moved[np.argmax(rows)] = True
        groups[moved] = 1 - groups[rows][0]
    return groups


def _supply(method):
    sig = inspect.signature(method)

    @functools.wraps(method)
    def wrapped(self, X, *args, **kwargs):
        bound = sig.bind_partial(self, X, *args, **kwargs).arguments
        if bound.get("sensitive_features") is None and X is not None:
            kwargs["sensitive_features"] = row_groups(X)
        return method(self, X, *args, **kwargs)
    return wrapped


def _supply_fit(method, cover_cells: bool = False):
    @functools.wraps(method)
    def fit(self, X, y=None, *args, **kwargs):
        if not args and kwargs.get("sensitive_features") is None and X is not None:
            kwargs["sensitive_features"] = (covering_groups(X, y, kwargs.get("sample_weight")) if cover_cells
                                            else row_groups(X))
        return method(self, X, y, *args, **kwargs)
    return fit


_METHODS = ("predict", "predict_proba", "decision_function", "transform", "score")


def _unit_target(fit, predict):
    """Regressors whose targets must lie in [0, 1] (the bounded-loss reductions): the check's
    targets are rescaled affinely into [0, 1] at fit, as the estimators' error message says to,
    and predictions mapped back, so R^2 and the other checks read the original scale."""
    @functools.wraps(fit)
    def fit_unit(self, X, y=None, *args, **kwargs):
        y_arr = np.asarray(y, dtype=float) if y is not None else None
        if y_arr is not None and y_arr.size and np.isfinite(y_arr).all() and y_arr.ndim <= 2:
            lo, span = float(y_arr.min()), float(np.ptp(y_arr)) or 1.0
            self._lo, self._span = lo, span
            y = (y_arr - lo) / span
        return fit(self, X, y, *args, **kwargs)

    @functools.wraps(predict)
    def predict_unit(self, X, *args, **kwargs):
        return predict(self, X, *args, **kwargs) * getattr(self, "_span", 1.0) + getattr(self, "_lo", 0.0)
    return fit_unit, predict_unit


def with_groups(cls, unit_target: bool = False, cover_cells: bool = False):
    """``cls`` whose ``fit`` (and predict-time methods taking ``sensitive_features``) get groups
    from the rows when none are passed (and, with ``unit_target``, targets rescaled into [0, 1];
    with ``cover_cells``, fit-time groups that observe every (label, group) cell, see
    :func:`covering_groups`). Defined at module level, so it pickles."""
    ns = {"__module__": __name__, "__doc__": cls.__doc__, "fit": _supply_fit(cls.fit, cover_cells)}
    for name in _METHODS:
        meth = getattr(cls, name, None)
        if meth is not None and "sensitive_features" in inspect.signature(meth).parameters:
            ns[name] = _supply(meth)
    if "fit_transform" in cls.__dict__:
        ns["fit_transform"] = _supply_fit(cls.fit_transform)
    if unit_target:
        from sklearn.base import RegressorMixin
        ns["fit"], ns["predict"] = _unit_target(ns["fit"], cls.predict)
        ns["score"] = RegressorMixin.score     # R^2 of the mapped-back predictions
    adapted = type(cls.__name__, (cls,), ns)
    adapted.__qualname__ = f"{cls.__name__}WithGroups"
    setattr(sys.modules[__name__], adapted.__qualname__, adapted)
    return adapted
