"""Fairness constraint blocks: one block, three targets (Program, pyomo, cvxpy) give the same
optimum and duals; duals are finite differences of the optimum; the fairness meaning holds."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairopt.constraints import (
    equal_opportunity,
    equalized_odds,
    group_cost_bounds,
    representation_bounds,
    selection_rate_parity,
)
from fairopt.errors import DataValidationError, ParameterError, SolverError
from fairopt.modeling import Program

N = 90


def _market():
    """Candidates whose profit depends on their group, so fairness rows bind."""
    rng = np.random.default_rng(7)
    groups = rng.choice(["a", "b", "c"], size=N, p=[0.5, 0.3, 0.2])
    shift = pd.Series(groups).map({"a": 0.6, "b": 0.0, "c": -0.3}).to_numpy()
    profit = rng.normal(0.2, 1.0, N) + shift
    cost = rng.uniform(0.5, 2.0, N)
    qual = 1 / (1 + np.exp(-(profit + rng.normal(0, 0.5, N))))
    y = (rng.random(N) < qual).astype(int)
    return {"groups": groups, "profit": profit, "cost": cost, "budget": 0.3 * cost.sum(),
            "q": qual, "y": y}


@pytest.fixture(scope="module")
def market():
    return _market()


BUILDERS = {
    "parity_difference": lambda d: selection_rate_parity(d["groups"], eps=0.05),
    "parity_ratio": lambda d: selection_rate_parity(d["groups"], ratio=0.8),
    "equal_opportunity_labels": lambda d: equal_opportunity(d["groups"], d["y"], eps=0.02),
    "equalized_odds_scores": lambda d: equalized_odds(d["groups"], scores=d["q"], eps=0.03),
    "representation": lambda d: representation_bounds(d["groups"], lower={"c": 0.2, "b": 0.3}, upper=0.45),
    "group_cost": lambda d: group_cost_bounds(d["groups"], d["cost"], lower={"c": 4.0}, upper={"a": 10.0}),
}


def _program(d, block=None, integer=False):
    prog = Program("selection")
    prog.add_variables("x", shape=N, lb=0, ub=1, **({"integer": True} if integer else {}))
    prog.add_constraints("budget", {"x": d["cost"][None, :]}, ub=d["budget"])
    prog.set_objective(linear={"x": d["profit"]}, sense="maximize")
    if block is not None:
        block.add_to(prog, "x")
    return prog


def solve_program(d, block):
    sol = _program(d, block).solve("highs")
    return sol.objective, sol.primal["x"], sol.primal.get(block.aux_name, np.zeros(0)), \
        block.price_of_fairness(sol)


def solve_pyomo(d, block, index=None, binary=False):
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression
    m = pyo.ConcreteModel()
    keys = list(range(N)) if index is None else index
    m.I = pyo.Set(initialize=keys if index is None else sorted(keys), ordered=True)
    m.x = pyo.Var(m.I, bounds=(0, 1), domain=pyo.Binary if binary else pyo.Reals)
    xs = [m.x[k] for k in keys]
    m.budget = pyo.Constraint(expr=LinearExpression(constant=0.0, linear_coefs=d["cost"].tolist(),
                                                    linear_vars=xs) <= d["budget"])
    m.profit = pyo.Objective(expr=LinearExpression(constant=0.0, linear_coefs=d["profit"].tolist(),
                                                   linear_vars=xs), sense=pyo.maximize)
    blk = block.to_pyomo(m.x, index=index)
    if binary:
        pyo.SolverFactory("appsi_highs").solve(m)
        return pyo.value(m.profit), np.array([pyo.value(v) for v in xs]), None, None
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    res = pyo.SolverFactory("appsi_highs").solve(m)
    assert str(res.solver.termination_condition) == "optimal"
    price = block.price_of_fairness(blk)
    t = np.array([pyo.value(blk.aux[j]) for j in range(block.n_aux)])
    return pyo.value(m.profit), np.array([pyo.value(v) for v in xs]), t, price


def solve_cvxpy(d, block, integer=False):
    import cvxpy as cp
    x = cp.Variable(N, integer=integer)
    fair = block.to_cvxpy(x)
    prob = cp.Problem(cp.Maximize(d["profit"] @ x), [x >= 0, x <= 1, d["cost"] @ x <= d["budget"], *fair])
    prob.solve(solver="HIGHS")
    assert prob.status == "optimal"
    t = np.zeros(0) if fair.aux is None else fair.aux.value
    price = None if integer else block.price_of_fairness(fair, problem=prob)
    return prob.value, x.value, t, price


def _rates(x, groups, w=None):
    w = np.ones_like(x) if w is None else w
    df = pd.DataFrame({"g": groups, "wx": w * x, "w": w}).groupby("g").sum()
    return (df["wx"] / df["w"]).to_numpy()


def _fair_meaning_holds(kind, d, x, tol=1e-7):
    """Check the fairness definition directly on the decisions, not through the block's rows."""
    g = d["groups"]
    if kind == "parity_difference":
        r = _rates(x, g)
        assert r.max() - r.min() <= 0.05 + tol
    elif kind == "parity_ratio":
        r = _rates(x, g)
        assert r.min() >= 0.8 * r.max() - tol
    elif kind == "equal_opportunity_labels":
        r = _rates(x, g, d["y"].astype(float))
        assert r.max() - r.min() <= 0.02 + tol
    elif kind == "equalized_odds_scores":
        for w in (d["q"], 1 - d["q"]):
            r = _rates(x, g, w)
            assert r.max() - r.min() <= 0.03 + tol
    elif kind == "representation":
        share = pd.Series(x).groupby(g).sum() / x.sum()
        assert share["c"] >= 0.2 - tol and share["b"] >= 0.3 - tol and (share <= 0.45 + tol).all()
    elif kind == "group_cost":
        spend = pd.Series(x * d["cost"]).groupby(g).sum()
        assert spend["c"] >= 4.0 - tol and spend["a"] <= 10.0 + tol


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_three_targets_agree_and_the_block_binds(market, kind):
    block = BUILDERS[kind](market)
    unconstrained = _program(market).solve("highs").objective
    f_prog, x_prog, t_prog, p_prog = solve_program(market, block)
    f_pyo, x_pyo, _, p_pyo = solve_pyomo(market, block)
    f_cvx, x_cvx, _, p_cvx = solve_cvxpy(market, block)
    assert unconstrained > f_prog + 1e-3  # fairness costs profit here: the test is not vacuous
    assert abs(f_pyo - f_prog) <= 1e-7 and abs(f_cvx - f_prog) <= 1e-7
    for x in (x_prog, x_pyo, x_cvx):
        _fair_meaning_holds(kind, market, x)
    assert block.violation(x_prog, t_prog) <= 1e-9
    # the LP optimum is a nondegenerate vertex: duals and tolerance prices agree across targets
    assert np.abs(p_prog.rows["dual"].to_numpy()).max() > 1e-3
    for other in (p_pyo, p_cvx):
        np.testing.assert_allclose(other.rows["dual"], p_prog.rows["dual"], atol=1e-6)
        for key, value in p_prog.parameters.items():
            assert other.parameters[key] == pytest.approx(value, abs=1e-6)


def _optimum(d, block, shift=None):
    """Optimal profit, with the bound of row ``shift = (r, delta)`` moved by delta."""
    prog = _program(d, block)
    model = prog.compile("highs")
    if shift is not None:
        r, delta = shift
        lb, ub = block.lb.copy(), block.ub.copy()
        (lb if block.sense[r] > 0 else ub)[r] += delta
        model.set_constraint_bounds(block.name, lb=lb, ub=ub)
    return model.solve().objective


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_row_duals_are_finite_differences_of_the_optimal_profit(market, kind):
    block = BUILDERS[kind](market)
    price = solve_program(market, block)[3]
    duals = price.rows["dual"].to_numpy()
    h = 1e-5
    for r in range(block.m):
        fd = (_optimum(market, block, (r, h)) - _optimum(market, block, (r, -h))) / (2 * h)
        assert fd == pytest.approx(duals[r], abs=1e-5), price.rows.index[r]
    assert np.count_nonzero(np.abs(duals) > 1e-6) >= 1


TOLERANCES = {
    "parity_difference": (lambda d, v: selection_rate_parity(d["groups"], eps=v), "eps", 0.05),
    "parity_ratio": (lambda d, v: selection_rate_parity(d["groups"], ratio=v), "ratio", 0.8),
    "equalized_odds_scores": (lambda d, v: equalized_odds(d["groups"], scores=d["q"], eps=v), "eps", 0.03),
    "representation": (lambda d, v: representation_bounds(d["groups"], lower={"c": v, "b": 0.3}, upper=0.45),
                       "lower[c]", 0.2),
    "group_cost": (lambda d, v: group_cost_bounds(d["groups"], d["cost"], lower={"c": 4.0}, upper={"a": v}),
                   "upper[a]", 10.0),
}


@pytest.mark.parametrize("kind", list(TOLERANCES))
def test_price_of_a_tolerance_is_the_derivative_of_the_optimum(market, kind):
    build, key, value = TOLERANCES[kind]
    price = solve_program(market, build(market, value))[3].parameters[key]
    h = 1e-5
    fd = (solve_program(market, build(market, value + h))[0]
          - solve_program(market, build(market, value - h))[0]) / (2 * h)
    assert abs(price) > 1e-3
    assert fd == pytest.approx(price, rel=1e-4, abs=1e-6)


def test_pyomo_block_follows_a_user_index_order(market):
    ids = [f"app{i:03d}" for i in np.random.default_rng(1).permutation(N)]
    block = selection_rate_parity(market["groups"], eps=0.05)
    f_idx, x_idx, _, price = solve_pyomo(market, block, index=ids)
    f_prog, x_prog, _, p_prog = solve_program(market, block)
    assert f_idx == pytest.approx(f_prog, abs=1e-7)
    np.testing.assert_allclose(x_idx, x_prog, atol=1e-7)
    assert price.parameters["eps"] == pytest.approx(p_prog.parameters["eps"], abs=1e-6)


def test_cvxpy_block_in_a_minimisation_reads_duals_with_the_right_sign(market):
    import cvxpy as cp
    block = selection_rate_parity(market["groups"], eps=0.05)
    x = cp.Variable(N)
    fair = block.to_cvxpy(x)
    cons = [x >= 0, x <= 1, market["cost"] @ x <= market["budget"], *fair]
    prob = cp.Problem(cp.Minimize(-market["profit"] @ x), cons)
    prob.solve(solver="HIGHS")
    price = block.price_of_fairness(fair, problem=prob)
    p_max = solve_program(market, block)[3]
    np.testing.assert_allclose(price.rows["dual"], -p_max.rows["dual"], atol=1e-6)


def test_parity_across_four_groups_matches_pairwise_definition():
    rng = np.random.default_rng(3)
    n = 400
    groups = rng.integers(0, 4, n)
    profit = rng.normal(size=n) + 0.4 * groups
    prog = Program("four")
    prog.add_variables("x", shape=n, lb=0, ub=1)
    prog.add_constraints("size", {"x": np.ones((1, n))}, ub=100)
    prog.set_objective(linear={"x": profit}, sense="maximize")
    block = selection_rate_parity(groups, eps=0.1)
    block.add_to(prog, "x")
    x = prog.solve().primal["x"]
    r = _rates(x, groups)
    pairwise = np.abs(r[:, None] - r[None, :]).max()
    assert pairwise == pytest.approx(0.1, abs=1e-9)  # binds, and holds for every pair
    assert block.m == 8 and block.A.nnz == 2 * n  # K rows per side, not K(K-1)/2 pairs


# ------------------------------------------------------------------------ validation
def test_bad_inputs_raise_typed_errors_that_say_what_to_fix(market):
    g = market["groups"]
    # a bad tolerance is a parameter mistake: ParameterError naming the parameter and its range
    with pytest.raises(ParameterError, match="exactly one of eps"):
        selection_rate_parity(g)
    with pytest.raises(ParameterError, match="exactly one of eps"):
        selection_rate_parity(g, eps=0.1, ratio=0.8)
    with pytest.raises(ParameterError, match=r"'eps' parameter of selection_rate_parity must be .* range \[0, 1\]"):
        selection_rate_parity(g, eps=-0.1)
    with pytest.raises(ParameterError, match=r"'ratio' .* must be a float in the range \(0, 1\]"):
        selection_rate_parity(g, ratio=1.5)
    with pytest.raises(DataValidationError, match="missing value"):
        selection_rate_parity(np.array(["a", None, "b"], dtype=object), eps=0.1)
    with pytest.raises(DataValidationError, match="weights has 3 entries"):
        selection_rate_parity(g, eps=0.1, weights=[1, 2, 3])
    with pytest.raises(DataValidationError, match="group 'c' has no qualified"):
        equal_opportunity(g, np.where(g == "c", 0, 1), eps=0.1)
    with pytest.raises(DataValidationError, match="0/1"):
        equal_opportunity(g, np.full(N, 0.5), eps=0.1)
    with pytest.raises(DataValidationError, match="exactly one of y"):
        equal_opportunity(g, eps=0.1)
    with pytest.raises(DataValidationError, match="contradictory"):
        representation_bounds(g, lower=0.4)
    with pytest.raises(DataValidationError, match="unknown group"):
        representation_bounds(g, lower={"z": 0.1})
    with pytest.raises(DataValidationError, match="lower <= upper"):
        group_cost_bounds(g, market["cost"], lower=5, upper=1)
    block = selection_rate_parity(g, eps=0.1)
    prog = Program("short")
    prog.add_variables("x", shape=N - 1, lb=0, ub=1)
    with pytest.raises(DataValidationError, match=f"built for {N} candidates"):
        block.add_to(prog, "x")
    with pytest.raises(DataValidationError, match="no variable 'y'"):
        block.add_to(prog, "y")


def test_pyomo_without_dual_suffix_and_missing_duals_are_reported(market):
    import pyomo.environ as pyo
    block = selection_rate_parity(market["groups"], eps=0.05)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(N), bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum(float(p) * m.x[i] for i, p in enumerate(market["profit"])),
                          sense=pyo.maximize)
    blk = block.to_pyomo(m.x)
    pyo.SolverFactory("appsi_highs").solve(m)
    with pytest.raises(DataValidationError, match="Suffix"):
        block.price_of_fairness(blk)
    with pytest.raises(DataValidationError, match="already has a component"):
        block.to_pyomo(m.x)
    other = selection_rate_parity(market["groups"], eps=0.1, name="other")
    with pytest.raises(DataValidationError, match="not built by"):
        other.price_of_fairness(blk)
    with pytest.raises(SolverError, match="no duals"):
        block._price(None, np.zeros(N), np.zeros(1))
