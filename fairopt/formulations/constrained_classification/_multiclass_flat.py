"""Class-major, single-precision evaluation of the smoothed small dual without conditional
events (demographic parity): the O(n K) pass that dominates the scale path.

The atoms' expected costs are held as a ``(K, n)`` float32 array (atoms sorted by group), so
the per-atom minimum and sum over the classes are ``K`` contiguous element-wise operations and
the exponentials run vectorised in single precision. Sums over atoms (values, rates, the
Hessian's moments) accumulate in double precision per group. The result is a warm start for
the exact certified LP, so single-precision rounding (about ``1e-7`` on an adjusted cost) costs
nothing but a negligible widening of the near-tie set.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

__all__ = ["flat_pass", "margins_flat"]


def flat_pass(SCt: F32 | F64, w: F64, bounds: I64, b: F64, ev_k: I64, tau: float,
              hessian: bool) -> tuple[float, F64, F64 | None]:
    """Smoothed ``sum_a w_a softmin_k (s_a C + b_g)_k`` over the atoms (in the precision of
    ``SCt``), the event numerators
    ``sum_a w_a q_{a, k_e}`` per (group, event) and, with ``hessian``, each group's
    ``sum_a w_a (diag(q_a) - q_a q_a^T)`` restricted to the events (``(G, E, E)``).

    Examples
    --------
    >>> import numpy as np
    >>> SCt = np.array([[0.2, 0.5], [0.3, 0.1]], dtype=np.float32)   # 2 classes x 2 atoms
    >>> total, num, H = flat_pass(SCt, np.ones(2), np.array([0, 2]), np.zeros((1, 2)),
    ...                           np.array([0, 1]), 1e-4, True)
    >>> round(total, 6), num.round(6).tolist(), float(np.abs(H).max()) < 1e-12
    (0.3, [[1.0, 1.0]], True)
    """
    K = SCt.shape[0]
    G = bounds.shape[0] - 1
    reps = np.diff(bounds)
    dt = SCt.dtype
    A = SCt + np.repeat(b.T.astype(dt), reps, axis=1)
    m = A.min(axis=0)
    A -= m
    A *= dt.type(-1.0 / tau)
    np.exp(A, out=A)
    z = A.sum(axis=0)
    total = float(np.dot(w, m.astype(np.float64) - tau * np.log(z).astype(np.float64)))
    if hessian:   # the moments in double precision: each q_a sums to 1 to rounding, so every
        # group's block keeps its exact null direction (a shift of all its classes' costs)
        q = A.astype(np.float64)
        q /= q.sum(axis=0)
        wq = q * w
    else:
        A /= z
        q = A
        wq = q * w.astype(dt)
    nonempty = np.flatnonzero(reps > 0)
    col = np.zeros((G, K))
    if nonempty.size:
        col[nonempty] = np.add.reduceat(wq.astype(np.float64, copy=False), bounds[nonempty], axis=1).T
    num: F64 = col[:, ev_k]
    if not hessian:
        return total, num, None
    E = ev_k.shape[0]
    Hc = np.zeros((G, E, E))
    for g in nonempty:   # a loop over groups, not rows
        lo, hi = int(bounds[g]), int(bounds[g + 1])
        M = wq[:, lo:hi] @ q[:, lo:hi].T
        Hc[g] = np.diag(col[g, ev_k]) - M[np.ix_(ev_k, ev_k)]
    return total, num, Hc


def margins_flat(SCt: F32, group: I64, b: F64) -> tuple[I64, F32]:
    """Argmin class and margin (second smallest minus smallest of ``(s C)_k + b_{g,k}``) of
    every atom, in single precision (``SCt`` class-major, atoms in their own order).

    Examples
    --------
    >>> import numpy as np
    >>> SCt = np.array([[0.3, 0.8], [0.7, 0.2]], dtype=np.float32)
    >>> arg, gap = margins_flat(SCt, np.array([0, 0]), np.zeros((1, 2)))
    >>> arg.tolist(), [round(float(v), 2) for v in gap]
    ([0, 1], [0.4, 0.6])
    """
    K, n = SCt.shape
    bt = b.T.astype(np.float32)
    m1 = np.full(n, np.inf, dtype=np.float32)
    m2 = np.full(n, np.inf, dtype=np.float32)
    arg = np.zeros(n, dtype=np.int64)
    for k in range(K):   # a loop over classes, not rows
        a = SCt[k] + bt[k][group]
        np.minimum(m2, np.maximum(m1, a), out=m2)
        arg[a < m1] = k
        np.minimum(m1, a, out=m1)
    gap: F32 = m2 - m1
    return arg, gap
