"""Stacked arrays of a program and the map from solver output back to named results.

:class:`Canonical` is what every back end compiles; :func:`to_solution` is how every back end
reports. Both live below :mod:`fairopt.modeling.program` so that back ends never import the
modelling front end. The ``as_*`` helpers are the one place where bounds and coefficients are
checked, so that malformed numbers fail while a program is being built (with the block and
index to fix), never inside a solver.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import scipy.sparse as sp

from fairopt._docstrings import fill_doc
from fairopt.errors import DataValidationError
from fairopt.modeling.solution import Solution, Status

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: largest finite magnitude accepted for a bound (HiGHS reads 1e20 as infinite, OSQP 1e30)
MAX_BOUND = 1e19
#: largest magnitude accepted for a coefficient or cost (HiGHS refuses matrix values above 1e15)
MAX_COEFFICIENT = 1e15



def _slice_names(slices: dict[str, slice]) -> list[str]:
    """``<block>_<index>`` of every entry of the stacked blocks ``slices``, in stacked order."""
    return [f"{b}_{i}" for b, s in slices.items() for i in range(s.stop - s.start)]


@fill_doc
@dataclass
class Canonical:
    """Stacked arrays of a program, in *minimisation* form.

    For a maximisation the objective arrays are negated (``sense = -1``) so that back ends
    only ever minimise; :func:`to_solution` maps values and duals back to the user's sense.

    Examples
    --------
    {example_toy_program}
    >>> canon = prog.canonical()
    >>> canon.n, canon.m, canon.problem_class
    (2, 1, 'LP')
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
    #: mask of integer columns (None: all continuous)
    integrality: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of columns (scalar variables)."""
        return int(self.c.shape[0])

    @property
    def m(self) -> int:
        """Number of rows (scalar constraints)."""
        return int(self.A.shape[0])

    @property
    def problem_class(self) -> str:
        """Problem class: ``"LP"``, ``"QP"``, ``"MILP"`` or ``"MIQP"``."""
        quadratic = self.P is not None and self.P.nnz
        if self.is_mip:
            return "MIQP" if quadratic else "MILP"
        return "QP" if quadratic else "LP"

    @property
    def is_mip(self) -> bool:
        """Whether any column is integer."""
        return self.integrality is not None and bool(self.integrality.any())

    def integer_mask(self) -> np.ndarray:
        """Boolean mask of the integer columns (all ``False`` when none is integer)."""
        return np.zeros(self.n, dtype=bool) if self.integrality is None else self.integrality

    def column_names(self) -> list[str]:
        """Name of every column, ``<variable>_<flat index>``, in column order (a list of str)."""
        return _slice_names(self.var_slices)

    def row_names(self) -> list[str]:
        """Name of every row, ``<constraint>_<row index>``, in row order (a list of str)."""
        return _slice_names(self.con_slices)

    def column_label(self, j: int) -> str:
        """``"block[index]"`` of stacked column ``j`` (for messages)."""
        for v, s in self.var_slices.items():
            if s.start <= j < s.stop:
                return f"variable {v!r}[{_unravel(j - s.start, self.var_shapes[v])}]"
        return f"column {j}"

    def row_label(self, i: int) -> str:
        """Human-readable label of row ``i`` for error messages.

        Parameters
        ----------
        i : int
            Row index in the canonical matrix.

        Returns
        -------
        str
            ``"constraint 'name' row k"``, or ``"row i"`` outside every block.
        """
        for k, s in self.con_slices.items():
            if s.start <= i < s.stop:
                return f"constraint {k!r} row {i - s.start}"
        return f"row {i}"

    def unused_columns(self) -> np.ndarray:
        """Mask of columns that appear in no row, no cost and no quadratic term: any point
        inside their bounds is optimal."""
        used = self.c != 0
        for M in (self.A, self.P):
            if M is not None:   # stored entries that are not zero, by column (no |M| copy)
                coo = M.tocoo(copy=False)
                used |= np.bincount(coo.col[coo.data != 0], minlength=self.n) > 0
        unused: np.ndarray = ~used
        return unused


def _unravel(k: int, shape: tuple[int, ...]) -> int | tuple[int, ...]:
    idx = np.unravel_index(k, shape)
    return int(idx[0]) if len(idx) == 1 else tuple(int(i) for i in idx)


@fill_doc
def to_solution(canon: Canonical, status: Status, x: ArrayLike | None, y: np.ndarray | None,
                z: np.ndarray | None, backend: str, solver: str, seconds: float,
                iterations: int | None = None, log: str = "", objective: float | None = None,
                mip_gap: float | None = None, bound: float | None = None) -> Solution:
    """Map stacked primal ``x``, row duals ``y`` and bound duals ``z`` (all in fairopt's
    convention for the *internal minimisation*) back to named, user-sense arrays.

    Examples
    --------
    {example_toy_program}
    >>> from fairopt.modeling import Status
    >>> sol = to_solution(prog.canonical(), Status.OPTIMAL, x=np.array([0.0, 1.0]), y=np.array([-2.0]),
    ...                   z=np.zeros(2), backend="demo", solver="demo", seconds=0.0)
    >>> sol.primal["x"].tolist(), sol.objective, sol.dual["budget"].tolist()
    ([0.0, 1.0], -2.0, [-2.0])
    """
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
                    iterations=iterations, log=log, program=canon.name, mip_gap=mip_gap,
                    objective_bound=None if bound is None else canon.sense * bound)


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def as_bound(value: ArrayLike | None, size: int, name: str, default: float,
             side: Literal["lb", "ub"] | None = None) -> np.ndarray:
    """Bounds as a float vector of length ``size``; ``None`` gives ``default``.

    ``side`` (``"lb"`` or ``"ub"``) rejects an infinity on the wrong side (``lb=+inf`` or
    ``ub=-inf`` admit no point) and finite magnitudes solvers would read as infinite.
    """
    if value is None:
        return np.full(size, default)
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    arr = arr.reshape(-1)
    if arr.shape[0] != size:
        raise DataValidationError(f"{name}: expected {size} bound values, got {arr.shape[0]}.")
    if np.isnan(arr).any():
        raise DataValidationError(f"{name}: bounds contain NaN at index {_first(np.isnan(arr))}; "
                                  "use None or +-inf for no bound.")
    if side is not None:
        wrong = arr == (np.inf if side == "lb" else -np.inf)
        if wrong.any():
            raise DataValidationError(
                f"{name}: {'+inf' if side == 'lb' else '-inf'} at index {_first(wrong)} admits no "
                f"point; use {'-inf' if side == 'lb' else '+inf'} or None for no bound.")
    huge = np.isfinite(arr) & (np.abs(arr) > MAX_BOUND)
    if huge.any():
        i = _first(huge)
        raise DataValidationError(f"{name}: bound {arr[i]:g} at index {i} exceeds {MAX_BOUND:g} in "
                                  "magnitude; use None or +-inf for no bound, or rescale the model.")
    return arr


def check_coefficients(values: np.ndarray, where: str) -> None:
    """Coefficients must be finite and at most :data:`MAX_COEFFICIENT` in magnitude."""
    bad = ~np.isfinite(values) | (np.abs(np.nan_to_num(values)) > MAX_COEFFICIENT)
    if bad.any():
        i = _first(bad)
        raise DataValidationError(
            f"{where}: coefficient {values[i]!r} at (flat) index {i} is not finite or exceeds "
            f"{MAX_COEFFICIENT:g} in magnitude; rescale the model.")


def as_matrix(value: ArrayLike | sp.spmatrix, rows: int | None, cols: int, where: str) -> sp.csr_matrix:
    """A sparse ``(rows, cols)`` coefficient block with checked entries."""
    mat = sp.csr_matrix(value, dtype=float)
    if mat.ndim != 2 or mat.shape[1] != cols or (rows is not None and mat.shape[0] != rows):
        expect = f"({rows if rows is not None else 'm'}, {cols})"
        raise DataValidationError(f"{where}: coefficient matrix has shape {mat.shape}, "
                                  f"expected {expect}.")
    bad = ~np.isfinite(mat.data) | (np.abs(np.nan_to_num(mat.data)) > MAX_COEFFICIENT)
    if bad.any():   # the entry's position: COO keeps the CSR's entry order
        coo = mat.tocoo()
        i = _first(bad)
        raise DataValidationError(
            f"{where}: coefficient {coo.data[i]!r} at ({int(coo.row[i])}, {int(coo.col[i])}) is not "
            f"finite or exceeds {MAX_COEFFICIENT:g} in magnitude; rescale the model.")
    return mat


def check_convex(P: sp.spmatrix | None, sense: int, label: Callable[[int], str]) -> None:
    """Raise unless the minimisation-form Hessian ``P`` of a canonical program is positive
    semidefinite (``sense = -1``: the user maximises ``-P``, which must be concave).

    ``label(j)`` names stacked column ``j``. Diagonal ``P`` is checked entrywise; otherwise the
    smallest eigenvalue of the nonzero principal submatrix is computed (dense up to 2,000
    columns, Lanczos beyond).
    """
    if P is None or P.nnz == 0:
        return
    Q = P.tocsc()
    scale = max(1.0, float(np.abs(Q.data).max()))
    tol = 1e-9 * scale
    what = "maximised quadratic must be concave (negative semidefinite)" if sense < 0 else \
        "quadratic part must be convex (positive semidefinite)"
    diag_only = (Q - sp.diags(Q.diagonal())).count_nonzero() == 0
    if diag_only:
        d = Q.diagonal()
        if (d < -tol).any():
            j = _first(d < -tol)
            raise DataValidationError(f"objective: the {what}; the diagonal entry of {label(j)} "
                                      f"is {sense * d[j]:g}. Non-convex QPs are not supported.")
        return
    used = np.flatnonzero(np.asarray(abs(Q).sum(axis=0)).ravel() > 0)
    sub = Q[used][:, used]
    if used.size <= 2000:
        w, V = np.linalg.eigh(sub.toarray())
        lam, vec = float(w[0]), V[:, 0]
    else:
        from scipy.sparse.linalg import eigsh
        w, V = eigsh(sub, k=1, which="SA", tol=1e-8)
        lam, vec = float(w[0]), V[:, 0]
    if lam < -tol:
        j = int(used[np.argmax(np.abs(vec))])
        raise DataValidationError(
            f"objective: the {what}; its {'largest' if sense < 0 else 'smallest'} eigenvalue is "
            f"{sense * lam:g}, along a "
            f"direction led by {label(j)}. Non-convex QPs are not supported.")


#: objectives whose largest coefficient lies outside this band are solved rescaled (see objective_unit)
OBJECTIVE_BAND = (1e-4, 1e6)


def objective_unit(canon: Canonical) -> float:
    """A power of two ``f`` with ``f * max|c, P|`` near 1 when the objective's largest coefficient is
    outside :data:`OBJECTIVE_BAND` (else 1): solvers' dual tolerances are absolute, so an objective of
    magnitude 1e-9 would read as zero and any feasible point as optimal.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("tiny")
    >>> _ = prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    >>> prog.set_objective(linear={"x": [-1e-9, -2e-9]})
    >>> objective_unit(prog.canonical()) == 2.0 ** 29
    True
    """
    parts = [np.abs(canon.c)] + ([np.abs(canon.P.data)] if canon.P is not None and canon.P.nnz else [])
    big = max(float(p.max()) if p.size else 0.0 for p in parts)
    if big == 0.0 or OBJECTIVE_BAND[0] <= big <= OBJECTIVE_BAND[1]:
        return 1.0
    return float(2.0 ** -np.round(np.log2(big)))


def unscale_solution(sol: Solution, unit: float) -> Solution:
    """``sol`` of a program whose objective was multiplied by ``unit``, in the original units
    (objective, bound, duals and reduced costs divided by ``unit``; primal values unchanged).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Status
    >>> sol = Solution(Status.OPTIMAL, 2.0, {"x": np.ones(1)}, {"row": np.array([4.0])}, "demo", "demo", 0.0)
    >>> back = unscale_solution(sol, 2.0)
    >>> back.objective, back.dual["row"].tolist()
    (1.0, [2.0])
    """
    import dataclasses
    return dataclasses.replace(
        sol, objective=sol.objective / unit, dual={k: v / unit for k, v in sol.dual.items()},
        reduced_cost={k: v / unit for k, v in sol.reduced_cost.items()},
        objective_bound=None if sol.objective_bound is None else sol.objective_bound / unit,
        relaxation=None if sol.relaxation is None else unscale_solution(sol.relaxation, unit))
