r"""The (α, β)-proxy tree of balanced filtering (Deng et al., Algorithm 4), as run in the paper.

Each leaf V carries weights :math:`w_V(x)`; splitting V with a randomized split :math:`\tilde h`
gives :math:`w_{V1} = w_V \tilde h` and :math:`w_{V0} = w_V(1 - \tilde h)` (the h = 1 side is V1;
the paper's Def. 10 swaps them). Because the parent row is a convex combination of its
children's rows, a split never increases the distance from U to the hull C(A).

The loop: solve P1 (P1′ for ``relaxed=True``) for the nearest point U′ and distance D; stop when
``D < stop_distance`` (0.1 in the paper) or U ∈ C(A); otherwise play the split game
(:func:`fairopt.reductions.split_game.learn_split`) at a leaf of height < ``max_height`` (20) and
accept the split only if the new distance is at most ``(1 − γ)·D`` (γ = 0.1) and both children are
α-disclosive in-sample (to ``DISCLOSURE_TOL``); stop when no leaf passes. For ``relaxed`` the
"distance" is the imbalance the P1′ weights deliver, ``‖p/1ᵀp − U‖`` with ``p = Aᵀq`` from P1′,
and U′ = p/1ᵀp: the paper does not say which quantity drives the relaxed tree, and growing by
the cone residual (what P1′ minimises) stalled at the root on Bank and Adult.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import product
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._utils import as_generator
from fairopt.errors import DataValidationError
from fairopt.formulations.proxy_weights import conditional_matrix, disclosivity, solve_p1
from fairopt.reductions.split_game import DisclosureAuditor, PairedRegressionLearner, learn_split

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fairopt._progress import Progress
    from fairopt.modeling import SolverSpec
    from fairopt.reductions.game import GameResult
    from fairopt.reductions.split_game import EstimatorLearner

    #: an accepted split: node, game, child weights w0/w1, A, r, p, distance, child disclosure, margin
    _Split = tuple[int, GameResult, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                   NDArray[np.float64], NDArray[np.float64], float, float, float]

#: disclosure slack accepted on top of α (the restricted LP meets its rows to solver tolerance)
DISCLOSURE_TOL = 1e-6


@dataclass
class SplitRecord:
    """One accepted split: node id, distance before/after, child disclosivities, game stats."""

    node: int
    depth: int
    distance_before: float
    distance_after: float
    disclosivity: float
    margin: float
    n_hypotheses: int
    oracle_calls: int


@dataclass
class ProxyTreeState:
    """Internal nodes (id → (hypotheses, mixture weights, child0, child1)) and leaf ids."""

    splits: dict[int, tuple[list[Any], np.ndarray, int, int]] = field(default_factory=dict)
    leaves: list[int] = field(default_factory=lambda: [0])
    depth: dict[int, int] = field(default_factory=lambda: {0: 0})


class ProxyTree:
    """Grow an α-disclosive proxy tree whose leaf rows surround the uniform distribution.

    Parameters
    ----------
    alpha : float in [0, 1]
        Disclosure budget: every leaf's posterior ``Pr[z = k | leaf]`` stays within α of the
        prior ``r_k`` in-sample (Definition 5).
    relaxed : bool
        Use P1′ (no ``Σq = 1``) for the distance, as the paper's "Relaxed (α, β)" proxy.
    gamma : float
        Required shrink factor: a split is accepted only if the distance falls to ≤ (1 − γ)·D.
    max_height : int
        Largest leaf depth.
    stop_distance : float
        Stop once the distance to the hull is below this (the paper's β-target, 0.1).
    epsilon : float
        The game is played at ``α − ε`` (Algorithm 4); with the exact restricted LP 0 suffices.
    margins : tuple of float
        φ values tried in turn at each leaf in the corrected coefficient ``Q = s̄_V − Dφ``.
        φ = 0 maximises mass-weighted progress ``H·⟨R(V1) − R(V), U − U′⟩`` (large children);
        larger φ only rewards samples whose child moves more than Dφ toward U (small, purer
        children). The paper's experiments accept any split reaching the (1 − γ) decrease, so
        φ is a search knob here, not Lemma 3's f(γ).
    alpha_fractions : tuple of float
        The game is also tried with child V1's budget at these fractions of α when the full
        budget's split fails the progress test (the greedy game maximises mass-weighted progress, and a
        tighter budget can yield a smaller, more useful child). Every accepted split is
        α-disclosive either way.
    learner : object, optional
        Cost-sensitive oracle (default: paired regression classifier).
    max_iter, n_ascent : int
        Round cap of each split game and its number of gradient-ascent rounds.
    min_leaf_mass : float
        Leaves with a smaller share of the sample are not split further.
    solver : str
        QP back end of P1 (any of ``highs``, ``osqp``, ``cvxpy``, ``pyomo``, ``native``).
    lp_solver : str
        LP back end of the split game's restricted LP (a simplex solver: its duals price columns;
        OSQP did not converge on these degenerate LPs).
    """

    def __init__(self, alpha: float, *, relaxed: bool = False, gamma: float = 0.1,
                 max_height: int = 20, stop_distance: float = 0.1, epsilon: float = 0.0,
                 margins: Sequence[float] = (0.0, 0.3, 0.6), alpha_fractions: Sequence[float] = (1.0, 0.5),
                 learner: PairedRegressionLearner | EstimatorLearner | None = None, max_iter: int = 40,
                 n_ascent: int = 15,
                 min_leaf_mass: float = 0.005, solver: str | SolverSpec | None = None,
                 lp_solver: str | SolverSpec | None = None) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise DataValidationError(f"alpha must lie in [0, 1], got {alpha}.")
        if not 0.0 < gamma < 1.0:
            raise DataValidationError(f"gamma must lie in (0, 1), got {gamma}.")
        self.alpha, self.relaxed, self.gamma = float(alpha), bool(relaxed), float(gamma)
        self.max_height, self.stop_distance, self.epsilon = int(max_height), float(stop_distance), float(epsilon)
        self.margins = tuple(float(m) for m in margins)
        self.alpha_fractions = tuple(float(f) for f in alpha_fractions)
        self.learner, self.max_iter, self.n_ascent = learner, int(max_iter), int(n_ascent)
        self.min_leaf_mass, self.solver, self.lp_solver = float(min_leaf_mass), solver, lp_solver

    # ---- P1 on the current leaves ------------------------------------------------------------
    def _hull(self, leaf_weights: NDArray[np.float64], groups: NDArray[np.int_],
              K: int) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float]:
        A, r_hat, _ = conditional_matrix(leaf_weights, groups, K)
        live = r_hat > 0
        q, _ = solve_p1(A[live], relaxed=self.relaxed, solver=self.solver)
        p = A[live].T @ q
        if self.relaxed:   # the kept sample follows p/1ᵀp: grow by the imbalance P1′ delivers
            p = p / p.sum()
        return A, r_hat, p, float(np.linalg.norm(p - 1.0 / K))

    def fit(self, X: ArrayLike, groups: ArrayLike, n_groups: int | None = None,
            progress: Progress | None = None) -> ProxyTree:
        """Grow the tree on numeric features ``X`` (n, d) and integer group codes.

        BLAS runs on one thread: the game's thin matrix–vector products slowed ≈8× with two
        threads on the loaded 2-core machine.
        """
        from threadpoolctl import threadpool_limits
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, groups, n_groups, progress)

    def _fit(self, X: ArrayLike, groups: ArrayLike, n_groups: int | None, progress: Progress | None) -> ProxyTree:
        t0 = time.perf_counter()
        X = np.ascontiguousarray(X, dtype=float)   # row-major: fast X @ β in every oracle call
        groups = np.asarray(groups)
        K = int(groups.max()) + 1 if n_groups is None else int(n_groups)
        n = X.shape[0]
        prior = np.bincount(groups, minlength=K) / n
        learner = PairedRegressionLearner() if self.learner is None else self.learner
        state = ProxyTreeState()
        weights = {0: np.ones(n)}
        _, _, p, dist = self._hull(np.column_stack([weights[0]]), groups, K)
        self.history_ = [dist]
        self.records_: list[SplitRecord] = []
        failed: set[int] = set()
        n_games, next_id = 0, 1
        target = self.alpha - self.epsilon
        while dist >= self.stop_distance and dist > 1e-9:
            candidates = [v for v in state.leaves if v not in failed and state.depth[v] < self.max_height
                          and weights[v].sum() / n >= self.min_leaf_mass]
            candidates.sort(key=lambda v: -weights[v].sum())
            accepted = None
            for v in candidates:
                for fraction, margin in product(self.alpha_fractions, self.margins):
                    n_games += 1
                    if progress is not None:
                        progress(len(self.records_), -1, f"alpha={self.alpha:.2f} distance={dist:.3f}")
                    accepted = self._try_split(X, groups, K, prior, weights, state, v, p, dist,
                                               target, fraction * target, margin, learner)
                    if accepted is not None:
                        break
                if accepted is not None:
                    break
                failed.add(v)
            if accepted is None:
                break
            v, game, w0, w1, _, _, p, d2, child_disc, margin = accepted
            c0, c1 = next_id, next_id + 1
            next_id += 2
            state.splits[v] = (game.hypotheses, np.asarray(game.weights), c0, c1)
            state.leaves = [u for u in state.leaves if u != v] + [c0, c1]
            state.depth[c0] = state.depth[c1] = state.depth[v] + 1
            weights[c0], weights[c1] = w0, w1
            del weights[v]
            self.records_.append(SplitRecord(v, state.depth[v], dist, d2, child_disc, margin,
                                             len(game.hypotheses), game.n_oracle_calls))
            dist = d2
            self.history_.append(dist)
            failed.clear()
        self.state_ = state
        self.n_groups_, self.prior_ = K, prior
        self.leaf_weights_ = np.column_stack([weights[u] for u in state.leaves])
        self.conditional_matrix_, self.cell_mass_, _ = conditional_matrix(self.leaf_weights_, groups, K)
        self.distance_, self.n_games_ = dist, n_games
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _try_split(self, X: NDArray[np.float64], groups: NDArray[np.int_], K: int, prior: NDArray[np.float64],
                   weights: dict[int, NDArray[np.float64]], state: ProxyTreeState, v: int, p: NDArray[np.float64],
                   dist: float, target: float, target_one: float, margin: float,
                   learner: PairedRegressionLearner | EstimatorLearner) -> _Split | None:
        """Play the split game at leaf ``v``; return the accepted split or None."""
        game = learn_split(X, weights[v], groups, prior, p, target, margin=margin, alpha_one=target_one,
                           learner=learner,
                           auditor=DisclosureAuditor(n_ascent=self.n_ascent, max_iter=self.max_iter,
                                                     solver=self.lp_solver))
        h = sum(wt * hyp.predict(X) for hyp, wt in zip(game.hypotheses, game.weights, strict=False))
        w1 = weights[v] * h
        w0 = weights[v] - w1
        n = X.shape[0]
        if w1.sum() <= 1e-12 * n or w0.sum() <= 1e-12 * n:
            return None
        others = [weights[u] for u in state.leaves if u != v]
        A2, r2, p2, d2 = self._hull(np.column_stack([*others, w0, w1]), groups, K)
        child_disc = disclosivity(A2[-2:], r2[-2:], prior)
        if d2 <= (1.0 - self.gamma) * dist and child_disc <= self.alpha + DISCLOSURE_TOL:
            return (v, game, w0, w1, A2, r2, p2, d2, child_disc, margin)
        return None

    # ---- applying the tree ------------------------------------------------------------------
    def membership(self, X: ArrayLike) -> NDArray[np.float64]:
        """Leaf probabilities (n, ℓ) of each row under the randomized splits (expectation)."""
        X = np.asarray(X, dtype=float)
        w = {0: np.ones(X.shape[0])}
        for v in sorted(self.state_.splits):   # parents have smaller ids than children
            hyps, pi, c0, c1 = self.state_.splits[v]
            h = sum(wt * hyp.predict(X) for hyp, wt in zip(hyps, pi, strict=False))
            w[c1] = w[v] * h
            w[c0] = w[v] - w[c1]
        return np.column_stack([w[u] for u in self.state_.leaves])

    def route(self, X: ArrayLike, random_state: int | np.random.Generator | None = None) -> NDArray[np.int_]:
        """Draw each row's leaf index (one hypothesis drawn per row at every node)."""
        X = np.asarray(X, dtype=float)
        rng = as_generator(random_state)
        node = np.zeros(X.shape[0], dtype=int)
        for v in sorted(self.state_.splits):
            hyps, pi, c0, c1 = self.state_.splits[v]
            at = np.flatnonzero(node == v)
            if at.size == 0:
                continue
            pick = rng.choice(len(hyps), size=at.size, p=pi)
            preds = np.column_stack([hyp.predict(X[at]) for hyp in hyps])
            bit = preds[np.arange(at.size), pick] > 0.5
            node[at] = np.where(bit, c1, c0)
        lookup = np.full(max(self.state_.depth) + 1, -1)
        lookup[self.state_.leaves] = np.arange(len(self.state_.leaves))
        return lookup[node]
