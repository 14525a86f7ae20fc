"""Chunk sources and the map-reduce over them (NumPy arrays, memmaps, ``.npy`` paths, Dask
collections); group labels and per-group sums."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import reduce
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from fairopt.errors import DataTypeError, DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Unpack

    #: the labels of a chunk and their per-label statistics
    _Keyed = tuple[NDArray[Any], NDArray[np.float64]]
    #: a map of a chunk's scores (``score_map``)
    _FloatMap = Callable[[NDArray[np.float64]], NDArray[np.float64]]
    #: ``transform(g, w, *values) -> (w, *values)`` of a chunk
    _Transform = Callable[..., tuple[NDArray[Any] | None, Unpack[tuple[NDArray[Any], ...]]]]

_T = TypeVar("_T")

#: rows per chunk read from an in-memory or memory-mapped source (2**21 float64 rows = 16 MiB per column)
CHUNK_ROWS = 1 << 21


def chunk_rows() -> int:
    """Rows per chunk that the chunked readers take from an in-memory or memory-mapped source.

    Examples
    --------
    >>> chunk_rows() >= 1
    True
    """
    return CHUNK_ROWS


def set_chunk_rows(rows: int) -> int:
    """Set the rows per chunk (smaller bounds memory more tightly, larger has less overhead);
    returns the previous value.

    Examples
    --------
    >>> old = set_chunk_rows(1 << 20)
    >>> chunk_rows()
    1048576
    >>> _ = set_chunk_rows(old)
    """
    global CHUNK_ROWS
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise DataValidationError(f"chunk rows must be a positive integer, got {rows!r}.")
    old, CHUNK_ROWS = CHUNK_ROWS, int(rows)
    return old


def is_dask(x: object) -> bool:
    """``True`` for a Dask collection (checked by module name: Dask is not imported here).

    Examples
    --------
    >>> import numpy as np
    >>> is_dask(np.zeros(3))
    False
    """
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "__dask_graph__")


def is_lazy(x: object) -> bool:
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


def as_source(x: Any, name: str = "X", numeric: bool = False) -> Any:
    """A chunk-readable 1-D source: Dask arrays stay lazy (a Dask Series or one-column DataFrame
    becomes its array), a ``.npy`` path is opened memory-mapped after its header, dtype and size
    are checked (a damaged, truncated or object-dtype file raises, naming it), arrays pass through.
    ``numeric=True`` also refuses a file of strings (scores, labels and weights are numbers).

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
                        "(a Dask Series), or combine the columns into one label per row where they live.")
                x = x[x.columns[0]]
            x = x.to_dask_array(lengths=True)            # only the partition lengths are computed
        return _one_column(x, name, "a Dask array of shape")
    if isinstance(x, (str, os.PathLike)):
        path = os.fspath(x)
        if not path.endswith(".npy"):
            raise DataValidationError(f"{name}={path!r}: a file input must be a .npy array (read memory-mapped); "
                                      "save it with numpy.save, or pass a numpy.memmap or Dask array.")
        from fairopt.stats._files import open_npy
        x = open_npy(path, name)     # header, dtype and size checked before the data is mapped
        if numeric and x.dtype.kind not in "biuf":
            raise DataTypeError(f"{name}={path!r} holds {x.dtype} values but {name} must be numbers; convert it, "
                                f"e.g. numpy.save({path!r}, numpy.load({path!r}).astype(float)).")
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return _one_column(x, name, "shape")


def _one_column(x: Any, name: str, what: str) -> Any:
    """A 1-D array (NumPy or Dask) of ``x``: one column of a 2-D array is taken, other shapes raise."""
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise DataValidationError(f"{name} must be one-dimensional, got {what} {x.shape}.")
    return x


def n_rows(x: Any) -> int:
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


def map_reduce(func: Callable[..., _T], combine: Callable[[_T, _T], _T], arrays: Sequence[Any],
               chunk_rows: int | None = None) -> _T:
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
    base = np.frombuffer(mm, dtype=np.uint8, count=1).__array_interface__["data"][0]
    begin = chunk.__array_interface__["data"][0] - base
    end = begin + chunk.nbytes
    page = mmap.PAGESIZE
    lo = (begin // page) * page
    try:
        mm.madvise(mmap.MADV_DONTNEED, lo, ((end - lo + page - 1) // page) * page if end > lo else 0)
    except (ValueError, OSError):   # a mapping that refuses the advice keeps its pages: still correct
        pass
    return out


def _dask_map_reduce(func: Callable[..., _T], combine: Callable[[_T, _T], _T], srcs: Sequence[Any]) -> _T:
    import dask.array as da
    from dask.base import compute
    from dask.delayed import delayed

    ref = next(a for a in srcs if a is not None and is_dask(a))
    aligned = [None if a is None else (a.rechunk(ref.chunks) if is_dask(a) else da.from_array(a, chunks=ref.chunks))
               for a in srcs]
    blocks = [None if a is None else a.to_delayed().ravel().tolist() for a in aligned]
    nb = len(next(b for b in blocks if b is not None))
    fn, comb = delayed(func, pure=True), delayed(combine, pure=True)
    parts = [fn(*(None if b is None else b[i] for b in blocks)) for i in range(nb)]
    while len(parts) > 1:               # binary tree: partial statistics never pile up on one worker
        parts = [comb(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    result: _T = compute(parts[0])[0]   # dask types compute's results as Any
    return result


# --------------------------------------------------------------------------- group labels
def group_labels(groups: Any, chunk_rows: int | None = None) -> np.ndarray:
    """Sorted distinct group labels of a 1-D source (the order of
    :func:`fairopt.validation.check_groups`); missing labels raise.

    Examples
    --------
    >>> group_labels([2, 0, 2]).tolist()
    [0, 2]
    """
    def part(g: NDArray[Any]) -> NDArray[Any]:
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        # numpy's stubs reject None as an operand; np.equal compares each object label with None
        if g.dtype == object and np.equal(g, None).any():  # type: ignore[call-overload]
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
def group_sums(values: Sequence[Any], groups: Any, labels: np.ndarray, sample_weight: Any = None,
               chunk_rows: int | None = None) -> NDArray[np.float64]:
    """Per-group ``[sum of w, sum of w*v_1, ..., sum of w*v_m]`` for ``values`` a list of 1-D
    sources: the statistics of group rates and means (shape ``(m + 1, K)``).

    Examples
    --------
    >>> import numpy as np
    >>> group_sums([np.array([1.0, 0.0, 1.0])], np.array([0, 0, 1]), np.array([0, 1])).tolist()
    [[2.0, 1.0], [1.0, 1.0]]
    """
    K = len(labels)

    def part(g: NDArray[Any], w: NDArray[np.float64] | None, *vs: NDArray[Any]) -> NDArray[np.float64]:
        return _weighted_sums(_codes(g, labels), K, w, vs)
    return map_reduce(part, add_sums, [groups, sample_weight, *values], chunk_rows)


def add_sums(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a + b``: the ``combine`` of :func:`map_reduce` for partial sums (typed, unlike ``np.add``)."""
    return a + b


def _weighted_sums(codes: NDArray[np.integer[Any]], K: int, w: NDArray[Any] | None,
                   values: Sequence[ArrayLike]) -> NDArray[np.float64]:
    """``[sum of w, sum of w*v_1, ...]`` per code ``0..K-1``, shape ``(len(values) + 1, K)``
    (``w`` ``None``: unit weights)."""
    out = np.empty((len(values) + 1, K))
    out[0] = np.bincount(codes, weights=w, minlength=K)
    for i, v in enumerate(values):
        v = np.asarray(v, dtype=float)
        out[i + 1] = np.bincount(codes, weights=v if w is None else v * w, minlength=K)
    return out



def _check_numeric(v: Any, name: str) -> NDArray[Any]:
    """``v`` as an array of numbers: strings, bytes and objects are refused (``np.asarray(v, float)``
    would parse ``"0.5"`` silently, or fail with numpy's words)."""
    arr = np.asarray(v)
    if arr.dtype.kind == "O":       # e.g. a nullable pandas column through Dask: numbers held as objects
        import pandas as pd
        if pd.api.types.infer_dtype(arr, skipna=True) in ("floating", "integer", "mixed-integer-float", "boolean",
                                                          "decimal", "empty"):
            return arr.astype(float)
    if arr.dtype.kind not in "biuf":
        raise DataTypeError(f"{name} must hold numbers, got dtype {arr.dtype} (e.g. {arr.ravel()[:3].tolist()}); "
                            f"convert it where it lives, e.g. array.astype(float), and save it again.")
    return arr


def _check_scores(f: np.ndarray, score_map: _FloatMap | None = None) -> NDArray[np.float64]:
    f = np.asarray(_check_numeric(f, "the scores (X)"), dtype=float)
    if not np.isfinite(f).all():
        raise DataValidationError("scores must be finite; drop or impute the rows with NaN/inf scores.")
    return f if score_map is None else score_map(f)


def _check_weights(w: ArrayLike | None) -> NDArray[np.float64] | None:
    if w is None:
        return None
    w = np.asarray(_check_numeric(w, "sample_weight"), dtype=float)
    if not np.isfinite(w).all() or (w < 0).any():
        raise DataValidationError("sample_weight must be finite and non-negative.")
    return w


def _check_labels(y: ArrayLike | None) -> NDArray[np.float64] | None:
    if y is None:
        return None
    y = np.asarray(y)
    if not np.isin(y, (0, 1)).all():
        raise DataValidationError(f"y must be binary 0/1 labels, got classes {np.unique(y)[:5].tolist()}; chunked and "
                                  "Dask inputs read y as 0/1 with 1 the favourable label, so encode it where it "
                                  "lives, e.g. (y == favourable).astype(int).")
    return y.astype(float)


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


def labels_and_range(scores: Any, groups: Any, chunk_rows: int | None = None,
                     score_map: _FloatMap | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted group labels and each group's score range in **one** pass (the first pass of the
    quantised fit; :func:`group_labels` then :func:`score_range` read the data twice).

    Examples
    --------
    >>> import numpy as np
    >>> labels, lo, hi = labels_and_range(np.array([0.1, 0.9, 0.5]), np.array(["b", "b", "a"]))
    >>> labels.tolist(), lo.tolist(), hi.tolist()
    (['a', 'b'], [0.5, 0.1], [0.5, 0.9])
    """
    def part(f: NDArray[Any], g: NDArray[Any]) -> _Keyed:
        f = _check_scores(f, score_map)
        g = np.asarray(g)
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        # numpy's stubs reject None as an operand; np.equal compares each object label with None
        if g.dtype == object and np.equal(g, None).any():  # type: ignore[call-overload]
            raise DataValidationError("sensitive_features has missing (None) labels; fill or drop them.")
        u, inv = np.unique(g, return_inverse=True)
        lo, hi = _group_min_max(f, inv.reshape(-1), len(u))
        return u, np.stack([lo, hi])

    def comb(a: _Keyed, b: _Keyed) -> _Keyed:
        u = np.union1d(a[0], b[0])
        ka, kb = _keyed(a[0], a[1][:1], np.inf, u), _keyed(b[0], b[1][:1], np.inf, u)
        ha, hb = _keyed(a[0], a[1][1:], -np.inf, u), _keyed(b[0], b[1][1:], -np.inf, u)
        return u, np.concatenate([np.minimum(ka, kb), np.maximum(ha, hb)])
    labels, lohi = map_reduce(part, comb, [scores, groups], chunk_rows)
    return labels, lohi[0], lohi[1]


def keyed_group_sums(values: Sequence[Any], groups: Any, sample_weight: Any = None, chunk_rows: int | None = None,
                     transform: _Transform | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sorted group labels and per-group sums ``[w, w*v_1, ...]`` in **one** pass (labels need
    not be known in advance). ``transform(g, w, *values) -> (w, *values)`` may check or map a chunk.

    Examples
    --------
    >>> import numpy as np
    >>> labels, sums = keyed_group_sums([np.array([1.0, 0.0, 1.0])], np.array([5, 5, 7]))
    >>> labels.tolist(), sums.tolist()
    ([5, 7], [[2.0, 1.0], [1.0, 1.0]])
    """
    def part(g: NDArray[Any], w: NDArray[Any] | None, *values: NDArray[Any]) -> _Keyed:
        g = np.asarray(g)
        if g.dtype.kind == "f" and np.isnan(g).any():
            raise DataValidationError("sensitive_features has missing (NaN) labels; fill or drop them.")
        vs: Sequence[ArrayLike] = values
        if transform is not None:
            w, *vs = transform(g, w, *values)
        u, inv = np.unique(g, return_inverse=True)
        return u, _weighted_sums(inv.reshape(-1), len(u), w, vs)

    def comb(a: _Keyed, b: _Keyed) -> _Keyed:
        u = np.union1d(a[0], b[0])
        return u, _keyed(a[0], a[1], 0.0, u) + _keyed(b[0], b[1], 0.0, u)
    return map_reduce(part, comb, [groups, sample_weight, *values], chunk_rows)


