"""Birkhoff–von Neumann decomposition of a (top-k) doubly stochastic ranking matrix."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass
class BirkhoffDecomposition:
    """``P = sum_t weights[t] * Perm(orders[t])``, where ``orders[t, j]`` is the item shown at
    position ``j`` in the ``t``-th deterministic ranking.

    Attributes
    ----------
    weights : ndarray of shape (terms,)
        Probabilities (positive, summing to 1).
    orders : ndarray of shape (terms, n_positions)
        Item at each position of each ranking.
    n_items : int

    Examples
    --------
    >>> import numpy as np
    >>> d = birkhoff_decomposition(np.array([[0.5, 0.5], [0.5, 0.5]]))
    >>> d.weights.tolist(), float(np.abs(d.matrix() - 0.5).max())
    ([0.5, 0.5], 0.0)
    """

    weights: np.ndarray
    orders: np.ndarray
    n_items: int

    def __len__(self) -> int:
        return int(self.weights.shape[0])

    def matrix(self) -> np.ndarray:
        """The ranking matrix ``sum_t w_t Perm_t`` (``n_items x n_positions``)."""
        T, m = self.orders.shape
        P = np.zeros((self.n_items, m))
        np.add.at(P, (self.orders, np.broadcast_to(np.arange(m), (T, m))),
                  np.broadcast_to(self.weights[:, None], (T, m)))
        return P

    def sample(self, size: int = 1, random_state: int | np.random.Generator | None = None) -> np.ndarray:
        """Draw ``size`` deterministic rankings (rows of item indices) with the decomposition's
        probabilities; their expected exposure is exactly that of ``P``.

        Examples
        --------
        >>> d = birkhoff_decomposition(np.eye(2))
        >>> d.sample(2, random_state=0).tolist()
        [[0, 1], [0, 1]]
        """
        rng = np.random.default_rng(random_state)
        return self.orders[rng.choice(len(self), size=int(size), p=self.weights)]


def birkhoff_decomposition(P: ArrayLike, tol: float = 1e-12) -> BirkhoffDecomposition:
    """Decompose a doubly stochastic ``P`` (``n x n``, or ``n x k`` top-k with row sums <= 1)
    into at most ``(n-1)^2 + 1`` permutations with probabilities.

    Each step finds a perfect matching on the support of the remainder with
    :func:`scipy.optimize.linear_sum_assignment` (largest entries preferred), removes the
    matching's smallest entry times the permutation, and so zeroes at least one entry. A top-k
    matrix is completed to ``n x n`` by spreading each item's unused mass over ``n - k`` slack
    positions, and the permutations are cut back to ``k`` positions.

    Parameters
    ----------
    P : array-like of shape (n, k)
    tol : float
        Entries below ``tol`` count as zero.

    Returns
    -------
    BirkhoffDecomposition

    Raises
    ------
    DataValidationError
        ``P`` is not (top-k) doubly stochastic to 1e-9.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.7, 0.3, 0.0], [0.3, 0.4, 0.3], [0.0, 0.3, 0.7]])
    >>> d = birkhoff_decomposition(P)
    >>> len(d) <= 5, round(float(d.weights.sum()), 12), float(np.abs(d.matrix() - P).max()) < 1e-12
    (True, 1.0, True)
    """
    from scipy.optimize import linear_sum_assignment
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] > P.shape[0] or P.size == 0:
        raise DataValidationError(f"P must be an n x k matrix with k <= n, got shape {P.shape}.")
    n, k = P.shape
    rows, cols = P.sum(axis=1), P.sum(axis=0)
    bad = (not np.isfinite(P).all() or (P < -1e-9).any() or np.abs(cols - 1).max() > 1e-9
           or (rows > 1 + 1e-9).any() or (k == n and np.abs(rows - 1).max() > 1e-9))
    if bad:
        raise DataValidationError("P is not doubly stochastic to 1e-9 (entries >= 0, every position "
                                  "filled once, every item shown at most once): "
                                  f"column sums in [{cols.min():.3g}, {cols.max():.3g}], row sums in "
                                  f"[{rows.min():.3g}, {rows.max():.3g}].")
    R = np.clip(P, 0.0, None)
    if k < n:
        R = np.hstack([R, np.outer(np.clip(1.0 - R.sum(axis=1), 0.0, None), np.full(n - k, 1.0 / (n - k)))])
    R[R < tol] = 0.0
    weights, orders = [], []
    big = float(n + 1)
    for _ in range((n - 1) ** 2 + 1):
        support = R > tol
        if not support.any():
            break
        item, pos = linear_sum_assignment(np.where(support, -R, big))
        if not support[item, pos].all():
            break  # no perfect matching left: only round-off remains
        theta = R[item, pos].min()
        R[item, pos] -= theta  # the smallest matched entry becomes exactly 0
        R[R < tol] = 0.0
        order = np.empty(n, dtype=np.int64)
        order[pos] = item
        weights.append(theta)
        orders.append(order[:k])
    w = np.asarray(weights)
    out = BirkhoffDecomposition(w, np.asarray(orders, dtype=np.int64).reshape(-1, k), n)
    err = np.abs(out.matrix() - P).max() if len(out) else np.inf
    if err > 1e-9:
        raise DataValidationError(f"the decomposition reproduces P only to {err:.2e}; P is not doubly "
                                  "stochastic to the precision required (1e-9).")
    return out
