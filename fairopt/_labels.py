"""Binary class labels of the fairness classifiers (part of :mod:`fairopt.validation`, which
re-exports it): any two labels in, 0/1 inside, the caller's labels out.

The classifiers encode ``y`` once at the edge to 0/1 with 1 the favourable label (``pos_label``)
and decode at predict time, as scikit-learn's binary classifiers do with ``classes_``. Labels
0/1 (or booleans) with ``pos_label=None`` keep 1 favourable and encode to the very same floats, so
existing 0/1 fits are unchanged.
"""
from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from fairopt._arrays import as_1d, as_float, target_1d
from fairopt.errors import DataValidationError

__all__ = ["BinaryLabels", "decode_labels", "encode_labels", "label_codes", "proba_columns"]


class BinaryLabels(NamedTuple):
    """Encoded labels: ``y`` (float 0/1, 1 = favourable), ``classes`` (the caller's two labels,
    sorted) and ``pos_index`` (position of the favourable label in ``classes``).

    Examples
    --------
    >>> enc = encode_labels([-1, 1, -1], 3, pos_label=-1)
    >>> enc.y.tolist(), enc.classes.tolist(), enc.pos_index
    ([1.0, 0.0, 1.0], [-1, 1], 0)
    """

    y: NDArray[np.float64]
    classes: NDArray[Any]
    pos_index: int


def _is_zero_one(values: NDArray[Any]) -> bool:
    """Every distinct label is the number 0 or 1 (booleans included), whatever the dtype."""
    return all(isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, complex) and v in (0, 1)
               for v in values.tolist())


def _distinct(arr: NDArray[Any], name: str) -> NDArray[Any]:
    """Sorted distinct labels; mixed label types (strings and numbers) raise."""
    uniq = pd.unique(arr)       # hashing, then sorting the few distinct labels (not the rows)
    if arr.dtype == object:
        kinds = {"str" if isinstance(v, str) else "number" if isinstance(v, (numbers.Number, np.bool_))
                 else type(v).__name__ for v in uniq}
        if len(kinds) > 1:
            raise DataValidationError(f"{name} mixes label types {sorted(kinds)}; use one type for every row, e.g. "
                                      "convert all labels to strings with .astype(str).")
        if kinds - {"str", "number"}:
            raise DataValidationError(f"{name} holds labels of type {sorted(kinds)}; class labels must be strings, "
                                      "numbers or booleans.")
    if arr.dtype.kind == "f" and uniq.size and not np.equal(np.mod(uniq, 1), 0).all():
        # scikit-learn's wording for the target type, then the fix
        raise DataValidationError(f"{name} holds real values such as {uniq[np.mod(uniq, 1) != 0][:3].tolist()} "
                                  "(Unknown label type: continuous); a classifier needs class labels, e.g. "
                                  "(y > threshold).astype(int).")
    return np.unique(np.asarray(uniq, dtype=arr.dtype))


def encode_labels(y: Any, n: int, *, pos_label: Any = None, name: str = "y") -> BinaryLabels:
    """Encode binary class labels to 0/1, with 1 the favourable label ``pos_label``.

    ``y`` may hold any two labels (strings, ``{1, 2}``, ``{-1, 1}``, booleans). ``pos_label=None``
    means 1 when the labels are 0/1 (one of them may be absent, as in a post-processing sample of
    one label), else the greater of the two sorted labels (``classes[1]``, scikit-learn's positive
    class). More than two labels, one label that is not 0/1, or a ``pos_label`` not among the
    labels raise :class:`~fairopt.errors.DataValidationError` naming the labels seen.

    Parameters
    ----------
    y : array-like of shape (n,)
        Class labels; missing labels raise.
    n : int
        Expected number of rows.
    pos_label : object, optional
        The favourable label.
    name : str, default "y"
        Name of ``y`` in error messages.

    Returns
    -------
    BinaryLabels
        ``y`` as float 0/1 (1 where the label is ``pos_label``), the sorted labels ``classes``
        (``[0, 1]`` for numeric 0/1 labels, ``[False, True]`` for booleans) and ``pos_index``.

    Examples
    --------
    >>> enc = encode_labels(["no", "yes", "yes"], 3)
    >>> enc.y.tolist(), enc.classes.tolist(), enc.pos_index
    ([0.0, 1.0, 1.0], ['no', 'yes'], 1)
    >>> encode_labels([1, 2, 2], 3, pos_label=1).y.tolist()
    [1.0, 0.0, 0.0]
    >>> try:
    ...     encode_labels(["a", "b", "c"], 3)
    ... except DataValidationError as err:
    ...     print(str(err).split(";")[0])
    y has 3 labels ['a', 'b', 'c'] (Only binary classification is supported. The type of the target is multiclass)
    """
    arr = target_1d(y, name, n)
    if arr.dtype.kind == "c":
        raise DataValidationError(f"{name}: Complex data not supported (dtype {arr.dtype}); pass class labels.")
    # 0/1 labels (the common case) are recognised in one vectorised pass, without sorting the rows
    zero_one = arr.dtype == bool or (arr.dtype.kind in "iuf" and bool(((arr == 0) | (arr == 1)).all()))
    classes = np.array([0, 1]) if zero_one else _distinct(arr, name)
    seen = classes.tolist()
    if classes.size > 2:
        raise DataValidationError(
            f"{name} has {classes.size} labels {seen[:10]} (Only binary classification is supported. The type of "
            "the target is multiclass); pass two labels, e.g. (y == favourable).astype(int), and name the "
            "favourable one with pos_label.")
    if zero_one or _is_zero_one(classes):
        boolean = arr.dtype == bool
        out_classes = np.array([False, True]) if boolean else np.array([0, 1])
        if pos_label is None or _same(pos_label, 1):
            return BinaryLabels(as_float(arr, name), out_classes, 1)
        if _same(pos_label, 0):
            return BinaryLabels(1.0 - as_float(arr, name), out_classes, 0)
        raise DataValidationError(f"pos_label={pos_label!r} is not one of the labels {out_classes.tolist()} of "
                                  f"{name}; pass pos_label=1 (the default) or 0.")
    if classes.size < 2:
        raise DataValidationError(
            f"{name} has one label {seen}; a binary classifier needs samples of at least 2 classes, so pass "
            "rows of both labels (or encode them as 0/1, where one absent label is allowed).")
    if pos_label is None:
        pos_index = 1
    else:
        hits = [i for i, c in enumerate(seen) if _same(pos_label, c)]
        if not hits:
            raise DataValidationError(f"pos_label={pos_label!r} is not one of the labels {seen} of {name}; pass "
                                      "one of them (the favourable outcome) or None (the greater label).")
        pos_index = hits[0]
    return BinaryLabels((arr == classes[pos_index]).astype(float), classes, pos_index)


def _same(a: Any, b: Any) -> bool:
    """``a == b`` as one boolean (a string never equals a number)."""
    if isinstance(a, str) != isinstance(b, str):
        return False
    return bool(a == b)


def decode_labels(y01: ArrayLike, classes: NDArray[Any], pos_index: int) -> NDArray[Any]:
    """The caller's labels of 0/1 predictions (1 = ``classes[pos_index]``).

    Examples
    --------
    >>> decode_labels(np.array([1, 0, 1]), np.array(["no", "yes"]), 0).tolist()
    ['no', 'yes', 'no']
    """
    y01 = np.asarray(y01)
    return np.asarray(classes)[np.where(y01 > 0.5, pos_index, 1 - pos_index)]


def proba_columns(p1: Any, pos_index: int) -> Any:
    """``predict_proba`` of a binary classifier: columns in the order of ``classes_``, given the
    probability ``p1`` of the favourable label (NumPy or Dask).

    Examples
    --------
    >>> proba_columns(np.array([0.25]), 0).tolist()
    [[0.25, 0.75]]
    """
    cols = [1.0 - p1, p1] if pos_index == 1 else [p1, 1.0 - p1]
    if type(p1).__module__.startswith("dask"):
        import dask.array as da
        return da.stack(cols, axis=1)  # type: ignore[no-untyped-call, unused-ignore]  # strict only: dask.array ships no annotations
    return np.column_stack(cols)


def label_codes(y: Any, classes: NDArray[Any], n: int, name: str = "y") -> NDArray[np.intp]:
    """Position of every label of ``y`` in the fitted ``classes``; labels not seen at fit raise.

    Examples
    --------
    >>> label_codes(["yes", "no"], np.array(["no", "yes"]), 2).tolist()
    [1, 0]
    """
    arr = as_1d(y, name, n)
    if _is_zero_one(np.asarray(classes)) and (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        values = as_float(arr, name)
        bad = ~np.isin(values, (0.0, 1.0))
        codes = values.astype(np.intp)
    else:
        codes = pd.Index(classes).get_indexer(arr)
        bad = codes < 0
    if bad.any():
        raise DataValidationError(f"{name} has labels {pd.unique(arr[bad])[:5].tolist()} not seen at fit; the "
                                  f"fitted labels are {np.asarray(classes).tolist()}.")
    return codes
