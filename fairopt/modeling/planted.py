"""Random LPs and convex QPs whose true status is known by construction.

Used by the solver-status tests and ``benchmarks/solver_status.py`` to certify every back end
without asking a solver what the answer is:

* **optimal**: a planted primal-dual pair ``(x*, y*, z*)`` satisfying the KKT conditions of
  ``min 1/2 x'Px + c'x, rl <= Ax <= ru, xl <= x <= xu`` with fairopt's sign convention
  (``Px* + c = A'y* + z*``, ``y_i >= 0`` on an active lower side, ``<= 0`` on an active upper
  side, any sign on equalities, 0 on inactive rows). Rows are equalities, one-sided, ranged and
  free; variables free, one-sided, boxed and fixed; some active multipliers are 0 (degenerate).
  For a convex program KKT is sufficient, so ``f(x*)`` is the optimal value; the multipliers are
  unique when the active gradients are linearly independent (recorded in ``duals_unique``).
* **infeasible**: a planted Farkas certificate ``(y, z)`` with ``A'y + z = 0`` whose combination
  of the bounds it uses is positive.
* **unbounded**: a feasible point and a planted recession ray ``d`` (rows and bounds are one-sided
  in the ray's direction, equality rows orthogonal to it, ``P d = 0``, ``c'd < 0``).

Singular ``P`` (low rank, free variables in its null space) appears in all three kinds. Scales
of the objective and of each row are drawn log-uniformly from ``[1e-3, 1e3]``; the sense is
minimise or maximise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fairopt.modeling.program import Program
from fairopt.modeling.solution import Status


@dataclass
class PlantedInstance:
    """A program and what is known about it by construction (user sense throughout)."""

    program: Program
    status: Status
    kind: str
    x: np.ndarray | None = None           # stacked planted optimum (one of them, if not unique)
    objective: float | None = None
    duals: dict[str, Any] | None = None             # per constraint block, user sense
    duals_unique: bool = False


def _log_uniform(rng: np.random.Generator, lo: float = 1e-3, hi: float = 1e3,
                 size: int | tuple[int, ...] | None = None) -> np.ndarray | float:
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size))


def _sparse_normal(rng: np.random.Generator, m: int, n: int, density: float = 0.6) -> np.ndarray:
    A = rng.normal(size=(m, n))
    A[rng.random((m, n)) > density] = 0.0
    return A


def _psd(rng: np.random.Generator, n: int, rank: int) -> np.ndarray:
    if rank == 0:
        return np.zeros((n, n))
    B = rng.normal(size=(rank, n))
    psd: np.ndarray = B.T @ B
    return psd


def _to_program(name: str, A: np.ndarray, rl: np.ndarray, ru: np.ndarray, xl: np.ndarray, xu: np.ndarray,
                c: np.ndarray, P: np.ndarray | None, sense: str, rng: np.random.Generator,
                ) -> tuple[Program, dict[str, slice], dict[str, slice]]:
    """Split stacked arrays into 1-3 variable blocks (one may be 2-D) and 1-3 row blocks."""
    n, m = c.size, A.shape[0]
    prog = Program(name)
    cuts: np.ndarray | list[int] = (
        np.sort(rng.choice(np.arange(1, n), size=min(n - 1, int(rng.integers(0, 3))), replace=False)) if n > 1 else [])
    var_sl, start = {}, 0
    for k, stop in enumerate([*cuts, n]):
        size = stop - start
        shape = (2, size // 2) if size % 2 == 0 and size >= 4 and rng.random() < 0.5 else (size,)
        prog.add_variables(f"x{k}", shape=shape, lb=xl[start:stop].reshape(shape),
                           ub=xu[start:stop].reshape(shape))
        var_sl[f"x{k}"] = slice(start, stop)
        start = stop
    con_sl = {}
    if m:
        rcuts: np.ndarray | list[int] = (
            np.sort(rng.choice(np.arange(1, m), size=min(m - 1, int(rng.integers(0, 3))), replace=False))
            if m > 1 else [])
        start = 0
        for k, stop in enumerate([*rcuts, m]):
            sub = A[start:stop]
            coeffs = {v: sub[:, s] for v, s in var_sl.items() if np.any(sub[:, s])}
            if not coeffs:  # an all-zero row block still needs a block to refer to
                coeffs = {next(iter(var_sl)): sub[:, var_sl[next(iter(var_sl))]]}
            prog.add_constraints(f"r{k}", coeffs, lb=rl[start:stop], ub=ru[start:stop])
            con_sl[f"r{k}"] = slice(start, stop)
            start = stop
    s = 1.0 if sense == "minimize" else -1.0
    quad = None
    if P is not None and np.any(P):
        quad = {(a, b): s * P[sa][:, sb] for a, sa in var_sl.items() for b, sb in var_sl.items()
                if a <= b and np.any(P[sa][:, sb])}
        # cross blocks (a, b) contribute x_a' Q x_b once: the stacked P holds Q and Q'
    prog.set_objective(linear={v: s * c[sl] for v, sl in var_sl.items()}, quadratic=quad,
                       sense=sense)
    return prog, var_sl, con_sl


#: a row's kind as the bound pattern of :func:`_plant` (rows and columns plant the same patterns)
_ROW_KINDS = {"eq": "fixed", "lo": "at_lo", "up": "at_up", "range_lo": "at_lo_box", "range_up": "at_up_box",
              "slack_lo": "lo", "slack_up": "up", "slack_range": "box", "free": "free"}


def _plant(kind: str, v: float, mag: float, gap: float, rng: np.random.Generator) -> tuple[float, float, float]:
    """Bounds ``(lo, hi)`` and multiplier of one planted row or column whose value is ``v``: active
    at a bound (``at_lo``, ``at_up``; ``_box`` adds the other side ``gap`` away; ``fixed``) with
    multiplier of size ``mag``, or inactive (``lo``, ``up``, ``box`` ``gap`` away; ``free``)."""
    lo, hi, mult = -np.inf, np.inf, 0.0
    if kind == "fixed":
        lo = hi = v
        mult = float(rng.choice([-1.0, 1.0])) * mag
    elif kind in ("at_lo", "at_lo_box"):
        lo, mult = v, mag
        hi = v + gap if kind == "at_lo_box" else np.inf
    elif kind in ("at_up", "at_up_box"):
        hi, mult = v, -mag
        lo = v - gap if kind == "at_up_box" else -np.inf
    elif kind in ("lo", "box"):
        lo = v - gap
    if kind in ("up", "box"):
        hi = v + gap
    return lo, hi, mult


def planted_optimal(rng: np.random.Generator, quadratic: bool, sense: str = "minimize", rank: int | None = None,
                    free_null: bool = False, degenerate: float = 0.15) -> PlantedInstance:
    """An instance with a planted KKT point (see the module docstring); each active row or bound
    has a zero multiplier with probability ``degenerate``."""
    n = int(rng.integers(2, 9))
    m = int(rng.integers(0, 9))
    x = rng.uniform(-1, 1, n) * _log_uniform(rng, 1e-1, 1e1)
    A = _sparse_normal(rng, m, n) * _log_uniform(rng, size=(m, 1))
    ax = A @ x
    rl, ru, y = np.full(m, -np.inf), np.full(m, np.inf), np.zeros(m)
    act_rows = []
    for i in range(m):
        kind = rng.choice(["eq", "lo", "up", "range_lo", "range_up", "slack_lo", "slack_up",
                           "slack_range", "free"])
        mag = rng.uniform(0.5, 2.0) * (0.0 if rng.random() < degenerate else 1.0)  # degenerate: 0
        gap = rng.uniform(0.1, 1.0) * (1.0 + abs(ax[i]))
        rl[i], ru[i], y[i] = _plant(_ROW_KINDS[str(kind)], ax[i], mag, gap, rng)
        if kind in ("eq", "lo", "up", "range_lo", "range_up"):
            act_rows.append(i)
    xl, xu, z = np.full(n, -np.inf), np.full(n, np.inf), np.zeros(n)
    act_cols = []
    for j in range(n):
        kind = rng.choice(["free", "lo", "up", "box", "at_lo", "at_up", "fixed"])
        if free_null and j < 2:
            kind = "free"
        mag = rng.uniform(0.5, 2.0) * (0.0 if rng.random() < degenerate else 1.0)
        gap = rng.uniform(0.1, 1.0) * (1.0 + abs(x[j]))
        if kind in ("at_lo", "at_up") and rng.random() < 0.5:
            kind += "_box"   # an active bound with the other side finite
        xl[j], xu[j], z[j] = _plant(str(kind), x[j], mag, gap, rng)
        if kind in ("at_lo", "at_up", "at_lo_box", "at_up_box", "fixed"):
            act_cols.append(j)
    obj_scale = _log_uniform(rng)
    P = None
    if quadratic:
        r = int(rng.integers(1, n)) if rank is None else rank
        P = _psd(rng, n, r)
        if free_null:  # the two free columns span a direction in the null space of P
            B = rng.normal(size=(max(r, 1), n))
            d = np.zeros(n)
            d[:2] = [1.0, -1.0]
            B -= np.outer(B @ d, d) / (d @ d)
            P = B.T @ B
        P *= obj_scale
    y, z = y * obj_scale, z * obj_scale
    c = A.T @ y + z - (P @ x if P is not None else 0.0)
    f = float(c @ x + (0.5 * x @ P @ x if P is not None else 0.0))
    grads = np.vstack([A[act_rows], np.eye(n)[act_cols]]) if act_rows or act_cols else np.zeros((0, n))
    unique = np.linalg.matrix_rank(grads) == grads.shape[0] if grads.size else True
    prog, _, con_sl = _to_program("planted_optimal", A, rl, ru, xl, xu, c, P, sense, rng)
    s = 1.0 if sense == "minimize" else -1.0
    duals = {k: s * y[sl] for k, sl in con_sl.items()}
    kind = "QP" + ("-singular-free" if free_null else "") if quadratic else "LP"
    return PlantedInstance(prog, Status.OPTIMAL, f"optimal {kind} {sense}", x=x, objective=s * f,
                           duals=duals, duals_unique=bool(unique))


def planted_infeasible(rng: np.random.Generator, quadratic: bool, sense: str = "minimize") -> PlantedInstance:
    """Rows and bounds that a planted Farkas certificate ``(y, z)`` proves inconsistent."""
    n = int(rng.integers(2, 8))
    m = int(rng.integers(1, 8))
    A = _sparse_normal(rng, m, n) * _log_uniform(rng, size=(m, 1))
    x0 = rng.uniform(-1, 1, n)
    ax = A @ x0
    support = rng.random(m) < 0.6
    support[rng.integers(m)] = True
    y = np.where(support, rng.choice([-1.0, 1.0], m) * rng.uniform(0.5, 2.0, m), 0.0)
    z = -A.T @ y
    z[np.abs(z) < 1e-12] = 0.0
    # bounds that hold at x0 everywhere, then the certificate's sides shifted by delta in total
    gaps = rng.uniform(0.1, 1.0, m) * (1 + np.abs(ax))
    rl, ru = ax - gaps, ax + gaps
    rl[rng.random(m) < 0.3] = -np.inf
    ru[rng.random(m) < 0.3] = np.inf
    xgap = rng.uniform(0.1, 1.0, n)
    xl, xu = x0 - xgap, x0 + xgap
    xl[rng.random(n) < 0.4] = -np.inf
    xu[rng.random(n) < 0.4] = np.inf
    terms = int(support.sum() + (z != 0).sum())
    delta = rng.uniform(0.1, 1.0)
    for i in np.flatnonzero(support):
        if y[i] > 0:   # uses a_i'x >= rl_i
            rl[i] = ax[i] + delta / terms / y[i]
            ru[i] = max(ru[i], rl[i] + 1.0) if np.isfinite(ru[i]) else np.inf
        else:          # uses a_i'x <= ru_i
            ru[i] = ax[i] + delta / terms / y[i]
            rl[i] = min(rl[i], ru[i] - 1.0) if np.isfinite(rl[i]) else -np.inf
    for j in np.flatnonzero(z):
        if z[j] > 0:
            xl[j] = x0[j] + delta / terms / z[j]
            xu[j] = max(xu[j], xl[j] + 1.0) if np.isfinite(xu[j]) else np.inf
        else:
            xu[j] = x0[j] + delta / terms / z[j]
            xl[j] = min(xl[j], xu[j] - 1.0) if np.isfinite(xl[j]) else -np.inf
    c = rng.normal(size=n) * _log_uniform(rng)
    P = _psd(rng, n, int(rng.integers(0, n + 1))) if quadratic else None
    prog, _, _ = _to_program("planted_infeasible", A, rl, ru, xl, xu, c, P, sense, rng)
    return PlantedInstance(prog, Status.INFEASIBLE, f"infeasible {'QP' if quadratic else 'LP'} {sense}")


def planted_unbounded(rng: np.random.Generator, quadratic: bool, sense: str = "minimize") -> PlantedInstance:
    """A feasible point and a planted descent ray (in the null space of ``P`` for a QP)."""
    n = int(rng.integers(2, 8))
    m = int(rng.integers(0, 8))
    d = rng.normal(size=n)
    d[rng.random(n) < 0.3] = 0.0
    if not np.any(d):
        d[0] = 1.0
    A = _sparse_normal(rng, m, n)
    eq = rng.random(m) < 0.3
    A[eq] -= np.outer(A[eq] @ d, d) / (d @ d)       # equality rows orthogonal to the ray
    A *= _log_uniform(rng, size=(m, 1))
    x0 = rng.uniform(-1, 1, n)
    ax, ad = A @ x0, A @ d
    gaps = rng.uniform(0.1, 1.0, m) * (1 + np.abs(ax))
    rl, ru = np.full(m, -np.inf), np.full(m, np.inf)
    rl[eq] = ru[eq] = ax[eq]
    grow, shrink = ~eq & (ad > 1e-9), ~eq & (ad < -1e-9)
    rl[grow] = ax[grow] - gaps[grow]                   # a'x grows along d: lower side only
    ru[shrink] = ax[shrink] + gaps[shrink]
    flat = ~eq & ~grow & ~shrink
    rl[flat], ru[flat] = ax[flat] - gaps[flat], ax[flat] + gaps[flat]
    # bounds: only on the side the ray moves away from (or any, where the ray does not move)
    xgap = rng.uniform(0.1, 1.0, n)
    keep = rng.random(n) < 0.6
    xl = np.where((d > 0) & keep, x0 - xgap, -np.inf)
    xu = np.where((d < 0) & keep, x0 + xgap, np.inf)
    zero = d == 0
    xl[zero] = np.where(keep[zero], (x0 - xgap)[zero], -np.inf)
    xu[zero] = np.where(rng.random(zero.sum()) < 0.5, (x0 + xgap)[zero], np.inf)
    c = rng.normal(size=n)
    c -= ((c @ d) + rng.uniform(0.5, 2.0) * (d @ d)) * d / (d @ d)    # c'd < 0
    P = None
    if quadratic:
        B = rng.normal(size=(int(rng.integers(1, n)), n))
        B -= np.outer(B @ d, d) / (d @ d)
        P = B.T @ B
    scale = _log_uniform(rng)
    prog, _, _ = _to_program("planted_unbounded", A, rl, ru, xl, xu, c * scale,
                             None if P is None else P * scale, sense, rng)
    return PlantedInstance(prog, Status.UNBOUNDED, f"unbounded {'QP' if quadratic else 'LP'} {sense}")


def random_instance(seed: int, quadratic: bool | None = None) -> PlantedInstance:
    """One instance of a kind drawn from ``seed``: 60% optimal (a quarter of the QPs with free
    variables in the null space of P), 20% infeasible, 20% unbounded; min or max."""
    rng = np.random.default_rng(seed)
    qp = bool(rng.random() < 0.5) if quadratic is None else quadratic
    sense = "maximize" if rng.random() < 0.5 else "minimize"
    u = rng.random()
    if u < 0.6:
        return planted_optimal(rng, qp, sense, free_null=qp and rng.random() < 0.25)
    if u < 0.8:
        return planted_infeasible(rng, qp, sense)
    return planted_unbounded(rng, qp, sense)


@dataclass
class Check:
    """Outcome of solving a :class:`PlantedInstance` on one back end."""

    spec: str
    truth: Status
    status: str                      # the status read (or "raw:<Exception>" for an untyped crash)
    objective_error: float = 0.0     # |f - f*| / max(1, |f*|)
    violation: float = 0.0           # largest row/bound violation relative to 1 + |bound|
    dual_error: float | None = None  # max |y - y*| / max(1, max |y*|), when duals are unique
    seconds: float = 0.0

    @property
    def status_ok(self) -> bool:
        return self.status == self.truth.value


def check(inst: PlantedInstance, spec: str, time_limit: float | None = 30.0) -> Check | None:
    """Solve ``inst`` on ``spec`` and compare with the planted truth (None: the back end does
    not take the problem class)."""
    import time

    from fairopt.errors import FairoptError, InfeasibleError, SolverNotAvailableError, UnboundedError
    from fairopt.modeling.certify import max_violation
    from fairopt.modeling.registry import BACKENDS, SolverSpec, check_spec
    t0 = time.perf_counter()
    try:
        resolved = check_spec(SolverSpec.parse(spec), inst.program.problem_class)
        assert resolved.solver is not None  # check_spec fills in the default solver
        # a solver that cannot honour a time limit (cvxpy:GLOP, say) runs without one
        if BACKENDS[resolved.backend].time_limit_option(resolved.solver, inst.program.problem_class) is None:
            time_limit = None
        sol = inst.program.solve(spec, time_limit=time_limit)
    except SolverNotAvailableError:
        return None
    except InfeasibleError:
        return Check(spec, inst.status, Status.INFEASIBLE.value, seconds=time.perf_counter() - t0)
    except UnboundedError:
        return Check(spec, inst.status, Status.UNBOUNDED.value, seconds=time.perf_counter() - t0)
    except FairoptError as exc:
        return Check(spec, inst.status, f"error:{type(exc).__name__}", seconds=time.perf_counter() - t0)
    except Exception as exc:
        return Check(spec, inst.status, f"raw:{type(exc).__name__}: {exc}"[:200],
                     seconds=time.perf_counter() - t0)
    out = Check(spec, inst.status, sol.status.value, seconds=time.perf_counter() - t0)
    if sol.status is Status.OPTIMAL and inst.objective is not None:
        canon = inst.program.canonical()
        x = np.concatenate([sol.primal[v].ravel() for v in canon.var_slices])
        out.violation = max_violation(canon, x) if np.isfinite(x).all() else np.inf
        out.objective_error = abs(sol.objective - inst.objective) / max(1.0, abs(inst.objective))
        if not np.isfinite(sol.objective):
            out.objective_error = np.inf
        if inst.duals_unique and inst.duals:
            ref = np.concatenate([inst.duals[k] for k in inst.duals])
            got = np.concatenate([sol.dual[k] for k in inst.duals])
            out.dual_error = float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))
    return out
