"""scikit-learn conventions of every public estimator.

``check_estimator`` as a whole does not apply: every ``fit`` needs ``sensitive_features`` (as in
fairlearn). The construction and parameter checks do, and run here.
"""
from __future__ import annotations

import inspect

import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.estimator_checks import (check_get_params_invariance, check_no_attributes_set_in_init,
                                            check_parameters_default_constructible, check_set_params)

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
