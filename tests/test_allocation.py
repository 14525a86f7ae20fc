"""α-fair objectives: the blocks agree with direct cvxpy formulations (1e-6), the LP forms run on
every LP back end, and the α-fair solutions converge monotonically to max-min as α grows."""
from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from fairopt.constraints import alpha_fairness
from fairopt.errors import DataValidationError
from fairopt.modeling import Program

N = 24


@pytest.fixture(scope="module")
def market():
    rng = np.random.default_rng(4)
    g = np.array(["a", "b", "c"])[np.r_[0, 1, 2, rng.integers(0, 3, N - 3)]]
    u = rng.uniform(0.5, 2.0, N) * np.where(g == "a", 2.0, 1.0)   # group a converts best
    cost = rng.uniform(0.5, 1.5, N)
    return g, u, cost, 0.35 * cost.sum()


def direct(g, u, cost, budget, alpha, w=None):
    """The welfare written out by hand in cvxpy (no fairopt code)."""
    labels = np.unique(g)
    w = np.ones(labels.size) if w is None else w
    x = cp.Variable(N)
    Ua = cp.hstack([cp.sum(cp.multiply(u[g == a], x[np.flatnonzero(g == a)])) / (g == a).sum() for a in labels])
    cons = [x >= 0, x <= 1, cost @ x <= budget]
    if alpha == 0:
        obj = w @ Ua
    elif np.isinf(alpha):
        z = cp.Variable()
        cons.append(Ua >= z)
        obj = z
    elif alpha == 1:
        obj = w @ cp.log(Ua)
    else:
        obj = w @ cp.power(Ua, 1 - alpha, approx=False) / (1 - alpha)
    prob = cp.Problem(cp.Maximize(obj), cons)
    prob.solve(solver="CLARABEL")
    return prob.value, Ua.value


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, 3.0, np.inf])
def test_blocks_agree_with_direct_cvxpy(market, alpha):
    g, u, cost, budget = market
    obj = alpha_fairness(g, u, alpha)
    x = cp.Variable(N)
    objective, cons = obj.to_cvxpy(x)
    prob = cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= budget])
    prob.solve(solver="CLARABEL")
    ref_val, ref_U = direct(g, u, cost, budget, alpha)
    assert prob.value == pytest.approx(ref_val, abs=1e-6)
    assert obj.welfare(x.value) == pytest.approx(ref_val, abs=1e-6)
    if alpha > 0:  # strictly concave in U: group utilities are unique
        assert np.abs(obj.group_utilities(x.value).to_numpy() - ref_U).max() < 1e-6


@pytest.mark.parametrize("solver", ["highs", "scipy", "cvxpy:HIGHS", "cvxpy:CLARABEL", "pyomo:appsi_highs", "osqp"])
@pytest.mark.parametrize("alpha", [0.0, np.inf])
def test_lp_forms_on_every_lp_backend(market, solver, alpha):
    g, u, cost, budget = market
    obj = alpha_fairness(g, u, alpha)
    prog = Program("alloc")
    prog.add_variables("x", shape=N, lb=0, ub=1)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=budget)
    epi = obj.add_to(prog, "x")
    sol = prog.solve(solver)
    ref_val, ref_U = direct(g, u, cost, budget, alpha)
    tol = 1e-6 if solver != "osqp" else 1e-4
    assert sol.objective == pytest.approx(ref_val, abs=tol)
    if epi is not None:
        assert epi.violation(sol.primal["x"], sol.primal[epi.aux_name]) < tol
        assert np.abs(obj.group_utilities(sol.primal["x"]).to_numpy() - ref_U).min() < tol  # a binding group


def test_pyomo_targets(market):
    g, u, cost, budget = market
    for alpha in (0.0, np.inf):
        obj = alpha_fairness(g, u, alpha)
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(N), bounds=(0, 1))
        m.budget = pyo.Constraint(expr=sum(cost[i] * m.x[i] for i in range(N)) <= budget)
        obj.to_pyomo(m.x)
        pyo.SolverFactory("appsi_highs").solve(m)
        x = np.array([pyo.value(m.x[i]) for i in range(N)])
        assert obj.welfare(x) == pytest.approx(direct(g, u, cost, budget, alpha)[0], abs=1e-6)
    with pytest.raises(DataValidationError, match="to_cvxpy"):
        alpha_fairness(g, u, 1.0).to_pyomo(m.x)


def test_alpha_fair_converges_monotonically_to_max_min(market):
    g, u, cost, budget = market
    prog = Program("alloc")
    prog.add_variables("x", shape=N, lb=0, ub=1)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=budget)
    maxmin = alpha_fairness(g, u, np.inf)
    maxmin.add_to(prog, "x")
    sol = prog.solve("highs")
    target = maxmin.group_utilities(sol.primal["x"]).to_numpy()
    gaps = []
    for alpha in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0):
        _, Ua = direct(g, u, cost, budget, alpha)
        assert Ua.min() <= sol.objective + 1e-6           # max-min is the best worst group
        gaps.append(sol.objective - Ua.min())
    assert all(b <= a + 1e-7 for a, b in itertools.pairwise(gaps)), gaps
    assert gaps[-1] < 0.1 * gaps[0]                   # the gap shrinks like 1/alpha
    _, U0 = direct(g, u, cost, budget, 0.0)
    assert sol.objective - U0.min() > gaps[0]          # utilitarian is the least fair
    assert target.min() == pytest.approx(sol.objective, abs=1e-9)


def test_validation(market):
    g, u, _, _ = market
    with pytest.raises(DataValidationError, match="alpha"):
        alpha_fairness(g, u, -1)
    with pytest.raises(DataValidationError, match="weights"):
        alpha_fairness(g, u, 1, weights={"a": 0.0})
    with pytest.raises(DataValidationError, match="no utility"):
        alpha_fairness(g, np.where(g == "b", 0.0, u), 1)
