"""Atoms of a score sample: distinct ``(cell, score)`` pairs with their total weight, the
sufficient statistics of every randomized-threshold model (see
:mod:`fairopt.formulations.constrained_classification.atoms`, which builds them from rows)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ScoreAtoms", "merge_atoms"]


@dataclass(frozen=True)
class ScoreAtoms:
    """Distinct ``(cell, score)`` pairs with their total weight.

    Atoms are sorted by cell, then by score (ascending), so cell ``k`` occupies the contiguous
    slice ``offsets[k]:offsets[k + 1]``.

    Attributes
    ----------
    cell : ndarray of int, shape (m,)
        Cell code of each atom, in ``0 .. n_cells - 1``.
    score : ndarray of float, shape (m,)
        Score ``f`` of each atom.
    weight : ndarray of float, shape (m,)
        Total row weight ``c_j`` of the atom (row counts when rows are unweighted; a read-only
        broadcast 1 when every unweighted score is distinct, see :attr:`unit_weight`).
    positive : ndarray of float, shape (m,) or None
        Total weight of rows with label 1 at the atom (``None`` when no labels were given).
    offsets : ndarray of int, shape (n_cells + 1,)
        Start of each cell's slice.
    row_atom : ndarray of int, shape (n,) or None
        Atom index of every input row (only when requested), to map atom values back to rows.

    Examples
    --------
    >>> import numpy as np
    >>> atoms = merge_atoms(np.array([1, 0, 1, 0]), np.array([0.4, 0.1, 0.4, 0.3]), np.ones(4))
    >>> atoms.n_atoms, atoms.n_cells, atoms.weight.tolist()     # the two rows (1, 0.4) are one atom
    (3, 2, [1.0, 1.0, 2.0])
    >>> atoms.score[atoms.cell_slice(0)].tolist()                # cell 0's atoms, by score
    [0.1, 0.3]
    """

    cell: np.ndarray
    score: np.ndarray
    weight: np.ndarray
    positive: np.ndarray | None
    offsets: np.ndarray
    row_atom: np.ndarray | None = None

    @property
    def n_atoms(self) -> int:
        """Number of distinct ``(cell, score)`` atoms."""
        return int(self.score.shape[0])

    @property
    def n_cells(self) -> int:
        """Number of cells (groups)."""
        return int(self.offsets.shape[0] - 1)

    @property
    def unit_weight(self) -> bool:
        """Every atom has weight 1 and ``weight`` is a read-only broadcast 1 (distinct unweighted
        scores: no full-length array of ones is stored)."""
        return self.weight.ndim == 1 and self.weight.strides == (0,)

    @property
    def cell_weight(self) -> np.ndarray:
        """Total weight ``n_k`` of each cell."""
        return np.bincount(self.cell, weights=self.weight, minlength=self.n_cells)

    def per_atom(self, values: ArrayLike) -> np.ndarray:
        """Broadcast one value per cell to every atom (cells are contiguous: a repeat, not a gather)."""
        return np.repeat(np.asarray(values, dtype=float), np.diff(self.offsets))

    def cell_slice(self, k: int) -> slice:
        """Positions of cell ``k``'s atoms in the atom arrays.

        Parameters
        ----------
        k : int
            Cell index.

        Returns
        -------
        slice
            ``offsets[k]:offsets[k + 1]``.
        """
        return slice(int(self.offsets[k]), int(self.offsets[k + 1]))


def merge_atoms(cell: ArrayLike, score: ArrayLike, weight: ArrayLike, positive: ArrayLike | None = None,
                n_cells: int | None = None) -> ScoreAtoms:
    """Merge weighted ``(cell, score)`` pairs into atoms (duplicates summed, zero weights dropped).

    The combine step of chunked and distributed statistics (:mod:`fairopt.stats`): atoms of
    several chunks, concatenated, merge to the atoms of the whole sample. Cells may be empty.

    Parameters
    ----------
    cell : array of int, shape (m,)
    score : array of float, shape (m,)
    weight : array of float, shape (m,)
        Non-negative weights.
    positive : array of float, shape (m,), optional
        Weight of label-1 rows of each pair.
    n_cells : int, optional
        Number of cells (default ``max(cell) + 1``).

    Examples
    --------
    >>> import numpy as np
    >>> at = merge_atoms(np.array([1, 0, 0]), np.array([0.2, 0.5, 0.5]), np.array([1.0, 2.0, 3.0]))
    >>> at.cell.tolist(), at.score.tolist(), at.weight.tolist(), at.offsets.tolist()
    ([0, 1], [0.5, 0.2], [5.0, 1.0], [0, 1, 2])
    """
    c = np.asarray(cell, dtype=np.int64).reshape(-1)
    f = np.asarray(score, dtype=float).reshape(-1)
    w = np.asarray(weight, dtype=float).reshape(-1)
    p = None if positive is None else np.asarray(positive, dtype=float).reshape(-1)
    n_cells = (int(c.max()) + 1 if c.size else 0) if n_cells is None else int(n_cells)
    keep = w > 0
    if not keep.all():
        c, f, w = c[keep], f[keep], w[keep]
        p = None if p is None else p[keep]
    order = np.lexsort((f, c))
    c, f, w = c[order], f[order], w[order]
    p = None if p is None else p[order]
    if c.size:
        new = np.empty(c.size, dtype=bool)
        new[0] = True
        np.logical_or(f[1:] != f[:-1], c[1:] != c[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        c, f, w = c[starts], f[starts], np.add.reduceat(w, starts)
        p = None if p is None else np.add.reduceat(p, starts)
    offsets = np.searchsorted(c, np.arange(n_cells + 1), side="left")
    return ScoreAtoms(cell=c, score=f, weight=w, positive=p, offsets=offsets)
