r"""The learner–auditor game that learns one split of the balanced-filtering proxy tree.

At node V with sample weights :math:`w_j = w_V(x_j)`, groups :math:`z_j`, global prior
:math:`r`, nearest hull point :math:`U'` and distance :math:`D = \|U - U'\|` (Deng et al., §4.2 and
A.4), a randomized split :math:`\tilde h` solves

.. math::

    \min_{\tilde h} \sum_j w_j c_j \tilde h_j \quad\text{s.t.}\quad
    g^{1\pm}_k = \sum_j w_j \tilde h_j(\pm\delta_{jk} - \alpha) \le 0,\;
    g^{0\pm}_k = \sum_j w_j (1-\tilde h_j)(\pm\delta_{jk} - \alpha) \le 0,

with :math:`\delta_{jk} = 1[z_j = k] - r_k`. The 4K rows are the disclosure constraints
:math:`|R(V1)_k - r_k| \le \alpha`, :math:`|R(V0)_k - r_k| \le \alpha` cross-multiplied by the
children's masses, which is exact (an empty child gives 0 ≤ 0). The per-sample coefficient is the
corrected

.. math::  c_j = s_j - Q, \qquad Q = \bar s_V - D\varphi, \qquad s_j = U'_{z_j} - U_{z_j},

so that :math:`\sum_j w_j h_j c_j = H\,(D\varphi - \langle R(V1) - R(V), U - U'\rangle)` with
:math:`H = \sum_j w_j h_j`: a negative value is Lemma 3's condition (1) with margin φ. (The paper
prints :math:`Q = D f(\gamma) + \bar s_V`, which admits splits moving *away* from U.) Objective and
rows are divided by :math:`W_V = \sum_j w_j` (probability units).

Players of :class:`fairopt.reductions.game.Game`:

* :class:`SplitMoment` — the moment: ``stats(h) -> (cost, g)`` and the learner's costs.
* :class:`PairedRegressionLearner` — the cost-sensitive oracle of Def. 14: least squares of
  :math:`C^1 - C^0` on the features, predict 1 where the fit is negative (one regression equals
  the paired two by linearity); :class:`EstimatorLearner` wraps any scikit-learn classifier.
* :class:`DisclosureAuditor` — projected gradient ascent :math:`\lambda \leftarrow
  \Pi(\lambda + \sigma_t g(h_t))` onto :math:`\{\lambda \ge 0, \|\lambda\| \le \lambda_{\max}\}`
  for ``n_ascent`` rounds, then column generation on the restricted LP over the pool (plus
  :math:`h \equiv 0`), whose optimum meets disclosure exactly.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from fairopt._docstrings import fill_doc, register
from fairopt.errors import DataValidationError
from fairopt.modeling import Program, SolverSpec
from fairopt.reductions.game import Game, GameResult

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

__all__ = ["DisclosureAuditor", "EstimatorLearner", "LinearSplit", "PairedRegressionLearner",
           "SplitMoment", "learn_split", "split_coefficients"]



#: the setting of the examples below: one node, a feature that discloses the group
register("example_split_node", """>>> import numpy as np
>>> from fairopt.reductions.split_game import (EstimatorLearner, PairedRegressionLearner, SplitMoment,
...                                            learn_split, split_coefficients)
>>> rng = np.random.default_rng(0)
>>> z = rng.integers(0, 2, 200)
>>> X, w = (z + rng.normal(size=200))[:, None], np.full(200, 1 / 200)   # X discloses the group""")

def split_coefficients(weights: ArrayLike, groups: NDArray[np.intp], hull_point: Sequence[float] | NDArray[np.float64],
                       margin: float = 0.0) -> NDArray[np.float64]:
    r"""Corrected Lemma-4 coefficients :math:`c_j = s_j - \bar s_V + D\varphi`.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.split_game import split_coefficients
    >>> w = np.array([1.0, 1.0, 2.0, 2.0])
    >>> c = split_coefficients(w, np.array([0, 0, 1, 1]), [0.7, 0.3], margin=0.1)
    >>> round(float(w @ c / w.sum()), 4)   # weighted mean D * margin, D = |hull_point - 1/K|
    0.0283
    """
    w = np.asarray(weights, dtype=float)
    K = len(hull_point)
    s = np.asarray(hull_point)[groups] - 1.0 / K
    D = float(np.linalg.norm(np.asarray(hull_point) - 1.0 / K))
    s_bar = float(w @ s / w.sum())
    return s - (s_bar - D * margin)


class SplitMoment:
    """Objective and the 4K cross-multiplied disclosure rows of the split program at a node.

    Row order: ``[g^{1+}, g^{1-}, g^{0+}, g^{0-}]``, K rows each, all ``≤ 0`` (``bound = 0``).
    ``alpha_one`` (default ``alpha``) may tighten the budget of child V1 alone; V0 keeps
    ``alpha`` so that ``h ≡ 0`` (V0 = V) stays feasible.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.split_game import SplitMoment, split_coefficients
    >>> rng = np.random.default_rng(0)
    >>> z = rng.integers(0, 2, 200)
    >>> X, w = (z + rng.normal(size=200))[:, None], np.full(200, 1 / 200)
    >>> moment = SplitMoment(w, z, np.bincount(z) / 200, split_coefficients(w, z, [0.5, 0.5]), 0.1)
    >>> cost, g = moment.stats(np.zeros(200))      # h = 0 keeps every sample in V0: feasible
    >>> g.shape, bool(np.all(g <= moment.bound)), moment.row_names()[0]
    ((8,), True, 'disclosure_1+[0]')
    """

    def __init__(self, weights: ArrayLike, groups: ArrayLike, prior: ArrayLike, coefficients: ArrayLike,
                 alpha: float, alpha_one: float | None = None) -> None:
        self.w = np.asarray(weights, dtype=float)
        self.W = float(self.w.sum())
        if self.W <= 0:
            raise DataValidationError("the node has no weight to split.")
        prior = np.asarray(prior, dtype=float)
        self.K, self.alpha = prior.size, float(alpha)
        self.alpha_one = self.alpha if alpha_one is None else float(alpha_one)
        self.groups = np.asarray(groups)
        self.prior = prior
        self.wn = self.w / self.W
        self.wc = self.wn * np.asarray(coefficients, dtype=float)
        # Σ_j w_j δ_jk / W, with δ_jk = 1[z_j = k] − r_k, computed by bincount (O(n), no n×K matrix)
        self.D_total = self._weighted_deviation(self.wn)
        self.bound = np.zeros(4 * self.K)

    def _weighted_deviation(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Σ_j v_j δ_jk`` for every k."""
        out: NDArray[np.float64] = np.bincount(self.groups, weights=v, minlength=self.K) - self.prior * v.sum()
        return out

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and disclosure-constraint values ``(cost, g)`` of the predictions ``pred``."""
        h = np.asarray(pred, dtype=float)
        wh = self.wn * h
        S1, W1 = self._weighted_deviation(wh), float(wh.sum())
        S0, W0 = self.D_total - S1, 1.0 - W1
        a, a1 = self.alpha, self.alpha_one
        return float(self.wc @ h), np.concatenate([S1 - a1 * W1, -S1 - a1 * W1, S0 - a * W0, -S0 - a * W0])

    def lagrangian(self, cost: ArrayLike, g: ArrayLike, lam: ArrayLike) -> np.ndarray:
        """Lagrangian ``cost + (g - bound) @ lam`` of each hypothesis."""
        out: np.ndarray = np.asarray(cost) + (np.asarray(g) - self.bound) @ np.asarray(lam)
        return out

    def cost_difference(self, lam: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""Per-sample :math:`C^1_j - C^0_j` of :math:`L(h,\lambda)` (only it moves the argmin)."""
        K, a = self.K, self.alpha
        l1p, l1m, l0p, l0m = (lam[i * K:(i + 1) * K] for i in range(4))
        v = (l1p - l1m) - (l0p - l0m)                       # Σ_k v_k δ_jk = v_{z_j} − ⟨v, r⟩
        scale = self.alpha_one * (l1p.sum() + l1m.sum()) - a * (l0p.sum() + l0m.sum())
        out: NDArray[np.float64] = self.wc + self.wn * (v[self.groups] - v @ self.prior - scale)
        return out

    def row_names(self) -> list[str]:
        """Names of the disclosure constraint rows, side by side and group by group."""
        return [f"disclosure_{side}[{k}]" for side in ("1+", "1-", "0+", "0-") for k in range(self.K)]


class LinearSplit:
    """Deterministic split ``h(x) = 1[x̃ᵀβ < 0]`` with ``x̃ = (1, x)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.reductions.split_game import LinearSplit
    >>> LinearSplit([1.0, -2.0]).predict(np.array([[0.0], [1.0]])).tolist()   # 1 - 2x < 0
    [0.0, 1.0]
    """

    def __init__(self, beta: ArrayLike) -> None:
        self.beta = np.asarray(beta, dtype=float)

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``1[x̃ᵀβ < 0]`` for each row of ``X``."""
        out: NDArray[np.float64] = (X @ self.beta[1:] + self.beta[0] < 0).astype(float)
        return out


class ZeroSplit:
    """The split ``h ≡ 0`` (everything to child V0); always feasible."""

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.zeros(X.shape[0])


@fill_doc
class PairedRegressionLearner:
    """Paired regression classifier (Def. 14) as a cost-sensitive oracle.

    Least squares of the per-sample cost difference ``(C¹_j − C⁰_j)/w_j`` on ``x̃ = (1, x)``,
    weighted by ``w_j`` over the node's samples (``w_j > 0``); predict 1 where the fit is negative.
    By linearity this is the paper's pair of regressions of ``C⁰`` and ``C¹`` with argmin. The
    weighted Gram matrix is factored once per node (:meth:`prepare`); each best response is one
    ``X̃ᵀd`` product and a triangular solve.

    Parameters
    ----------
    ridge : float
        Relative ridge on the Gram matrix's diagonal (collinear one-hot columns).

    Examples
    --------
    {example_split_node}
    >>> moment = SplitMoment(w, z, np.bincount(z) / 200, split_coefficients(w, z, [0.5, 0.5]), 0.1)
    >>> learner = PairedRegressionLearner().prepare(moment, X)
    >>> split = learner.best_response(np.zeros(8))   # a linear split of the node's samples
    >>> type(split).__name__, split.predict(X).shape
    ('LinearSplit', (200,))
    """

    def __init__(self, ridge: float = 1e-8) -> None:
        self.ridge = float(ridge)

    def prepare(self, moment: SplitMoment, X: ArrayLike) -> PairedRegressionLearner:
        """Factor the weighted Gram matrix of ``X`` for ``moment``'s rows; returns ``self``."""
        from scipy.linalg import cho_factor
        self.moment = moment
        self.rows = np.flatnonzero(moment.w > 0)
        Xt = np.hstack([np.ones((self.rows.size, 1)), np.asarray(X, dtype=float)[self.rows]])
        gram = Xt.T @ (Xt * moment.w[self.rows, None])
        gram[np.diag_indices_from(gram)] += self.ridge * np.trace(gram) / gram.shape[0]
        self.Xt, self.factor = Xt, cho_factor(gram)
        return self

    def best_response(self, lam: NDArray[np.float64]) -> LinearSplit:
        """The linear split that regresses the cost differences under multipliers ``lam``."""
        from scipy.linalg import cho_solve
        diff = self.moment.cost_difference(lam)[self.rows] * self.moment.W   # undo the 1/W_V scaling
        return LinearSplit(cho_solve(self.factor, self.Xt.T @ diff))


@fill_doc
class EstimatorLearner:
    """Any scikit-learn classifier as the oracle: label ``1[C¹ < C⁰]``, weight ``|C¹ − C⁰|``.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    {example_split_node}
    >>> moment = SplitMoment(w, z, np.bincount(z) / 200, split_coefficients(w, z, [0.5, 0.5]), 0.1)
    >>> learner = EstimatorLearner(LogisticRegression()).prepare(moment, X)
    >>> learner.best_response(np.zeros(8)).predict(X).shape    # 0/1 split of every sample
    (200,)
    """

    def __init__(self, estimator: BaseEstimator) -> None:
        self.estimator = estimator

    def prepare(self, moment: SplitMoment, X: ArrayLike) -> EstimatorLearner:
        """Keep ``moment`` and ``X`` for the best responses; returns ``self``."""
        self.moment, self.X = moment, X
        return self

    def best_response(self, lam: NDArray[np.float64]) -> _Constant | _Thresholded:
        """Fit a clone of the estimator to the cost-sensitive labels under multipliers ``lam``."""
        diff = self.moment.cost_difference(lam)
        label = (diff < 0).astype(int)
        weight = np.abs(diff)
        if weight.sum() <= 0 or label.min() == label.max():
            return _Constant(float(label[np.argmax(weight)]) if weight.sum() > 0 else 0.0)
        return _Thresholded(clone(self.estimator).fit(self.X, label, sample_weight=weight))


class _Constant:
    def __init__(self, value: float) -> None:
        self.value = value

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.full(X.shape[0], self.value)


class _Thresholded:
    def __init__(self, model: BaseEstimator) -> None:
        self.model = model

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        return np.asarray(self.model.predict(X), dtype=float)


class DisclosureAuditor:
    """Multiplier player: projected gradient ascent on λ, then restricted-LP column generation.

    Parameters
    ----------
    n_ascent : int
        Rounds of ``λ ← Π(λ + σ t^{-1/2} g(h_t))`` (Algorithm 3 with the clip on λ).
    step : float
        σ, in the probability units of the rows.
    lambda_max : float
        Radius of the ball λ is projected onto.
    max_iter : int
        Total rounds (the practical cap replacing Algorithm 3's T).
    solver : str
        LP back end of the restricted master problem.
    tol : float
        A column prices in when its reduced cost is below ``-tol``.
    """

    use_pool = False
    mode = "auditor"

    def __init__(self, n_ascent: int = 20, step: float = 5.0, lambda_max: float = 100.0,
                 max_iter: int = 60, solver: str | SolverSpec | None = None,
                 tol: float = 1e-9) -> None:
        self.n_ascent, self.step, self.lambda_max = int(n_ascent), float(step), float(lambda_max)
        self.max_iter, self.solver, self.tol = int(max_iter), solver, float(tol)

    def start(self, game: Game[SplitMoment]) -> None:
        """Reset the auditor for ``game`` and seed its pool with the all-zero split."""
        self.game = game
        self.moment = game.moment
        self.lam = np.zeros(self.moment.bound.size)
        self.master: Any = None   # the restricted LP, compiled on the first call
        self.n_cols = 0
        self.pi: np.ndarray | None = None
        self.duals = None
        self.value, self.status = np.inf, "max_iter"
        self.history: list[dict[str, Any]] = []
        game.pool.add(ZeroSplit())            # h ≡ 0 keeps the restricted LP feasible

    def propose(self, t: int) -> np.ndarray:
        """The multipliers the learner answers in round ``t``."""
        return self.lam

    def observe(self, t: int, index: int) -> bool:
        """Take the learner's new column ``index``; return whether the game has converged."""
        costs, G = self.game.pool.arrays()
        if t <= self.n_ascent:
            lam = self.lam + self.step / np.sqrt(t) * G[index]
            lam = np.clip(lam, 0.0, None)     # exact projection onto orthant ∩ ball:
            norm = np.linalg.norm(lam)        # clip, then rescale
            self.lam = lam if norm <= self.lambda_max else lam * (self.lambda_max / norm)
            if t < self.n_ascent:
                return False
        else:
            # the oracle answered the LP duals: stop when its column does not price in
            reduced = costs[index] + G[index] @ self.lam - self.value
            if reduced >= -self.tol * max(1.0, abs(self.value)):
                self.status = "converged"
                self._solve_master()
                return True
        self._solve_master()
        self.history.append({"iteration": t, "value": self.value, "pool": len(self.game.pool)})
        return False

    def _solve_master(self) -> None:
        costs, G = self.game.pool.arrays()
        M = costs.size
        if self.master is None:
            prog = Program("split_master")
            prog.add_variables("pi", shape=(M,), lb=0.0)
            prog.add_constraints("disclosure", {"pi": G.T}, ub=self.moment.bound)
            prog.add_constraints("simplex", {"pi": np.ones((1, M))}, lb=1.0, ub=1.0)
            prog.set_objective(linear={"pi": costs})
            self.master = prog.compile(self.solver)
        elif M > self.n_cols:
            new = slice(self.n_cols, M)
            self.master.extend_variables("pi", {"disclosure": G[new].T, "simplex": np.ones((1, M - self.n_cols))},
                                         costs[new])
        self.n_cols = M
        sol = self.master.solve(require_optimal=True)
        self.pi = np.clip(sol.primal["pi"], 0.0, None)
        self.pi /= self.pi.sum()
        self.lam = np.clip(-np.asarray(sol.dual["disclosure"]), 0.0, None)   # ≤ rows: dual ≤ 0
        self.value = float(sol.objective)

    def finish(self, t: int) -> GameResult:
        """The game's result after ``t`` rounds: the mixture of the restricted master LP."""
        if self.pi is None or len(self.pi) < len(self.game.pool):
            self._solve_master()
        assert self.pi is not None  # set by _solve_master
        costs, G = self.game.pool.arrays()
        keep = np.flatnonzero(self.pi > 1e-12)
        w = self.pi[keep] / self.pi[keep].sum()
        return GameResult(status=self.status, hypotheses=[self.game.pool.hyps[i] for i in keep],
                          weights=w, lambda_=self.lam, gap=0.0, cost=float(w @ costs[keep]),
                          constraint_values=w @ G[keep], bound=self.moment.bound, n_iter=t,
                          n_oracle_calls=self.game.n_calls, mode=self.mode, B=self.lambda_max,
                          nu=self.tol, history=self.history)


@fill_doc
def learn_split(X: ArrayLike, weights: ArrayLike, groups: NDArray[np.intp], prior: ArrayLike,
                hull_point: Sequence[float] | NDArray[np.float64], alpha: float, *, margin: float = 0.0,
                alpha_one: float | None = None, learner: PairedRegressionLearner | EstimatorLearner | None = None,
                auditor: DisclosureAuditor | None = None) -> GameResult:
    """Play the split game at one node; return the mixture (hypotheses, weights) and its stats.

    Examples
    --------
    {example_split_node}
    >>> res = learn_split(X, w, z, np.bincount(z) / 200,
    ...                   hull_point=[0.5, 0.5], alpha=0.1)
    >>> res.status, round(float(res.weights.sum()), 9), bool(np.all(res.constraint_values <= res.bound + 1e-9))
    ('converged', 1.0, True)
    """
    t0 = time.perf_counter()
    coef = split_coefficients(weights, groups, hull_point, margin)
    moment = SplitMoment(weights, groups, prior, coef, alpha, alpha_one)
    learner = PairedRegressionLearner() if learner is None else learner
    auditor = DisclosureAuditor() if auditor is None else auditor
    game = Game(moment, learner.prepare(moment, X), X)
    result = game.play(auditor, auditor.max_iter)
    result.seconds = time.perf_counter() - t0
    return result
