"""Parameter validation of the estimators (part of :mod:`fairopt.validation`, which re-exports it).

Estimators declare scikit-learn ``_parameter_constraints`` and call :func:`validate_params` at the
start of ``fit``; :class:`ParameterError` is scikit-learn's ``InvalidParameterError`` and also the
fairopt types raised for bad parameters before (``ConfigError``, ``DataValidationError``).
"""
from __future__ import annotations

import numbers
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils._param_validation import Interval, InvalidParameterError, validate_parameter_constraints

from fairopt.errors import ConfigError, DataValidationError

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

__all__ = ["RANDOM_STATE", "ParameterError", "check_numbers", "check_options", "parameter_error", "validate_params"]


class ParameterError(ConfigError, DataValidationError, InvalidParameterError):
    """A constructor parameter is invalid: scikit-learn's ``InvalidParameterError``, also a
    :class:`~fairopt.errors.ConfigError` and :class:`~fairopt.errors.DataValidationError` (the
    types fairopt raised for bad parameters before), so every ``except`` clause written for one of
    them catches it. The message names the parameter and the accepted values.

    Examples
    --------
    >>> from sklearn.utils._param_validation import InvalidParameterError
    >>> issubclass(ParameterError, InvalidParameterError)
    True
    """


#: ``random_state`` as fairopt reads it (scikit-learn's, plus numpy Generators)
RANDOM_STATE = ["random_state", np.random.Generator]


#: parameter values that cannot change in place: a fit may skip re-validating them when unchanged
_SCALARS = (type(None), bool, int, float, str, np.bool_, np.integer, np.floating)


def _scalar_params_key(estimator: BaseEstimator) -> tuple[tuple[str, type, object], ...] | None:
    """``(name, type, value)`` of every constrained parameter when all are immutable scalars, else
    ``None`` (an estimator, a mapping or a ``Domain`` may be changed in place, so is always checked)."""
    key = []
    for name in estimator._parameter_constraints:
        value = getattr(estimator, name, _SCALARS)   # the tuple itself marks a missing attribute
        if value is _SCALARS or not isinstance(value, _SCALARS):
            return None
        key.append((name, type(value), value))
    return tuple(key)


def validate_params(estimator: BaseEstimator) -> None:
    """Check ``estimator``'s parameters against its ``_parameter_constraints`` (scikit-learn's
    ``validate_parameter_constraints``), raising :class:`ParameterError` that names the parameter.

    The check is a pure function of the parameter values, so when every constrained parameter is
    an immutable scalar (number, string, bool, None) and none changed since the last successful
    check on this instance (``set_params`` or attribute assignment both change them), it is
    skipped: a refit does not pay for it again.

    Examples
    --------
    >>> from fairopt.inprocessing import FairClassifier
    >>> try:
    ...     validate_params(FairClassifier(eps=1.5))
    ... except ParameterError as exc:
    ...     print(str(exc)[:40])
    The 'eps' parameter of FairClassifier mu
    """
    key = _scalar_params_key(estimator)
    if key is not None and estimator.__dict__.get("_validated_params") == key:
        return
    params = estimator.get_params(deep=False)   # read once: scikit-learn's _validate_params reads it again
    try:
        validate_parameter_constraints(estimator._parameter_constraints, params,
                                       caller_name=type(estimator).__name__)
    except InvalidParameterError as exc:
        raise ParameterError(str(exc)) from None
    # a bool is an Integral to Python, so Interval lets True through as 1, and an Interval open to
    # the right lets inf through: refuse both where a number (or a seed) is expected
    for name, constraints in estimator._parameter_constraints.items():
        value = params.get(name)
        if constraints == "no_validation" or "boolean" in constraints:
            continue
        numeric = [c for c in constraints if isinstance(c, Interval) or c == "random_state"]
        if not numeric:
            continue
        if isinstance(value, (bool, np.bool_)):
            raise parameter_error(estimator, name, "a number, not a boolean", value)
        if isinstance(value, numbers.Real) and not np.isfinite(float(value)):
            raise parameter_error(estimator, name, "a finite number", value)
    if key is not None:
        estimator.__dict__["_validated_params"] = key


def parameter_error(estimator: object, name: str, expected: str, value: object) -> ParameterError:
    """A :class:`ParameterError` worded like scikit-learn's, for checks that
    ``_parameter_constraints`` cannot express (elements of a sequence, cross-parameter rules).

    Examples
    --------
    >>> str(parameter_error(object(), "eps", "a float in [0, 1]", 2.0))
    "The 'eps' parameter of object must be a float in [0, 1]. Got 2.0 instead."
    """
    return ParameterError(f"The {name!r} parameter of {type(estimator).__name__} must be {expected}. "
                          f"Got {value!r} instead.")


def check_numbers(estimator: object, name: str, value: Any, *, low: float = 0.0, high: float | None = None,
                  low_open: bool = False, non_empty: bool = True) -> None:
    """Every entry of a scalar, sequence or ``{key: value}`` parameter is a finite number in
    ``[low, high]`` (``(low, high]`` with ``low_open``); raises :class:`ParameterError` naming it.

    Examples
    --------
    >>> check_numbers(object(), "eps", {"a": 0.1, "b": 0.2}, high=1.0)
    """
    vals = list(value.values()) if isinstance(value, Mapping) else np.ravel(np.asarray(value, dtype=object)).tolist()
    lo = "(" if low_open else "["
    want = f"finite numbers in {lo}{low:g}, {'inf' if high is None else format(high, 'g')}]"
    if non_empty and not vals:
        raise parameter_error(estimator, name, f"non-empty ({want})", value)
    for v in vals:
        ok = isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) and bool(np.isfinite(float(v)))
        ok = ok and (v > low if low_open else v >= low) and (high is None or v <= high)
        if not ok:
            raise parameter_error(estimator, name, want, value)


def check_options(estimator: object, name: str, options: Mapping[str, Any] | None, allowed: Collection[str],
                  what: str) -> dict[str, Any]:
    """``options`` (a mapping or None) with only keys in ``allowed``; unknown keys raise
    :class:`ParameterError` listing the valid names.

    Examples
    --------
    >>> check_options(object(), "solver_options", {"n_steps": 10}, ("n_steps",), "solver='sgd'")
    {'n_steps': 10}
    """
    opts = dict(options or {})
    unknown = sorted(k for k in opts if k not in allowed)
    if unknown:
        valid = ", ".join(sorted(allowed)) if allowed else "none"
        raise ParameterError(f"The {name!r} parameter of {type(estimator).__name__} has unknown key(s) {unknown} "
                             f"for {what}; valid keys: {valid}.")
    return opts
