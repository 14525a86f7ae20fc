"""The canonical program: named variable blocks, named linear constraint blocks, a linear plus
convex-quadratic objective.

Every formulation in :mod:`fairopt.formulations` builds one of these from arrays; the back ends
in :mod:`fairopt.modeling.backends` compile it once into their native objects. Variable blocks
are vectorised row-major (``vec(x) = x.ravel()``), so a block of shape ``(r, c)`` occupies
``r*c`` consecutive columns.

The objective is ``1/2 z'Pz + c'z + constant`` where ``z`` stacks all blocks. A quadratic entry
``{("x", "x"): P}`` contributes ``1/2 x'Px``; a cross entry ``{("x", "y"): Q}`` contributes
``x'Qy``.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt._docstrings import fill_doc
from fairopt.errors import DataValidationError, InfeasibleError
from fairopt.modeling._summary import ProgramSummary, _range, _row_kind
from fairopt.modeling.canonical import (
    Canonical,
    as_bound,
    as_matrix,
    check_coefficients,
    check_convex,
    objective_unit,
    to_solution,
    unscale_solution,
)
from fairopt.modeling.diagnose import ConstantModel, constant_solution, name_infeasible_row
from fairopt.modeling.registry import SolverSpec, compile_program, resolve_solver
from fairopt.modeling.solution import Solution

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling.backends.base import CompiledModel

__all__ = ["Canonical", "Constraint", "Program", "ProgramSummary", "Variable", "to_solution"]


@fill_doc
@dataclass
class Variable:
    """Handle of a variable block returned by :meth:`Program.add_variables`.

    Examples
    --------
    {example_toy_program}
    >>> x
    Variable('x', shape=(2,))
    >>> x.size
    2
    """

    name: str
    shape: tuple[int, ...]
    lb: np.ndarray
    ub: np.ndarray
    integer: bool = False

    @property
    def size(self) -> int:
        """Number of scalar variables in the block (the product of its shape)."""
        return int(np.prod(self.shape))

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, shape={self.shape}" + (", integer)" if self.integer else ")")


@fill_doc
@dataclass
class Constraint:
    """A block of linear rows ``lb <= sum_v M_v @ vec(v) <= ub``.

    Examples
    --------
    {example_toy_program}
    >>> budget.rows, budget.nnz
    (1, 2)
    """

    name: str
    coeffs: dict[str, sp.csr_matrix]
    lb: np.ndarray
    ub: np.ndarray
    #: one label per row (a fairness block's rows), used to name the row of an infeasibility
    labels: list[str] | None = None

    @property
    def rows(self) -> int:
        """Number of rows of the block."""
        return int(self.lb.shape[0])

    @property
    def nnz(self) -> int:
        """Number of stored nonzero coefficients over all variable blocks."""
        return int(sum(m.nnz for m in self.coeffs.values()))

    def __repr__(self) -> str:
        return f"Constraint({self.name!r}, rows={self.rows}, blocks={list(self.coeffs)})"


@fill_doc
class Program:
    """A named linear or convex-quadratic program built from arrays.

    Parameters
    ----------
    name : str
        Name used in logs, errors and exported files.

    Examples
    --------
    {example_toy_program}
    >>> sol = prog.solve("highs")
    >>> round(sol.objective, 6), round(float(sol.dual["budget"][0]), 6)
    (-2.0, -2.0)
    """

    def __init__(self, name: str = "program"):
        self.name = str(name)
        self.variables: dict[str, Variable] = {}
        self.constraints: dict[str, Constraint] = {}
        self.sense = "minimize"
        self._linear: dict[str, np.ndarray] = {}
        self._quadratic: dict[tuple[str, str], sp.csr_matrix] = {}
        self._constant = 0.0
        self._canonical: Canonical | None = None

    # ------------------------------------------------------------------ building
    def add_variables(self, name: str, shape: int | Sequence[int] = (1,), lb: ArrayLike | None = 0.0,
                      ub: ArrayLike | None = None, integer: bool = False,
                      binary: bool = False) -> Variable:
        """Add a block of variables (continuous unless ``integer`` or ``binary``).

        ``lb`` / ``ub`` are scalars or arrays broadcastable to ``shape``; ``None`` means
        unbounded (the default lower bound is 0). ``binary=True`` is ``integer=True`` with
        bounds [0, 1] (``ub=None`` becomes 1). A program with an integer block is a MILP, solved
        by the back ends that take integers (``highs``, ``cvxpy:HIGHS``, ``pyomo:appsi_highs``).
        """
        if binary:
            integer, ub = True, 1.0 if ub is None else ub
            if np.any(np.asarray(lb, dtype=float) < 0) or np.any(np.asarray(ub, dtype=float) > 1):
                raise DataValidationError(f"variable {name!r}: a binary block needs bounds within [0, 1].")
        self._check_new_name(name)
        shape = tuple(int(s) for s in np.atleast_1d(shape))
        if len(shape) not in (1, 2) or min(shape) < 0:
            raise DataValidationError(f"variable {name!r}: shape must be 1-D or 2-D, got {shape}.")
        size = int(np.prod(shape))
        lo = as_bound(_broadcast(lb, shape, name), size, f"variable {name!r} lb", -np.inf, "lb")
        hi = as_bound(_broadcast(ub, shape, name), size, f"variable {name!r} ub", np.inf, "ub")
        if (lo > hi).any():
            i = int(np.argmax(lo > hi))
            raise DataValidationError(f"variable {name!r}: lb > ub at entry {i} "
                                      f"({lo[i]} > {hi[i]}).")
        var = Variable(name, shape, lo, hi, bool(integer))
        self.variables[name] = var
        self._canonical = None
        return var

    def add_constraints(self, name: str, coeffs: Mapping[str, Any], lb: ArrayLike | None = None,
                        ub: ArrayLike | None = None) -> Constraint:
        """Add rows ``lb <= sum_v coeffs[v] @ vec(v) <= ub``.

        ``coeffs`` maps variable names to dense or sparse matrices with one column per entry
        of the variable block. ``lb`` / ``ub`` are scalars or per-row arrays; ``None`` is
        ``-inf`` / ``+inf``. Equal bounds give equality rows.
        """
        self._check_new_name(name)
        if not coeffs:
            raise DataValidationError(f"constraint {name!r}: needs at least one variable block.")
        mats: dict[str, Any] = {}
        rows: int | None = None
        for v, mat in coeffs.items():
            if v not in self.variables:
                raise DataValidationError(f"constraint {name!r} refers to unknown variable {v!r}; "
                                          f"known: {list(self.variables)}.")
            mats[v] = as_matrix(mat, rows, self.variables[v].size, f"constraint {name!r}, block {v!r}")
            rows = mats[v].shape[0]
        assert rows is not None  # coeffs is not empty
        lo = as_bound(lb, rows, f"constraint {name!r} lb", -np.inf, "lb")
        hi = as_bound(ub, rows, f"constraint {name!r} ub", np.inf, "ub")
        if (lo > hi).any():
            i = int(np.argmax(lo > hi))
            raise DataValidationError(f"constraint {name!r}: lb > ub in row {i} ({lo[i]} > {hi[i]}).")
        con = Constraint(name, mats, lo, hi)
        self.constraints[name] = con
        self._canonical = None
        return con

    def set_objective(self, linear: Mapping[str, Any] | None = None,
                      quadratic: Mapping[tuple[str, str], Any] | None = None,
                      constant: float = 0.0, sense: str = "minimize") -> None:
        """Set ``1/2 z'Pz + c'z + constant``; see the module docstring for block conventions."""
        if sense not in ("minimize", "maximize"):
            raise DataValidationError(f"sense must be 'minimize' or 'maximize', got {sense!r}.")
        lin, quad = {}, {}
        for v, c in (linear or {}).items():
            var = self._var(v, "objective")
            arr = np.asarray(c, dtype=float).reshape(-1)
            if arr.shape[0] != var.size:
                raise DataValidationError(f"objective: linear part for {v!r} must be {var.size} "
                                          f"numbers, got {arr.shape[0]}.")
            check_coefficients(arr, f"objective: linear part for {v!r}")
            lin[v] = arr
        for key, mat in (quadratic or {}).items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise DataValidationError("objective: quadratic keys are pairs (var1, var2).")
            a, b = (self._var(k, "objective") for k in key)
            quad[key] = as_matrix(mat, a.size, b.size, f"objective quadratic block {key}")
        if not np.isfinite(constant) or abs(constant) > 1e300:
            raise DataValidationError(f"objective: constant must be finite, got {constant!r}.")
        old = (self._linear, self._quadratic, self._constant, self.sense)
        self._linear, self._quadratic = lin, quad
        self._constant, self.sense = float(constant), sense
        self._canonical = None
        if quad:  # a non-convex objective fails here, at build time, not inside a solver
            try:
                canon = self.canonical()
                check_convex(canon.P, canon.sense, canon.column_label)
            except DataValidationError:
                self._linear, self._quadratic, self._constant, self.sense = old
                self._canonical = None
                raise

    def _var(self, name: str, where: str) -> Variable:
        if name not in self.variables:
            raise DataValidationError(f"{where}: unknown variable {name!r}; known: {list(self.variables)}.")
        return self.variables[name]

    def _check_new_name(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise DataValidationError(f"block name {name!r} must be a Python identifier "
                                      "(it becomes a component name in pyomo and in exported files).")
        if name in self.variables or name in self.constraints:
            raise DataValidationError(f"program {self.name!r} already has a block named {name!r}.")

    # ------------------------------------------------------------------ canonical form
    def canonical(self) -> Canonical:
        """Stack all blocks into arrays (cached until the program changes)."""
        if self._canonical is not None:
            return self._canonical
        offsets, start = {}, 0
        for v, var in self.variables.items():
            offsets[v] = slice(start, start + var.size)
            start += var.size
        n = start
        sign = 1 if self.sense == "minimize" else -1
        c = np.zeros(n)
        for v, arr in self._linear.items():
            c[offsets[v]] = arr
        P = None
        if self._quadratic:
            blocks = []
            for (a, b), mat in self._quadratic.items():
                coo = mat.tocoo()
                r, cc = coo.row + offsets[a].start, coo.col + offsets[b].start
                if a == b:
                    blocks.append((coo.data, r, cc))
                else:  # x'Qy = 1/2 [x;y]' [[0,Q],[Q',0]] [x;y]
                    blocks.append((coo.data, r, cc))
                    blocks.append((coo.data, cc, r))
            data = np.concatenate([d for d, _, _ in blocks])
            rows = np.concatenate([r for _, r, _ in blocks])
            cols = np.concatenate([cc for _, _, cc in blocks])
            P = sp.csc_matrix((data, (rows, cols)), shape=(n, n))
            P = (0.5 * (P + P.T)).tocsc()
            P.eliminate_zeros()
            if P.nnz == 0:
                P = None
        row_blocks, rl, ru, con_slices, m = [], [], [], {}, 0
        for k, con in self.constraints.items():
            coo_parts = [(mat.tocoo(), offsets[v].start) for v, mat in con.coeffs.items()]
            row_blocks.append(coo_parts)
            con_slices[k] = slice(m, m + con.rows)
            m += con.rows
            rl.append(con.lb)
            ru.append(con.ub)
        if row_blocks:
            data = np.concatenate([coo.data for parts in row_blocks for coo, _ in parts])
            rows = np.concatenate([coo.row + con_slices[k].start
                                   for k, parts in zip(self.constraints, row_blocks, strict=False)
                                   for coo, _ in parts])
            cols = np.concatenate([coo.col + off for parts in row_blocks for coo, off in parts])
            A = sp.csr_matrix((data, (rows, cols)), shape=(m, n))
        else:
            A = sp.csr_matrix((0, n))
        xl = np.concatenate([v.lb for v in self.variables.values()]) if n else np.zeros(0)
        xu = np.concatenate([v.ub for v in self.variables.values()]) if n else np.zeros(0)
        self._canonical = Canonical(
            name=self.name, sense=sign, c=sign * c, P=None if P is None else sign * P,
            constant=sign * self._constant, A=A,
            rl=np.concatenate(rl) if rl else np.zeros(0), ru=np.concatenate(ru) if ru else np.zeros(0),
            xl=xl, xu=xu, var_slices=offsets,
            var_shapes={v: var.shape for v, var in self.variables.items()}, con_slices=con_slices,
            integrality=_integrality(self.variables))
        return self._canonical

    @property
    def problem_class(self) -> str:
        """Problem class of the program: ``"LP"``, ``"QP"``, ``"MILP"`` or ``"MIQP"``."""
        return self.canonical().problem_class

    # ------------------------------------------------------------------ solving
    def compile(self, solver: str | SolverSpec | Mapping[str, Any] | None = None,
                **overrides: Any) -> CompiledModel | ConstantModel:
        """Compile once for ``solver`` (default: the registry's solver for the program's kind)
        and return a model that can be updated and re-solved with warm starts (see
        :class:`fairopt.modeling.backends.base.CompiledModel`)."""
        spec = resolve_solver(solver, self.problem_class, **overrides)
        model = compile_program(self, spec)
        # no variable entries: a constant, answered the same on every back end (see diagnose)
        return ConstantModel(model) if self.canonical().n == 0 else model

    def solve(self, solver: str | SolverSpec | Mapping[str, Any] | None = None, time_limit: float | None = None,
              verbose: bool | None = None,
              options: Mapping[str, Any] | None = None, require_optimal: bool = False,
              relaxation_duals: bool = False) -> Solution:
        """Solve and return a :class:`Solution`.

        Parameters
        ----------
        solver : str or SolverSpec or mapping, optional
            ``"backend[:solver]"`` (see ``fairopt solvers``); default: the registry's solver
            for the program's kind (:func:`fairopt.modeling.registry.default_spec`).
        time_limit, verbose, options
            Override the spec's fields (``time_limit`` in seconds, > 0).
        require_optimal : bool, default False
            Raise unless the status is optimal (a time or iteration limit raises
            :class:`~fairopt.errors.SolverLimitError`) instead of returning the best point.
        relaxation_duals : bool, default False
            For a program with integer blocks, also solve its LP relaxation and attach it as
            ``solution.relaxation`` (its ``dual`` prices the rows); ``solution.dual`` of the MIP
            itself stays empty.

        Raises
        ------
        SolverLimitError
            Only with ``require_optimal``: a time or iteration limit was reached.
        InfeasibleError
            The program is infeasible. The message names the program and, where the continuous
            relaxation is already infeasible, the first row that cannot hold together with the
            rows added before it (``constraint`` is its block, ``row`` its index in the block,
            ``row_label`` its label for a fairness block).
        UnboundedError
            The program is unbounded (the message names the program).
        SolverNotAvailableError
            The back end or solver is not installed; the message lists installed alternatives.
        SolverError
            The solver failed numerically.

        Notes
        -----
        A program with no variable entries is a constant: on every back end it is optimal with
        objective equal to its constant (zero duals; no solver is called), or infeasible when a
        row's bounds exclude the activity 0.
        """
        spec = resolve_solver(solver, self.problem_class, time_limit=time_limit, verbose=verbose,
                       options=dict(options) if options else None)
        canon = self.canonical()
        if canon.n == 0:  # a constant: the same answer whatever the back end (see diagnose)
            return constant_solution(canon, spec.backend, str(spec.solver))
        unit = objective_unit(canon)
        if unit != 1.0:   # an objective far from unit magnitude: solved rescaled, reported in its own units
            import copy
            scaled = copy.copy(self)
            scaled._linear = {k: v * unit for k, v in self._linear.items()}
            scaled._quadratic = {k: m * unit for k, m in self._quadratic.items()}
            scaled._constant, scaled._canonical = self._constant * unit, None
            return unscale_solution(scaled.solve(solver, time_limit, verbose, options, require_optimal,
                                                 relaxation_duals), unit)
        try:
            sol = compile_program(self, spec).solve(require_optimal)
        except InfeasibleError as err:
            raise name_infeasible_row(canon, err, {k: c.labels for k, c in self.constraints.items()
                                                   if c.labels is not None}) from None
        if relaxation_duals and self.canonical().is_mip:
            # a MIP has no duals: price its rows with the LP relaxation (same solver and settings)
            sol.relaxation = self.relaxation().solve(solver, time_limit=time_limit, verbose=verbose,
                                                     options=options, require_optimal=require_optimal)
        return sol

    def relaxation(self) -> Program:
        """A copy of this program with every integer block made continuous (the LP relaxation);
        blocks, bounds, rows and objective are shared, not copied."""
        import copy
        relaxed = copy.copy(self)
        relaxed.name = f"{self.name}_relaxation"
        relaxed.variables = {k: Variable(v.name, v.shape, v.lb, v.ub) for k, v in self.variables.items()}
        relaxed._canonical = None
        return relaxed

    # ------------------------------------------------------------------ native objects and export
    def to_cvxpy(self) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        """Return ``(problem, variables, constraints)``: a ``cvxpy.Problem`` plus dicts of its
        named ``cvxpy.Variable`` blocks and lists of constraints per block, ready to extend."""
        from fairopt.modeling.backends.cvxpy_backend import build_cvxpy
        return build_cvxpy(self.canonical(), user_sense=True)[:3]

    def to_pyomo(self) -> Any:
        """Return a pyomo ``ConcreteModel`` with one indexed ``Var`` per variable block, one
        indexed ``Constraint`` per constraint block (same names) and an ``objective``."""
        from fairopt.modeling.backends.pyomo_backend import build_pyomo
        return build_pyomo(self.canonical(), user_sense=True)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Export to MPS or LP (chosen by the file extension) through HiGHS."""
        from fairopt.modeling.backends.highs_backend import write_model
        write_model(self.canonical(), str(path))

    def summary(self) -> ProgramSummary:
        """Blocks, sizes, nonzeros and problem class."""
        canon = self.canonical()
        return ProgramSummary(
            name=self.name, sense=self.sense, problem_class=canon.problem_class,
            n_variables=canon.n, n_constraints=canon.m, nnz=int(canon.A.nnz),
            quadratic_nnz=0 if canon.P is None else int(canon.P.nnz),
            variables=[{"name": v.name, "shape": list(v.shape), "size": v.size,
                        "lb": _range(v.lb), "ub": _range(v.ub), "integer": v.integer}
                       for v in self.variables.values()],
            constraints=[{"name": c.name, "rows": c.rows, "nnz": c.nnz, "blocks": list(c.coeffs),
                          "kind": _row_kind(c.lb, c.ub)} for c in self.constraints.values()])

    def __repr__(self) -> str:
        return (f"Program({self.name!r}, variables={list(self.variables)}, "
                f"constraints={list(self.constraints)}, sense={self.sense!r})")


def _broadcast(bound: ArrayLike | None, shape: tuple[int, ...], name: str) -> np.ndarray | None:
    if bound is None:
        return None
    try:
        return np.broadcast_to(np.asarray(bound, dtype=float), shape)
    except ValueError:
        raise DataValidationError(f"variable {name!r}: bounds of shape {np.shape(bound)} do not "
                                  f"broadcast to the block shape {shape}.") from None


def _integrality(variables: Mapping[str, Variable]) -> np.ndarray | None:
    if not any(v.integer for v in variables.values()):
        return None
    return np.concatenate([np.full(v.size, v.integer) for v in variables.values()])
