"""Sufficient statistics of a post-processing sample: unique (cell, score) atoms with weights.

Every randomized-threshold model in this package depends on the data only through, for each
cell (a group, or a group crossed with a binary sensitive indicator), the multiset of scores
with their total weight, and for label-based constraints the weight of positive labels at each
score. :func:`collapse_atoms` computes these in one sort, so that neither the native solvers nor
the LP/QP back ends ever see more variables than there are distinct (cell, score) pairs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.stats._atoms import ScoreAtoms as ScoreAtoms

# merge_atoms is re-exported: the post-processing statistics import it from here
from fairopt.stats._atoms import merge_atoms as merge_atoms

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def collapse_atoms(scores: ArrayLike, cells: ArrayLike, n_cells: int | None = None,
                   sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None,
                   keep_rows: bool = False, allow_empty: bool = False) -> ScoreAtoms:
    """Collapse rows to unique ``(cell, score)`` atoms.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Scores ``f(x_i)``.
    cells : array-like of int, shape (n,)
        Cell code of every row, in ``0 .. n_cells - 1``.
    n_cells : int, optional
        Number of cells (default ``max(cells) + 1``). Every cell must contain at least one row.
    sample_weight : array-like of float, shape (n,), optional
        Non-negative row weights (default 1).
    labels : array-like of {0, 1}, shape (n,), optional
        Binary labels; when given, the positive weight of each atom is also collected.
    keep_rows : bool, default False
        Also return the atom index of every row.
    allow_empty : bool, default False
        Accept cells without rows (otherwise a :class:`DataValidationError`).

    Returns
    -------
    ScoreAtoms

    Examples
    --------
    >>> import numpy as np
    >>> atoms = collapse_atoms(np.array([0.2, 0.2, 0.7]), np.array([0, 0, 1]))
    >>> atoms.n_atoms, atoms.n_cells, atoms.weight.tolist()
    (2, 2, [2.0, 1.0])
    """
    f = np.asarray(scores, dtype=float).reshape(-1)
    g = np.asarray(cells).reshape(-1)
    if g.shape != f.shape:
        raise DataValidationError(f"scores ({f.shape[0]} rows) and group codes ({g.shape[0]} rows) "
                                  "must have the same length.")
    if f.size == 0:
        raise DataValidationError("the post-processing sample is empty; pass at least one row per group.")
    g = g.astype(np.int64, copy=False)
    n_cells = int(g.max()) + 1 if n_cells is None else int(n_cells)
    if g.min() < 0 or g.max() >= n_cells:
        raise DataValidationError(f"group codes must lie in 0 .. {n_cells - 1}.")
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(-1)
    if w is not None:
        if w.shape != f.shape or not np.isfinite(w).all() or (w < 0).any():
            raise DataValidationError("sample_weight must be finite, non-negative and one per row.")
        if (w == 0).any():  # zero-weight rows carry no information; drop them before sorting
            keep = w > 0
            f, g, w = f[keep], g[keep], w[keep]
            labels = None if labels is None else np.asarray(labels).reshape(-1)[keep]
            if keep_rows:
                raise DataValidationError("keep_rows needs strictly positive sample weights.")
    gsmall = g.astype(np.uint8 if n_cells <= 256 else np.uint16 if n_cells <= 65536 else np.int64)
    if w is None and labels is None and not keep_rows:
        return _collapse_counts(f, gsmall, n_cells, allow_empty)
    # two-pass sort: by score, then stably by cell -> cell-major, score-ascending. Small
    # integer codes make the second pass a radix sort.
    order = np.argsort(f)
    order = order[np.argsort(gsmall[order], kind="stable")]
    fs, gs = f[order], g[order]
    new = np.empty(f.shape[0], dtype=bool)
    new[0] = True
    np.logical_or(fs[1:] != fs[:-1], gs[1:] != gs[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    weight = (np.diff(np.append(starts, f.shape[0])).astype(float) if w is None
              else np.add.reduceat(w[order], starts))
    positive = None
    if labels is not None:
        yv = np.asarray(labels, dtype=float).reshape(-1)
        yw = yv[order] if w is None else yv[order] * w[order]
        positive = np.add.reduceat(yw, starts)
    cell = gs[starts]
    offsets = np.searchsorted(cell, np.arange(n_cells + 1), side="left")
    _check_cells(np.diff(offsets), allow_empty)
    row_atom = None
    if keep_rows:
        row_atom = np.empty(f.shape[0], dtype=np.int64)
        row_atom[order] = np.cumsum(new) - 1
    return ScoreAtoms(cell=cell, score=fs[starts], weight=weight, positive=positive,
                      offsets=offsets, row_atom=row_atom)


def _check_cells(counts: np.ndarray, allow_empty: bool) -> None:
    if (counts == 0).any() and not allow_empty:
        missing = np.flatnonzero(counts == 0).tolist()
        raise DataValidationError(f"cells {missing} have no rows in the post-processing sample; "
                                  "every group must be represented.")


def _collapse_counts(f: np.ndarray, g: np.ndarray, n_cells: int, allow_empty: bool) -> ScoreAtoms:
    """Unweighted, unlabelled atoms without a row permutation: radix-partition the scores by
    cell, sort each cell's scores by value (several times faster than an argsort), count runs."""
    n = f.shape[0]
    if n_cells > 1:
        order = np.argsort(g, kind="stable")      # radix sort of the small codes
        # cell bounds from the sorted codes (a bincount would first copy g to intp)
        starts = np.searchsorted(g.take(order), np.arange(n_cells, dtype=g.dtype), side="left")
        bounds = np.append(starts, n).astype(np.int64)
        _check_cells(np.diff(bounds), allow_empty)
        fs = f.take(order)
        del order
    else:
        bounds = np.array([0, n])
        fs = f.copy()
    counts = np.diff(bounds)
    for k in range(n_cells):   # a loop over cells, not rows
        fs[bounds[k]:bounds[k + 1]].sort()
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(fs[1:], fs[:-1], out=new[1:])
    inner = bounds[1:-1]
    new[inner[inner < n]] = True          # an atom never spans two cells
    if new.all():                         # every score distinct within its cell: unit weights
        score, weight, per_cell = fs, np.broadcast_to(1.0, (n,)), counts
    else:
        starts = np.flatnonzero(new)
        score, weight = fs[starts], np.diff(np.append(starts, n)).astype(float)
        per_cell = np.diff(np.searchsorted(starts, bounds, side="left"))
    offsets = np.concatenate([[0], np.cumsum(per_cell)])
    cell = np.repeat(np.arange(n_cells, dtype=np.int64), per_cell)
    return ScoreAtoms(cell=cell, score=score, weight=weight, positive=None, offsets=offsets)
