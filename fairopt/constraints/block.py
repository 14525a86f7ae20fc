"""One fairness constraint block, stored once as sparse coefficients and compiled to three targets.

A block is a set of one-sided linear rows over the user's decision vector ``x`` (length ``n``,
one entry per candidate) and the block's own small auxiliary vector ``t`` (a common rate level,
for instance)::

    A[r] @ x + T[r] @ t  >=  b[r]     (sense[r] = +1)
    A[r] @ x + T[r] @ t  <=  b[r]     (sense[r] = -1)

Rows are one-sided so that each row has exactly one active bound and its dual is the derivative
of the optimal objective with respect to that bound (fairopt's convention, in the objective's
units). The tolerances of the block (``eps``, ``ratio``, per-group shares or budgets) enter the
rows through ``b`` and, for the ratio and share forms, through the coefficients; the
``sensitivity`` table records ``d b / d theta`` and ``d (A x + T t) / d theta`` for each
tolerance ``theta``, so the price of a tolerance follows from the row duals by the envelope
theorem::

    d f* / d theta = sum_r y_r * (d b_r / d theta - d (A x* + T t*)_r / d theta)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt._docstrings import fill_doc, register
from fairopt._param_validation import ANY, Interval
from fairopt.constraints.parametric import _build_cvxpy_parametric, _build_pyomo_parametric, _set_tolerance
from fairopt.constraints.slicing import _add_over
from fairopt.constraints.targets import add_to_program, build_cvxpy_block, build_pyomo_block, read_duals
from fairopt.errors import SolverError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.constraints.targets import CvxpyBlock
    from fairopt.modeling import Program
    from fairopt.modeling.program import Constraint

register("example_cvxpy_parity", """
>>> import numpy as np
>>> import cvxpy as cp
>>> from fairopt.constraints import selection_rate_parity
>>> parity = selection_rate_parity(np.array(["a", "a", "b", "b"]), eps=0.0)
>>> x = cp.Variable(4)
>>> rows = parity.to_cvxpy(x)
>>> problem = cp.Problem(cp.Maximize(np.array([4.0, 3.0, 2.0, 1.0]) @ x),
...                      [x >= 0, x <= 1, cp.sum(x) <= 2] + rows)""")
register("example_shortlist_program", """
>>> import numpy as np
>>> from fairopt.modeling import Program
>>> groups = np.array(["a", "a", "b", "b"])
>>> prog = Program("shortlist")
>>> _ = prog.add_variables("x", shape=4, lb=0, ub=1)
>>> _ = prog.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
>>> prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")""")


@dataclass
class Sensitivity:
    """Derivatives of one tolerance ``theta``: of the bounds, and of the row activity through
    ``x`` (sparse ``(m, n)``) and through ``t`` (dense ``(m, p)``); ``None`` means zero.
    ``domain`` is the values ``theta`` may take (default any finite number): the builder, and
    every later update (:meth:`FairnessBlock.set_tolerance`, a pyomo ``Param``), check it."""

    dbound: np.ndarray
    dA: sp.csr_matrix | None = None
    dT: np.ndarray | None = None
    domain: Interval = ANY


@dataclass
class PriceOfFairness:
    """Duals of a fairness block in the objective's units.

    Attributes
    ----------
    rows : DataFrame
        One row per constraint row: ``sense`` (``">="``/``"<="``), ``bound``, ``activity`` and
        ``dual`` = d(optimal objective)/d(bound). A binding fairness row has a nonzero dual: how
        much objective one unit of relaxation of that row would buy.
    parameters : dict of str to float
        d(optimal objective)/d(tolerance) for each tolerance of the block (``eps``, ``ratio``,
        ``lower[g]``, ``upper[g]``). For a maximisation, ``parameters["eps"]`` is the profit
        gained per unit of extra allowed disparity.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.constraints import selection_rate_parity
    >>> from fairopt.modeling import Program
    >>> prog = Program("shortlist")
    >>> _ = prog.add_variables("x", shape=4, lb=0, ub=1)
    >>> _ = prog.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
    >>> prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")
    >>> parity = selection_rate_parity(np.array(["a", "a", "b", "b"]), eps=0.0)
    >>> _ = parity.add_to(prog, "x")
    >>> price = parity.price_of_fairness(prog.solve())
    >>> price.block, {k: round(v, 6) for k, v in price.parameters.items()}
    ('selection_rate_parity', {'eps': 1.0})
    >>> list(price.rows.columns)
    ['sense', 'bound', 'activity', 'dual']
    """

    block: str
    rows: pd.DataFrame
    parameters: dict[str, float]

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v:.6g}" for k, v in self.parameters.items())
        return f"PriceOfFairness({self.block!r}, {params})"


@dataclass(eq=False)
@fill_doc
class FairnessBlock:
    """Linear fairness rows over a decision vector; build with the functions of
    :mod:`fairopt.constraints` and attach with :meth:`~FairnessBlock.add_to`,
    :meth:`~FairnessBlock.to_pyomo` or :meth:`~FairnessBlock.to_cvxpy`. The coefficients are
    built once and shared by the three targets.

    Examples
    --------
    {example_cvxpy_parity}
    >>> round(float(problem.solve(solver="HIGHS")), 6)
    6.0
    >>> round(parity.price_of_fairness(rows, problem=problem).parameters["eps"], 6)
    1.0
    """

    name: str
    kind: str
    groups: pd.Index
    A: sp.csr_matrix
    T: np.ndarray
    sense: np.ndarray
    bound: np.ndarray
    row_labels: list[str]
    aux_names: list[str]
    parameters: dict[str, float]
    sensitivity: dict[str, Sensitivity] = field(default_factory=dict)
    _program_var: str | None = field(default=None, repr=False)
    #: cells left out of the rows (intersectional parity: too few members), else ``None``
    excluded: pd.DataFrame | None = field(default=None, repr=False)
    #: selection matrix of a block added ``over`` part of a variable (set by :meth:`add_to`)
    _program_map: sp.csr_matrix | None = field(default=None, init=False, repr=False)
    #: setters of the solver parameters made by the parametric targets (see set_tolerance)
    _handles: list[Callable[[dict[str, float]], None]] = field(default_factory=list, init=False, repr=False)

    # ---------------------------------------------------------------- sizes and bounds
    @property
    def n(self) -> int:
        """Number of decision variables the rows act on (columns of ``A``)."""
        return int(self.A.shape[1])

    @property
    def m(self) -> int:
        """Number of fairness rows."""
        return int(self.A.shape[0])

    @property
    def n_aux(self) -> int:
        """Number of auxiliary variables (columns of ``T``, e.g. a rate level)."""
        return int(self.T.shape[1])

    @property
    def lb(self) -> np.ndarray:
        """Lower bound of each row (``-inf`` for ``<=`` rows)."""
        return np.where(self.sense > 0, self.bound, -np.inf)

    @property
    def ub(self) -> np.ndarray:
        """Upper bound of each row (``+inf`` for ``>=`` rows)."""
        return np.where(self.sense < 0, self.bound, np.inf)

    @property
    def aux_name(self) -> str:
        """Name of the auxiliary variable block in a :class:`~fairopt.modeling.Program`."""
        return f"{self.name}_aux"

    def activity(self, x: ArrayLike, t: ArrayLike | None = None) -> np.ndarray:
        """Row activities ``A x + T t``."""
        x = np.asarray(x, dtype=float).reshape(-1)
        act = self.A @ x
        if self.n_aux:
            act = act + self.T @ np.asarray(t, dtype=float).reshape(-1)
        out: np.ndarray = act
        return out

    def violation(self, x: ArrayLike, t: ArrayLike | None = None) -> float:
        """Largest violation of the rows at ``(x, t)`` (0 when they hold)."""
        if self.m == 0:
            return 0.0
        gap = self.sense * (self.bound - self.activity(x, t))
        return float(max(0.0, gap.max()))

    # ---------------------------------------------------------------- targets
    def add_to(self, program: Program, var: str, over: ArrayLike | sp.spmatrix | None = None) -> Constraint:
        """Add the rows (constraint block ``name``) and the auxiliary variables (block
        ``name + "_aux"``) to a :class:`~fairopt.modeling.Program` whose variable ``var``
        holds the decisions, one entry per candidate in the order of the group labels.

        ``over`` applies the block to part of ``var`` or to a linear expression of it: an array
        of entry indices (a slice: one period, one region) or a matrix ``M`` of shape
        ``(n, var.size)`` (the block then constrains ``M @ vec(var)``, e.g. cumulative hires).
        """
        if over is None:
            con = add_to_program(self, program, var)
            self._program_map = None
        else:
            con = _add_over(self, program, var, over)
        self._program_var = var
        return con

    def to_pyomo(self, var: Any, name: str | None = None, index: Any = None) -> Any:
        """Attach the rows as a pyomo ``Block`` (named ``name``, default the block's name) to
        the model that owns the indexed variable ``var``. ``index`` lists the keys of ``var``
        in candidate order (default: ``var``'s own index order). The block holds ``aux``
        (auxiliary variables) and ``rows`` (indexed constraints)."""
        return build_pyomo_block(self, var, name or self.name, index)

    def to_cvxpy(self, x: Any) -> CvxpyBlock:
        """Return the rows as a list of cvxpy constraints on the user's ``Variable`` ``x``
        (shape ``(n,)``); the list's ``aux`` attribute holds the auxiliary variable."""
        return build_cvxpy_block(self, x)

    # ---------------------------------------------------------------- parametric tolerances
    def to_cvxpy_parametric(self, x: Any) -> CvxpyBlock:
        """Like :meth:`to_cvxpy`, with every tolerance a cvxpy ``Parameter`` (the list's
        ``parameters`` dict); :meth:`set_tolerance` changes them, so a sweep over ``eps``
        re-solves the same ``cp.Problem`` without rebuilding. ``x`` may be a Variable or an
        affine expression with ``n`` entries (a slice, a cumulative sum).

        Examples
        --------
        >>> import cvxpy as cp, numpy as np
        >>> from fairopt.constraints import selection_rate_parity
        >>> block = selection_rate_parity(["a", "a", "b", "b"], eps=0.0)
        >>> x = cp.Variable(4)
        >>> cons = block.to_cvxpy_parametric(x)
        >>> prob = cp.Problem(cp.Maximize(np.array([4, 3, 2, 1]) @ x), [*cons, x >= 0, x <= 1, cp.sum(x) <= 2])
        >>> round(float(prob.solve()), 4)
        6.0
        >>> block.set_tolerance(eps=0.5)
        >>> round(float(prob.solve()), 4)
        6.5
        """
        return _build_cvxpy_parametric(self, x)

    def to_pyomo_parametric(self, var: Any, name: str | None = None, index: Any = None) -> Any:
        """Like :meth:`to_pyomo`, with the tolerances a mutable ``Param`` ``tolerance[key]`` of
        the block, updated by :meth:`set_tolerance` (the block is not rebuilt)."""
        return _build_pyomo_parametric(self, var, name or self.name, index)

    def set_tolerance(self, **values: float) -> None:
        """Set tolerances (``eps=0.05``, ``ratio=0.8``, or ``**{"lower[a]": 0.2}``): updates the
        block's rows and every parameter created by :meth:`to_cvxpy_parametric` /
        :meth:`to_pyomo_parametric`."""
        _set_tolerance(self, values)

    # ---------------------------------------------------------------- duals
    @fill_doc
    def price_of_fairness(self, result: object, var: str | None = None, problem: object = None) -> PriceOfFairness:
        """Row duals and tolerance prices, in the objective's units.

        ``result`` is a :class:`~fairopt.modeling.Solution` of a program the block was added
        to (``var`` defaults to the variable named in :meth:`add_to`), the pyomo block from
        :meth:`to_pyomo` after a solve that imported duals (``model.dual = Suffix(direction=
        Suffix.IMPORT)``), or the list from :meth:`to_cvxpy` with its solved ``problem``.

        Prices are read only from a finished solve. A cvxpy ``problem`` must have status
        ``"optimal"``; for pyomo, ``problem`` may be the results object of the solve (its
        termination condition is checked), and the model's current values must satisfy every
        active constraint, so values and duals left by an earlier solve are never read as the
        prices of a later one that loaded nothing.

        Raises
        ------
        InfeasibleError
            The solve found the model infeasible (``constraint`` names this block).
        SolverLimitError
            The solve stopped at a limit or before its tolerances (cvxpy ``user_limit``,
            ``optimal_inaccurate``; pyomo ``maxTimeLimit``, ``maxIterations``).
        SolverError
            No finished solve: not solved, no duals, or values that are not the current model's.

        Examples
        --------
        {example_cvxpy_parity}
        >>> _ = problem.solve(solver="HIGHS")
        >>> round(parity.price_of_fairness(rows, problem=problem).parameters["eps"], 6)
        1.0
        """
        y, x, t = read_duals(self, result, var, problem)
        M = getattr(self, "_program_map", None)
        if M is not None and np.asarray(x).size != self.n:  # a block added over part of a variable
            x = M @ np.asarray(x, dtype=float).reshape(-1)
        return self._price(y, x, t)

    def _price(self, y: np.ndarray | None, x: ArrayLike, t: ArrayLike | None) -> PriceOfFairness:
        if y is None or np.isnan(y).any():
            raise SolverError(f"fairness block {self.name!r}: the solve returned no duals (a MIP, or a "
                              "solve that did not reach optimality); solve the LP relaxation for prices.")
        act = self.activity(x, t)
        params = {}
        for key, s in self.sensitivity.items():
            dact = np.zeros(self.m)
            if s.dA is not None:
                dact += s.dA @ np.asarray(x, dtype=float).reshape(-1)
            if s.dT is not None:
                dact += s.dT @ np.asarray(t, dtype=float).reshape(-1)
            params[key] = float(y @ (s.dbound - dact))
        rows = pd.DataFrame({"sense": np.where(self.sense > 0, ">=", "<="), "bound": self.bound,
                             "activity": act, "dual": y}, index=pd.Index(self.row_labels, name="row"))
        return PriceOfFairness(self.name, rows, params)

    def summary(self) -> dict[str, Any]:
        """Describe the block: name, kind, rows, nonzeros, auxiliary variables, groups, parameters.

        Returns
        -------
        dict
            Plain values, ready for JSON or a table.
        """
        return {"name": self.name, "kind": self.kind, "rows": self.m, "nnz": int(self.A.nnz),
                "aux": list(self.aux_names), "groups": [str(g) for g in self.groups],
                "parameters": dict(self.parameters)}

    def __repr__(self) -> str:
        return (f"FairnessBlock({self.name!r}, kind={self.kind!r}, n={self.n}, rows={self.m}, "
                f"groups={len(self.groups)}, parameters={self.parameters})")

