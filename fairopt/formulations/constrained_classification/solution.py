"""Result object of the randomized-threshold models and the recovery of thresholds from q."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt._docstrings import fill_doc

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: q values within this distance of 0 or 1 count as at the bound when recovering thresholds
Q_TOL = 1e-7
#: atoms used to read a threshold off q must be this far inside (0, 1): interior-point
#: solvers leave bound atoms at ~1e-8 rather than exactly at 0 or 1
Q_INSIDE = 1e-4


@dataclass
@fill_doc
class ThresholdSolution:
    """Fitted randomized-threshold rule.

    The rule predicts 1 with probability ``clip((f - t_c)/gamma, 0, 1)`` for a row with score
    ``f`` in cell ``c`` (``gamma > 0``), or ``1{f > t_c} + tau_c 1{f = t_c}`` (``gamma = 0``).

    Attributes
    ----------
    thresholds : ndarray, shape (n_cells,)
        Deployed thresholds ``t_c`` (for statistical parity ``t_k = theta_k = lambda_k - mu_k``).
    tie_probs : ndarray, shape (n_cells,)
        ``tau_c`` of the ``gamma = 0`` rule (zeros for ``gamma > 0``).
    theta : ndarray, shape (K,)
        Dual variables of the fairness rows (``lambda_k - mu_k``), one per constrained group:
        the price of fairness of group ``k`` in score units.
    rho : float
        Target rate (the optimal one when ``rho`` was free).
    rates : ndarray, shape (K,)
        Fitted constraint values on the fitting sample (group positive rates for statistical
        parity, conditional covariances for the covariance extension).
    objective : float
        ``(1/N) sum_i [(gamma/2) q_i^2 - f_i q_i]`` on the fitting sample.
    q : ndarray, shape (n_atoms,)
        Prediction probability of every atom of the fitting sample.

    Examples
    --------
    {example_scores_groups}
    >>> from fairopt.formulations.constrained_classification import RandomizedThresholdParity
    >>> solution = RandomizedThresholdParity(scores, groups, gamma=0.1).solve()
    >>> type(solution).__name__, solution.thresholds.shape
    ('ThresholdSolution', (2,))
    """

    thresholds: np.ndarray
    tie_probs: np.ndarray
    theta: np.ndarray
    rho: float
    gamma: float
    eps: float
    rates: np.ndarray
    objective: float
    q: np.ndarray
    backend: str
    solver: str
    status: str = "optimal"
    solve_seconds: float = 0.0
    iterations: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def decision_probability(self, f: ArrayLike, cells: np.ndarray) -> np.ndarray:
        """``P(y_hat = 1)`` of rows with scores ``f`` in cells ``cells`` (indices into ``thresholds``)."""
        f = np.asarray(f, dtype=float)
        t = self.thresholds[cells]
        if self.gamma > 0:
            out: np.ndarray = np.clip((f - t) / self.gamma, 0.0, 1.0)
            return out
        return np.where(f > t, 1.0, np.where(f == t, self.tie_probs[cells], 0.0))

    @property
    def disparity(self) -> float:
        """``max_k rate_k - min_k rate_k`` on the fitting sample."""
        return float(self.rates.max() - self.rates.min()) if self.rates.size else 0.0


def threshold_from_q(f: np.ndarray, q: np.ndarray, gamma: float, z: np.ndarray | None = None,
                     weight: np.ndarray | None = None, dual: float | None = None) -> float:
    """Recover the threshold ``theta`` of one group from atom probabilities ``q``.

    With ``q = clip((f - theta z)/gamma, 0, 1)``, every fractional atom gives
    ``theta = (f - gamma q)/z``; the weighted mean over atoms well inside ``(0, 1)`` is
    returned (then ``dual`` is not needed). Otherwise ``dual`` is used if it is consistent
    with the atoms at the bounds; failing that,
    ``theta`` can be anything in the interval allowed by the atoms at 0 and at 1; the point of
    that interval nearest 0 is returned (the convention of the exact solver: minimum-norm dual).
    """
    z = np.ones_like(f) if z is None else z
    nz = z != 0
    f, q, z = f[nz], q[nz], z[nz]
    w = np.ones_like(f) if weight is None else weight[nz]
    frac = (q > Q_INSIDE) & (q < 1 - Q_INSIDE)
    if frac.any():
        return float(np.average((f[frac] - gamma * q[frac]) / z[frac], weights=w[frac]))
    lo, hi = _feasible_interval(f, q, gamma, z)
    if dual is not None and lo - 1e-9 <= dual <= hi + 1e-9 and not (lo <= 0.0 <= hi):
        return float(dual)
    return float(min(max(0.0, lo), hi))


def _feasible_interval(f: np.ndarray, q: np.ndarray, gamma: float, z: np.ndarray) -> tuple[float, float]:
    zero, one = q <= Q_TOL, q >= 1 - Q_TOL
    pos, neg = z > 0, z < 0
    lows = np.concatenate([(f / z)[zero & pos], ((f - gamma) / z)[one & neg]])
    highs = np.concatenate([(f / z)[zero & neg], ((f - gamma) / z)[one & pos]])
    lo = float(lows.max()) if lows.size else -np.inf
    hi = float(highs.min()) if highs.size else np.inf
    return lo, hi


def step_rule_from_q(f: np.ndarray, q: np.ndarray) -> tuple[float, float]:
    """Threshold ``t`` and tie probability ``tau`` of a ``gamma = 0`` rule from atom values.

    ``f`` is sorted ascending; ``q`` should be a threshold rule with at most one fractional atom.
    """
    frac = np.flatnonzero((q > Q_TOL) & (q < 1 - Q_TOL))
    if frac.size:
        j = int(frac[-1])
        return float(f[j]), float(q[j])
    zero, one = q <= Q_TOL, q >= 1 - Q_TOL
    lo = float(f[zero].max()) if zero.any() else -np.inf
    hi = float(f[one].min()) if one.any() else np.inf
    t = float(min(max(0.0, lo), hi))  # nearest 0, as for gamma > 0
    at = np.flatnonzero(f == t)
    return t, float(q[at[0]]) if at.size else 0.0
