"""Linear representations of the balance measures over ``K`` loads ``u`` (see
:func:`fairopt.constraints.balance`).

A representation is a set of auxiliary variable blocks, rows ``lb <= C u + sum_h M_h h <= ub``
and the measure's *value*, a linear expression ``c'u + sum_h e_h'h`` that equals the measure at
every optimum that minimises it (and bounds it from above at every feasible point):

- ``minmax``: ``z >= u_k``; value ``z``.
- ``range``: ``hi >= u_k >= lo``; value ``hi - lo``.
- ``mad``: ``e_k >= |u_k - mean(u)|``; value ``sum_k e_k / K``.
- ``gini`` numerator ``N(u) = sum_{k,l} |u_k - u_l|`` (so ``Gini = N / (2 K sum_k u_k)``):

  * ``pairwise``: ``D_kl >= |u_k - u_l|`` for ``k < l``; value ``2 sum D`` (``K(K-1)/2``
    variables, ``K(K-1)`` rows);
  * ``sorted``: with ``s`` the loads sorted ascending, ``N = 2 sum_i (2i - K - 1) s_i``. A
    sorting network (Batcher's odd-even merge sort, ``O(K log^2 K)`` comparators) carries
    ``u`` to outputs ``y``; each comparator ``(a, b) -> (l, h)`` is relaxed to
    ``l <= a, l <= b, l + h = a + b`` and the outputs are required sorted (``y_i <= y_{i+1}``).
    A relaxed comparator is an exact one followed by a transfer from the lower to the higher
    output, which can only raise the Schur-convex ``N``, so ``N(y) = 2 sum_i (2i-K-1) y_i >=
    N(u)`` at every feasible point, with equality for exact comparators: the rows bound the
    Gini numerator exactly, with ``O(K log^2 K)`` rows instead of ``O(K^2)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np
import scipy.sparse as sp


@dataclass
class Rows:
    """Auxiliary blocks, rows and value of one representation (see the module docstring)."""

    K: int
    aux: dict[str, tuple[int, float | None]] = field(default_factory=dict)
    rows: list[tuple[str, sp.csr_matrix | None, dict[str, sp.csr_matrix], np.ndarray, np.ndarray]] = \
        field(default_factory=list)
    value_u: np.ndarray | None = None
    value_aux: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, name: str, C: sp.spmatrix | None, aux: dict[str, sp.spmatrix], lb: float | np.ndarray,
            ub: float | np.ndarray) -> None:
        r = (C.shape[0] if C is not None else next(iter(aux.values())).shape[0])
        self.rows.append((name, None if C is None else sp.csr_matrix(C),
                          {k: sp.csr_matrix(v) for k, v in aux.items()},
                          np.broadcast_to(np.asarray(lb, float), (r,)).copy(),
                          np.broadcast_to(np.asarray(ub, float), (r,)).copy()))

    @property
    def n_rows(self) -> int:
        return sum(lb.shape[0] for _, _, _, lb, _ in self.rows)


def _eye(K: int) -> sp.csr_matrix:
    return sp.identity(K, format="csr")


def _col(K: int) -> sp.csr_matrix:
    return sp.csr_matrix(np.ones((K, 1)))


def minmax(K: int) -> Rows:
    r = Rows(K, aux={"max": (1, None)})
    r.add("under_max", -_eye(K), {"max": _col(K)}, 0.0, np.inf)
    r.value_aux = {"max": np.ones(1)}
    return r


def spread(K: int) -> Rows:
    r = Rows(K, aux={"hi": (1, None), "lo": (1, None)})
    r.add("under_hi", -_eye(K), {"hi": _col(K)}, 0.0, np.inf)
    r.add("over_lo", _eye(K), {"lo": -_col(K)}, 0.0, np.inf)
    r.value_aux = {"hi": np.ones(1), "lo": -np.ones(1)}
    return r


def mad(K: int) -> Rows:
    r = Rows(K, aux={"dev": (K, 0.0)})
    centre = sp.csr_matrix(np.eye(K) - np.full((K, K), 1.0 / K))
    r.add("dev_above", -centre, {"dev": _eye(K)}, 0.0, np.inf)
    r.add("dev_below", centre, {"dev": _eye(K)}, 0.0, np.inf)
    r.value_aux = {"dev": np.full(K, 1.0 / K)}
    return r


def gini_pairwise(K: int) -> Rows:
    k, m = np.triu_indices(K, 1)
    P = k.size
    diff = sp.csr_matrix((np.r_[np.ones(P), -np.ones(P)], (np.r_[np.arange(P), np.arange(P)], np.r_[k, m])),
                         shape=(P, K))
    r = Rows(K, aux={"pair": (P, 0.0)})
    r.add("pair_above", -diff, {"pair": _eye(P)}, 0.0, np.inf)
    r.add("pair_below", diff, {"pair": _eye(P)}, 0.0, np.inf)
    r.value_aux = {"pair": np.full(P, 2.0)}
    return r


@cache
def sorting_network(K: int) -> np.ndarray:
    """Comparators ``(i, j)``, ``i < j``, of Batcher's odd-even merge sort on ``K`` wires (the
    network for the next power of two, without the comparators that touch a padding wire,
    which would hold ``+inf`` and never move)."""
    n = 1
    while n < K:
        n *= 2
    out = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        out.append((i + j, i + j + k))
            k //= 2
        p *= 2
    net = np.array(out, dtype=np.int64).reshape(-1, 2)
    return net[net[:, 1] < K]


def gini_sorted(K: int) -> Rows:
    net = sorting_network(K)
    m = net.shape[0]
    r = Rows(K, aux={"cmp": (2 * m, None)})
    # wire w currently holds: a load u_k (src = -1 - k) or comparator output column c (src = c)
    wire = -1 - np.arange(K)
    Triplets = list[tuple[int, int, float]]
    Cl_u: Triplets = []
    Cl_a: Triplets = []
    Ch_u: Triplets = []
    Ch_a: Triplets = []   # (row, col, val)
    for c, (i, j) in enumerate(net):
        lo, hi = 2 * c, 2 * c + 1
        for row_u, row_a, src, row, sign in ((Cl_u, Cl_a, wire[i], 2 * c, -1.0), (Cl_u, Cl_a, wire[j], 2 * c + 1, -1.0),
                                             (Ch_u, Ch_a, wire[i], c, -1.0), (Ch_u, Ch_a, wire[j], c, -1.0)):
            if src < 0:
                row_u.append((row, -1 - src, sign))
            else:
                row_a.append((row, src, sign))
        Cl_a += [(2 * c, lo, 1.0), (2 * c + 1, lo, 1.0)]       # l - a <= 0, l - b <= 0
        Ch_a += [(c, lo, 1.0), (c, hi, 1.0)]                     # l + h - a - b = 0
        wire[i], wire[j] = lo, hi

    def mat(trip: list[tuple[int, int, float]], rows: int, cols: int) -> sp.csr_matrix:
        if not trip:
            return sp.csr_matrix((rows, cols))
        a = np.array(trip)
        return sp.csr_matrix((a[:, 2], (a[:, 0].astype(int), a[:, 1].astype(int))), shape=(rows, cols))
    if m:
        r.add("cmp_low", mat(Cl_u, 2 * m, K), {"cmp": mat(Cl_a, 2 * m, 2 * m)}, -np.inf, 0.0)
        r.add("cmp_sum", mat(Ch_u, m, K), {"cmp": mat(Ch_a, m, 2 * m)}, 0.0, 0.0)
    # outputs y_i (wire i) sorted, and the numerator 2 sum_i (2i - K - 1) y_i
    coef = 2.0 * (2.0 * np.arange(1, K + 1) - K - 1)
    out_u, out_a = np.zeros(K), np.zeros(2 * m)
    Su: Triplets = []
    Sa: Triplets = []
    for i in range(K):
        (out_u.__setitem__(-1 - wire[i], out_u[-1 - wire[i]] + coef[i]) if wire[i] < 0
         else out_a.__setitem__(wire[i], out_a[wire[i]] + coef[i]))
    for i in range(K - 1):   # y_{i+1} - y_i >= 0
        for w, s in ((wire[i + 1], 1.0), (wire[i], -1.0)):
            (Su if w < 0 else Sa).append((i, -1 - w if w < 0 else w, s))
    if K > 1:
        r.add("sorted", mat(Su, K - 1, K), {"cmp": mat(Sa, K - 1, 2 * m)}, 0.0, np.inf)
    r.value_u, r.value_aux = out_u, {"cmp": out_a}
    return r


def build(measure: str, K: int, form: str) -> Rows:
    """The representation of ``measure`` (``form`` picks the Gini rows: pairwise, sorted, auto)."""
    if measure == "minmax":
        return minmax(K)
    if measure == "range":
        return spread(K)
    if measure == "mad":
        return mad(K)
    if form == "auto":
        form = auto_form(K)
    return gini_pairwise(K) if form == "pairwise" else gini_sorted(K)


def auto_form(K: int) -> str:
    """The Gini form with fewer rows for ``K`` loads: ``pairwise`` (``K(K-1)``) up to ``K = 13``,
    then ``sorted`` (``3 m + K - 1`` for ``m`` comparators; 8,917 rows against 39,800 at ``K = 200``)."""
    return "pairwise" if K * (K - 1) <= 3 * sorting_network(K).shape[0] + K - 1 else "sorted"
