"""Item 4 of issue 27 (b)-(d): relative group-cost fairness per entity in a pyomo facility
location model, prices of a MIP outside Program (pyomo and cvxpy) from the LP at the incumbent,
and blocks over a slice or an expression of a Program variable."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from fairopt.constraints import selection_rate_parity
from fairopt.constraints.mip import incumbent_lp
from fairopt.constraints.relative import group_cost_parity
from fairopt.errors import DataValidationError
from fairopt.modeling import Program

C, F = 12, 3


@pytest.fixture(scope="module")
def facility():
    rng = np.random.default_rng(9)
    pos = rng.random((C, 2))
    pos[:6, 0] += 1.0                                  # group "far" lives away from the sites
    sites = rng.random((F, 2))
    dist = np.linalg.norm(pos[:, None, :] - sites[None, :, :], axis=2)
    groups = np.array(["far"] * 6 + ["near"] * 6)
    return dist, groups, rng.uniform(1, 3, F)


def facility_model(dist, groups, open_cost, eps, block=True, integer=True):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(C), range(F), bounds=(0, 1))
    m.y = pyo.Var(range(F), domain=pyo.Binary if integer else pyo.UnitInterval)
    m.assign = pyo.Constraint(range(C), rule=lambda m, c: sum(m.x[c, f] for f in range(F)) == 1)
    m.link = pyo.Constraint(range(C), range(F), rule=lambda m, c, f: m.x[c, f] <= m.y[f])
    m.obj = pyo.Objective(expr=sum(dist[c, f] * m.x[c, f] for c in range(C) for f in range(F))
                          + sum(open_cost[f] * m.y[f] for f in range(F)))
    if not integer:
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    fair = group_cost_parity(np.repeat(groups, F), dist.ravel(), eps, entity=np.repeat(np.arange(C), F))
    blk = fair.to_pyomo(m.x, index=[(c, f) for c in range(C) for f in range(F)]) if block else None
    return m, fair, blk


def per_client_cost(m, dist, groups):
    x = np.array([[pyo.value(m.x[c, f]) for f in range(F)] for c in range(C)])
    cost = (dist * x).sum(axis=1)
    return {g: cost[groups == g].mean() for g in ("far", "near")}


def test_relative_group_cost_per_client_in_pyomo(facility):
    dist, groups, open_cost = facility
    solver = pyo.SolverFactory("appsi_highs")
    free, _, _ = facility_model(dist, groups, open_cost, 0.0, block=False)
    solver.solve(free)
    gap_free = np.ptp(list(per_client_cost(free, dist, groups).values()))
    eps = 0.5 * gap_free
    m, _fair, _blk = facility_model(dist, groups, open_cost, eps)
    solver.solve(m)
    costs = per_client_cost(m, dist, groups)
    assert abs(costs["far"] - costs["near"]) <= eps + 1e-7       # per client, in distance units
    assert pyo.value(m.obj) >= pyo.value(free.obj) - 1e-9
    # the same rows by hand: mean over the 6 clients of each group, not over 18 entries
    ref = pyo.ConcreteModel()
    ref.x = pyo.Var(range(C), range(F), bounds=(0, 1))
    ref.y = pyo.Var(range(F), domain=pyo.Binary)
    ref.t = pyo.Var()
    ref.assign = pyo.Constraint(range(C), rule=lambda r, c: sum(r.x[c, f] for f in range(F)) == 1)
    ref.link = pyo.Constraint(range(C), range(F), rule=lambda r, c, f: r.x[c, f] <= r.y[f])
    avg = {g: sum(dist[c, f] * ref.x[c, f] for c in np.flatnonzero(groups == g) for f in range(F)) / 6
           for g in ("far", "near")}
    ref.lo = pyo.Constraint(["far", "near"], rule=lambda r, g: avg[g] >= r.t)
    ref.hi = pyo.Constraint(["far", "near"], rule=lambda r, g: avg[g] <= r.t + eps)
    ref.obj = pyo.Objective(expr=sum(dist[c, f] * ref.x[c, f] for c in range(C) for f in range(F))
                            + sum(open_cost[f] * ref.y[f] for f in range(F)))
    solver.solve(ref)
    assert pyo.value(m.obj) == pytest.approx(pyo.value(ref.obj), abs=1e-7)
    with pytest.raises(DataValidationError, match="more than one group"):
        group_cost_parity(["a", "b"], [1.0, 2.0], 0.1, entity=[0, 0])


def test_mip_price_from_incumbent_lp_pyomo(facility):
    dist, groups, open_cost = facility
    solver = pyo.SolverFactory("appsi_highs")
    free, _, _ = facility_model(dist, groups, open_cost, 0.0, block=False)
    solver.solve(free)
    eps = 0.5 * np.ptp(list(per_client_cost(free, dist, groups).values()))
    m, fair, blk = facility_model(dist, groups, open_cost, eps)
    solver.solve(m)
    opened = [round(pyo.value(m.y[f])) for f in range(F)]
    incumbent_lp(m)
    assert [m.y[f].fixed for f in range(F)] == [False] * F        # integers released again
    price = fair.price_of_fairness(blk).parameters["eps"]
    # finite differences of the LP with the sites fixed at the incumbent
    vals = []
    for e in (eps - 1e-5, eps + 1e-5):
        lp, _, _ = facility_model(dist, groups, open_cost, e, integer=False)
        for f in range(F):
            lp.y[f].fix(opened[f])
        solver.solve(lp)
        vals.append(pyo.value(lp.obj))
    assert price == pytest.approx((vals[1] - vals[0]) / 2e-5, abs=1e-5)
    assert price < 0                                              # more slack, lower cost


def test_mip_price_from_incumbent_lp_cvxpy():
    rng = np.random.default_rng(1)
    n = 20
    g = rng.choice(["a", "b"], n)
    profit = rng.normal(1, 1, n) + np.where(g == "a", 1.0, 0.0)
    open_ = cp.Variable(4, boolean=True)
    region = rng.integers(0, 4, n)
    x = cp.Variable(n)
    block = selection_rate_parity(g, eps=0.1)
    cons = block.to_cvxpy(x)
    link = [x[region == r] <= open_[r] for r in range(4)]
    prob = cp.Problem(cp.Maximize(profit @ x - 1.5 * cp.sum(open_)), [*cons, *link, x >= 0, cp.sum(x) <= 8])
    prob.solve(solver="HIGHS")
    inc = np.round(open_.value)
    lp = incumbent_lp(prob)
    assert open_.attributes["boolean"] and prob.is_mixed_integer()         # restored
    price = block.price_of_fairness(cons, problem=lp).parameters["eps"]
    vals = []
    for e in (0.1 - 1e-5, 0.1 + 1e-5):
        xx = cp.Variable(n)
        b = selection_rate_parity(g, eps=e)
        p = cp.Problem(cp.Maximize(profit @ xx - 1.5 * inc.sum()),
                       [*b.to_cvxpy(xx), *[xx[region == r] <= inc[r] for r in range(4)], xx >= 0, cp.sum(xx) <= 8])
        vals.append(p.solve(solver="HIGHS"))
    assert price == pytest.approx((vals[1] - vals[0]) / 2e-5, abs=1e-5)


def test_program_block_over_slice_and_cumulative_expression():
    rng = np.random.default_rng(3)
    n, T = 16, 3
    g = rng.choice(["a", "b"], n)
    value = rng.normal(1, 0.5, (n, T)) + np.where(g == "a", 0.6, 0.0)[:, None]
    prog = Program("hiring")
    prog.add_variables("x", shape=(n, T), lb=0, ub=1)
    prog.add_constraints("once", {"x": np.kron(np.eye(n), np.ones((1, T)))}, ub=1)
    prog.add_constraints("slots", {"x": np.kron(np.ones((1, n)), np.eye(T))}, ub=4)
    prog.set_objective(linear={"x": value.ravel()}, sense="maximize")
    # parity of hires in period 0 (a slice) and of cumulative hires up to period 1 (an expression)
    period0 = selection_rate_parity(g, eps=0.05, name="period0")
    period0.add_to(prog, "x", over=np.arange(n) * T)
    cum = np.zeros((n, n * T))
    cum[np.arange(n), np.arange(n) * T] = 1
    cum[np.arange(n), np.arange(n) * T + 1] = 1
    cumulative = selection_rate_parity(g, eps=0.05, name="cumulative")
    cumulative.add_to(prog, "x", over=cum)
    sol = prog.solve()
    X = sol.primal["x"].reshape(n, T)
    for hires in (X[:, 0], X[:, 0] + X[:, 1]):
        rates = [hires[g == a].mean() for a in ("a", "b")]
        assert abs(rates[0] - rates[1]) <= 0.05 + 1e-8
    # the same with cvxpy on the same expressions
    Xc = cp.Variable((n, T))
    c1 = selection_rate_parity(g, eps=0.05).to_cvxpy(Xc[:, 0])
    c2 = selection_rate_parity(g, eps=0.05).to_cvxpy(Xc[:, 0] + Xc[:, 1])
    p = cp.Problem(cp.Maximize(cp.sum(cp.multiply(value, Xc))),
                   [*c1, *c2, Xc >= 0, Xc <= 1, cp.sum(Xc, axis=1) <= 1, cp.sum(Xc, axis=0) <= 4])
    assert p.solve(solver="HIGHS") == pytest.approx(sol.objective, abs=1e-7)
    price = cumulative.price_of_fairness(sol).parameters["eps"]
    assert np.isfinite(price) and price >= 0
    with pytest.raises(DataValidationError, match="selects"):
        selection_rate_parity(g, eps=0.1, name="bad").add_to(prog, "x", over=np.arange(3))
