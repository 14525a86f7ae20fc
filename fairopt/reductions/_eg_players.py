"""The exponentiated-gradient multiplier players (faithful and practical modes) and their helpers.

See :mod:`fairopt.reductions.exponentiated_gradient`, which re-exports every public name here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._docstrings import fill_doc, inherit_docs
from fairopt._progress import no_progress as no_progress  # the shared helper, named here for callers
from fairopt.errors import ConfigError
from fairopt.reductions.game import Game, GameResult, RunningAverages
from fairopt.reductions.problems import ExampleCosts

if TYPE_CHECKING:
    from collections.abc import Mapping

    from fairopt.modeling import SolverSpec
    from fairopt.reductions.game import Learner
    from fairopt.reductions.moments import Moment


#: LP slack below which the best mixture counts as feasible
SLACK_TOL = 1e-9
#: practical mode raises the LP penalty B tenfold at most this factor above the given B
MAX_B_GROWTH = 1e4
#: practical mode's step schedule: first check round, spacing factor of checks, shrink factor
ETA_CHECK_START, ETA_CHECK_GROWTH, ETA_SHRINK = 5, 1.6, 0.8
#: relative resolution of the LP gap: it is a difference of Lagrangian values of size
#: |cost| + B |gamma|, computed from an LP solution feasible to the solver's default primal/dual
#: tolerance (1e-7 in HiGHS), so it is only resolved to about this fraction of that size
GAP_REL_TOL = 1e-7


def lambda_from_theta(theta: np.ndarray, B: float) -> np.ndarray:
    """:math:`B\\,\\mathrm{softmax}([0,\\theta])_{1:}` computed stably (phantom coordinate first)."""
    z = np.concatenate([[0.0], theta])
    z = z - z.max()
    e = np.exp(z)
    out: np.ndarray = B * e[1:] / e.sum()
    return out


def best_lambda(g: np.ndarray, bound: np.ndarray, B: float) -> np.ndarray:
    """Closed-form :math:`\\mathrm{Best}_\\lambda`: ``B`` on the most violated row (first on ties), else 0."""
    viol = g - bound
    lam = np.zeros_like(viol)
    j = int(np.argmax(viol))
    if viol[j] > 0:
        lam[j] = B
    out: np.ndarray = lam
    return out


def oracle_certificate(learner: Learner) -> tuple[bool, str]:
    """``(exact, what the gap certifies)`` for a best-response ``learner``."""
    if getattr(learner, "exact", False):
        return True, "exact oracle: the gap is a duality-gap certificate over the hypothesis class."
    return False, (f"heuristic oracle ({type(learner).__name__}): the learner minimises a surrogate, "
                   "not the Lagrangian, so the gap bounds suboptimality only over the hypotheses it "
                   "returned; it is not a certificate over its hypothesis class.")


class _EGPlayer:
    r"""Shared state of the exponentiated-gradient multiplier players.

    :math:`\lambda_t = B\,\mathrm{softmax}([0,\theta_t])_{1:}` and
    :math:`\theta_{t+1}=\theta_t+\eta\,(g(h_t)-b)`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherit_docs(cls)   # overrides without a docstring document what this class's method does


    mode = "abstract"
    use_pool = False

    def __init__(self, B: float, nu: float, max_iter: int) -> None:
        self.B, self.nu, self.max_iter = float(B), float(nu), int(max_iter)

    @fill_doc
    def start(self, game: Game[Moment]) -> None:
        """Initialise the player for a new game.

        {player_start}
        """
        self.game, self.moment = game, game.moment
        self.theta = np.zeros(self.moment.n_rows)
        self.counts: dict[int, int] = {}
        self.avg = RunningAverages(self.moment.n_rows)

    @fill_doc
    def propose(self, t: int) -> np.ndarray:
        """Multipliers for round ``t``.

        {player_propose}
        """
        return lambda_from_theta(self.theta, self.B)

    @fill_doc
    def observe(self, t: int, index: int) -> bool:
        """Take the learner's response of round ``t`` and decide whether to stop.

        {player_observe}
        """
        raise AttributeError("subclasses define observe")  # pragma: no cover - interface

    @fill_doc
    def finish(self, t: int) -> GameResult:
        """Assemble the result after the last round.

        {player_finish}
        """
        raise AttributeError("subclasses define finish")  # pragma: no cover - interface

    def _L_best(self, cost: float, g: NDArray[np.float64], B: float | None = None) -> float:
        r""":math:`L(Q, \mathrm{Best}_\lambda(Q)) = cost + B\max(0,\max_j(g_j-b_j))`."""
        B = self.B if B is None else B
        return float(cost + B * max(0.0, float(np.max(g - self.moment.bound))))

    def _average(self, t: int, idx: int, lam: NDArray[np.float64]) -> tuple[
            NDArray[np.float64], float, NDArray[np.float64], NDArray[np.float64], float, float]:
        """Record the round; return ``(g_t, cost_hat, g_hat, lam_hat, L_hat, upper gap)``."""
        pool = self.game.pool
        self.counts[idx] = self.counts.get(idx, 0) + 1
        g_t = pool.G[idx]
        cost_hat, g_hat, lam_hat = self.avg.update(pool.costs[idx], g_t, lam, t)
        L_hat = self.game.lagrangian(cost_hat, g_hat, lam_hat)
        return g_t, cost_hat, g_hat, lam_hat, L_hat, self._L_best(cost_hat, g_hat) - L_hat

    def _uniform_average(self) -> tuple[NDArray[np.int_], NDArray[np.float64]]:
        idxs = np.array(sorted(self.counts))
        w = np.array([self.counts[i] for i in idxs], dtype=float)
        return idxs, w / w.sum()

    def _result(self, idxs: NDArray[np.int_], w: ArrayLike, lam: ArrayLike, gap: float, status: str, t: int,
                slack: float, history: list[dict[str, Any]], B_used: float | None = None) -> GameResult:
        m, pool = self.moment, self.game.pool
        costs, G = pool.arrays()
        cost_q = float(w @ costs[idxs])
        g_q = w @ G[idxs]
        viol = g_q - m.bound
        violated = None
        if self.mode == "faithful":  # Algorithm 2: certificate tolerance (r + 2 nu) / B
            unreachable = np.max(viol) > (m.cost_range + 2 * self.nu) / self.B
        else:                        # pool LP still needs slack at the largest penalty tried
            unreachable = slack > SLACK_TOL
        if status == "converged" and m.may_be_infeasible and unreachable:
            status = "infeasible"
            violated = m.block_of_row(int(np.argmax(viol)))
        hyps = [] if status == "infeasible" else [pool.hyps[i] for i in idxs]
        weights = np.zeros(0) if status == "infeasible" else np.asarray(w, dtype=float)
        exact, certificate = oracle_certificate(self.game.learner)
        return GameResult(status=status, hypotheses=hyps, weights=weights, lambda_=np.asarray(lam),
                          gap=float(gap), cost=cost_q, constraint_values=g_q, bound=m.bound.copy(),
                          n_iter=t, n_oracle_calls=self.game.n_calls, mode=self.mode,
                          B=float(self.B if B_used is None else B_used),
                          nu=max(self.nu, getattr(self, "stop_tol", self.nu)), lp_slack=float(slack),
                          violated_row=violated, history=history,
                          pool_costs=costs, pool_G=G, oracle_exact=exact, certificate=certificate)


class FaithfulEG(_EGPlayer):
    r"""Algorithms 1/2 as published: step :math:`\eta=\nu/(\kappa B)`, uniform averages, closed-form
    :math:`\mathrm{Best}_\lambda`, stop when :math:`\max(\bar\nu,\underline\nu)\le\nu`.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import (ExponentiatedGradient, LeastSquaresOracle,
    ...                                 StatisticalParity)
    >>> game = ExponentiatedGradient(StatisticalParity(), LeastSquaresOracle(LinearRegression()),
    ...                              mode="faithful", max_iter=100)
    >>> type(game.player()).__name__
    'FaithfulEG'
    """

    mode = "faithful"
    use_pool = False

    def start(self, game: Game[Moment]) -> None:
        super().start(game)
        self.eta = self.nu / (self.moment.eta_divisor * self.B)
        self.status, self.gap = "max_iter", np.inf

    def observe(self, t: int, index: int) -> bool:
        g_t, _, _, self.lam_hat, L_hat, upper = self._average(t, index, self.propose(t))
        _, L_resp = self.game.respond(self.lam_hat, use_pool=False)
        self.gap = max(upper, L_hat - L_resp)
        if t % 100 == 0 or t == 1:
            self.game.progress(t, self.max_iter, f"EG (faithful) gap={self.gap:.3g}")
        if self.gap <= self.nu:
            self.status = "converged"
            return True
        self.theta += self.eta * (g_t - self.moment.bound)
        return False

    def finish(self, t: int) -> GameResult:
        T = self.max_iter
        self.game.progress(T if self.status != "converged" else t, T, f"EG (faithful) gap={self.gap:.3g}")
        idxs, w = self._uniform_average()
        return self._result(idxs, w, self.lam_hat, self.gap, self.status, t, 0.0, [])


class PracticalEG(_EGPlayer):
    """EG steps plus, every round, the restricted best-mixture LP over the pool (practical mode).

    Parameters
    ----------
    B, nu, max_iter
        As in :class:`ExponentiatedGradient`.
    solver : str or SolverSpec
        LP back end of the best-mixture LP.
    eta0 : float, optional
        Initial step (default ``2 / B``), shrunk when the EG gap stalls (see the module docstring).
    min_iter : int
        Rounds played before the gap may stop the game.
    eg_gap : bool
        Also certify the EG average with one extra oracle call per round.
    step_rule : {"auto", "stall", "halve"}
        How the EG step shrinks (see :class:`ExponentiatedGradient`).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import (ExponentiatedGradient, LeastSquaresOracle,
    ...                                 StatisticalParity)
    >>> game = ExponentiatedGradient(StatisticalParity(), LeastSquaresOracle(LinearRegression()))
    >>> type(game.player()).__name__                   # mode="practical", the default
    'PracticalEG'
    """

    mode = "practical"
    use_pool = True

    def __init__(self, B: float, nu: float, max_iter: int, solver: str | SolverSpec | Mapping[str, Any] | None = None,
                 eta0: float | None = None, min_iter: int = 1, eg_gap: bool = False,
                 step_rule: str = "auto") -> None:
        super().__init__(B, nu, max_iter)
        self.solver, self.eta0, self.min_iter, self.eg_gap = solver, eta0, min_iter, eg_gap
        if step_rule not in ("auto", "stall", "halve"):
            raise ConfigError(f"step_rule={step_rule!r}; use 'auto', 'stall' or 'halve'.")
        self.step_rule = step_rule

    def start(self, game: Game[Moment]) -> None:
        from fairopt.formulations.cost_sensitive import BestMixtureLP
        super().start(game)
        self.master = BestMixtureLP(self.moment.bound, solver=self.solver)  # warm-started
        self.eta_min = self.nu / (self.moment.eta_divisor * self.B)
        self.eta = 2.0 / self.B if self.eta0 is None else float(self.eta0)
        #: (gap, idxs, weights, lam, slack, penalised value)
        self.best: tuple[float, np.ndarray, np.ndarray, np.ndarray, float, float] | None = None
        self.B_lp = self.B  # exact-penalty bound of the LP; raised while the pool LP needs slack
        self.history: list[dict[str, Any]] = []
        self.status = "max_iter"
        self.stop_tol = self.nu   # effective gap tolerance (see _gap_floor)
        # step-size schedule: shrink at geometrically spaced rounds when the best EG gap stalls
        self.next_check: float = ETA_CHECK_START
        self.gap_at_check, self.best_eg_gap = np.inf, np.inf
        self.prev_eg_gap = np.inf
        self.rule = self.step_rule if self.step_rule != "auto" else \
            ("stall" if issubclass(self.moment.problem, ExampleCosts) else "halve")

    def _gap_floor(self, cost: float, g: np.ndarray) -> float:
        """``nu``, or the LP's resolution of the gap when that is larger (scale-aware stop: a
        requested ``nu`` below it is unreachable and only burns oracle calls)."""
        size = abs(cost) + self.B_lp * (float(np.max(np.abs(g))) if np.size(g) else 0.0)
        return max(self.nu, GAP_REL_TOL * size)

    @staticmethod
    def _better(gap: float, value: float, best: tuple[float, np.ndarray, np.ndarray, np.ndarray, float, float] | None,
                nu: float) -> bool:
        r"""Smaller gap wins; among gaps equal up to ``nu``, the smaller penalised objective
        :math:`L(Q,\mathrm{Best}_\lambda(Q))` (later LPs see a larger pool, so they never lose)."""
        if best is None:
            return True
        tol = max(nu, 1e-12)
        return gap < best[0] - tol or (gap <= best[0] + tol and value <= best[5])

    def observe(self, t: int, index: int) -> bool:
        game, nu = self.game, self.nu
        g_t, cost_hat, g_hat, lam_hat, L_hat, eg_gap = self._average(t, index, self.propose(t))
        if self.eg_gap:
            _, L_resp = game.respond(lam_hat, use_pool=True)
            eg_gap = max(eg_gap, L_hat - L_resp)
            value = self._L_best(cost_hat, g_hat, self.B_lp)
            if self._better(eg_gap, value, self.best, nu):
                idxs, w = self._uniform_average()
                self.best = (eg_gap, idxs, w, lam_hat.copy(), 0.0, value)
        # restricted best-mixture LP over the pool, then price a new column at its duals
        costs, G = game.pool.arrays()
        q, lam_lp, slack = self.master.solve(costs, G, self.B_lp)
        cost_lp, g_lp = float(q @ costs), q @ G
        L_lp = game.lagrangian(cost_lp, g_lp, lam_lp)
        _, L_price = game.respond(lam_lp, use_pool=True)
        value = self._L_best(cost_lp, g_lp, self.B_lp)
        lp_gap = max(value - L_lp, L_lp - L_price, 0.0)
        self.last_lp = (q, lam_lp, slack, lp_gap, value)
        if self._better(lp_gap, value, self.best, nu):
            keep = np.flatnonzero(q > 1e-12)
            self.best = (lp_gap, keep, q[keep] / q[keep].sum(), lam_lp, slack, value)
        self.history.append({"iteration": t, "eg_gap": float(eg_gap), "lp_gap": float(lp_gap),
                             "eta": self.eta, "pool": len(game.pool), "oracle_calls": game.n_calls})
        assert self.best is not None  # _better accepts any candidate while there is no best
        game.progress(t, self.max_iter, f"EG gap={self.best[0]:.3g} pool={len(game.pool)}")
        self.stop_tol = max(self.stop_tol, self._gap_floor(cost_lp, g_lp))
        if self.best[0] <= self.stop_tol and t >= self.min_iter:
            if self.best[4] > SLACK_TOL and self.B_lp < self.B * MAX_B_GROWTH:
                # converged at this penalty but the mixture still violates: B may be below
                # the multipliers' norm, so raise it (exact penalty) and keep pricing
                self.B_lp *= 10.0
                self.best = None
            else:
                self.status = "converged"
                return True
        self._adapt_step(t, eg_gap)
        self.theta += self.eta * (g_t - self.moment.bound)
        return False

    def _adapt_step(self, t: int, eg_gap: float) -> None:
        """``"halve"``: halve the EG step whenever the EG gap grows. ``"stall"``: shrink it by
        ``ETA_SHRINK`` at rounds spaced by a factor ``ETA_CHECK_GROWTH`` (from round
        ``ETA_CHECK_START``) when the best EG gap has not fallen below ``ETA_SHRINK`` times its
        value at the previous check. Never below the published step.

        The EG gap of an average is not monotone, so reacting to every increase (halving the
        step each time) freezes the multipliers after a few rounds: with a heuristic learner the
        game then never meets the hypotheses that other multipliers would bring (on fairlearn's
        smoke data the DP error stayed 4-5 points above fairlearn's)."""
        if self.rule == "halve":
            if eg_gap > self.prev_eg_gap:
                self.eta = max(self.eta / 2.0, self.eta_min)
            self.prev_eg_gap = eg_gap
            return
        self.best_eg_gap = min(self.best_eg_gap, eg_gap)
        if t < self.next_check:
            return
        if self.best_eg_gap > ETA_SHRINK * self.gap_at_check:
            self.eta = max(self.eta * ETA_SHRINK, self.eta_min)
        self.gap_at_check = self.best_eg_gap
        self.next_check = max(t + 1, ETA_CHECK_GROWTH * t)

    def finish(self, t: int) -> GameResult:
        if self.best is None:  # the cap hit right after raising B: keep the last LP iterate
            q, lam_lp, slack, lp_gap, value = self.last_lp
            keep = np.flatnonzero(q > 1e-12)
            self.best = (lp_gap, keep, q[keep] / q[keep].sum(), lam_lp, slack, value)
        if self.status == "converged" and t < self.max_iter:
            self.game.progress(self.max_iter, self.max_iter, f"EG converged gap={self.best[0]:.3g}")
        gap, idxs, w, lam_best, slack, _ = self.best
        return self._result(idxs, w, lam_best, gap, self.status, t, slack, self.history, self.B_lp)
