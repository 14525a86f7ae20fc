"""Balance blocks: each measure's optimum (as an objective and as a constraint) equals a direct
formulation written here on scipy's linprog to 1e-7, on every exact LP back end of a Program and
through pyomo and cvxpy; the Gini rows (pairwise and sorting-network forms) equal the pairwise
definition on integer instances small enough to enumerate."""
from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import linprog

from fairopt.constraints import balance, measure_value
from fairopt.constraints.balance_forms import sorting_network
from fairopt.errors import DataValidationError
from fairopt.modeling import Program
from fairopt.modeling.registry import exact_specs

MEASURES = ["minmax", "range", "mad", "gini"]


def instance(seed, n=10, K=6):
    rng = np.random.default_rng(seed)
    U = rng.uniform(0.2, 1, (K, n)) * (rng.uniform(size=(K, n)) < 0.5)
    U[np.arange(K), np.arange(K) % n] += 0.5
    ub = rng.uniform(0.5, 2, n)
    c = rng.uniform(0, 1, n)
    T = 0.5 * (U @ ub).sum() / 2
    return U, ub, c, T


def direct(U, ub, c, T, measure, bound=None):
    """min measure(Ux) (bound None) or max c'x s.t. measure(Ux) <= bound, over x in [0, ub] with
    total load sum(Ux) = T, written as one linprog on z = (x, aux)."""
    K, n = U.shape
    if measure == "minmax":
        na = 1
        G = [np.r_[U[k], -1.0] for k in range(K)]
        val = np.r_[np.zeros(n), 1.0]
    elif measure == "range":
        na = 2   # hi, lo
        G = [np.r_[U[k], -1.0, 0.0] for k in range(K)] + [np.r_[-U[k], 0.0, 1.0] for k in range(K)]
        val = np.r_[np.zeros(n), 1.0, -1.0]
    elif measure == "mad":
        na = K
        dev = U - U.mean(axis=0)
        G = [np.r_[dev[k], -np.eye(K)[k]] for k in range(K)] + [np.r_[-dev[k], -np.eye(K)[k]] for k in range(K)]
        val = np.r_[np.zeros(n), np.full(K, 1.0 / K)]
    else:
        pairs = list(itertools.combinations(range(K), 2))
        na = len(pairs)
        G = []
        for p, (k, j) in enumerate(pairs):
            G.append(np.r_[U[k] - U[j], -np.eye(na)[p]])
            G.append(np.r_[U[j] - U[k], -np.eye(na)[p]])
        val = np.r_[np.zeros(n), np.full(na, 2.0 / (2 * K * T))]   # Gini with the total fixed at T
    G, h = np.array(G), np.zeros(len(G))
    Aeq, beq = np.r_[U.sum(axis=0), np.zeros(na)][None, :], [T]
    bounds = [(0, u) for u in ub] + [(0 if measure in ("mad", "gini") else None, None)] * na
    if bound is None:
        res = linprog(val, A_ub=G, b_ub=h, A_eq=Aeq, b_eq=beq, bounds=bounds, method="highs")
        return res.fun
    res = linprog(-np.r_[c, np.zeros(na)], A_ub=np.vstack([G, val]), b_ub=np.r_[h, bound], A_eq=Aeq, b_eq=beq,
                  bounds=bounds, method="highs")
    return -res.fun


def program(U, ub, c, T):
    prog = Program("bal")
    prog.add_variables("x", U.shape[1], lb=0, ub=ub)
    prog.add_constraints("total", {"x": U.sum(axis=0)[None, :]}, lb=T, ub=T)
    return prog, {f"w{k}": {"x": U[k]} for k in range(U.shape[0])}


@pytest.mark.parametrize("solver", exact_specs("LP"))
@pytest.mark.parametrize("measure", MEASURES)
def test_program_objective_and_constraint(measure, solver):
    U, ub, c, T = instance(1)
    best = direct(U, ub, c, T, measure)
    prog, loads = program(U, ub, c, T)
    balance(loads, measure).as_objective(total=T).add_to(prog)
    sol = prog.solve(solver)
    assert sol.objective == pytest.approx(best, rel=1e-7, abs=1e-7)
    assert measure_value(U @ sol.primal["x"], measure) == pytest.approx(best, rel=1e-6, abs=1e-7)
    # constraint: a bound between the fairest value and the utilitarian plan's
    free = -linprog(-c, A_eq=U.sum(axis=0)[None, :], b_eq=[T], bounds=[(0, u) for u in ub], method="highs").fun
    bound = best + 0.3 * (measure_value(U @ _argmax(U, ub, c, T), measure) - best)
    ref = direct(U, ub, c, T, measure, bound)
    assert ref < free - 1e-6                 # the bound binds
    prog, loads = program(U, ub, c, T)
    prog.set_objective(linear={"x": c}, sense="maximize")
    balance(loads, measure, max_value=bound).add_to(prog)
    sol = prog.solve(solver)
    assert sol.objective == pytest.approx(ref, rel=1e-7, abs=1e-7)
    assert measure_value(U @ sol.primal["x"], measure) <= bound + 1e-6


def _argmax(U, ub, c, T):
    return linprog(-c, A_eq=U.sum(axis=0)[None, :], b_eq=[T], bounds=[(0, u) for u in ub], method="highs").x


@pytest.mark.parametrize("measure", MEASURES)
def test_cvxpy_and_pyomo_targets(measure):
    U, ub, c, T = instance(2)
    best = direct(U, ub, c, T, measure)
    x = cp.Variable(U.shape[1])
    obj, cons = balance({k: U[k] @ x for k in range(U.shape[0])}, measure).as_objective(total=T).to_cvxpy()
    for solver in ("HIGHS", "CLARABEL"):
        prob = cp.Problem(obj, [*cons, x >= 0, x <= ub, cp.sum(U @ x) == T])
        prob.solve(solver=solver)
        assert prob.value == pytest.approx(best, rel=1e-7, abs=1e-7)
    m = pyo.ConcreteModel()
    n = U.shape[1]
    m.x = pyo.Var(range(n), bounds=lambda m, i: (0, float(ub[i])))
    m.total = pyo.Constraint(expr=sum(float(U[:, j].sum()) * m.x[j] for j in range(n)) == T)
    loads = [sum(float(U[k, j]) * m.x[j] for j in range(n)) for k in range(U.shape[0])]
    blk = balance(loads, measure).as_objective(total=T).to_pyomo(m)
    pyo.SolverFactory("appsi_highs").solve(m)
    assert pyo.value(blk.objective) == pytest.approx(best, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("K", [3, 5, 8, 13, 20])
def test_gini_forms_agree(K):
    U, ub, c, T = instance(K, n=K + 4, K=K)
    best = direct(U, ub, c, T, "gini")
    for form in ("pairwise", "sorted"):
        prog, loads = program(U, ub, c, T)
        blk = balance(loads, "gini", form=form).as_objective(total=T)
        blk.add_to(prog)
        sol = prog.solve()
        assert sol.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
        assert measure_value(U @ sol.primal["x"], "gini") == pytest.approx(best, rel=1e-6, abs=1e-9)


def test_gini_on_enumerable_mip():
    """max c'x over integer x in {0..3}^5, sum x = 7, Gini(x) <= g: every plan enumerated."""
    rng = np.random.default_rng(5)
    c = rng.uniform(0, 1, 5)
    pts = np.array([p for p in itertools.product(range(4), repeat=5) if sum(p) == 7], dtype=float)
    gini = np.array([np.abs(p[:, None] - p[None, :]).sum() / (2 * 5 * p.sum()) for p in pts])
    for g in (0.18, 0.25, 0.3, 0.42):
        ok = gini <= g + 1e-12
        ref = (pts[ok] @ c).max()
        for form in ("pairwise", "sorted"):
            prog = Program("mip")
            prog.add_variables("x", 5, lb=0, ub=3, integer=True)
            prog.add_constraints("total", {"x": np.ones((1, 5))}, lb=7, ub=7)
            prog.set_objective(linear={"x": c}, sense="maximize")
            balance(("x", list("abcde")), "gini", max_value=g, form=form).add_to(prog)
            sol = prog.solve(options={"mip_rel_gap": 0.0})
            assert sol.objective == pytest.approx(ref, abs=1e-7)
            assert measure_value(sol.primal["x"], "gini") <= g + 1e-7
        # the minimum Gini over the plans, as an objective
    prog = Program("mip")
    prog.add_variables("x", 5, lb=0, ub=3, integer=True)
    prog.add_constraints("total", {"x": np.ones((1, 5))}, lb=7, ub=7)
    balance(("x", list("abcde")), "gini", form="sorted").as_objective(total=7).add_to(prog)
    assert prog.solve(options={"mip_rel_gap": 0.0}).objective == pytest.approx(gini.min(), abs=1e-9)


def test_measure_definitions():
    u = np.array([1.0, 4.0, 2.0, 2.0])
    assert measure_value(u, "gini") == pytest.approx(np.abs(u[:, None] - u[None, :]).sum() / (2 * 4 * u.sum()))
    assert measure_value(u, "mad") == pytest.approx(np.mean(np.abs(u - 2.25)))
    assert measure_value(u, "range") == 3.0 and measure_value(u, "minmax") == 4.0


@pytest.mark.parametrize("K", range(1, 40))
def test_sorting_network_sorts(K):
    """0-1 principle: a comparator network sorts every input iff it sorts every 0/1 input."""
    net = sorting_network(K)
    bits = np.array(list(itertools.product([0, 1], repeat=K))) if K <= 12 else \
        (np.random.default_rng(K).uniform(size=(4000, K)) < 0.5).astype(int)
    v = bits.copy()
    for i, j in net:
        lo, hi = np.minimum(v[:, i], v[:, j]), np.maximum(v[:, i], v[:, j])
        v[:, i], v[:, j] = lo, hi
    assert (np.diff(v, axis=1) >= 0).all()


def test_validation():
    with pytest.raises(DataValidationError, match="measure"):
        balance({"a": {"x": [1.0]}, "b": {"x": [1.0]}}, "variance")
    with pytest.raises(DataValidationError, match=r"\[0, 1\)"):
        balance({"a": {"x": [1.0]}, "b": {"x": [1.0]}}, "gini", max_value=1.5)
    with pytest.raises(DataValidationError, match="two loads"):
        balance({"a": {"x": [1.0]}}, "range")
    with pytest.raises(DataValidationError, match="positive total"):
        measure_value([0.0, 0.0], "gini")
