"""Training statistics of a fitted fair multiclass rule, computed on its tied atoms only.

The randomized optimum's cost and gaps come with the solution; the deterministic rule (the
first used class of every atom) differs from it only on tied atoms (several classes used), so
its cost and rates are the randomized ones plus the change on those few atoms, and the tie
bound sums the tied mass alone: no pass over all atoms and classes beyond finding the ties.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairopt.formulations.constrained_classification.multiclass_lp import (
    Q_TOL,
    MulticlassSolution,
    MulticlassTransportLP,
)

__all__ = ["RuleStats", "rule_stats"]

F64 = NDArray[np.float64]


@dataclass
class RuleStats:
    """Cost and largest gap of the randomized and deterministic rules, and the tie bound.

    Attributes
    ----------
    randomized, deterministic : tuple of float
        ``(expected cost, largest |group rate - pooled rate|)`` on the fitting atoms.
    tied : ndarray of int
        Atoms where the randomized rule uses several classes.
    first_class : ndarray of int
        The deterministic rule's class on those atoms (the first used class).
    tied_mass : ndarray of shape (G, n_events)
        Tied mass per (group, event) as a share of the group's event mass.
    bound : float
        ``eps + max_{g,e} (T_{g,e} + T_e)``: the bound on the deterministic rule's gap.
    cost_bound : float
        Weighted cost spread of the tied atoms: the bound on what determinism costs.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> S = np.array([[.9, .1], [.4, .6], [.3, .7], [.8, .2]])
    >>> lp = MulticlassTransportLP(collapse_vectors(S, np.array([0, 0, 1, 1])), 2, 1 - np.eye(2),
    ...                            "demographic_parity")
    >>> st = rule_stats(lp, lp.solve())
    >>> st.randomized[1] < 1e-9, st.tied.size
    (True, 0)
    """

    randomized: tuple[float, float]
    deterministic: tuple[float, float]
    tied: NDArray[np.int64]
    first_class: NDArray[np.int64]
    tied_mass: F64
    bound: float
    cost_bound: float


def rule_stats(lp: MulticlassTransportLP, sol: MulticlassSolution) -> RuleStats:
    """The :class:`RuleStats` of ``sol`` (a solution of ``lp``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import (
    ...     collapse_vectors, rates_and_gaps)
    >>> rng = np.random.default_rng(0)
    >>> S, g = rng.dirichlet(np.ones(3), 300), rng.integers(0, 2, 300)
    >>> lp = MulticlassTransportLP(collapse_vectors(S, g), 2, 1 - np.eye(3), "demographic_parity")
    >>> sol = lp.solve()
    >>> st = rule_stats(lp, sol)
    >>> q = sol.q.copy(); q[st.tied] = np.eye(3)[st.first_class]   # the deterministic rule
    >>> at = lp.atoms
    >>> gap = rates_and_gaps(at.scores, at.group, at.weight, q, lp.events, 2)[2].max()
    >>> bool(abs(gap - st.deterministic[1]) < 1e-12), bool(gap <= st.bound + 1e-12)
    (True, True)
    """
    at, G = lp.atoms, lp.n_groups
    q = sol.q
    cand = np.flatnonzero(q.max(axis=1) < 1.0)   # one-hot rows have a 1 exactly
    tied = cand[(q[cand] > 0).sum(axis=1) > 1].astype(np.int64)
    qt = q[tied]
    first = np.argmax(qt > Q_TOL, axis=1).astype(np.int64)
    dq = -qt
    dq[np.arange(tied.shape[0]), first] += 1.0
    W = float(at.weight.sum())
    wt, St, gt = at.weight[tied], at.scores[tied], at.group[tied]
    SCt = St @ lp.cost
    det_cost = sol.objective + float(np.sum(SCt * dq * wt[:, None])) / W
    E = len(lp.events)
    den, dnum, T = lp.event_masses(), np.zeros((G, E)), np.zeros((G, E))
    for e, (j, k) in enumerate(lp.events):   # a loop over events, not rows
        vt = wt if j is None else wt * St[:, j]
        dnum[:, e] = np.bincount(gt, weights=vt * dq[:, k], minlength=G)
        T[:, e] = np.bincount(gt, weights=vt, minlength=G)
    ok = den > 0
    safe = np.where(ok, den, 1.0)
    tot = den.sum(axis=0)
    rates = sol.rates + np.where(ok, dnum / safe, 0.0)
    pooled = sol.pooled + np.where(tot > 0, dnum.sum(axis=0) / np.where(tot > 0, tot, 1.0), 0.0)
    gaps = np.where(np.isnan(rates), 0.0, np.abs(rates - pooled[None, :]))
    Tp = np.where(tot > 0, T.sum(axis=0) / np.where(tot > 0, tot, 1.0), 0.0)
    T = np.where(ok, T / safe, 0.0)
    spread = np.ptp(SCt, axis=1) if tied.size else np.zeros(0)
    return RuleStats(randomized=(float(sol.objective), float(sol.gaps.max(initial=0.0))),
                     deterministic=(det_cost, float(gaps.max(initial=0.0))), tied=tied, first_class=first,
                     tied_mass=T, bound=lp.eps + float((T + Tp[None, :]).max(initial=0.0)),
                     cost_bound=float(np.dot(wt, spread)) / W)
