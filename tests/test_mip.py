"""Integer variables in Program: back ends agree on MIP optima (also with a fairness block in a
user's pyomo / cvxpy model), gap and status are reported, a time limit returns the incumbent
marked not optimal, and the LP relaxation's duals come on request."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import requires_data
from test_constraints import _market, _program, _rates, solve_cvxpy, solve_pyomo

from fairopt.constraints import selection_rate_parity
from fairopt.errors import DataValidationError, SolverNotAvailableError
from fairopt.modeling import Program, Status

MIP_SPECS = ["highs", "cvxpy:HIGHS", "pyomo:appsi_highs", "pyomo:highs"]


def _knapsack(n=12, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(3, 20, (2, n)).astype(float)
    v = rng.integers(5, 30, n).astype(float)
    prog = Program("knapsack")
    prog.add_variables("x", shape=n, binary=True)
    prog.add_constraints("cap", {"x": w}, ub=w.sum(axis=1) / 3)
    prog.set_objective(linear={"x": v}, sense="maximize")
    return prog, w, v


@pytest.fixture(scope="module")
def market():
    return _market()


def _brute_force(w, v, cap):
    best = -np.inf
    for bits in itertools.product((0, 1), repeat=v.size):
        x = np.array(bits, dtype=float)
        if (w @ x <= cap + 1e-9).all():
            best = max(best, v @ x)
    return best


@pytest.mark.parametrize("spec", MIP_SPECS)
def test_mip_optimum_matches_enumeration_on_every_back_end(spec):
    prog, w, v = _knapsack()
    sol = prog.solve(spec)
    assert prog.problem_class == "MILP" and sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(_brute_force(w, v, w.sum(axis=1) / 3), abs=1e-9)
    x = sol.primal["x"]
    assert np.allclose(x, np.round(x)) and (w @ x <= w.sum(axis=1) / 3 + 1e-9).all()
    assert sol.dual == {}  # a MIP has no duals
    if spec == "highs":
        assert sol.mip_gap is not None and sol.mip_gap <= 1e-4
        assert sol.objective_bound >= sol.objective - 1e-9


def test_relaxation_duals_on_request_price_the_lp_relaxation():
    prog, w, _v = _knapsack()
    sol = prog.solve("highs", relaxation_duals=True)
    rel = sol.relaxation
    assert rel is not None and rel.status is Status.OPTIMAL and rel.objective >= sol.objective - 1e-9
    assert sol.objective_bound <= rel.objective + 1e-6  # the MIP bound is at least as tight
    # duals of the relaxation are finite differences of the relaxation's optimum
    cap = w.sum(axis=1) / 3
    assert np.abs(rel.dual["cap"]).max() > 0.1
    lp = prog.relaxation().compile("highs")
    for r in range(2):
        h = 1e-4
        vals = []
        for d in (h, -h):
            lp.set_constraint_bounds("cap", ub=cap + d * np.eye(2)[r])
            vals.append(lp.solve().objective)
        assert (vals[0] - vals[1]) / (2 * h) == pytest.approx(rel.dual["cap"][r], abs=1e-6)
    assert prog.solve("highs").relaxation is None  # only on request


def test_time_limit_returns_the_incumbent_marked_not_optimal():
    rng = np.random.default_rng(0)
    n, m = 120, 5  # a multidimensional knapsack HiGHS does not close in a fraction of a second
    W = rng.integers(20, 100, (m, n)).astype(float)
    prog = Program("mkp")
    prog.add_variables("x", shape=n, binary=True)
    prog.add_constraints("cap", {"x": W}, ub=W.sum(axis=1) / 2)
    prog.set_objective(linear={"x": W.mean(axis=0) + rng.integers(0, 10, n)}, sense="maximize")
    sol = prog.solve("highs", time_limit=0.2)
    assert sol.status is Status.TIME_LIMIT and not sol.is_optimal
    x = sol.primal["x"]
    assert np.allclose(x, np.round(x)) and (W @ x <= W.sum(axis=1) / 2 + 1e-9).all()
    assert sol.mip_gap > 0 and sol.objective_bound > sol.objective


def test_binary_blocks_are_validated_and_refused_by_continuous_back_ends():
    prog = Program("bad")
    with pytest.raises(DataValidationError, match="within \\[0, 1\\]"):
        prog.add_variables("x", shape=3, lb=0, ub=2, binary=True)
    prog, _, _ = _knapsack()
    with pytest.raises(SolverNotAvailableError, match="does not take MILP"):
        prog.solve("osqp")
    assert "integer" in str(prog.summary())


def test_fairness_block_gives_the_same_mip_optimum_in_program_pyomo_and_cvxpy(market):
    block = selection_rate_parity(market["groups"], eps=0.05)
    prog = _program(market, block, integer=True)
    sol = prog.solve("highs", options={"mip_rel_gap": 0.0}, relaxation_duals=True)
    f_pyo, x_pyo, _, _ = solve_pyomo(market, block, binary=True)
    f_cvx, x_cvx, _, _ = solve_cvxpy(market, block, integer=True)
    assert sol.status is Status.OPTIMAL
    assert f_pyo == pytest.approx(sol.objective, abs=1e-6) and f_cvx == pytest.approx(sol.objective, abs=1e-6)
    for x in (sol.primal["x"], x_pyo, x_cvx):
        assert np.allclose(x, np.round(x), atol=1e-6)
        r = _rates(np.round(x), market["groups"])
        assert r.max() - r.min() <= 0.05 + 1e-9
    # integrality costs profit relative to the LP relaxation, whose duals price the parity rows
    assert sol.relaxation.objective >= sol.objective - 1e-9
    assert block.price_of_fairness(sol.relaxation, var="x").parameters["eps"] > 0


# ------------------------------------------------------------------------ card and benchmark
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@requires_data
def test_fair_selection_card_reports_profit_rates_and_price(tmp_path):
    import json

    from fairopt.cli import main
    code = main(["run", str(ROOT / "models" / "fair-selection-credit.toml"), "--quiet", "--out", str(tmp_path),
                 "--set", "data.pool_fraction=0.1", "--set", "parameters.eps=0.03"])
    res = json.loads((tmp_path / "result.json").read_text())
    assert code == 0 and res["status"] == "optimal"
    m = res["metrics"]
    assert m["n_groups"] == 4 and m["n_applicants"] == 3000
    for mode in ("lp", "mip"):
        assert m[f"parity_gap_after_{mode}"] <= 0.03 + 1e-7 < m[f"parity_gap_before_{mode}"]
        assert m[f"profit_after_{mode}"] <= m[f"profit_before_{mode}"] + 1e-6
        assert m[f"price_of_fairness_{mode}"] >= -1e-6
    assert m["profit_after_mip"] <= m["profit_after_lp"] + 1e-6  # the relaxation bounds the MIP
    assert m["dprofit_deps"] > 0 and m["mip_gap_after_mip"] <= 1e-4
    rates = next(t for t in res["tables"] if t["title"] == "Approval rate per group")
    assert len(rates["rows"]) == 4 and rates["columns"][1:] == ["before_lp", "after_lp", "before_mip", "after_mip"]


@requires_data
def test_benchmark_smoke(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_fair_selection", ROOT / "benchmarks" / "fair_selection.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = bench.main(["--n", "2000", "--frontier-pool", "600", "--out", str(tmp_path)])
    assert (tmp_path / "fair_selection.json").is_file() and (tmp_path / "fair_selection_frontier.png").is_file()
    runs = res["fairopt"]
    assert runs["lp"]["objective"] == pytest.approx(runs["lp_ipm"]["objective"], rel=1e-7)
    assert runs["lp"]["objective"] == pytest.approx(res["peers"]["cvxpy_lp"]["objective"], rel=1e-7)
    assert runs["lp"]["objective"] == pytest.approx(res["peers"]["pyomo_lp"]["objective"], rel=1e-7)
    assert runs["mip"]["objective"] <= runs["lp"]["objective"] + 1e-6 and runs["mip"]["parity_gap"] <= 0.02 + 1e-9
    pts = res["frontier"]["points"]
    lp = [p["lp_profit"] for p in pts]
    assert all(a <= b + 1e-6 for a, b in itertools.pairwise(lp))  # looser parity never costs profit
    assert all(p["mip_profit"] <= p["lp_profit"] + 1e-6 for p in pts if p["mip_profit"] is not None)
