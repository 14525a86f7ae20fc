"""Offsets of the fair multiclass rule from its small dual (the scale path).

The LP of :mod:`~fairopt.formulations.constrained_classification.multiclass_lp` has one
variable per atom and class, but its Lagrangian dual has one number per live (group, event) gap
row. Write ``x_{g,e}`` for a gap row's offset and ``c_{g,e} = x_{g,e} - xbar_e`` with
``xbar_e = sum_g V_{g,e} x_{g,e} / V_e`` (the pooled rate's dual is then eliminated). The
adjusted cost of class ``k`` is::

    a_k(s, g; x) = (s C)_k - sum_{e: k_e = k} phi_e(s) c_{g,e}

(the offset rule ``(s (C + D_g))_k + b_{g,k}`` of the LP module, with ``D``, ``b`` read off
``-c``), and the dual function is::

    h(x) = sum_a (w_a / W) min_k a_k(s_a, g_a; x) - eps sum_{g,e} |x_{g,e}| V_{g,e} / W,

concave, piecewise linear, evaluated in ``O(n K)`` (``O(n K^2)`` with conditional events). Its
supergradient in ``x_{g,e}`` is ``-(V_{g,e} / W) (R_{g,e} - r_e)`` (minus the ``eps`` term): the
rate gaps of the argmin rule. The LP optimum equals ``max_x h``.

:func:`dual_offsets` maximises a smoothed ``h`` (the ``min`` replaced by a soft minimum of
temperature ``tau``; with ``eps > 0`` the ``|x|`` replaced by ``mu log cosh(x / mu)`` for damped
Newton, or split into two bounded halves for L-BFGS-B above ``NEWTON_MAX_X`` variables), first
on a subsample of the atoms, then on the atoms near a tie with the others' contribution (linear
in ``x`` while they keep their class) summed once, lowering ``tau`` step by step. Without
conditional events the passes over the atoms run class-major in single precision
(``_multiclass_flat.py``). The result is only
a starting point: the working-set solve
(:mod:`~fairopt.formulations.constrained_classification.multiclass_working_set`) frees the atoms
near a tie under these offsets with their candidate classes, pins the others, solves the LP
over those columns and certifies every column left out with the LP's own duals, so the
returned optimum is exact.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairopt.formulations.constrained_classification._multiclass_ascent import (
    LBFGS_ITER,
    NEWTON_MAX_X,
    _maximise,
    _newton,
)
from fairopt.formulations.constrained_classification._multiclass_flat import flat_pass, margins_flat

if TYPE_CHECKING:
    from fairopt.formulations.constrained_classification.multiclass_lp import MulticlassTransportLP

__all__ = ["DualProblem", "Prepared", "dual_offsets", "margins", "offsets_from_x"]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

#: temperatures of the subsample and near-tie phases (costs are O(1) numbers)
SAMPLE_TAUS = (1e-2, 3e-3)
TIE_TAUS = (2e-3, 4e-4)
#: atoms in the subsample phase and, at most, in the near-tie phase
SAMPLE_ATOMS = 200_000
#: share of the atoms (nearest a tie) kept at each temperature of ``TIE_TAUS``
TIE_SIZES = (0.2, 0.05)
#: re-selections of the near-tie atoms per temperature
MAX_REPIN = 6
#: from this many atoms on, the dual passes without conditional events run in single precision
SINGLE_MIN = 20_000


class Prepared:
    """Per-atom arrays of an LP computed once for all dual evaluations: expected costs ``S C``,
    the events, their masses per group and pooled, and the groups' weights.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import (
    ...     MulticlassTransportLP, collapse_vectors)
    >>> lp = MulticlassTransportLP(collapse_vectors(np.array([[.9, .1], [.2, .8]]), np.array([0, 1])),
    ...                            2, 1 - np.eye(2), "equal_opportunity")
    >>> Prepared(lp).Vg.round(2).tolist()
    [[0.9, 0.1], [0.2, 0.8]]
    """

    def __init__(self, lp: MulticlassTransportLP) -> None:
        at = lp.atoms
        G = lp.n_groups
        self.K = int(at.scores.shape[1])
        self.scores, self.group = at.scores, at.group
        self.ev_j = np.array([-1 if j is None else j for j, _ in lp.row_events], dtype=np.int64)
        self.ev_k = np.array([k for _, k in lp.row_events], dtype=np.int64)
        self.cond = bool((self.ev_j >= 0).any())
        self.SC: F64 = at.scores @ lp.cost
        self.gw: F64 = np.bincount(at.group, weights=at.weight, minlength=G).astype(np.float64)
        if self.cond:
            self.Vg: F64 = np.stack([np.bincount(at.group, weights=at.weight * (1.0 if j < 0 else at.scores[:, j]),
                                                 minlength=G) for j in self.ev_j], axis=1)
        else:
            self.Vg = np.repeat(self.gw[:, None], self.ev_j.shape[0], axis=1)
        self.V: F64 = self.Vg.sum(axis=0)
        self.live: NDArray[np.bool_] = (self.Vg > 0) & (self.V > 0)[None, :]
        self._SCt: NDArray[np.float32] | None = None

    @property
    def SCt(self) -> NDArray[np.float32]:
        """``S C`` class-major in single precision (``(K, n_atoms)``), for the flat evaluations."""
        if self._SCt is None:
            self._SCt = np.ascontiguousarray(self.SC.T, dtype=np.float32)
        return self._SCt

    def phi(self, rows: I64) -> F64:
        """``phi_e(s)`` of the atoms ``rows`` (``(len(rows), E)``)."""
        return _phi(self.scores[rows], self.ev_j)

    def adjusted_rows(self, D: F64, b: F64, rows: I64) -> F64:
        """Adjusted costs of the atoms ``rows`` under the offsets ``(D, b)``."""
        if rows.shape[0] == self.group.shape[0]:
            return self.adjusted(D, b)
        g = self.group[rows]
        A: F64 = self.SC[rows] + b[g]
        if self.cond:
            for h in np.unique(g):   # a loop over groups, not rows
                sel = np.flatnonzero(g == h)
                A[sel] += self.scores[rows[sel]] @ D[h]
        return A

    def adjusted(self, D: F64, b: F64) -> F64:
        """Adjusted costs of every atom under the offsets ``(D, b)``."""
        A: F64 = self.SC + b[self.group]
        if self.cond:
            order = np.argsort(self.group, kind="stable")
            bounds = np.searchsorted(self.group[order], np.arange(D.shape[0] + 1))
            for g in range(D.shape[0]):   # a loop over groups, not rows
                rows = order[bounds[g]:bounds[g + 1]]
                A[rows] += self.scores[rows] @ D[g]
        return A


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
    SCt : ndarray or None
        Without conditional events: ``S C`` class-major (``(K, n)``), single precision from
        ``SINGLE_MIN`` atoms on (``S`` and ``SC`` are then empty: only ``SCt`` is read).

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
    >>> round(val, 6), (np.round(grad, 6) + 0.0).tolist()     # h(0) is the unconstrained cost 0.25
    (0.25, [0.0, 0.0])
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
    SCt: NDArray[np.float32] | F64 | None = None

    @classmethod
    def from_lp(cls, lp: MulticlassTransportLP, take: I64 | None = None, rescale: bool = False,
                pinned: I64 | None = None, prep: Prepared | None = None) -> DualProblem:
        """The dual of ``lp`` over the atoms ``take`` (all by default); ``pinned`` (one class per
        atom, ``-1`` for none) holds the classes of atoms outside ``take`` fixed. ``rescale``
        scales the taken atoms' weights to their groups' totals (a subsample). ``prep`` caches
        the per-atom arrays across calls."""
        at = lp.atoms
        pr = Prepared(lp) if prep is None else prep
        G, E = lp.n_groups, pr.ev_j.shape[0]
        idx = np.arange(at.n_atoms, dtype=np.int64) if take is None else take
        idx = idx[np.argsort(at.group[idx], kind="stable")]
        w = at.weight[idx].astype(float)
        if rescale:
            sub = np.bincount(at.group[idx], weights=w, minlength=G)
            w = w * np.where(sub > 0, pr.gw / np.where(sub > 0, sub, 1.0), 0.0)[at.group[idx]]
        num, cost0 = np.zeros((G, E)), 0.0
        if pinned is not None:
            p = np.flatnonzero(pinned >= 0)
            wp, kp, gp = at.weight[p], pinned[p], at.group[p]
            cost0 = float(np.dot(wp, pr.SC[p, kp]))
            if pr.cond:
                phi = pr.phi(p)
                for e in range(E):   # a loop over events, not rows
                    hit = kp == pr.ev_k[e]
                    num[:, e] = np.bincount(gp[hit], weights=wp[hit] * phi[hit, e], minlength=G)
            else:   # one event per predicted class
                cnt = np.bincount(gp * pr.K + kp, weights=wp, minlength=G * pr.K).astype(np.float64).reshape(G, pr.K)
                num = cnt[:, pr.ev_k]
        bounds = np.searchsorted(at.group[idx], np.arange(G + 1)).astype(np.int64)
        single = not pr.cond and idx.shape[0] >= SINGLE_MIN   # only the class-major costs are read
        none = np.zeros((0, pr.K))
        return cls(S=none if single else at.scores[idx], SC=none if single else pr.SC[idx], w=w, bounds=bounds,
                   ev_j=pr.ev_j, ev_k=pr.ev_k, Vg=pr.Vg, V=pr.V, live=pr.live, W=float(pr.gw.sum()),
                   eps=float(lp.eps), pinned_num=num, pinned_cost=cost0,
                   SCt=pr.SCt[:, idx] if single else None if pr.cond else np.ascontiguousarray(pr.SC[idx].T))

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return int(self.SC.shape[1])

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
        E = self.live.shape[1]
        G = self.live.shape[0]
        K = self.SC.shape[1]
        D, b = offsets_from_x(self.centred(x), self.ev_j, self.ev_k, K)
        cond = bool((self.ev_j >= 0).any())
        num = self.pinned_num.copy()
        total = self.pinned_cost
        if not cond:   # demographic parity: one vectorised pass over all atoms
            return self._value_grad_flat(x, b, tau)
        for g in range(G):   # a loop over groups, not rows
            lo, hi = int(self.bounds[g]), int(self.bounds[g + 1])
            if hi == lo:
                continue
            A = self.SC[lo:hi] + b[g] + self.S[lo:hi] @ D[g]
            m = A.min(axis=1)
            Z = np.exp((m[:, None] - A) / tau)
            z = Z.sum(axis=1)
            wg = self.w[lo:hi]
            total += float(np.dot(wg, m - tau * np.log(z)))
            wq = Z * (wg / z)[:, None]
            col = wq.sum(axis=0)
            M = self.S[lo:hi].T @ wq
            for e in range(E):   # a loop over events
                j, k = int(self.ev_j[e]), int(self.ev_k[e])
                num[g, e] += col[k] if j < 0 else M[j, k]
        return self._finish(x, num, total)

    def _value_grad_flat(self, x: F64, b: F64, tau: float) -> tuple[float, F64]:
        """``value_grad`` without conditional events: one class-major pass over all atoms."""
        assert self.SCt is not None   # set by from_lp without conditional events
        total, num, _ = flat_pass(self.SCt, self.w, self.bounds, b, self.ev_k, tau, False)
        return self._finish(x, self.pinned_num + num, self.pinned_cost + total)

    def _finish(self, x: F64, num: F64, total: float) -> tuple[float, F64]:
        """Add the pinned atoms' linear part; the gradient from the event numerators."""
        # the pinned atoms' part: cost plus -sum c * num (linear); free atoms' value is in total already
        c = self.centred(x)
        total -= float(np.sum(c * self.pinned_num))
        Ne = num.sum(axis=0)
        grad = -(num - self.Vg * (Ne / np.where(self.V > 0, self.V, 1.0))[None, :]) / self.W
        return total / self.W, grad[self.live]

    def hessian(self, x: F64, tau: float) -> F64:
        """Hessian in ``x`` of the smoothed ``h`` (without the ``eps`` term): per group
        ``-(1/tau) sum_a w_a (J_a^T diag(q_a) J_a - u_a u_a^T) / W`` in the centred duals
        (``J_a`` the derivative of the adjusted costs, ``u_a = J_a^T q_a``), then ``L^T H L``."""
        return self.value_grad_hess(x, tau)[2]

    def value_grad_hess(self, x: F64, tau: float) -> tuple[float, F64, F64]:
        """:meth:`value_grad` and :meth:`hessian` in one pass over the atoms."""
        G, E = self.live.shape
        K = self.SC.shape[1]
        D, b = offsets_from_x(self.centred(x), self.ev_j, self.ev_k, K)
        cond = bool((self.ev_j >= 0).any())
        same_k = self.ev_k[:, None] == self.ev_k[None, :]
        if not cond and self.SCt is not None:   # one class-major pass over all atoms
            total, num, Hc0 = flat_pass(self.SCt, self.w, self.bounds, b, self.ev_k, tau, True)
            assert Hc0 is not None
            Hc = -Hc0 / (tau * self.W)
            num += self.pinned_num
            total += self.pinned_cost
        else:
            Hc, num, total = self._moments(D, b, tau, same_k)
        val, grad = self._finish(x, num, total)
        # c_g = x_g - sum_h Pi_h x_h with Pi_h = diag(V_h / V): L^T blockdiag(Hc) L in blocks
        Pi = np.where(self.live, self.Vg / np.where(self.V > 0, self.V, 1.0)[None, :], 0.0)
        Hsum = Hc.sum(axis=0)
        full = (np.einsum("gh,gef->gehf", np.eye(G), Hc) - Hc[:, :, None, :] * Pi[None, None, :, :]
                - Pi[:, :, None, None] * Hc.transpose(1, 0, 2)[None, :, :, :]
                + Pi[:, :, None, None] * Hsum[None, :, None, :] * Pi[None, None, :, :])
        flat = full.reshape(G * E, G * E)
        keep = np.flatnonzero(self.live.ravel())
        H: F64 = flat[np.ix_(keep, keep)]
        return val, grad, H

    def _moments(self, D: F64, b: F64, tau: float, same_k: NDArray[np.bool_]) -> tuple[F64, F64, float]:
        """Per group Hessian blocks, event numerators and value of the smoothed dual (with
        conditional events: a loop over groups)."""
        G, E = self.live.shape
        cond = bool((self.ev_j >= 0).any())
        Hc = np.zeros((G, E, E))
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
            q = Z / z[:, None]
            phi = _phi(self.S[lo:hi], self.ev_j) if cond else None
            U = q[:, self.ev_k] if phi is None else phi * q[:, self.ev_k]
            num[g] += wg @ U
            near = q.max(axis=1) < 1.0 - 1e-15   # one-hot rows add nothing to the curvature
            if not near.any():
                continue
            U, wg = U[near], wg[near]
            if phi is None:   # one event per class: the first term is diagonal
                T1 = np.diag(wg @ U)
            else:
                T1 = (phi[near].T @ (U * wg[:, None])) * same_k
            Hc[g] = -(T1 - U.T @ (U * wg[:, None])) / (tau * self.W)
        return Hc, num, total

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


def margins(prep: Prepared, D: F64, b: F64) -> tuple[I64, F64]:
    """Argmin class and margin (second smallest minus smallest adjusted cost) of every atom.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import (
    ...     MulticlassTransportLP, collapse_vectors)
    >>> lp = MulticlassTransportLP(collapse_vectors(np.array([[.7, .3], [.2, .8]]), np.array([0, 0])),
    ...                            1, 1 - np.eye(2), "demographic_parity")
    >>> arg, gap = margins(Prepared(lp), np.zeros((1, 2, 2)), np.zeros((1, 2)))
    >>> arg.tolist(), gap.round(2).tolist()
    ([0, 1], [0.4, 0.6])
    """
    A = prep.adjusted(D, b)
    part = np.partition(A, 1, axis=1)
    arg: I64 = np.argmin(A, axis=1).astype(np.int64)
    gap: F64 = part[:, 1] - part[:, 0]
    return arg, gap


def dual_offsets(lp: MulticlassTransportLP, sample_atoms: int = SAMPLE_ATOMS,
                 tie_sizes: tuple[float, ...] = TIE_SIZES, random_state: int = 0, maxiter: int = LBFGS_ITER,
                 min_atoms: int = 2000, prep: Prepared | None = None) -> tuple[F64, F64, dict[str, Any]]:
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
    >>> D, b, info = dual_offsets(lp, sample_atoms=500, min_atoms=300)
    >>> full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    >>> bool(np.abs((b - b.mean(1, keepdims=True)) - (full.b - full.b.mean(1, keepdims=True))).max() < 0.01)
    True
    """
    m = lp.atoms.n_atoms
    rng = np.random.default_rng(random_state)
    info: dict[str, Any] = {"phase_seconds": []}
    t0 = time.perf_counter()
    prep = Prepared(lp) if prep is None else prep
    x = np.zeros(int(DualProblem.from_lp(lp, np.zeros(0, np.int64), prep=prep).n_x))
    if m > sample_atoms:   # 1. a subsample, weights rescaled to the groups' totals
        take = np.sort(rng.choice(m, size=sample_atoms, replace=False)).astype(np.int64)
        sub = DualProblem.from_lp(lp, take, rescale=True, prep=prep)
        x = _maximise(sub, x, SAMPLE_TAUS, maxiter)
        info["sample_atoms"] = sample_atoms
        info["phase_seconds"].append(time.perf_counter() - t0)
    K = lp.atoms.scores.shape[1]
    empty = DualProblem.from_lp(lp, np.zeros(0, np.int64), prep=prep)
    use_newton = empty.n_x <= NEWTON_MAX_X
    for tau, size in zip(TIE_TAUS, tie_sizes, strict=False):   # 2. the atoms nearest a tie, fewer as tau falls
        n_take = max(int(size * m), min_atoms)
        for _ in range(MAX_REPIN):
            if m <= n_take:
                x = _maximise(DualProblem.from_lp(lp, prep=prep), x, (tau,), maxiter)
                break
            # the others keep their argmin class: their part of h is linear in x while no
            # margin beyond the n_take-th closes, so the step stays within half that margin
            D, b = offsets_from_x(empty.centred(x), empty.ev_j, empty.ev_k, K)
            arg, gap = margins(prep, D, b) if prep.cond else margins_flat(prep.SCt, lp.atoms.group, b)
            part = np.argpartition(gap, n_take)
            take = part[:n_take].astype(np.int64)
            radius = 0.5 * float(gap[part[n_take]])   # the smallest margin not taken
            pinned = arg.copy()
            pinned[take] = -1
            tie = DualProblem.from_lp(lp, np.sort(take), pinned=pinned, prep=prep)
            if not use_newton:
                x = _maximise(tie, x, (tau,), maxiter)
                break
            x, hit = _newton(tie, x, tau, radius)
            info["repins"] = info.get("repins", 0) + 1
            if not hit:
                break
        info["phase_seconds"].append(time.perf_counter() - t0)
    info["tie_atoms"] = [min(max(int(s * m), min_atoms), m) for s in tie_sizes]
    D, b = offsets_from_x(empty.centred(x), empty.ev_j, empty.ev_k, K)
    return D, b, info
