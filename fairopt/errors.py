"""Typed errors raised by fairopt.

Every error says what went wrong *and* what to do about it. Solver-side failures carry the
status and the solver log so that callers can inspect them programmatically.

One error type per kind of mistake::

    FairoptError
    ├── DataValidationError (ValueError)    the data: X, y, groups, weights, scores, a file's contents
    │   └── DataTypeError (TypeError)       a value of the wrong type in a numeric-only input
    ├── ConfigError (ValueError)            the configuration: a model card key, a solver spec
    │   ├── ParameterError                  a parameter value (estimator, block builder, tolerance)
    │   ├── UnknownSolverError              a solver no back end knows (also SolverNotAvailableError)
    │   └── WrongProblemClassError          a solver that cannot take the problem's class (likewise)
    ├── OutputError (OSError)               a result or export file that cannot be written
    ├── DataNotFoundError (FileNotFoundError)
    ├── SolverNotAvailableError (RuntimeError)
    ├── SolverError (RuntimeError)          the solve failed; carries ``status`` and ``log``
    │   ├── SolverLimitError, InfeasibleError, UnboundedError
    └── NotFittedError                      scikit-learn's (a ValueError and AttributeError)

A bad parameter is refused once, where it enters (an estimator's ``fit``, a block builder, a
tolerance update), always as :class:`ParameterError`: a ``ValueError``, as scikit-learn's
conventions expect of a bad constructor parameter.
"""
from __future__ import annotations

from typing import Any


class FairoptError(Exception):
    """Base class of every error raised by fairopt."""


class DataValidationError(FairoptError, ValueError):
    """Input data or parameters are malformed (wrong shape, NaN, unknown group, bad target...)."""


class DataTypeError(DataValidationError, TypeError):
    """A value of the wrong type in a numeric-only input (a string, a dict or a list where a number
    is needed); the message names the column and says what to pass.

    Both a :class:`DataValidationError` (so a ``ValueError``) and a ``TypeError``, as numpy's
    ``AxisError`` is both an ``IndexError`` and a ``ValueError``: ``except ValueError`` written for
    fairopt's data errors and ``except TypeError`` written for numpy's refusal of such a value (and
    scikit-learn's checks, which expect the latter) both catch it.

    Examples
    --------
    >>> from fairopt.errors import DataTypeError, DataValidationError
    >>> issubclass(DataTypeError, DataValidationError) and issubclass(DataTypeError, TypeError)
    True
    """


class SizeLimitError(DataValidationError, MemoryError):
    """A request would allocate more memory than fairopt's limit for it; ``needed_bytes`` is what
    it would take, ``limit_bytes`` the limit, and the message says how to raise the limit or avoid
    the allocation.

    Examples
    --------
    >>> from fairopt.errors import SizeLimitError
    >>> err = SizeLimitError("too large", needed_bytes=2**33, limit_bytes=2**30)
    >>> err.needed_bytes // 2**30, isinstance(err, MemoryError)
    (8, True)
    """

    def __init__(self, message: str, needed_bytes: int = 0, limit_bytes: int = 0) -> None:
        super().__init__(message)
        self.needed_bytes = int(needed_bytes)
        self.limit_bytes = int(limit_bytes)


class ConfigError(FairoptError, ValueError):
    """A model card or solver configuration is invalid; the message names the offending key."""


class ParameterError(ConfigError):
    """A parameter value is outside what it accepts (a wrong type, a number out of its range, an
    unknown option) -- an estimator's constructor parameter, a block builder's argument, a
    tolerance set on a built block. The message names the parameter, what it must be and what it
    got (``"The 'eps' parameter of FairClassifier must be ... Got 1.5 instead."``).

    Examples
    --------
    >>> from fairopt.errors import ConfigError, ParameterError
    >>> issubclass(ParameterError, ConfigError) and issubclass(ParameterError, ValueError)
    True
    """


class OutputError(FairoptError, OSError):
    """A result or export file could not be written (a file or folder in the way, a path too long,
    disk full, a file-size limit); the message names the path, and a previous file there is kept.

    Examples
    --------
    >>> from fairopt.errors import OutputError
    >>> issubclass(OutputError, OSError)
    True
    """


class DataNotFoundError(FairoptError, FileNotFoundError):
    """A benchmark data file is missing; the message says where to put it and where it comes from."""


class SolverNotAvailableError(FairoptError, RuntimeError):
    """The requested back end or solver is not installed; ``available`` lists what would work."""

    def __init__(self, message: str, available: list[str] | None = None):
        self.available = list(available or [])
        if self.available:
            message = f"{message} Installed alternatives: {', '.join(self.available)}."
        super().__init__(message)


class UnknownSolverError(ConfigError, SolverNotAvailableError):
    """A solver name no back end knows (a typo, or a solver fairopt does not support): a
    configuration error that also lists the installed alternatives in ``available``."""


class WrongProblemClassError(ConfigError, SolverNotAvailableError):
    """A back end or inner solver that cannot take the problem's class (an LP solver asked for
    a smooth problem, say): a configuration error whose message lists the back ends that can,
    and whose ``available`` lists the installed ``backend:solver`` pairs that would work."""


class SolverError(FairoptError, RuntimeError):
    """The solver failed (numerical trouble, crash, unexpected status)."""

    def __init__(self, message: str, status: Any = None, log: str = "") -> None:
        self.status = status
        self.log = log
        super().__init__(message)


class SolverLimitError(SolverError):
    """The solver stopped at a time or iteration limit before proving optimality (raised when an
    optimal solution was required); ``status`` says which limit."""


class InfeasibleError(SolverError):
    """The program (typically its fairness constraints) is infeasible.

    Attributes
    ----------
    program : str
        Name of the program that was infeasible.
    constraint : str or None
        Name of the constraint block identified as the cause, when known.
    tightest : dict or None
        The tightest feasible parameter setting, when it could be computed
        (for instance ``{"eps": 0.031}``).
    row : int or None
        Row of ``constraint`` identified as the cause (0-based within the block), when known.
    row_label : str or None
        That row's label (a fairness block's row, e.g. ``"rate[a] - t <= eps"``), when known.
    """

    def __init__(self, message: str, program: str = "", constraint: str | None = None,
                 tightest: dict[str, Any] | None = None, status: Any = None, log: str = "", row: int | None = None,
                 row_label: str | None = None) -> None:
        self.program = program
        self.constraint = constraint
        self.tightest = tightest
        self.row = row
        self.row_label = row_label
        super().__init__(message, status=status, log=log)


class UnboundedError(SolverError):
    """The program is unbounded (a modelling error: a missing bound or constraint)."""

    def __init__(self, message: str, program: str = "", status: Any = None, log: str = "") -> None:
        self.program = program
        super().__init__(message, status=status, log=log)


def _make_not_fitted_error() -> type:
    # built on first use: subclassing scikit-learn's error needs scikit-learn, whose import costs
    # over a second, and ``import fairopt`` must not pay it (PEP 562 module ``__getattr__`` below)
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

    class NotFittedError(FairoptError, _SklearnNotFittedError):  # type: ignore[misc, unused-ignore]  # strict only: sklearn ships no stubs
        """An estimator was used before ``fit``.

        A subclass of scikit-learn's ``NotFittedError`` (itself a ``ValueError`` and an
        ``AttributeError``), so scikit-learn utilities and ``except`` clauses written for it catch
        it. The class is created when first accessed, so ``import fairopt.errors`` does not import
        scikit-learn.

        Examples
        --------
        >>> from fairopt.errors import NotFittedError
        >>> from sklearn.exceptions import NotFittedError as SklearnNotFittedError
        >>> issubclass(NotFittedError, SklearnNotFittedError)
        True
        """

    NotFittedError.__module__ = __name__
    NotFittedError.__qualname__ = "NotFittedError"  # pickles as fairopt.errors.NotFittedError
    return NotFittedError


def __getattr__(name: str) -> type:
    if name == "NotFittedError":
        cls = _make_not_fitted_error()
        globals()["NotFittedError"] = cls  # cached: one class object for every importer
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class NotOptimalWarning(RuntimeWarning):
    """A fit ended without a certificate of optimality or with a constraint violated on the training
    data (iteration cap, duality gap above tolerance). The message says what to raise or loosen;
    turn it into an error with ``warnings.simplefilter("error", NotOptimalWarning)``."""


class CertificateWarning(RuntimeWarning):
    """A fit with ``confidence`` certified a population gap above the requested ``eps`` (the rule
    was fitted to the tightened tolerance, but its gap on the held-out certification rows came out
    larger). ``certified_eps_`` holds what is certified; refit with a smaller ``eps``, more rows or a
    lower confidence."""
