"""Atoms of the fair multiclass LP: distinct (group, score vector) pairs with summed weights.

Rows sharing a group and a score vector get the same decision at an optimum of the LP of
:mod:`~fairopt.formulations.constrained_classification.multiclass_lp`, so the LP is written over
these atoms. :func:`collapse_vectors` finds them with a 64-bit hash of each row
(:func:`row_keys`), checking the rows themselves against a hash collision.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["VectorAtoms", "collapse_vectors", "row_keys"]

_MIX = np.uint64(0xFF51AFD7ED558CCD)
_SHIFT = np.uint64(33)


def row_keys(codes: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(group, score vector)`` of every row as a float matrix (``-0.0`` made ``0.0``) and a
    64-bit hash of its bits (a multiply-xorshift mix, column by column).

    Examples
    --------
    >>> import numpy as np
    >>> key, h = row_keys(np.array([0, 0, 1]), np.array([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]))
    >>> key.shape, bool(h[0] == h[1]), bool(h[0] != h[2])
    ((3, 3), True, True)
    """
    key = np.empty((S.shape[0], S.shape[1] + 1))
    key[:, 0] = codes
    np.add(S, 0.0, out=key[:, 1:])
    bits = key.view(np.uint64)
    h = np.full(key.shape[0], 0xCBF29CE484222325, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(bits.shape[1]):   # a loop over columns, not rows
            h ^= bits[:, j]
            h *= _MIX
            h ^= h >> _SHIFT
    return key, h


@dataclass
class VectorAtoms:
    """Distinct ``(group, score vector)`` pairs with summed weights.

    Examples
    --------
    >>> import numpy as np
    >>> at = collapse_vectors(np.array([[.5, .5]]), np.array([0]))
    >>> int(at.lookup(np.array([0, 0]), np.array([[.5, .5], [.4, .6]]))[1])
    -1

    ``hashes`` are the atoms' row hashes (:func:`row_keys`); :meth:`lookup` finds the atom of new
    rows (``-1`` for unseen vectors), comparing the vectors themselves, not only their hashes.
    """

    group: np.ndarray
    scores: np.ndarray
    weight: np.ndarray
    hashes: np.ndarray
    row_atom: np.ndarray | None = None

    @property
    def n_atoms(self) -> int:
        """Number of atoms."""
        return int(self.weight.shape[0])

    def lookup(self, codes: np.ndarray, S: np.ndarray) -> np.ndarray:
        """Atom index of every row, ``-1`` where the (group, score vector) was not seen."""
        key, h = row_keys(codes, S)
        order = np.argsort(self.hashes, kind="stable")
        pos = np.minimum(np.searchsorted(self.hashes[order], h), self.n_atoms - 1)
        cand = order[pos]
        hit = (self.hashes[cand] == h) & (self.group[cand] == codes) & (self.scores[cand] == key[:, 1:]).all(axis=1)
        return np.where(hit, cand, -1)


def collapse_vectors(S: ArrayLike, groups: ArrayLike, sample_weight: ArrayLike | None = None,
                     keep_rows: bool = False) -> VectorAtoms:
    """Collapse rows to atoms: one per distinct (group, score vector), weights summed.

    Rows are grouped by a 64-bit hash (a hash table, ``O(n)``), and every row is then checked
    against its atom's vector; on a hash collision the grouping falls back to a sort of the rows.

    Examples
    --------
    >>> import numpy as np
    >>> at = collapse_vectors(np.array([[.2, .8], [.2, .8], [.5, .5]]), np.array([0, 0, 0]))
    >>> at.n_atoms, sorted(at.weight.tolist())
    (2, [1.0, 2.0])
    """
    S = np.asarray(S, dtype=float)
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    w = np.ones(S.shape[0]) if sample_weight is None else np.asarray(sample_weight, float).reshape(-1)
    key, h = row_keys(g, S)
    inv, uniq = pd.factorize(h)
    if uniq.shape[0] == S.shape[0]:   # every hash distinct: every row is its own atom, no collision
        return VectorAtoms(group=g.copy(), scores=S.copy(), weight=w.astype(float, copy=True), hashes=h,
                           row_atom=np.arange(S.shape[0]) if keep_rows else None)
    first = np.empty(uniq.shape[0], dtype=np.int64)
    first[inv[::-1]] = np.arange(S.shape[0] - 1, -1, -1)
    if not (key[first][inv] == key).all():   # a hash collision: group by sorting the rows
        void = np.ascontiguousarray(key).view(np.dtype((np.void, key.itemsize * key.shape[1]))).ravel()
        _, first, inv = np.unique(void, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    weight = np.bincount(inv, weights=w, minlength=first.shape[0])
    return VectorAtoms(group=g[first], scores=S[first], weight=weight, hashes=h[first],
                       row_atom=inv if keep_rows else None)
