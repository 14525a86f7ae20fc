"""Prices of a fairness block on a user's own cvxpy or pyomo model come only from a finished solve:
an infeasible solve, a solve stopped at a limit and values left over from an earlier solve are
refused with typed errors; ``to_pyomo`` refuses an index that would leave a candidate out."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.constraints import selection_rate_parity
from fairopt.errors import DataValidationError, InfeasibleError, SolverError, SolverLimitError

N = 90


@pytest.fixture(scope="module")
def market():
    rng = np.random.default_rng(7)
    groups = rng.choice(["a", "b", "c"], size=N, p=[0.5, 0.3, 0.2])
    shift = np.select([groups == "a", groups == "b"], [0.6, 0.0], -0.3)
    cost = rng.uniform(0.5, 2.0, N)
    return {"groups": groups, "profit": rng.normal(0.2, 1.0, N) + shift, "cost": cost,
            "budget": 0.3 * cost.sum()}


def _cvxpy(d, extra=()):
    import cvxpy as cp
    block = selection_rate_parity(d["groups"], eps=0.05)
    x = cp.Variable(N)
    fair = block.to_cvxpy(x)
    cons = [x >= 0, x <= 1, d["cost"] @ x <= d["budget"], *[f(x) for f in extra], *fair]
    return block, fair, cp.Problem(cp.Maximize(d["profit"] @ x), cons)


def test_cvxpy_price_needs_an_optimal_status(market):
    block, fair, prob = _cvxpy(market)
    with pytest.raises(SolverError, match="not been solved"):
        block.price_of_fairness(fair, problem=prob)
    prob.solve(solver="HIGHS")
    exact = block.price_of_fairness(fair, problem=prob).parameters["eps"]
    assert exact > 1.0  # the block binds: a zero or wrong price would be visible
    # a solve stopped at its iteration limit has multipliers of an unfinished iterate
    prob.solve(solver="OSQP", max_iter=20)
    assert prob.status == "user_limit"
    with pytest.raises(SolverLimitError, match="user_limit") as err:
        block.price_of_fairness(fair, problem=prob)
    assert err.value.status == "user_limit"
    prob.solve(solver="SCS", max_iters=20)
    assert prob.status == "optimal_inaccurate"
    with pytest.raises(SolverLimitError, match="optimal_inaccurate"):
        block.price_of_fairness(fair, problem=prob)
    prob.solve(solver="CLARABEL")
    assert block.price_of_fairness(fair, problem=prob).parameters["eps"] == pytest.approx(exact, rel=1e-5)


def test_cvxpy_infeasible_problem_raises_the_typed_error_naming_the_block(market):
    import cvxpy as cp
    block, fair, prob = _cvxpy(market, extra=[lambda x: cp.sum(x) >= N + 1])
    prob.solve(solver="HIGHS")
    assert prob.status == "infeasible"
    with pytest.raises(InfeasibleError, match="infeasible") as err:
        block.price_of_fairness(fair, problem=prob)
    assert err.value.constraint == block.name


def test_cvxpy_problem_without_the_block_is_refused(market):
    import cvxpy as cp
    block, fair, prob = _cvxpy(market)
    other = cp.Problem(prob.objective, prob.constraints[:3])
    other.solve(solver="HIGHS")
    with pytest.raises(DataValidationError, match="does not contain"):
        block.price_of_fairness(fair, problem=other)


def _pyomo(d):
    import pyomo.environ as pyo
    block = selection_rate_parity(d["groups"], eps=0.05)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(N), bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum(float(p) * m.x[i] for i, p in enumerate(d["profit"])),
                          sense=pyo.maximize)
    m.budget = pyo.Constraint(expr=sum(float(c) * m.x[i] for i, c in enumerate(d["cost"])) <= d["budget"])
    blk = block.to_pyomo(m.x)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return block, blk, m


def test_pyomo_prices_after_a_later_solve_that_loaded_nothing_are_refused(market):
    import pyomo.environ as pyo
    block, blk, m = _pyomo(market)
    opt = pyo.SolverFactory("appsi_highs")
    res = opt.solve(m)
    first = block.price_of_fairness(blk, problem=res).parameters["eps"]
    assert first > 1.0
    m.everyone = pyo.Constraint(expr=sum(m.x[i] for i in range(N)) >= N + 1)  # now infeasible
    res = opt.solve(m, load_solutions=False)
    assert str(res.solver.termination_condition) == "infeasible"
    with pytest.raises(SolverError, match="everyone"):  # the old values break the new row
        block.price_of_fairness(blk)
    with pytest.raises(InfeasibleError) as err:
        block.price_of_fairness(blk, problem=res)
    assert err.value.constraint == block.name
    m.everyone.deactivate()
    res = opt.solve(m)
    assert block.price_of_fairness(blk, problem=res).parameters["eps"] == pytest.approx(first, rel=1e-9)


def test_pyomo_results_at_a_limit_are_refused(market):
    import pyomo.environ as pyo
    from pyomo.opt import SolverResults, TerminationCondition
    block, blk, m = _pyomo(market)
    pyo.SolverFactory("appsi_highs").solve(m)
    res = SolverResults()
    res.solver.termination_condition = TerminationCondition.maxIterations
    with pytest.raises(SolverLimitError, match="maxIterations"):
        block.price_of_fairness(blk, problem=res)
    with pytest.raises(DataValidationError, match="results object"):
        block.price_of_fairness(blk, problem="done")


def test_to_pyomo_refuses_repeated_and_unknown_keys(market):
    import pyomo.environ as pyo
    block = selection_rate_parity(market["groups"], eps=0.05)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(N), bounds=(0, 1))
    repeated = [*range(N - 1), 0]  # candidate N-1 would be in no row
    with pytest.raises(DataValidationError, match="repeats key 0"):
        block.to_pyomo(m.x, index=repeated)
    unknown = [*list(range(N - 1)), N + 5]
    with pytest.raises(DataValidationError, match=f"has no key {N + 5}"):
        block.to_pyomo(m.x, index=unknown)
    assert m.component(block.name) is None  # nothing half-built was left on the model
    blk = block.to_pyomo(m.x, index=list(reversed(range(N))))
    assert len(blk.rows) == block.m


def test_program_solution_stopped_at_a_limit_is_refused(market):
    import dataclasses

    from fairopt.modeling import Program
    from fairopt.modeling.solution import Status
    block = selection_rate_parity(market["groups"], eps=0.05)
    prog = Program("limit")
    prog.add_variables("x", shape=N, lb=0, ub=1)
    prog.add_constraints("budget", {"x": market["cost"][None, :]}, ub=market["budget"])
    prog.set_objective(linear={"x": market["profit"]}, sense="maximize")
    block.add_to(prog, "x")
    sol = prog.solve("highs")
    assert block.price_of_fairness(sol).parameters["eps"] > 1.0
    stopped = dataclasses.replace(sol, status=Status.ITERATION_LIMIT)   # same arrays, unfinished
    with pytest.raises(SolverLimitError, match="iteration_limit"):
        block.price_of_fairness(stopped)
    with pytest.raises(SolverError, match="numerical"):
        block.price_of_fairness(dataclasses.replace(sol, status=Status.NUMERICAL))
