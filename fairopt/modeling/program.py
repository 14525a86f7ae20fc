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

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from fairopt.errors import DataValidationError
from fairopt.modeling.registry import SolverSpec, check_spec, load_backend
from fairopt.modeling.solution import Solution


@dataclass
class Variable:
    """Handle of a variable block returned by :meth:`Program.add_variables`."""

    name: str
    shape: tuple[int, ...]
    lb: np.ndarray
    ub: np.ndarray

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, shape={self.shape})"


@dataclass
class Constraint:
    """A block of linear rows ``lb <= sum_v M_v @ vec(v) <= ub``."""

    name: str
    coeffs: dict[str, sp.csr_matrix]
    lb: np.ndarray
    ub: np.ndarray

    @property
    def rows(self) -> int:
        return self.lb.shape[0]

    @property
    def nnz(self) -> int:
        return int(sum(m.nnz for m in self.coeffs.values()))

    def __repr__(self) -> str:
        return f"Constraint({self.name!r}, rows={self.rows}, blocks={list(self.coeffs)})"


@dataclass
class Canonical:
    """Stacked arrays of a program, in *minimisation* form.

    For a maximisation the objective arrays are negated (``sense = -1``) so that back ends
    only ever minimise; :func:`to_solution` maps values and duals back to the user's sense.
    """

    name: str
    sense: int
    c: np.ndarray
    P: sp.csc_matrix | None
    constant: float
    A: sp.csr_matrix
    rl: np.ndarray
    ru: np.ndarray
    xl: np.ndarray
    xu: np.ndarray
    var_slices: dict[str, slice] = field(default_factory=dict)
    var_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    con_slices: dict[str, slice] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.c.shape[0]

    @property
    def m(self) -> int:
        return self.A.shape[0]

    @property
    def problem_class(self) -> str:
        return "QP" if self.P is not None and self.P.nnz else "LP"

    def column_names(self) -> list[str]:
        return [f"{v}_{i}" for v, s in self.var_slices.items() for i in range(s.stop - s.start)]

    def row_names(self) -> list[str]:
        return [f"{c}_{i}" for c, s in self.con_slices.items() for i in range(s.stop - s.start)]


def to_solution(canon: Canonical, status, x, y, z, backend: str, solver: str, seconds: float,
                iterations=None, log: str = "", objective: float | None = None) -> Solution:
    """Map stacked primal ``x``, row duals ``y`` and bound duals ``z`` (all in fairopt's
    convention for the *internal minimisation*) back to named, user-sense arrays."""
    x = np.full(canon.n, np.nan) if x is None else np.asarray(x, dtype=float)
    if objective is None:
        objective = float(canon.c @ x + canon.constant)
        if canon.P is not None:
            objective += 0.5 * float(x @ (canon.P @ x))
    primal = {v: x[s].reshape(canon.var_shapes[v]) for v, s in canon.var_slices.items()}
    dual = {} if y is None else {k: canon.sense * np.asarray(y[s], dtype=float)
                                 for k, s in canon.con_slices.items()}
    rc = {} if z is None else {v: canon.sense * np.asarray(z[s], dtype=float).reshape(
        canon.var_shapes[v]) for v, s in canon.var_slices.items()}
    return Solution(status=status, objective=canon.sense * objective, primal=primal, dual=dual,
                    reduced_cost=rc, backend=backend, solver=solver, solve_seconds=seconds,
                    iterations=iterations, log=log, program=canon.name)


def _as_bound(value, size: int, name: str, default: float) -> np.ndarray:
    if value is None:
        return np.full(size, default)
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    arr = arr.reshape(-1)
    if arr.shape[0] != size:
        raise DataValidationError(f"{name}: expected {size} bound values, got {arr.shape[0]}.")
    if np.isnan(arr).any():
        raise DataValidationError(f"{name}: bounds contain NaN; use None or +-inf for no bound.")
    return arr


def _as_matrix(value, rows: int | None, cols: int, where: str) -> sp.csr_matrix:
    mat = sp.csr_matrix(value, dtype=float) if not sp.issparse(value) else value.tocsr().astype(float)
    if mat.ndim != 2 or mat.shape[1] != cols or (rows is not None and mat.shape[0] != rows):
        expect = f"({rows if rows is not None else 'm'}, {cols})"
        raise DataValidationError(f"{where}: coefficient matrix has shape {mat.shape}, "
                                  f"expected {expect}.")
    if not np.isfinite(mat.data).all():
        raise DataValidationError(f"{where}: coefficients must be finite.")
    return mat


class Program:
    """A named linear or convex-quadratic program built from arrays.

    Parameters
    ----------
    name : str
        Name used in logs, errors and exported files.

    Examples
    --------
    >>> import numpy as np
    >>> prog = Program("toy")
    >>> x = prog.add_variables("x", shape=(2,), lb=0.0)
    >>> prog.add_constraints("budget", {"x": np.ones((1, 2))}, ub=1.0)
    >>> prog.set_objective(linear={"x": [-1.0, -2.0]})
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
    def add_variables(self, name: str, shape=(1,), lb=0.0, ub=None) -> Variable:
        """Add a block of continuous variables.

        ``lb`` / ``ub`` are scalars or arrays broadcastable to ``shape``; ``None`` means
        unbounded (the default lower bound is 0).
        """
        self._check_new_name(name)
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        if len(shape) not in (1, 2) or min(shape) < 0:
            raise DataValidationError(f"variable {name!r}: shape must be 1-D or 2-D, got {shape}.")
        size = int(np.prod(shape))
        lo = _as_bound(np.broadcast_to(lb, shape) if lb is not None else None, size,
                       f"variable {name!r} lb", -np.inf)
        hi = _as_bound(np.broadcast_to(ub, shape) if ub is not None else None, size,
                       f"variable {name!r} ub", np.inf)
        if (lo > hi).any():
            i = int(np.argmax(lo > hi))
            raise DataValidationError(f"variable {name!r}: lb > ub at entry {i} "
                                      f"({lo[i]} > {hi[i]}).")
        var = Variable(name, shape, lo, hi)
        self.variables[name] = var
        self._canonical = None
        return var

    def add_constraints(self, name: str, coeffs: Mapping[str, Any], lb=None, ub=None) -> Constraint:
        """Add rows ``lb <= sum_v coeffs[v] @ vec(v) <= ub``.

        ``coeffs`` maps variable names to dense or sparse matrices with one column per entry
        of the variable block. ``lb`` / ``ub`` are scalars or per-row arrays; ``None`` is
        ``-inf`` / ``+inf``. Equal bounds give equality rows.
        """
        self._check_new_name(name)
        if not coeffs:
            raise DataValidationError(f"constraint {name!r}: needs at least one variable block.")
        mats, rows = {}, None
        for v, mat in coeffs.items():
            if v not in self.variables:
                raise DataValidationError(f"constraint {name!r} refers to unknown variable {v!r}; "
                                          f"known: {list(self.variables)}.")
            mats[v] = _as_matrix(mat, rows, self.variables[v].size, f"constraint {name!r}, block {v!r}")
            rows = mats[v].shape[0]
        lo = _as_bound(lb, rows, f"constraint {name!r} lb", -np.inf)
        hi = _as_bound(ub, rows, f"constraint {name!r} ub", np.inf)
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
            if arr.shape[0] != var.size or not np.isfinite(arr).all():
                raise DataValidationError(f"objective: linear part for {v!r} must be {var.size} "
                                          "finite numbers.")
            lin[v] = arr
        for key, mat in (quadratic or {}).items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise DataValidationError("objective: quadratic keys are pairs (var1, var2).")
            a, b = (self._var(k, "objective") for k in key)
            quad[key] = _as_matrix(mat, a.size, b.size, f"objective quadratic block {key}")
        self._linear, self._quadratic = lin, quad
        self._constant, self.sense = float(constant), sense
        self._canonical = None

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
                                   for k, parts in zip(self.constraints, row_blocks)
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
            var_shapes={v: var.shape for v, var in self.variables.items()}, con_slices=con_slices)
        return self._canonical

    @property
    def problem_class(self) -> str:
        return self.canonical().problem_class

    # ------------------------------------------------------------------ solving
    def compile(self, solver="highs", **overrides):
        """Compile once for ``solver`` and return a model that can be updated and re-solved
        with warm starts (see :class:`fairopt.modeling.backends.base.CompiledModel`)."""
        if self.sense == "maximize" and self.problem_class == "QP":
            raise DataValidationError(f"program {self.name!r}: a maximised quadratic must be concave; "
                                      "write it as minimising the negated objective.")
        spec = check_spec(SolverSpec.parse(solver, **overrides), self.problem_class)
        return load_backend(spec.backend).compile(self, spec)

    def solve(self, solver="highs", time_limit: float | None = None, verbose: bool | None = None,
              options: Mapping[str, Any] | None = None) -> Solution:
        """Solve and return a :class:`Solution`.

        Raises
        ------
        InfeasibleError, UnboundedError
            The program is infeasible / unbounded (the message names the program).
        SolverNotAvailableError
            The back end or solver is not installed; the message lists installed alternatives.
        SolverError
            The solver failed numerically.
        """
        return self.compile(solver, time_limit=time_limit, verbose=verbose,
                            options=dict(options) if options else None).solve()

    # ------------------------------------------------------------------ native objects and export
    def to_cvxpy(self):
        """Return ``(problem, variables, constraints)``: a ``cvxpy.Problem`` plus dicts of its
        named ``cvxpy.Variable`` blocks and lists of constraints per block, ready to extend."""
        from fairopt.modeling.backends.cvxpy_backend import build_cvxpy
        return build_cvxpy(self.canonical(), user_sense=True)[:3]

    def to_pyomo(self):
        """Return a pyomo ``ConcreteModel`` with one indexed ``Var`` per variable block, one
        indexed ``Constraint`` per constraint block (same names) and an ``objective``."""
        from fairopt.modeling.backends.pyomo_backend import build_pyomo
        return build_pyomo(self.canonical(), user_sense=True)

    def write(self, path) -> None:
        """Export to MPS or LP (chosen by the file extension) through HiGHS."""
        from fairopt.modeling.backends.highs_backend import write_model
        write_model(self.canonical(), str(path))

    def summary(self) -> "ProgramSummary":
        """Blocks, sizes, nonzeros and problem class."""
        canon = self.canonical()
        return ProgramSummary(
            name=self.name, sense=self.sense, problem_class=canon.problem_class,
            n_variables=canon.n, n_constraints=canon.m, nnz=int(canon.A.nnz),
            quadratic_nnz=0 if canon.P is None else int(canon.P.nnz),
            variables=[{"name": v.name, "shape": list(v.shape), "size": v.size,
                        "lb": _range(v.lb), "ub": _range(v.ub)} for v in self.variables.values()],
            constraints=[{"name": c.name, "rows": c.rows, "nnz": c.nnz, "blocks": list(c.coeffs),
                          "kind": _row_kind(c.lb, c.ub)} for c in self.constraints.values()])

    def __repr__(self) -> str:
        return (f"Program({self.name!r}, variables={list(self.variables)}, "
                f"constraints={list(self.constraints)}, sense={self.sense!r})")


def _range(arr: np.ndarray) -> list[float] | float | None:
    if arr.size == 0:
        return None
    lo, hi = float(arr.min()), float(arr.max())
    return lo if lo == hi else [lo, hi]


def _row_kind(lb: np.ndarray, ub: np.ndarray) -> str:
    eq = lb == ub
    if eq.all():
        return "=="
    kinds = []
    if (np.isfinite(lb) & ~eq).any():
        kinds.append(">=")
    if (np.isfinite(ub) & ~eq).any():
        kinds.append("<=")
    if eq.any():
        kinds.append("==")
    return ",".join(kinds) or "free"


@dataclass
class ProgramSummary:
    """Printable, JSON-friendly description of a :class:`Program`."""

    name: str
    sense: str
    problem_class: str
    n_variables: int
    n_constraints: int
    nnz: int
    quadratic_nnz: int
    variables: list[dict]
    constraints: list[dict]

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def __str__(self) -> str:
        lines = [f"program {self.name}: {self.problem_class}, {self.sense}, "
                 f"{self.n_variables} variables, {self.n_constraints} rows, {self.nnz} nonzeros"
                 + (f", {self.quadratic_nnz} quadratic nonzeros" if self.quadratic_nnz else "")]
        lines.append("  variables:")
        lines += [f"    {v['name']:<24} shape={tuple(v['shape'])!s:<14} lb={v['lb']} ub={v['ub']}"
                  for v in self.variables]
        lines.append("  constraints:")
        lines += [f"    {c['name']:<24} rows={c['rows']:<8} nnz={c['nnz']:<8} {c['kind']:<8} "
                  f"blocks={c['blocks']}" for c in self.constraints]
        return "\n".join(lines)
