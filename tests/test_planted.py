"""Every exact back end against programs whose truth is known by construction.

Instances come from :mod:`fairopt.modeling.planted` (planted KKT pairs, Farkas certificates and
recession rays; see its docstring). ``benchmarks/solver_status.py`` runs 1,000 per back end; here 25
seeded ones per back end keep the suite short. Hypothesis drives the second half: random feasible LPs and
convex QPs, objective and feasibility to 1e-7, duals equal to finite differences of the optimum.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairopt.modeling import Status, installed_specs
from fairopt.modeling.planted import check, planted_optimal, random_instance
from fairopt.modeling.registry import exact_specs

SPECS = exact_specs("LP") + [s for s in exact_specs("QP") if s not in exact_specs("LP")]

#: dual agreement with the planted multipliers (relative to max(1, max |y*|)), per back end, as
#: stated in docs/modeling.md and measured by benchmarks/solver_status.py
DUAL_TOL = {"cvxpy:CLARABEL": 5e-2, "cvxpy:HIGHS": 5e-3, "highs:highs": 2e-4, "pyomo:highs": 2e-4,
            "osqp:osqp": 2e-5, "ortools:PDLP": 5e-6}
DEFAULT_DUAL_TOL = 1e-6


@pytest.mark.parametrize("spec", SPECS)
def test_planted_statuses_optima_and_duals(spec):
    qp = spec in installed_specs("QP")
    n_checked = 0
    for seed in range(1000, 1025):
        inst = random_instance(seed, quadratic=None if qp else False)
        res = check(inst, spec)
        if res is None:
            continue
        n_checked += 1
        where = f"seed {seed} ({inst.kind}) on {spec}"
        assert not res.status.startswith("raw:"), where + ": " + res.status
        assert res.status_ok, f"{where}: read {res.status}, truth {res.truth.value}"
        if res.truth is Status.OPTIMAL:
            assert res.objective_error <= 1e-6, where
            assert res.violation <= 1e-6, where
            if res.dual_error is not None:
                assert res.dual_error <= DUAL_TOL.get(spec, DEFAULT_DUAL_TOL), where
    assert n_checked >= 20


def test_generator_covers_every_kind():
    kinds = {random_instance(s).kind for s in range(300)}
    for k in ("optimal LP minimize", "optimal LP maximize", "optimal QP minimize",
              "optimal QP-singular-free maximize", "infeasible LP minimize", "infeasible QP maximize",
              "unbounded LP maximize", "unbounded QP minimize"):
        assert k in kinds


# ---------------------------------------------------------------- hypothesis: finite differences
FD_SPECS = [s for s in ("highs:highs", "osqp:osqp", "scipy:highs", "cvxpy:CLARABEL", "pyomo:highs")
            if s in SPECS]


def _fd_dual(prog, spec, block, row, side, h):
    """Central difference of the optimum in the active bound of one row."""
    con = prog.constraints[block]
    values = []
    for step in (h, -h):
        lo, hi = con.lb.copy(), con.ub.copy()
        if side in ("lb", "eq"):
            lo[row] += step
        if side in ("ub", "eq"):
            hi[row] += step
        comp = prog.compile(spec)
        comp.set_constraint_bounds(block, lb=lo, ub=hi)
        values.append(comp.solve(require_optimal=True).objective)
    return (values[0] - values[1]) / (2 * h)


@settings(max_examples=16, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), quadratic=st.booleans(),
       sense=st.sampled_from(["minimize", "maximize"]), spec=st.sampled_from(FD_SPECS))
def test_random_feasible_programs_match_truth_and_finite_differences(seed, quadratic, sense, spec):
    rng = np.random.default_rng(seed)
    # strictly complementary (no zero multiplier on an active side): the optimum is then
    # differentiable in every active bound
    inst = planted_optimal(rng, quadratic, sense, degenerate=0.0)
    if quadratic and spec not in installed_specs("QP"):
        return
    sol = inst.program.solve(spec, require_optimal=True)
    canon = inst.program.canonical()
    x = np.concatenate([sol.primal[v].ravel() for v in canon.var_slices])
    from fairopt.modeling.certify import max_violation
    assert max_violation(canon, x) <= 1e-7
    assert abs(sol.objective - inst.objective) <= 1e-7 * max(1.0, abs(inst.objective))
    if not inst.duals_unique:
        return
    # rows with a clearly nonzero multiplier: the optimum is differentiable in their bound
    for block, y in inst.duals.items():
        con = inst.program.constraints[block]
        for r in np.flatnonzero(np.abs(y) > 1e-3 * max(1.0, np.abs(y).max()))[:2]:
            side = "eq" if con.lb[r] == con.ub[r] else ("lb" if (y[r] > 0) == (sense == "minimize") else "ub")
            b = con.lb[r] if side != "ub" else con.ub[r]
            h = 1e-6 * (1.0 + abs(b))
            fd = _fd_dual(inst.program, spec, block, r, side, h)
            tol = 1e-4 * max(1.0, abs(y[r]))
            assert abs(sol.dual[block][r] - fd) <= tol + DUAL_TOL.get(spec, 0) * max(1.0, np.abs(y).max())
            assert abs(fd - y[r]) <= tol


def test_solver_status_benchmark_smoke(tmp_path):
    import json

    from conftest import load_benchmark
    bench = load_benchmark("solver_status")
    out = tmp_path / "solver_status.json"
    assert bench.main(["--n", "6", "--specs", "highs:highs,scipy:highs", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["totals"] == {"instances": 12, "wrong_status": 0, "wrong_optimum": 0, "raw_exceptions": 0}
    assert set(data["backends"]["highs:highs"]["by_truth"]) <= {"optimal", "infeasible", "unbounded"}
