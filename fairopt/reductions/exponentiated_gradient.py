r"""The exponentiated-gradient Lagrangian game (Agarwal et al. 2018; Agarwal, Dudík & Wu 2019).

The game solves :math:`\min_{Q}\max_{\lambda\ge0,\ \|\lambda\|_1\le B} L(Q,\lambda)` with
:math:`L(Q,\lambda)=\mathrm{cost}(Q)+\lambda^\top(g(Q)-b)` over randomized hypotheses ``Q``; the
moment (:mod:`fairopt.reductions.moments`) supplies ``cost``, ``g`` and ``b``, the oracle
(:mod:`fairopt.reductions.oracles`) the best responses :math:`\mathrm{Best}_h(\lambda)`.

Two modes:

``"faithful"``
    Algorithms 1/2 as published: :math:`\lambda_t = B\,\mathrm{softmax}([0,\theta])_{1:}` (the
    leading 0 is the phantom coordinate holding the unspent budget), step
    :math:`\eta=\nu/(\kappa B)` with :math:`\kappa` = 8 (SP, classification) or 2 (BGL), uniform
    averages :math:`\hat Q_t,\hat\lambda_t`, closed-form :math:`\mathrm{Best}_\lambda` and the stopping
    rule :math:`\max(\bar\nu,\underline\nu)\le\nu`.
``"practical"`` (default)
    an iteration cap, :math:`\eta_0=2/B` halved whenever the EG gap grows (never below the
    published value), and after every EG step the restricted best-mixture LP over all hypotheses
    found so far (built as a :class:`~fairopt.modeling.Program`); its row duals are the
    multipliers :math:`\lambda_{\rm LP}`, and :math:`\mathrm{Best}_h(\lambda_{\rm LP})` prices a new
    column. The iterate with the smallest certified gap over the run is returned.

Bounded group loss may be infeasible. Faithful mode applies Algorithm 2's test: at convergence,
a row still above its bound by more than :math:`(r+2\nu)/B` (``r`` = moment cost range) means no
solution (Algorithm 2 returns null). Practical mode treats ``B`` as an exact penalty: when the
game converges while the best mixture LP still needs slack, ``B`` is raised tenfold (up to
``1e4 B``) and the game continues; slack left at the largest ``B`` means no mixture of the
oracle's hypotheses meets the bound. Either way the result has ``status == "infeasible"``,
no hypotheses, and ``violated_row`` names the group constraint.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairopt.errors import ConfigError
from fairopt.runs.base import Progress, no_progress

#: LP slack below which the best mixture counts as feasible
SLACK_TOL = 1e-9
#: practical mode raises the LP penalty B tenfold at most this factor above the given B
MAX_B_GROWTH = 1e4


class _RunningAverages:
    """Running means of the played costs, constraint values and multipliers (Q-hat, lambda-hat)."""

    def __init__(self, n_rows: int):
        self.cost, self.g, self.lam = 0.0, np.zeros(n_rows), np.zeros(n_rows)

    def update(self, cost: float, g: np.ndarray, lam: np.ndarray, t: int):
        self.cost += (cost - self.cost) / t
        self.g += (g - self.g) / t
        self.lam += (lam - self.lam) / t
        return self.cost, self.g, self.lam


@dataclass
class GameResult:
    """Outcome of :meth:`ExponentiatedGradient.run`.

    ``hypotheses``/``weights`` describe the randomized predictor ``Q`` (empty when infeasible);
    ``lambda_`` the multipliers of the ``b``-rows; ``gap`` the duality-gap certificate (an
    estimate with inexact oracles); ``cost`` and ``constraint_values`` are ``cost(Q)`` and ``g(Q)``.
    """

    status: str
    hypotheses: list
    weights: np.ndarray
    lambda_: np.ndarray
    gap: float
    cost: float
    constraint_values: np.ndarray
    bound: np.ndarray
    n_iter: int
    n_oracle_calls: int
    mode: str
    B: float
    nu: float
    lp_slack: float = 0.0
    violated_row: str | None = None
    seconds: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)
    pool_costs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pool_G: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def max_violation(self) -> float:
        """``max(0, max_j g_j(Q) - b_j)``."""
        if self.constraint_values.size == 0:
            return 0.0
        return float(max(0.0, np.max(self.constraint_values - self.bound)))

    @property
    def converged(self) -> bool:
        return self.status == "converged"


class _Pool:
    """Distinct hypotheses with their statistics ``cost`` (K,) and ``G`` (K, M)."""

    def __init__(self, moment, X):
        self.moment, self.X = moment, X
        self.hyps: list = []
        self.costs: list[float] = []
        self.G: list[np.ndarray] = []
        self._keys: dict = {}
        self._arrays = None

    def add(self, h) -> int:
        index = getattr(h, "index", None)          # finite classes: members are known by index
        if index is not None and ("member", index) in self._keys:
            return self._keys[("member", index)]
        cost, g = self.moment.stats(h.predict(self.X))
        key = np.round(np.concatenate([[cost], g]), 12).tobytes()
        if key not in self._keys:
            self._keys[key] = len(self.hyps)
            self.hyps.append(h)
            self.costs.append(cost)
            self.G.append(g)
            self._arrays = None
        if index is not None:
            self._keys[("member", index)] = self._keys[key]
        return self._keys[key]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if getattr(self, "_arrays", None) is None:
            self._arrays = (np.asarray(self.costs), np.vstack(self.G))
        return self._arrays

    def __len__(self) -> int:
        return len(self.hyps)


def lambda_from_theta(theta: np.ndarray, B: float) -> np.ndarray:
    """:math:`B\\,\\mathrm{softmax}([0,\\theta])_{1:}` computed stably (phantom coordinate first)."""
    z = np.concatenate([[0.0], theta])
    z = z - z.max()
    e = np.exp(z)
    return B * e[1:] / e.sum()


def best_lambda(g: np.ndarray, bound: np.ndarray, B: float) -> np.ndarray:
    """Closed-form :math:`\\mathrm{Best}_\\lambda`: ``B`` on the most violated row (first on ties), else 0."""
    viol = g - bound
    lam = np.zeros_like(viol)
    j = int(np.argmax(viol))
    if viol[j] > 0:
        lam[j] = B
    return lam


class ExponentiatedGradient:
    """Exponentiated-gradient game with a pluggable constraint moment and best-response oracle.

    Parameters
    ----------
    moment : fairopt.reductions.moments.Moment
        Constraint moment (not yet fitted; :meth:`run` fits it on the training labels).
    oracle : fairopt.reductions.oracles.Oracle
        Best-response oracle compatible with the moment's ``kind``.
    B : float, default=10.0
        :math:`\\ell_1` bound on the multipliers (an exact penalty once it exceeds the norm of the
        optimal multipliers).
    nu : float, optional
        Duality-gap tolerance; default ``1e-9`` (practical) or ``0.01`` (faithful).
    max_iter : int, optional
        Iteration cap; default 50 (practical) or Theorem 4's bound (faithful).
    mode : {"practical", "faithful"}, default="practical"
    eg_gap : bool, default=False
        Practical mode: also certify the EG average with one extra oracle call per iteration
        so that it can be returned when its gap is the smallest.
    solver : str or SolverSpec, default="highs"
        LP back end of the best-mixture program (any ``fairopt.modeling`` LP solver; a
        ``SolverSpec`` carries its time limit and options to every solve).
    eta0 : float, optional
        Practical mode: initial EG step (default ``2 / B``).
    min_iter : int, default=1
        Practical mode: iterations played before the gap test may stop the game. With heuristic
        oracles the gap is an estimate that can reach 0 early; more EG steps add diverse columns.
    progress : callable, optional
        ``progress(done, total, description)`` after each iteration.
    """

    def __init__(self, moment, oracle, B: float = 10.0, nu: float | None = None,
                 max_iter: int | None = None, mode: str = "practical", eg_gap: bool = False,
                 solver="highs", eta0: float | None = None, min_iter: int = 1,
                 progress: Progress | None = None):
        self.moment = moment
        self.oracle = oracle
        self.B = B
        self.nu = nu
        self.max_iter = max_iter
        self.mode = mode
        self.eg_gap = eg_gap
        self.solver = solver
        self.eta0 = eta0
        self.min_iter = min_iter
        self.progress = progress

    # ------------------------------------------------------------------------------------------
    def iteration_bound(self) -> int:
        """Theorem 4 / Algorithm 2 bound ``2 kappa B^2 ln(M + 1) / nu^2`` (``M`` rows)."""
        nu = self._nu()
        return int(math.ceil(2 * self.moment.eta_divisor * self.B ** 2
                             * math.log(self.moment.n_rows + 1) / nu ** 2))

    def _nu(self) -> float:
        if self.nu is not None:
            return float(self.nu)
        return 1e-9 if self.mode == "practical" else 0.01

    def run(self, X, y, sensitive_features) -> GameResult:
        """Fit the moment on ``(y, sensitive_features)``, prepare the oracle on ``X`` and play."""
        if self.mode not in ("practical", "faithful"):
            raise ConfigError(f"mode={self.mode!r}; use 'practical' or 'faithful'.")
        if not (np.isfinite(self.B) and self.B > 0):
            raise ConfigError(f"B must be a positive number, got {self.B!r}.")
        if self._nu() <= 0:
            raise ConfigError(f"nu must be positive, got {self.nu!r}.")
        t0 = time.perf_counter()
        self.moment.fit(y, sensitive_features)
        self.oracle.prepare(self.moment, X)
        self._calls = 0
        pool = _Pool(self.moment, X)
        if self.mode == "faithful":
            res = self._faithful(pool)
        else:
            res = self._practical(pool)
        res.seconds = time.perf_counter() - t0
        self.result_ = res
        return res

    # ------------------------------------------------------------------------------------------
    def _oracle(self, lam, pool: _Pool, use_pool: bool) -> tuple[int, float]:
        """Index in the pool of Best_h(lam) and its Lagrangian value."""
        self._calls += 1
        idx = pool.add(self.oracle.best_response(lam))
        if not use_pool:
            return idx, self._L(pool.costs[idx], pool.G[idx], lam)
        costs, G = pool.arrays()
        values = self.moment.lagrangian(costs, G, lam)
        best = int(np.argmin(values))
        if values[best] < values[idx]:
            idx = best
        return idx, float(values[idx])

    def _L(self, cost, g, lam) -> float:
        return float(self.moment.lagrangian(cost, g, lam))

    def _L_best(self, cost, g, B: float | None = None) -> float:
        """:math:`L(Q, \\mathrm{Best}_\\lambda(Q)) = cost + B\\max(0,\\max_j(g_j-b_j))`."""
        B = self.B if B is None else B
        return float(cost + B * max(0.0, float(np.max(g - self.moment.bound))))

    @staticmethod
    def _better(gap: float, value: float, best, nu: float) -> bool:
        r"""Smaller gap wins; among gaps equal up to ``nu``, the smaller penalised objective
        :math:`L(Q,\mathrm{Best}_\lambda(Q))` (later LPs see a larger pool, so they never lose)."""
        if best is None:
            return True
        tol = max(nu, 1e-12)
        return gap < best[0] - tol or (gap <= best[0] + tol and value <= best[5])

    def _play(self, lam, pool: _Pool, use_pool: bool, counts: dict, avg: "_RunningAverages", t: int):
        """One round: the Q-player best-responds to ``lam``; update the running averages and
        return ``(g_t, cost_hat, g_hat, lam_hat, L_hat, upper gap)``."""
        idx, _ = self._oracle(lam, pool, use_pool=use_pool)
        counts[idx] = counts.get(idx, 0) + 1
        g_t = pool.G[idx]
        cost_hat, g_hat, lam_hat = avg.update(pool.costs[idx], g_t, lam, t)
        L_hat = self._L(cost_hat, g_hat, lam_hat)
        return g_t, cost_hat, g_hat, lam_hat, L_hat, self._L_best(cost_hat, g_hat) - L_hat

    def _faithful(self, pool: _Pool) -> GameResult:
        m, B, nu = self.moment, float(self.B), self._nu()
        eta = nu / (m.eta_divisor * B)
        T = self.max_iter or self.iteration_bound()
        progress = self.progress or no_progress
        theta = np.zeros(m.n_rows)
        counts: dict[int, int] = {}
        avg = _RunningAverages(m.n_rows)
        status, gap, t = "max_iter", np.inf, 0
        for t in range(1, T + 1):
            lam = lambda_from_theta(theta, B)
            g_t, cost_hat, g_hat, lam_hat, L_hat, upper = self._play(lam, pool, False, counts, avg, t)
            _, L_resp = self._oracle(lam_hat, pool, use_pool=False)
            lower = L_hat - L_resp
            gap = max(upper, lower)
            if t % 100 == 0 or t == 1:
                progress(t, T, f"EG (faithful) gap={gap:.3g}")
            if gap <= nu:
                status = "converged"
                break
            theta += eta * (g_t - m.bound)
        progress(T if status != "converged" else t, T, f"EG (faithful) gap={gap:.3g}")
        idxs = np.array(sorted(counts))
        w = np.array([counts[i] for i in idxs], dtype=float)
        return self._finish(pool, idxs, w / w.sum(), lam_hat, gap, status, t, nu, 0.0, [])

    def _practical(self, pool: _Pool) -> GameResult:
        from fairopt.formulations.cost_sensitive import BestMixtureLP
        m, B, nu = self.moment, float(self.B), self._nu()
        master = BestMixtureLP(m.bound, solver=self.solver)  # warm-started across iterations
        T = self.max_iter or 50
        progress = self.progress or no_progress
        eta_min = nu / (m.eta_divisor * B)
        eta = 2.0 / B if self.eta0 is None else float(self.eta0)
        theta = np.zeros(m.n_rows)
        counts: dict[int, int] = {}
        avg = _RunningAverages(m.n_rows)
        best = None  # (gap, idxs, weights, lam, slack, penalised value)
        B_lp = B       # exact-penalty bound of the LP; raised while the pool LP needs slack
        prev_eg_gap, history, status, t = np.inf, [], "max_iter", 0
        for t in range(1, T + 1):
            lam = lambda_from_theta(theta, B)
            g_t, cost_hat, g_hat, lam_hat, L_hat, eg_gap = self._play(lam, pool, True, counts, avg, t)
            if self.eg_gap:
                _, L_resp = self._oracle(lam_hat, pool, use_pool=True)
                eg_gap = max(eg_gap, L_hat - L_resp)
                value = self._L_best(cost_hat, g_hat, B_lp)
                if self._better(eg_gap, value, best, nu):
                    idxs = np.array(sorted(counts))
                    w = np.array([counts[i] for i in idxs], dtype=float)
                    best = (eg_gap, idxs, w / w.sum(), lam_hat.copy(), 0.0, value)
            # restricted best-mixture LP over the pool, then price a new column at its duals
            costs, G = pool.arrays()
            q, lam_lp, slack = master.solve(costs, G, B_lp)
            cost_lp, g_lp = float(q @ costs), q @ G
            L_lp = self._L(cost_lp, g_lp, lam_lp)
            _, L_price = self._oracle(lam_lp, pool, use_pool=True)
            lp_gap = max(self._L_best(cost_lp, g_lp, B_lp) - L_lp, L_lp - L_price, 0.0)
            value = self._L_best(cost_lp, g_lp, B_lp)
            if self._better(lp_gap, value, best, nu):
                keep = np.flatnonzero(q > 1e-12)
                w = q[keep] / q[keep].sum()
                best = (lp_gap, keep, w, lam_lp, slack, value)
            history.append({"iteration": t, "eg_gap": float(eg_gap), "lp_gap": float(lp_gap),
                            "eta": eta, "pool": len(pool), "oracle_calls": self._calls})
            progress(t, T, f"EG gap={best[0]:.3g} pool={len(pool)}")
            if best[0] <= nu and t >= self.min_iter:
                if best[4] > SLACK_TOL and B_lp < B * MAX_B_GROWTH:
                    # converged at this penalty but the mixture still violates: B may be below
                    # the multipliers' norm, so raise it (exact penalty) and keep pricing
                    B_lp *= 10.0
                    best = None
                else:
                    status = "converged"
                    break
            if eg_gap > prev_eg_gap:
                eta = max(eta / 2.0, eta_min)
            prev_eg_gap = eg_gap
            theta += eta * (g_t - m.bound)
        if status == "converged" and t < T:
            progress(T, T, f"EG converged gap={best[0]:.3g}")
        if best is None:  # the cap hit right after raising B: keep the last LP iterate
            keep = np.flatnonzero(q > 1e-12)
            best = (lp_gap, keep, q[keep] / q[keep].sum(), lam_lp, slack, value)
        gap, idxs, w, lam_best, slack, _ = best
        return self._finish(pool, idxs, w, lam_best, gap, status, t, nu, slack, history, B_lp)

    def _finish(self, pool, idxs, w, lam, gap, status, t, nu, slack, history,
                B_used: float | None = None) -> GameResult:
        m = self.moment
        costs, G = pool.arrays()
        cost_q = float(w @ costs[idxs])
        g_q = w @ G[idxs]
        viol = g_q - m.bound
        violated = None
        if self.mode == "faithful":  # Algorithm 2: certificate tolerance (r + 2 nu) / B
            unreachable = np.max(viol) > (m.cost_range + 2 * nu) / self.B
        else:                        # pool LP still needs slack at the largest penalty tried
            unreachable = slack > SLACK_TOL
        if status == "converged" and m.may_be_infeasible and unreachable:
            status = "infeasible"
            violated = m.block_of_row(int(np.argmax(viol)))
        hyps = [] if status == "infeasible" else [pool.hyps[i] for i in idxs]
        weights = np.zeros(0) if status == "infeasible" else np.asarray(w, dtype=float)
        return GameResult(status=status, hypotheses=hyps, weights=weights, lambda_=np.asarray(lam),
                          gap=float(gap), cost=cost_q, constraint_values=g_q, bound=m.bound.copy(),
                          n_iter=t, n_oracle_calls=self._calls, mode=self.mode,
                          B=float(self.B if B_used is None else B_used),
                          nu=nu, lp_slack=float(slack), violated_row=violated, history=history,
                          pool_costs=costs, pool_G=G)
