"""Intersectional parity: row generation reaches the full formulation's optimum (1e-7) with fewer
rows, its duals price eps like the full LP, and small cells are reported, not dropped silently."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairopt.constraints import intersectional_parity, solve_lazy, solve_parity
from fairopt.errors import DataValidationError, InfeasibleError, ParameterError
from fairopt.modeling import Program


def market(n=4000, seed=0, shift=0.15):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"race": rng.integers(0, 4, n), "sex": rng.integers(0, 2, n), "age": rng.integers(0, 5, n)})
    profit = rng.normal(0, 1, n) + shift * (df["race"] == 0) - shift * (df["age"] == 4)
    cost = rng.uniform(0.5, 2.0, n)
    return df, profit.to_numpy(), cost


def program(profit, cost):
    prog = Program("sel")
    prog.add_variables("x", shape=profit.size, lb=0, ub=1)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=0.3 * cost.sum())
    prog.set_objective(linear={"x": profit}, sense="maximize")
    return prog


@pytest.mark.parametrize("eps", [0.02, 0.08])
def test_row_generation_equals_full(eps):
    df, profit, cost = market()
    block = intersectional_parity(df, eps=eps, min_size=10)
    assert len(block.groups) == 40
    full = program(profit, cost)
    block.add_to(full, "x")
    ref = full.solve("highs")
    lazy = solve_lazy(program(profit, cost), "x", block)
    assert lazy.objective == pytest.approx(ref.objective, abs=1e-7 * max(1.0, abs(ref.objective)))
    assert lazy.rows_generated < block.m and lazy.rounds >= 2
    assert block.violation(lazy.primal["x"], lazy.primal[block.aux_name]) <= 1e-8
    # duals of generated rows (zeros elsewhere) price eps as finite differences do
    h = 1e-4
    obj = {}
    for d in (-h, h):
        b = intersectional_parity(df, eps=eps + d, min_size=10)
        p = program(profit, cost)
        b.add_to(p, "x")
        obj[d] = p.solve("highs").objective
    price = lazy.price_of_fairness(block, "x").parameters["eps"]
    # the optimum is concave piecewise linear in eps: the price lies between the one-sided slopes
    left, right = (ref.objective - obj[-h]) / h, (obj[h] - ref.objective) / h
    assert right - 1e-6 <= price <= left + 1e-6
    assert price > 0


def test_small_cells_reported_and_validation():
    df, profit, cost = market(600, seed=1)
    with pytest.warns(UserWarning, match="not constrained"):
        block = intersectional_parity(df, eps=0.05, min_size=20)
    assert len(block.excluded) > 0 and (block.excluded["size"] < 20).all()
    assert len(block.groups) + len(block.excluded) == df.drop_duplicates().shape[0]
    with pytest.raises(DataValidationError, match="min_size"):
        intersectional_parity(df, eps=0.05, min_size=10_000)
    with pytest.raises(ParameterError, match="'eps' parameter of intersectional_parity"):
        intersectional_parity(df, eps=2.0)
    prog = program(profit, cost)
    prog.add_constraints("floor", {"x": np.ones((1, profit.size))}, lb=profit.size * 0.9)
    with pytest.raises(InfeasibleError) as exc:  # budget < 90 % head count, any parity
        solve_lazy(prog, "x", intersectional_parity(df, eps=0.0, min_size=1))
    assert exc.value.constraint == "intersectional_parity" and exc.value.tightest is None
    # a floor per cell that parity cannot meet at eps = 0: the tightest eps is reported, and holds
    df2, profit2, cost2 = market(800, seed=2)
    block = intersectional_parity(df2, eps=0.0)
    # every member of one cell must be selected: the others cannot reach its rate within budget
    first = np.flatnonzero(((df2["race"] == 0) & (df2["sex"] == 0) & (df2["age"] == 0)).to_numpy())
    prog = program(profit2, cost2)
    prog.add_constraints("must", {"x": np.eye(profit2.size)[first]}, lb=1.0)
    with pytest.raises(InfeasibleError) as exc:
        solve_lazy(prog, "x", block)
    tight = exc.value.tightest["eps"]
    assert 0 < tight < 1 and "smallest feasible eps" in str(exc.value)
    prog = program(profit2, cost2)
    prog.add_constraints("must", {"x": np.eye(profit2.size)[first]}, lb=1.0)
    ok = solve_lazy(prog, "x", intersectional_parity(df2, eps=tight + 1e-7))
    assert np.isfinite(ok.objective)
    prog = program(profit2, cost2)
    prog.add_constraints("must", {"x": np.eye(profit2.size)[first]}, lb=1.0)
    with pytest.raises(InfeasibleError):
        solve_lazy(prog, "x", intersectional_parity(df2, eps=tight - 1e-3))


@pytest.mark.parametrize("solver", [None, "ortools:GLOP", "cvxpy:HIGHS"])
def test_row_generation_on_other_back_ends_and_solve_parity(solver):
    """The restricted masters go through the back end's compiled model (rows appended in place
    on HiGHS, a rebuild elsewhere): same optimum as the full block on every back end; and
    solve_parity's two paths agree."""
    df, profit, cost = market(1500, seed=3)
    block = intersectional_parity(df, eps=0.03, min_size=10)
    full = program(profit, cost)
    block.add_to(full, "x")
    ref = full.solve("highs").objective
    lazy = solve_lazy(program(profit, cost), "x", block, solver=solver)
    assert lazy.objective == pytest.approx(ref, abs=1e-7 * max(1.0, abs(ref)))
    assert block.violation(lazy.primal["x"], lazy.primal[block.aux_name]) <= 1e-7
    for method in ("full", "lazy", "auto"):
        got = solve_parity(program(profit, cost), "x", block, method=method, solver=solver)
        assert got.objective == pytest.approx(ref, abs=1e-7 * max(1.0, abs(ref)))
    assert solve_parity(program(profit, cost), "x", block).rows_generated == block.m   # 40 cells: full
