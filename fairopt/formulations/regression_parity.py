"""Statistical parity for a regressor's outputs as a transport LP in CDF variables.

Each group ``a`` (share ``p_a``) has a distribution ``mu_a`` of predictions: distinct values
``s_1 < ... < s_n`` with weights ``w_k`` (summing to 1) and cumulative levels ``c_k``. The
post-processed output of the group is a distribution ``nu_a`` on a fixed grid ``y_1 < ... < y_M``,
described by its CDF values ``G_{a,j} = nu_a((-inf, y_j])`` (``G_{a,M} = 1``). Statistical parity
in the sense of Agarwal, Dudik & Wu (2019) with slack ``eps`` asks, at every grid point,
``|G_{a,j} - P_j| <= eps`` with ``P_j = sum_b p_b G_{b,j}`` the pooled CDF; between grid points the
CDFs are constant, so these are all thresholds ``z``.

For a convex cost ``c(s - y)`` the cheapest plan from ``mu_a`` to a fixed ``nu_a`` is the quantile
(monotone) coupling, and its cost is separable in the CDF values:

    W_c(mu_a, nu_a) = E_{mu_a} c(s - y_M) + sum_{j<M} h_{a,j}(G_{a,j}),
    h_{a,j}(G) = int_0^G g_j(Q_a(v)) dv,   g_j(q) = c(q - y_j) - c(q - y_{j+1}),

with ``Q_a`` the quantile function of ``mu_a`` (sum by parts over the output quantile function).
``g_j`` is non-decreasing (convex ``c``), so ``h_{a,j}`` is convex piecewise linear in ``G`` with
slope ``g_j(s_k)`` on the piece ``[c_{k-1}, c_k]``. The LP

    min sum_a p_a sum_j t_{a,j}  s.t.  t_{a,j} >= piece_k(G_{a,j}) for the pieces k kept,
        P_j = sum_a p_a G_{a,j},  -eps <= G_{a,j} - P_j <= eps,  G_{a,j} <= G_{a,j+1},  0 <= G <= 1

is exact once it holds every piece that is active at its optimum. Small instances get every
piece at once; large ones start from the pieces at each group's own optimum and at the pooled
CDF, and add the piece under each ``G_{a,j}`` whose epigraph is not tight (Kelley's cutting planes
on a piecewise-linear function: the LP value is a lower bound and the loss of its CDFs an upper
bound; the loop stops when they agree to ``1e-8 span^2`` (squared; ``span`` for absolute) or to
``1e-6`` relative, or when no new piece is found). Every round is one LP solved by
the registry's default LP back end (or the one given).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import DataValidationError, SolverError
from fairopt.formulations._regression_groups import GroupDistribution, collapse_groups
from fairopt.formulations.regression_closed_form import Cells, closed_form, distinct_values, merged_cells
from fairopt.formulations.regression_prices import absolute_prices, squared_prices
from fairopt.formulations.regression_sweep import absolute_sweep, squared_sweep
from fairopt.modeling import Program, Solution, SolverSpec
from fairopt.modeling.registry import default_spec, with_feasibility_tolerance

__all__ = ["LOSSES", "GroupDistribution", "RegressionParity", "RegressionParitySolution", "barycenter",
           "collapse_groups", "plan_loss", "quantile_plan", "transport_cost"]

LOSSES = ("squared", "absolute")
#: largest number of (pair, piece) cuts put into the first LP at once (above it: cutting planes)
FULL_LIMIT = 60_000
#: largest number of cutting-plane rounds before giving up
MAX_ROUNDS = 100
#: a solver's usual primal feasibility tolerance; below ``10 FEAS_TOL`` the LP asks for ``eps / 10``
#: instead (at least ``MIN_FEAS_TOL``, the smallest HiGHS accepts)
FEAS_TOL, MIN_FEAS_TOL = 1e-7, 1e-10


def transport_cost(diff: np.ndarray, loss: str) -> np.ndarray:
    """The loss ``c(s - y)`` of moving a prediction by ``diff = s - y``.

    Examples
    --------
    >>> transport_cost(np.array([-2.0, 0.5]), "squared").tolist()
    [4.0, 0.25]
    >>> transport_cost(np.array([-2.0, 0.5]), "absolute").tolist()
    [2.0, 0.5]
    """
    out: np.ndarray = diff * diff if loss == "squared" else np.abs(diff)
    return out


@dataclass
class RegressionParitySolution:
    """The fitted output CDFs, plans, loss, gap and prices of :class:`RegressionParity`.

    Attributes
    ----------
    grid : ndarray (M,)
        Output values.
    cdf : ndarray (n_groups, M)
        Each group's output CDF on the grid (last column 1).
    pooled_cdf : ndarray (M,)
        ``sum_a p_a cdf[a]``.
    loss : float
        Expected loss ``sum_a p_a sum_{i,j} plan[a][i, j] c(s_i - y_j)`` of the plan.
    gap : float
        ``max_{a,j} |cdf[a, j] - pooled_cdf[j]|``.
    price : ndarray (n_groups, M - 1) or None
        Duals of the CDF band rows ``-eps <= G_{a,j} - P_j <= eps`` (``d loss / d bound``); the loss
        falls by ``sum |price|`` per unit of extra ``eps``. ``None`` on the closed-form paths (``eps = 0``
        and the sweeps), where :meth:`prices` computes them on demand.
    rounds : int
        LP solves (0 on the closed-form paths and the sweeps, 1 when every piece fitted in the first LP).
    solution : Solution or None
        The last LP's solution (``None`` without an LP).
    plan_list : list of csr_matrix or None
        The plans, when the solve built them already.
    price_fn : callable or None
        Computes ``price`` on demand.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> pred, group = rng.normal(size=200), rng.integers(0, 2, 200)
    >>> dists, shares = collapse_groups(pred, group, 2)
    >>> grid = np.linspace(pred.min(), pred.max(), 25)
    >>> sol = RegressionParity(dists, shares, grid, eps=0.0).solve()
    >>> type(sol).__name__, bool(sol.gap < 1e-9)
    ('RegressionParitySolution', True)
    """

    grid: np.ndarray
    cdf: np.ndarray
    pooled_cdf: np.ndarray
    loss: float
    gap: float
    price: np.ndarray | None
    rounds: int
    solution: Solution | None
    plan_list: list[sp.csr_matrix] | None = None
    price_fn: Callable[[], np.ndarray] | None = None

    def plans(self, dists: list[GroupDistribution]) -> list[sp.csr_matrix]:
        """Each group's monotone transport plan: ``plan[a][i, j]`` = P(prediction ``values[i]`` goes
        to ``grid[j]`` | group ``a``) (rows sum to the value's weight)."""
        if self.plan_list is not None:
            return self.plan_list
        return [quantile_plan(d.levels, self.cdf[a]) for a, d in enumerate(dists)]

    def prices(self) -> np.ndarray:
        """``price``, computed (once) when the solve left it to be computed on demand."""
        if self.price is None:
            self.price = self.price_fn() if self.price_fn is not None else np.zeros((self.cdf.shape[0], 0))
        return self.price


def quantile_plan(levels: np.ndarray, out_cdf: np.ndarray) -> sp.csr_matrix:
    """The monotone coupling of a source with cumulative ``levels`` (increasing from ``c_0 = 0`` to ``c_n = 1``)
    and an output with CDF ``out_cdf`` on the grid (last entry 1), as a sparse ``(n, M)`` matrix.

    Examples
    --------
    >>> quantile_plan(np.array([0.0, 0.5, 1.0]), np.array([0.25, 1.0])).toarray().tolist()
    [[0.25, 0.25], [0.0, 0.5]]
    """
    n, M = levels.shape[0] - 1, out_cdf.shape[0]
    jumps = np.flatnonzero(np.diff(out_cdf, prepend=0.0) > 0)     # output atoms (columns with mass)
    top = out_cdf[jumps]
    both = np.concatenate([levels, top])
    order = np.argsort(both, kind="stable")                        # two sorted runs: a merge
    merged = both[order]
    last = np.ones(merged.shape[0], bool)
    last[:-1] = merged[1:] > merged[:-1]                           # the last entry of each run of equal values
    ends = np.flatnonzero(last)
    mass = np.diff(merged[ends])
    # between two cuts no level and no output atom: the source atom and the output column are the
    # counts of levels (minus c_0) and of output atoms at or below the left cut
    n_levels = np.cumsum(order < levels.shape[0])[ends[:-1]]
    rows = np.minimum(n_levels - 1, n - 1)
    cols = jumps[np.minimum(ends[:-1] + 1 - n_levels, top.shape[0] - 1)]
    plan = sp.csr_matrix((mass, cols, np.searchsorted(rows, np.arange(n + 1))), shape=(n, M))
    plan.sum_duplicates()
    return plan


def plan_loss(plans: list[sp.csr_matrix], dists: list[GroupDistribution], shares: np.ndarray, grid: np.ndarray,
              loss: str) -> float:
    """``sum_a p_a sum_{i,j} plan[a][i, j] c(s_i - y_j)`` in one pass over the plans' entries.

    Examples
    --------
    >>> dists, shares = collapse_groups(np.array([0.0, 2.0]), np.array([0, 1]), 2)
    >>> plans = [quantile_plan(d.levels, np.array([0.0, 1.0, 1.0])) for d in dists]
    >>> plan_loss(plans, dists, shares, np.array([0.0, 1.0, 2.0]), "squared")
    1.0
    """
    total = 0.0
    for p, plan, d in zip(shares, plans, dists, strict=True):
        rows = np.repeat(np.arange(plan.shape[0]), np.diff(plan.indptr))
        total += float(p * np.dot(plan.data, transport_cost(d.values[rows] - grid[plan.indices], loss)))
    return total


class RegressionParity:
    """Least-loss post-processing of predictions to statistical parity on an output grid.

    Parameters
    ----------
    dists : list of GroupDistribution
        Each group's prediction distribution (see :func:`collapse_groups`).
    shares : ndarray (n_groups,)
        Group shares ``p_a`` (summing to 1).
    grid : ndarray (M,)
        Strictly increasing output values.
    eps : float
        Largest allowed ``|G_{a,j} - P_j|``.
    loss : {"squared", "absolute"}
        Transport cost ``(s - y)^2`` or ``|s - y|``.
    cells : Cells or None
        The groups' merged quantile cells (:func:`~fairopt.formulations.regression_closed_form.merged_cells`)
        when already computed; used by the closed form at ``eps = 0``.

    Examples
    --------
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> form = RegressionParity(dists, shares, np.array([1.0, 2.0]), eps=0.0)
    >>> sol = form.solve()
    >>> round(sol.loss, 6), round(sol.gap, 9), sol.cdf[:, 0].round(6).tolist()
    (1.0, 0.0, [0.5, 0.5])
    """

    def __init__(self, dists: list[GroupDistribution], shares: np.ndarray, grid: np.ndarray, eps: float = 0.0,
                 loss: str = "squared", cells: Cells | None = None) -> None:
        if loss not in LOSSES:
            raise DataValidationError(f"loss must be one of {LOSSES}, got {loss!r}.")
        grid = np.asarray(grid, dtype=float)
        if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or np.any(np.diff(grid) <= 0):
            raise DataValidationError("the output grid must be a non-empty, finite, strictly increasing 1-D array.")
        if not (np.isfinite(eps) and eps >= 0):
            raise DataValidationError(f"eps must be a finite number >= 0, got {eps!r}.")
        self.dists, self.shares, self.grid = dists, np.asarray(shares, dtype=float), grid
        self.eps, self.loss, self.cells = float(eps), loss, cells
        self.n_groups, self.M = len(dists), grid.shape[0]
        self._keys: list[np.ndarray] = []   # per group, keys j (n + 1) + k of the pieces in the LP

    # ------------------------------------------------------------------ the pieces of h_{a,j}
    def _slope(self, a: int, j: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``g_j(s_k)`` (``k`` 0-based piece of group ``a``)."""
        s, y0, y1 = self.dists[a].values[k], self.grid[j], self.grid[j + 1]
        out: np.ndarray = transport_cost(s - y0, self.loss) - transport_cost(s - y1, self.loss)
        return out

    def _prefix(self, a: int, j: np.ndarray, K: np.ndarray) -> np.ndarray:
        """``H_{a,j}(c_K) = sum_{k < K} w_k g_j(s_k)`` in O(1) per entry from prefix sums."""
        d = self.dists[a]
        y0, y1 = self.grid[j], self.grid[j + 1]
        W, S = d.levels, d.first_moment
        out: np.ndarray
        if self.loss == "squared":
            out = 2.0 * (y1 - y0) * S[K] - (y1 * y1 - y0 * y0) * W[K]
            return out
        delta = y1 - y0
        A = np.minimum(K, np.searchsorted(d.values, y0, side="right"))
        B = np.minimum(K, np.searchsorted(d.values, y1, side="left"))
        out = -delta * W[A] + 2.0 * (S[B] - S[A]) - (y0 + y1) * (W[B] - W[A]) + delta * (W[K] - W[B])
        return out

    def _cuts(self, a: int, j: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slope and intercept of piece ``k`` of ``h_{a,j}``: ``t >= slope G + intercept``."""
        slope = self._slope(a, j, k)
        c0 = self.dists[a].levels[k]
        return slope, self._prefix(a, j, k) - slope * c0

    def _value(self, a: int, j: np.ndarray, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``h_{a,j}(G)`` and the 0-based piece under ``G``."""
        d = self.dists[a]
        k = np.clip(np.searchsorted(d.levels, G, side="right") - 1, 0, d.size - 1)
        slope, icpt = self._cuts(a, j, k)
        return slope * G + icpt, k

    def constant(self) -> float:
        """``sum_a p_a E_{mu_a} c(s - y_M)``: the part of the loss outside the LP."""
        return float(sum(p * np.dot(d.weights, transport_cost(d.values - self.grid[-1], self.loss))
                         for p, d in zip(self.shares, self.dists, strict=True)))

    def _initial_pieces(self, full: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per group, (pair j, piece k) arrays of the first LP's cuts."""
        J = self.M - 1
        mids = 0.5 * (self.grid[:-1] + self.grid[1:])
        pooled = sum(p * d.cdf(mids) for p, d in zip(self.shares, self.dists, strict=True))
        out = []
        for d in self.dists:
            if full:
                jj, kk = np.meshgrid(np.arange(J), np.arange(d.size), indexing="ij")
                out.append((jj.ravel(), kk.ravel()))
                continue
            own = d.cdf(mids)   # h_{a,j}'s minimiser: the slope g_j changes sign at s = mid_j
            levels = [own, pooled, np.zeros(J), np.ones(J)]
            lo, hi = np.minimum(own, pooled), np.maximum(own, pooled)
            levels += [lo + f * (hi - lo) for f in np.linspace(0.1, 0.9, 7)]
            lv = np.concatenate(levels)
            k = np.searchsorted(d.levels, lv, side="right") - 1
            jj = np.tile(np.arange(J), len(levels) * 3)
            kk = np.clip(np.concatenate([k - 1, k, k + 1]), 0, d.size - 1)
            key = np.unique(jj.astype(np.int64) * (d.size + 1) + kk)
            out.append((key // (d.size + 1), key % (d.size + 1)))
        return out

    # ------------------------------------------------------------------ the LP
    def build(self, full: bool | None = None) -> Program:
        """The first LP (every piece when ``full`` or when small enough)."""
        J, A = self.M - 1, self.n_groups
        if full is None:
            full = sum(d.size for d in self.dists) * J <= FULL_LIMIT
        prog = Program("regression_parity")
        prog.add_variables("cdf", shape=(A, J), lb=0.0, ub=1.0)
        prog.add_variables("cost", shape=(A, J), lb=None)
        prog.add_variables("pooled", shape=(J,), lb=None)
        eye_j = sp.identity(J, format="csr")
        prog.add_constraints("pool", {"pooled": eye_j, "cdf": -sp.kron(self.shares.reshape(1, -1), eye_j)},
                             lb=0.0, ub=0.0)
        prog.add_constraints("parity", {"cdf": sp.identity(A * J, format="csr"),
                                        "pooled": sp.kron(np.ones((A, 1)), eye_j, format="csr") * -1.0},
                             lb=-self.eps, ub=self.eps)
        if J > 1:
            step = sp.diags([-np.ones(J - 1), np.ones(J - 1)], [0, 1], shape=(J - 1, J))
            prog.add_constraints("monotone", {"cdf": sp.kron(sp.identity(A), step, format="csr")}, lb=0.0)
        prog.set_objective(linear={"cost": np.repeat(self.shares, J)}, constant=self.constant())
        self._keys = []
        self._add_cuts(prog, "pieces", self._initial_pieces(full))
        return prog

    def _add_cuts(self, prog: Program, name: str, pieces: list[tuple[np.ndarray, np.ndarray]]) -> None:
        J = self.M - 1
        pair, slope, rhs = [], [], []
        if not self._keys:
            self._keys = [np.zeros(0, np.int64) for _ in self.dists]
        for a, (jj, kk) in enumerate(pieces):
            self._keys[a] = np.union1d(self._keys[a], jj.astype(np.int64) * (self.dists[a].size + 1) + kk)
            if jj.size == 0:
                continue
            s, c = self._cuts(a, jj, kk)
            pair.append(a * J + jj)
            slope.append(s)
            rhs.append(c)
        if not pair:
            return
        col, g, r = np.concatenate(pair), np.concatenate(slope), np.concatenate(rhs)
        n, idx = col.shape[0], np.arange(col.shape[0])
        size = self.n_groups * J
        prog.add_constraints(name, {"cost": sp.csr_matrix((np.ones(n), (idx, col)), shape=(n, size)),
                                    "cdf": sp.csr_matrix((-g, (idx, col)), shape=(n, size))}, lb=r)

    def solve(self, solver: str | SolverSpec | Mapping[str, Any] | None = None,
              **options: Any) -> RegressionParitySolution:
        """Solve to optimality (cutting planes when the pieces do not fit in one LP).

        ``solver`` is any LP back end spec (``None``: the registry's default for LPs).
        """
        J, A = self.M - 1, self.n_groups
        if J == 0:    # one output value: everyone maps to it
            cdf = np.ones((A, 1))
            return RegressionParitySolution(self.grid, cdf, np.ones(1), self.constant(), 0.0,
                                            np.zeros((A, 0)), 0, None)
        unit = self._unit()
        if unit is not None:     # badly scaled values: solve in unit-range values, report in the caller's
            shift, span = unit
            norm = RegressionParity([GroupDistribution((d.values - shift) / span, d.weights) for d in self.dists],
                                    self.shares, (self.grid - shift) / span, self.eps, self.loss)
            res = norm.solve(solver, **options)
            f = span * span if self.loss == "squared" else span
            return RegressionParitySolution(self.grid, res.cdf, res.pooled_cdf, res.loss * f, res.gap,
                                            None if res.price is None else res.price * f, res.rounds,
                                            res.solution, res.plan_list, lambda: res.prices() * f)
        fast = closed_form(self)
        if fast is not None:     # eps = 0 with the output support on the grid: no LP
            cdf, pooled, loss, plans, price_fn = fast
            return RegressionParitySolution(self.grid, cdf, pooled, loss, 0.0, None, 0, None, plans, price_fn)
        swept = squared_sweep(self) if self.loss == "squared" else absolute_sweep(self)
        if swept is not None:    # eps > 0 (absolute loss: every prediction on the grid): per-interval allocation
            cdf, pooled = swept
            plans = [quantile_plan(d.levels, cdf[a]) for a, d in enumerate(self.dists)]
            loss = plan_loss(plans, self.dists, self.shares, self.grid, self.loss)
            gap = max(float(np.max(np.abs(row - pooled))) for row in cdf)
            # the intervals' own duals, in closed form on demand (zero on the monotonicity rows)
            price_fn = ((lambda: absolute_prices(self, cdf)) if self.loss == "absolute"
                        else (lambda: squared_prices(self, cdf)))
            return RegressionParitySolution(self.grid, cdf, pooled, loss, gap, None, 0, None, plans, price_fn)
        return self._solve_lp(solver, **options)

    def _solve_lp(self, solver: str | SolverSpec | Mapping[str, Any] | None,
                  **options: Any) -> RegressionParitySolution:
        """The cutting-plane LP (the general path, and the reference of the closed forms)."""
        J, A = self.M - 1, self.n_groups
        spec = default_spec("LP") if solver is None else SolverSpec.parse(solver)
        if self.eps < 10 * FEAS_TOL:   # the band rows must hold to well under eps: tighter than the default
            spec = with_feasibility_tolerance(spec, max(self.eps / 10, MIN_FEAS_TOL))
        prog = self.build()
        scale = max(float(np.ptp(np.concatenate([self.grid] + [d.values for d in self.dists]))), 1e-300)
        # the LP value is a lower bound of the optimum and the loss of its CDFs an upper bound: stop when
        # they agree to ``tol`` in loss units
        tol = 1e-8 * (scale * scale if self.loss == "squared" else scale)
        jj = np.arange(J)
        for rounds in range(1, MAX_ROUNDS + 1):
            sol = prog.solve(spec, require_optimal=True, **options)
            G = np.clip(sol.primal["cdf"].reshape(A, J), 0.0, 1.0)
            t = sol.primal["cost"].reshape(A, J)
            new, worst = [], 0.0
            for a in range(A):
                h, k = self._value(a, jj, G[a])
                bad = h - t[a] > tol / J
                worst += float(self.shares[a] * np.maximum(h - t[a], 0.0).sum())
                kk = np.clip(np.concatenate([k[bad] - 1, k[bad], k[bad] + 1]), 0, self.dists[a].size - 1)
                key = np.tile(jj[bad], 3).astype(np.int64) * (self.dists[a].size + 1) + kk
                key = np.setdiff1d(key, self._keys[a])     # pieces already in the LP: the gap is tolerance
                self._keys[a] = np.union1d(self._keys[a], key)
                new.append((key // (self.dists[a].size + 1), key % (self.dists[a].size + 1)))
            # certified: the loss is within max(tol, 1e-6 relative) of the optimum
            if worst <= max(tol, 1e-6 * abs(sol.objective)) or not any(n_.size for n_, _ in new):
                return self._finish(G, sol, rounds)
            self._add_cuts(prog, f"pieces_{rounds}", new)
        raise SolverError(f"regression parity: the cutting planes did not close in {MAX_ROUNDS} rounds (loss bounds "
                          f"{worst:.3g} apart); use a coarser grid.")

    def _unit(self) -> tuple[float, float] | None:
        """``(shift, span)`` mapping the values and grid into about ``[-1, 1]`` (a power-of-two span), or
        ``None`` for ordinary magnitudes (span in ``[2^-10, 2^10]``, centre within ``2^10`` spans of 0):
        the LP's costs are then O(1), not O(scale^2), and no solver tolerance reads a 1e-18 cost as zero."""
        pts = np.concatenate([self.grid] + [d.values for d in self.dists])
        lo, hi = float(pts.min()), float(pts.max())
        span = 2.0 ** np.round(np.log2(hi - lo)) if hi > lo else 1.0
        shift = 0.5 * (lo + hi)
        if 2.0 ** -10 <= span <= 2.0 ** 10 and abs(shift) <= 2.0 ** 10 * span:
            return None
        return shift, float(span)

    def _finish(self, G: np.ndarray, sol: Solution, rounds: int) -> RegressionParitySolution:
        A, J = G.shape
        G = np.maximum.accumulate(G, axis=1)
        if self.eps == 0.0:   # the rows are equalities: remove the solver's rounding
            G = np.broadcast_to(self.shares @ G, G.shape).copy()
        cdf = np.hstack([G, np.ones((A, 1))])
        pooled = self.shares @ cdf
        loss = self.constant() + float(sum(p * self._value(a, np.arange(J), G[a])[0].sum()
                                           for a, p in enumerate(self.shares)))
        gap = float(np.max(np.abs(cdf - pooled)))
        price = sol.dual["parity"].reshape(A, J) if "parity" in sol.dual else np.zeros((A, J))
        return RegressionParitySolution(self.grid, cdf, pooled, loss, gap, price, rounds, sol)


def barycenter(dists: list[GroupDistribution], shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wasserstein-2 barycenter of the groups: quantile function ``sum_a p_a Q_a(u)`` (Chzhen et al.
    2020; Le Gouic et al. 2020), as distinct sorted values and their weights.

    Examples
    --------
    >>> dists, shares = collapse_groups(np.array([0.0, 1.0, 2.0, 3.0]), np.array([0, 0, 1, 1]), 2)
    >>> v, w = barycenter(dists, shares)
    >>> v.tolist(), w.tolist()
    ([1.0, 2.0], [0.5, 0.5])
    """

    cells = merged_cells(dists, shares)
    return distinct_values(cells.barycenter, cells.mass)
