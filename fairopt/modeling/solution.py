"""Solver-independent results: one status enum and a named :class:`Solution`."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairopt._docstrings import fill_doc, register

register("example_toy_program", """
>>> import numpy as np
>>> from fairopt.modeling import Program
>>> prog = Program("toy")
>>> x = prog.add_variables("x", shape=(2,), lb=0.0)
>>> budget = prog.add_constraints("budget", {"x": np.ones((1, 2))}, ub=1.0)
>>> prog.set_objective(linear={"x": [-1.0, -2.0]})""")


class Status(str, enum.Enum):
    """Outcome of a solve, shared by every back end.

    Examples
    --------
    >>> Status("optimal") is Status.OPTIMAL
    True
    >>> Status.TIME_LIMIT.value
    'time_limit'
    """

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    NUMERICAL = "numerical"
    ERROR = "error"

    def __str__(self) -> str:  # "optimal", not "Status.OPTIMAL"
        return self.value

    @classmethod
    def parse(cls, value: object) -> Status:
        """Read a status from its value or from the words other loops use: a game that
        ``"converged"`` is optimal, one stopped at ``"max_iter"`` hit its iteration limit."""
        if isinstance(value, cls):
            return value
        text = str(value).strip().lower().replace(" ", "_")
        text = _ALIASES.get(text, text)
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"unknown status {value!r}; one of {[s.value for s in cls]} or "
                             f"{sorted(_ALIASES)}.") from None


_ALIASES = {"converged": "optimal", "max_iter": "iteration_limit", "max_iterations": "iteration_limit",
            "time_limit_reached": "time_limit", "infeasible_or_unbounded": "infeasible_or_unbounded"}


@fill_doc
@dataclass
class Solution:
    """Result of solving a :class:`~fairopt.modeling.Program`.

    Attributes
    ----------
    status : Status
        Mapped solver status. Only ``Status.OPTIMAL`` is a success; a time or iteration
        limit returns the best point found with ``is_optimal == False``.
    objective : float
        Objective value in the program's own sense (including its constant).
    primal : dict of str to ndarray
        Variable values, shaped like each variable block.
    dual : dict of str to ndarray
        One value per constraint row, with the single sign convention of fairopt:
        ``dual[row] = d(optimal objective) / d(active bound of that row)``. For a
        minimisation, a row pressing on its lower bound has a non-negative dual and a
        row pressing on its upper bound a non-positive one. Fairness rows' duals are the
        *price of fairness*.
    reduced_cost : dict of str to ndarray
        Same convention for variable bounds (derivative of the optimum with respect to the
        active bound of each variable), where the back end reports it.
    mip_gap : float or None
        For a program with integer variables: the relative gap between the incumbent
        ``objective`` and ``objective_bound`` when the solver stopped (``None`` for LP/QP). A
        MIP is ``OPTIMAL`` when this gap reached the solver's tolerance (HiGHS option
        ``mip_rel_gap``); at a time limit the incumbent comes back as ``TIME_LIMIT``.
    objective_bound : float or None
        The solver's proven bound on the optimum (user sense), for a MIP.
    relaxation : Solution or None
        The LP relaxation's solution (with its duals), when requested with
        ``Program.solve(relaxation_duals=True)``; a MIP itself has no duals.
    info : dict
        Diagnostics of a solve path that is not a single solver call (for example the column
        counts and residuals of column generation); empty otherwise.

    Examples
    --------
    {example_toy_program}
    >>> sol = prog.solve("highs")
    >>> sol.status, sol.is_optimal, round(sol.objective, 6)
    (<Status.OPTIMAL: 'optimal'>, True, -2.0)
    >>> sol.primal["x"].round(6).tolist(), sol.dual["budget"].round(6).tolist()
    ([0.0, 1.0], [-2.0])
    """

    status: Status
    objective: float
    primal: dict[str, np.ndarray]
    dual: dict[str, np.ndarray]
    backend: str
    solver: str
    solve_seconds: float
    iterations: int | None = None
    reduced_cost: dict[str, np.ndarray] = field(default_factory=dict)
    log: str = ""
    program: str = ""
    mip_gap: float | None = None
    objective_bound: float | None = None
    relaxation: Solution | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def is_optimal(self) -> bool:
        """Whether the solver proved optimality (``status is Status.OPTIMAL``)."""
        return self.status is Status.OPTIMAL

    def __repr__(self) -> str:
        return (f"Solution(program={self.program!r}, status={self.status.value}, "
                f"objective={self.objective:.10g}, backend={self.backend!r}, solver={self.solver!r}, "
                f"solve_seconds={self.solve_seconds:.3g})")


class RawResult:
    """What a back end's ``_run`` returns, in fairopt's sign convention for the internal
    minimisation: ``y = d f*/d(row bound)``, ``z = d f*/d(variable bound)``. ``basic`` says
    that ``(x, y, z)`` is a vertex with the duals of its basis (a simplex or crossover result),
    which are already the unique multipliers wherever they are unique."""

    __slots__ = ("basic", "bound", "iterations", "log", "mip_gap", "objective", "status", "x", "y", "z")

    def __init__(self, status: Status, x: np.ndarray | None = None, y: np.ndarray | None = None,
                 z: np.ndarray | None = None, iterations: int | None = None, log: str = "",
                 objective: float | None = None, mip_gap: float | None = None,
                 bound: float | None = None) -> None:
        self.status, self.x, self.y, self.z = status, x, y, z
        self.iterations, self.log, self.objective = iterations, log, objective
        self.mip_gap, self.bound = mip_gap, bound  # MIP only: relative gap, dual bound
        self.basic = False


@dataclass
class NativeResult:
    """What a back end's smooth solve returns: its last iterate and why it stopped.

    Algorithms on the oracle (native, scipy) give ``x``; declarative forms (cvxpy, pyomo) give
    ``x = None``, the named blocks in ``primal``, the multipliers in ``dual`` and their own
    ``objective``.

    Examples
    --------
    >>> NativeResult(np.zeros(2), 3, Status.OPTIMAL).solver
    'native'
    """

    x: np.ndarray | None
    iterations: int
    status: Status            # OPTIMAL (own test passed), TIME_LIMIT, ITERATION_LIMIT, NUMERICAL
    log: str = ""
    solver: str = "native"
    primal: dict[str, Any] = field(default_factory=dict)   # extra named values (e.g. multipliers)
    dual: dict[str, Any] = field(default_factory=dict)
    objective: float | None = None
