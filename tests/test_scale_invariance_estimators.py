"""Scale invariance of every public estimator (issue 31): the same answer, up to the scale, when the
inputs are multiplied by 10^-9, 1 or 10^9.

Two kinds of rescaling, each with what is expected:

* ``sample_weight`` multiplied by ``s`` (every estimator that takes one): a weighted fit depends on
  the weights' *proportions* only, so probabilities, transformed outputs, fitted rates, gaps and
  objectives (per unit of weight) are unchanged.
* the features multiplied by ``s`` where the model is scale-equivariant or fairopt reads them in a
  scale-free way:

  - ``ThresholdDebiaser`` / ``ShiftInference`` / ``MulticlassDebiaser`` with ``estimator=None`` read
    ``X`` as scores: with the identity score map, scaling scores by ``s > 0`` scales the thresholds
    by ``s`` and changes no decision (scores that are probabilities cannot be rescaled, so the
    probability-reading estimators are covered by the weight scale only);
  - ``RegressionDebiaser(estimator=None)`` reads ``X`` as predictions: outputs scale by ``s``,
    squared losses by ``s^2``, Kolmogorov gaps not at all;
  - ``SEORegressor`` and ``FairRegressor`` (least-squares oracle without a penalty) are equivariant
    under a rescaling of the features (targets of ``FairRegressor`` live in ``[0, 1]``, so only its
    features are scaled); ``SEORegressor`` also under a rescaling of the target;
  - ``BalancedFilter`` standardises numeric features and bins them by quantiles, ``TVRepair`` bins
    numeric columns by quantiles: both give the same filter / mapping;
  - the categorical resamplers (``Reweighing``, ``RepresentationReweighing``, ``MaxEntResampler``,
    ``TVRepairResampler``) read levels, not magnitudes: a level's value is a name, so scaling is the
    renaming tested by the weight scale and their level handling tests; ``FairClassifier`` and
    ``FairLogLossClassifier`` fit penalised logistic models, which are not scale-equivariant in X
    (the penalty is on the coefficients), so only their weights are scaled.

The OR blocks of :mod:`fairopt.constraints` not covered by ``tests/test_scale_invariance.py`` are
here too: ``balance`` (every measure, as objective and as bound: loads scaled by ``s`` scale the
minmax / range / MAD values and bounds by ``s``, the Gini not at all), ``solve_leximin`` (utilities
scaled: levels scale by ``s``, the plan is unchanged) and ``alpha_fairness`` (utilities scaled:
the maximiser is unchanged).

The coverage test asserts that every public estimator of the four estimator packages has a case here.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LinearRegression

import fairopt.filtering as filt
import fairopt.inprocessing as inp
import fairopt.postprocessing as post
import fairopt.preprocessing as pre

SCALES = [1e-9, 1.0, 1e9]
RTOL = 1e-6          # relative, on probabilities, rates, gaps and objectives

_rng = np.random.default_rng(31)
N = 240
A = _rng.choice(["a", "b"], N, p=[0.6, 0.4])
X2 = np.c_[_rng.normal(size=N) + (A == "a"), _rng.normal(size=N)]
SCORE = 1 / (1 + np.exp(-(X2[:, 0] - 0.3 * X2[:, 1])))
Y = (_rng.random(N) < SCORE).astype(int)
W = _rng.uniform(0.5, 2.0, N)
Y3 = np.digitize(SCORE + 0.2 * _rng.normal(size=N), [0.4, 0.65])       # three classes
YR = np.clip(0.3 * X2[:, 0] + 0.5 + 0.1 * _rng.normal(size=N), 0, 1)   # regression target in [0, 1]
RECORDS = pd.DataFrame({"x": pd.Categorical(np.where(X2[:, 0] > 0.5, "hi", "lo")),
                        "z": pd.Categorical(np.digitize(X2[:, 1], [-0.5, 0.5]).astype(str)),
                        "sex": pd.Categorical(A)})
YC = pd.Series(Y, name="y")


def _close(got: dict[str, np.ndarray], base: dict[str, np.ndarray], s: float, rtol: float = RTOL,
           atol: float = 1e-9) -> None:
    for key, value in base.items():
        np.testing.assert_allclose(np.asarray(got[key], float), np.asarray(value, float), rtol=rtol, atol=atol,
                                   err_msg=f"{key} at scale {s:g}")


# --------------------------------------------------------------------------- sample_weight scaled
def _reweighing(cls):
    def run(s):
        est = cls(random_state=0).fit(RECORDS[["x", "z"]], YC, sensitive_features=RECORDS["sex"],
                                      sample_weight=W * s)
        return {"weights": est.sample_weight_, "point_weights": est.point_weights_ / est.point_weights_.sum(),
                "sample": est.sample_codes(50, random_state=1)}
    return run


def _maxent(s):
    est = pre.MaxEntResampler(C=0.5, target="balanced", random_state=0).fit(
        RECORDS[["x", "z"]], YC, sensitive_features="sex" if False else RECORDS["sex"], sample_weight=W * s)
    return {"theta": est.theta_.to_numpy(), "kl": [est.kl_], "rate": [est.representation_rate()]}


def _tv_resampler(s):
    est = pre.TVRepairResampler(statistical_rate=0.9, random_state=0).fit(
        RECORDS[["x", "z"]], YC, sensitive_features=RECORDS["sex"], sample_weight=W * s)
    return {"sample": est.sample_codes(50, random_state=1)}


def _tv_repair(s):
    est = pre.TVRepair(epsilon=0.05, random_state=0).fit(
        RECORDS[["x", "z"]], YC, sensitive_features=RECORDS["sex"], sample_weight=W * s)
    return {"mapping": est.mapping_.select_dtypes("number").to_numpy(), "objective": [est.objective_]}


def _fair_classifier(s):
    est = inp.FairClassifier(eps=0.02, max_iter=15, random_state=0).fit(
        X2, Y, sensitive_features=A, sample_weight=W * s)
    return {"proba": est.predict_proba(X2)}


def _fair_regressor(s):
    est = inp.FairRegressor(eps=0.05, grid_size=10, max_iter=10, random_state=0).fit(
        X2, YR, sensitive_features=A, sample_weight=W * s)
    return {"mean": est.predict_mean(X2)}


def _seo(s):
    est = inp.SEORegressor().fit(X2, YR, sensitive_features=A, sample_weight=W * s)
    return {"pred": est.predict(X2)}


def _threshold(s):
    est = post.ThresholdDebiaser(eps=0.02, score_map="identity", calibration=None, random_state=0).fit(
        SCORE, Y, sensitive_features=A, sample_weight=W * s)
    return {"p": est.decision_probability(SCORE, sensitive_features=A), "rates": est.fitted_rates_}


def _shift(s):
    est = post.ShiftInference().fit(SCORE, Y, sensitive_features=A, sample_weight=W * s)
    return {"proba": est.predict_proba(SCORE, sensitive_features=A)}


def _multiclass(s):
    proba = np.c_[1 - SCORE, SCORE * 0.5, SCORE * 0.5]
    est = post.MulticlassDebiaser(eps=0.02, random_state=0).fit(
        proba, Y3, sensitive_features=A, sample_weight=W * s)
    return {"proba": est.predict_proba(proba, sensitive_features=A)}


def _regression_debiaser(s):
    pred = X2[:, 0]
    est = post.RegressionDebiaser(eps=0.05, grid=30, random_state=0).fit(
        pred, sensitive_features=A, sample_weight=W * s)
    support, probs = est.predict_distribution(pred, sensitive_features=A)
    return {"support": support, "probs": probs, "loss": [est.train_loss_], "gap": [est.train_gap_]}


WEIGHT_CASES: dict[str, Callable[[float], dict]] = {
    "Reweighing": _reweighing(pre.Reweighing),
    "RepresentationReweighing": _reweighing(pre.RepresentationReweighing),
    "MaxEntResampler": _maxent,
    "TVRepairResampler": _tv_resampler,
    "TVRepair": _tv_repair,
    "FairClassifier": _fair_classifier,
    "FairRegressor": _fair_regressor,
    "SEORegressor": _seo,
    "ThresholdDebiaser": _threshold,
    "ShiftInference": _shift,
    "MulticlassDebiaser": _multiclass,
    "RegressionDebiaser": _regression_debiaser,
}
#: estimators with no ``sample_weight`` (asserted below, so a new parameter must get a case)
NO_WEIGHT = {"FairLogLossClassifier", "BalancedFilter"}


@pytest.mark.parametrize("name", sorted(WEIGHT_CASES))
def test_sample_weight_scale(name):
    base = WEIGHT_CASES[name](1.0)
    for s in SCALES:
        _close(WEIGHT_CASES[name](s), base, s)


# --------------------------------------------------------------------------- features scaled
def _threshold_x(s):
    # scores in [-1, 1] (the identity map refuses others): down-scaled with the ramp width gamma, the
    # QP's objective (gamma/2) E[h^2] - E[h f] is multiplied by s, so the rule h is unchanged
    f = (2 * SCORE - 1) * s
    est = post.ThresholdDebiaser(eps=0.02, gamma=0.05 * s, score_map="identity", calibration=None,
                                 random_state=0).fit(f, Y, sensitive_features=A)
    return {"p": est.decision_probability(f, sensitive_features=A), "rates": est.fitted_rates_,
            "thresholds": np.asarray(est.thresholds_, float) / s}


def _regression_debiaser_x(s, probs=False):
    # the transport LP's cost is piecewise linear in the output CDF, so its optimal CDF need not be
    # unique: the loss, the grid and the gap are compared at every scale; the row distributions where
    # the LP is the same up to rounding (see test_regression_debiaser_rows_at_extreme_scales)
    est = post.RegressionDebiaser(eps=0.05, grid=30, random_state=0).fit(X2[:, :1] * s, sensitive_features=A)
    support, dist = est.predict_distribution(X2[:, :1] * s, sensitive_features=A)
    out = {"support": support / s, "loss": [est.train_loss_ / s**2], "gap": [est.train_gap_],
           "input_gap": [est.input_gap_]}
    return {**out, "probs": dist} if probs else out


def _seo_x(s):
    est = inp.SEORegressor(clip=False).fit(X2 * s, YR * s, sensitive_features=A)
    return {"pred": est.predict(X2 * s) / s}


def _fair_regressor_x(s):
    est = inp.FairRegressor(estimator=LinearRegression(), eps=0.05, grid_size=10, max_iter=10,
                            random_state=0).fit(X2 * s, YR, sensitive_features=A)
    return {"mean": est.predict_mean(X2 * s)}


def _balanced_filter_x(s):
    est = filt.BalancedFilter(alpha=0.1, random_state=0).fit(X2 * s, A)
    return {"probs": est.sampling_probabilities_, "imbalance": [est.imbalance_],
            "keep": est.filter(X2 * s, random_state=0)}


def _tv_repair_x(s):
    X = pd.DataFrame({"u": X2[:, 0] * s, "v": X2[:, 1] * s})
    est = pre.TVRepair(discrimination="additive", epsilon=0.01, n_bins=3, random_state=0).fit(
        X, YC, sensitive_features=A)
    return {"objective": [est.objective_], "mapping": est.mapping_["probability"].to_numpy(),
            "out": est.transform(X, sensitive_features=A, random_state=0).to_numpy(float) / s}


FEATURE_CASES: dict[str, Callable[[float], dict]] = {
    "ThresholdDebiaser": _threshold_x,
    "RegressionDebiaser": _regression_debiaser_x,
    "SEORegressor": _seo_x,
    "FairRegressor": _fair_regressor_x,
    "BalancedFilter": _balanced_filter_x,
    "TVRepair": _tv_repair_x,
}
#: estimators whose features are not scaled, with the reason (see the module docstring)
NO_FEATURE_SCALE = {
    "Reweighing": "categorical records: levels are names, not magnitudes",
    "RepresentationReweighing": "categorical records: levels are names, not magnitudes",
    "MaxEntResampler": "categorical records: levels are names, not magnitudes",
    "TVRepairResampler": "categorical records: levels are names, not magnitudes",
    "FairClassifier": "a penalised logistic oracle is not scale-equivariant in X",
    "FairLogLossClassifier": "a penalised logistic model is not scale-equivariant in X",
    "MulticlassDebiaser": "reads class probabilities, which cannot be rescaled",
    "ShiftInference": "reads probabilities (scores 2p - 1 in [-1, 1]); the prior shift is not equivariant in them",
}


#: scales of each feature case (scores in [-1, 1] can only shrink)
FEATURE_SCALES = {"ThresholdDebiaser": [1e-9, 1e-3, 1.0]}
#: the cutting planes certify the transport loss to 1e-6 relative, so two solves agree to 2e-6
FEATURE_RTOL = {"RegressionDebiaser": 2e-6}


@pytest.mark.parametrize("name", sorted(FEATURE_CASES))
def test_feature_scale(name):
    base = FEATURE_CASES[name](1.0)
    for s in FEATURE_SCALES.get(name, SCALES):
        _close(FEATURE_CASES[name](s), base, s, rtol=FEATURE_RTOL.get(name, RTOL))


def test_regression_debiaser_rows_at_extreme_scales():
    # predictions of magnitude outside [2^-10, 2^10] are solved in unit-range values: at 1e-9 and 1e9
    # the LP is the same (up to the rounding of the scale), and so is every row's output distribution
    low, high = _regression_debiaser_x(1e-9, probs=True), _regression_debiaser_x(1e9, probs=True)
    _close(high, low, 1e9)
    assert low["gap"][0] <= 0.05 + 1e-9


def test_scores_outside_the_identity_range_are_refused_not_clipped():
    from fairopt.errors import DataValidationError
    with pytest.raises(DataValidationError, match=r"\[-1, 1\]"):
        post.ThresholdDebiaser(score_map="identity", calibration=None).fit((2 * SCORE - 1) * 1e9, Y,
                                                                          sensitive_features=A)


# --------------------------------------------------------------------------- coverage
def _public_estimators() -> set[str]:
    return {c.__name__ for mod in (pre, inp, post, filt) for name in mod.__all__
            if inspect.isclass(c := getattr(mod, name)) and issubclass(c, BaseEstimator)}


def test_every_public_estimator_has_a_case():
    public = _public_estimators()
    assert public == set(WEIGHT_CASES) | NO_WEIGHT
    assert public == set(FEATURE_CASES) | set(NO_FEATURE_SCALE)
    assert not set(FEATURE_CASES) & set(NO_FEATURE_SCALE)
    for name in NO_WEIGHT:       # the ones said to take no weights really take none
        cls = next(getattr(m, name) for m in (pre, inp, post, filt) if name in m.__all__)
        assert "sample_weight" not in inspect.signature(cls.fit).parameters, name
    for name in WEIGHT_CASES:
        cls = next(getattr(m, name) for m in (pre, inp, post, filt) if name in m.__all__)
        assert "sample_weight" in inspect.signature(cls.fit).parameters, name



# --------------------------------------------------------------------------- OR blocks
def _balance_instance():
    rng = np.random.default_rng(5)
    K, n = 5, 9
    U = rng.uniform(0.2, 1, (K, n)) * (rng.uniform(size=(K, n)) < 0.5)
    U[np.arange(K), np.arange(K) % n] += 0.5
    ub = rng.uniform(0.5, 2, n)
    c = rng.uniform(0, 1, n)
    return U, ub, c, 0.25 * (U @ ub).sum()


def _balance(measure, s, bound=None):
    from fairopt.constraints import balance, measure_value
    from fairopt.modeling import Program
    U, ub, c, T = _balance_instance()
    prog = Program("bal")
    prog.add_variables("x", U.shape[1], lb=0, ub=ub)
    prog.add_constraints("total", {"x": s * U.sum(axis=0)[None, :]}, lb=s * T, ub=s * T)
    loads = {f"w{k}": {"x": s * U[k]} for k in range(U.shape[0])}
    if bound is None:
        balance(loads, measure).as_objective(total=s * T).add_to(prog)
    else:
        prog.set_objective(linear={"x": c}, sense="maximize")
        balance(loads, measure, max_value=bound).add_to(prog)
    sol = prog.solve()
    return sol.objective, measure_value(s * U @ sol.primal["x"], measure)


@pytest.mark.parametrize("measure", ["minmax", "range", "mad", "gini"])
def test_balance_is_invariant_to_the_load_scale(measure):
    unit = (lambda s: 1.0) if measure == "gini" else (lambda s: s)    # the Gini is scale-free
    best, _ = _balance(measure, 1.0)
    _, worst = _balance(measure, 1.0, bound=1e9 if measure != "gini" else 0.999)
    bound = best + 0.3 * (worst - best)        # binding: between the fairest value and the free optimum's
    ref, ref_measure = _balance(measure, 1.0, bound)
    assert ref_measure == pytest.approx(bound, rel=1e-6)       # the bound binds
    for s in SCALES:
        obj, value = _balance(measure, s)
        assert obj / unit(s) == pytest.approx(best, rel=RTOL, abs=1e-9), s
        assert value / unit(s) == pytest.approx(best, rel=RTOL, abs=1e-9), s
        obj, value = _balance(measure, s, bound * unit(s))
        assert obj == pytest.approx(ref, rel=RTOL), s
        assert value / unit(s) <= bound * (1 + RTOL), s


def _leximin(s):
    from fairopt.constraints import solve_leximin
    from fairopt.modeling import Program
    prog = Program("share")
    prog.add_variables("x", shape=4, lb=0, ub=[3, 3, 0.5, 2])
    prog.add_constraints("budget", {"x": np.ones((1, 4))}, ub=4)
    res = solve_leximin(prog, ("x", ["a", "b", "c", "d"], s * np.array([1.0, 2.0, 1.0, 0.5])))
    return res.levels, res.primal["x"]


def test_leximin_levels_scale_and_the_plan_does_not():
    levels0, x0 = _leximin(1.0)
    for s in SCALES:
        levels, x = _leximin(s)
        np.testing.assert_allclose(levels / s, levels0, rtol=RTOL, err_msg=str(s))
        np.testing.assert_allclose(x, x0, rtol=RTOL, atol=1e-8, err_msg=str(s))


def _alpha_fair(alpha, s):
    import cvxpy as cp

    from fairopt.constraints import alpha_fairness
    from fairopt.modeling.registry import backend_info
    rng = np.random.default_rng(4)
    n = 18
    g = np.array(["a", "b", "c"])[np.r_[0, 1, 2, rng.integers(0, 3, n - 3)]]
    u = rng.uniform(0.5, 2.0, n) * np.where(g == "a", 2.0, 1.0)
    cost = rng.uniform(0.5, 1.5, n)
    obj = alpha_fairness(g, s * u, alpha)
    x = cp.Variable(n)
    objective, cons = obj.to_cvxpy(x)
    prob = cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= 0.35 * cost.sum()])
    prob.solve(solver="CLARABEL", **backend_info("cvxpy").tolerance_options("CLARABEL", "LP"))
    return obj.group_utilities(x.value).to_numpy()


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, np.inf])
def test_alpha_fair_maximisers_do_not_depend_on_the_utility_scale(alpha):
    # at alpha = 0.5 CLARABEL's group utilities move by ~5e-6 relative under *any* rescaling (0.9 or 3
    # as much as 1e-9), its accuracy on that power cone; elsewhere 1e-6
    rtol = 2e-5 if alpha == 0.5 else RTOL
    U0 = _alpha_fair(alpha, 1.0)
    for s in SCALES:
        np.testing.assert_allclose(_alpha_fair(alpha, s) / s, U0, rtol=rtol, atol=1e-9, err_msg=str(s))


def test_max_min_in_a_program_keeps_its_level_in_the_callers_units():
    from fairopt.constraints import alpha_fairness
    from fairopt.modeling import Program
    g = np.array(["a", "b", "c"] * 4)
    u = np.linspace(0.5, 2.0, 12)

    def level(s):
        prog = Program("alloc")
        prog.add_variables("x", shape=12, lb=0, ub=1)
        prog.add_constraints("budget", {"x": np.ones((1, 12))}, ub=5)
        alpha_fairness(g, s * u, np.inf).add_to(prog, "x")
        return prog.solve().objective

    base = level(1.0)
    for s in SCALES:
        assert level(s) / s == pytest.approx(base, rel=RTOL), s
