"""Leximin: the sorted utility vector equals an independent lexicographic reference, on LPs (a
sequential max-min with exact saturation checks written here on scipy's linprog, 1e-7) and on
small MIPs (enumeration of every integer plan: exact up to the MIP gap), through Program
(HiGHS, OR-Tools), pyomo and cvxpy."""
from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import linprog

from fairopt.constraints import LeximinResult, solve_leximin
from fairopt.errors import DataValidationError, InfeasibleError
from fairopt.modeling import Program


# ------------------------------------------------------------------ instances and references
def random_lp(seed, n=8, K=5, m=3):
    rng = np.random.default_rng(seed)
    U = rng.uniform(0, 1, (K, n)) * (rng.uniform(size=(K, n)) < 0.6)
    U[np.arange(K), rng.integers(0, n, K)] += 0.5          # every entity can gain something
    A = rng.uniform(0.1, 1, (m, n))
    b = rng.uniform(1, 3, m)
    ub = rng.uniform(0.5, 2, n)
    return U, A, b, ub


def reference_lp(U, A, b, ub, tol=1e-9):
    """Sequential max-min on z = (x, t) with scipy's linprog; an entity is fixed when it cannot
    exceed the level while every other entity keeps its floor."""
    K, n = U.shape
    floors = {}                       # entity -> fixed level
    free = list(range(K))
    last_t = -np.inf

    def rows(free_set, t_lb):
        # -U_i x + t <= 0 (free), -U_e x <= -v_e (fixed), A x <= b, -t <= -t_lb
        G = [np.r_[-U[i], 1.0] for i in free_set] + [np.r_[-U[e], 0.0] for e in floors]
        h = [0.0] * len(free_set) + [-v for v in floors.values()]
        G += [np.r_[a, 0.0] for a in A]
        h += list(b)
        if np.isfinite(t_lb):
            G.append(np.r_[np.zeros(n), -1.0])
            h.append(-t_lb)
        return np.array(G), np.array(h)
    bounds = [(0, u) for u in ub] + [(None, None)]
    while free:
        G, h = rows(free, last_t)
        res = linprog(np.r_[np.zeros(n), -1.0], A_ub=G, b_ub=h, bounds=bounds, method="highs")
        assert res.status == 0
        t = -res.fun
        G, h = rows(free, t - tol)
        sat = []
        for e in free:
            r = linprog(np.r_[-U[e], 0.0], A_ub=G, b_ub=h, bounds=bounds, method="highs")
            if -r.fun <= t + 1e-7:
                sat.append(e)
        assert sat, "an LP round always saturates someone"
        for e in sat:
            floors[e] = t
            free.remove(e)
        last_t = t
    return np.sort(np.array([floors[e] for e in range(K)]))


def random_mip(seed, n=5, K=4, top=3):
    rng = np.random.default_rng(100 + seed)
    U = rng.integers(0, 4, (K, n)).astype(float)
    U[np.arange(K), rng.integers(0, n, K)] += 1
    A = rng.integers(1, 4, (2, n)).astype(float)
    b = rng.integers(4, 9, 2).astype(float)
    return U, A, b, top


def reference_mip(U, A, b, top):
    """Every integer plan x in {0..top}^n with A x <= b; the lexicographically largest sorted
    utility vector."""
    n = U.shape[1]
    pts = np.array(list(itertools.product(range(top + 1), repeat=n)), dtype=float)
    pts = pts[(pts @ A.T <= b + 1e-9).all(axis=1)]
    vecs = np.sort(pts @ U.T, axis=1)
    best = max(map(tuple, vecs))
    return np.array(best)


# ------------------------------------------------------------------ the three model kinds
def as_program(U, A, b, ub, integer=False):
    prog = Program("lex")
    prog.add_variables("x", U.shape[1], lb=0, ub=ub, integer=integer)
    prog.add_constraints("cap", {"x": A}, ub=b)
    prog.set_objective(linear={"x": np.ones(U.shape[1])}, sense="maximize")
    return prog, {f"e{k}": {"x": U[k]} for k in range(U.shape[0])}


def as_pyomo(U, A, b, ub, integer=False):
    m = pyo.ConcreteModel()
    n = U.shape[1]
    ubv = np.broadcast_to(ub, n)
    m.x = pyo.Var(range(n), bounds=lambda m, i: (0, float(ubv[i])), domain=pyo.Integers if integer else pyo.Reals)
    m.cap = pyo.Constraint(range(A.shape[0]), rule=lambda m, r: sum(A[r, j] * m.x[j] for j in range(n)) <= b[r])
    m.obj = pyo.Objective(expr=sum(m.x[j] for j in range(n)), sense=pyo.maximize)
    return m, {f"e{k}": sum(float(U[k, j]) * m.x[j] for j in range(n)) for k in range(U.shape[0])}


def as_cvxpy(U, A, b, ub, integer=False):
    x = cp.Variable(U.shape[1], integer=integer)
    prob = cp.Problem(cp.Maximize(cp.sum(x)), [x >= 0, x <= ub, A @ x <= b])
    return prob, {f"e{k}": U[k] @ x for k in range(U.shape[0])}


LP_CASES = [(as_program, "highs"), (as_program, "ortools"), (as_program, "ortools:GLOP"),
            (as_pyomo, None), (as_pyomo, "appsi_highs"), (as_cvxpy, "HIGHS"), (as_cvxpy, "GLOP"),
            (as_cvxpy, None)]   # cvxpy's default LP solver is interior point (CLARABEL)
MIP_CASES = [(as_program, "highs"), (as_program, "ortools"), (as_pyomo, None), (as_cvxpy, None)]


@pytest.mark.parametrize(("build", "solver"), LP_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.filterwarnings("ignore:.*inaccurate:UserWarning")
def test_lp_equals_reference(build, solver, seed):
    U, A, b, ub = random_lp(seed)
    ref = reference_lp(U, A, b, ub)
    model, utils = build(U, A, b, ub)
    res = solve_leximin(model, utils, solver=solver)
    assert isinstance(res, LeximinResult) and res.method == "saturation"
    np.testing.assert_allclose(res.levels, ref, atol=1e-7, rtol=1e-7)
    # prices: nonnegative multipliers summing to 1 in each round
    assert res.prices is not None and min(res.prices.values()) >= -1e-9
    for r in set(res.saturated_in.values()):
        tot = sum(res.prices[e] for e, rr in res.saturated_in.items() if rr == r)
        assert tot == pytest.approx(1.0, abs=1e-6)


def test_lp_thirty_entities():
    U, A, b, ub = random_lp(7, n=40, K=30, m=6)
    ref = reference_lp(U, A, b, ub)
    prog, utils = as_program(U, A, b, ub)
    res = solve_leximin(prog, utils)
    np.testing.assert_allclose(res.levels, ref, atol=1e-7, rtol=1e-7)
    # the plan is feasible and realises the values
    x = res.primal["x"]
    assert (A @ x <= b + 1e-7).all() and (x >= -1e-9).all() and (x <= ub + 1e-9).all()
    np.testing.assert_allclose(np.sort(U @ x), res.levels, atol=1e-7)


@pytest.mark.parametrize(("build", "solver"), MIP_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("seed", range(4))
def test_mip_equals_enumeration(build, solver, seed):
    U, A, b, top = random_mip(seed)
    ref = reference_mip(U, A, b, top)
    model, utils = build(U, A, b, float(top), integer=True)
    res = solve_leximin(model, utils, solver=solver)
    assert res.method == "ordered_outcomes" and res.prices is None
    np.testing.assert_allclose(res.levels, ref, atol=1e-6)


def swap_mip():
    """Two plans swap who gets the low level: no single entity is saturated at level 1."""
    prog = Program("swap")
    prog.add_variables("y", 1, lb=0, ub=1, integer=True)
    prog.add_variables("c", 1, lb=1, ub=1)
    return prog, {"a": {"c": [1.0], "y": [1.0]}, "b": {"c": [2.0], "y": [-1.0]}}


def test_mip_without_single_saturation():
    prog, utils = swap_mip()
    res = solve_leximin(prog, utils)
    np.testing.assert_allclose(res.levels, [1.0, 2.0], atol=1e-9)
    with pytest.raises(DataValidationError, match="not exact on a MIP"):
        solve_leximin(prog, utils, method="saturation")


def test_group_spec_and_model_left_intact():
    U, A, b, ub = random_lp(2, n=6)
    g = np.array(["p", "q", "p", "r", "q", "r"])
    w = np.arange(1.0, 7.0)
    Ug = np.vstack([np.where(g == a, w, 0.0) for a in ["p", "q", "r"]])
    ref = reference_lp(Ug, A, b, ub)
    for build, spec in ((as_program, "x"), (as_pyomo, None), (as_cvxpy, None)):
        model, _ = build(U, A, b, ub)
        var = "x" if spec else (model.x if build is as_pyomo else model.variables()[0])
        res = solve_leximin(model, (var, g, w))
        np.testing.assert_allclose(res.levels, ref, atol=1e-7)
        assert set(res.values) == {"p", "q", "r"}
        if build is as_pyomo:   # the temporary block is gone, the user's objective active again
            assert model.component("leximin_") is None and model.obj.active
            assert model.component("dual") is None


def test_bad_input():
    U, A, b, ub = random_lp(0)
    prog, utils = as_program(U, A, b, ub)
    with pytest.raises(DataValidationError, match="unknown variable"):
        solve_leximin(prog, {"a": {"z": [1.0]}})
    with pytest.raises(DataValidationError, match="Program, a pyomo model or a cvxpy"):
        solve_leximin(object(), utils)
    with pytest.raises(DataValidationError, match="tol"):
        solve_leximin(prog, utils, tol=0.5)
    prog.add_constraints("impossible", {"x": np.ones((1, U.shape[1]))}, lb=1e6)
    with pytest.raises(InfeasibleError):
        solve_leximin(prog, utils)


def test_workload_card_plans_small():
    """The workload runner on a small instance: every task covered, capacities kept; the leximin
    plan's largest team utilisation is the smallest any plan reaches (max-min on minus the load),
    and no larger than the cheapest plan's."""
    from fairopt.runs.workload import Data, Parameters, _workload, solve_plan
    w = _workload(Data(n_workers=20, n_tasks=150, n_skills=3, n_teams=3, random_state=1))
    team = w.workers["team"].to_numpy()
    cap = w.workers["capacity"].to_numpy(float)
    peaks = {}
    for plan in ("utilitarian", "leximin", "minmax"):
        y, _sol = solve_plan(w, Parameters(plan=plan, over="team"), None)
        assert np.allclose(w.cover_matrix @ y, w.types["count"]) and (w.hours_matrix @ y <= cap + 1e-6).all()
        assert np.allclose(y, np.round(y), atol=1e-6)
        hours = w.hours_matrix @ y
        peaks[plan] = (np.bincount(team, weights=hours) / np.bincount(team, weights=cap)).max()
    assert peaks["leximin"] <= peaks["utilitarian"] + 1e-9
    assert peaks["leximin"] == pytest.approx(peaks["minmax"], abs=1e-4)
