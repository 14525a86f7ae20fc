"""The fast fit path of TVRepair (issue 26 §6): record counting, the warm-started HiGHS solve,
and the adult_calmon section of benchmarks/scale.py."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairopt.data import Attribute, Domain, load_builtin
from fairopt.errors import DataValidationError
from fairopt.formulations.tv_repair import OptimizedPreprocessing
from fairopt.modeling import Program
from fairopt.preprocessing.tv_repair import _domain_counts

SETTINGS = dict(discrimination="additive", epsilon=0.05, clist=[0.99, 1.99, 2.99], dlist=[0.1, 0.05, 0.0],
                conditioning="xy", utility="xy", distortion="adult")


@pytest.fixture(scope="module")
def adult():
    data = load_builtin("adult")
    frame = data.expand(shuffle=True, random_state=1)
    return data, frame


def _reference_counts(dom, frame, names, w):
    """Every row encoded, then collapsed: the definition the fast path must reproduce."""
    return dom.unique_codes(dom.encode(frame[names]), sample_weight=w)


def test_domain_counts_equal_the_row_by_row_encoding(adult):
    data, frame = adult
    names = ["sex", "age_decade", "education_years", "income"]
    dom = data.domain.subdomain(names)
    rng = np.random.default_rng(0)
    for w in (np.ones(len(frame)), rng.random(len(frame)) * (rng.random(len(frame)) > 0.5)):
        cells, counts = _domain_counts(dom, frame, names, w)
        ref_cells, ref_counts = _reference_counts(dom, frame, names, w)
        np.testing.assert_array_equal(cells, ref_cells)           # zero-weight records keep their cell
        np.testing.assert_allclose(counts, ref_counts, rtol=1e-12, atol=1e-12)


def test_domain_counts_on_mixed_columns_and_a_large_domain():
    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "k": rng.integers(-5, 5, n).astype(np.int32),
                          "f": rng.choice([0.5, 1.5], n), "y": rng.integers(0, 2, n)})
    wide = [Attribute(f"pad{i}", tuple(range(40))) for i in range(3)]   # 64,000 x 120 cells: np.unique path
    for dom in (Domain([Attribute("g", ("a", "b", "c")), Attribute("k", tuple(range(-6, 7))),
                        Attribute("f", (0.5, 1.5)), Attribute("y", (0, 1))]),
                Domain([Attribute("g", ("a", "b", "c")), Attribute("k", tuple(range(-6, 7))),
                        Attribute("f", (0.5, 1.5)), *wide, Attribute("y", (0, 1))])):
        fr = frame.assign(**{a.name: rng.integers(0, 40, n) for a in dom.attributes if a.name.startswith("pad")})
        names = list(dom.names)
        w = rng.random(n)
        cells, counts = _domain_counts(dom, fr, names, w)
        ref_cells, ref_counts = _reference_counts(dom, fr, names, w)
        np.testing.assert_array_equal(cells, ref_cells)
        np.testing.assert_allclose(counts, ref_counts, rtol=1e-12)


def test_domain_counts_name_the_bad_value_and_row():
    dom = Domain([Attribute("g", ("a", "b")), Attribute("k", (1, 2, 3)), Attribute("y", (0, 1))])
    frame = pd.DataFrame({"g": ["a", "b", "a"], "k": [1, 7, 2], "y": [0, 1, 1]})
    with pytest.raises(DataValidationError, match=r"'k'.*7|7.*'k'"):
        _domain_counts(dom, frame, ["g", "k", "y"], np.ones(3))
    frame = pd.DataFrame({"g": ["a", None, "a"], "k": [1, 2, 2], "y": [0, 1, 1]})
    with pytest.raises(DataValidationError, match="missing"):
        _domain_counts(dom, frame, ["g", "k", "y"], np.ones(3))
    frame = pd.DataFrame({"g": ["a", "b", "a"], "k": pd.array([1, None, 2], dtype="Int64"), "y": [0, 1, 1]})
    with pytest.raises(DataValidationError, match="missing"):
        _domain_counts(dom, frame, ["g", "k", "y"], np.ones(3))
    frame = pd.DataFrame({"g": ["a", "b", "a"], "k": pd.array([1, 3, 2], dtype="Int64"), "y": [0, 1, 1]})
    cells, counts = _domain_counts(dom, frame, ["g", "k", "y"], np.ones(3))
    np.testing.assert_array_equal(cells, [[0, 0, 0], [0, 1, 1], [1, 2, 1]])
    np.testing.assert_array_equal(counts, [1.0, 1.0, 1.0])


def _model(data):
    cells, counts = data.codes()
    return OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                  features=["age_decade", "education_years"], **SETTINGS)


def test_warm_started_primal_solve_equals_the_cold_solves(adult):
    data, _ = adult
    model = _model(data)
    warm = model.solve("highs")
    cold = model.solve("highs", options={"solver": "simplex", "simplex_strategy": 1})   # no start basis
    ipm = model.solve("highs", options={"solver": "ipm"})
    assert warm.objective == pytest.approx(cold.objective, abs=1e-12)
    assert warm.objective == pytest.approx(ipm.objective, abs=1e-9)
    assert warm.objective == pytest.approx(0.0116741230, abs=1e-9)          # AIF360's problem (see docs)
    # the start is used: fewer simplex iterations than HiGHS's cold dual simplex
    assert warm.solution.iterations < cold.solution.iterations
    np.testing.assert_allclose(warm.rates["after"], cold.rates["after"], atol=1e-9)
    prog = model.build()
    cols, rows = model._identity_basis(prog)
    assert cols.sum() + rows.sum() == prog.canonical().m                     # a square basis


def test_highs_set_basis_starts_from_the_given_basis():
    prog = Program("assign")
    prog.add_variables("x", shape=(4,), lb=0.0)
    prog.add_constraints("rows", {"x": np.array([[1, 1, 0, 0], [0, 0, 1, 1]])}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"x": [1.0, 2.0, 3.0, 1.0]})
    comp = prog.compile("highs")
    comp.set_basis([True, False, False, True], [False, False])                 # the optimal basis
    sol = comp.solve(require_optimal=True)
    assert sol.objective == pytest.approx(2.0) and sol.iterations == 0
    cold = prog.compile("highs").solve(require_optimal=True)
    assert cold.objective == pytest.approx(2.0)
    with pytest.raises(DataValidationError, match="one basic entry per row"):
        prog.compile("highs").set_basis([True, True, True, False], [False, False])
    with pytest.raises(DataValidationError, match="one flag per column"):
        prog.compile("highs").set_basis([True, True], [False, False])


def test_scale_adult_calmon_section_agrees_with_its_bare_solves():
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"
    spec = importlib.util.spec_from_file_location("scale_benchmark_calmon", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.adult_calmon(1, with_aif360=False)
    for key in ("fit_seconds", "bare_lp_seconds", "bare_same_start_seconds", "fit_over_bare",
                "fit_over_bare_same_start", "cpu_fit_over_bare"):
        assert res[key] > 0
    assert res["variables"] == 2419 and res["rows"] == 578
    assert abs(res["objective"] - res["bare_lp_objective"]) <= 1e-9
    assert abs(res["objective"] - res["bare_same_start_objective"]) <= 1e-9
    assert res["objective"] == pytest.approx(0.0116741230, abs=1e-9)


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "category", "object", "chunked"])
def test_domain_counts_read_every_string_storage(dtype):
    rng = np.random.default_rng(7)
    g = rng.choice(["lo", "mid", "hi"], 300)
    col = pd.concat([pd.Series(g[:100], dtype="str"), pd.Series(g[100:], dtype="str")], ignore_index=True) \
        if dtype == "chunked" else pd.Series(g, dtype=dtype)
    frame = pd.DataFrame({"g": col, "y": rng.integers(0, 2, 300)})
    dom = Domain([Attribute("g", ("lo", "mid", "hi")), Attribute("y", (0, 1))])
    cells, counts = _domain_counts(dom, frame, ["g", "y"], np.ones(300))
    ref_cells, ref_counts = _reference_counts(dom, frame.astype({"g": object}), ["g", "y"], np.ones(300))
    np.testing.assert_array_equal(cells, ref_cells)
    np.testing.assert_array_equal(counts, ref_counts)
    bad = frame.assign(g=col.astype(object).where(np.arange(300) != 5, "top").astype(col.dtype if dtype != "category"
                                                                                      else object))
    with pytest.raises(DataValidationError, match="top"):
        _domain_counts(dom, bad, ["g", "y"], np.ones(300))
