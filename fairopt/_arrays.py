"""The lowest input helpers: foreign frames to pandas (:func:`to_native`), 1-D arrays
(:func:`as_1d`) and their float form (:func:`as_float`).

They sit below :mod:`fairopt.validation` (which re-exports them) and :mod:`fairopt._labels`, which
both read 1-D inputs through them.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.errors import DataValidationError

_FOREIGN_MODULES = frozenset({"polars", "pyarrow", "modin", "cudf"})


def _is_foreign(obj: object) -> bool:
    if isinstance(obj, (np.ndarray, pd.DataFrame, pd.Series, pd.Index, list, tuple, str)) or sp.issparse(obj):
        return False
    return (type(obj).__module__.split(".")[0] in _FOREIGN_MODULES
            or hasattr(obj, "__narwhals_dataframe__") or hasattr(obj, "__narwhals_series__"))


def to_native(obj: Any) -> Any:
    """A pandas DataFrame / Series for a polars, pyarrow (or other narwhals-supported eager) frame or
    series, converted once through narwhals; everything else is returned untouched (numpy, scipy
    sparse, pandas, lists, and array types fairopt does not know, such as Dask collections).

    Column names, string and categorical dtypes (pandas 3's ``str`` dtype for polars/pyarrow
    strings) and missing values (``NaN``/``None``) come out as pandas would hold them, so the
    checks that follow treat every library the same.

    Examples
    --------
    >>> import polars as pl
    >>> to_native(pl.DataFrame({"age": [30, 40], "sex": ["f", "m"]})).columns.tolist()
    ['age', 'sex']
    """
    if obj is None or not _is_foreign(obj):
        return obj
    import narwhals as nw  # lazily: ``import fairopt`` loads no dataframe library
    try:
        native = nw.from_native(obj, eager_only=True, allow_series=True)
    except TypeError:      # a type narwhals does not read: leave it to numpy as before
        return obj
    return native.to_pandas()


def _first_missing(values: ArrayLike) -> tuple[int, int]:
    miss = np.asarray(pd.isna(values))
    return int(miss.sum()), int(np.argmax(miss)) if miss.any() else -1


def as_1d(x: Any, name: str, n: int | None = None, allow_missing: bool = False) -> np.ndarray:
    """Return ``x`` as a 1-D numpy array, checking its length against ``n`` and for missing values.

    Examples
    --------
    >>> from fairopt.errors import DataValidationError
    >>> as_1d([1, 2], "y").tolist()
    [1, 2]
    >>> try:
    ...     as_1d([1.0, float("nan")], "y")
    ... except DataValidationError as err:
    ...     print(str(err).split(";")[0])
    y has 1 missing value(s) (first at position 1)
    """
    if x is None:
        raise DataValidationError(f"{name} is required but was None.")
    x = to_native(x)
    if isinstance(x, pd.DataFrame):
        if x.shape[1] != 1:
            raise DataValidationError(
                f"{name} must be one column but a DataFrame with {x.shape[1]} columns was given; "
                "pass a Series or a 1-D array.")
        x = x.iloc[:, 0]
    arr = x.to_numpy() if isinstance(x, (pd.Series, pd.Index)) else np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D, got an array of shape {arr.shape}.")
    if n is not None and arr.shape[0] != n:
        raise DataValidationError(
            f"{name} has {arr.shape[0]} rows but the other inputs have {n}; pass arrays of the same length.")
    if not allow_missing:
        count, first = _first_missing(arr)
        if count:
            raise DataValidationError(
                f"{name} has {count} missing value(s) (first at position {first}); impute or drop those "
                "rows first (fairopt never drops rows silently).")
    return arr


def as_float(arr: np.ndarray, name: str) -> np.ndarray:
    """Convert to float64, requiring numeric (or boolean) finite values.

    Examples
    --------
    >>> import numpy as np
    >>> as_float(np.array([1, 2]), "X").dtype
    dtype('float64')
    """
    if arr.dtype == bool:
        return arr.astype(float)
    if arr.dtype.kind == "c":
        raise DataValidationError(f"{name}: Complex data not supported (dtype {arr.dtype}); pass real numbers.")
    if arr.dtype.kind in "USO" and not all(isinstance(v, (numbers.Number, np.bool_)) for v in arr.ravel()):
        raise DataValidationError(f"{name} must be numeric; got values of dtype {arr.dtype} "
                                  f"(e.g. {arr.ravel()[:3].tolist()}); encode them as numbers first.")
    try:
        out = np.asarray(arr, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"{name} must be numeric; got values of dtype {arr.dtype}.") from exc
    if not np.isfinite(out).all():
        bad = int((~np.isfinite(out)).sum())
        first = int(np.argmax(~np.isfinite(out).ravel()))
        raise DataValidationError(f"{name} has {bad} non-finite value(s) (inf or NaN; first at position "
                                  f"{first}); remove or clip them.")
    return out


def target_1d(y: Any, name: str, n: int | None = None) -> np.ndarray:
    """A target ``y`` as a 1-D array (:func:`as_1d`), with scikit-learn's wording for a missing ``y``
    and its warning for a column vector (both looked for by its estimator checks).

    Examples
    --------
    >>> target_1d([0, 1], "y").tolist()
    [0, 1]
    """
    if y is None:
        raise DataValidationError(f"{name}: this estimator requires y to be passed, but the target y is None.")
    if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                      f"({name}) to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=4)
    return as_1d(y, name, n)

