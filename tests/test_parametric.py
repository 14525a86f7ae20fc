"""Item 4 of issue 27: tolerances as cvxpy Parameters / pyomo mutable Params (a sweep re-solves the
same objects, with the optima of rebuilding), blocks over slices and expressions."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from fairopt.constraints import representation_bounds, selection_rate_parity
from fairopt.errors import ParameterError

N = 40
EPS = [0.0, 0.02, 0.05, 0.1, 0.3]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    g = rng.choice(["a", "b", "c"], N)
    profit = rng.normal(0, 1, N) + np.where(g == "a", 0.8, 0.0)
    cost = rng.uniform(0.5, 2, N)
    return g, profit, cost, 0.3 * cost.sum()


def cvxpy_value(data, cons_fn):
    _g, profit, cost, budget = data
    x = cp.Variable(N)
    cons = cons_fn(x)
    prob = cp.Problem(cp.Maximize(profit @ x), [*cons, x >= 0, x <= 1, cost @ x <= budget])
    prob.solve(solver="HIGHS")
    return prob.value


def test_cvxpy_sweep_without_rebuilding(data):
    g, profit, cost, budget = data
    block = selection_rate_parity(g, eps=EPS[0])
    x = cp.Variable(N)
    cons = block.to_cvxpy_parametric(x)
    prob = cp.Problem(cp.Maximize(profit @ x), [*cons, x >= 0, x <= 1, cost @ x <= budget])
    ids = [id(c) for c in prob.constraints]
    param = cons.parameters["eps"]
    values = []
    for eps in EPS:
        block.set_tolerance(eps=eps)
        assert cons.parameters["eps"] is param and param.value == eps
        values.append(prob.solve(solver="HIGHS"))
        assert [id(c) for c in prob.constraints] == ids          # the same problem, same constraints
        rebuilt = cvxpy_value(data, lambda x, e=eps: selection_rate_parity(g, eps=e).to_cvxpy(x))
        assert values[-1] == pytest.approx(rebuilt, abs=1e-7)
        # prices read after the update refer to the new eps
        price = block.price_of_fairness(cons, problem=prob).parameters["eps"]
        ref = selection_rate_parity(g, eps=eps)
        xr = cp.Variable(N)
        cr = ref.to_cvxpy(xr)
        pr = cp.Problem(cp.Maximize(profit @ xr), [*cr, xr >= 0, xr <= 1, cost @ xr <= budget])
        pr.solve(solver="HIGHS")
        assert price == pytest.approx(ref.price_of_fairness(cr, problem=pr).parameters["eps"], abs=1e-6)
    assert values == sorted(values)                               # looser eps, more profit
    assert values[0] < values[-1]


def test_cvxpy_ratio_and_shares_are_parameters(data):
    g, *_ = data
    block = selection_rate_parity(g, ratio=0.8)
    x = cp.Variable(N)
    cons = block.to_cvxpy_parametric(x)
    prob = cp.Problem(cp.Maximize(data[1] @ x), [*cons, x >= 0, x <= 1, data[2] @ x <= data[3]])
    for r in (0.8, 0.9, 1.0):
        block.set_tolerance(ratio=r)
        got = prob.solve(solver="HIGHS")
        assert got == pytest.approx(cvxpy_value(data, lambda x, r=r: selection_rate_parity(g, ratio=r).to_cvxpy(x)),
                                    abs=1e-7)
    rep = representation_bounds(g, lower={"c": 0.2}, upper=0.5)
    y = cp.Variable(N)
    cons = rep.to_cvxpy_parametric(y)
    prob = cp.Problem(cp.Maximize(data[1] @ y), [*cons, y >= 0, y <= 1, data[2] @ y <= data[3]])
    rep.set_tolerance(**{"lower[c]": 0.35})
    got = prob.solve(solver="HIGHS")
    ref = cvxpy_value(data, lambda x: representation_bounds(g, lower={"c": 0.35}, upper=0.5).to_cvxpy(x))
    assert got == pytest.approx(ref, abs=1e-7)
    with pytest.raises(ParameterError, match="no tolerance"):
        rep.set_tolerance(eps=0.1)


def _pyomo_model(data):
    _g, profit, cost, budget = data
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(N), bounds=(0, 1))
    m.budget = pyo.Constraint(expr=sum(cost[i] * m.x[i] for i in range(N)) <= budget)
    m.obj = pyo.Objective(expr=sum(profit[i] * m.x[i] for i in range(N)), sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def test_pyomo_sweep_without_rebuilding(data):
    g, *_ = data
    block = selection_rate_parity(g, eps=EPS[0])
    m = _pyomo_model(data)
    blk = block.to_pyomo_parametric(m.x)
    rows = [blk.rows[r] for r in range(block.m)]
    solver = pyo.SolverFactory("appsi_highs")
    for eps in EPS:
        block.set_tolerance(eps=eps)
        solver.solve(m)
        assert m.component(block.name) is blk and all(blk.rows[r] is rows[r] for r in range(block.m))
        assert pyo.value(blk.tolerance["eps"]) == eps
        ref = _pyomo_model(data)
        fresh = selection_rate_parity(g, eps=eps)
        fresh.to_pyomo(ref.x)
        solver.solve(ref)
        assert pyo.value(m.obj) == pytest.approx(pyo.value(ref.obj), abs=1e-7)
        assert pyo.value(m.obj) == pytest.approx(cvxpy_value(
            data, lambda x, e=eps: selection_rate_parity(g, eps=e).to_cvxpy(x)), abs=1e-7)
    price = block.price_of_fairness(blk).parameters["eps"]
    assert np.isfinite(price)


def test_cvxpy_block_over_expression_per_period():
    """A multi-period hiring plan: parity of the cumulative hires up to period 2 only."""
    rng = np.random.default_rng(5)
    n, T = 30, 3
    g = rng.choice(["a", "b"], n)
    value = rng.normal(1, 0.5, (n, T)) + np.where(g == "a", 0.5, 0.0)[:, None]
    X = cp.Variable((n, T))
    cumulative = X[:, 0] + X[:, 1]                       # an expression, not a Variable
    block = selection_rate_parity(g, eps=0.05)
    cons = block.to_cvxpy_parametric(cumulative)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(value, X))),
                      [*cons, X >= 0, cp.sum(X, axis=1) <= 1, cp.sum(X, axis=0) <= 6])
    prob.solve(solver="HIGHS")
    cum = X.value[:, 0] + X.value[:, 1]
    rates = [cum[g == a].mean() for a in ("a", "b")]
    assert abs(rates[0] - rates[1]) <= 0.05 + 1e-8
    assert block.price_of_fairness(cons, problem=prob).parameters["eps"] >= 0
