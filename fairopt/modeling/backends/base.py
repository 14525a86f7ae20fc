"""Compiled-model protocol shared by all back ends.

A back end compiles a :class:`~fairopt.modeling.program.Canonical` once. Loops that only change
costs or bounds call the ``set_*`` methods and :meth:`CompiledModel.solve` again; back ends that
can (HiGHS, OSQP) apply the change in place and warm-start from the previous basis or iterate,
the others rebuild lazily.
"""
from __future__ import annotations

import contextlib
import copy
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from fairopt.errors import DataValidationError, InfeasibleError, SolverError, SolverLimitError, UnboundedError
from fairopt.modeling.canonical import Canonical, as_bound, check_coefficients, to_solution
from fairopt.modeling.certify import certify, reference_solve
from fairopt.modeling.solution import NativeResult, RawResult, Solution, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

if TYPE_CHECKING:
    import scipy.sparse as sp
    from numpy.typing import ArrayLike


class SmoothOracle(Protocol):
    """What the back ends read of a smooth problem.

    :class:`~fairopt.modeling.smooth.SmoothProblem` implements it; it sits above the back ends,
    which therefore name this protocol instead of importing it.

    Examples
    --------
    >>> from fairopt.modeling.smooth import SmoothProblem
    >>> all(hasattr(SmoothProblem, m) for m in ("value_grad", "native_solve", "to_cvxpy"))
    True
    """

    description: str
    family: str
    has_hessian: bool

    @property
    def dim(self) -> int: ...
    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]: ...
    def hessian(self, x: np.ndarray) -> np.ndarray: ...
    def optimality(self, x: np.ndarray, grad: np.ndarray) -> float: ...
    def native_solve(self, x0: np.ndarray, tol: float, max_iter: int,
                     deadline: float | None) -> NativeResult: ...
    def has_form(self, kind: str) -> bool: ...
    # the forms are smooth.CvxpyForm and smooth.PyomoForm, which sit above the back ends
    def to_cvxpy(self) -> Any: ...
    def to_pyomo(self) -> Any: ...


class CompiledModel:
    """A program compiled for one back end; update costs/bounds and re-solve."""

    backend = "base"
    #: ``references()`` yields ``(label, compiled model)`` of the reference back ends that
    #: :func:`~fairopt.modeling.certify.reference_solve` may ask; set by the registry at compile time
    references: Callable[[], Iterator[tuple[str, CompiledModel]]] | None = None
    #: the back end's declaration (set by each back end's model class)
    info: BackendInfo | None = None

    @property
    def active_set_qp(self) -> bool:
        """Whether QPs go to an active-set QP solver (declared in ``BackendInfo.active_set_qp``),
        which needs routing on some singular Hessians (see :func:`singular_free_hessian`)."""
        return self.info is not None and self.spec.solver in self.info.active_set_qp

    @property
    def stalls_on_degenerate(self) -> bool:
        """Whether reaching the solver's *default* iteration limit means it stalled (the program
        then goes to a reference solver; the log says so): an active-set QP solver cycles on some
        singular Hessians, so fairopt caps it (:meth:`qp_iteration_cap`) unless the options do."""
        key = self.info.qp_iteration_limit_key if self.info is not None else None
        return self.active_set_qp and self.canon.P is not None and key is not None and \
            key not in self.spec.options

    def qp_iteration_cap(self) -> dict[str, Any]:
        """Options capping the active-set QP iterations (empty when not applicable or user-set)."""
        if not self.stalls_on_degenerate:
            return {}
        assert self.info is not None and self.info.qp_iteration_limit_key is not None
        return {self.info.qp_iteration_limit_key: 20_000 + 100 * (self.canon.n + self.canon.m)}

    # ``program`` is a fairopt.modeling.Program, not imported: the back ends sit below it
    def __init__(self, program: Any, spec: SolverSpec) -> None:
        self.program = program
        self.spec = spec
        canon = program.canonical()
        # private copy: updates must not leak into the Program
        self.canon: Canonical = copy.copy(canon)
        for attr in ("c", "rl", "ru", "xl", "xu"):
            setattr(self.canon, attr, getattr(canon, attr).copy())
        self._dirty = True
        self.build_seconds = 0.0

    def set_basis(self, basic_columns: np.ndarray, basic_rows: np.ndarray) -> bool:
        """Offer a starting basis (``True`` = basic, one flag per column and per row); returns
        whether the back end starts from it. A back end without bases (the default) ignores
        it, so a formulation can offer one whatever the solver (capability ``warm_start``)."""
        return False

    # -- updates (user sense) -------------------------------------------------------------
    def set_objective(self, linear: Mapping[str, Any]) -> None:
        """Replace the linear cost of the named variable blocks."""
        for v, c in linear.items():
            s = self._var_slice(v)
            arr = np.asarray(c, dtype=float).reshape(-1)
            if arr.shape[0] != s.stop - s.start:
                raise DataValidationError(f"set_objective: {v!r} needs {s.stop - s.start} costs.")
            check_coefficients(arr, f"set_objective: costs of {v!r}")
            self.canon.c[s] = self.canon.sense * arr
        self._costs_changed()

    def set_constraint_bounds(self, name: str, lb: ArrayLike | None = None, ub: ArrayLike | None = None) -> None:
        """Replace the bounds of constraint block ``name`` (``None`` keeps the current side)."""
        if name not in self.canon.con_slices:
            raise DataValidationError(f"unknown constraint block {name!r}; known: {list(self.canon.con_slices)}.")
        s = self.canon.con_slices[name]
        self._set_bounds(self.canon.rl, self.canon.ru, s, lb, ub, f"constraint {name!r}")
        self._row_bounds_changed(s)

    def set_variable_bounds(self, name: str, lb: ArrayLike | None = None, ub: ArrayLike | None = None) -> None:
        """Replace the bounds of variable block ``name`` (``None`` keeps the current side)."""
        s = self._var_slice(name)
        self._set_bounds(self.canon.xl, self.canon.xu, s, lb, ub, f"variable {name!r}")
        self._col_bounds_changed(s)

    def extend_variables(self, name: str, coeffs: Mapping[str, Any], cost: ArrayLike, lb: ArrayLike | None = 0.0,
                         ub: ArrayLike | None = None) -> None:
        """Append ``k`` columns to the *last* variable block (which must be 1-D).

        ``coeffs`` maps constraint-block names to ``(rows, k)`` matrices (blocks not named get
        zeros); ``cost``, ``lb`` and ``ub`` give the new columns' objective coefficients (user
        sense) and bounds. Column-generation loops use this to grow a restricted master problem
        and re-solve from the previous basis instead of rebuilding it.
        """
        import scipy.sparse as sp
        c = self.canon
        last = next(reversed(c.var_slices))
        if name != last or len(c.var_shapes[name]) != 1:
            raise DataValidationError(f"extend_variables grows only the last 1-D variable block "
                                      f"({last!r}); declare {name!r} last to grow it.")
        cost = np.asarray(cost, dtype=float).reshape(-1)
        k = cost.shape[0]
        unknown = set(coeffs) - set(c.con_slices)
        if unknown:
            raise DataValidationError(f"extend_variables: unknown constraint blocks {sorted(unknown)}.")
        parts = []
        for con, s in c.con_slices.items():
            rows = s.stop - s.start
            mat = coeffs.get(con)
            mat = sp.csr_matrix((rows, k)) if mat is None else sp.csr_matrix(mat, dtype=float)
            if mat.shape != (rows, k):
                raise DataValidationError(f"extend_variables: block {con!r} needs shape ({rows}, {k}), "
                                          f"got {mat.shape}.")
            parts.append(mat)
        new_cols = sp.vstack(parts, format="csc") if parts else sp.csc_matrix((0, k))
        lo = as_bound(lb, k, f"variable {name!r} lb", -np.inf, side="lb")
        hi = as_bound(ub, k, f"variable {name!r} ub", np.inf, side="ub")
        n0 = c.n
        c.c = np.concatenate([c.c, c.sense * cost])
        c.xl, c.xu = np.concatenate([c.xl, lo]), np.concatenate([c.xu, hi])
        c.A = sp.hstack([c.A, new_cols], format="csr")
        if c.integrality is not None:  # new columns are continuous
            c.integrality = np.concatenate([c.integrality, np.zeros(k, dtype=bool)])
        if c.P is not None:
            c.P = sp.block_diag([c.P, sp.csc_matrix((k, k))], format="csc")
        old = c.var_slices[name]
        c.var_slices = {**c.var_slices, name: slice(old.start, old.stop + k)}
        c.var_shapes = {**c.var_shapes, name: (old.stop + k - old.start,)}
        self._columns_added(n0, new_cols, c.c[n0:], lo, hi)

    def _columns_added(self, n0: int, cols: sp.csc_matrix, cost: np.ndarray, lo: np.ndarray,
                       hi: np.ndarray) -> None:
        self._dirty = True

    def add_rows(self, name: str, coeffs: Mapping[str, Any], lb: ArrayLike | None = None,
                 ub: ArrayLike | None = None) -> None:
        """Append a constraint block ``name`` of rows ``lb <= sum_v coeffs[v] @ vec(v) <= ub``
        to the compiled model (not to its Program). Row-generation loops use this to grow a
        restricted master and re-solve from the previous basis (HiGHS adds the rows in place;
        other back ends rebuild before the next solve)."""
        import scipy.sparse as sp
        c = self.canon
        if name in c.con_slices:
            raise DataValidationError(f"add_rows: the model already has a constraint block {name!r}.")
        parts, rows = [], None
        for v, mat in coeffs.items():
            s = self._var_slice(v)
            mat = sp.csr_matrix(mat, dtype=float)
            if mat.shape[1] != s.stop - s.start or (rows is not None and mat.shape[0] != rows):
                raise DataValidationError(f"add_rows: block {v!r} needs {s.stop - s.start} columns and the same "
                                          f"rows as the others, got {mat.shape}.")
            rows = mat.shape[0]
            coo = mat.tocoo()
            parts.append((coo.data, coo.row, coo.col + s.start))
        if rows is None:
            raise DataValidationError("add_rows: needs at least one variable block.")
        new = sp.csr_matrix((np.concatenate([p[0] for p in parts]),
                             (np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))),
                            shape=(rows, c.n))
        lo = as_bound(lb, rows, f"constraint {name!r} lb", -np.inf, side="lb")
        hi = as_bound(ub, rows, f"constraint {name!r} ub", np.inf, side="ub")
        m0 = c.m
        c.A = sp.vstack([c.A, new], format="csr")
        c.rl, c.ru = np.concatenate([c.rl, lo]), np.concatenate([c.ru, hi])
        c.con_slices = {**c.con_slices, name: slice(m0, m0 + rows)}
        self._rows_added(new, lo, hi)

    def _rows_added(self, rows: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> None:
        self._dirty = True

    def set_options(self, options: Mapping[str, Any]) -> None:
        """Merge ``options`` into the solver options of the next solves (back ends that can
        change them in place keep the compiled model and its basis; the others rebuild)."""
        self.spec = SolverSpec(self.spec.backend, self.spec.solver, {**self.spec.options, **dict(options)},
                               self.spec.time_limit, self.spec.verbose)

    def _var_slice(self, name: str) -> slice:
        if name not in self.canon.var_slices:
            raise DataValidationError(f"unknown variable block {name!r}; known: {list(self.canon.var_slices)}.")
        return self.canon.var_slices[name]

    @staticmethod
    def _set_bounds(lo: np.ndarray, hi: np.ndarray, s: slice, lb: ArrayLike | None, ub: ArrayLike | None,
                    where: str) -> None:
        size = s.stop - s.start
        new_lo = lo[s] if lb is None else as_bound(lb, size, where + " lb", -np.inf, side="lb")
        new_hi = hi[s] if ub is None else as_bound(ub, size, where + " ub", np.inf, side="ub")
        if (new_lo > new_hi).any():
            raise DataValidationError(f"{where}: lb > ub after the update.")
        lo[s], hi[s] = new_lo, new_hi

    # hooks: by default, any change triggers a rebuild before the next solve
    def _costs_changed(self) -> None:
        self._dirty = True

    def _row_bounds_changed(self, s: slice) -> None:
        self._dirty = True

    def _col_bounds_changed(self, s: slice) -> None:
        self._dirty = True

    def _build(self) -> None:  # compile self.canon into native objects
        raise SolverError(f"back end {self.backend!r} defines no build step")

    def _run(self) -> RawResult:
        raise SolverError(f"back end {self.backend!r} defines no solve step")

    # -- solving ----------------------------------------------------------------------------
    def solve(self, require_optimal: bool = False) -> Solution:
        """Solve (warm-started where the back end supports it) and certify the status.

        Infeasible and unbounded claims are checked (a phase-one LP and a recession-ray LP)
        before they are reported, and an "optimal" point is checked for feasibility, so that
        every back end reports the same, true status (see :mod:`fairopt.modeling.certify`).

        Parameters
        ----------
        require_optimal : bool, default False
            Raise instead of returning a non-optimal solution: :class:`SolverLimitError` for a
            time or iteration limit.
        """
        with quiet(not self.spec.verbose):
            if self._dirty:
                t0 = time.perf_counter()
                self._build()
                self.build_seconds = time.perf_counter() - t0
                self._dirty = False
            t0 = time.perf_counter()
            if self.active_set_qp and self.canon.P is not None and singular_free_hessian(self.canon):
                raw = reference_solve(self, "HiGHS's QP solver does not terminate when free "
                                            "variables span the null space of P")
            else:
                raw = self._run()
            seconds = time.perf_counter() - t0
            raw = certify(self, raw)
        status = raw.status
        where = f"program {self.canon.name!r} ({self.backend}:{self.spec.solver})"
        if status is Status.INFEASIBLE:
            raise InfeasibleError(f"{where} is infeasible: no point satisfies all constraints.",
                                  program=self.canon.name, status=status, log=raw.log)
        if status is Status.UNBOUNDED:
            raise UnboundedError(f"{where} is unbounded: a variable bound or constraint is missing.",
                                 program=self.canon.name, status=status, log=raw.log)
        if status in (Status.NUMERICAL, Status.ERROR, Status.INFEASIBLE_OR_UNBOUNDED):
            raise SolverError(f"{where} failed with status {status.value}. {raw.log}".strip(),
                              status=status, log=raw.log)
        sol = to_solution(self.canon, status, raw.x, raw.y, raw.z, self.backend,
                          str(self.spec.solver), seconds, raw.iterations, raw.log, raw.objective,
                          raw.mip_gap, raw.bound)
        if require_optimal:
            raise_unless_optimal(sol, where)
        return sol


def singular_free_hessian(canon: Canonical) -> bool:
    """True when some direction moving only free variables lies in the null space of ``P``
    (HiGHS's active-set QP solver then iterates until its time limit)."""
    assert canon.P is not None, "only asked of QP problems"
    free = np.flatnonzero(~np.isfinite(canon.xl) & ~np.isfinite(canon.xu))
    if free.size == 0:
        return False
    sub = canon.P[free][:, free]
    if free.size > 2000:  # too large for a dense rank test: a zero diagonal is a sure sign
        return bool((sub.diagonal() <= 0).any())
    w = np.linalg.eigvalsh(sub.toarray())
    return bool(w[0] <= 1e-10 * max(1.0, abs(w[-1])))


def raise_unless_optimal(sol: Solution, where: str) -> Solution:
    """Return ``sol`` if optimal, else raise the typed error for its status."""
    if sol.status is Status.OPTIMAL:
        return sol
    if sol.status in (Status.TIME_LIMIT, Status.ITERATION_LIMIT):
        what = "time_limit" if sol.status is Status.TIME_LIMIT else "the iteration limit"
        raise SolverLimitError(f"{where} stopped at its {sol.status.value} before optimality; "
                               f"raise {what} (solver options) to finish.",
                               status=sol.status, log=sol.log)
    raise SolverError(f"{where} stopped with status {sol.status.value}; no optimal solution.",
                      status=sol.status, log=sol.log)


@contextlib.contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """Silence solver libraries while ``enabled``: ``sys.stdout`` (OSQP prints its polishing
    notes through Python) and file descriptor 1 (C-level output such as the HiGHS banner)."""
    if not enabled:
        yield
        return
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        try:
            saved = os.dup(1)
        except OSError:  # no file descriptor 1 (embedded interpreters): Python level only
            yield
            return
        try:
            os.dup2(sink.fileno(), 1)
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)
