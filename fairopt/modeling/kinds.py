"""Problem kinds: the typed problems a registered solver declares it accepts.

A formulation builds one of these and hands it to the registry with a :class:`SolverSpec`; the
registry checks that the solver accepts the kind (:func:`fairopt.modeling.registry.check_spec`)
and runs it. Formulations never name a solver, and a solver never needs to know which
formulation built the problem.

========== ====================================================================== ==========================
kind       problem                                                                entry point
========== ====================================================================== ==========================
LP         :class:`~fairopt.modeling.Program`, linear objective                   ``compile(program, spec)``
QP         :class:`~fairopt.modeling.Program` with a PSD quadratic objective      ``compile(program, spec)``
MILP       :class:`~fairopt.modeling.Program` with integer variable blocks        ``compile(program, spec)``
smooth     :class:`~fairopt.modeling.smooth.SmoothProblem` (value/grad/Hessian)   ``solve_smooth(...)``
threshold  randomized-threshold statistics problem (per-group sorted scores)      ``solve_own(...)``
transport  one-dimensional transport statistics problem (per-group quantiles)     ``solve_own(...)``
simplex_qp least squares over the simplex, ``min ||A'q - u||^2``                  ``solve_own(...)``
colgen     :class:`ColumnGenerationMaster`: an LP priced over one variable block   ``solve_own(...)``
rowgen     :class:`LazyRows`: an LP whose rows a separation oracle supplies        ``solve_own(...)``
pricing    :class:`~fairopt.modeling.lazy_columns.LazyColumns`: oracle-priced LP  ``solve_own(...)``
========== ====================================================================== ==========================

A problem of the statistics kinds carries its own exact algorithm (``solve_native``) and,
where one exists, a streaming one (``solve_sgd``); the solver registered for the kind chooses
which runs. The column- and row-generation kinds wrap a :class:`~fairopt.modeling.Program`, so
every one of them can also be solved whole by an LP solver (:attr:`ColumnGenerationMaster.program`).

Examples
--------
>>> "colgen" in PROBLEM_KINDS and "LP" in PROGRAM_KINDS
True
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["KIND_DESCRIPTIONS", "PROBLEM_KINDS", "PROGRAM_KINDS", "ColumnGenerationMaster", "LazyRows"]

#: what each kind is, for ``fairopt solvers`` and error messages
KIND_DESCRIPTIONS: dict[str, str] = {
    "LP": "linear program (Program)",
    "QP": "convex quadratic program (Program with a PSD objective)",
    "smooth": "smooth convex problem with value/gradient/Hessian oracles (SmoothProblem)",
    "threshold": "randomized-threshold statistics problem (per-group sorted scores)",
    "MILP": "mixed-integer linear program (Program with integer blocks)",
    "transport": "one-dimensional transport statistics problem (per-group quantiles)",
    "simplex_qp": "least squares over the probability simplex, min ||A'q - u||^2",
    "colgen": "column-generation master: an LP priced over one variable block (ColumnGenerationMaster)",
    "rowgen": "an LP whose rows a separation oracle supplies lazily (LazyRows)",
    "pricing": "an LP whose columns a pricing oracle supplies (fairopt.modeling.lazy_columns.LazyColumns)",
}
#: every kind, in the order ``fairopt solvers`` lists them
PROBLEM_KINDS: tuple[str, ...] = tuple(KIND_DESCRIPTIONS)
#: kinds that are a :class:`~fairopt.modeling.Program` compiled by a back end
PROGRAM_KINDS: tuple[str, ...] = ("LP", "QP", "MILP")


@dataclass
class ColumnGenerationMaster:
    """An LP to solve by column generation over one variable block (kind ``"colgen"``).

    Parameters
    ----------
    program : Program
        The full LP; its canonical arrays are priced (``c - A'y``) in one sparse product.
    block : str
        Name of the variable block whose columns are generated.
    initial : array-like of bool
        Columns of ``block`` in the first restricted master.
    max_rounds : int, default 200
        Cap on pricing rounds.
    columns_per_round : int, optional
        Most negative reduced costs added per round (default: all that price out).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("demo")
    >>> x = prog.add_variables("x", shape=(3,), lb=0.0)
    >>> _ = prog.add_constraints("sum", {"x": np.ones((1, 3))}, lb=1.0, ub=1.0)
    >>> prog.set_objective(linear={"x": [3.0, 1.0, 2.0]})
    >>> master = ColumnGenerationMaster(prog, "x", np.array([True, False, False]))
    >>> master.kind
    'colgen'
    """

    program: Any   # a fairopt.modeling.Program (not imported: the kinds sit below it)
    block: str
    initial: Any
    max_rounds: int = 200
    columns_per_round: int | None = None
    kind = "colgen"


@dataclass
class LazyRows:
    """An LP whose rows come from a separation oracle (kind ``"rowgen"``).

    Parameters
    ----------
    program : Program
        The master LP with the rows known up front.
    separate : callable
        ``separate(x) -> (A, lo, hi)`` over the full canonical variable vector ``x``: the rows
        ``x`` violates (a sparse or dense matrix with ``lo <= A x <= hi``), or ``A`` with zero
        rows when none is violated.
    block : str, default "lazy"
        Name given to the constraint blocks that hold the rows added.
    max_rounds : int, default 100
        Cap on separation rounds.
    tol : float, default 1e-9
        Violation below which a row is satisfied.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("demo")
    >>> x = prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    >>> prog.set_objective(linear={"x": [-1.0, -1.0]})
    >>> LazyRows(prog, lambda v: (np.ones((1, 2)), np.array([-np.inf]), np.array([1.0]))).kind
    'rowgen'
    """

    program: Any   # a fairopt.modeling.Program
    separate: Callable[[np.ndarray], tuple[Any, np.ndarray, np.ndarray]]
    block: str = "lazy"
    max_rounds: int = 100
    tol: float = 1e-9
    kind = "rowgen"
