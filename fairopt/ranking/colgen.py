"""Column generation over permutations for exposure-fair rankings, for a batch of queries at once.

The utility ``u' P v`` and every exposure criterion depend on ``P`` only through the item
exposures ``P v``, and ``{P v : P doubly stochastic}`` is the convex hull of the permutations of
``v``. So the LP over ``P`` (``n^2`` variables) equals a master LP over convex weights
``lambda_s`` of permutations ``s``::

    min  - sum_s U_s lambda_s
    s.t. sum_s lambda_s = 1                               (one row per query)
         sum_s f_a(s) lambda_s - t >= 0                   (one per query and group)
         sum_s f_a(s) lambda_s - t - w <= 0               (w fixed at eps)
         lambda >= 0, t free

whose pricing problem, ``max_s sum_i W_i v_{s(i)}`` with ``W_i = u_i + (y_lo + y_hi)_{g(i)} c_i
s_{g(i)}``, is solved by sorting items by ``W`` and pairing them with the sorted position
weights (rearrangement inequality; for a click model ``v`` that is not nonincreasing a linear
assignment is solved instead). The master of all queries is one block-diagonal
:class:`~fairopt.modeling.lazy_columns.LazyColumns` problem (kind ``pricing``) whose oracle prices
all queries at once (one ``argsort`` of a ``(Q, n)`` array); the registry's solver of the kind
appends the improving columns and re-solves (the default warm-starts from the previous basis; any
LP solver with duals can run the same loop).

Phase one minimises the band width ``w`` (the tightest feasible eps of every query, reported in
the infeasibility error); phase two fixes ``w = eps`` and maximises utility, starting from phase
one's columns (and basis, where the solver keeps one). At the optimum the
master's row duals are those of the full LP; ``-sum_a y_hi[a]`` is ``d U*/d eps``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from fairopt.errors import SolverError, SolverLimitError
from fairopt.modeling.lazy_columns import ColumnBlock, LazyColumns, resolve_pricing_solver
from fairopt.modeling.registry import solve_own
from fairopt.modeling.solution import Status

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from fairopt.modeling import SolverSpec
    from fairopt.modeling.solution import Solution


@dataclass
class ColgenResult:
    """Solution of a batch: weights and permutations of the support, per query (see
    :class:`BatchMaster` for an example)."""

    weights: list[np.ndarray]        # per query: convex weights of its permutations
    orders: list[np.ndarray]         # per query: (terms, n) item at each position
    utility: np.ndarray              # (Q,)
    price: np.ndarray                # (Q,) d U*/d eps
    tightest: np.ndarray             # (Q,) smallest feasible eps found in phase one (nan if not run)
    rounds: int
    columns: int


class BatchMaster:
    """Block-diagonal restricted master of ``Q`` queries of ``n`` items each (used by
    :func:`fairopt.ranking.fair_ranking`), solved as a
    :class:`~fairopt.modeling.lazy_columns.LazyColumns` problem by the registry's solver of its
    kind (``solver``: a resolved spec, see
    :func:`~fairopt.modeling.lazy_columns.resolve_pricing_solver`; ``None`` the default).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[0.9, 0.8, 0.2, 0.1]])
    >>> codes = np.array([[0, 0, 1, 1]])
    >>> coef = np.full((1, 4), 0.5)                       # parity: 1 / group size
    >>> v = 1 / np.log2(2 + np.arange(4))
    >>> res = BatchMaster(R, codes, 2, coef, v).solve_fair(eps=0.0)
    >>> round(float(res.weights[0].sum()), 9)
    1.0
    """

    def __init__(self, relevance: np.ndarray, codes: np.ndarray, K: int, coef: np.ndarray,
                 v: np.ndarray, tol: float = 1e-10, solver: str | SolverSpec | None = None):
        self.R, self.codes, self.K, self.coef, self.v = relevance, codes, K, coef, v
        self.Q, self.n = relevance.shape
        self.tol = tol
        self.spec = resolve_pricing_solver(solver)
        self.sort_pricing = bool(np.all(np.diff(v) <= 0))
        present = np.zeros((self.Q, K), dtype=bool)
        present[np.repeat(np.arange(self.Q), self.n), codes.ravel()] = True
        self.present = present
        q_idx, a_idx = np.nonzero(present)
        P = q_idx.size
        # rows: Q convexity rows, then P "lo" rows, then P "hi" rows
        self.lo = np.full((self.Q, K), -1, dtype=np.int64)
        self.lo[q_idx, a_idx] = self.Q + np.arange(P)
        self.hi = np.full((self.Q, K), -1, dtype=np.int64)
        self.hi[q_idx, a_idx] = self.Q + P + np.arange(P)
        self.m = self.Q + 2 * P
        self.row_lower = np.r_[np.ones(self.Q), np.zeros(P), np.full(P, -np.inf)]
        self.row_upper = np.r_[np.ones(self.Q), np.full(P, np.inf), np.zeros(P)]
        # fixed columns: t_q (free), -1 in its lo and hi rows; then w_q (band width), -1 in its hi rows
        lo_rows, hi_rows = self.lo[q_idx, a_idx], self.hi[q_idx, a_idx]      # grouped by query
        side = np.r_[np.zeros(P, np.int64), np.ones(P, np.int64)]
        t_rows = np.r_[lo_rows, hi_rows][np.lexsort((side, np.r_[q_idx, q_idx]))]
        groups = present.sum(axis=1)
        index = np.r_[t_rows, hi_rows]
        indptr = np.r_[0, np.cumsum(np.r_[2 * groups, groups])]
        self.fixed_A = sp.csc_matrix((-np.ones(index.size), index, indptr), shape=(self.m, 2 * self.Q))
        self.n_fixed = 2 * self.Q           # t then w
        self.col_query: list[np.ndarray] = []
        self.col_order: list[np.ndarray] = []
        self.col_utility: list[np.ndarray] = []

    # ------------------------------------------------------------------ columns
    def exposures(self, order: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """Item exposures ``e[q, i] = v[position of i]`` of the rankings ``order`` (item at each position)."""
        e = np.empty(order.shape)
        np.put_along_axis(e, order, np.broadcast_to(self.v, order.shape), axis=1)
        return e

    def group_values(self, e: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """``f[q, a] = s_a sum_{i in a} c_i e_i`` for the rankings with exposures ``e``."""
        k = len(queries)
        flat = (np.arange(k)[:, None] * self.K + self.codes[queries]).ravel()
        return np.bincount(flat, weights=(self.coef[queries] * e).ravel(),
                           minlength=k * self.K).reshape(k, self.K)

    def add(self, order: np.ndarray, queries: np.ndarray, phase: int) -> ColumnBlock:
        """The columns of the rankings ``order`` of ``queries`` (recorded in order of addition)."""
        e = self.exposures(order, queries)
        f = self.group_values(e, queries)
        util = np.einsum("qi,qi->q", self.R[queries], e)
        pres = self.present[queries]
        lo, hi = self.lo[queries], self.hi[queries]
        # per column: convexity row, then lo and hi rows of its present groups
        R = np.concatenate([queries[:, None], np.where(pres, lo, -1), np.where(pres, hi, -1)], axis=1)
        Vv = np.concatenate([np.ones((len(queries), 1)), f, f], axis=1)
        keep = R >= 0
        indptr = np.r_[0, np.cumsum(keep.sum(axis=1))]
        k = len(queries)
        cost = -util if phase == 2 else np.zeros(k)
        self.col_query.append(queries.copy())
        self.col_order.append(order.astype(np.int32))
        self.col_utility.append(util)
        return ColumnBlock(sp.csc_matrix((Vv[keep], R[keep], indptr), shape=(self.m, k)), cost, 0.0, np.inf)

    def price(self, y: np.ndarray, queries: np.ndarray, phase: int) -> tuple[np.ndarray, np.ndarray]:
        """Best ranking per query for the duals ``y`` and its reduced cost."""
        ylo = np.where(self.present[queries], y[np.maximum(self.lo[queries], 0)], 0.0)
        yhi = np.where(self.present[queries], y[np.maximum(self.hi[queries], 0)], 0.0)
        W = (ylo + yhi)[np.arange(len(queries))[:, None], self.codes[queries]] * self.coef[queries]
        if phase == 2:
            W = W + self.R[queries]
        if self.sort_pricing:
            order = np.argsort(-W, axis=1, kind="stable")
        else:
            from scipy.optimize import linear_sum_assignment
            order = np.empty(W.shape, dtype=np.int64)
            for r in range(W.shape[0]):  # one assignment per query (a non-monotone click model)
                items, pos = linear_sum_assignment(-np.outer(W[r], self.v))
                order[r, pos] = items
        gain = np.take_along_axis(W, order, axis=1) @ self.v
        reduced = -gain - y[queries]
        return order, reduced

    # ------------------------------------------------------------------ solving
    def oracle(self, phase: int, eps: np.ndarray) -> Callable[[NDArray[np.float64], NDArray[np.float64]],
                                                               ColumnBlock | None]:
        """The pricing oracle of one phase: improving rankings of the active queries (phase one
        drops a query as soon as its band width is within ``eps``), ``None`` when none improves."""
        active = np.ones(self.Q, dtype=bool)
        Q = self.Q

        def price(y: NDArray[np.float64], x: NDArray[np.float64]) -> ColumnBlock | None:
            if phase == 1:
                active[:] &= x[Q:2 * Q] > eps + 1e-9
            if not active.any():
                return None
            queries = np.flatnonzero(active)
            order, reduced = self.price(y, queries, phase)
            scale = 1.0 + np.abs(self.R[queries]).max(axis=1) * self.v.sum()
            good = reduced < -self.tol * 10 * scale
            if not good.any():
                return None
            active[:] = False
            active[queries[good]] = True
            return self.add(order[good], queries[good], phase)
        return price

    def run_phase(self, phase: int, eps: np.ndarray, columns: ColumnBlock, max_rounds: int,
                  warm: object = None) -> Solution:
        """Generate columns until none improves (phase one: minimise the band widths ``w``;
        phase two: ``w = eps``, maximise utility)."""
        w_cost = np.ones(self.Q) if phase == 1 else np.zeros(self.Q)
        w_lb, w_ub = (np.zeros(self.Q), np.full(self.Q, np.inf)) if phase == 1 else (eps, eps)
        fixed = ColumnBlock(self.fixed_A, np.r_[np.zeros(self.Q), w_cost], np.r_[np.full(self.Q, -np.inf), w_lb],
                            np.r_[np.full(self.Q, np.inf), w_ub])
        problem = LazyColumns(self.row_lower, self.row_upper, fixed, columns, self.oracle(phase, eps),
                              max_rounds=max_rounds, tol=self.tol, warm_start=warm)
        try:
            out: Solution = solve_own(problem, self.spec, "pricing")
        except SolverLimitError as err:
            if err.status is not Status.ITERATION_LIMIT:   # a time limit of the masters' solver
                raise
            raise SolverError(f"column generation did not converge in {max_rounds} rounds; "
                              "raise max_rounds or use method='lp'.", status=err.status) from err
        return out

    def solve_fair(self, eps: float | np.ndarray, max_rounds: int = 20_000) -> ColgenResult:
        """Phase one (band width within ``eps``, per query or one for all), then phase two
        (utility at band width ``eps``); relevances should be scaled to ``max |u| = 1``, where the
        solver's absolute tolerances are meant."""
        eps = np.broadcast_to(np.asarray(eps, dtype=float), (self.Q,))
        # start from the unconstrained optimum of every query (items sorted by relevance)
        first = self.add(np.argsort(-self.R, axis=1, kind="stable"), np.arange(self.Q), phase=1)
        sol1 = self.run_phase(1, eps, first, max_rounds)
        r1 = int(sol1.iterations or 0)
        U = np.concatenate(self.col_utility)
        w = np.asarray(sol1.primal["fixed"])[self.Q:]
        infeasible = w > eps + 1e-9
        if infeasible.any():
            return ColgenResult([], [], np.full(self.Q, np.nan), np.full(self.Q, np.nan),
                                np.where(infeasible, w, np.nan), r1, len(U))
        # phase two: w = eps, maximise utility over phase one's columns (from its basis)
        cols = sol1.info["columns"]
        sol2 = self.run_phase(2, eps, ColumnBlock(cols.A, -U, cols.lb, cols.ub), max_rounds,
                              sol1.info["warm_start"])
        lam = np.asarray(sol2.primal["columns"])
        y = np.asarray(sol2.dual["rows"])
        qcol = np.concatenate(self.col_query)
        orders = np.concatenate(self.col_order)
        U = np.concatenate(self.col_utility)
        yhi = np.where(self.present, y[np.maximum(self.hi, 0)], 0.0)
        weights, terms = [], []
        keep = lam > 1e-12
        by_q = np.argsort(qcol[keep], kind="stable")
        kq, kl, ko = qcol[keep][by_q], lam[keep][by_q], orders[keep][by_q]
        bounds = np.searchsorted(kq, np.arange(self.Q + 1))
        for q in range(self.Q):  # split the support by query (sizes differ)
            lw = kl[bounds[q]:bounds[q + 1]]
            weights.append(lw / lw.sum())
            terms.append(ko[bounds[q]:bounds[q + 1]])
        utility = np.bincount(qcol, weights=lam * U, minlength=self.Q)
        return ColgenResult(weights, terms, utility, -yhi.sum(axis=1), np.full(self.Q, np.nan),
                            r1 + int(sol2.iterations or 0), len(U))
