"""Exact optimal-value curves of linear programs whose row bounds move with one parameter.

A fairness tolerance ``eps`` enters an LP through the bounds of its fairness rows,
``lb0 + eps * dlb <= A x <= ub0 + eps * dub``. For a minimisation the optimal value ``V(eps)``
is then a convex, piecewise-linear function of ``eps`` (the value of an LP is convex in its
right-hand side), and the duals of the moving rows give a subgradient,
``dV/deps = sum_i y_i * d_i``, with ``d_i`` the derivative of the bound that is active in row
``i``. :func:`value_curve` finds every breakpoint of ``V`` on an interval by the sandwich
(Eisner–Severance) method: the tangent lines at the two ends of an interval meet at ``m``;
if ``V(m)`` lies on them, ``V`` is exactly those two lines there and ``m`` is a breakpoint
(or the slopes agree and ``V`` is one line); otherwise the interval splits at ``m``. Each
solve re-uses one compiled model, so back ends with warm starts (HiGHS' dual simplex)
re-start from the previous basis, and the number of solves is at most about twice the number
of breakpoints plus two.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from fairopt.errors import DataValidationError, InfeasibleError
from fairopt.modeling.program import Program
from fairopt.modeling.spec import SolverSpec

__all__ = ["MovingRows", "ParametricProblem", "ValueCurve", "value_curve"]


@dataclass(frozen=True)
class MovingRows:
    """Bounds of one constraint block as affine functions of the parameter ``eps``.

    ``lb(eps) = lb0 + eps * dlb`` and ``ub(eps) = ub0 + eps * dub`` (arrays with one entry per
    row of the block, or scalars).

    Examples
    --------
    >>> rows = MovingRows("gap", lb0=0.0, ub0=0.0, dlb=-1.0, dub=1.0)   # |A x| <= eps
    >>> rows.bounds(0.25)
    (array([-0.25]), array([0.25]))
    """

    name: str
    lb0: ArrayLike = 0.0
    ub0: ArrayLike = 0.0
    dlb: ArrayLike = 0.0
    dub: ArrayLike = 0.0

    def bounds(self, eps: float, rows: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds at ``eps`` (arrays of length ``rows``)."""
        lb = np.broadcast_to(np.asarray(self.lb0, dtype=float) + eps * np.asarray(self.dlb, dtype=float), (rows,))
        ub = np.broadcast_to(np.asarray(self.ub0, dtype=float) + eps * np.asarray(self.dub, dtype=float), (rows,))
        return np.array(lb), np.array(ub)

    def slope(self, dual: np.ndarray, rows: int) -> float:
        """``sum_i y_i d_i``: a row's dual times the derivative of its active bound.

        fairopt's duals are ``d objective / d bound`` of the active side, so a negative dual of
        a minimisation marks an active upper bound and a positive one an active lower bound.
        """
        y = np.asarray(dual, dtype=float).reshape(-1)
        dlb = np.broadcast_to(np.asarray(self.dlb, dtype=float), (rows,))
        dub = np.broadcast_to(np.asarray(self.dub, dtype=float), (rows,))
        return float(np.where(y < 0, y * dub, y * dlb).sum())


@dataclass
class ParametricProblem:
    """An LP whose fairness rows widen with a tolerance ``eps``: what an exact frontier needs.

    Attributes
    ----------
    program : Program
        The linear program (built at any ``eps``; the moving rows' bounds are reset per solve).
    rows : list of MovingRows
        The rows whose bounds move with ``eps``.
    eps_min : float
        Smallest ``eps`` at which the program is feasible.
    eps_max : float
        A tolerance beyond which the constraint no longer binds (the curve is flat after it).
    objective : str
        What the program's objective measures, in the method's own units.
    scale, offset : float
        The method's objective is ``scale * V + offset``, with ``V`` the value of the
        minimisation form (the program's objective, negated for a maximisation).

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("toy")
    >>> _ = prog.add_variables("x", shape=(1,), lb=0.0, ub=1.0)
    >>> _ = prog.add_constraints("gap", {"x": [[1.0]]}, lb=0.0, ub=0.0)
    >>> ParametricProblem(prog, [MovingRows("gap", dub=1.0)], 0.0, 1.0, "cost").eps_max
    1.0
    """

    program: Program
    rows: list[MovingRows]
    eps_min: float
    eps_max: float
    objective: str
    scale: float = 1.0
    offset: float = 0.0


@dataclass
class ValueCurve:
    """The optimal value ``V(eps)`` of a parametric LP on an interval: linear between ``knots``.

    Attributes
    ----------
    knots : ndarray
        Increasing parameter values, the interval's ends included, between which ``V`` is linear.
    values : ndarray
        ``V`` at the knots.
    slopes : ndarray
        Slope of ``V`` on each of the ``len(knots) - 1`` segments.
    breakpoints : ndarray
        The knots inside the interval where the slope changes (by more than ``slope_tol``).
    solves : int
        LP solves used (each warm-started from the previous one where the back end can).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("toy")                     # min -x1 - 2 x2, x <= 1, |x1 - x2| <= eps
    >>> _ = prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    >>> _ = prog.add_constraints("gap", {"x": np.array([[1.0, -1.0]])}, lb=0.0, ub=0.0)
    >>> _ = prog.add_constraints("budget", {"x": np.ones((1, 2))}, ub=1.0)
    >>> prog.set_objective(linear={"x": [-1.0, -2.0]})
    >>> curve = value_curve(prog, [MovingRows("gap", dlb=-1.0, dub=1.0)], 0.0, 2.0)
    >>> np.round(curve.breakpoints, 6).tolist(), np.round(curve([0.0, 0.5, 2.0]), 6).tolist()
    ([1.0], [-1.5, -1.75, -2.0])
    """

    knots: np.ndarray
    values: np.ndarray
    slopes: np.ndarray
    breakpoints: np.ndarray
    solves: int = 0
    duals: dict[float, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def __call__(self, eps: ArrayLike) -> np.ndarray:
        """``V`` at ``eps`` (inside the interval), by linear interpolation between the knots."""
        e = np.asarray(eps, dtype=float)
        lo, hi = self.knots[0], self.knots[-1]
        if np.any(e < lo - 1e-12) or np.any(e > hi + 1e-12):
            raise DataValidationError(f"eps outside the curve's interval [{lo}, {hi}].")
        value: np.ndarray = np.interp(e, self.knots, self.values)
        return value

    def slope_at(self, eps: ArrayLike) -> np.ndarray:
        """Right derivative of ``V`` at ``eps`` (the last segment's slope at the right end)."""
        e = np.asarray(eps, dtype=float)
        idx = np.clip(np.searchsorted(self.knots, e, side="right") - 1, 0, len(self.slopes) - 1)
        return self.slopes[idx]


class _Oracle:
    """One compiled model re-solved at each parameter value: value and subgradient."""

    def __init__(self, program: Program, rows: Sequence[MovingRows], solver: Any) -> None:
        names = [r.name for r in rows]
        unknown = [n for n in names if n not in program.constraints]
        if unknown:
            raise DataValidationError(f"value_curve: unknown constraint blocks {unknown}; the program has "
                                      f"{list(program.constraints)}.")
        if program.problem_class != "LP":
            raise DataValidationError(f"value_curve needs a linear program (its value is piecewise linear in the "
                                      f"bounds); {program.name!r} is a {program.problem_class}.")
        self.rows = list(rows)
        self.sizes = [program.constraints[r.name].rows for r in rows]
        self.sign = 1.0 if program.sense == "minimize" else -1.0
        self.model = program.compile(solver)
        self.solves = 0

    def __call__(self, eps: float) -> tuple[float, float, dict[str, np.ndarray]]:
        for r, m in zip(self.rows, self.sizes, strict=True):
            lb, ub = r.bounds(eps, m)
            self.model.set_constraint_bounds(r.name, lb, ub)
        sol = self.model.solve(require_optimal=True)
        self.solves += 1
        duals = {r.name: np.asarray(sol.dual[r.name], dtype=float) for r in self.rows}
        # minimisation form: V = sign * objective, duals scale the same way
        slope = sum(r.slope(self.sign * duals[r.name], m) for r, m in zip(self.rows, self.sizes, strict=True))
        return self.sign * float(sol.objective), float(slope), duals


def value_curve(program: Program, rows: Sequence[MovingRows], eps_min: float, eps_max: float, *,
                solver: str | SolverSpec | Mapping[str, Any] | None = None, tol: float = 1e-9,
                max_solves: int = 10_000) -> ValueCurve:
    """Optimal value of ``program`` as an exact piecewise-linear function of ``eps``.

    Parameters
    ----------
    program : Program
        A linear program (minimise or maximise); for a maximisation the curve is of the
        objective itself (concave), computed on its negation.
    rows : sequence of MovingRows
        The constraint blocks whose bounds move with ``eps``.
    eps_min, eps_max : float
        The interval; the program must be feasible at ``eps_min`` (for fairness rows that widen
        with ``eps``, then everywhere above it).
    solver : str, SolverSpec, mapping or None
        LP solver (``None``: the registry's default for LPs).
    tol : float, default 1e-9
        A point is on a tangent line when their values differ by at most ``tol * (1 + |V|)``;
        slopes that differ by less than ``tol * (1 + |slope|)`` are one slope.
    max_solves : int, default 10000
        Bound on LP solves (a curve with more breakpoints raises).

    Returns
    -------
    ValueCurve

    Raises
    ------
    InfeasibleError
        The program is infeasible at ``eps_min`` (the message says so; raise ``eps_min``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("toy")
    >>> _ = prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    >>> _ = prog.add_constraints("gap", {"x": np.array([[1.0, -1.0]])}, lb=0.0, ub=0.0)
    >>> prog.set_objective(linear={"x": [0.0, -1.0]})
    >>> value_curve(prog, [MovingRows("gap", dlb=-1.0, dub=1.0)], 0.0, 1.0).breakpoints.size
    0
    """
    lo, hi = float(eps_min), float(eps_max)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi < lo:
        raise DataValidationError(f"value_curve needs finite eps_min <= eps_max, got [{eps_min}, {eps_max}].")
    oracle = _Oracle(program, rows, solver)
    try:
        v_lo, s_lo, d_lo = oracle(lo)
    except InfeasibleError as err:
        raise InfeasibleError(f"the program is infeasible at eps = {lo}: start the curve at a larger eps. {err}",
                              program=program.name) from None
    points: dict[float, tuple[float, float]] = {lo: (v_lo, s_lo)}
    duals = {lo: d_lo}
    if hi > lo:
        v_hi, s_hi, duals[hi] = oracle(hi)
        points[hi] = (v_hi, s_hi)
    breaks: dict[float, tuple[float, float]] = {}   # breakpoint -> (left slope, right slope)
    width = max(hi - lo, 1.0)
    stack = [(lo, hi)] if hi > lo else []
    while stack:
        a, b = stack.pop()
        (va, sa), (vb, sb) = points[a], points[b]
        if abs(sb - sa) <= tol * (1 + abs(sa) + abs(sb)):
            continue                                   # one line on [a, b]
        m = (vb - va + sa * a - sb * b) / (sa - sb)    # where the two tangents meet
        if not a < m < b or min(m - a, b - m) <= 1e-12 * width:
            # the tangents meet at an end (within rounding): the kink is there
            m = float(np.clip(m, a, b))
            if a < m < b:
                breaks[m] = (sa, sb)
                points[m] = (va + sa * (m - a), sb)
            continue
        if oracle.solves >= max_solves:
            raise DataValidationError(f"value_curve: more than {max_solves} solves; raise max_solves or narrow "
                                      f"the interval.")
        vm, sm, duals[m] = oracle(m)
        if vm - (va + sa * (m - a)) <= tol * (1 + abs(vm)):
            breaks[m] = (sa, sb)                        # V is the two tangents: m is the kink
            points[m] = (vm, sm)
            continue
        points[m] = (vm, sm)
        stack += [(a, m), (m, b)]
    knots = np.array(sorted(points))
    values = np.array([points[k][0] for k in knots])
    seg = np.diff(values) / np.where(np.diff(knots) > 0, np.diff(knots), 1.0) if knots.size > 1 else np.zeros(0)
    kinks = [k for k in sorted(breaks)]
    if knots.size > 2:   # drop knots where the slope does not change (intermediate solves)
        change = np.abs(np.diff(seg)) > tol * 10 * (1 + np.abs(seg[:-1]) + np.abs(seg[1:]))
        kinks = sorted(set(kinks) | set(knots[1:-1][change].tolist()))
        kinks = [k for k in kinks if change[int(np.searchsorted(knots, k)) - 1]]
    return ValueCurve(knots=knots, values=values, slopes=seg, breakpoints=np.array(kinks, dtype=float),
                      solves=oracle.solves, duals=duals)
