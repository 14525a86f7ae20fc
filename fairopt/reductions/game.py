r"""The Lagrangian game loop and its players.

Reductions find a randomized hypothesis ``Q`` for
:math:`\min_Q\max_{\lambda\ge0} L(Q,\lambda)`, :math:`L(Q,\lambda)=\mathrm{cost}(Q)+\lambda^\top(g(Q)-b)`,
by letting two players take turns (Freund & Schapire 1996; Agarwal et al. 2018; Kearns et al. 2018).
This module holds what every such game shares, so that a new game is a new player, not a new loop:

:class:`Game`
    the loop. Each round the *multiplier player* proposes :math:`\lambda_t`, the *learner* answers
    with a best response :math:`h_t=\arg\min_h L(h,\lambda_t)`, the hypothesis enters the
    *pool*, and the multiplier player observes it (and may price more columns, solve a restricted
    LP over the pool, or add constraint rows) and says whether to stop.
:class:`Learner` (protocol)
    the learner oracle: ``prepare(moment, X)`` once, then ``best_response(lam)`` returning a
    hypothesis (an object with ``predict(X)``). The oracles of :mod:`fairopt.reductions.oracles`
    implement it; they solve the moment's learner problem (:mod:`fairopt.reductions.problems`).
:class:`HypothesisPool`
    the distinct hypotheses found so far with their statistics ``cost`` ``(K,)`` and ``G``
    ``(K, M)`` under the moment; :meth:`HypothesisPool.refresh` recomputes ``G`` after the moment
    gained rows.
:class:`MultiplierPlayer` (protocol)
    ``start(game)``, ``propose(t) -> lambda``, ``observe(t, index) -> stop``,
    ``finish(t) -> GameResult``; ``use_pool`` says whether the learner's answer may be replaced by
    a pool member with a smaller Lagrangian. The two exponentiated-gradient modes
    (:class:`~fairopt.reductions.exponentiated_gradient.FaithfulEG`,
    :class:`~fairopt.reductions.exponentiated_gradient.PracticalEG`) are such players.

An *auditor* that adds constraint rows (as in the learner-auditor game of balanced filtering) is
a multiplier player: in ``observe`` it finds violated rows, extends the moment (``bound`` and the
``stats`` it returns), calls ``game.pool.refresh()`` so every pool member is re-scored on the new
rows, and proposes multipliers of the new length in the next round. The loop itself never looks at
the number of rows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._docstrings import fill_doc, register
from fairopt._progress import Progress, no_progress
from fairopt.reductions._training_predictions import keep_training_predictions as keep_training_predictions
from fairopt.reductions._training_predictions import training_predictions as training_predictions

__all__ = ["Game", "GameMoment", "GameResult", "HypothesisPool", "Learner", "MultiplierPlayer", "RunningAverages",
           "keep_training_predictions", "training_predictions"]



# the setting of the examples below: a statistical-parity game over a finite class of two predictors
register("example_finite_game", """>>> import numpy as np
>>> from fairopt.reductions import FiniteClassOracle, StatisticalParity
>>> rng = np.random.default_rng(0)
>>> X, a = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
>>> y = (X[:, 0] > 0).astype(float)
>>> moment = StatisticalParity(eps=0.05, grid_size=10).fit(y, a)
>>> learner = FiniteClassOracle([np.clip(X[:, 0] + 0.5, 0, 1), np.full(200, 0.5)]).prepare(moment, X)""")
# ---- docstring pieces of the learner and multiplier-player protocols -----------------------
register("learner_prepare", """Parameters
----------
moment : Moment
    The fitted constraint moment whose learner problems this oracle answers.
X : array-like of shape (n_samples, n_features)
    Training features.

Returns
-------
self
    The prepared oracle.

Raises
------
ConfigError
    If the oracle cannot solve the moment's learner problem.""")
register("lam", """lam : ndarray of shape (n_rows,)
    Nonnegative multipliers of the moment's rows.""")
register("learner_best_response", """Returns
-------
hypothesis
    A fitted predictor minimising the Lagrangian ``L(h, lam)`` (exactly or heuristically).""")
register("player_start", """Parameters
----------
game : Game
    The game being played (moment, learner, pool).""")
register("player_propose", """Parameters
----------
t : int
    Round number, from 1.

Returns
-------
ndarray of shape (n_rows,)
    Nonnegative multipliers.""")
register("player_observe", """Parameters
----------
t : int
    Round number, from 1.
index : int
    Position of the response in the hypothesis pool.

Returns
-------
bool
    ``True`` when the stopping rule holds.""")
register("player_finish", """Parameters
----------
t : int
    Number of rounds played.

Returns
-------
GameResult
    The randomized predictor, multipliers, gap and status.""")


@runtime_checkable
class GameMoment(Protocol):
    """What the game loop reads of a fitted moment: ``bound``, ``stats`` and ``lagrangian``.

    The moments of :mod:`fairopt.reductions.moments` and the split moment of
    :mod:`fairopt.reductions.split_game` have this shape.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions import DemographicParity
    >>> moment = DemographicParity(eps=0.1).fit(np.array([0, 1, 1, 0]), ["a", "a", "b", "b"])
    >>> isinstance(moment, GameMoment)
    True
    """

    bound: np.ndarray

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values ``(cost, g)`` of one hypothesis' training predictions."""
        ...

    def lagrangian(self, cost: ArrayLike, g: ArrayLike, lam: ArrayLike) -> np.ndarray:
        """``cost + lam @ (g - bound)``, with ``cost``/``g`` possibly stacked over hypotheses."""
        ...


#: the moment type a game is played over
M = TypeVar("M", bound=GameMoment)


@runtime_checkable
class Learner(Protocol):
    """Best-response oracle of the learner (see the module docstring).

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from fairopt.reductions import LeastSquaresOracle
    >>> isinstance(LeastSquaresOracle(LinearRegression()), Learner)    # a runtime-checkable protocol
    True
    """

    @fill_doc
    def prepare(self, moment: Any, X: ArrayLike) -> Learner:  # each learner takes its own moment kind
        """Bind the oracle to a fitted moment and the training features.

        {learner_prepare}
        """
        ...

    @fill_doc
    def best_response(self, lam: NDArray[np.float64]) -> Any:
        """Best response of the learner to the multipliers ``lam``.

        Parameters
        ----------
        {lam}

        {learner_best_response}
        """
        ...


@runtime_checkable
class MultiplierPlayer(Protocol):
    """The player choosing :math:`\\lambda` (see the module docstring).

    Examples
    --------
    >>> from fairopt.reductions import PracticalEG
    >>> isinstance(PracticalEG(B=10.0, nu=1e-9, max_iter=50), MultiplierPlayer)
    True
    """

    use_pool: bool

    @fill_doc
    def start(self, game: Game[Any]) -> None:
        """Initialise the player for a new game.

        {player_start}
        """
        ...

    @fill_doc
    def propose(self, t: int) -> np.ndarray:
        """Multipliers for round ``t``.

        {player_propose}
        """
        ...

    @fill_doc
    def observe(self, t: int, index: int) -> bool:
        """Take the learner's response of round ``t`` and decide whether to stop.

        {player_observe}
        """
        ...

    @fill_doc
    def finish(self, t: int) -> GameResult:
        """Assemble the result after the last round.

        {player_finish}
        """
        ...


@dataclass
class GameResult:
    """Outcome of a game.

    ``hypotheses``/``weights`` describe the randomized predictor ``Q`` (empty when infeasible);
    ``lambda_`` the multipliers of the ``b``-rows; ``gap`` the duality-gap certificate (an
    estimate with inexact oracles); ``cost`` and ``constraint_values`` are ``cost(Q)`` and ``g(Q)``.
    ``status`` is ``"converged"``, ``"max_iter"`` or ``"infeasible"``.

    ``oracle_exact`` says whether the learner is an exact best-response oracle (False unless the
    player that built the result knows it is). With a heuristic learner (any fitted estimator:
    it minimises a surrogate, not the weighted 0-1 or cost-table loss) ``gap`` certifies
    optimality only over the hypotheses the learner returned, including its answer at the final
    multipliers; ``certificate`` says so in words.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions import ExponentiatedGradient, FiniteClassOracle, StatisticalParity
    >>> rng = np.random.default_rng(0)
    >>> X, group = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)
    >>> y = (X[:, 0] > 0).astype(float)
    >>> predictions = [np.clip(X[:, 0] + 0.5, 0, 1), np.full(200, 0.5)]
    >>> result = ExponentiatedGradient(StatisticalParity(eps=0.05, grid_size=10),
    ...                                FiniteClassOracle(predictions), B=50.0).run(X, y, group)
    >>> type(result).__name__, result.converged, bool(abs(result.weights.sum() - 1) < 1e-9)
    ('GameResult', True, True)
    """

    status: str
    hypotheses: list[Any]
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
    oracle_exact: bool = False
    certificate: str = ""

    @property
    def max_violation(self) -> float:
        """``max(0, max_j g_j(Q) - b_j)``."""
        if self.constraint_values.size == 0:
            return 0.0
        return float(max(0.0, np.max(self.constraint_values - self.bound)))

    @property
    def converged(self) -> bool:
        """Whether the game stopped on its gap criterion (``status == "converged"``)."""
        return self.status == "converged"

    @property
    def heuristic_oracle(self) -> bool:
        """True when ``gap`` is certified only against a heuristic learner's responses."""
        return not self.oracle_exact


class RunningAverages:
    """Running means of the played costs, constraint values and multipliers (Q-hat, lambda-hat).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.game import RunningAverages
    >>> avg = RunningAverages(2)
    >>> for t, cost in enumerate([1.0, 2.0, 6.0], start=1):
    ...     mean_cost, mean_g, mean_lam = avg.update(cost, np.array([t, 0.0]), np.zeros(2), t)
    >>> mean_cost, mean_g.tolist()        # the means of rounds 1..3
    (3.0, [2.0, 0.0])
    """

    def __init__(self, n_rows: int) -> None:
        self.cost, self.g, self.lam = 0.0, np.zeros(n_rows), np.zeros(n_rows)

    def update(self, cost: float, g: np.ndarray, lam: np.ndarray,
               t: int) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """Fold in round ``t``'s cost, constraint values and multipliers; return the running means."""
        self.cost += (cost - self.cost) / t
        self.g += (g - self.g) / t
        self.lam += (lam - self.lam) / t
        return self.cost, self.g, self.lam


@fill_doc
class HypothesisPool(Generic[M]):
    """Distinct hypotheses with their statistics ``cost`` (K,) and ``G`` (K, M) under ``moment``.

    Hypotheses are deduplicated by their statistics (rounded to 1e-12), and members of a finite
    class by their ``index``.

    Examples
    --------
    {example_finite_game}
    >>> pool = HypothesisPool(moment, X)
    >>> h = learner.best_response(np.zeros(moment.n_rows))
    >>> pool.add(h), pool.add(h)                      # the same hypothesis is stored once
    (0, 0)
    """

    def __init__(self, moment: M, X: ArrayLike) -> None:
        self.moment, self.X = moment, X
        self.hyps: list[Any] = []
        self.costs: list[float] = []
        self.G: list[np.ndarray] = []
        self._keys: dict[bytes | tuple[str, Any], int] = {}
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, h: Any) -> int:
        """Index of ``h`` in the pool (appended when new)."""
        index = getattr(h, "index", None)          # finite classes: members are known by index
        if index is not None and ("member", index) in self._keys:
            return self._keys[("member", index)]
        cost, g = self.moment.stats(training_predictions(h, self.X, release=True))
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

    def refresh(self) -> None:
        """Recompute every member's statistics (after the moment changed, e.g. gained rows)."""
        stats = [self.moment.stats(h.predict(self.X)) for h in self.hyps]
        self.costs = [c for c, _ in stats]
        self.G = [g for _, g in stats]
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(costs, G)`` as arrays of shape ``(K,)`` and ``(K, M)``."""
        if self._arrays is None:
            self._arrays = (np.asarray(self.costs), np.vstack(self.G))
        return self._arrays

    def __len__(self) -> int:
        return len(self.hyps)


@fill_doc
class Game(Generic[M]):
    """Loop of a two-player Lagrangian game over a moment, a learner and a hypothesis pool.

    Parameters
    ----------
    moment : fairopt.reductions.moments.Moment
        A *fitted* moment: ``stats(pred) -> (cost, g)``, ``bound``, ``lagrangian``.
    learner : Learner
        A prepared best-response oracle.
    X : array-like
        Training features (the pool scores hypotheses on them).
    progress : callable, optional
        ``progress(done, total, description)``; players report through the game's ``progress``.

    Examples
    --------
    {example_finite_game}
    >>> from fairopt.reductions import PracticalEG
    >>> Game(moment, learner, X).play(PracticalEG(B=50.0, nu=1e-9, max_iter=100), 100).status
    'converged'
    """

    def __init__(self, moment: M, learner: Learner, X: ArrayLike, progress: Progress | None = None) -> None:
        self.moment = moment
        self.learner = learner
        self.pool = HypothesisPool(moment, X)
        self.progress = progress or no_progress
        self.n_calls = 0

    # ---- services for the players -----------------------------------------------------------
    def lagrangian(self, cost: float | NDArray[np.float64], g: NDArray[np.float64],
                   lam: NDArray[np.float64]) -> float:
        """Lagrangian ``cost + lam @ (g - b)`` of the moment.

        Parameters
        ----------
        cost : float or ndarray
            Cost of a hypothesis (or of several, stacked).
        g : ndarray
            Constraint values of the same hypotheses.
        lam : ndarray of shape (n_rows,)
            Multipliers.

        Returns
        -------
        float
            The Lagrangian value.
        """
        return float(self.moment.lagrangian(cost, g, lam))

    def respond(self, lam: NDArray[np.float64], use_pool: bool = False) -> tuple[int, float]:
        """Pool index of the learner's best response to ``lam`` and its Lagrangian value.

        With ``use_pool`` a pool member with a smaller Lagrangian replaces the learner's answer
        (inexact oracles).
        """
        self.n_calls += 1
        idx = self.pool.add(self.learner.best_response(lam))
        if not use_pool:
            return idx, self.lagrangian(self.pool.costs[idx], self.pool.G[idx], lam)
        costs, G = self.pool.arrays()
        values = self.moment.lagrangian(costs, G, lam)
        best = int(np.argmin(values))
        if values[best] < values[idx]:
            idx = best
        return idx, float(values[idx])

    # ---- the loop ---------------------------------------------------------------------------
    def play(self, player: MultiplierPlayer, max_iter: int) -> GameResult:
        """Play up to ``max_iter`` rounds; the player decides when to stop and builds the result."""
        player.start(self)
        t = 0
        for t in range(1, int(max_iter) + 1):
            lam = player.propose(t)
            idx, _ = self.respond(lam, use_pool=player.use_pool)
            if player.observe(t, idx):
                break
        return player.finish(t)
