"""Fair log-loss model building and certificate without repeated passes over the data."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fairopt.formulations.constrained_classification.logloss import FairLogLoss


def _data(n=300, d=6, density=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < density) * rng.normal(size=(n, d))
    group = rng.integers(0, 2, n)
    y = (X[:, 0] + 0.5 * group + rng.normal(size=n) > 0.3).astype(int)
    return X, y, group


def test_sparse_design_equals_the_stacked_one():
    X, y, group = _data()
    model = FairLogLoss(X, y, group)
    ref = sp.csr_matrix(np.hstack([X, np.ones((X.shape[0], 1))]))
    assert sp.issparse(model.X) and model.X.format == "csr"
    np.testing.assert_array_equal(model.X.indptr, ref.indptr)
    np.testing.assert_array_equal(model.X.indices, ref.indices)
    np.testing.assert_array_equal(model.X.data, ref.data)


def test_dense_design_is_column_major_with_intercept():
    X, y, group = _data(density=1.0)
    model = FairLogLoss(X, y, group)
    assert isinstance(model.X, np.ndarray) and model.X.flags.f_contiguous
    np.testing.assert_array_equal(model.X, np.hstack([X, np.ones((X.shape[0], 1))]))
    plain = FairLogLoss(X, y, group, fit_intercept=False)
    assert plain.X.flags.f_contiguous
    np.testing.assert_array_equal(plain.X, X)


def test_saddle_residual_of_the_same_point_is_computed_once(monkeypatch):
    X, y, group = _data(density=1.0)
    model = FairLogLoss(X, y, group)
    sol = model.solve()
    calls = []
    original = model.terms

    def terms(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(model, "terms", terms)
    theta, lam = sol.x, sol.lam
    first = model.saddle_residual(theta, lam)
    again = model.saddle_residual(theta.copy(), lam.copy())
    assert again[:2] == first[:2] and len(calls) <= 1
    before = len(calls)
    other = model.saddle_residual(theta + 1e-3, lam)      # another point is computed
    assert len(calls) == before + 1 and other[0] != first[0]


def test_sparse_design_without_intercept_and_with_empty_rows():
    X, y, group = _data(density=0.05)
    X[:7] = 0.0                                  # rows without a nonzero feature
    for fit_intercept in (True, False):
        model = FairLogLoss(X, y, group, fit_intercept=fit_intercept)
        ref = sp.csr_matrix(np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X)
        assert model.X.shape == ref.shape and model.X.has_sorted_indices
        np.testing.assert_array_equal(model.X.indptr, ref.indptr)
        np.testing.assert_array_equal(model.X.indices, ref.indices)
        np.testing.assert_array_equal(model.X.data, ref.data)
