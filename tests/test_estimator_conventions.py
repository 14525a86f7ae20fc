"""scikit-learn conventions of every public estimator.

The construction and parameter checks run here on the default instances; scikit-learn's full
``parametrize_with_checks`` suite runs in ``test_sklearn_checks.py`` (with the groups every fairness
``fit`` needs supplied by a test adapter, and each expected failure listed with its reason).
"""
from __future__ import annotations

import inspect

import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

import fairopt.filtering as filt
import fairopt.inprocessing as inp
import fairopt.postprocessing as post
import fairopt.preprocessing as pre

ESTIMATORS = [c for mod in (pre, inp, post, filt) for name, c in inspect.getmembers(mod, inspect.isclass)
              if issubclass(c, BaseEstimator) and not name.startswith("_")
              and (c.__module__ == mod.__name__ or c.__module__.startswith(mod.__name__ + "."))]


def test_every_module_has_estimators():
    names = {c.__name__ for c in ESTIMATORS}
    assert {"MaxEntResampler", "Reweighing", "FairRegressor", "ThresholdDebiaser", "TVRepair",
            "FairLogLossClassifier", "BalancedFilter"} <= names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_sklearn_construction_checks(cls):
    est = cls()
    name = cls.__name__
    check_no_attributes_set_in_init(name, est)
    check_parameters_default_constructible(name, est)
    check_get_params_invariance(name, est)
    check_set_params(name, est)
    assert clone(est).get_params() == est.get_params()


# ---- issue 22: every estimator validates its parameters the scikit-learn way -----------------------
import numpy as np
import pandas as pd

from fairopt.errors import ConfigError, ParameterError


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    a = np.r_[np.zeros(n // 2), np.ones(n - n // 2)].astype(int)
    y = ((X[:, 0] + 0.5 * a + rng.normal(size=n)) > 0).astype(int)
    return X, y, a


def _fit(est):
    """Fit ``est`` on small valid synthetic data of the kind its family takes."""
    X, y, a = _data()
    if isinstance(est, (inp.FairClassifier, inp.FairRegressor, inp.SEORegressor)):
        return est.fit(X, y.astype(float), sensitive_features=a)
    if isinstance(est, inp.FairLogLossClassifier):
        return est.fit(X, y, sensitive_features=a)
    if isinstance(est, (post.ThresholdDebiaser, post.ShiftInference)):
        return est.fit(np.tanh(X[:, 0]), y, sensitive_features=a)
    if isinstance(est, filt.BalancedFilter):
        return est.fit(X, a)
    if isinstance(est, post.MulticlassDebiaser):
        p = 1.0 / (1.0 + np.exp(-X[:, 0]))
        return est.fit(np.column_stack([1.0 - p, p]), y, sensitive_features=a)
    if isinstance(est, post.RegressionDebiaser):
        return est.fit(X[:, 0], sensitive_features=a)
    frame = pd.DataFrame({"x": np.where(X[:, 1] > 0, "p", "q"), "s": np.where(a == 1, "f", "m")})
    return est.fit(frame, pd.Series(y, name="y"), "s")


class _Unknown:
    """A value of a type no parameter accepts."""


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_has_a_declared_constraint(cls):
    assert set(cls._parameter_constraints) == set(cls().get_params(deep=False))


VALIDATED = [(c, p) for c in ESTIMATORS for p in c().get_params(deep=False)
             if getattr(c, "_parameter_constraints", {}).get(p) != "no_validation"]


@pytest.mark.parametrize(("cls", "param"), VALIDATED, ids=[f"{c.__name__}-{p}" for c, p in VALIDATED])
def test_a_parameter_of_unknown_type_is_refused_at_fit_naming_it(cls, param):
    est = cls().set_params(**{param: _Unknown()})
    with pytest.raises(ParameterError, match=f"The '{param}' parameter of {cls.__name__} must be"):
        _fit(est)


C, R, L, T = inp.FairClassifier, inp.FairRegressor, inp.FairLogLossClassifier, post.ThresholdDebiaser
BAD_VALUES = [
    (C, "eps", 1.5), (C, "eps", np.inf), (C, "eps", np.nan), (C, "eps", -0.01), (C, "eps", "0.1"),
    (C, "eps", None), (C, "eps", [0.1, 2.0]), (C, "eps", {0: 0.1, 1: np.nan}), (C, "min_iter", -1),
    (C, "max_iter", 0), (C, "max_iter", 2.5), (C, "B", 0.0), (C, "nu", -1.0), (C, "mode", "fast"),
    (C, "constraint", "parity"),
    (R, "eps", 1.5), (R, "eps", np.inf), (R, "eps", np.nan), (R, "eta0", 0.0), (R, "eta0", -1.0),
    (R, "refine_rounds", -1), (R, "min_iter", -1), (R, "lambda_scales", ()), (R, "lambda_scales", (1.0, -2.0)),
    (R, "lambda_scales", 3.0), (R, "lambda_scales", "1"), (R, "grid_size", 0), (R, "round", "up"),
    (R, "loss", "hinge"), (R, "oracle", "lp"), (R, "B", -1.0), (R, "logistic_scale", 0.0),
    (L, "fit_intercept", "no"), (L, "fit_intercept", 1), (L, "C", -1.0), (L, "C", np.inf), (L, "tol", 0.0),
    (L, "max_iter", 0), (L, "constraint", "parity"),
    (inp.SEORegressor, "clip", "yes"),
    (T, "eps", 1.5), (T, "eps", np.nan), (T, "gamma", -0.1), (T, "rho", 1.2), (T, "calibration", "platt"),
    (T, "prefit", "no"), (T, "constraint", "parity"), (T, "solver_options", {"bogus": 1}),
    (T, "solver_options", ["n_steps"]),
    (post.ShiftInference, "score_map", "sigmoid"), (post.ShiftInference, "prefit", None),
    (filt.BalancedFilter, "stop_distance", -0.1), (filt.BalancedFilter, "alpha", 1.5),
    (filt.BalancedFilter, "split_bins", 1), (filt.BalancedFilter, "max_height", -1),
    (filt.BalancedFilter, "proxy", "forest"), (filt.BalancedFilter, "gamma", 1.0),
    (pre.MaxEntResampler, "C", 1.5), (pre.MaxEntResampler, "tol", 0.0), (pre.MaxEntResampler, "max_iter", 0),
    (pre.MaxEntResampler, "prior", "uniform"), (pre.MaxEntResampler, "tau", 0.0),
    (pre.TVRepair, "epsilon", -0.1), (pre.TVRepair, "divergence", "js"), (pre.TVRepair, "discrimination", "odds"),
    (pre.TVRepairResampler, "statistical_rate", 0.0), (pre.TVRepairResampler, "statistical_rate", 1.5),
    (pre.Reweighing, "random_state", -1),
    # a boolean is not a number even though Python counts it as one
    (C, "eps", True), (R, "grid_size", True), (T, "rho", True), (filt.BalancedFilter, "alpha", True),
    (pre.MaxEntResampler, "C", True), (pre.Reweighing, "random_state", True), (L, "max_iter", np.True_),
    # infinite values of unbounded parameters
    (R, "B", np.inf), (T, "gamma", np.inf), (filt.BalancedFilter, "stop_distance", np.inf),
    (pre.TVRepair, "epsilon", np.inf), (L, "tol", np.inf),
]


@pytest.mark.parametrize(("cls", "param", "value"), BAD_VALUES,
                         ids=[f"{c.__name__}-{p}={v!r}" for c, p, v in BAD_VALUES])
def test_out_of_range_values_raise_invalid_parameter_error_naming_the_parameter(cls, param, value):
    with pytest.raises(ParameterError) as err:
        _fit(cls().set_params(**{param: value}))
    msg = str(err.value)
    assert f"'{param}' parameter of {cls.__name__}" in msg, msg
    # one type for a bad parameter: a ConfigError, so a ValueError as scikit-learn expects
    assert type(err.value) is ParameterError and isinstance(err.value, ConfigError)
    assert isinstance(err.value, ValueError)


def test_eps_inf_blames_eps_not_the_multiplier_bound():
    with pytest.raises(ParameterError) as err:
        _fit(inp.FairClassifier(eps=np.inf))
    assert "'eps' parameter" in str(err.value) and "'B'" not in str(err.value) and "B=" not in str(err.value)


def test_bounded_group_loss_accepts_a_loss_bound_above_one():
    # eps is a rate only for statistical parity; a bounded-group-loss bound may exceed 1
    est = _fit(inp.FairRegressor(constraint="bounded_group_loss", eps=1.5, max_iter=2))
    assert est.status_ in ("converged", "max_iter") and est.weights_.sum() == pytest.approx(1.0)


def test_solver_options_keys_are_checked_against_the_solver():
    with pytest.raises(ParameterError, match=r"unknown key\(s\) \['bogus'\].*batch_size, n_steps"):
        _fit(T(solver="sgd", rho=0.5, solver_options={"bogus": 1}))
    with pytest.raises(ParameterError, match=r"\['n_steps'\].*valid keys: options, time_limit, verbose"):
        _fit(T(solver="osqp", solver_options={"n_steps": 10}))
    with pytest.raises(ParameterError, match=r"solver='native'.*valid keys: none"):
        _fit(T(solver_options={"time_limit": 5}))
    sgd = _fit(T(solver="sgd", rho=0.5, random_state=0, solver_options={"n_steps": 50}))
    assert sgd.solution_.iterations == 50
    assert _fit(T(solver="osqp", solver_options={"time_limit": 30})).solution_.status == "optimal"


def test_fit_intercept_no_longer_fits_an_intercept_for_a_string():
    est = _fit(L(fit_intercept=False))
    assert est.intercept_.tolist() == [0.0]
    with pytest.raises(ParameterError, match="fit_intercept"):
        _fit(L(fit_intercept="no"))
