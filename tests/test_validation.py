"""fairopt.validation: the one input-validation module every estimator uses."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError as SklearnNotFittedError

from fairopt.errors import DataValidationError, NotFittedError
from fairopt.validation import (
    align_features,
    check_groups,
    check_int,
    check_is_fitted,
    check_target,
    check_weights,
    check_X,
    record_features,
    sensitive_columns,
)


def test_not_fitted_error_is_sklearns():
    assert issubclass(NotFittedError, SklearnNotFittedError)
    with pytest.raises(SklearnNotFittedError, match="call fit"):
        check_is_fitted(object(), "coef_")


def test_list_of_row_labels_is_row_labels_even_when_they_name_columns():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.0, 1.0, 0.0, 1.0]})
    labels = ["a", "b", "a", "a"]
    assert sensitive_columns(labels, X) is None
    grp = check_groups(labels, X=X)
    assert list(grp.labels) == ["a", "b"] and grp.codes.tolist() == [0, 1, 0, 0] and grp.columns is None
    # a list shorter than the rows names columns; a str names one column
    assert sensitive_columns(["a", "b"], X) == ["a", "b"]
    by_name = check_groups("b", X=X)
    assert by_name.columns == ("b",) and by_name.codes.tolist() == [0, 1, 0, 1]
    with pytest.raises(DataValidationError, match="not a column"):
        check_groups(["a", "zz"], X=X)


def test_multi_column_groups_are_intersectional_and_encode_new_rows():
    sf = pd.DataFrame({"sex": ["f", "m", "f", "m"], "race": [1, 1, 2, 2]})
    grp = check_groups(sf, 4)
    assert grp.n_groups == 4 and isinstance(grp.labels, pd.MultiIndex)
    assert grp.encode(sf.iloc[::-1]).tolist() == grp.codes[::-1].tolist()
    with pytest.raises(DataValidationError, match="not seen at fit"):
        grp.encode(pd.DataFrame({"sex": ["x"], "race": [1]}))
    assert check_groups(np.array([[0, 1], [1, 1], [0, 1]]), 3).n_groups == 2


@pytest.mark.parametrize("bad, what", [(["a", 1, "a"], "mixes label types"), (["a", None, "b"], "missing"),
                                       (["a", np.nan, "b"], "missing"), ([1.0, np.nan, 2.0], "missing")])
def test_mixed_or_missing_group_labels_raise(bad, what):
    with pytest.raises(DataValidationError, match=what):
        check_groups(bad, 3)


def test_min_groups_and_lengths():
    with pytest.raises(DataValidationError, match="at least 2"):
        check_groups(np.zeros(5), 5, min_groups=2)
    with pytest.raises(DataValidationError, match="rows"):
        check_groups([0, 1], 3)
    with pytest.raises(DataValidationError, match="required"):
        check_groups(None, 3)


def test_check_X():
    with pytest.raises(DataValidationError, match="NaN/inf"):
        check_X(np.array([[1.0, np.inf]]))
    with pytest.raises(DataValidationError, match="NaN/inf"):
        check_X(pd.DataFrame({"a": [1.0, np.nan]}))
    with pytest.raises(DataValidationError, match="NaN/inf"):
        check_X(sp.csr_matrix(np.array([[0.0, np.nan]])))
    with pytest.raises(DataValidationError, match="0 rows"):
        check_X(np.zeros((0, 3)))
    with pytest.raises(DataValidationError, match="2-D"):
        check_X(np.zeros(3))
    assert isinstance(check_X([[1, 2]]), np.ndarray)


def test_feature_alignment_by_name():
    class Est:
        pass
    est = Est()
    X = pd.DataFrame({"a": [1.0], "b": [2.0]})
    record_features(est, X)
    assert list(align_features(est, X[["b", "a"]]).columns) == ["a", "b"]
    with pytest.raises(DataValidationError, match="lacks column"):
        align_features(est, X[["a"]])
    record_features(est, X.to_numpy())
    with pytest.raises(DataValidationError, match="fitted with 2"):
        align_features(est, np.zeros((1, 3)))


def test_targets_weights_and_ints():
    with pytest.raises(DataValidationError, match="encode them as 0/1"):
        check_target(["yes", "no"], 2, kind="binary")
    with pytest.raises(DataValidationError, match="binary labels"):
        check_target([1, 2], 2, kind="binary")
    assert check_target([True, False], 2, kind="binary").tolist() == [1.0, 0.0]
    with pytest.raises(DataValidationError, match="rescale"):
        check_target([0.2, 1.3], 2, interval=(0.0, 1.0))
    with pytest.raises(DataValidationError, match="sums to 0"):
        check_weights([0.0, 0.0], 2)
    assert check_int(1e4, "n") == 10000
    for bad in (-1, 2.7, 0, True, "3", float("nan")):
        with pytest.raises(DataValidationError):
            check_int(bad, "max_iter")
