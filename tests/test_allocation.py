"""α-fair objectives: the blocks agree with direct cvxpy formulations (1e-6), the LP forms run on
every LP back end, and the α-fair solutions converge monotonically to max-min as α grows."""
from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo
import pytest

from fairopt.constraints import alpha_fairness
from fairopt.errors import DataValidationError
from fairopt.modeling import Program
from fairopt.modeling.registry import backend_info

#: the tolerances fairopt asks of CLARABEL (its defaults leave group utilities off by ~1e-5)
TIGHT = backend_info("cvxpy").tolerance_options("CLARABEL", "LP")

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
    prob.solve(solver="CLARABEL", **TIGHT)
    return prob.value, Ua.value


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 2.0, 3.0, np.inf])
def test_blocks_agree_with_direct_cvxpy(market, alpha):
    g, u, cost, budget = market
    obj = alpha_fairness(g, u, alpha)
    x = cp.Variable(N)
    objective, cons = obj.to_cvxpy(x)
    prob = cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= budget])
    prob.solve(solver="CLARABEL", **TIGHT)
    ref_val, ref_U = direct(g, u, cost, budget, alpha)
    assert obj.welfare(x.value) == pytest.approx(ref_val, abs=1e-6)
    if alpha > 0:  # strictly concave in U: group utilities are unique
        assert np.abs(obj.group_utilities(x.value).to_numpy() - ref_U).max() < 1e-6


ALPHAS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def kkt_reference(g, u, cost, budget, alpha):
    """The α-fair group utilities from the optimality conditions, without a conic solver: the
    cheapest way to give group ``a`` utility ``U`` is a fractional knapsack (a convex piecewise-
    linear cost ``C_a(U)``), and at the optimum ``w U_a^(-alpha) = lam C_a'(U_a)`` with the budget
    price ``lam`` set by bisection so that the budget is spent (both bisections to 1e-15)."""
    segs = []
    for a in np.unique(g):
        idx = np.flatnonzero(g == a)
        du = u[idx] / idx.size
        slope = cost[idx] / du
        o = np.argsort(slope)
        segs.append((np.cumsum(du[o]), slope[o]))

    def group_U(lam, B, s):
        lo, hi = 0.0, B[-1]
        for _ in range(200):
            U = 0.5 * (lo + hi)
            j = min(np.searchsorted(B, U), len(s) - 1)
            lo, hi = (U, hi) if U ** (-alpha) > lam * s[j] else (lo, U)
        return 0.5 * (lo + hi)

    def spend(lam):
        out = 0.0
        for B, s in segs:
            prev = np.r_[0.0, B[:-1]]
            out += float((np.clip(group_U(lam, B, s) - prev, 0, B - prev) * s).sum())
        return out
    lo, hi = 0.0, 1.0
    while spend(hi) > budget:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spend(mid) > budget else (lo, mid)
    return np.array([group_U(hi, B, s) for B, s in segs])


@pytest.fixture(scope="module")
def max_min_level(market):
    g, u, cost, budget = market
    prog = Program("alloc")
    prog.add_variables("x", shape=N, lb=0, ub=1)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=budget)
    alpha_fairness(g, u, np.inf).add_to(prog, "x")
    return prog.solve("highs").objective


@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])   # ECOS has no power cone
@pytest.mark.parametrize("alpha", ALPHAS)
def test_every_alpha_on_conic_solvers(market, max_min_level, alpha, solver):
    """The block solves at every alpha up to 64 (at 8 and 16 the unscaled welfare failed) and its
    group utilities agree with the optimality-condition reference to 1e-6 relative on CLARABEL
    (SCS, a first-order method declared 1e-4 accurate, to 1e-4), its welfare to 1e-6."""
    g, u, cost, budget = market
    if solver not in cp.installed_solvers():
        pytest.skip(f"{solver} not installed")
    obj = alpha_fairness(g, u, alpha)
    x = cp.Variable(N)
    objective, cons = obj.to_cvxpy(x)
    prob = cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= budget])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver=solver, **({"eps_abs": 1e-9, "eps_rel": 1e-9} if solver == "SCS" else TIGHT))
    # (at alpha = 16 CLARABEL flags its last step "inaccurate"; the numbers below are what counts)
    assert prob.status in ("optimal", "optimal_inaccurate")
    rel = 1e-6 if solver != "SCS" else 1e-4
    Ua = obj.group_utilities(x.value).to_numpy()
    assert (cost @ x.value <= budget * (1 + rel)) and (x.value >= -rel).all() and (x.value <= 1 + rel).all()
    if alpha == 0:   # linear: the utilitarian LP's optimum
        assert obj.welfare(x.value) == pytest.approx(direct(g, u, cost, budget, 0.0)[0], rel=rel)
        return
    ref = kkt_reference(g, u, cost, budget, alpha)
    np.testing.assert_allclose(Ua, ref, rtol=rel)
    welfare_ref = float(np.log(ref).mean() if alpha == 1 else (ref ** (1 - alpha)).mean() / (1 - alpha))
    assert obj.welfare(x.value) / 3 == pytest.approx(welfare_ref, rel=rel)   # weights 1 = 3 x (1/3)
    assert prob.value == pytest.approx(float((ref ** (1 - alpha)).mean() ** (1 / (1 - alpha)) if alpha != 1
                                             else np.exp(np.log(ref).mean())), rel=rel)


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


def test_alpha_fair_converges_monotonically_to_max_min(market, max_min_level):
    """The block itself (no hand-written formulation): the worst group's utility never falls as
    alpha grows and approaches the max-min LP's level."""
    g, u, cost, budget = market
    worst = []
    for alpha in ALPHAS:
        obj = alpha_fairness(g, u, alpha)
        x = cp.Variable(N)
        objective, cons = obj.to_cvxpy(x)
        with warnings.catch_warnings():   # alpha = 16: CLARABEL flags its last step; checked elsewhere
            warnings.simplefilter("ignore", UserWarning)
            cp.Problem(objective, [*cons, x >= 0, x <= 1, cost @ x <= budget]).solve(solver="CLARABEL", **TIGHT)
        worst.append(obj.group_utilities(x.value).min())
    worst = np.array(worst)
    assert (worst <= max_min_level + 1e-7).all()          # max-min is the best worst group
    assert (np.diff(worst) >= -1e-7).all(), worst          # non-decreasing in alpha
    gaps = max_min_level - worst
    assert gaps[-1] < 0.02 * gaps[0]                       # alpha = 64 is close to max-min
    assert gaps[-1] < 0.6 * gaps[ALPHAS.index(32.0)] + 1e-9    # and still closing (about 1/alpha)


def test_validation(market):
    g, u, _, _ = market
    with pytest.raises(DataValidationError, match="alpha"):
        alpha_fairness(g, u, -1)
    with pytest.raises(DataValidationError, match="weights"):
        alpha_fairness(g, u, 1, weights={"a": 0.0})
    with pytest.raises(DataValidationError, match="no utility"):
        alpha_fairness(g, np.where(g == "b", 0.0, u), 1)
