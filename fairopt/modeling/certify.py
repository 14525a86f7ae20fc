"""Certify a back end's status before it reaches the user.

Solvers disagree on degenerate instances: an interior-point method may call an infeasible program
"dual infeasible" (read as unbounded), an active-set QP solver may misjudge a singular Hessian.
Every claim is therefore checked the same way, whatever the back end:

* **infeasible / unbounded.** A phase-one LP (zero objective, HiGHS simplex) decides feasibility;
  for a feasible program a recession-ray LP decides boundedness. A convex QP is unbounded below
  exactly when it is feasible and some ray ``d`` keeps every row and bound
  (``A d`` and ``d`` in the recession cones), lies in the null space of ``P`` and has
  ``c'd < 0`` (Frank–Wolfe theorem). Both are small LPs over the same matrix.
* **optimal.** The point must be finite and feasible to ``FEAS_TOL`` (scaled by the row norms);
  a huge point is tested for a recession ray (a solver that ran off to 1e14 on an unbounded QP
  did not find an optimum).

A claim that fails its check is re-solved by a reference back end (HiGHS for LPs, OSQP then
cvxpy:CLARABEL for QPs), verified the same way, and the log says so.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import RawResult, Status
from fairopt.modeling.spec import SolverSpec

#: primal feasibility tolerance, relative to ``1 + |bound|`` of each row or column
FEAS_TOL = 1e-6
#: relative KKT residual above which a QP "optimal" of HiGHS's QP solver is re-solved
KKT_TOL = 1e-7
#: programs with at most this many columns plus rows get their duals refined on the active set
POLISH_SIZE = 400
#: entries beyond this magnitude are treated as a solver running off along a ray
HUGE = 1e9


class _Compiled(Protocol):
    """What the certificates read of a back end's compiled model (the back ends sit above)."""

    canon: Canonical
    spec: SolverSpec
    _dirty: bool

    @property
    def backend(self) -> str: ...
    @property
    def active_set_qp(self) -> bool: ...
    @property
    def stalls_on_degenerate(self) -> bool: ...
    @property
    def references(self) -> Callable[[], Iterable[tuple[str, _Compiled]]] | None: ...
    def _build(self) -> None: ...
    def _run(self) -> RawResult: ...


def _highs_lp(c: np.ndarray, A: sp.spmatrix | np.ndarray, rl: np.ndarray, ru: np.ndarray, xl: np.ndarray,
              xu: np.ndarray) -> str:
    """Model status name of the LP ``min c'x, rl <= Ax <= ru, xl <= x <= xu`` in HiGHS."""
    import highspy
    h = highspy.Highs()  # type: ignore[no-untyped-call, unused-ignore]  # strict only: highspy ships no annotations
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    n, m = c.shape[0], A.shape[0]
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = c, xl, xu
    lp.row_lower_, lp.row_upper_ = rl, ru
    A = sp.csc_matrix(A)
    A.sort_indices()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    h.passModel(lp)
    h.run()
    return h.getModelStatus().name


def is_feasible(canon: Canonical) -> bool:
    """Phase one: do the rows and bounds of ``canon`` admit a point?"""
    return _highs_lp(np.zeros(canon.n), canon.A, canon.rl, canon.ru, canon.xl, canon.xu) == "kOptimal"


def has_descent_ray(canon: Canonical) -> bool:
    """Is there ``d`` in the recession cone of the feasible set with ``P d = 0`` and ``c'd < 0``?

    Normalised by ``c'd <= -1``; the LP is feasible exactly when such a ray exists.
    """
    n = canon.n
    if not np.any(canon.c):
        return False
    rl = np.where(np.isfinite(canon.rl), 0.0, -np.inf)
    ru = np.where(np.isfinite(canon.ru), 0.0, np.inf)
    blocks, lo, hi = [canon.A], [rl], [ru]
    if canon.P is not None and canon.P.nnz:
        blocks.append(canon.P)
        lo.append(np.zeros(n))
        hi.append(np.zeros(n))
    scale = 1.0 / max(np.abs(canon.c).max(), 1e-300)
    blocks.append(sp.csr_matrix(canon.c.reshape(1, -1) * scale))
    lo.append(np.array([-np.inf]))
    hi.append(np.array([-1.0]))
    xl = np.where(np.isfinite(canon.xl), 0.0, -np.inf)
    xu = np.where(np.isfinite(canon.xu), 0.0, np.inf)
    status = _highs_lp(np.zeros(n), sp.vstack(blocks, format="csr"), np.concatenate(lo),
                       np.concatenate(hi), xl, xu)
    return status == "kOptimal"


def true_improper_status(canon: Canonical) -> Status | None:
    """INFEASIBLE or UNBOUNDED when the program is one of those, else None (it has an optimum)."""
    if not is_feasible(canon):
        return Status.INFEASIBLE
    if has_descent_ray(canon):
        return Status.UNBOUNDED
    return None


def _side_violation(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lo), (lo - v) / (1.0 + np.abs(lo)), 0.0)
        above = np.where(np.isfinite(hi), (v - hi) / (1.0 + np.abs(hi)), 0.0)
    return float(np.max(np.maximum(below, above), initial=0.0))


def kkt_residual(canon: Canonical, x: np.ndarray, y: np.ndarray | None, z: np.ndarray | None) -> float:
    """Relative KKT residual of a QP point: stationarity ``Px + c = A'y + z`` plus
    complementarity of ``y`` (and of ``z`` when the solver gives none, taken from stationarity),
    each relative to the size of the objective's gradient and value."""
    if y is None:
        return np.inf
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = canon.c + (canon.P @ x if canon.P is not None else 0.0)
    Aty = canon.A.T @ y if canon.m else np.zeros(canon.n)
    z = g - Aty if z is None else np.asarray(z, dtype=float)
    scale = 1.0 + np.abs(g).max(initial=0.0) + np.abs(Aty).max(initial=0.0)
    stat = np.abs(g - Aty - z).max(initial=0.0) / scale

    def gap(mult: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
        # a positive multiplier needs v on its lower side, a negative one on its upper side
        mult = np.where(np.abs(mult) > 1e-9 * scale, mult, 0.0)
        with np.errstate(invalid="ignore"):
            lo_gap = np.where(mult > 0, np.where(np.isfinite(lo), v - lo, np.inf), 0.0)
            hi_gap = np.where(mult < 0, np.where(np.isfinite(hi), hi - v, np.inf), 0.0)
        return float(np.sum(np.abs(mult) * (np.maximum(lo_gap, 0.0) + np.maximum(hi_gap, 0.0))))
    comp = gap(y, canon.A @ x, canon.rl, canon.ru) if canon.m else 0.0
    comp += gap(z, x, canon.xl, canon.xu)
    f = float(g @ x)
    residual: float = max(stat, comp / (1.0 + abs(f) + np.abs(canon.c @ x)))
    return residual


def refine_duals(canon: Canonical, raw: RawResult, act_tol: float = 1e-7) -> bool:
    """Recompute the multipliers of an optimal point on its active set.

    With ``g = Px + c`` the KKT stationarity reads ``g = G' lam`` over the active rows and bounds
    ``G``. When ``G`` has full row rank (LICQ: the multipliers are unique) the least-squares
    solution is *the* dual, exact up to the accuracy of ``x``; interior-point and first-order
    solvers return multipliers only to their own tolerance (1e-2 relative was seen on rescaled
    programs). The refinement is kept only when signs and the residual confirm it.
    """
    x = np.asarray(raw.x, dtype=float)
    g = canon.c + (canon.P @ x if canon.P is not None else 0.0)
    ax = canon.A @ x if canon.m else np.zeros(0)

    def near(v: np.ndarray, b: np.ndarray) -> np.ndarray:
        close: np.ndarray = np.isfinite(b) & (np.abs(v - b) <= act_tol * (1.0 + np.abs(b)))
        return close
    r_lo, r_hi = near(ax, canon.rl), near(ax, canon.ru)
    c_lo, c_hi = near(x, canon.xl), near(x, canon.xu)
    rows, cols = np.flatnonzero(r_lo | r_hi), np.flatnonzero(c_lo | c_hi)
    G = np.vstack([canon.A[rows].toarray() if rows.size else np.zeros((0, canon.n)),
                   np.eye(canon.n)[cols]])
    if G.shape[0] == 0:
        lam = np.zeros(0)
    else:
        if np.linalg.matrix_rank(G) < G.shape[0]:
            return False           # degenerate: the multipliers are not unique, keep the solver's
        lam = np.linalg.lstsq(G.T, g, rcond=None)[0]
    scale = 1.0 + np.abs(g).max(initial=0.0)
    if np.abs(G.T @ lam - g).max(initial=0.0) > 1e-7 * scale:
        return False
    y, z = np.zeros(canon.m), np.zeros(canon.n)
    y[rows], z[cols] = lam[:rows.size], lam[rows.size:]
    tol = 1e-9 * scale
    # a multiplier pushing on a side that is not active would be wrong: keep the solver's
    if ((y > tol) & ~r_lo).any() or ((y < -tol) & ~r_hi).any() or ((z > tol) & ~c_lo).any() \
            or ((z < -tol) & ~c_hi).any():
        return False
    raw.y, raw.z = y, z
    return True


def singular_hessian(canon: Canonical) -> bool:
    """Whether ``P`` has a null space (only then can a QP with a finite point be unbounded)."""
    P = canon.P
    if P is None or P.nnz == 0:
        return False
    cache = getattr(canon, "_singular", None)
    if cache is not None and cache[0] is P:
        singular: bool = cache[1]
        return singular
    if (P - sp.diags(P.diagonal())).count_nonzero() == 0:
        out = bool((P.diagonal() <= 0).any())
    elif P.shape[0] <= 2000:
        w = np.linalg.eigvalsh(P.toarray())
        out = bool(w[0] <= 1e-10 * max(1.0, abs(w[-1])))
    else:  # large and coupled: treat as singular (one extra LP per solve)
        out = True
    canon._singular = (P, out)  # type: ignore[attr-defined]  # a cache private to this module
    return out


def max_violation(canon: Canonical, x: np.ndarray) -> float:
    """Largest violation of rows and bounds at ``x``, relative to ``1 + |bound|``."""
    viol = _side_violation(x, canon.xl, canon.xu)
    if canon.m:
        viol = max(viol, _side_violation(canon.A @ x, canon.rl, canon.ru))
    return max(viol, 0.0)


def _fill_unused(canon: Canonical, raw: RawResult) -> None:
    """Columns in no row, cost or quadratic term may come back as None/NaN or out of bounds:
    any point inside their bounds is optimal, so take the one nearest 0."""
    unused = canon.unused_columns()
    if unused.any() and raw.x is not None:
        x = np.array(raw.x, dtype=float)
        x[unused] = np.clip(0.0, canon.xl[unused], canon.xu[unused])
        raw.x = x
        if raw.z is not None:
            z = np.array(raw.z, dtype=float)
            z[unused] = 0.0
            raw.z = z


def reference_solve(model: _Compiled, reason: str) -> RawResult:
    """Re-solve ``model``'s program with the reference back ends the registry attached to it
    (``model.references``, in order) and certify that result."""
    tried = []
    for label, ref in (model.references() if model.references is not None else ()):
        ref.canon = copy.copy(model.canon)  # carry in-place updates of costs and bounds
        ref._dirty = True
        ref._build()
        raw = ref._run()
        raw = certify(ref, raw, allow_reference=False)
        tried.append(label)
        if raw.status in (Status.OPTIMAL, Status.INFEASIBLE, Status.UNBOUNDED):
            raw.log = f"{reason}; re-solved by {label}: {raw.log}"
            return raw
    return RawResult(Status.NUMERICAL, log=f"{reason}; reference solvers {tried or 'none'} did not "
                     "certify a result either")


def certify(model: _Compiled, raw: RawResult, allow_reference: bool = True) -> RawResult:
    """Return ``raw`` with a status that has been checked (see the module docstring)."""
    canon = model.canon
    status = raw.status
    if canon.is_mip:  # LP certificates do not decide integer programs: check the point only
        return _certify_mip(model, raw)
    if status in (Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED):
        truth = true_improper_status(canon)
        if truth is not None:
            if truth is not status:
                raw.log = (f"{raw.log}; {model.backend} reported {status.value}, the phase-one "
                           f"and recession-ray LPs show {truth.value}")
            raw.status, raw.x, raw.y, raw.z = truth, None, None, None
            return raw
        reason = f"{model.backend}:{model.spec.solver} reported {status.value} on a program with an optimum"
        return reference_solve(model, reason) if allow_reference else _mark(raw, Status.NUMERICAL, reason)
    if status in (Status.ERROR, Status.NUMERICAL) and allow_reference:
        return reference_solve(model, f"{model.backend}:{model.spec.solver} stopped with "
                                      f"{status.value} ({raw.log})")
    if status is Status.ITERATION_LIMIT and model.stalls_on_degenerate and allow_reference:
        return reference_solve(model, f"{model.backend}:{model.spec.solver} reached its default "
                                      f"iteration limit (first-order method on a degenerate program)")
    if status is not Status.OPTIMAL:
        return raw
    _fill_unused(canon, raw)
    x = None if raw.x is None else np.asarray(raw.x, dtype=float)
    if x is None or not np.isfinite(x).all():
        reason = f"{model.backend}:{model.spec.solver} reported optimal without a finite point"
    elif np.abs(x).max(initial=0.0) > HUGE and (ray := true_improper_status(canon)) is not None:
        raw.status, raw.x, raw.y, raw.z = ray, None, None, None
        raw.log += f"; {model.backend} reported optimal at |x| ~ {np.abs(x).max():.1e}: the program is unbounded"
        return raw
    elif max_violation(canon, x) > FEAS_TOL:
        reason = (f"{model.backend}:{model.spec.solver} reported optimal at a point violating the "
                  f"constraints by {max_violation(canon, x):.2e}")
    elif model.active_set_qp and canon.P is not None and kkt_residual(canon, x, raw.y, raw.z) > KKT_TOL:
        reason = (f"HiGHS's QP solver reported optimal at a point whose KKT residual is "
                  f"{kkt_residual(canon, x, raw.y, raw.z):.1e}")
    elif singular_hessian(canon) and has_descent_ray(canon):
        # a feasible point was found, so the ray proves the QP unbounded below
        raw.status, raw.x, raw.y, raw.z = Status.UNBOUNDED, None, None, None
        raw.log += (f"; {model.backend} reported optimal, but a recession ray in the null space "
                    "of P descends: the program is unbounded")
        return raw
    else:
        if canon.n + canon.m <= POLISH_SIZE and not raw.basic:
            refine_duals(canon, raw)
        return raw
    truth = true_improper_status(canon)
    if truth is not None:
        raw.status, raw.x, raw.y, raw.z = truth, None, None, None
        raw.log += f"; {reason}; the program is {truth.value}"
        return raw
    return reference_solve(model, reason) if allow_reference else _mark(raw, Status.NUMERICAL, reason)


def _certify_mip(model: _Compiled, raw: RawResult) -> RawResult:
    """An incumbent (optimal or at a limit) must satisfy the rows, bounds and integrality."""
    canon = model.canon
    if raw.status not in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT) or raw.x is None:
        return raw
    _fill_unused(canon, raw)
    x = np.asarray(raw.x, dtype=float)
    frac = np.abs(x[canon.integrality] - np.round(x[canon.integrality]))
    if not np.isfinite(x).all() or max_violation(canon, x) > FEAS_TOL or frac.max(initial=0.0) > 1e-6:
        return _mark(raw, Status.NUMERICAL, f"{model.backend}:{model.spec.solver} returned an incumbent "
                     "that violates the rows, bounds or integrality")
    return raw


def _mark(raw: RawResult, status: Status, reason: str) -> RawResult:
    raw.status = status
    raw.log = f"{raw.log}; {reason}"
    return raw
