"""Problem kind ``pricing``: an LP whose columns a pricing oracle supplies (:class:`LazyColumns`).

The dual twin of :class:`~fairopt.modeling.kinds.LazyRows`. The rows are fixed (only their bounds
``row_lower <= A x <= row_upper``); the variables are a *fixed* block that is always in the master
(free or bounded helper variables) and the *columns* generated so far. A solver of the kind
solves the restricted master over the columns it holds, hands the row duals ``y`` and the
master's point ``x`` to the oracle ``price(y, x)``, appends the columns it returns, and re-solves,
until the oracle returns none. A column ``j`` improves the master when its reduced cost
``cost_j - A_j' y`` is negative (minimisation; ``y`` follows fairopt's dual convention,
``y_i = d(optimal objective) / d(active bound of row i)``); the oracle decides which to return,
so it also holds the problem's own stopping rule (e.g. a per-query tolerance).

Registered solvers of the kind are listed by ``fairopt solvers``; the registry's default solves
the restricted masters by warm-started simplex, and any LP solver that returns duals can run the
same loop by re-solving :meth:`LazyColumns.restricted_master` (a :class:`~fairopt.modeling.Program`)
each round (:func:`resolve_pricing_solver` maps an LP solver to that path).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from fairopt.errors import DataValidationError
from fairopt.modeling.program import Program
from fairopt.modeling.registry import accepts, parse_solver, resolve_solver
from fairopt.modeling.spec import SolverSpec

__all__ = ["ColumnBlock", "LazyColumns", "resolve_pricing_solver"]

#: the problem kind of :class:`LazyColumns`
KIND = "pricing"

#: ``price(y, x)``: row duals and master point in, new columns (or ``None``) out
PricingOracle = Callable[[NDArray[np.float64], NDArray[np.float64]], "ColumnBlock | None"]


@dataclass
class ColumnBlock:
    """Columns of an LP: a sparse ``(m, k)`` coefficient matrix, costs and bounds.

    Parameters
    ----------
    A : sparse matrix or array of shape (m, k)
        Coefficients of the ``k`` columns in the ``m`` rows (stored as CSC).
    cost : array-like of shape (k,)
        Objective coefficients (minimised).
    lb, ub : array-like of shape (k,)
        Bounds (``-inf``/``inf`` for none).

    Examples
    --------
    >>> import numpy as np
    >>> cols = ColumnBlock(np.eye(2), [1.0, 2.0], [0.0, 0.0], [np.inf, np.inf])
    >>> cols.k, cols.A.shape
    (2, (2, 2))
    """

    A: Any
    cost: Any
    lb: Any
    ub: Any

    def __post_init__(self) -> None:
        self.A = sp.csc_matrix(self.A)
        k = self.A.shape[1]
        self.cost = np.asarray(self.cost, dtype=float).reshape(-1)
        self.lb = np.broadcast_to(np.asarray(self.lb, dtype=float), (k,)).copy()
        self.ub = np.broadcast_to(np.asarray(self.ub, dtype=float), (k,)).copy()
        if self.cost.shape != (k,):
            raise DataValidationError(f"a column block of {k} columns needs {k} costs, got {self.cost.size}.")
        if (self.lb > self.ub).any():
            raise DataValidationError("a column block has a lower bound above its upper bound.")

    @property
    def k(self) -> int:
        """Number of columns."""
        out: int = self.A.shape[1]
        return out

    @classmethod
    def concat(cls, blocks: list[ColumnBlock], m: int) -> ColumnBlock:
        """The columns of ``blocks`` side by side (``m`` rows; an empty list gives no column).

        Examples
        --------
        >>> import numpy as np
        >>> a = ColumnBlock(np.ones((2, 1)), [1.0], 0.0, np.inf)
        >>> ColumnBlock.concat([a, a], 2).k
        2
        """
        if not blocks:
            return cls(sp.csc_matrix((m, 0)), np.zeros(0), np.zeros(0), np.zeros(0))
        return cls(sp.hstack([b.A for b in blocks], format="csc"), np.concatenate([b.cost for b in blocks]),
                   np.concatenate([b.lb for b in blocks]), np.concatenate([b.ub for b in blocks]))


@dataclass
class LazyColumns:
    """An LP whose columns a pricing oracle supplies (kind ``"pricing"``).

    ``min fixed.cost' z + cost' x  s.t.  row_lower <= fixed.A z + A x <= row_upper``, bounds on
    ``z`` and ``x``, over every column the oracle can produce.

    Parameters
    ----------
    row_lower, row_upper : array-like of shape (m,)
        Row bounds (``-inf``/``inf`` for a one-sided row).
    fixed : ColumnBlock
        Variables always in the master (first in the master's order).
    columns : ColumnBlock
        The initial columns of the restricted master (after ``fixed``).
    price : callable
        ``price(y, x) -> ColumnBlock or None``: given the restricted master's row duals ``y``
        (shape ``(m,)``) and point ``x`` (``fixed`` then every column so far, in the order
        added), the columns to append, or ``None`` (or zero columns) when none improves.
    max_rounds : int, default 200
        Cap on pricing rounds (:class:`~fairopt.errors.SolverLimitError` beyond it).
    tol : float, default 1e-9
        Primal and dual feasibility tolerance asked of the restricted masters' solver.
    warm_start : object, optional
        The ``info["warm_start"]`` of an earlier solve of the same rows and columns (e.g. with
        other costs or bounds): a solver that keeps bases starts from it; others ignore it.

    Examples
    --------
    >>> import numpy as np
    >>> # min -x_j over columns e_j / j (j = 1, 2, ...), one row sum <= 1: the oracle offers the
    >>> # next column while its reduced cost -1 - y / j is negative
    >>> def price(y, x):
    ...     j = x.size + 1
    ...     return ColumnBlock(np.array([[1.0 / j]]), [-1.0], 0.0, np.inf) if j <= 3 and -1 - y[0] / j < 0 else None
    >>> prob = LazyColumns([-np.inf], [1.0], ColumnBlock.concat([], 1),
    ...                    ColumnBlock(np.ones((1, 1)), [-1.0], 0.0, np.inf), price)
    >>> prob.kind, prob.m
    ('pricing', 1)
    >>> sol = prob.restricted_master(prob.columns).solve()
    >>> round(sol.objective, 9)
    -1.0
    """

    row_lower: Any
    row_upper: Any
    fixed: ColumnBlock
    columns: ColumnBlock
    price: PricingOracle
    max_rounds: int = 200
    tol: float = 1e-9
    warm_start: Any = None
    kind = KIND

    def __post_init__(self) -> None:
        self.row_lower = np.asarray(self.row_lower, dtype=float).reshape(-1)
        self.row_upper = np.asarray(self.row_upper, dtype=float).reshape(-1)
        m = self.row_lower.size
        if self.row_upper.shape != (m,) or (self.row_lower > self.row_upper).any():
            raise DataValidationError("row_lower and row_upper need one entry per row with lower <= upper.")
        for name, block in (("fixed", self.fixed), ("columns", self.columns)):
            if block.A.shape[0] != m:
                raise DataValidationError(f"the {name} block has {block.A.shape[0]} rows; the problem has {m}.")

    @property
    def m(self) -> int:
        """Number of rows."""
        out: int = self.row_lower.size
        return out

    def restricted_master(self, columns: ColumnBlock) -> Program:
        """The restricted master over ``columns`` as a :class:`~fairopt.modeling.Program`:
        variable blocks ``fixed`` (when there is one) and ``columns``, one constraint block
        ``rows``; any LP solver of the registry solves it (see the class example)."""
        prog = Program("restricted master")
        coeffs: dict[str, Any] = {}
        objective: dict[str, Any] = {}
        for name, block in (("fixed", self.fixed), ("columns", columns)):
            if block.k:
                prog.add_variables(name, shape=(block.k,), lb=block.lb, ub=block.ub)
                coeffs[name], objective[name] = block.A, block.cost
        prog.add_constraints("rows", coeffs, lb=self.row_lower, ub=self.row_upper)
        prog.set_objective(linear=objective)
        return prog


def resolve_pricing_solver(solver: str | SolverSpec | Mapping[str, Any] | None) -> SolverSpec:
    """The solver of a :class:`LazyColumns` for a user's ``solver`` value, parsed once: ``None``
    takes the registry's default for the kind; a solver that accepts the kind is used as it is;
    any other is checked as an LP solver (an unknown one raises
    :class:`~fairopt.errors.UnknownSolverError` listing the installed LP solvers) and runs as
    the restricted masters' solver of the default pricing loop (its option ``lp_solver``), which
    refuses one without duals.

    Examples
    --------
    >>> resolve_pricing_solver(None).options
    {}
    >>> resolve_pricing_solver("scipy").options["lp_solver"]
    'scipy:highs'
    """
    parsed = parse_solver(solver)
    if parsed is None or accepts(parsed, KIND):
        return resolve_solver(parsed, KIND)
    lp = resolve_solver(parsed, "LP")
    return resolve_solver(None, KIND, options={"lp_solver": str(lp)})
