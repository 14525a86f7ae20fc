"""Statistical parity by randomized thresholds (Alabdulmohsin & Lucic 2021).

Primal (Appendix B, Eq. 6; atoms ``j = (k_j, f_j)`` with counts ``c_j``, ``N = sum_j c_j``)::

    minimize over 0 <= q_j <= 1     (1/N) sum_j c_j [ (gamma/2) q_j^2 - f_j q_j ]
    subject to, for every group k:  rho - eps/2 <= (1/n_k) sum_{j in k} c_j q_j <= rho + eps/2

``rho`` is either fixed (the paper's band) or a variable in ``[0, 1]`` (then group rates lie
within ``eps`` of each other: Definition 1 exactly). ``gamma = 0`` gives the LP whose solution is
a per-group threshold with one fractional level. The solution is the ramp rule
``q = clip((f - theta_k)/gamma, 0, 1)`` with ``theta_k = lambda_k - mu_k`` the dual of group k.

Back ends: ``"native"`` (exact: per-group piecewise-linear root, bisection on a free ``rho``;
fractional knapsack when ``gamma = 0``), ``"sgd"`` (projected SGD, Algorithm 1; fixed ``rho``),
and any :class:`fairopt.modeling.Program` solver (``"osqp"``, ``"highs"``, ``"cvxpy[:...]"``,
``"pyomo[:...]"``, ``"scipy"`` for the LP).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from fairopt._param_validation import NONNEGATIVE, RATE, check_value
from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.constrained_classification.atoms import (
    ScoreAtoms,
    collapse_atoms,
)
from fairopt.formulations.constrained_classification.ramp import (
    CellRamp,
    parity_threshold,
)
from fairopt.formulations.constrained_classification.solution import (
    ThresholdSolution,
    step_rule_from_q,
    threshold_from_q,
)
from fairopt.modeling.registry import OWN_ALGORITHM, SolverSpec, accepts, resolve_solver, solve_own

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling import Program

#: bisection steps on a free rho (interval [0, 1] -> width 2**-60)
RHO_BISECTION_STEPS = 60
#: relative tolerance deciding that a knapsack target falls exactly between two atoms
TIE_TOL = 1e-12


def check_parameters(gamma: float, eps: float, rho: float | None) -> tuple[float, float, float | None]:
    """Validate ``gamma >= 0`` (ramp width, in score units; 0: the pure threshold LP rule),
    ``eps >= 0`` (allowed gap between group rates) and ``rho in [0, 1]`` (target positive rate,
    or ``None``: free); :class:`~fairopt.errors.ParameterError` naming the one that is not."""
    owner = "RandomizedThresholdParity"
    check_value("gamma", gamma, [NONNEGATIVE], owner)
    check_value("eps", eps, [NONNEGATIVE], owner)
    check_value("rho", rho, [None, RATE], owner)
    return float(gamma), float(eps), None if rho is None else float(rho)


def knapsack_threshold(f: np.ndarray, a: np.ndarray, target: float) -> tuple[float, float]:
    """``gamma = 0`` rule of one group: fill atoms by decreasing score up to mass ``target``.

    ``f`` ascending, ``a`` normalised weights. Returns ``(t, tau)`` for the rule
    ``1{f > t} + tau 1{f = t}``; when the target falls exactly between two atoms, any ``t`` in
    between works and the one nearest 0 is returned (as for ``gamma > 0``).
    """
    suffix = np.cumsum(a[::-1])[::-1]                    # S_j = mass of atoms >= j
    above = np.concatenate([suffix[1:], [0.0]])           # S_{j+1}
    if target <= TIE_TOL:
        return float(f[-1]), 0.0
    j = int(np.searchsorted(-suffix, -target, side="right")) - 1   # largest j with S_j >= target
    j = max(j, 0)
    tau = (target - above[j]) / a[j]
    if tau >= 1.0 - TIE_TOL:      # target sits exactly on the boundary below atom j
        return _boundary(f, j - 1, j) if j > 0 else (float(f[0]), 1.0)
    if tau <= TIE_TOL:            # ... or on the boundary above atom j
        return _boundary(f, j, j + 1) if j + 1 < f.size else (float(f[-1]), 0.0)
    return float(f[j]), float(tau)


def _boundary(f: np.ndarray, lo: int, hi: int) -> tuple[float, float]:
    """Rule putting atoms ``>= hi`` at 1 and ``<= lo`` at 0: any ``t`` in ``[f_lo, f_hi]``
    works; take the one nearest 0 (``tau = 1`` only when ``t`` lands on ``f_hi``)."""
    t = min(max(0.0, float(f[lo])), float(f[hi]))
    return t, 1.0 if t == f[hi] else 0.0



def _no_options(method: str, options: Mapping[str, Any]) -> None:
    """The exact threshold solvers take no options: refuse them rather than ignore them."""
    if options:
        raise ConfigError(f"the {method} threshold solver takes no options (got {sorted(options)}); "
                          "options such as n_steps or random_state belong to the sgd back end.")

class RandomizedThresholdParity:
    """Randomized-threshold post-processing for statistical parity over K groups.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Scores ``f(x_i)`` in ``[-1, 1]``, ideally ``2 P(y=1|x) - 1``.
    groups : array-like of int, shape (n,)
        Group codes ``0 .. K-1``.
    gamma : float, default 0.1
        Ramp width: predictions are randomized for scores in ``(theta_k, theta_k + gamma)``.
        ``0`` gives the LP (pure threshold with one fractional level per group).
    eps : float, default 0.0
        With fixed ``rho``: every group rate within ``eps/2`` of ``rho``; with free ``rho``:
        the largest minus the smallest group rate is at most ``eps``.
    rho : float or None, default None
        Target positive rate; ``None`` lets the optimisation choose it.
    sample_weight : array-like, optional
        Row weights.
    n_groups : int, optional
        Number of groups (default ``max(groups) + 1``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.integers(0, 2, 400)
    >>> scores = rng.uniform(-1, 1, 400) + 0.3 * groups      # group 1 scores higher
    >>> solution = RandomizedThresholdParity(scores, groups, gamma=0.1).solve()
    >>> solution.status, bool(abs(solution.rates[0] - solution.rates[1]) < 1e-6)
    ('optimal', True)
    """

    name = "constrained_classification.parity"

    def __init__(self, scores: ArrayLike | None = None, groups: ArrayLike | None = None, gamma: float = 0.1,
                 eps: float = 0.0, rho: float | None = None, sample_weight: ArrayLike | None = None,
                 n_groups: int | None = None, atoms: ScoreAtoms | None = None) -> None:
        self.gamma, self.eps, self.rho = check_parameters(gamma, eps, rho)
        if atoms is None:
            if scores is None or groups is None:
                raise DataValidationError("pass scores and groups (or precomputed atoms).")
            atoms = collapse_atoms(scores, groups, n_groups, sample_weight)
        if not np.isfinite(atoms.score).all():
            raise DataValidationError("scores must be finite.")
        nk = atoms.cell_weight
        if (nk <= 0).any():
            raise DataValidationError(f"groups {np.flatnonzero(nk <= 0).tolist()} have zero total weight.")
        self.atoms = atoms
        self.group_weight = nk
        self._ramps: list[CellRamp] | None = None

    def with_parameters(self, eps: float | None = None,
                        rho: float | Literal["keep"] | None = "keep") -> RandomizedThresholdParity:
        """Same data and ``gamma`` with another ``eps`` / ``rho``; the sorted per-group tables
        are shared, so a sweep over ``rho`` costs ``O(K log n)`` per point."""
        other = RandomizedThresholdParity(gamma=self.gamma, eps=self.eps if eps is None else eps,
                                          rho=self.rho if rho == "keep" else rho, atoms=self.atoms)
        other._ramps = self.ramps() if self.gamma > 0 else None
        return other

    # ------------------------------------------------------------------ helpers
    @property
    def n_groups(self) -> int:
        """Number of groups (cells) whose thresholds are fitted."""
        return self.atoms.n_cells

    def _norm_weight(self) -> np.ndarray:
        """``c_j / n_k`` per atom, divided cell by cell (no full-length repeat of ``n_k``)."""
        at = self.atoms
        out = np.empty_like(at.weight)
        for k in range(self.n_groups):   # a loop over groups, not rows
            sl = at.cell_slice(k)
            np.divide(at.weight[sl], self.group_weight[k], out=out[sl])
        return out

    def ramps(self) -> list[CellRamp]:
        """Per-group tabulated rate functions ``m_k(theta)`` (built once, ``O(n log n)``)."""
        if self._ramps is None:
            at = self.atoms
            if at.unit_weight:   # c_j / n_k = 1 / n_k in every atom: a broadcast, not an array
                a = [np.broadcast_to(1.0 / self.group_weight[k], (at.offsets[k + 1] - at.offsets[k],))
                     for k in range(self.n_groups)]
            else:
                norm = self._norm_weight()
                a = [norm[at.cell_slice(k)] for k in range(self.n_groups)]
            self._ramps = [CellRamp(at.score[at.cell_slice(k)], a[k], self.gamma)
                           for k in range(self.n_groups)]
        return self._ramps

    def rule_q(self, thresholds: np.ndarray, tie_probs: np.ndarray | None = None) -> np.ndarray:
        """Probabilities of every atom under the rule with the given thresholds."""
        f, t = self.atoms.score, self.atoms.per_atom(thresholds)
        if self.gamma > 0:   # clip((f - t) / gamma, 0, 1), in place
            q = np.subtract(f, t, out=t)
            q /= self.gamma
            np.maximum(q, 0.0, out=q)
            out: np.ndarray = np.minimum(q, 1.0, out=q)
            return out
        tau = np.zeros_like(t) if tie_probs is None else self.atoms.per_atom(tie_probs)
        return np.where(f > t, 1.0, np.where(f == t, tau, 0.0))

    def _finish(self, thresholds: np.ndarray, tie_probs: np.ndarray, theta: ArrayLike, rho: float, backend: str,
                solver: str, t0: float, **info: Any) -> ThresholdSolution:
        q = self.rule_q(thresholds, tie_probs)
        at = self.atoms
        # rates and (1/N) sum_j c_j ((gamma/2) q_j^2 - f_j q_j) group by group, in two buffers of
        # the largest group's size (full-length temporaries of 10^7 atoms cost more than the sums)
        rates, total = np.zeros(self.n_groups), 0.0
        size = int(np.diff(at.offsets).max())
        buf, terms = np.empty(size), np.empty(size)
        for k in range(self.n_groups):   # a loop over groups, not rows
            sl = at.cell_slice(k)
            qk, wk, m = q[sl], at.weight[sl], sl.stop - sl.start
            b, t = buf[:m], terms[:m]
            rates[k] = np.sum(np.multiply(wk, qk, out=b))
            np.multiply(0.5 * self.gamma, qk, out=t)
            t *= qk
            t -= np.multiply(at.score[sl], qk, out=b)
            t *= wk
            total += float(np.sum(t))
        rates /= self.group_weight
        obj = total / float(at.weight.sum())
        return ThresholdSolution(thresholds=np.asarray(thresholds, float), tie_probs=np.asarray(tie_probs, float),
                                 theta=np.asarray(theta, float), rho=float(rho), gamma=self.gamma,
                                 eps=self.eps, rates=rates, objective=obj, q=q, backend=backend,
                                 solver=solver, solve_seconds=time.perf_counter() - t0, info=info)

    # ------------------------------------------------------------------ native exact
    def _native_thresholds(self, rho: float, fast: bool = False) -> tuple[np.ndarray, np.ndarray]:
        half = 0.5 * self.eps
        if self.gamma > 0:
            th = np.array([parity_threshold(r, rho, half, fast) for r in self.ramps()])
            return th, np.zeros_like(th)
        out = np.zeros((self.n_groups, 2))
        a, at = self._norm_weight(), self.atoms
        for k in range(self.n_groups):
            sl = at.cell_slice(k)
            f, ak = at.score[sl], a[sl]
            m0 = float(ak[f > 0].sum())
            if m0 > rho + half:
                out[k] = knapsack_threshold(f, ak, rho + half)
            elif m0 < rho - half:
                out[k] = knapsack_threshold(f, ak, rho - half)
        return out[:, 0], out[:, 1]

    def free_rho(self) -> float:
        """Optimal target rate when ``rho`` is free: bisection on ``sum_k n_k theta_k(rho)``.

        The optimal value ``V(rho)`` is convex with ``V'(rho) = -sum_k n_k theta_k(rho)`` (up to
        the 1/N scaling), and ``theta_k(rho)`` is non-increasing, so the sign change of the sum
        is the minimiser. When the minimiser is an interval, its midpoint is returned.
        """
        nk = self.group_weight

        def slope(r: float) -> float:  # sign of sum_k n_k theta_k(r)
            return float(nk @ self._native_thresholds(r, fast=True)[0])

        lo, hi = 0.0, 1.0            # largest r with slope > 0  (V decreasing)
        for _ in range(RHO_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
        left = lo
        lo, hi = 0.0, 1.0            # smallest r with slope < 0 (V increasing)
        for _ in range(RHO_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if slope(mid) < 0 else (mid, hi)
        right = hi
        return 0.5 * (left + min(max(right, left), 1.0))

    def solve_native(self, t0: float | None = None, **options: Any) -> ThresholdSolution:
        """The exact solver (run by the ``native`` back end); it takes no options."""
        _no_options("exact", options)
        t0 = time.perf_counter() if t0 is None else t0
        rho = self.free_rho() if self.rho is None else self.rho
        th, tau = self._native_thresholds(rho)
        return self._finish(th, tau, th, rho, OWN_ALGORITHM, "exact", t0)

    # ------------------------------------------------------------------ SGD
    def solve_sgd(self, t0: float | None = None, **options: Any) -> ThresholdSolution:
        """Projected SGD, Algorithm 1 (run by the ``sgd`` back end); ``options`` go to
        :func:`~fairopt.formulations.constrained_classification.sgd.sgd_thresholds`."""
        t0 = time.perf_counter() if t0 is None else t0
        from fairopt.formulations.constrained_classification.sgd import sgd_thresholds
        if self.rho is None:
            raise ConfigError("the sgd back end needs a fixed target rate rho; pass rho=... "
                              "(or use solver='native' to optimise rho).")
        if self.gamma <= 0:
            raise ConfigError("the sgd back end needs gamma > 0 (the dual is not smooth at gamma = 0).")
        th, state = sgd_thresholds(self.atoms, self.gamma, self.rho, 0.5 * self.eps, **options)
        out = self._finish(th, np.zeros_like(th), th, self.rho, OWN_ALGORITHM, "projected_sgd", t0,
                           n_steps=state.n_steps)
        out.status = "iteration_limit"  # a fixed number of stochastic steps: approximate, not certified
        out.iterations = state.n_steps
        return out

    # ------------------------------------------------------------------ Program back ends
    def build(self) -> Program:
        """The QP (``gamma > 0``) or LP (``gamma = 0``) over atoms as a :class:`fairopt.modeling.Program`.

        Blocks: variables ``q`` (one per atom, in ``[0, 1]``) and, when ``rho`` is free, ``rho``;
        constraint ``parity`` with one two-sided row per group on the group's rate. The objective
        is scaled by the mean atom weight ``c_bar = N / n_atoms`` (cost coefficients of order 1;
        HiGHS's active-set QP stalls on tiny costs), so the dual of row k is
        ``-theta_k n_k / c_bar``.
        """
        from fairopt.modeling import Program
        at, K = self.atoms, self.n_groups
        N = float(at.weight.sum())
        prog = Program(name="threshold_parity_qp" if self.gamma > 0 else "threshold_parity_lp")
        prog.add_variables("q", shape=(at.n_atoms,), lb=0.0, ub=1.0)
        A = sp.csr_matrix((self._norm_weight(), (at.cell, np.arange(at.n_atoms))), shape=(K, at.n_atoms))
        half = 0.5 * self.eps
        if self.rho is None:
            prog.add_variables("rho", shape=(1,), lb=0.0, ub=1.0)
            prog.add_constraints("parity", {"q": A, "rho": -np.ones((K, 1))}, lb=-half, ub=half)
        else:
            prog.add_constraints("parity", {"q": A}, lb=self.rho - half, ub=self.rho + half)
        c = at.weight * (at.n_atoms / N)
        quad = {("q", "q"): sp.diags(self.gamma * c)} if self.gamma > 0 else None
        prog.set_objective(linear={"q": -c * at.score}, quadratic=quad)
        return prog

    def _solve_program(self, t0: float, solver: SolverSpec, **options: Any) -> ThresholdSolution:
        sol = self.build().solve(solver, require_optimal=True, **options)
        q = np.clip(sol.primal["q"], 0.0, 1.0)
        at, N = self.atoms, float(self.atoms.weight.sum())
        dual = sol.dual.get("parity")
        theta_dual = None if dual is None else -dual * (N / at.n_atoms) / self.group_weight
        rho = float(sol.primal["rho"][0]) if self.rho is None else self.rho
        th, tau = np.zeros(self.n_groups), np.zeros(self.n_groups)
        for k in range(self.n_groups):
            sl = at.cell_slice(k)
            if self.gamma > 0:
                d = None if theta_dual is None else float(theta_dual[k])
                th[k] = threshold_from_q(at.score[sl], q[sl], self.gamma, weight=at.weight[sl], dual=d)
            else:
                th[k], tau[k] = step_rule_from_q(at.score[sl], q[sl])
        out = self._finish(th, tau, th if theta_dual is None else theta_dual, rho, sol.backend,
                           sol.solver, t0, program_objective=sol.objective, q_solver=q)
        out.iterations = sol.iterations
        return out

    # ------------------------------------------------------------------ public
    def solve(self, solver: str | SolverSpec | None = None, **options: Any) -> ThresholdSolution:
        """Solve with ``solver``: ``"native"`` (default), ``"sgd"`` or a Program solver name.

        ``options`` go to the SGD (``n_steps``, ``batch_size``, ``step_size``, ``sampling``,
        ``random_state``) or to :meth:`fairopt.modeling.Program.solve` (``time_limit``,
        ``verbose``, ``options``).
        """
        t0 = time.perf_counter()
        if solver is None or accepts(solver, "threshold"):   # the problem's own algorithms
            out: ThresholdSolution = solve_own(self, resolve_solver(solver, "threshold"), "threshold", t0=t0, **options)
            return out
        return self._solve_program(t0, resolve_solver(solver, "QP" if self.gamma > 0 else "LP"), **options)

    def summary(self) -> dict[str, Any]:
        """Sizes of the collapsed problem (atoms, groups) and its problem class."""
        return {"formulation": self.name, "problem_class": "QP" if self.gamma > 0 else "LP",
                "n_rows": float(self.atoms.weight.sum()), "n_atoms": self.atoms.n_atoms,
                "n_groups": self.n_groups, "gamma": self.gamma, "eps": self.eps,
                "rho": "free" if self.rho is None else self.rho}
