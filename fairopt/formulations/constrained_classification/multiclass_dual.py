"""Offsets of the fair multiclass rule from its small dual (the scale path).

The LP of :mod:`~fairopt.formulations.constrained_classification.multiclass_lp` has one
variable per atom and class, but its Lagrangian dual has one number per live (group, event) gap
row. Write ``x_{g,e}`` for a gap row's offset and ``c_{g,e} = x_{g,e} - xbar_e`` with
``xbar_e = sum_g V_{g,e} x_{g,e} / V_e`` (the pooled rate's dual is then eliminated). The
adjusted cost of class ``k`` is

    a_k(s, g; x) = (s C)_k - sum_{e: k_e = k} phi_e(s) c_{g,e}

(the offset rule ``(s (C + D_g))_k + b_{g,k}`` of the LP module, with ``D``, ``b`` read off
``-c``), and the dual function is

    h(x) = sum_a (w_a / W) min_k a_k(s_a, g_a; x) - eps sum_{g,e} |x_{g,e}| V_{g,e} / W,

concave, piecewise linear, evaluated in ``O(n K)`` (``O(n K^2)`` with conditional events). Its
supergradient in ``x_{g,e}`` is ``-(V_{g,e} / W) (R_{g,e} - r_e)`` (minus the ``eps`` term): the
rate gaps of the argmin rule. The LP optimum equals ``max_x h``.

:func:`dual_offsets` maximises a smoothed ``h`` (the ``min`` replaced by a soft minimum of
temperature ``tau``, the ``|x|`` split into two bounded halves) with L-BFGS-B, first on a
subsample of the atoms, then on the atoms near a tie with the others' contribution (linear in
``x`` while they keep their class) summed once, lowering ``tau`` step by step. The result is only
a starting point: the working-set solve
(:mod:`~fairopt.formulations.constrained_classification.multiclass_working_set`) frees the atoms
near a tie under these offsets, pins the others, solves the LP over the free atoms and certifies
every pinned atom with the LP's own duals, so the returned optimum is exact.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

if TYPE_CHECKING:
    from fairopt.formulations.constrained_classification.multiclass_lp import MulticlassTransportLP

__all__ = ["DualProblem", "dual_offsets", "offsets_from_x"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

#: temperatures of the subsample and near-tie phases (costs are O(1) numbers)
SAMPLE_TAUS = (1e-2, 2e-3)
TIE_TAUS = (1e-3, 2e-4, 4e-5)
#: atoms in the subsample phase and, at most, in the near-tie phase
SAMPLE_ATOMS = 40_000
TIE_ATOMS = 120_000
LBFGS_ITER = 400


@dataclass
class DualProblem:
    """Atoms of the fair multiclass LP arranged for dual evaluations (sorted by group).

    Attributes
    ----------
    S, SC : ndarray
        Score vectors and expected costs ``S C`` of the atoms taken, in group order.
    w : ndarray
        Their weights (rescaled to the groups' totals for a subsample).
    bounds : ndarray
        ``bounds[g]:bounds[g + 1]`` are group ``g``'s atoms.
    ev_j, ev_k : ndarray
        Conditioning class (``-1``: none) and predicted class of every event.
    Vg, V : ndarray
        Event masses per group ``(G, E)`` and pooled ``(E,)`` of the full problem.
    live : ndarray of bool
        Gap rows present in the LP ``(G, E)``.
    W : float
        Total weight of the full problem.
    eps : float
        Tolerance of the gap rows.
    pinned_num, pinned_cost : ndarray, float
        Event numerators ``sum w phi q`` per (group, event) and weighted cost of atoms whose
        class is held fixed (not among ``S``): their part of ``h`` is linear in ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import (
    ...     MulticlassTransportLP, collapse_vectors)
    >>> S = np.array([[.9, .1], [.4, .6], [.3, .7], [.8, .2]])
    >>> lp = MulticlassTransportLP(collapse_vectors(S, np.array([0, 0, 1, 1])), 2, 1 - np.eye(2),
    ...                            "demographic_parity")
    >>> dp = DualProblem.from_lp(lp)
    >>> val, grad = dp.value_grad(np.zeros(dp.n_x), 1e-9)
    >>> round(val, 6), np.round(grad, 6).tolist()     # h(0) is the unconstrained cost 0.25
    (0.25, [0.0, 0.0, 0.0, 0.0])
    """

    S: F64
    SC: F64
    w: F64
    bounds: I64
    ev_j: I64
    ev_k: I64
    Vg: F64
    V: F64
    live: NDArray[np.bool_]
    W: float
    eps: float
    pinned_num: F64
    pinned_cost: float

    @classmethod
    def from_lp(cls, lp: MulticlassTransportLP, take: I64 | None = None, rescale: bool = False,
                pinned: I64 | None = None) -> DualProblem:
        """The dual of ``lp`` over the atoms ``take`` (all by default); ``pinned`` (one class per
        atom, ``-1`` for none) holds the classes of atoms outside ``take`` fixed. ``rescale``
        scales the taken atoms' weights to their groups' totals (a subsample)."""
        at = lp.atoms
        G, K = lp.n_groups, at.scores.shape[1]
        ev_j = np.array([-1 if j is None else j for j, _ in lp.events], dtype=np.int64)
        ev_k = np.array([k for _, k in lp.events], dtype=np.int64)
        phi = _phi(at.scores, ev_j)
        Vg = np.stack([np.bincount(at.group, weights=at.weight * phi[:, e], minlength=G)
                       for e in range(ev_j.shape[0])], axis=1)
        V = Vg.sum(axis=0)
        live = (Vg > 0) & (V > 0)[None, :]
        idx = np.arange(at.n_atoms, dtype=np.int64) if take is None else take
        idx = idx[np.argsort(at.group[idx], kind="stable")]
        w = at.weight[idx].astype(float)
        if rescale:
            tot = np.bincount(at.group, weights=at.weight, minlength=G)
            sub = np.bincount(at.group[idx], weights=w, minlength=G)
            w = w * np.where(sub > 0, tot / np.where(sub > 0, sub, 1.0), 0.0)[at.group[idx]]
        num, cost0 = np.zeros((G, ev_j.shape[0])), 0.0
        if pinned is not None:
            p = np.flatnonzero(pinned >= 0)
            wp, kp = at.weight[p], pinned[p]
            cost0 = float(np.sum(wp * (at.scores[p] @ lp.cost)[np.arange(p.shape[0]), kp]))
            for e in range(ev_j.shape[0]):   # a loop over events, not rows
                hit = kp == ev_k[e]
                num[:, e] = np.bincount(at.group[p][hit], weights=wp[hit] * phi[p, e][hit], minlength=G)
        S = at.scores[idx]
        bounds = np.searchsorted(at.group[idx], np.arange(G + 1)).astype(np.int64)
        return cls(S=S, SC=S @ lp.cost, w=w, bounds=bounds, ev_j=ev_j, ev_k=ev_k, Vg=Vg, V=V, live=live,
                   W=float(at.weight.sum()), eps=float(lp.eps), pinned_num=num, pinned_cost=cost0)

    @property
    def n_x(self) -> int:
        """Number of dual variables (live gap rows)."""
        return int(self.live.sum())

    def centred(self, x: F64) -> F64:
        """``c_{g,e} = x_{g,e} - xbar_e`` as a ``(G, E)`` array (0 on dead rows)."""
        X = np.zeros(self.live.shape)
        X[self.live] = x
        xbar = (X * self.Vg).sum(axis=0) / np.where(self.V > 0, self.V, 1.0)
        out: F64 = np.where(self.live, X - xbar[None, :], 0.0)
        return out

    def value_grad(self, x: F64, tau: float) -> tuple[float, F64]:
        """Smoothed ``h`` (without the ``eps`` term) and its gradient in ``x``."""
        G, E = self.live.shape
        K = self.SC.shape[1]
        D, b = offsets_from_x(self.centred(x), self.ev_j, self.ev_k, K)
        cond = bool((self.ev_j >= 0).any())
        num = self.pinned_num.copy()
        total = self.pinned_cost
        for g in range(G):   # a loop over groups, not rows
            lo, hi = int(self.bounds[g]), int(self.bounds[g + 1])
            if hi == lo:
                continue
            A = self.SC[lo:hi] + b[g]
            if cond:
                A += self.S[lo:hi] @ D[g]
            m = A.min(axis=1)
            Z = np.exp((m[:, None] - A) / tau)
            z = Z.sum(axis=1)
            wg = self.w[lo:hi]
            total += float(np.dot(wg, m - tau * np.log(z)))
            wq = Z * (wg / z)[:, None]
            col = wq.sum(axis=0)
            M = self.S[lo:hi].T @ wq if cond else None
            for e in range(E):   # a loop over events
                j, k = int(self.ev_j[e]), int(self.ev_k[e])
                num[g, e] += col[k] if j < 0 else M[j, k]   # type: ignore[index]  # M is set when cond
        # the pinned atoms' part: cost plus -sum c * num (linear); free atoms' value is in total already
        c = self.centred(x)
        total -= float(np.sum(c * self.pinned_num))
        Ne = num.sum(axis=0)
        grad = -(num - self.Vg * (Ne / np.where(self.V > 0, self.V, 1.0))[None, :]) / self.W
        return total / self.W, grad[self.live]

    def objective(self, x: F64, tau: float) -> tuple[float, F64]:
        """``-h`` smoothed, including the ``eps`` term, on the split variables ``[p, m]``
        (``x = p - m``, both ``>= 0``) for L-BFGS-B."""
        n = self.n_x
        p, mneg = x[:n], x[n:]
        val, grad = self.value_grad(p - mneg, tau)
        scale = self.eps * self.Vg[self.live] / self.W
        f = -val + float(np.dot(scale, p + mneg))
        out: F64 = np.concatenate([-grad + scale, grad + scale])
        return f, out


def _phi(S: F64, ev_j: I64) -> F64:
    """``phi_e(s)`` per atom and event: ``s_j`` or 1."""
    out: F64 = np.where(ev_j[None, :] >= 0, S[:, np.maximum(ev_j, 0)], 1.0)
    return out


def offsets_from_x(c: F64, ev_j: I64, ev_k: I64, n_classes: int) -> tuple[F64, F64]:
    """``(D, b)`` of the offset rule from the centred duals ``c`` (``(G, E)``).

    Examples
    --------
    >>> import numpy as np
    >>> D, b = offsets_from_x(np.array([[0.1, -0.1]]), np.array([-1, -1]), np.array([0, 1]), 2)
    >>> b.tolist(), float(abs(D).sum())
    ([[-0.1, 0.1]], 0.0)
    """
    G = c.shape[0]
    D, b = np.zeros((G, n_classes, n_classes)), np.zeros((G, n_classes))
    for e in range(ev_j.shape[0]):   # a loop over events
        j, k = int(ev_j[e]), int(ev_k[e])
        if j < 0:
            b[:, k] -= c[:, e]
        else:
            D[:, j, k] -= c[:, e]
    return D, b


def _maximise(dp: DualProblem, x0: F64, taus: tuple[float, ...], maxiter: int) -> F64:
    """Warm-started L-BFGS-B on the smoothed dual at each temperature in turn."""
    z = np.concatenate([np.maximum(x0, 0.0), np.maximum(-x0, 0.0)])
    bounds = [(0.0, None)] * z.shape[0] if dp.eps > 0 else None
    for tau in taus:
        if dp.eps > 0:
            res = minimize(dp.objective, z, args=(tau,), jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": maxiter, "gtol": 1e-12, "ftol": 1e-15})
            z = np.asarray(res.x, dtype=float)
        else:   # no |x| term: one free block
            n = dp.n_x

            def f(x: F64, tau: float = tau) -> tuple[float, F64]:
                val, grad = dp.value_grad(x, tau)
                return -val, -grad
            res = minimize(f, z[:n] - z[n:], jac=True, method="L-BFGS-B",
                           options={"maxiter": maxiter, "gtol": 1e-12, "ftol": 1e-15})
            x = np.asarray(res.x, dtype=float)
            z = np.concatenate([np.maximum(x, 0.0), np.maximum(-x, 0.0)])
    n = dp.n_x
    out: F64 = z[:n] - z[n:]
    return out


def margins(lp: MulticlassTransportLP, D: F64, b: F64) -> tuple[I64, F64]:
    """Argmin class and margin (second smallest minus smallest adjusted cost) of every atom."""
    from fairopt.formulations.constrained_classification.multiclass_lp import adjusted_costs
    at = lp.atoms
    A = adjusted_costs(at.scores, at.group, lp.cost, D, b)
    part = np.partition(A, 1, axis=1)
    arg: I64 = np.argmin(A, axis=1).astype(np.int64)
    gap: F64 = part[:, 1] - part[:, 0]
    return arg, gap


def dual_offsets(lp: MulticlassTransportLP, sample_atoms: int = SAMPLE_ATOMS, tie_atoms: int = TIE_ATOMS,
                 random_state: int = 0, maxiter: int = LBFGS_ITER) -> tuple[F64, F64, dict[str, Any]]:
    """Near-optimal offsets ``(D, b)`` of ``lp`` from its smoothed dual (see the module docstring).

    Returns ``D``, ``b`` and an info dict (phase sizes). The offsets are a warm start, not a
    certificate: exactness comes from the working-set solve that uses them.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import (
    ...     MulticlassTransportLP, collapse_vectors)
    >>> from fairopt.modeling.registry import default_spec
    >>> rng = np.random.default_rng(0)
    >>> S = rng.dirichlet(np.ones(3), 3000); g = rng.integers(0, 2, 3000)
    >>> lp = MulticlassTransportLP(collapse_vectors(S, g), 2, 1 - np.eye(3), "demographic_parity", 0.0)
    >>> D, b, info = dual_offsets(lp, sample_atoms=500, tie_atoms=1000)
    >>> full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    >>> bool(np.abs((b - b.mean(1, keepdims=True)) - (full.b - full.b.mean(1, keepdims=True))).max() < 0.01)
    True
    """
    m = lp.atoms.n_atoms
    rng = np.random.default_rng(random_state)
    info: dict[str, Any] = {}
    x = np.zeros(int(DualProblem.from_lp(lp, np.zeros(0, np.int64)).n_x))
    if m > sample_atoms:   # 1. a subsample, weights rescaled to the groups' totals
        take = np.sort(rng.choice(m, size=sample_atoms, replace=False)).astype(np.int64)
        sub = DualProblem.from_lp(lp, take, rescale=True)
        x = _maximise(sub, x, SAMPLE_TAUS, maxiter)
        info["sample_atoms"] = sample_atoms
    dp = DualProblem.from_lp(lp, np.zeros(0, np.int64))
    K = lp.atoms.scores.shape[1]
    if m > tie_atoms:   # 2. the atoms nearest a tie; the others keep their argmin class
        D, b = offsets_from_x(dp.centred(x), dp.ev_j, dp.ev_k, K)
        arg, gap = margins(lp, D, b)
        take = np.argpartition(gap, tie_atoms)[:tie_atoms].astype(np.int64)
        pinned = arg.copy()
        pinned[take] = -1
        tie = DualProblem.from_lp(lp, np.sort(take), pinned=pinned)
        info["tie_atoms"] = tie_atoms
    else:
        tie = DualProblem.from_lp(lp)
    x = _maximise(tie, x, TIE_TAUS, maxiter)
    D, b = offsets_from_x(tie.centred(x), tie.ev_j, tie.ev_k, K)
    return D, b, info
