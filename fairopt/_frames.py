"""Dataframe libraries at the edge: which library a frame comes from, the numeric fast path's
single float64 copy, and a result given back in the caller's library (re-exported by
:mod:`fairopt.validation`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from fairopt._arrays import to_native

if TYPE_CHECKING:
    from numpy.typing import NDArray

_T = TypeVar("_T")

__all__ = ["as_numeric_array", "frame_kind", "num_rows", "to_frame_kind", "to_native_numeric"]


# ------------------------------------------------------------------------------- frame libraries
#: top-level modules whose eager frames / series narwhals reads (checked by name, so none is imported)
def frame_kind(obj: object) -> str:
    """``"polars"``, ``"pyarrow"``, ``"pandas"`` or ``"default"`` (anything else): the frame library of
    ``obj``, read from its type without importing any library.

    Examples
    --------
    >>> import pandas as pd
    >>> frame_kind(pd.DataFrame({"a": [1]})), frame_kind([1, 2])
    ('pandas', 'default')
    """
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return "pandas"
    mod = type(obj).__module__.split(".")[0]
    return mod if mod in ("polars", "pyarrow") else "default"


def _plain_arrow_metadata(table: Any) -> bool:
    """True when ``table``'s pandas metadata (if any) keeps no index column and renames no column, so
    reading its columns directly gives the frame ``to_pandas`` would."""
    meta = table.schema.pandas_metadata or {}
    return (not any(isinstance(i, str) for i in meta.get("index_columns", []))
            and all(c.get("pandas_type") == "unicode" for c in meta.get("column_indexes", []))
            and all(c.get("name") == c.get("field_name") for c in meta.get("columns", [])
                    if c.get("field_name") in table.column_names))


def to_native_numeric(X: Any, sensitive_features: Any = None) -> Any:
    """:func:`to_native` for the numeric fast paths: a polars or pyarrow frame whose columns are all
    integer, float or boolean (with no nulls) becomes a pandas DataFrame over ONE float64 array,
    filled column by column from the frame's own buffers, so :func:`as_numeric_array` returns that
    array without a second copy.

    Column names are kept, so ``feature_names_in_`` is recorded as on the pandas route. Every
    other input goes through :func:`to_native` unchanged: other types, frames with a non-numeric
    column or a null (the checks then report them as before), pyarrow tables whose pandas metadata
    restores an index or column names, and frames whose columns ``sensitive_features`` names (the
    group labels keep their dtypes).

    Examples
    --------
    >>> import polars as pl
    >>> X = to_native_numeric(pl.DataFrame({"age": [30, 40], "score": [0.5, 1.5]}))
    >>> X.columns.tolist(), as_numeric_array(X).dtype
    (['age', 'score'], dtype('float64'))
    """
    kind = frame_kind(X)
    if kind not in ("polars", "pyarrow") or isinstance(sensitive_features, str) or (
            isinstance(sensitive_features, (list, tuple)) and all(isinstance(c, str) for c in sensitive_features)):
        return to_native(X)   # sensitive_features may name columns of X: read them with their dtypes
    import narwhals as nw  # lazily: ``import fairopt`` loads no dataframe library
    try:
        frame = nw.from_native(X, eager_only=True)
    except (TypeError, nw.exceptions.DuplicateError):   # a series, a lazy frame, duplicate names
        return to_native(X)
    numeric = (nw.Int8, nw.Int16, nw.Int32, nw.Int64, nw.UInt8, nw.UInt16, nw.UInt32, nw.UInt64,
               nw.Float32, nw.Float64, nw.Boolean)
    names = frame.columns
    if (not names or not all(isinstance(t, numeric) for t in frame.schema.values())
            or any(frame.null_count().row(0)) or (kind == "pyarrow" and not _plain_arrow_metadata(X))):
        return to_native(X)
    out = np.empty((len(frame), len(names)), order="F")   # the layout pandas' to_numpy gives
    for j, name in enumerate(names):                       # per column (zero-copy reads), never per row
        out[:, j] = frame.get_column(name).to_numpy()
    return pd.DataFrame(out, columns=names, copy=False)


def as_numeric_array(X: _T) -> _T | NDArray[np.float64]:
    """``X`` as one C-contiguous float64 numpy array when it is a DataFrame of numeric / boolean
    columns (one copy), so estimators fitted many times (the reductions' oracles) validate a plain
    array instead of re-checking a frame on every call; other inputs are returned unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> as_numeric_array(pd.DataFrame({"a": [1, 2], "b": [True, False]}))
    array([[1., 1.],
           [2., 0.]])
    """
    if isinstance(X, pd.DataFrame) and all(pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)
                                           for t in X.dtypes):
        out: NDArray[np.float64] = X.to_numpy(dtype=float)
        return out
    return X


def to_frame_kind(frame: pd.DataFrame, kind: str) -> Any:
    """``frame`` (pandas) in the library ``kind`` names (``"polars"``, ``"pyarrow"``; ``"pandas"``
    and ``"default"`` return it unchanged): resamplers return the frame type they were given.

    Examples
    --------
    >>> import pandas as pd
    >>> type(to_frame_kind(pd.DataFrame({"a": [1]}), "polars")).__name__
    'DataFrame'
    """
    if kind == "polars":
        import polars as pl
        return pl.from_pandas(frame)
    if kind == "pyarrow":
        import pyarrow as pa
        return pa.Table.from_pandas(frame, preserve_index=False)
    return frame


# ------------------------------------------------------------------------------- 1-D arrays
def num_rows(X: Any) -> int:
    """Number of rows of an array, DataFrame, sparse matrix or sequence.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> num_rows(np.ones((3, 2))), num_rows(pd.DataFrame({"a": [1, 2]}))
    (3, 2)
    """
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:       # array-likes with only __array__ (no shape, no len)
        return int(np.asarray(X).shape[0])
