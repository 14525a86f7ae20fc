"""Sufficient statistics of :class:`~fairopt.postprocessing.MulticlassDebiaser` from chunked and
Dask inputs (``score_bins``).

With ``score_bins = B`` every probability is rounded to a multiple of ``1 / B``, so a row is
summarised by its group and its vector of ``K`` integer codes in ``0..B``. The fit needs only the
total weight of every distinct (group, code vector) pair: the LP's atoms. They are accumulated
chunk by chunk (``numpy.memmap`` or ``.npy`` path read ``chunk_rows`` rows at a time; a Dask
array reduced block by block on its workers, partial results combined in a tree), as a sorted
array of 64-bit keys ``g (B + 1)^K + sum_k code_k (B + 1)^k`` and their weights. Memory is one
chunk plus the distinct keys seen, whatever the number of rows. The key must fit in 63 bits:
``G (B + 1)^K < 2^63`` (for example ``K = 10`` classes and ``B = 40`` bins at 64 groups).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.constrained_classification.multiclass_atoms import VectorAtoms, row_keys
from fairopt.postprocessing.multiclass_calibration import check_score_matrix
from fairopt.stats import as_source, chunk_rows, group_labels, is_dask

__all__ = ["chunked_atoms", "is_chunked_scores", "key_base"]

Keyed = tuple[NDArray[np.int64], NDArray[np.float64]]


def is_chunked_scores(X: object) -> bool:
    """``True`` for a score matrix read in chunks: a Dask array, a memmap or a ``.npy`` path.

    Examples
    --------
    >>> import numpy as np
    >>> is_chunked_scores(np.zeros((2, 2))), is_chunked_scores("scores.npy")
    (False, True)
    """
    if isinstance(X, (str, os.PathLike)):
        return os.fspath(X).endswith(".npy")
    return is_dask(X) or isinstance(X, np.memmap)


def key_base(n_classes: int, bins: int, n_groups: int) -> int:
    """``B + 1``, after checking that ``G (B + 1)^K`` keys fit in 63 bits.

    Examples
    --------
    >>> key_base(10, 40, 64)
    41
    """
    if n_groups * float(bins + 1) ** n_classes >= 2.0 ** 63:
        raise ConfigError(f"score_bins={bins} with {n_classes} classes and {n_groups} groups gives more than 2^63 "
                          "possible (group, score vector) keys; lower score_bins (the chunked fit keys every "
                          f"row by its rounded vector), e.g. to {int(2 ** (62 / n_classes)) - 1} or less.")
    return bins + 1


def _open_scores(X: Any) -> Any:
    if isinstance(X, (str, os.PathLike)):
        from fairopt.stats._files import open_npy
        X = open_npy(os.fspath(X), "X")
    if getattr(X, "ndim", 0) != 2 or X.shape[1] < 2:
        raise DataValidationError(f"the chunked scores must be a 2-D (n_rows, n_classes >= 2) array of class "
                                  f"probabilities; got shape {getattr(X, 'shape', None)}.")
    return X


def _part(S: NDArray[Any], g: NDArray[Any], w: NDArray[Any] | None, labels: NDArray[Any], bins: int,
          base: int) -> Keyed:
    """Keys and summed weights of one chunk."""
    S = check_score_matrix(np.asarray(S, dtype=float))
    codes = np.searchsorted(labels, np.asarray(g))
    codes = np.minimum(codes, len(labels) - 1)
    if (labels[codes] != np.asarray(g)).any():
        raise DataValidationError("sensitive_features has labels not seen in the label pass.")
    q = np.rint(S * bins).astype(np.int64)
    key = codes.astype(np.int64)
    for k in range(S.shape[1] - 1, -1, -1):   # a loop over classes, not rows
        key = key * base + q[:, k]
    u, inv = np.unique(key, return_inverse=True)
    wt = None if w is None else np.asarray(w, dtype=float)
    if wt is not None and (not np.isfinite(wt).all() or (wt < 0).any()):
        raise DataValidationError("sample_weight must be finite and non-negative.")
    keys: NDArray[np.int64] = u.astype(np.int64)
    sums: NDArray[np.float64] = np.bincount(inv.reshape(-1), weights=wt, minlength=u.shape[0]).astype(np.float64)
    return keys, sums


def _combine(a: Keyed, b: Keyed) -> Keyed:
    u, inv = np.unique(np.concatenate([a[0], b[0]]), return_inverse=True)
    keys: NDArray[np.int64] = u.astype(np.int64)
    sums: NDArray[np.float64] = np.bincount(inv.reshape(-1), weights=np.concatenate([a[1], b[1]]),
                                            minlength=u.shape[0]).astype(np.float64)
    return keys, sums


def _reduce(func: Callable[..., Keyed], S: Any, g: Any, w: Any, rows: int) -> Keyed:
    """Map ``func`` over aligned row chunks of ``S`` (2-D), ``g`` and ``w`` and combine."""
    if is_dask(S) or is_dask(g) or is_dask(w):
        import dask.array as da
        from dask.base import compute as dask_compute
        from dask.delayed import delayed as dask_delayed
        from_array: Any = da.from_array   # dask's functions are untyped
        compute: Any = dask_compute
        Sd = S if is_dask(S) else from_array(S, chunks=(rows, -1))
        Sd = Sd.rechunk({1: -1})
        rc = Sd.chunks[0]
        gd = g.rechunk((rc,)) if is_dask(g) else from_array(g, chunks=(rc,))
        wd = None if w is None else (w.rechunk((rc,)) if is_dask(w) else from_array(w, chunks=(rc,)))
        sb = Sd.to_delayed().ravel().tolist()
        gb = gd.to_delayed().ravel().tolist()
        wb = [None] * len(sb) if wd is None else wd.to_delayed().ravel().tolist()
        fn, comb = dask_delayed(func, pure=True), dask_delayed(_combine, pure=True)
        parts = [fn(s, gg, ww) for s, gg, ww in zip(sb, gb, wb, strict=True)]
        while len(parts) > 1:   # a binary tree of partial statistics
            parts = [comb(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        out: Keyed = compute(parts[0])[0]
        return out
    from fairopt.stats._sources import _read
    n = S.shape[0]
    acc: Keyed | None = None
    for i in range(0, max(n, 1), rows):   # a loop over chunks, not rows
        part = func(_read(S, i, i + rows), _read(g, i, i + rows), None if w is None else _read(w, i, i + rows))
        acc = part if acc is None else _combine(acc, part)
    assert acc is not None
    return acc


def chunked_atoms(X: Any, sensitive_features: Any, bins: int, sample_weight: Any = None,
                  rows: int | None = None) -> tuple[VectorAtoms, NDArray[Any]]:
    """Atoms (distinct group x rounded score vector, weights summed) of a chunked or Dask score
    matrix, and the sorted group labels: two passes (labels, then atoms).

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[.21, .79], [.19, .81], [.6, .4]]); g = np.array(["a", "a", "b"])
    >>> at, labels = chunked_atoms(S, g, bins=10, rows=2)
    >>> labels.tolist(), at.scores.tolist(), at.weight.tolist()
    (['a', 'b'], [[0.2, 0.8], [0.6, 0.4]], [2.0, 1.0])
    """
    S = _open_scores(X)
    n, K = int(S.shape[0]), int(S.shape[1])
    g = as_source(sensitive_features, "sensitive_features")
    w = as_source(sample_weight, "sample_weight", numeric=True)
    for name, a in (("sensitive_features", g), ("sample_weight", w)):
        if a is not None and int(a.shape[0]) != n:
            raise DataValidationError(f"{name} has {a.shape[0]} rows but the scores have {n}; pass one per row.")
    step = chunk_rows() if rows is None else int(rows)
    labels = group_labels(g, step)
    base = key_base(K, bins, len(labels))

    def func(s: NDArray[Any], gg: NDArray[Any], ww: NDArray[Any] | None) -> Keyed:
        return _part(s, gg, ww, labels, bins, base)
    keys, weight = _reduce(func, S, g, w, step)
    keep = weight > 0
    keys, weight = keys[keep], weight[keep]
    codes = np.empty((keys.shape[0], K), dtype=np.int64)
    rest = keys.copy()
    for k in range(K):   # a loop over classes: decode the keys
        codes[:, k] = rest % base
        rest //= base
    group = rest.astype(np.int64)
    scores = codes / float(bins)
    _, h = row_keys(group, scores)
    return VectorAtoms(group=group, scores=scores, weight=weight, hashes=h), labels
