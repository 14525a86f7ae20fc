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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from fairopt._frames import as_numeric_array, frame_kind, num_rows, to_frame_kind, to_native_numeric
from fairopt._groups import Groups, as_groups, check_groups, sensitive_columns
from fairopt._groups import _arrow_sorted_codes as _arrow_sorted_codes  # private helpers, used by
from fairopt._groups import _columns as _columns  # preprocessing/_frame.py and the overhead tests
from fairopt._groups import _factorize as _factorize
from fairopt._labels import BinaryLabels, decode_labels, encode_labels, label_codes, proba_columns
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt._param_validation import (
        RANDOM_STATE,
        ParameterError,
        check_numbers,
        check_options,
        parameter_error,
        validate_params,
    )

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
    >>> model = BaseEstimator()
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
    >>> model = BaseEstimator()    # any estimator
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
