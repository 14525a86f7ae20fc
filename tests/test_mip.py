"""Integer variables in Program: back ends agree on MIP optima (also with a fairness block in a
user's pyomo / cvxpy model), gap and status are reported, a time limit returns the incumbent
marked not optimal, and the LP relaxation's duals come on request."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairopt.constraints import selection_rate_parity
from fairopt.errors import DataValidationError, SolverNotAvailableError
from fairopt.modeling import Program, Status

from test_constraints import N, _program, _rates, market, solve_cvxpy, solve_pyomo  # noqa: F401

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
    prog, w, v = _knapsack()
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


def test_fairness_block_gives_the_same_mip_optimum_in_program_pyomo_and_cvxpy(market):  # noqa: F811
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
