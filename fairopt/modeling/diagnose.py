"""Two answers :class:`~fairopt.modeling.Program` gives the same way on every back end, before or
after dispatch: the solution of a program with no variable entries, and the constraint row an
infeasibility is first caused by.

A program with no variable entries is a constant: it is optimal with objective equal to its
constant when every row's bounds admit the activity 0 (rows over empty blocks), and infeasible
otherwise. Back ends disagree on such input (HiGHS reports infeasible, OSQP and SciPy raise,
cvxpy and pyomo report optimal), so it never reaches them.

An infeasible program is located by a prefix search: the first row ``r`` (in the order the
constraint blocks were added) such that rows ``0..r`` and the variable bounds admit no point of
the continuous relaxation. That row cannot hold together with the rows before it; when fairness
blocks are added after a model's own constraints, it is a fairness row. The search costs about
``log2(m) + 1`` phase-one LPs and runs only after an infeasible verdict.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from fairopt.errors import InfeasibleError
from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import Solution, Status
from fairopt.modeling.spec import SolverSpec


def _row_block(canon: Canonical, row: int) -> tuple[str, int]:
    """``(constraint block, row within the block)`` of stacked row ``row``."""
    for name, s in canon.con_slices.items():
        if s.start <= row < s.stop:
            return name, row - s.start
    raise IndexError(row)


def _prefix_feasible(canon: Canonical, k: int) -> bool:
    from fairopt.modeling.certify import is_feasible
    sub = dataclasses.replace(canon, A=canon.A[:k], rl=canon.rl[:k], ru=canon.ru[:k])
    return is_feasible(sub)


def first_infeasible_row(canon: Canonical) -> int | None:
    """Smallest ``r`` such that rows ``0..r`` with the variable bounds are infeasible (continuous
    relaxation), or None when all rows together are feasible (a MIP infeasible only through
    integrality) or the variable bounds alone are infeasible.

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("p")
    >>> _ = prog.add_variables("x", shape=2, lb=0, ub=1)
    >>> _ = prog.add_constraints("low", {"x": [[1, 0], [0, 1]]}, ub=[0.5, 0.5])
    >>> _ = prog.add_constraints("high", {"x": [[1, 1], [1, 1]]}, lb=[0.5, 1.5])
    >>> first_infeasible_row(prog.canonical())
    3
    """
    if canon.m == 0 or _prefix_feasible(canon, canon.m) or not _prefix_feasible(canon, 0):
        return None
    lo, hi = 0, canon.m  # rows[:lo] feasible, rows[:hi] infeasible
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _prefix_feasible(canon, mid):
            lo = mid
        else:
            hi = mid
    return hi - 1


def name_infeasible_row(canon: Canonical, err: InfeasibleError,
                        labels: Mapping[str, Sequence[str]] | None = None) -> InfeasibleError:
    """``err`` with the constraint block and row that cause the infeasibility (unchanged when they
    cannot be located). ``labels`` maps block names to row labels, where known.

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("p")
    >>> _ = prog.add_variables("x", shape=1, lb=0, ub=1)
    >>> _ = prog.add_constraints("need", {"x": [[1.0]]}, lb=2)
    >>> err = name_infeasible_row(prog.canonical(), InfeasibleError("infeasible.", program="p"))
    >>> err.constraint, err.row
    ('need', 0)
    """
    if err.constraint is not None:
        return err
    r = first_infeasible_row(canon)
    if r is None:
        return err
    block, row = _row_block(canon, r)
    label = (labels or {}).get(block)
    desc = f"{block}[{row}]" + (f" ({label[row]})" if label is not None and row < len(label) else "")
    message = (f"{err} The first row that cannot hold together with the rows added before it is "
               f"constraint {desc}; loosen its bounds (a fairness tolerance) or the rows it conflicts with.")
    return InfeasibleError(message, program=err.program, constraint=block, tightest=err.tightest,
                           status=err.status, log=err.log, row=row,
                           row_label=None if label is None or row >= len(label) else label[row])


def constant_solution(canon: Canonical, backend: str, solver: str) -> Solution:
    """Solution of a program with no variable entries (see the module docstring).

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("constant")
    >>> prog.set_objective(constant=2.0)
    >>> constant_solution(prog.canonical(), "osqp", "osqp").objective
    2.0
    """
    bad = (canon.rl > 0) | (canon.ru < 0)
    if bad.any():
        r = int(np.argmax(bad))
        block, row = _row_block(canon, r)
        raise InfeasibleError(
            f"program {canon.name!r} has no variable entries, and constraint {block}[{row}] asks "
            f"{canon.rl[r]:g} <= 0 <= {canon.ru[r]:g} of its activity 0; it is infeasible.",
            program=canon.name, constraint=block, status=Status.INFEASIBLE, row=row)
    return Solution(status=Status.OPTIMAL, objective=canon.sense * canon.constant,
                    primal={v: np.zeros(shape) for v, shape in canon.var_shapes.items()},
                    dual={k: np.zeros(s.stop - s.start) for k, s in canon.con_slices.items()},
                    reduced_cost={v: np.zeros(shape) for v, shape in canon.var_shapes.items()},
                    backend=backend, solver=solver, solve_seconds=0.0, iterations=0,
                    log="no variable entries: the objective is the constant; no solver was called",
                    program=canon.name)


class _Compiled(Protocol):
    """What :class:`ConstantModel` reads of a back end's compiled model (the back ends sit above)."""

    @property
    def canon(self) -> Canonical: ...
    @property
    def backend(self) -> str: ...
    @property
    def spec(self) -> SolverSpec: ...
    def solve(self, require_optimal: bool = False) -> Solution: ...


class ConstantModel:
    """What :meth:`Program.compile` returns for a program with no variable entries: the back end's
    compiled model, whose ``solve`` is answered by :func:`constant_solution` (from the current
    row bounds) while the program still has no columns, so ``compile(...).solve()`` agrees with
    ``Program.solve`` on every back end. Updates, and columns added by ``extend_variables``, go
    to the back end's model, which solves once there are columns.

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("constant")
    >>> prog.set_objective(constant=1.5)
    >>> prog.compile("osqp").solve().objective
    1.5
    """

    def __init__(self, inner: _Compiled) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def solve(self, require_optimal: bool = False) -> Solution:
        inner = self._inner
        if inner.canon.n == 0:
            return constant_solution(inner.canon, inner.backend, str(inner.spec.solver))
        return inner.solve(require_optimal)
