"""Scale invariance: every public estimator and constraint block gives the same answer (up to the
scale) when its relevance / utility / cost vectors, sample weights or features are multiplied by
10^-9 ... 10^9. Small synthetic data keep the file fast. (alpha_fairness is tested elsewhere.)"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairopt.constraints import (
    doubly_stochastic,
    equal_opportunity,
    equalized_odds,
    exposure_block,
    group_cost_bounds,
    group_cost_parity,
    intersectional_parity,
    position_weights,
    representation_bounds,
    selection_rate_parity,
)
from fairopt.modeling import Program
from fairopt.ranking import fair_ranking

SCALES = [1e-9, 1e-3, 1.0, 1e3, 1e9]
rng = np.random.default_rng(7)
N = 40
GROUPS = rng.choice(["a", "b", "c"], N)
SCORES = rng.random(N)
Y = (rng.random(N) < 0.3 + 0.4 * SCORES).astype(int)
W = rng.uniform(0.5, 2.0, N)


# ---------------------------------------------------------------------------- ranking
@pytest.mark.parametrize("criterion", ["parity", "merit", "impact"])
@pytest.mark.parametrize("method", ["colgen", "lp"])
def test_fair_ranking_is_invariant_to_the_relevance_scale(criterion, method):
    u = rng.random(8) + 0.05
    g = np.array(["a", "b"] * 4)
    base = fair_ranking(u, g, 0.02, criterion=criterion, method=method)
    for s in SCALES:
        eps = 0.02 / s if criterion == "merit" else 0.02   # merit compares exposure per unit of relevance
        res = fair_ranking(u * s, g, eps, criterion=criterion, method=method)
        assert res.utility / s == pytest.approx(base.utility, rel=1e-7)
        assert res.utility_unfair / s == pytest.approx(base.utility_unfair, rel=1e-9)
        np.testing.assert_allclose(res.item_exposure, base.item_exposure, atol=1e-7)
        unit = 1.0 / s if criterion == "merit" else 1.0
        assert res.disparity <= eps + 1e-7 * unit
        price = res.price_of_fairness / (s / unit)
        assert price == pytest.approx(base.price_of_fairness, rel=1e-5, abs=1e-7)


def test_fair_ranking_infeasibility_and_tightest_eps_scale():
    # two very relevant items against 28 weak ones: exposure per merit cannot be equal
    u = np.r_[1.0, 0.9, np.linspace(0.02, 0.08, 28)]
    g = np.array(["top"] * 2 + ["rest"] * 28)
    from fairopt.errors import InfeasibleError
    tight = []
    for s in SCALES:
        with pytest.raises(InfeasibleError) as err:
            fair_ranking(u * s, g, 0.0, criterion="merit")
        tight.append(err.value.tightest["eps"] * s)     # exposure per merit scales as 1 / s
    np.testing.assert_allclose(tight, tight[2], rtol=1e-6)
    for s in SCALES:      # feasible just above the reported tightest eps, infeasible below it
        fair_ranking(u * s, g, tight[2] * (1 + 1e-6) / s, criterion="merit")
        with pytest.raises(InfeasibleError):
            fair_ranking(u * s, g, tight[2] * (1 - 1e-3) / s, criterion="merit")


def test_exposure_block_in_a_users_program_is_invariant():
    u = rng.random(6) + 0.1
    g = np.array(["a", "b", "a", "b", "b", "a"])
    v = position_weights(6)

    def solve(s, criterion):
        eps = 0.05 / s if criterion == "merit" else 0.05
        prog = Program("rank")
        prog.add_variables("P", shape=(6, 6), lb=0, ub=1)
        doubly_stochastic(6).add_to(prog, "P")
        blk = exposure_block(g, eps, criterion=criterion, relevance=u * s)
        blk.add_to(prog, "P")
        prog.set_objective(linear={"P": np.outer(u, v).ravel()}, sense="maximize")
        sol = prog.solve()
        P = sol.primal["P"]
        assert blk.violation(P, sol.primal[blk.aux_name]) <= 1e-7
        unit = 1.0 / s if criterion == "merit" else 1.0   # eps (merit) scales as 1 / s, d U / d eps as s
        return sol.objective, P.reshape(6, 6) @ v, blk.price_of_fairness(sol).parameters["eps"] * unit

    for criterion in ("parity", "merit", "impact"):
        obj0, e0, p0 = solve(1.0, criterion)
        for s in SCALES:
            obj, e, p = solve(s, criterion)
            assert obj == pytest.approx(obj0, rel=1e-7), (criterion, s)
            np.testing.assert_allclose(e, e0, atol=1e-6)
            assert p == pytest.approx(p0, rel=1e-6, abs=1e-7), (criterion, s)


# ---------------------------------------------------------------------------- selection blocks
def _select(blocks, score, k=12):
    prog = Program("select")
    prog.add_variables("x", shape=N, lb=0, ub=1)
    prog.add_constraints("size", {"x": np.ones((1, N))}, ub=k)
    for b in blocks:
        b.add_to(prog, "x")
    prog.set_objective(linear={"x": score}, sense="maximize")
    sol = prog.solve()
    return sol.objective, sol.primal["x"], sol


BLOCKS = {
    # name: (builder of the blocks at scale s, does the objective scale with s?)
    "selection_rate_parity[weights]": lambda s: [selection_rate_parity(GROUPS, eps=0.05, weights=W * s)],
    "selection_rate_parity[ratio]": lambda s: [selection_rate_parity(GROUPS, ratio=0.8, weights=W * s)],
    "equal_opportunity": lambda s: [equal_opportunity(GROUPS, Y, eps=0.05)],
    "equalized_odds": lambda s: [equalized_odds(GROUPS, Y, eps=0.1)],
    "representation_bounds": lambda s: [representation_bounds(GROUPS, lower=0.2)],
    "group_cost_bounds[sum]": lambda s: [group_cost_bounds(GROUPS, W * s, upper=3.0 * s)],
    "group_cost_bounds[mean]": lambda s: [group_cost_bounds(GROUPS, W * s, lower=0.1 * s, normalize="mean")],
    "group_cost_parity": lambda s: [group_cost_parity(GROUPS, W * s, eps=0.2 * s)],
    "intersectional_parity": lambda s: [intersectional_parity(
        pd.DataFrame({"g": GROUPS, "h": np.where(Y == 1, "p", "q")}), eps=0.1, weights=W * s)],
}


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_selection_blocks_are_invariant(name):
    blk0 = BLOCKS[name](1.0)[0]
    obj0, _, sol0 = _select([blk0], SCORES)
    price0 = blk0.price_of_fairness(sol0, var="x").parameters
    for s in SCALES:
        blk = BLOCKS[name](s)[0]
        obj, _, sol = _select([blk], SCORES)
        assert obj == pytest.approx(obj0, rel=1e-7, abs=1e-9), s
        assert blk.violation(sol.primal["x"], sol.primal.get(blk.aux_name)) <= 1e-7
        # prices in the caller's units: d obj / d theta scales as 1 / (the scale of theta)
        unit = s if ("cost" in name) else 1.0
        for key, value in blk.price_of_fairness(sol, var="x").parameters.items():
            assert value * unit == pytest.approx(price0[key], rel=1e-6, abs=1e-7), (key, s)


def test_a_users_objective_scaled_by_1e_minus_9_keeps_its_optimum():
    obj0, _, _ = _select([representation_bounds(GROUPS, lower=0.2)], SCORES)
    for s in SCALES:    # Program.solve rescales an objective far from unit magnitude by a power of two
        obj, x, sol = _select([representation_bounds(GROUPS, lower=0.2)], SCORES * s)
        assert obj / s == pytest.approx(obj0, rel=1e-7), s
        assert x @ SCORES == pytest.approx(obj0, rel=1e-7), s
        assert sol.dual["size"][0] / s == pytest.approx(_select([representation_bounds(GROUPS, lower=0.2)],
                                                                SCORES)[2].dual["size"][0], rel=1e-6), s


def test_a_quadratic_objective_scaled_keeps_its_minimiser_and_prices():
    target = np.linspace(0.0, 1.0, 6)

    def solve(s):
        prog = Program("proj")
        prog.add_variables("x", shape=6, lb=0, ub=1)
        prog.add_constraints("mass", {"x": np.ones((1, 6))}, ub=2.0)
        prog.set_objective(linear={"x": -s * target}, quadratic={("x", "x"): s * np.eye(6)},
                           constant=0.5 * s * target @ target)
        sol = prog.solve()
        return sol.objective, sol.primal["x"], sol.dual["mass"][0]

    obj0, x0, y0 = solve(1.0)
    for s in SCALES:
        obj, x, y = solve(s)
        np.testing.assert_allclose(x, x0, atol=1e-6, err_msg=str(s))
        assert obj / s == pytest.approx(obj0, rel=1e-5), s
        assert y / s == pytest.approx(y0, rel=1e-5), s
