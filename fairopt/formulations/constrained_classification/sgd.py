"""Projected stochastic gradient descent on the dual of the ramp model (Algorithm 1).

The negated dual of group ``k`` is ``G_k(lambda, mu) = e (lambda + mu) + b (lambda - mu) +
E[xi_gamma(f - (lambda - mu) z) | k]`` with ``e`` the band half-width and ``b`` the target
(statistical parity: ``z = 1``, ``b = rho``, ``e = eps/2``; covariance: ``z = 1_S - rho_k``,
``b = 0``, ``e = eps``). A stochastic gradient step on a batch is

    lambda_k <- max(0, lambda_k + alpha (mean(z h) - b - e)),
    mu_k     <- max(0, mu_k     + alpha (b - e - mean(z h))),

with ``h = clip((f - theta_k z)/gamma, 0, 1)`` and ``theta_k = lambda_k - mu_k``. With ``e = 0``
only ``theta_k`` is identified and the solver steps on it directly:
``theta_k <- theta_k + alpha (mean(z h) - b)``.

Two deviations from the paper's per-sample loop, both for accuracy on small groups (note,
pitfall 2): gradients are averaged per group within a mini-batch (so each group present in a
batch gets a full step, however rare it is), and the deployed thresholds are *tail* averages
(the average over roughly the second half of the steps) instead of averages from zero.
``batch_size=1`` with ``sampling="rows"`` recovers the paper's per-sample algorithm.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairopt._docstrings import fill_doc
from fairopt.errors import ConfigError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.stats._atoms import ScoreAtoms


@fill_doc
class ThresholdSGD:
    """Streaming projected SGD for the group thresholds ``theta_k``.

    Parameters
    ----------
    n_cells : int
        Number of groups ``K``.
    gamma : float
        Ramp width (``> 0``).
    target : float
        ``b`` in the module docstring (``rho`` for statistical parity, 0 for covariance).
    half_width : float
        ``e`` in the module docstring (``eps / 2`` for statistical parity).
    step_size : float, optional
        Constant step ``alpha``; default ``gamma`` (with ``alpha <= gamma`` a step never
        overshoots, because ``m_k`` is ``1/gamma``-Lipschitz).

    Examples
    --------
    {example_scores_groups}
    >>> from fairopt.formulations.constrained_classification import collapse_atoms, sgd_thresholds
    >>> thresholds, sgd = sgd_thresholds(collapse_atoms(scores, groups), gamma=0.1, target=0.5,
    ...                                  random_state=0)
    >>> type(sgd).__name__, sgd.n_cells, bool(thresholds[1] > thresholds[0])
    ('ThresholdSGD', 2, True)
    """

    def __init__(self, n_cells: int, gamma: float, target: float, half_width: float = 0.0,
                 step_size: float | None = None):
        if gamma <= 0:
            raise ConfigError("projected SGD needs a ramp width gamma > 0.")
        self.n_cells = int(n_cells)
        self.gamma = float(gamma)
        self.target = float(target)
        self.half_width = float(half_width)
        self.step_size = float(gamma if step_size is None else step_size)
        if self.step_size <= 0:
            raise ConfigError(f"step_size must be > 0, got {step_size}.")
        self.lam = np.zeros(self.n_cells)
        self.mu = np.zeros(self.n_cells)
        self.n_steps = 0
        # two-window tail average: the current window and the last completed one
        # [sum of the iterates, their count] of the current and previous averaging windows
        self._win: list[Any] = [np.zeros(self.n_cells), 0]
        self._prev: list[Any] = [np.zeros(self.n_cells), 0]

    @property
    def theta(self) -> np.ndarray:
        """Current (last) iterate ``lambda - mu``."""
        return self.lam - self.mu

    @property
    def thresholds(self) -> np.ndarray:
        """Tail-averaged thresholds (the deployed solution)."""
        total = self._win[0] + self._prev[0]
        count = self._win[1] + self._prev[1]
        out: np.ndarray = total / count if count else self.theta.copy()
        return out

    def step(self, scores: np.ndarray, cells: np.ndarray, z: np.ndarray | None = None) -> None:
        """One projected step on a batch (rows of several groups, vectorised)."""
        theta = self.lam - self.mu
        zz = 1.0 if z is None else z
        h = np.clip((scores - theta[cells] * zz) / self.gamma, 0.0, 1.0)
        cnt = np.bincount(cells, minlength=self.n_cells)
        seen = cnt > 0
        mean = np.bincount(cells, weights=h * zz, minlength=self.n_cells)[seen] / cnt[seen]
        a = self.step_size
        if self.half_width == 0.0:
            new = theta[seen] + a * (mean - self.target)
            self.lam[seen], self.mu[seen] = np.maximum(new, 0.0), np.maximum(-new, 0.0)
        else:
            self.lam[seen] = np.maximum(0.0, self.lam[seen] + a * (mean - self.target - self.half_width))
            self.mu[seen] = np.maximum(0.0, self.mu[seen] + a * (self.target - self.half_width - mean))
        self.n_steps += 1
        self._win[0] += self.lam - self.mu
        self._win[1] += 1
        if self._win[1] >= max(1, self._prev[1]) and self._win[1] >= self.n_steps // 2:
            self._prev, self._win = self._win, [np.zeros(self.n_cells), 0]

    def partial_fit(self, scores: ArrayLike, cells: ArrayLike, z: ArrayLike | None = None,
                    batch_size: int = 256) -> ThresholdSGD:
        """Consume a chunk of a stream in order, ``batch_size`` rows per step."""
        scores = np.asarray(scores, dtype=float).reshape(-1)
        cells = np.asarray(cells, dtype=np.int64).reshape(-1)
        zz = None if z is None else np.asarray(z, dtype=float).reshape(-1)
        for start in range(0, scores.shape[0], int(batch_size)):
            sl = slice(start, start + int(batch_size))
            self.step(scores[sl], cells[sl], None if zz is None else zz[sl])
        return self


@fill_doc
def sgd_thresholds(atoms: ScoreAtoms, gamma: float, target: float, half_width: float = 0.0,
                   z: ArrayLike | None = None, n_steps: int = 4000, batch_size: int = 256,
                   step_size: float | None = None, sampling: Literal["stratified", "rows"] = "stratified",
                   random_state: int | np.random.Generator | None = None) -> tuple[np.ndarray, ThresholdSGD]:
    """Run :class:`ThresholdSGD` on a collapsed sample, drawing rows with replacement.

    Parameters
    ----------
    atoms : ScoreAtoms
        Collapsed fitting sample (cells = the groups whose thresholds are learned).
    z : ndarray, optional
        Per-atom constraint coefficients (covariance extension).
    n_steps, batch_size : int
        Number of steps and rows per group per step (``sampling="stratified"``) or rows per
        step (``sampling="rows"``, the paper's sampling ``x ~ p(x)``).
    random_state : int, Generator or None
        Seed of the sampling.

    Returns
    -------
    thresholds : ndarray, shape (K,)
    state : ThresholdSGD

    Examples
    --------
    {example_scores_groups}
    >>> from fairopt.formulations.constrained_classification import collapse_atoms, ramp
    >>> thresholds, _ = sgd_thresholds(collapse_atoms(scores, groups), gamma=0.1, target=0.5,
    ...                                random_state=0)
    >>> [round(float(ramp(scores[groups == k] - thresholds[k], 0.1).mean()), 2) for k in (0, 1)]
    [0.5, 0.5]
    """
    if sampling not in ("stratified", "rows"):
        raise ConfigError(f"sampling must be 'stratified' or 'rows', got {sampling!r}.")
    rng = np.random.default_rng(random_state)
    K = atoms.n_cells
    cw = np.cumsum(atoms.weight)
    start = np.concatenate([[0.0], cw])[atoms.offsets[:-1]]
    nk = atoms.cell_weight
    total = float(cw[-1])
    sgd = ThresholdSGD(K, gamma, target, half_width, step_size)
    zz = None if z is None else np.asarray(z, dtype=float)
    chunk = max(1, min(n_steps, 2_000_000 // max(1, batch_size * (K if sampling == "stratified" else 1))))
    done = 0
    while done < n_steps:
        steps = min(chunk, n_steps - done)
        if sampling == "stratified":
            u = rng.random((steps, K, batch_size)) * nk[None, :, None] + start[None, :, None]
        else:
            u = rng.random((steps, batch_size)) * total
        idx = np.minimum(np.searchsorted(cw, u, side="right"), atoms.n_atoms - 1)
        f_all, c_all = atoms.score[idx], atoms.cell[idx]
        z_all = None if zz is None else zz[idx]
        for s in range(steps):
            sgd.step(f_all[s].reshape(-1), c_all[s].reshape(-1),
                     None if z_all is None else z_all[s].reshape(-1))
        done += steps
    return sgd.thresholds, sgd
