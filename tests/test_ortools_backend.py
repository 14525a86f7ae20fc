"""The OR-Tools back end (GLOP, PDLP, SCIP through MathOpt): one module, nothing else changed.

Agreement with HiGHS on planted programs (objective, primal point, duals and reduced costs in
fairopt's convention, both senses), typed errors for certified infeasible/unbounded programs,
limits, options, the declared PDLP tolerance and the problem classes it refuses.
"""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.errors import ConfigError, InfeasibleError, UnboundedError, WrongProblemClassError
from fairopt.modeling import Program, Status, installed_specs
from fairopt.modeling.planted import planted_optimal, random_instance
from fairopt.modeling.registry import BACKENDS, exact_specs

pytest.importorskip("ortools")
LP = [s for s in ("ortools:GLOP", "ortools:PDLP") if s in installed_specs("LP")]


def _dual_vector(sol, names):
    return np.concatenate([np.ravel(sol.dual[k]) for k in names])


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("spec", LP)
def test_lp_agrees_with_the_planted_optimum_and_its_multipliers(spec, seed, sense):
    inst = planted_optimal(np.random.default_rng(seed), quadratic=False, sense=sense)
    sol = inst.program.solve(spec)
    assert sol.status is Status.OPTIMAL and sol.backend == "ortools"
    assert sol.objective == pytest.approx(inst.objective, rel=1e-6, abs=1e-7)
    if inst.duals_unique and inst.duals:
        names = list(inst.duals)
        ref = np.concatenate([inst.duals[k] for k in names])
        assert np.abs(_dual_vector(sol, names) - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())


@pytest.mark.parametrize("spec", LP)
def test_duals_and_reduced_costs_match_highs_in_fairopts_sign_convention(spec):
    # x + y >= 1 and x <= 0.8 both press, costs 1 and 2: the optimum moves by the dual
    p = Program("signs")
    p.add_variables("x", 1, lb=0)
    p.add_variables("y", 1, lb=0)
    p.add_constraints("cover", {"x": [[1.0]], "y": [[1.0]]}, lb=1.0)
    p.add_constraints("cap", {"x": [[1.0]]}, ub=0.8)
    p.set_objective(linear={"x": [1.0], "y": [2.0]})
    ref = p.solve("highs")
    sol = p.solve(spec)
    assert sol.objective == pytest.approx(1.2, abs=1e-7)
    for k in ("cover", "cap"):
        np.testing.assert_allclose(sol.dual[k], ref.dual[k], atol=1e-7)
    assert sol.dual["cover"][0] == pytest.approx(2.0, abs=1e-7)         # d f*/d lb >= 0
    assert sol.dual["cap"][0] == pytest.approx(-1.0, abs=1e-7)           # d f*/d ub <= 0
    for k in ("x", "y"):
        np.testing.assert_allclose(sol.reduced_cost[k], ref.reduced_cost[k], atol=1e-7)


@pytest.mark.parametrize("spec", LP)
def test_infeasible_and_unbounded_are_certified_typed_errors(spec):
    kinds = {}
    for seed in range(40):
        inst = random_instance(seed, quadratic=False)
        if inst.status in kinds or inst.status is Status.OPTIMAL:
            continue
        error = InfeasibleError if inst.status is Status.INFEASIBLE else UnboundedError
        with pytest.raises(error):
            inst.program.solve(spec)
        kinds[inst.status] = True
    assert set(kinds) == {Status.INFEASIBLE, Status.UNBOUNDED}


def _knapsack(integer: bool) -> Program:
    rng = np.random.default_rng(3)
    w, v = rng.uniform(1, 5, 12), rng.uniform(1, 9, 12)
    p = Program("knapsack")
    p.add_variables("x", 12, lb=0, ub=1, integer=integer)
    p.add_constraints("weight", {"x": w[None, :]}, ub=0.4 * w.sum())
    p.set_objective(linear={"x": v}, sense="maximize")
    return p


@pytest.mark.skipif("ortools:SCIP" not in installed_specs("MILP"), reason="OR-Tools built without SCIP")
def test_scip_solves_milps_like_highs():
    ref, sol = _knapsack(True).solve("highs"), _knapsack(True).solve("ortools")
    assert sol.solver == "SCIP" and sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(ref.objective, rel=1e-6)
    x = sol.primal["x"]
    assert np.allclose(x, np.round(x)) and sol.mip_gap is not None and sol.mip_gap <= 1e-4
    assert sol.objective <= _knapsack(False).solve("ortools").objective + 1e-9   # relaxation bound


def test_limits_and_options():
    rng = np.random.default_rng(0)
    big = Program("big")
    big.add_variables("x", 60, lb=0, ub=1)
    big.add_constraints("r", {"x": rng.normal(size=(40, 60))}, ub=1.0)
    big.set_objective(linear={"x": rng.normal(size=60)})
    for spec in LP:
        assert big.solve(spec, options={"iteration_limit": 1}).status is Status.ITERATION_LIMIT
        assert big.solve(spec).objective == pytest.approx(big.solve("highs").objective, rel=1e-6)
    p = _knapsack(False)
    with pytest.raises(ConfigError, match="iteration_limit"):   # the valid names are listed
        p.solve("ortools:GLOP", options={"iteration_limt": 1})
    assert p.solve("ortools:GLOP", time_limit=30.0).status is Status.OPTIMAL


def test_pdlp_tolerance_is_declared_and_applied():
    info = BACKENDS["ortools"]
    assert info.solver_accuracy("PDLP") > info.solver_accuracy("GLOP")
    assert "ortools:PDLP" in exact_specs("LP")          # 1e-6: the house's exact bar, no looser
    model = _knapsack(False).compile("ortools:PDLP")
    crit = model._params().pdlp.termination_criteria.simple_optimality_criteria
    assert crit.eps_optimal_relative == crit.eps_optimal_absolute == 1e-8
    opts = {"pdlp": {"termination_criteria": {"simple_optimality_criteria": {"eps_optimal_relative": 1e-6}}}}
    crit = _knapsack(False).compile("ortools:PDLP", options=opts)._params().pdlp.termination_criteria
    assert crit.simple_optimality_criteria.eps_optimal_relative == 1e-6   # the spec's options win


def test_classes_it_does_not_take_are_config_errors_listing_those_that_do():
    q = Program("q")
    q.add_variables("x", 1, lb=-1, ub=1)
    q.set_objective(quadratic={("x", "x"): [[1.0]]})
    with pytest.raises(WrongProblemClassError, match=r"Back ends that take QP problems: .*highs"):
        q.solve("ortools")
    with pytest.raises(ConfigError, match="does not take MILP"):
        _knapsack(True).solve("ortools:GLOP")


@pytest.mark.skipif("ortools:PDLP" not in LP, reason="OR-Tools built without PDLP")
def test_pdlp_at_its_default_iteration_cap_goes_to_the_reference_solver():
    # a 3-variable infeasible LP on which PDLP iterated for ~30 s before proving infeasibility
    inst = random_instance(865, quadratic=False)
    assert inst.status is Status.INFEASIBLE
    with pytest.raises(InfeasibleError) as err:
        inst.program.solve("ortools:PDLP")
    assert "default iteration limit" in err.value.log and "re-solved by highs:highs" in err.value.log
    # a limit the user sets is the user's: no reference solver
    sol = _knapsack(False).solve("ortools:PDLP", options={"iteration_limit": 2})
    assert sol.status is Status.ITERATION_LIMIT and "re-solved" not in sol.log
