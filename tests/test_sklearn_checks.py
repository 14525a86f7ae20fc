"""scikit-learn's estimator checks on every public estimator (issue 24 §3).

The fairness estimators need ``sensitive_features`` at fit (as fairlearn's do); the checks call
``fit(X, y)``, so each runs on :func:`tests._sklearn_adapters.with_groups`, which supplies a group
per row read off the row itself and changes nothing else. Small iteration budgets keep the suite
fast. Every check passes or is listed below with the reason it cannot; the lists are strict
(``xfail_strict``): a check that starts passing must leave its list.
"""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

import fairopt.filtering as filt
import fairopt.inprocessing as inp
import fairopt.postprocessing as post
import fairopt.preprocessing as pre

sys.path.insert(0, str(Path(__file__).parent))
from _sklearn_adapters import with_groups  # the test helper next to this file

RANDOMIZED = "predict is one seeded draw per row from the randomized rule, so it depends on the row's position"
GAP = "the game stops at a duality-gap tolerance, so weights and repeated rows agree to that tolerance, not 1e-9"
CELLS = ("Algorithm 1's reweighted prior needs every (label, group) cell observed; the check's y has a label on one "
         "row (of positive weight), so no choice of groups observes both of its cells")
DRAWS = "transform is one seeded draw per row from the randomized mapping, so it depends on the row's position"

_POSITION = ["check_methods_sample_order_invariance", "check_methods_subset_invariance"]

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "FairClassifier": {
        **dict.fromkeys(_POSITION, RANDOMIZED),
        "check_classifiers_train": "predict is a seeded draw from the mixture, so it is not argmax(predict_proba)",
        "check_sample_weight_equivalence_on_dense_data": GAP,
        "check_sample_weight_equivalence_on_sparse_data": GAP,
    },
    "FairRegressor": {**dict.fromkeys(_POSITION, RANDOMIZED), "check_sample_weight_equivalence_on_dense_data": GAP},
    "SEORegressor": {},
    "FairLogLossClassifier": {},
    "ThresholdDebiaser": dict.fromkeys(_POSITION, RANDOMIZED),
    "MulticlassDebiaser": {
        **dict.fromkeys(_POSITION, RANDOMIZED),
        **dict.fromkeys(["check_classifiers_train"], "predict is a seeded draw from the randomized rule, "
                        "so it is not argmax(predict_proba) on rows where classes tie"),
        **dict.fromkeys(["check_sample_weight_equivalence_on_dense_data",
                         "check_sample_weight_equivalence_on_sparse_data"],
                        "the fair LP's optimum is not unique on the check's 15 rows: weighted and repeated rows "
                        "reach the same optimal cost (tests/test_multiclass_debiasing.py) at different optimal rules"),
    },
    "ShiftInference": {},
    "RegressionDebiaser": {
        **dict.fromkeys(_POSITION, RANDOMIZED),
        "check_sample_weight_equivalence_on_sparse_data": "the wrapped LinearRegression solves sparse weighted least "
        "squares iteratively, so weighted and repeated fits differ in the last digits and a seeded draw can "
        "land in a neighbouring output cell",
        "check_supervised_y_2d": "y only fits the wrapped regressor, which takes a column y without the "
        "DataConversionWarning the check looks for",
    },
    "BalancedFilter": {
        "check_fit_score_takes_y": "an unsupervised filter: fit(X, sensitive) takes the groups, not y, second",
    },
    "Reweighing": {},
    "RepresentationReweighing": {},
    "TVRepairResampler": {},
    "MaxEntResampler": dict.fromkeys(["check_dict_unchanged", "check_dont_overwrite_parameters",
                                      "check_f_contiguous_array_estimator", "check_fit2d_predict1d",
                                      "check_sample_weight_equivalence_on_dense_data", *_POSITION], CELLS),
    "TVRepair": dict.fromkeys(_POSITION, DRAWS),
}

_LR = LogisticRegression()
INSTANCES = [
    with_groups(inp.FairClassifier)(max_iter=5, min_iter=1, random_state=0),
    with_groups(inp.FairRegressor, unit_target=True)(max_iter=5, random_state=0),
    with_groups(inp.SEORegressor, unit_target=True)(),
    with_groups(inp.FairLogLossClassifier)(),
    # without a wrapped estimator X is a 1-D score (tagged one_d_array, which the checks skip)
    with_groups(post.ThresholdDebiaser)(estimator=_LR, random_state=0),
    with_groups(post.MulticlassDebiaser)(estimator=_LR, random_state=0),
    with_groups(post.ShiftInference)(estimator=_LR),
    with_groups(post.RegressionDebiaser)(estimator=LinearRegression(), grid=20, random_state=0),
    filt.BalancedFilter(random_state=0),       # fit(X, y) reads y as the groups
    with_groups(pre.Reweighing)(random_state=0),
    with_groups(pre.RepresentationReweighing)(random_state=0),
    with_groups(pre.MaxEntResampler, cover_cells=True)(random_state=0),   # fit-only: groups may read y
    with_groups(pre.TVRepairResampler)(random_state=0),
    # the checks' numeric columns binned in 3; mapped cells kept to observed ones (the 30-column weight
    # check would enumerate 3^30 cells with columns="all", which the estimator refuses, saying so)
    with_groups(pre.TVRepair)(n_bins=3, columns="observed", random_state=0),
]


#: entries whose outcome depends on the fitted rule: a randomized mixture fails the row-position
#: checks, a game that ends on one deterministic predictor passes them (run to run, the early-stopped
#: game of the check instances can end either way), so they are expected failures, not strict ones.
#: MulticlassDebiaser randomizes only rows where classes tie at the LP optimum; on the check's tiny
#: data the optimum is not unique, and whether the vertex found has a tied row varied between full
#: suite runs (a one-hot rule passes the checks)
_EITHER = {(name, check) for name in ("FairClassifier", "FairRegressor", "MulticlassDebiaser") for check in _POSITION}


def _expected(estimator) -> dict[str, str]:
    name = type(estimator).__name__
    return {c: r for c, r in EXPECTED_FAILURES[name].items() if (name, c) not in _EITHER}


def test_every_estimator_is_checked_and_every_entry_has_a_reason():
    public = {c.__name__ for mod in (pre, inp, post, filt) for name, c in inspect.getmembers(mod, inspect.isclass)
              if issubclass(c, BaseEstimator) and not name.startswith("_")
              and (c.__module__ == mod.__name__ or c.__module__.startswith(mod.__name__ + "."))}
    assert public == {type(e).__name__ for e in INSTANCES} == set(EXPECTED_FAILURES)
    assert all(reason.strip() for table in EXPECTED_FAILURES.values() for reason in table.values())


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    name = type(estimator).__name__
    inner = check
    while hasattr(inner, "func"):       # scikit-learn wraps each check in functools.partial
        inner = inner.func
    check_name = inner.__name__
    if (name, check_name) in _EITHER:
        try:
            check(estimator)
        except AssertionError:
            pytest.xfail(EXPECTED_FAILURES[name][check_name])
        return
    check(estimator)
