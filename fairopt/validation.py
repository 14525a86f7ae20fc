"""Input validation shared by every fairopt estimator (and the metrics).

One place checks what crosses the public boundary, so every estimator accepts the same inputs and
raises the same typed errors (:class:`~fairopt.errors.DataValidationError`,
:class:`~fairopt.errors.NotFittedError`) with messages that say what to fix. Nothing is dropped
or coerced silently: missing values, non-finite features, mismatched lengths, negative weights,
mixed label types and empty inputs raise.

API (all functions take the caller's ``name`` so messages name the argument):

Features
    :func:`check_X` -- rows, non-empty, finite numeric values (DataFrames and sparse kept as is).
    :func:`record_features` / :func:`align_features` -- remember the columns at ``fit`` and, at
    predict time, reorder a DataFrame by column name (or check the column count of an array).
Targets
    :func:`check_target` -- ``kind="continuous"`` (finite floats, optional ``interval``) or
    ``kind="binary"`` (labels in {0, 1}); :func:`encode_labels` -- any two class labels to 0/1
    with 1 the favourable ``pos_label`` (``fairopt._labels``), :func:`decode_labels`,
    :func:`proba_columns` and :func:`label_codes` back to the caller's labels.
Sensitive features
    :func:`check_groups` -> :class:`Groups` (integer ``codes`` and ``labels``). Accepts one
    attribute (1-D array, list of row labels, Series), several attributes for intersectional
    groups (DataFrame, 2-D array, mapping), or the name(s) of columns of ``X``
    (:func:`sensitive_columns` says which). :meth:`Groups.encode` maps new data onto the groups
    seen at fit.
Weights and scalars
    :func:`check_weights` (``sample_weight``), :func:`check_int` (``max_iter``, sample sizes).
Fitted estimators
    :func:`check_is_fitted`.
Parameters (``fairopt._param_validation``)
    :func:`validate_params` checks ``_parameter_constraints`` at ``fit`` and raises
    :class:`~fairopt.errors.ParameterError` (a ``ValueError``); :func:`check_numbers`,
    :func:`check_options` and :func:`parameter_error` cover what the constraints cannot express.
Data edge cases (``fairopt._data_checks``)
    :func:`check_group_weights` (a group whose weights are all 0), :func:`check_dense`,
    :func:`check_numeric_columns`, :func:`check_levels` (``MAX_LEVELS``), :func:`check_two_valued`.
Dataframe libraries
    :func:`to_native` -- a polars / pyarrow (any narwhals-supported eager) frame or series becomes
    pandas once, at the edge (one copy); numpy, scipy sparse, pandas and unknown array types (Dask,
    memmap) pass through untouched. Every check below calls it first, so every estimator, metric
    and constraint builder accepts the same frame libraries. :func:`to_native_numeric` is the
    numeric fast paths' variant: a polars / pyarrow frame of numeric columns becomes one float64
    array natively (one copy, no pandas frame of the original dtypes in between), and
    :func:`as_numeric_array` is the float array the numeric fast paths fit on. :func:`frame_kind` and
    :func:`to_frame_kind` give a result back in the caller's frame library.
Low-level
    :func:`as_1d`, :func:`as_float`.

Writing a new estimator::

    _parameter_constraints: ClassVar[dict] = {"eps": [Interval(Real, 0, 1, closed="both")]}

    def fit(self, X, y, *, sensitive_features, sample_weight=None):
        validate_params(self)              # ParameterError naming the parameter
        X = check_X(X, "MyEstimator.fit")
        n = num_rows(X)
        y = check_target(y, n, kind="binary")
        grp = check_groups(sensitive_features, n, X=X, min_groups=2)
        w = check_weights(sample_weight, n)
        check_group_weights(grp, w)        # no group may weigh 0 in total
        record_features(self, X)
        ...
    def predict(self, X, sensitive_features=None):
        check_is_fitted(self, "coef_")
        X = align_features(self, check_X(X, "MyEstimator.predict"))
        codes = self.groups_.encode(sensitive_features, X=X)   # if groups are needed
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt._arrays import _first_missing, as_1d, as_float, target_1d, to_native
from fairopt._data_checks import (
    MAX_LEVELS,
    check_dense,
    check_group_weights,
    check_levels,
    check_numeric_columns,
    check_two_valued,
)
from fairopt._labels import BinaryLabels, decode_labels, encode_labels, label_codes, proba_columns
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray
    from sklearn.base import BaseEstimator

    from fairopt._param_validation import (
        RANDOM_STATE,
        ParameterError,
        check_numbers,
        check_options,
        parameter_error,
        validate_params,
    )

_T = TypeVar("_T")

__all__ = [
    "MAX_LEVELS",
    "RANDOM_STATE",
    "BinaryLabels",
    "Groups",
    "ParameterError",
    "align_features",
    "as_1d",
    "as_float",
    "as_groups",
    "as_numeric_array",
    "check_X",
    "check_dense",
    "check_group_weights",
    "check_groups",
    "check_int",
    "check_is_fitted",
    "check_levels",
    "check_numbers",
    "check_numeric_columns",
    "check_options",
    "check_target",
    "check_two_valued",
    "check_unique_columns",
    "check_weights",
    "decode_labels",
    "encode_labels",
    "frame_kind",
    "label_codes",
    "num_rows",
    "parameter_error",
    "proba_columns",
    "record_features",
    "sensitive_columns",
    "to_frame_kind",
    "to_native",
    "to_native_numeric",
    "validate_params",
]


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
        return X.to_numpy(dtype=float)
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


# ------------------------------------------------------------------------------- features
def check_X(X: Any, name: str = "X", *, min_rows: int = 1, ensure_finite: bool = True) -> Any:
    """Validate a feature matrix and return it (DataFrames and sparse matrices unchanged).

    Lists become numpy arrays. Raises on ``None``, fewer than ``min_rows`` rows, 1-D or 3-D
    arrays, and (``ensure_finite``) NaN/inf in numeric columns or missing values in other columns
    of a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> check_X(np.ones((2, 3))).shape
    (2, 3)
    """
    if X is None:
        raise DataValidationError(f"{name}: X is required but was None.")
    X = to_native(X)
    check_unique_columns(X, name)
    if not isinstance(X, pd.DataFrame) and not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise DataValidationError(f"{name}: X must be 2-D (rows x features), got shape {X.shape}; "
                                      "Reshape your data, e.g. a single feature with X.reshape(-1, 1).")
    n = num_rows(X)
    if n < min_rows:
        raise DataValidationError(f"{name}: X has {n} rows; at least {min_rows} needed.")
    if X.shape[1] == 0:      # worded as scikit-learn's check_array, which its estimator checks match
        raise DataValidationError(f"{name}: X has 0 feature(s) (shape={tuple(X.shape)}) while a minimum of 1 is "
                                  "required; pass at least one feature column.")
    dtype = getattr(X, "dtype", None)
    if dtype is not None and dtype.kind == "c":
        raise DataValidationError(f"{name}: Complex data not supported (X has dtype {dtype}); pass real numbers.")
    if ensure_finite:
        if isinstance(X, pd.DataFrame):
            num = X.select_dtypes(include=["number", "bool"])
            bad_num = [c for c in num.columns if not np.isfinite(num[c].to_numpy(dtype=float)).all()]
            bad_other = [c for c in X.columns if c not in num.columns and X[c].isna().any()]
            if bad_num or bad_other:
                raise DataValidationError(f"{name}: X has NaN/inf or missing values in column(s) "
                                          f"{(bad_num + bad_other)[:10]}; impute or drop those rows.")
        else:
            # lil / dok hold Python lists or a dict, not a flat ``data`` array
            data = (X if X.format in ("csr", "csc", "coo", "bsr", "dia") else X.tocsr()).data if sp.issparse(X) else X
            if data.dtype.kind in "biuf":
                finite = np.isfinite(data)
                if not finite.all():
                    first = np.unravel_index(int(np.argmax(~finite)), data.shape) if not sp.issparse(X) \
                        else int(np.argmax(~finite))
                    raise DataValidationError(
                        f"{name}: X has {int((~finite).sum())} NaN/inf value(s) (first at {first}); "
                        "impute, clip or drop them.")
            elif data.dtype.kind == "O":
                count, first = _first_missing(data.ravel())
                if count:
                    raise DataValidationError(f"{name}: X has {count} missing value(s); impute or drop them.")
    return X


def check_unique_columns(X: Any, name: str = "X") -> None:
    """Refuse a frame whose column names repeat (selecting a repeated name returns several columns).

    Examples
    --------
    >>> import pandas as pd
    >>> try:
    ...     check_unique_columns(pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"]))
    ... except DataValidationError as err:
    ...     print(err)
    X has duplicate column name(s) ['a']; give every column a distinct name.
    """
    # a pyarrow Table's ``columns`` are its column arrays; its names are ``column_names``
    columns = getattr(X, "column_names", None)
    if columns is None:
        columns = getattr(X, "columns", None)
    if columns is None:
        return
    index = columns if isinstance(columns, pd.Index) else pd.Index(list(columns))
    if index.has_duplicates:
        dup = list(dict.fromkeys(index[index.duplicated()].tolist()))
        raise DataValidationError(f"{name} has duplicate column name(s) {dup[:10]}; give every column a "
                                  "distinct name.")


def record_features(estimator: BaseEstimator, X: Any, ignore: Sequence[Any] | None = None) -> None:
    """Set ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame with string columns);
    ``ignore`` names columns of the caller's frame that are not features (the sensitive columns
    named at fit), which :func:`align_features` drops at predict rather than refusing.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.base import BaseEstimator
    >>> class Model(BaseEstimator):
    ...     pass
    >>> model = Model()
    >>> record_features(model, pd.DataFrame({"a": [1, 2], "b": [3, 4]}))
    >>> model.n_features_in_, list(model.feature_names_in_)
    (2, ['a', 'b'])
    """
    estimator.n_features_in_ = int(X.shape[1]) if getattr(X, "ndim", 2) == 2 else 1
    estimator._columns_not_features = tuple(ignore or ())
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        estimator.feature_names_in_ = np.asarray(X.columns, dtype=object)
    elif "feature_names_in_" in estimator.__dict__:
        del estimator.feature_names_in_


def align_features(estimator: BaseEstimator, X: Any, name: str = "X") -> Any:
    """Bring predict-time ``X`` into the column layout seen at fit.

    A DataFrame is reordered by column name, so a reordered frame predicts exactly as the
    original; a column missing, unseen at fit or duplicated is an error (scikit-learn's
    ``feature_names_in_`` semantics: an extra column is as wrong as a missing one, since a frame
    with another column is other data). An array must have ``n_features_in_`` columns.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.base import BaseEstimator
    >>> class Model(BaseEstimator):
    ...     pass
    >>> model = Model()
    >>> X = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    >>> record_features(model, X)
    >>> align_features(model, X[["b", "a"]]).columns.tolist()     # back in the fitted order
    ['a', 'b']
    """
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and isinstance(X, pd.DataFrame):
        missing = [c for c in names if c not in X.columns]
        if missing:
            raise DataValidationError(f"{name} lacks column(s) {missing[:10]} seen at fit; pass the same "
                                      "features as at fit.")
        seen = set(map(str, names)) | set(map(str, getattr(estimator, "_columns_not_features", ())))
        extra = [c for c in X.columns if str(c) not in seen]
        if extra:
            raise DataValidationError(f"{name} has column(s) {extra[:10]} not seen at fit ({len(names)} features: "
                                      f"{list(names)[:10]}); pass the same features as at fit (drop the others).")
        check_unique_columns(X, name)
        return X.loc[:, list(names)]
    n_features = getattr(estimator, "n_features_in_", None)
    d = X.shape[1] if getattr(X, "ndim", 2) == 2 else 1
    if n_features is not None and d != n_features:
        raise DataValidationError(f"{name}: X has {d} features, but {type(estimator).__name__} is expecting "
                                  f"{n_features} features as input (it was fitted with {n_features}).")
    return X


# ------------------------------------------------------------------------------- targets
def check_target(y: Any, n: int, *, kind: str = "continuous", name: str = "y",
                 interval: tuple[float, float] | None = None) -> np.ndarray:
    """Validated float targets of length ``n``.

    ``kind="continuous"``: finite numbers, inside ``interval`` when given (values outside are
    rejected, never clipped). ``kind="binary"``: labels in {0, 1} (booleans allowed); other labels
    (strings, {-1, 1}, {1, 2}) raise with the hint to encode the favourable label as 1. A
    classifier that takes any two labels encodes them with :func:`encode_labels` instead.

    Examples
    --------
    >>> from fairopt.errors import DataValidationError
    >>> check_target([0.2, 0.5], 2, interval=(0, 1)).tolist()
    [0.2, 0.5]
    >>> try:
    ...     check_target([1.5], 1, interval=(0, 1))
    ... except DataValidationError as err:
    ...     print(str(err).split(";")[0])
    y must lie in [0, 1] (got [1.5, 1.5])
    """
    arr = target_1d(y, name, n)
    if kind == "binary":
        if arr.dtype.kind in "USO" and not all(isinstance(v, (numbers.Number, np.bool_)) for v in arr):
            raise DataValidationError(
                f"{name} has non-numeric labels {list(pd.unique(arr))[:5]}; encode them as 0/1 (1 = favourable "
                "label), e.g. (y == 'yes').astype(int).")
        out = as_float(arr, name)
        if not np.isin(out, (0.0, 1.0)).all():
            seen = np.unique(out)
            # scikit-learn's wording for the target type, then the fix
            kind_of = ("Unknown label type: continuous" if not np.equal(np.mod(seen, 1), 0).all() else
                       "Only binary classification is supported. The type of the target is multiclass"
                       if seen.size > 2 else "labels other than 0/1")
            raise DataValidationError(f"{name} must hold binary labels 0/1, got {seen[:5].tolist()} ({kind_of}); "
                                      "encode the favourable label as 1 and the other as 0.")
        return out
    if kind != "continuous":
        raise ValueError(f"kind={kind!r}")  # programming error, not user input
    out = as_float(arr, name)
    if interval is not None and out.size and (out.min() < interval[0] or out.max() > interval[1]):
        lo, hi = interval
        raise DataValidationError(
            f"{name} must lie in [{lo:g}, {hi:g}] (got [{out.min():.4g}, {out.max():.4g}]); rescale it, e.g. "
            "(y - y.min()) / (y.max() - y.min()), instead of relying on clipping.")
    return out


# ------------------------------------------------------------------------------- weights
def check_weights(sample_weight: Any, n: int, name: str = "sample_weight") -> np.ndarray:
    """Validated float weights (ones when ``sample_weight`` is None): finite, >= 0, positive total.

    Examples
    --------
    >>> from fairopt.errors import DataValidationError
    >>> check_weights([1, 2], 2).tolist()
    [1.0, 2.0]
    >>> try:
    ...     check_weights([1, -2], 2)
    ... except DataValidationError as err:
    ...     print(str(err).split(";")[0])
    sample_weight has 1 negative value(s) (first at position 1)
    """
    if sample_weight is None:
        return np.ones(n)
    w = as_float(as_1d(sample_weight, name, n), name)
    if (w < 0).any():
        first = int(np.argmax(w < 0))
        raise DataValidationError(
            f"{name} has {int((w < 0).sum())} negative value(s) (first at position {first}); weights must be "
            ">= 0.")
    if n and not w.sum() > 0:
        raise DataValidationError(f"{name} sums to 0 (every weight is zero); at least one row needs a positive weight.")
    return w


def check_int(value: Any, name: str, min_value: int = 1) -> int:
    """An integer parameter ``>= min_value`` (integral floats such as ``1e4`` accepted; ``2.5``,
    booleans, NaN and strings rejected).

    Examples
    --------
    >>> from fairopt.errors import DataValidationError
    >>> check_int(3, "max_iter")
    3
    >>> try:
    ...     check_int(0, "max_iter")
    ... except DataValidationError as err:
    ...     print(err)
    max_iter must be at least 1, got 0.
    """
    ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not ok and isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        ok = bool(np.isfinite(float(value))) and float(value).is_integer()
    if not ok:
        raise DataValidationError(f"{name} must be an integer, got {value!r}.")
    if int(value) < min_value:
        raise DataValidationError(f"{name} must be at least {min_value}, got {value!r}.")
    return int(value)


# ------------------------------------------------------------------------------- groups
@dataclass(frozen=True)
class Groups:
    """Integer group codes ``0..n_groups-1`` per row and the group labels (Index or MultiIndex).

    ``columns`` holds the names of ``X``'s columns the groups were read from (``None`` when the
    groups were passed as data).

    Examples
    --------
    >>> groups = check_groups(["b", "a", "b"])
    >>> groups.codes.tolist(), list(groups.labels), groups.n_groups
    ([1, 0, 1], ['a', 'b'], 2)
    """

    codes: np.ndarray
    labels: pd.Index
    columns: tuple | None = None

    @property
    def n_groups(self) -> int:
        """Number of distinct groups."""
        return len(self.labels)

    def counts(self, weights: ArrayLike | None = None) -> NDArray[np.float64]:
        """Row count (or total weight) of every group."""
        return np.bincount(self.codes, weights=weights, minlength=self.n_groups).astype(float)

    def encode(self, sensitive_features: Any, n: int | None = None, X: Any = None,
               name: str = "sensitive_features") -> NDArray[np.intp]:
        """Codes of new rows in these groups; groups unseen here raise.

        ``sensitive_features=None`` reads the columns the groups came from out of ``X``.
        """
        if sensitive_features is None and self.columns is not None:
            sensitive_features = list(self.columns)
        new = check_groups(sensitive_features, n, X=X, name=name)
        pos = self.labels.get_indexer(new.labels)
        if (pos < 0).any():
            unseen = [new.labels[i] for i in np.flatnonzero(pos < 0)[:5]]
            raise DataValidationError(f"group(s) {unseen} were not seen at fit (known groups: "
                                      f"{list(self.labels)[:10]}); refit with rows from every group.")
        return pos[new.codes].astype(np.intp)


def sensitive_columns(sensitive_features: Any, X: Any, n: int | None = None) -> list[str] | None:
    """Names of ``X``'s columns when ``sensitive_features`` names them, else ``None``.

    A string names one column. A list/tuple of strings names columns only when its length differs
    from the number of rows; a list with one entry per row is always read as row labels (so
    ``["a", "b", "a", ...]`` is one attribute even when ``X`` has columns ``a`` and ``b``).

    Examples
    --------
    >>> import pandas as pd
    >>> sensitive_columns("sex", pd.DataFrame({"sex": [1], "x": [2]}))
    ['sex']
    """
    X = to_native(X)
    if isinstance(sensitive_features, str):
        cols = [sensitive_features]
    elif (isinstance(sensitive_features, (list, tuple)) and sensitive_features
          and all(isinstance(c, str) for c in sensitive_features)
          and len(sensitive_features) != (num_rows(X) if n is None and X is not None else n)):
        cols = list(sensitive_features)
    else:
        return None
    if not isinstance(X, pd.DataFrame):
        raise DataValidationError(f"sensitive_features={sensitive_features!r} names columns, so X must be a "
                                  "pandas DataFrame containing them (or pass one group label per row).")
    missing = [c for c in cols if c not in X.columns]
    if missing:
        raise DataValidationError(f"sensitive_features names {missing}: not a column of X, i.e. not in X's "
                                  f"columns {list(X.columns)[:20]}; pass one group label per row ({num_rows(X)} "
                                  "rows) or existing column names.")
    if len(set(cols)) != len(cols):
        raise DataValidationError(f"sensitive_features names a column twice: {cols}.")
    return cols


def _columns(sensitive_features: Any) -> tuple[list[Any], list[Any]]:
    """Split group input into a list of 1-D columns (pandas Series stay Series: a categorical or
    Arrow string column is coded from its own codes or dictionary) and their names."""
    sensitive_features = to_native(sensitive_features)
    if isinstance(sensitive_features, Mapping):
        sensitive_features = pd.DataFrame(dict(sensitive_features))
    if isinstance(sensitive_features, pd.DataFrame):
        if sensitive_features.shape[1] == 0:
            raise DataValidationError("sensitive_features is a DataFrame with no columns; pass at least one.")
        names = list(sensitive_features.columns)
        return [col for _, col in sensitive_features.items()], names  # per column, not per row
    if isinstance(sensitive_features, pd.Series):
        return [sensitive_features], [sensitive_features.name]
    arr = np.asarray(sensitive_features)
    # a NumPy string array holds strings only: the per-element check is for lists numpy converted
    typed = isinstance(sensitive_features, np.ndarray) and arr.dtype.kind == "U"
    if (arr.ndim == 1 and arr.dtype.kind in "US" and not typed
            and not all(isinstance(v, str) for v in sensitive_features)):
        # numpy turned mixed labels (["a", 1], ["a", nan]) into strings: keep the objects so the
        # mixed types and missing values are caught instead of becoming groups "1" and "nan"
        arr = np.empty(len(sensitive_features), dtype=object)
        arr[:] = list(sensitive_features)
    if arr.ndim == 1:
        return [arr], [None]
    if arr.ndim == 2:
        return [arr[:, j] for j in range(arr.shape[1])], [f"sf{j}" for j in range(arr.shape[1])]
    raise DataValidationError(
        f"sensitive_features must be 1-D (one attribute) or 2-D (rows x attributes); got shape {arr.shape}.")


def _series_codes(col: Any, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes and sorted labels of a categorical (string or numeric categories) or Arrow string
    Series of length ``n`` without missing values, read from pandas' codes or Arrow's
    ``dictionary_encode`` (the same as ``pd.factorize(col.to_numpy(), sort=True)``, without
    turning the rows into Python objects); ``None`` for any other column (the general path)."""
    if not isinstance(col, pd.Series) or len(col) != n or n == 0:
        return None
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        numeric = isinstance(cats.dtype, np.dtype) and cats.dtype.kind in "iuf"
        if not (numeric or isinstance(cats.dtype, pd.StringDtype)):
            return None   # object categories may mix label types: the general path checks them
        raw = col.cat.codes.to_numpy()
        if raw.min() < 0:
            return None
        seen = np.flatnonzero(np.bincount(raw, minlength=len(cats)))
        values = cats.to_numpy()[seen]        # the observed categories only, as the general path
        order = np.argsort(values, kind="stable")
        position = np.empty(len(cats), dtype=np.intp)
        position[seen[order]] = np.arange(seen.size)
        return position[raw], values[order]
    coded = _arrow_sorted_codes(col)
    return None if coded is None else (coded[1], coded[0])


def _arrow_sorted_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Sorted distinct values and row codes of an Arrow-backed string Series without missing
    values, by Arrow's ``dictionary_encode`` (``None`` for any other Series).

    Examples
    --------
    >>> import pandas as pd
    >>> values, codes = _arrow_sorted_codes(pd.Series(["b", "a", "b"], dtype="string[pyarrow]"))
    >>> values.tolist(), codes.tolist()
    (['a', 'b'], [1, 0, 1])
    """
    dtype = col.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    encoded = pc.dictionary_encode(pa.chunked_array(pa.array(col.array)))
    if encoded.null_count or encoded.num_chunks == 0:
        return None
    values = encoded.chunk(0).dictionary.to_numpy(zero_copy_only=False)   # one dictionary for every chunk
    raw = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks])
    order = np.argsort(values, kind="stable")
    position = np.empty(order.size, dtype=np.intp)
    position[order] = np.arange(order.size)
    return values[order], position[raw]


def _factorize(col: np.ndarray, label: str) -> tuple[np.ndarray, np.ndarray]:
    if col.dtype == object:
        kinds = {"str" if isinstance(v, str) else "number" if isinstance(v, (numbers.Number, np.bool_))
                 else type(v).__name__ for v in pd.unique(col)}
        if len(kinds) > 1:
            raise DataValidationError(
                f"{label} mixes label types {sorted(kinds)}; use one type for every row, e.g. convert all "
                "labels to strings with .astype(str).")
    if col.dtype.kind == "U":   # NumPy strings: a sort of the fixed-width values beats hashing them as objects
        uniques, codes = np.unique(col, return_inverse=True)
        return codes.reshape(-1), uniques
    try:
        return pd.factorize(col, sort=True)
    except TypeError as exc:
        raise DataValidationError(f"{label} has labels that cannot be ordered ({exc}); use strings or "
                                  "numbers.") from exc


def check_groups(sensitive_features: Any, n: int | None = None, *, X: Any = None,
                 groups: Sequence[Any] | pd.Index | None = None, min_groups: int = 1,
                 name: str = "sensitive_features") -> Groups:
    """Factorise group membership into codes; several columns define intersectional groups.

    ``sensitive_features`` may be one attribute (1-D array, Series, list of row labels), several
    (DataFrame, 2-D array, ``{name: column}``), or column name(s) of ``X`` (see
    :func:`sensitive_columns`). Labels must be all strings or all numbers; missing labels raise.

    Rows of a multi-column input are combined lexicographically (each column factorised with
    sorted levels, then the code tuples re-factorised), so labels come out sorted and only
    observed combinations become groups. ``groups`` optionally declares the full list of groups
    (labels, or tuples for several columns); declared groups absent from the data then exist
    with zero weight, and observed groups missing from the declaration are an error.
    ``min_groups`` (e.g. 2 for a fairness constraint) is checked on the observed groups.

    Examples
    --------
    >>> check_groups(["b", "a", "b"]).labels.tolist()
    ['a', 'b']
    """
    if sensitive_features is None:
        raise DataValidationError(f"{name} is required: pass the group of every row (array, Series, "
                                  "DataFrame for intersectional groups, or the name(s) of columns of X).")
    X = to_native(X)
    sensitive_features = to_native(sensitive_features)
    if n is None and X is not None:
        n = num_rows(X)
    cols_of_X = sensitive_columns(sensitive_features, X, n) if X is not None else None
    if cols_of_X is not None:
        sensitive_features = X[cols_of_X]
    cols, names = _columns(sensitive_features)
    m = len(cols[0]) if n is None else n
    codes_list, levels = [], []
    for col, cname in zip(cols, names, strict=True):
        label = name if cname is None else f"{name}[{cname!r}]"
        fast = _series_codes(col, m)
        if fast is not None:
            c, u = fast
        else:
            c, u = _factorize(as_1d(col, label, m), label)
        codes_list.append(c.astype(np.intp))
        levels.append(np.asarray(u, dtype=object) if len(cols) > 1 else u)
    if len(cols) == 1:
        codes = codes_list[0]
        labels = pd.Index(levels[0], name=names[0])
    else:
        combined = codes_list[0]
        for c, u in zip(codes_list[1:], levels[1:], strict=True):
            combined, _ = pd.factorize(combined * len(u) + c, sort=True)
        codes = combined.astype(np.intp)
        _, first = np.unique(codes, return_index=True)
        labels = pd.MultiIndex.from_arrays([u[c[first]] for c, u in zip(codes_list, levels, strict=True)], names=names)
    if len(labels) < min_groups:
        count = "a single group" if len(labels) == 1 else f"{len(labels)} groups"
        raise DataValidationError(f"{name} has {count} {list(labels)[:5]} in {m} sample(s); at least {min_groups} "
                                  "are needed (a fairness constraint compares groups).")
    if groups is not None:
        declared = groups if isinstance(groups, pd.Index) else pd.Index(list(groups))
        if declared.has_duplicates:
            raise DataValidationError("groups contains duplicate labels; list each group once.")
        pos = declared.get_indexer(labels)
        if (pos < 0).any():
            missing = list(labels[pos < 0])[:5]
            raise DataValidationError(
                f"observed group(s) {missing} are not in the declared groups {list(declared)[:10]}; add them "
                "to `groups` or fix sensitive_features.")
        codes = pos[codes].astype(np.intp)
        labels = declared.set_names(labels.names) if declared.nlevels == labels.nlevels else declared
    return Groups(codes=codes, labels=labels, columns=None if cols_of_X is None else tuple(cols_of_X))


def as_groups(sensitive_features: Any, n: int | None = None) -> Groups:
    """``sensitive_features`` itself if it is already :class:`Groups`, else :func:`check_groups`.

    Examples
    --------
    >>> import pandas as pd
    >>> as_groups(pd.DataFrame({"sex": ["F", "M"], "race": ["x", "y"]})).labels.tolist()
    [('F', 'x'), ('M', 'y')]
    """
    if isinstance(sensitive_features, Groups):
        if n is not None and sensitive_features.codes.size != n:
            raise DataValidationError(f"sensitive_features has {sensitive_features.codes.size} rows for {n}.")
        return sensitive_features
    return check_groups(sensitive_features, n)


# ------------------------------------------------------------------------------- fitted
def check_is_fitted(estimator: object, attribute: str, hint: str = "fit(X, y, sensitive_features=...)") -> None:
    """Raise :class:`~fairopt.errors.NotFittedError` unless ``estimator`` has ``attribute``.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> from fairopt.errors import NotFittedError
    >>> class Model(BaseEstimator):
    ...     pass
    >>> try:
    ...     check_is_fitted(Model(), "coef_")
    ... except NotFittedError as err:
    ...     print(err)
    Model is not fitted; call fit(X, y, sensitive_features=...) first.
    """
    if not hasattr(estimator, attribute):
        from fairopt.errors import NotFittedError
        raise NotFittedError(f"{type(estimator).__name__} is not fitted; call {hint} first.")


_PARAMETER_NAMES = ("RANDOM_STATE", "ParameterError", "check_numbers", "check_options", "parameter_error",
                    "validate_params")


def __getattr__(name: str) -> Any:
    # the parameter checks need scikit-learn, whose import costs seconds; the data checks
    # (check_groups for a ranking or a constraint block, for instance) must not pay it
    if name in _PARAMETER_NAMES:
        from fairopt import _param_validation
        value = getattr(_param_validation, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
