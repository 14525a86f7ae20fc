"""Score statistics: per-group ranges, histograms on equal bins (the quantised threshold fit) and
exact score atoms."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.stats._atoms import ScoreAtoms, merge_atoms
from fairopt.stats._sources import (
    _check_labels,
    _check_scores,
    _check_weights,
    _codes,
    _group_min_max,
    add_sums,
    map_reduce,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: most bytes the per-group score histograms of a quantised fit may take (``score_bins`` x groups x
#: :data:`HISTOGRAM_BYTES_PER_BIN`); a larger request is refused before any pass over the data
MAX_HISTOGRAM_BYTES = 1 << 30

#: bytes per (group, bin) of a quantised fit: counts and label sums in each chunk's partial
#: histogram, their combined totals, bin centres and the atoms built from them (float64 each)
HISTOGRAM_BYTES_PER_BIN = 64


def check_histogram_size(bins: int, n_groups: int, limit: int | None = None) -> None:
    """Refuse ``bins`` equal bins for ``n_groups`` groups when the histograms would take more than
    ``limit`` bytes (default :data:`MAX_HISTOGRAM_BYTES`), saying how much they would need.

    Examples
    --------
    >>> check_histogram_size(1000, 2)
    >>> check_histogram_size(2**41, 2)
    Traceback (most recent call last):
    ...
    fairopt.errors.DataValidationError: score_bins=2199023255552 for 2 group(s) needs 256.0 TiB ...
    """
    from fairopt._data_checks import _bytes as _bytes_text
    limit = MAX_HISTOGRAM_BYTES if limit is None else limit
    need = float(bins) * max(int(n_groups), 1) * HISTOGRAM_BYTES_PER_BIN
    if need > limit:
        fits = max(2, int(limit // (max(int(n_groups), 1) * HISTOGRAM_BYTES_PER_BIN)))
        raise DataValidationError(
            f"score_bins={bins} for {n_groups} group(s) needs {_bytes_text(need)} of per-group histograms "
            f"({HISTOGRAM_BYTES_PER_BIN} bytes per group and bin), above the limit of {_bytes_text(limit)} "
            f"(fairopt.stats.MAX_HISTOGRAM_BYTES); use at most score_bins={fits} (the quantised optimum is "
            "within 2 / score_bins of the exact one) or score_bins=None for exact scores.")


def score_range(scores: Any, groups: Any, labels: np.ndarray, chunk_rows: int | None = None,
                score_map: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per-group minimum and maximum score (groups without rows get ``+inf`` / ``-inf``).

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = score_range(np.array([0.1, 0.9, 0.5]), np.array([0, 0, 1]), np.array([0, 1]))
    >>> lo.tolist(), hi.tolist()
    ([0.1, 0.5], [0.9, 0.5])
    """
    K = len(labels)

    def part(f: NDArray[Any], g: NDArray[Any]) -> NDArray[np.float64]:
        f, c = _check_scores(f, score_map), _codes(g, labels)
        return np.stack(_group_min_max(f, c, K))

    def comb(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.stack([np.minimum(a[0], b[0]), np.maximum(a[1], b[1])])
    out = map_reduce(part, comb, [scores, groups], chunk_rows)
    return out[0], out[1]



@dataclass(frozen=True)
class ScoreHistogram:
    """Per-group histogram of scores on ``bins`` equal bins over each group's observed range.

    Attributes
    ----------
    lo, hi : ndarray of shape (K,)
        Observed score range of each group (the grid).
    counts : ndarray of shape (K, bins)
        Total row weight in each bin.
    positive : ndarray of shape (K, bins) or None
        Total weight of label-1 rows in each bin (``None`` without labels).

    Examples
    --------
    >>> import numpy as np
    >>> h = score_histogram(np.array([0.0, 1.0]), np.array([0, 0]), np.array([0]), bins=4)
    >>> h.centres().tolist()
    [[0.125, 0.375, 0.625, 0.875]]
    """

    lo: np.ndarray
    hi: np.ndarray
    counts: np.ndarray
    positive: np.ndarray | None

    @property
    def bins(self) -> int:
        """Number of equal bins per group (the second axis of ``counts``)."""
        return int(self.counts.shape[1])

    def centres(self) -> np.ndarray:
        """Bin centres, shape ``(K, bins)`` (a group with one distinct score: that score)."""
        return bin_centres(self.lo, self.hi, self.bins)

    def quantise(self, scores: ArrayLike, cells: ArrayLike) -> np.ndarray:
        """Replace every score by the centre of its bin in its cell's grid (clipped to the range)."""
        return quantise(scores, cells, self.lo, self.hi, self.bins)


def bin_index(f: NDArray[np.float64], c: NDArray[np.int64], lo: NDArray[np.float64], hi: NDArray[np.float64],
              bins: int) -> NDArray[np.int64]:
    """Bin of every score on its cell's grid of ``bins`` equal bins over ``[lo, hi]`` (clipped).

    Examples
    --------
    >>> import numpy as np
    >>> bin_index(np.array([0.0, 0.5, 1.0]), np.zeros(3, int), np.array([0.0]), np.array([1.0]), 2).tolist()
    [0, 1, 1]
    """
    span = hi - lo
    scale = np.where(span > 0, bins / np.where(span > 0, span, 1.0), 0.0)
    b = np.floor((f - lo[c]) * scale[c])
    return np.clip(b, 0, bins - 1).astype(np.int64)


def bin_centres(lo: NDArray[np.float64], hi: NDArray[np.float64], bins: int) -> NDArray[np.float64]:
    """Centres of the equal bins of every cell, shape ``(K, bins)``.

    Examples
    --------
    >>> import numpy as np
    >>> bin_centres(np.array([0.0]), np.array([1.0]), 2).tolist()
    [[0.25, 0.75]]
    """
    span = (hi - lo)[:, None]
    return np.where(span > 0, lo[:, None] + (np.arange(bins) + 0.5) * span / bins, lo[:, None])


def quantise(scores: ArrayLike, cells: ArrayLike, lo: NDArray[np.float64], hi: NDArray[np.float64],
             bins: int) -> NDArray[np.float64]:
    """Scores rounded to their bin centres: each moves by at most half a bin width
    ``(hi_k - lo_k) / (2 bins)`` (inside the fitted range).

    Examples
    --------
    >>> import numpy as np
    >>> quantise(np.array([0.1, 0.9]), np.array([0, 0]), np.array([0.0]), np.array([1.0]), 2).tolist()
    [0.25, 0.75]
    """
    f = np.asarray(scores, dtype=float)
    c = np.asarray(cells, dtype=np.int64)
    # numpy types an index by a tuple of arrays as Any
    centred: NDArray[np.float64] = bin_centres(lo, hi, bins)[c, bin_index(f, c, lo, hi, bins)]
    return centred


def score_histogram(scores: Any, groups: Any, labels: np.ndarray, bins: int, sample_weight: Any = None, y: Any = None,
                    lo: ArrayLike | None = None, hi: ArrayLike | None = None, chunk_rows: int | None = None,
                    score_map: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None) -> ScoreHistogram:
    """Per-group histogram of ``scores`` on ``bins`` equal bins (two passes: the range, then the
    counts); ``O(bins * K)`` memory whatever the number of rows.

    Parameters
    ----------
    scores, groups : 1-D sources
        Scores and raw group labels (NumPy, memmap, ``.npy`` path or Dask).
    labels : ndarray
        Sorted group labels (:func:`group_labels`); group codes index them.
    bins : int
        Number of equal bins per group.
    sample_weight, y : 1-D sources, optional
        Row weights; binary labels (then ``positive`` is collected).
    lo, hi : ndarray, optional
        A fixed grid (default: the observed range, :func:`score_range`).
    chunk_rows : int
        Rows per chunk of an in-memory or memory-mapped source.
    score_map : callable, optional
        Applied to every chunk of scores first (e.g. ``2p - 1``).

    Examples
    --------
    >>> import numpy as np
    >>> h = score_histogram(np.array([0.0, 1.0, 1.0]), np.array([0, 0, 0]), np.array([0]), 2,
    ...                     y=np.array([0, 1, 0]))
    >>> h.counts.tolist(), h.positive.tolist()
    ([[1.0, 2.0]], [[0.0, 1.0]])
    """
    K = len(labels)
    check_histogram_size(bins, K)
    if lo is None or hi is None:
        lo, hi = score_range(scores, groups, labels, chunk_rows, score_map)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)

    def part(f: NDArray[Any], g: NDArray[Any], w: NDArray[Any] | None, yy: NDArray[Any] | None) -> NDArray[np.float64]:
        f, c, w, yy = _check_scores(f, score_map), _codes(g, labels), _check_weights(w), _check_labels(yy)
        idx = c * bins + bin_index(f, c, lo, hi, bins)
        out = np.zeros((1 if yy is None else 2, K * bins))
        out[0] = np.bincount(idx, weights=w, minlength=K * bins)
        if yy is not None:
            out[1] = np.bincount(idx, weights=yy if w is None else yy * w, minlength=K * bins)
        return out
    tot = map_reduce(part, add_sums, [scores, groups, sample_weight, y], chunk_rows)
    counts = tot[0].reshape(K, bins)
    positive = tot[1].reshape(K, bins) if y is not None else None
    return ScoreHistogram(lo=lo, hi=hi, counts=counts, positive=positive)


def score_atoms(scores: Any, groups: Any, labels: np.ndarray, sample_weight: Any = None, y: Any = None,
                chunk_rows: int | None = None,
                score_map: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None) -> ScoreAtoms:
    """Exact per-group score atoms (distinct scores with total weight and positive weight) of a
    source: the same :class:`~fairopt.formulations.constrained_classification.ScoreAtoms` as
    :func:`~fairopt.formulations.constrained_classification.collapse_atoms` on the rows, built
    from per-chunk atoms merged in a tree. Its size is the number of distinct scores; for huge
    continuous score sets use :func:`score_histogram` (``ThresholdDebiaser(score_bins=...)``).

    Examples
    --------
    >>> import numpy as np
    >>> at = score_atoms(np.array([0.5, 0.5, 0.1]), np.array([0, 0, 1]), np.array([0, 1]))
    >>> at.score.tolist(), at.weight.tolist()
    ([0.5, 0.1], [2.0, 1.0])
    """
    K = len(labels)
    has_y = y is not None

    def part(f: NDArray[Any], g: NDArray[Any], w: NDArray[Any] | None, yy: NDArray[Any] | None) -> ScoreAtoms:
        f, c, w, yy = _check_scores(f, score_map), _codes(g, labels), _check_weights(w), _check_labels(yy)
        w = np.ones(f.shape[0]) if w is None else w
        pos = None if yy is None else yy * w
        return merge_atoms(c, f, w, pos, K)

    def comb(a: ScoreAtoms, b: ScoreAtoms) -> ScoreAtoms:
        return merge_atoms(np.concatenate([a.cell, b.cell]), np.concatenate([a.score, b.score]),
                           np.concatenate([a.weight, b.weight]),
                           np.concatenate([a.positive, b.positive]) if has_y else None, K)
    return map_reduce(part, comb, [scores, groups, sample_weight, y], chunk_rows)


