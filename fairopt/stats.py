"""Sufficient statistics of large inputs, computed where the data lives.

fairopt's statistics-based formulations read their data only through small summaries: per-group
score atoms (threshold post-processing), per-group histograms of quantised scores, per-group sums
(metrics) and counts over a product domain (max-ent, the Calmon mapping). This module computes
them by map-reduce over *chunks*, so that the rows themselves never sit in one process:

* a NumPy array is one chunk (or several, see ``chunk_rows``);
* a :class:`numpy.memmap`, or a path to a ``.npy`` file (opened memory-mapped), is read
  ``chunk_rows`` rows at a time, so the resident memory stays bounded whatever the file size;
* a Dask array or Series is reduced on its workers (one partial statistic per block, combined in
  a tree), and only the combined statistic comes back to the driver.

Every function returns the same NumPy arrays whatever the input kind, so the formulations solve
on the driver unchanged. Dask is imported only when a Dask collection is passed.

Examples
--------
>>> import numpy as np
>>> from fairopt.stats import group_labels, score_histogram
>>> f = np.array([0.0, 0.5, 1.0, 0.2, 0.4])
>>> g = np.array(["a", "a", "a", "b", "b"])
>>> labels = group_labels(g)
>>> labels.tolist()
['a', 'b']
>>> h = score_histogram(f, g, labels, bins=2)
>>> h.counts.tolist()
[[1.0, 2.0], [1.0, 1.0]]
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

import numpy as np

from fairopt.errors import DataValidationError

__all__ = ["CHUNK_ROWS", "ScoreHistogram", "as_source", "group_labels", "group_sums", "is_dask",
           "is_lazy", "map_reduce", "n_rows", "score_atoms", "score_histogram", "score_range"]

#: rows per chunk read from a memory-mapped file (2**21 float64 rows = 16 MiB per column)
CHUNK_ROWS = 1 << 21


def is_dask(x) -> bool:
    """``True`` for a Dask collection (checked by module name: Dask is not imported here).

    Examples
    --------
    >>> import numpy as np
    >>> is_dask(np.zeros(3))
    False
    """
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def is_lazy(x) -> bool:
    """``True`` for an input read in chunks: a Dask collection, a :class:`numpy.memmap` or a path.

    Examples
    --------
    >>> import numpy as np
    >>> is_lazy(np.zeros(3)), is_lazy("scores.npy")
    (False, True)
    """
    if isinstance(x, (str, os.PathLike)):    # a file, not a column name
        return os.fspath(x).endswith(".npy")
    return is_dask(x) or isinstance(x, np.memmap)


def as_source(x, name: str = "X"):
    """A chunk-readable 1-D source: Dask arrays stay lazy (a Dask Series or one-column DataFrame
    becomes its array), a ``.npy`` path is opened memory-mapped, arrays pass through.

    Examples
    --------
    >>> import numpy as np
    >>> as_source(np.arange(3)).tolist()
    [0, 1, 2]
    """
    if x is None:
        return None
    if is_dask(x):
        if hasattr(x, "to_dask_array"):                  # Series / DataFrame
            if getattr(x, "ndim", 1) == 2:
                if len(x.columns) != 1:
                    raise DataValidationError(
                        f"{name} is a Dask DataFrame with columns {list(x.columns)[:5]}; pass one column "
                        "(a Dask Series) — several sensitive columns are supported in memory only.")
                x = x[x.columns[0]]
            x = x.to_dask_array(lengths=True)            # only the partition lengths are computed
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        if x.ndim != 1:
            raise DataValidationError(f"{name} must be one-dimensional, got a Dask array of shape {x.shape}.")
        return x
    if isinstance(x, (str, os.PathLike)):
        path = os.fspath(x)
        if not path.endswith(".npy"):
            raise DataValidationError(f"{name}={path!r}: a file input must be a .npy array (read memory-mapped); "
                                      "save it with numpy.save, or pass a numpy.memmap or Dask array.")
        if not os.path.exists(path):
            raise DataValidationError(f"{name}={path!r} does not exist.")
        x = np.load(path, mmap_mode="r")
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise DataValidationError(f"{name} must be one-dimensional, got shape {x.shape}.")
    return x


def n_rows(x) -> int:
    """Number of rows of a source (Dask arrays need known chunk sizes).

    Examples
    --------
    >>> import numpy as np
    >>> n_rows(np.zeros(4))
    4
    """
    n = as_source(x).shape[0]
    if np.isnan(n):  # unknown Dask chunk sizes
        raise DataValidationError("the Dask array has unknown chunk sizes; call .compute_chunk_sizes() first.")
    return int(n)


def map_reduce(func: Callable, combine: Callable, arrays, chunk_rows: int | None = None):
    """``combine``-reduce ``func(*chunks)`` over aligned row chunks of ``arrays``.

    ``arrays`` are 1-D sources of the same length (``None`` entries are passed through as
    ``None``). With a Dask array among them every array is aligned to its blocks and each
    partial statistic is computed on a worker; otherwise chunks of ``chunk_rows`` rows are read
    in turn (a memory-mapped file is paged in one chunk at a time).

    Examples
    --------
    >>> import numpy as np
    >>> int(map_reduce(lambda a: a.sum(), lambda s, t: s + t, [np.arange(10)], chunk_rows=3))
    45
    """
    chunk_rows = CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    srcs = [as_source(a) for a in arrays]
    present = [a for a in srcs if a is not None]
    n = present[0].shape[0]
    for a in present[1:]:
        if a.shape[0] != n:
            raise DataValidationError(f"inputs have {a.shape[0]} and {n} rows; pass one entry per row.")
    if any(is_dask(a) for a in present):
        return _dask_map_reduce(func, combine, srcs)
    parts = (func(*(None if a is None else _read(a, i, i + chunk_rows) for a in srcs))
             for i in range(0, max(n, 1), chunk_rows))
    return reduce(combine, parts)


def _read(a: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of ``a`` as an in-memory array. For a memory-mapped file the chunk is
    copied and its pages are then released from this process (``MADV_DONTNEED``), so the
    resident memory stays one chunk whatever the file size."""
    chunk = a[start:stop]
    mm = getattr(a, "_mmap", None) if isinstance(a, np.memmap) else None
    if mm is None:
        base = a.base
        while base is not None and not isinstance(base, np.memmap) and getattr(base, "base", None) is not None:
            base = base.base
        mm = getattr(base, "_mmap", None) if isinstance(base, np.memmap) else None
    if mm is None or not hasattr(mm, "madvise") or not a.flags.c_contiguous:
        return np.asarray(chunk)
    out = np.array(chunk)
    import mmap
    # byte range of the chunk inside the mapping, widened to whole pages
    begin = chunk.__array_interface__["data"][0] - np.frombuffer(mm, dtype=np.uint8, count=1).__array_interface__["data"][0]
    end = begin + chunk.nbytes
    page = mmap.PAGESIZE
    lo = (begin // page) * page
    try:
        mm.madvise(mmap.MADV_DONTNEED, lo, ((end - lo + page - 1) // page) * page if end > lo else 0)
    except (ValueError, OSError):   # a mapping that refuses the advice keeps its pages: still correct
        pass
    return out


def _dask_map_reduce(func, combine, srcs):
    import dask
    import dask.array as da

    ref = next(a for a in srcs if a is not None and is_dask(a))
    aligned = [None if a is None else (a.rechunk(ref.chunks) if is_dask(a) else da.from_array(a, chunks=ref.chunks))
               for a in srcs]
    blocks = [None if a is None else a.to_delayed().ravel().tolist() for a in aligned]
    nb = len(next(b for b in blocks if b is not None))
    fn, comb = dask.delayed(func, pure=True), dask.delayed(combine, pure=True)
    parts = [fn(*(None if b is None else b[i] for b in blocks)) for i in range(nb)]
    while len(parts) > 1:               # binary tree: partial statistics never pile up on one worker
        parts = [comb(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return dask.compute(parts[0])[0]


# --------------------------------------------------------------------------- group labels
def group_labels(groups, chunk_rows: int | None = None) -> np.ndarray:
    """Sorted distinct group labels of a 1-D source (the order of
    :func:`fairopt.validation.check_groups`); missing labels raise.

    Examples
    --------
    >>> group_labels([2, 0, 2]).tolist()
    [0, 2]
    """
    def part(g):
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        if g.dtype == object and np.equal(g, None).any():
            raise DataValidationError("sensitive_features has missing (None) labels; fill or drop them.")
        return np.unique(g)
    return map_reduce(part, lambda a, b: np.union1d(a, b), [groups], chunk_rows)


def _codes(g: np.ndarray, labels: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(labels, g)
    codes = np.minimum(codes, len(labels) - 1)
    bad = labels[codes] != g
    if bad.any():
        raise DataValidationError(f"sensitive_features has group(s) {np.unique(g[bad])[:5].tolist()} not seen at fit.")
    return codes.astype(np.int64)


# --------------------------------------------------------------------------- per-group sums
def group_sums(values, groups, labels, sample_weight=None, chunk_rows: int | None = None) -> np.ndarray:
    """Per-group ``[sum of w, sum of w*v_1, ..., sum of w*v_m]`` for ``values`` a list of 1-D
    sources: the statistics of group rates and means (shape ``(m + 1, K)``).

    Examples
    --------
    >>> import numpy as np
    >>> group_sums([np.array([1.0, 0.0, 1.0])], np.array([0, 0, 1]), np.array([0, 1])).tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    """
    K, m = len(labels), len(values)

    def part(g, w, *vs):
        c = _codes(g, labels)
        out = np.empty((m + 1, K))
        out[0] = np.bincount(c, weights=w, minlength=K) if w is not None else np.bincount(c, minlength=K)
        for i, v in enumerate(vs):
            v = np.asarray(v, dtype=float)
            out[i + 1] = np.bincount(c, weights=v if w is None else v * w, minlength=K)
        return out
    return map_reduce(part, np.add, [groups, sample_weight, *values], chunk_rows)


# --------------------------------------------------------------------------- score statistics
def _check_scores(f: np.ndarray, score_map: Callable | None = None) -> np.ndarray:
    f = np.asarray(f, dtype=float)
    if not np.isfinite(f).all():
        raise DataValidationError("scores must be finite; drop or impute the rows with NaN/inf scores.")
    return f if score_map is None else score_map(f)


def _check_weights(w):
    if w is None:
        return None
    w = np.asarray(w, dtype=float)
    if not np.isfinite(w).all() or (w < 0).any():
        raise DataValidationError("sample_weight must be finite and non-negative.")
    return w


def _check_labels(y):
    if y is None:
        return None
    y = np.asarray(y)
    if not np.isin(y, (0, 1)).all():
        raise DataValidationError(f"y must be binary 0/1 labels, got classes {np.unique(y)[:5].tolist()}.")
    return y.astype(float)


def score_range(scores, groups, labels, chunk_rows: int | None = None,
                score_map: Callable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-group minimum and maximum score (groups without rows get ``+inf`` / ``-inf``).

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = score_range(np.array([0.1, 0.9, 0.5]), np.array([0, 0, 1]), np.array([0, 1]))
    >>> lo.tolist(), hi.tolist()
    ([0.1, 0.5], [0.9, 0.5])
    """
    K = len(labels)

    def part(f, g):
        f, c = _check_scores(f, score_map), _codes(g, labels)
        return np.stack(_group_min_max(f, c, K))

    def comb(a, b):
        return np.stack([np.minimum(a[0], b[0]), np.maximum(a[1], b[1])])
    out = map_reduce(part, comb, [scores, groups], chunk_rows)
    return out[0], out[1]


def _group_min_max(f: np.ndarray, codes: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-code minimum and maximum (``+inf`` / ``-inf`` for absent codes): one masked reduction
    per group when groups are few (``ufunc.at`` is an order of magnitude slower), else ``ufunc.at``."""
    lo, hi = np.full(K, np.inf), np.full(K, -np.inf)
    if K <= 32:
        for k in range(K):          # a loop over groups, not rows
            fk = f[codes == k]
            if fk.size:
                lo[k], hi[k] = fk.min(), fk.max()
    else:
        np.minimum.at(lo, codes, f)
        np.maximum.at(hi, codes, f)
    return lo, hi


def _keyed(labels: np.ndarray, values: np.ndarray, fill: float, out_labels: np.ndarray) -> np.ndarray:
    """Columns of ``values`` (one per label of ``labels``) placed on ``out_labels`` (a superset)."""
    out = np.full((values.shape[0], len(out_labels)), fill)
    out[:, np.searchsorted(out_labels, labels)] = values
    return out


def labels_and_range(scores, groups, chunk_rows: int | None = None,
                     score_map: Callable | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted group labels and each group's score range in **one** pass (the first pass of the
    quantised fit; :func:`group_labels` then :func:`score_range` read the data twice).

    Examples
    --------
    >>> import numpy as np
    >>> labels, lo, hi = labels_and_range(np.array([0.1, 0.9, 0.5]), np.array(["b", "b", "a"]))
    >>> labels.tolist(), lo.tolist(), hi.tolist()
    (['a', 'b'], [0.5, 0.1], [0.5, 0.9])
    """
    def part(f, g):
        f = _check_scores(f, score_map)
        g = np.asarray(g)
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        if g.dtype == object and np.equal(g, None).any():
            raise DataValidationError("sensitive_features has missing (None) labels; fill or drop them.")
        u, inv = np.unique(g, return_inverse=True)
        lo, hi = _group_min_max(f, inv.reshape(-1), len(u))
        return u, np.stack([lo, hi])

    def comb(a, b):
        u = np.union1d(a[0], b[0])
        ka, kb = _keyed(a[0], a[1][:1], np.inf, u), _keyed(b[0], b[1][:1], np.inf, u)
        ha, hb = _keyed(a[0], a[1][1:], -np.inf, u), _keyed(b[0], b[1][1:], -np.inf, u)
        return u, np.concatenate([np.minimum(ka, kb), np.maximum(ha, hb)])
    labels, lohi = map_reduce(part, comb, [scores, groups], chunk_rows)
    return labels, lohi[0], lohi[1]


def keyed_group_sums(values, groups, sample_weight=None, chunk_rows: int | None = None,
                     transform: Callable | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted group labels and per-group sums ``[w, w*v_1, ...]`` in **one** pass (labels need
    not be known in advance). ``transform(g, w, *values) -> (w, *values)`` may check or map a chunk.

    Examples
    --------
    >>> import numpy as np
    >>> labels, sums = keyed_group_sums([np.array([1.0, 0.0, 1.0])], np.array([5, 5, 7]))
    >>> labels.tolist(), sums.tolist()
    ([5, 7], [[2.0, 1.0], [1.0, 1.0]])
    """
    def part(g, w, *vs):
        g = np.asarray(g)
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        if transform is not None:
            w, *vs = transform(g, w, *vs)
        u, inv = np.unique(g, return_inverse=True)
        inv = inv.reshape(-1)
        out = np.empty((len(vs) + 1, len(u)))
        out[0] = np.bincount(inv, weights=w, minlength=len(u))
        for i, v in enumerate(vs):
            v = np.asarray(v, dtype=float)
            out[i + 1] = np.bincount(inv, weights=v if w is None else v * w, minlength=len(u))
        return u, out

    def comb(a, b):
        u = np.union1d(a[0], b[0])
        return u, _keyed(a[0], a[1], 0.0, u) + _keyed(b[0], b[1], 0.0, u)
    return map_reduce(part, comb, [groups, sample_weight, *values], chunk_rows)


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
        return int(self.counts.shape[1])

    def centres(self) -> np.ndarray:
        """Bin centres, shape ``(K, bins)`` (a group with one distinct score: that score)."""
        return bin_centres(self.lo, self.hi, self.bins)

    def quantise(self, scores, cells) -> np.ndarray:
        """Replace every score by the centre of its bin in its cell's grid (clipped to the range)."""
        return quantise(scores, cells, self.lo, self.hi, self.bins)


def bin_index(f: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray, bins: int) -> np.ndarray:
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


def bin_centres(lo: np.ndarray, hi: np.ndarray, bins: int) -> np.ndarray:
    """Centres of the equal bins of every cell, shape ``(K, bins)``.

    Examples
    --------
    >>> import numpy as np
    >>> bin_centres(np.array([0.0]), np.array([1.0]), 2).tolist()
    [[0.25, 0.75]]
    """
    span = (hi - lo)[:, None]
    return np.where(span > 0, lo[:, None] + (np.arange(bins) + 0.5) * span / bins, lo[:, None])


def quantise(scores, cells, lo, hi, bins: int) -> np.ndarray:
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
    return bin_centres(lo, hi, bins)[c, bin_index(f, c, lo, hi, bins)]


def score_histogram(scores, groups, labels, bins: int, sample_weight=None, y=None, lo=None, hi=None,
                    chunk_rows: int | None = None, score_map: Callable | None = None) -> ScoreHistogram:
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
    if lo is None or hi is None:
        lo, hi = score_range(scores, groups, labels, chunk_rows, score_map)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)

    def part(f, g, w, yy):
        f, c, w, yy = _check_scores(f, score_map), _codes(g, labels), _check_weights(w), _check_labels(yy)
        idx = c * bins + bin_index(f, c, lo, hi, bins)
        out = np.zeros((1 if yy is None else 2, K * bins))
        out[0] = np.bincount(idx, weights=w, minlength=K * bins)
        if yy is not None:
            out[1] = np.bincount(idx, weights=yy if w is None else yy * w, minlength=K * bins)
        return out
    tot = map_reduce(part, np.add, [scores, groups, sample_weight, y], chunk_rows)
    counts = tot[0].reshape(K, bins)
    positive = tot[1].reshape(K, bins) if y is not None else None
    return ScoreHistogram(lo=lo, hi=hi, counts=counts, positive=positive)


def score_atoms(scores, groups, labels, sample_weight=None, y=None, chunk_rows: int | None = None,
                score_map: Callable | None = None):
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
    from fairopt.formulations.constrained_classification.atoms import merge_atoms

    K = len(labels)
    has_y = y is not None

    def part(f, g, w, yy):
        f, c, w, yy = _check_scores(f, score_map), _codes(g, labels), _check_weights(w), _check_labels(yy)
        w = np.ones(f.shape[0]) if w is None else w
        pos = None if yy is None else yy * w
        return merge_atoms(c, f, w, pos, K)

    def comb(a, b):
        return merge_atoms(np.concatenate([a.cell, b.cell]), np.concatenate([a.score, b.score]),
                           np.concatenate([a.weight, b.weight]),
                           np.concatenate([a.positive, b.positive]) if has_y else None, K)
    return map_reduce(part, comb, [scores, groups, sample_weight, y], chunk_rows)


# --------------------------------------------------------------------------- contingency counts
def cell_group_counts(cells, groups, n_cells: int, n_groups: int, sample_weight=None,
                      chunk_rows: int | None = None) -> np.ndarray:
    """Weighted counts ``N[j, k]`` of rows in cell ``j`` (integer codes) and group ``k`` (codes):
    the statistic of a conditional matrix (balanced filtering), shape ``(n_cells, n_groups)``.

    Examples
    --------
    >>> import numpy as np
    >>> cell_group_counts(np.array([0, 1, 1]), np.array([1, 0, 1]), 2, 2).tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    def part(c, g, w):
        c, g = np.asarray(c), np.asarray(g)
        for name, v, hi in (("cell", c, n_cells), ("group", g, n_groups)):
            if v.size and (not np.issubdtype(v.dtype, np.integer) or v.min() < 0 or v.max() >= hi):
                raise DataValidationError(f"{name} codes must be integers in 0 .. {hi - 1}.")
        idx = c.astype(np.int64) * n_groups + g
        return np.bincount(idx, weights=_check_weights(w), minlength=n_cells * n_groups).astype(float)
    return map_reduce(part, np.add, [cells, groups, sample_weight], chunk_rows).reshape(n_cells, n_groups)


# --------------------------------------------------------------------------- record tables
def is_lazy_frame(X) -> bool:
    """A Dask DataFrame, or a path to a Parquet file or directory.

    Examples
    --------
    >>> import pandas as pd
    >>> is_lazy_frame(pd.DataFrame({"a": [1]})), is_lazy_frame("records.parquet")
    (False, True)
    """
    if isinstance(X, (str, os.PathLike)):
        return os.fspath(X).endswith(".parquet")
    return is_dask(X) and hasattr(X, "columns")


def collapse_records(X, y, sensitive_features, sample_weight=None, batch_rows: int | None = None):
    """Distinct records of a Dask DataFrame or Parquet file with their total weight.

    Counting formulations (max-ent, TV repair, the Calmon mapping) depend on the records only
    through these counts over the product domain, so ``fit`` on the returned table with
    ``sample_weight=weight`` is the fit on the rows. ``y`` and ``sensitive_features`` are column
    names of ``X`` (or Dask Series aligned with it); ``sample_weight`` a column name, a Dask
    Series, or ``None``. Parquet files are read in record batches of ``batch_rows``.

    Returns
    -------
    X, y, sensitive_features, weight : pandas objects
        Features (the protected column kept when it is a column of ``X``), label Series,
        protected column name or Series, and weights, one row per distinct record.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": [1, 1, 2], "s": ["f", "f", "m"], "y": [0, 0, 1]})
    >>> X.to_parquet("/tmp/_fairopt_doc.parquet")
    >>> Xc, yc, sc, w = collapse_records("/tmp/_fairopt_doc.parquet", "y", "s")
    >>> Xc.to_dict("list"), yc.tolist(), sc, w.tolist()
    ({'a': [1, 2], 's': ['f', 'm']}, [0, 1], 's', [2.0, 1.0])
    """
    import pandas as pd

    extra = {}
    for key, v in (("__y__", y), ("__s__", sensitive_features), ("__w__", sample_weight)):
        if v is not None and not isinstance(v, str):
            if not is_dask(v):
                raise DataValidationError(f"with a Dask or Parquet X, pass {key.strip('_')} as a column name or a "
                                          "Dask Series aligned with X.")
            extra[key] = v
    y_name = y if isinstance(y, str) else "__y__"
    s_name = sensitive_features if isinstance(sensitive_features, str) else "__s__"
    w_name = sample_weight if isinstance(sample_weight, str) else ("__w__" if sample_weight is not None else None)

    def count(frame: pd.DataFrame) -> pd.DataFrame:
        keys = [c for c in frame.columns if c != w_name]
        if frame[keys].isna().any().any():
            bad = frame[keys].columns[frame[keys].isna().any()].tolist()
            raise DataValidationError(f"columns {bad} have missing values; drop or impute them first.")
        w = frame[w_name].astype(float) if w_name else pd.Series(1.0, index=frame.index)
        if not np.isfinite(w).all() or (w < 0).any():
            raise DataValidationError("sample_weight must be finite and non-negative.")
        return w.groupby([frame[k] for k in keys], sort=True, observed=True).sum().rename("__weight__").reset_index()

    if is_dask(X):
        frame = X.assign(**extra) if extra else X
        cols = list(frame.columns)
        for need in (y_name, s_name):
            if need not in cols:
                raise DataValidationError(f"column {need!r} is not in X (columns {cols[:10]}).")
        meta = frame._meta.drop(columns=[w_name] if w_name else [])
        meta = meta.assign(__weight__=np.zeros(0))
        parts = frame.map_partitions(count, meta=meta)
        keys = [c for c in cols if c != w_name]
        # one tree reduction (split_out=1): the distinct records fit on the driver anyway
        table = parts.groupby(keys, sort=False)["__weight__"].sum(split_out=1).compute().reset_index()
    else:
        import pyarrow.parquet as pq
        if extra:
            raise DataValidationError("with a Parquet X, y / sensitive_features / sample_weight must be column names.")
        path = os.fspath(X)
        if not os.path.exists(path):
            raise DataValidationError(f"X={path!r} does not exist.")
        ds = pq.ParquetFile(path) if os.path.isfile(path) else None
        if ds is None:
            import pyarrow.dataset as pads
            batches = pads.dataset(path, format="parquet").to_batches(batch_size=batch_rows or CHUNK_ROWS)
        else:
            batches = ds.iter_batches(batch_size=batch_rows or CHUNK_ROWS)
        tables = [count(b.to_pandas()) for b in batches]      # a loop over batches, not rows
        if not tables:
            raise DataValidationError(f"X={path!r} has no rows.")
        keys = [c for c in tables[0].columns if c != "__weight__"]
        for need in (y_name, s_name):
            if need not in keys:
                raise DataValidationError(f"column {need!r} is not in {path!r} (columns {keys[:10]}).")
        table = pd.concat(tables).groupby(keys, sort=True, observed=True)["__weight__"].sum().reset_index()
    table = table.sort_values([c for c in table.columns if c != "__weight__"], kind="stable").reset_index(drop=True)
    weight = table.pop("__weight__").astype(float)
    y_out = table.pop(y_name).rename(None if y_name == "__y__" else y_name)
    if s_name == "__s__":
        s_out = table.pop("__s__").rename(getattr(sensitive_features, "name", None))
    else:
        s_out = s_name
    return table, y_out, s_out, weight
