"""Parameter validation of the estimators (part of :mod:`fairopt.validation`, which re-exports it).

Estimators declare ``_parameter_constraints`` in scikit-learn's vocabulary (so its conventions and
``check_estimator`` keep working) with fairopt's own small constraint types below, and call
:func:`validate_params` at the start of ``fit``: the one check of a constructor parameter, at the
public edge. Every refusal is a :class:`~fairopt.errors.ParameterError` (a ``ValueError``) whose
message names the parameter, what it must be and what it got, worded like scikit-learn's.

Constraints a parameter may list (any one satisfied accepts the value):

- ``None`` (the value ``None``), a type (``isinstance``), :class:`Interval`, :class:`StrOptions`,
  :class:`HasMethods`;
- the strings ``"array-like"``, ``"boolean"``, ``"random_state"``; or ``"no_validation"`` alone.

A number constraint refuses booleans (``True`` is an ``int`` to Python) and non-finite values
unless the interval reaches them.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairopt.errors import ParameterError

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

__all__ = [
    "ANY",
    "NONNEGATIVE",
    "RANDOM_STATE",
    "RATE",
    "RATIO",
    "HasMethods",
    "Interval",
    "ParameterError",
    "StrOptions",
    "check_count",
    "check_numbers",
    "check_options",
    "check_value",
    "parameter_error",
    "validate_parameter_constraints",
    "validate_params",
]


def _is_bool(value: object) -> bool:
    return isinstance(value, (bool, np.bool_))


class Interval:
    """Numbers of ``type`` (``numbers.Integral`` or ``numbers.Real``) in an interval.

    Parameters
    ----------
    type : type
        ``numbers.Integral`` or ``numbers.Real``; booleans never qualify.
    left, right : float or None
        Ends (``None``: unbounded on that side).
    closed : {"left", "right", "both", "neither"}
        Which ends belong to the interval.

    Examples
    --------
    >>> from numbers import Integral, Real
    >>> Interval(Real, 0, 1, closed="right").is_satisfied_by(0.0), str(Interval(Integral, 1, None, closed="left"))
    (False, 'an int in the range [1, inf)')
    """

    def __init__(self, type: type, left: float | None, right: float | None, *,
                 closed: Literal["left", "right", "both", "neither"]) -> None:
        if type not in (numbers.Integral, numbers.Real):
            raise TypeError(f"Interval type must be numbers.Integral or numbers.Real, got {type!r}.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got {closed!r}.")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def __contains__(self, value: float) -> bool:
        if isinstance(value, numbers.Real) and math.isnan(float(value)):
            return False
        lo_closed, hi_closed = self.closed in ("left", "both"), self.closed in ("right", "both")
        if self.left is not None and (value < self.left or (value == self.left and not lo_closed)):
            return False
        return not (self.right is not None and (value > self.right or (value == self.right and not hi_closed)))

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is a number of this type (not a boolean) inside the interval."""
        return isinstance(value, self.type) and not _is_bool(value) and value in self  # type: ignore[operator]

    def __str__(self) -> str:
        kind = "an int" if self.type is numbers.Integral else "a float"
        lo = "-inf" if self.left is None else f"{self.left:g}" if isinstance(self.left, float) else str(self.left)
        hi = "inf" if self.right is None else f"{self.right:g}" if isinstance(self.right, float) else str(self.right)
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"

    def __repr__(self) -> str:
        return f"Interval({self.type.__name__}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class StrOptions:
    """One of a set of strings.

    Examples
    --------
    >>> StrOptions({"tv", "kl"}).is_satisfied_by("kl"), str(StrOptions({"tv", "kl"}))
    (True, "a str among {'kl', 'tv'}")
    """

    def __init__(self, options: Iterable[str]) -> None:
        self.options = frozenset(options)

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is one of the strings."""
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(o) for o in sorted(self.options)) + "}"


class HasMethods:
    """An object with every method in ``methods`` (an estimator, say).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> HasMethods(["fit", "predict"]).is_satisfied_by(LinearRegression())
    True
    """

    def __init__(self, methods: str | Iterable[str]) -> None:
        self.methods = [methods] if isinstance(methods, str) else list(methods)

    def is_satisfied_by(self, value: object) -> bool:
        """Whether every method is a callable attribute of ``value``."""
        return all(callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self) -> str:
        names = [repr(m) for m in self.methods]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        return f"an object implementing {listed}"


#: the values a tolerance may take: a difference of rates or a share, a ratio of rates, a nonnegative
#: difference in other units, any finite number
RATE = Interval(numbers.Real, 0, 1, closed="both")
RATIO = Interval(numbers.Real, 0, 1, closed="right")
NONNEGATIVE = Interval(numbers.Real, 0, None, closed="left")
ANY = Interval(numbers.Real, None, None, closed="neither")


def _satisfies(constraint: Any, value: object) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    if hasattr(constraint, "is_satisfied_by"):   # the classes here, or any object with that method
        return bool(constraint.is_satisfied_by(value))
    if constraint == "array-like":
        return (hasattr(value, "__len__") or hasattr(value, "shape") or hasattr(value, "__array__")) \
            and not np.isscalar(value)
    if constraint == "boolean":
        return _is_bool(value)
    if constraint == "random_state":
        return value is None or isinstance(value, np.random.RandomState) or (
            isinstance(value, numbers.Integral) and not _is_bool(value) and 0 <= int(value) <= 2**32 - 1)
    raise TypeError(f"unknown parameter constraint {constraint!r}")


def _describe(constraint: Any) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__qualname__!r}"
    return {"array-like": "an array-like", "boolean": "an instance of 'bool'",
            "random_state": "an int in the range [0, 4294967295], an instance of 'numpy.random.RandomState' "
                            "or None"}.get(constraint, str(constraint)) if isinstance(constraint, str) \
        else str(constraint)


def check_value(name: str, value: object, constraints: list[Any] | str, owner: str) -> None:
    """Refuse ``value`` of parameter ``name`` of ``owner`` unless it satisfies one of
    ``constraints``; a number constraint also refuses booleans and non-finite values.

    Raises
    ------
    ParameterError
        Naming the parameter, what it must be, and the value.

    Examples
    --------
    >>> from numbers import Real
    >>> check_value("eps", 0.1, [Interval(Real, 0, 1, closed="both")], "selection_rate_parity")
    >>> try:
    ...     check_value("eps", "x", [Interval(Real, 0, 1, closed="both")], "selection_rate_parity")
    ... except ParameterError as exc:
    ...     print(exc)
    The 'eps' parameter of selection_rate_parity must be a float in the range [0, 1]. Got 'x' instead.
    """
    if constraints == "no_validation":
        return
    constraints = list(constraints)
    numeric = [c for c in constraints if isinstance(c, Interval) or c == "random_state"]
    if numeric and "boolean" not in constraints and _is_bool(value):
        raise ParameterError(f"The {name!r} parameter of {owner} must be a number, not a boolean. "
                             f"Got {value!r} instead.")
    if not any(_satisfies(c, value) for c in constraints):
        described = [_describe(c) for c in constraints]
        want = described[0] if len(described) == 1 else f"{', '.join(described[:-1])} or {described[-1]}"
        raise ParameterError(f"The {name!r} parameter of {owner} must be {want}. Got {value!r} instead.")
    if numeric and isinstance(value, numbers.Real) and not _is_bool(value) and not np.isfinite(float(value)):
        raise ParameterError(f"The {name!r} parameter of {owner} must be a finite number. Got {value!r} instead.")


def check_count(owner: str, name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]`` (a number of positions, items, ...): an integer,
    not ``2.5`` (which ``int()`` would quietly truncate), not a boolean.

    Examples
    --------
    >>> check_count("position_weights", "k", 3, high=5)
    3
    >>> try:
    ...     check_count("position_weights", "k", 2.5, high=5)
    ... except ParameterError as exc:
    ...     print(exc)
    The 'k' parameter of position_weights must be an int in the range [1, 5]. Got 2.5 instead.
    """
    check_value(name, value, [Interval(numbers.Integral, low, high, closed="both")], owner)
    assert isinstance(value, numbers.Integral)  # check_value lets integers only through
    return int(value)


def validate_parameter_constraints(constraints: Mapping[str, Any], params: Mapping[str, Any],
                                   caller_name: str) -> None:
    """Check every parameter in ``params`` that ``constraints`` declares (``check_value``).

    Examples
    --------
    >>> validate_parameter_constraints({"mode": [StrOptions({"a", "b"})]}, {"mode": "a"}, "Est")
    """
    for name, value in params.items():
        if name in constraints:
            check_value(name, value, constraints[name], caller_name)


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
    """Check ``estimator``'s parameters against its ``_parameter_constraints``, raising
    :class:`ParameterError` that names the parameter.

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
    validate_parameter_constraints(estimator._parameter_constraints, estimator.get_params(deep=False),
                                   caller_name=type(estimator).__name__)
    if key is not None:
        estimator.__dict__["_validated_params"] = key


def parameter_error(estimator: object, name: str, expected: str, value: object) -> ParameterError:
    """A :class:`ParameterError` worded like ``check_value``'s, for checks that
    ``_parameter_constraints`` cannot express (elements of a sequence, cross-parameter rules).

    Examples
    --------
    >>> str(parameter_error(object(), "eps", "a float in [0, 1]", 2.0))
    "The 'eps' parameter of object must be a float in [0, 1]. Got 2.0 instead."
    """
    owner = estimator if isinstance(estimator, str) else type(estimator).__name__
    return ParameterError(f"The {name!r} parameter of {owner} must be {expected}. Got {value!r} instead.")


def check_numbers(estimator: object, name: str, value: Any, *, low: float = 0.0, high: float | None = None,
                  low_open: bool = False, non_empty: bool = True) -> None:
    """Every entry of a scalar, sequence or ``{key: value}`` parameter is a finite number in
    ``[low, high]`` (``(low, high]`` with ``low_open``); raises :class:`ParameterError` naming it.
    ``estimator`` is the owner (an object, or a function's name as a string).

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
        ok = isinstance(v, numbers.Real) and not _is_bool(v) and bool(np.isfinite(float(v)))
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
