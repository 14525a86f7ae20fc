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
    an iteration cap, :math:`\eta_0=2/B` shrunk as the EG gap behaves (``step_rule``: halved
    whenever it grows, or shrunk by 0.8 at spaced rounds when its best value stalls; never below
    the published value), and after every EG step the restricted best-mixture LP over all
    hypotheses found so far (built as a :class:`~fairopt.modeling.Program`); its row duals are the
    multipliers :math:`\lambda_{\rm LP}`, and :math:`\mathrm{Best}_h(\lambda_{\rm LP})` prices a new
    column. The iterate with the smallest certified gap over the run is returned.

The gap is a duality-gap certificate only for an exact best-response oracle. A fitted estimator
minimises a surrogate (squared or logistic loss), not the weighted 0-1 loss, so its gap bounds
suboptimality over the hypotheses it returned only; the result says which
(``GameResult.oracle_exact`` and ``GameResult.certificate``).

Bounded group loss may be infeasible. Faithful mode applies Algorithm 2's test: at convergence,
a row still above its bound by more than :math:`(r+2\nu)/B` (``r`` = moment cost range) means no
solution (Algorithm 2 returns null). Practical mode treats ``B`` as an exact penalty: when the
game converges while the best mixture LP still needs slack, ``B`` is raised tenfold (up to
``1e4 B``) and the game continues; slack left at the largest ``B`` means no mixture of the
oracle's hypotheses meets the bound. Either way the result has ``status == "infeasible"``,
no hypotheses, and ``violated_row`` names the group constraint.

The two modes are multiplier players (:class:`FaithfulEG`, :class:`PracticalEG`) of the generic
loop :class:`fairopt.reductions.game.Game`; :class:`ExponentiatedGradient` fits the moment,
prepares the oracle and lets the chosen player play.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from fairopt._progress import Progress
from fairopt._progress import no_progress as no_progress  # the shared helper, named here for callers
from fairopt.errors import ConfigError
from fairopt.reductions._eg_players import GAP_REL_TOL as GAP_REL_TOL
from fairopt.reductions._eg_players import MAX_B_GROWTH as MAX_B_GROWTH
from fairopt.reductions._eg_players import SLACK_TOL as SLACK_TOL
from fairopt.reductions._eg_players import FaithfulEG as FaithfulEG
from fairopt.reductions._eg_players import PracticalEG as PracticalEG
from fairopt.reductions._eg_players import best_lambda as best_lambda
from fairopt.reductions._eg_players import lambda_from_theta as lambda_from_theta
from fairopt.reductions._eg_players import oracle_certificate as oracle_certificate
from fairopt.reductions.game import Game, GameResult

if TYPE_CHECKING:
    from collections.abc import Mapping

    from fairopt.modeling import SolverSpec
    from fairopt.reductions.game import Learner
    from fairopt.reductions.moments import Moment
    from fairopt.validation import Groups

__all__ = ["ExponentiatedGradient", "FaithfulEG", "GameResult", "PracticalEG", "best_lambda",
           "lambda_from_theta", "oracle_certificate"]



class ExponentiatedGradient:
    """Exponentiated-gradient game with a pluggable constraint moment and best-response oracle.

    Parameters
    ----------
    moment : fairopt.reductions.moments.Moment
        Constraint moment (not yet fitted; :meth:`run` fits it on the training labels).
    oracle : fairopt.reductions.oracles.Oracle
        Best-response oracle that solves the moment's learner problem (``moment.problem``).
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
    solver : str or SolverSpec, optional
        LP back end of the best-mixture program (any ``fairopt.modeling`` LP solver; a
        ``SolverSpec`` carries its time limit and options to every solve).
    eta0 : float, optional
        Practical mode: initial EG step (default ``2 / B``).
    min_iter : int, default=1
        Practical mode: iterations played before the gap test may stop the game. With heuristic
        oracles the gap is an estimate that can reach 0 early; more EG steps add diverse columns.
    progress : callable, optional
        ``progress(done, total, description)`` after each iteration.
    step_rule : {"auto", "stall", "halve"}, default="auto"
        Practical mode: how the EG step shrinks. ``"stall"`` shrinks it by 0.8 at rounds 5, 8,
        13, ... when the best EG gap has not fallen by 20% since the previous check;
        ``"halve"`` halves it whenever the EG gap grows. ``"auto"`` is ``"stall"`` for
        classification moments, whose 0/1 learners answer the same hypothesis over wide ranges
        of multipliers, so that halving froze the multipliers before new hypotheses appeared
        (on fairlearn's smoke data the DP error stayed 4-5 points above fairlearn's), and
        ``"halve"`` for the regression moments, whose benchmarks were tuned with it.

    Examples
    --------
    Statistical parity over a finite class of three fixed predictors:

    >>> import numpy as np
    >>> from fairopt.reductions import FiniteClassOracle, StatisticalParity
    >>> rng = np.random.default_rng(0)
    >>> X, group = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = (X[:, 0] > 0).astype(float)
    >>> predictions = [np.clip(X[:, 0] + 0.5, 0, 1), np.full(200, 0.5), (X[:, 0] > 0) * 1.0]
    >>> game = ExponentiatedGradient(StatisticalParity(eps=0.05, grid_size=10),
    ...                              FiniteClassOracle(predictions), B=50.0, max_iter=100)
    >>> result = game.run(X, y, group)
    >>> result.status, bool(result.max_violation < 1e-8)
    ('converged', True)
    """

    def __init__(self, moment: Moment, oracle: Learner, B: float = 10.0, nu: float | None = None,
                 max_iter: int | None = None, mode: str = "practical", eg_gap: bool = False,
                 solver: str | SolverSpec | Mapping[str, Any] | None = None, eta0: float | None = None,
                 min_iter: int = 1,
                 progress: Progress | None = None, step_rule: str = "auto") -> None:
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
        self.step_rule = step_rule

    # ------------------------------------------------------------------------------------------
    def iteration_bound(self) -> int:
        """Theorem 4 / Algorithm 2 bound ``2 kappa B^2 ln(M + 1) / nu^2`` (``M`` rows)."""
        nu = self._nu()
        return math.ceil(2 * self.moment.eta_divisor * self.B ** 2
                         * math.log(self.moment.n_rows + 1) / nu ** 2)

    def _nu(self) -> float:
        if self.nu is not None:
            return float(self.nu)
        return 1e-9 if self.mode == "practical" else 0.01

    def _certify_infeasible(self, game: Game[Moment], res: GameResult, rounds: int = 50) -> GameResult:
        r"""Decide a game that ended with a violated bound: is any mixture feasible at all?

        Column generation on :math:`\min_{q}\max_a (g_a(q) - b_a)` (the min-max group-loss LP over
        the pool): its group duals :math:`\mu` price a new hypothesis, the learner's best response
        to :math:`\lambda = 10^4 B\mu`. A positive value that no new column lowers certifies
        infeasibility (for an exact oracle; an estimate otherwise) whatever ``max_iter`` and ``nu``
        were, and the result becomes ``status="infeasible"`` naming the worst row. A mixture of the
        pool that meets the bounds leaves the result as it was (not converged).
        """
        from fairopt.formulations.cost_sensitive import min_max_group_loss
        m = self.moment
        for _ in range(rounds + 1):
            costs, G = game.pool.arrays()
            mm = min_max_group_loss(G, self.solver, offset=m.bound)
            if mm.value <= SLACK_TOL:
                return res
            before = len(game.pool)
            idx, _ = game.respond(MAX_B_GROWTH * self.B * mm.mu, use_pool=False)
            if len(game.pool) == before or (game.pool.G[idx] - m.bound) @ mm.mu >= mm.value - SLACK_TOL:
                break                      # no column lowers the worst-group excess
        costs, G = game.pool.arrays()
        costs, G = costs[:mm.q.size], G[:mm.q.size]     # the pool the last LP saw
        viol = mm.q @ G - m.bound
        return GameResult(status="infeasible", hypotheses=[], weights=np.zeros(0), lambda_=res.lambda_,
                          gap=res.gap, cost=float(mm.q @ costs), constraint_values=mm.q @ G,
                          bound=m.bound.copy(), n_iter=res.n_iter, n_oracle_calls=game.n_calls,
                          mode=res.mode, B=res.B, nu=res.nu, lp_slack=max(res.lp_slack, mm.value),
                          violated_row=m.block_of_row(int(np.argmax(viol))), history=res.history,
                          pool_costs=costs, pool_G=G, oracle_exact=res.oracle_exact,
                          certificate=res.certificate)

    def player(self) -> FaithfulEG | PracticalEG:
        """The multiplier player of the chosen mode (:class:`FaithfulEG` or :class:`PracticalEG`)."""
        if self.mode == "faithful":
            return FaithfulEG(self.B, self._nu(), self.max_iter or self.iteration_bound())
        return PracticalEG(self.B, self._nu(), self.max_iter or 50, solver=self.solver, eta0=self.eta0,
                           min_iter=self.min_iter, eg_gap=self.eg_gap, step_rule=self.step_rule)

    def run(self, X: ArrayLike, y: ArrayLike, sensitive_features: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> GameResult:
        """Fit the moment on ``(y, sensitive_features, sample_weight)``, prepare the oracle on ``X``
        and play. ``sensitive_features`` may be raw labels or a :class:`~fairopt.validation.Groups`."""
        if self.mode not in ("practical", "faithful"):
            raise ConfigError(f"mode={self.mode!r}; use 'practical' or 'faithful'.")
        if not (np.isfinite(self.B) and self.B > 0):
            raise ConfigError(f"B must be a positive number, got {self.B!r}.")
        if self._nu() <= 0:
            raise ConfigError(f"nu must be positive, got {self.nu!r}.")
        t0 = time.perf_counter()
        self.moment.fit(y, sensitive_features, sample_weight=sample_weight)
        self.oracle.prepare(self.moment, X)
        player = self.player()
        game = Game(self.moment, self.oracle, X, self.progress)
        res = game.play(player, player.max_iter)
        if self.moment.may_be_infeasible and res.status != "infeasible" and res.max_violation > SLACK_TOL:
            res = self._certify_infeasible(game, res)
        res.seconds = time.perf_counter() - t0
        self.result_ = res
        return res
