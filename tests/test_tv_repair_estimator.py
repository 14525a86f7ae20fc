"""fairopt.preprocessing.TVRepair: fit/transform of the optimized-preprocessing mapping."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairopt.data import load_builtin
from fairopt.errors import DataValidationError, NotFittedError
from fairopt.formulations.tv_repair import OptimizedPreprocessing
from fairopt.preprocessing import TVRepair

PARAMS = dict(distortion="adult", clist=[0.99, 1.99, 2.99], dlist=[0.1, 0.05, 0.0], discrimination="additive",
              epsilon=0.05)


@pytest.fixture(scope="module")
def adult():
    data = load_builtin("adult")
    frame = data.expand(shuffle=True, random_state=0)
    return data, frame[["sex", "age_decade", "education_years"]], frame["income"]


def test_transform_before_fit():
    # construction and parameter conventions: tests/test_estimator_conventions.py
    with pytest.raises(NotFittedError):
        TVRepair().transform(pd.DataFrame({"a": [1]}))


def test_fit_matches_the_formulation_and_transform_follows_the_mapping(adult):
    data, X, y = adult
    est = TVRepair(**PARAMS, domain=data.domain).fit(X, y, sensitive_features="sex")
    cells, counts = data.codes()
    direct = OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                    features=["age_decade", "education_years"], **PARAMS).solve("highs")
    assert est.objective_ == pytest.approx(direct.objective, abs=1e-10)
    keys = ["sex", "age_decade", "education_years", "income"]
    assert est.mapping_.groupby(keys)["probability"].sum().sub(1).abs().max() < 1e-9
    Xa, ya = est.transform(X, y, random_state=5)
    Xb, yb = est.transform(X, y, random_state=5)
    pd.testing.assert_frame_equal(Xa, Xb)
    np.testing.assert_array_equal(ya, yb)
    assert (Xa["sex"] == X["sex"]).all() and list(Xa.columns) == list(X.columns)
    # mapped label rates per group are within sampling error of the fitted P(y-hat | d)
    after = est.rates_[est.rates_["income"] == 1].set_index("sex")["after"]
    got = pd.Series(np.asarray(ya)).groupby(Xa["sex"].to_numpy()).mean()
    for g in after.index:
        n = (X["sex"] == g).sum()
        assert abs(got[g] - after[g]) < 4 * np.sqrt(after[g] * (1 - after[g]) / n)
    assert abs(got.max() - got.min()) <= 0.05 + 0.02
    # distortion: nobody's education moved down, no age jumps over a decade
    edu_levels = data.domain.levels["education_years"]
    assert (Xa["education_years"].map(edu_levels.index) >= X["education_years"].map(edu_levels.index)).all()
    assert ((Xa["age_decade"] - X["age_decade"]).abs() <= 10).all()
    # test time: features only
    Xt = est.transform(X.iloc[:1000], random_state=1)
    assert isinstance(Xt, pd.DataFrame) and Xt.shape == (1000, 3)


def test_fit_transform_and_unseen_rows(adult):
    _data, X, y = adult
    est = TVRepair(**PARAMS)
    # scikit-learn's contract (issue 24): fit_transform returns the repaired features, the same draw as
    # fit(...).transform(X); the training records' repaired labels come from transform(X, y)
    Xf = est.fit_transform(X.iloc[:5000], y.iloc[:5000], sensitive_features="sex", random_state=2)
    pd.testing.assert_frame_equal(Xf, est.transform(X.iloc[:5000], random_state=2))
    Xa, ya = est.transform(X.iloc[:5000], y.iloc[:5000], random_state=2)
    assert len(Xa) == 5000 and len(ya) == 5000
    seen = set(map(tuple, est.mapping_[["sex", "age_decade", "education_years", "income"]].to_numpy().tolist()))
    rest = pd.concat([X.iloc[5000:], y.iloc[5000:]], axis=1)
    unseen = rest[[tuple(r) not in seen for r in rest.to_numpy().tolist()]]
    if len(unseen):
        with pytest.warns(UserWarning, match="unseen"):
            Xu, _yu = est.transform(unseen[X.columns], unseen["income"], random_state=0)
        pd.testing.assert_frame_equal(Xu, unseen[X.columns])


def test_bad_input(adult):
    _data, X, y = adult
    with pytest.raises(DataValidationError):
        TVRepair(**PARAMS).fit(X, y.iloc[:10], sensitive_features="sex")
    with pytest.raises(DataValidationError, match="feature column"):
        TVRepair().fit(X[["sex"]], y, sensitive_features="sex")


def test_sensitive_features_as_an_array(adult):
    _data, X, y = adult
    Xf, z = X[["age_decade", "education_years"]].iloc[:8000], X["sex"].iloc[:8000]
    est = TVRepair(**PARAMS).fit(Xf, y.iloc[:8000], sensitive_features=z)
    by_name = TVRepair(**PARAMS).fit(X.iloc[:8000], y.iloc[:8000], sensitive_features="sex")
    assert est.objective_ == pytest.approx(by_name.objective_, abs=1e-12)
    Xa, ya = est.transform(Xf, y.iloc[:8000], sensitive_features=z, random_state=0)
    assert list(Xa.columns) == ["age_decade", "education_years"] and len(ya) == 8000
    with pytest.raises(DataValidationError, match="pass sensitive_features"):
        est.transform(Xf, y.iloc[:8000])


def _aif360_optimum(X, y, epsilon, clist, dlist):
    """AIF360's ``OptTools`` optimum on the same records (its own Adult distortion function)."""
    import contextlib
    import io
    import logging
    import warnings
    pytest.importorskip("aif360")
    from aif360.algorithms.preprocessing.optim_preproc_helpers.distortion_functions import get_distortion_adult
    from aif360.algorithms.preprocessing.optim_preproc_helpers.opt_tools import OptTools
    names = {"age_decade": "Age (decade)", "education_years": "Education Years", "income": "Income Binary"}
    df = pd.concat([X, y], axis=1).rename(columns=names)
    logging.getLogger().setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = OptTools(df=df, features=list(df.columns))
        opt.set_features(D=["sex"], X=["Age (decade)", "Education Years"], Y=["Income Binary"])
        opt.set_distortion(get_distortion_adult, clist=clist)
        opt.optimize(epsilon=epsilon, dlist=dlist, verbose=False)
    return float(opt.optimum)


def test_default_utility_is_the_papers_and_matches_aif360():
    from fairopt.formulations.tv_repair import AdultDistortion
    data = load_builtin("adult")
    frame = data.expand()
    X, y = frame[["sex", "age_decade", "education_years"]], frame["income"]
    settings = dict(discrimination="additive", epsilon=0.05, clist=[0.99, 1.99, 2.99],
                    dlist=[0.1, 0.05, 0.0], conditioning="xy")      # AIF360's problem, utility unset
    est = TVRepair(distortion=AdultDistortion(compat=False), domain=data.domain, **settings)
    est.fit(X, y, sensitive_features="sex")
    assert est.get_params()["utility"] == "xy"
    reference = _aif360_optimum(X, y, 0.05, settings["clist"], settings["dlist"])
    assert est.objective_ == pytest.approx(reference, abs=1e-6)
    assert est.objective_ == pytest.approx(0.011674, abs=1e-6)
    # the joint (D, X, Y) utility stays available and is the larger, non-comparable number
    joint = TVRepair(distortion=AdultDistortion(compat=False), domain=data.domain, utility="dxy",
                     **settings).fit(X, y, sensitive_features="sex")
    assert joint.objective_ == pytest.approx(0.048386, abs=1e-6) and joint.objective_ > 4 * reference
    # the formulation and the card default agree with the estimator
    from fairopt.runs.tv_repair import Parameters
    assert Parameters().utility == "xy"
    cells, counts = data.codes()
    model = OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                   features=["age_decade", "education_years"],
                                   distortion=AdultDistortion(compat=False), **settings)
    assert model.solve("highs").objective == pytest.approx(est.objective_, abs=1e-9)


def test_kl_default_solver_comes_from_the_formulation_and_nothing_is_swapped(adult):
    data, X, y = adult
    kw = dict(PARAMS, divergence="kl", utility="xy", conditioning="xy", domain=data.domain)
    est = TVRepair(**kw).fit(X, y, sensitive_features="sex")   # no solver named: cvxpy's form
    assert est.result_.solution.backend == "cvxpy" and est.result_.objective > 0
    with pytest.raises(DataValidationError, match="exponential-cone"):   # an LP solver is refused
        TVRepair(**kw, solver="highs").fit(X, y, sensitive_features="sex")
