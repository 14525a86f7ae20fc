"""Regressions of the solver layer: statuses, malformed input, solver names and options, silence.

Each test reproduces a defect that was seen on some back end (issues 12 and 18) and asserts the
true status, a typed error naming what to fix, or the right number, on every back end that takes
the problem class.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fairopt.errors import (
    ConfigError,
    DataValidationError,
    InfeasibleError,
    SolverLimitError,
    SolverNotAvailableError,
    UnboundedError,
)
from fairopt.modeling import Program, SolverSpec, Status, installed_specs
from fairopt.modeling.registry import exact_specs

#: exact back ends (interior point, simplex, active set, or OSQP polished to 1e-9), as the
#: registry declares them: first-order methods at cvxpy's default tolerances are not
LP_SPECS = exact_specs("LP")
QP_SPECS = exact_specs("QP")
HIGHS_QP = [s for s in ("highs:highs", "cvxpy:HIGHS", "pyomo:highs") if s in QP_SPECS]


def _infeasible_box() -> Program:
    """x1 in [-3, 0], x2 <= 1.5, x1 <= -0.5 and x1 >= 0.5, maximise -x2 (CLARABEL said unbounded)."""
    p = Program("infeasible_box")
    p.add_variables("x1", 1, lb=-3, ub=0)
    p.add_variables("x2", 1, lb=None, ub=1.5)
    p.add_constraints("a", {"x1": [[1.0]]}, ub=-0.5)
    p.add_constraints("b", {"x1": [[1.0]]}, lb=0.5)
    p.set_objective(linear={"x2": [-1.0]}, sense="maximize")
    return p


@pytest.mark.parametrize("spec", LP_SPECS)
def test_infeasible_is_never_read_as_unbounded(spec):
    with pytest.raises(InfeasibleError):
        _infeasible_box().solve(spec)


def _singular_qp(row: bool) -> Program:
    """x free, P = [[1,-1],[-1,1]], c = (1,-1): optimum -0.5 with the row, unbounded without a
    row when c has a component along the null direction (1, 1)."""
    p = Program("singular_qp")
    p.add_variables("x", 2, lb=None)
    if row:
        p.add_constraints("r", {"x": [[1.0, 1.0]]}, lb=-5, ub=5)
        c = [1.0, -1.0]
    else:
        c = [1.0, 0.0]
    p.set_objective(linear={"x": c}, quadratic={("x", "x"): [[1.0, -1.0], [-1.0, 1.0]]})
    return p


@pytest.mark.parametrize("spec", QP_SPECS)
def test_singular_hessian_with_free_variables_bounded(spec):
    # HiGHS's QP solver ran until its time limit here; the limit keeps the old code finite
    sol = _singular_qp(row=True).solve(spec, time_limit=20)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(-0.5, abs=1e-7)
    assert sol.primal["x"][0] - sol.primal["x"][1] == pytest.approx(-1.0, abs=1e-6)


@pytest.mark.parametrize("spec", QP_SPECS)
def test_singular_hessian_with_free_variables_unbounded(spec):
    with pytest.raises(UnboundedError):
        _singular_qp(row=False).solve(spec, time_limit=20)


@pytest.mark.parametrize("spec", HIGHS_QP)
def test_highs_qp_routing_is_logged(spec):
    sol = _singular_qp(row=True).solve(spec, time_limit=20)
    assert "re-solved by" in sol.log and "null space of P" in sol.log


@pytest.mark.parametrize("seed", [60, 102, 129, 177])
def test_highs_qp_answers_are_verified(seed):
    """Planted instances where HiGHS's QP solver said "error" on a bounded QP (60), "optimal" on
    unbounded ones (102, 129) and "optimal" at a point 5e-4 worse than the optimum (177)."""
    from fairopt.modeling.planted import random_instance
    inst = random_instance(seed)
    for spec in HIGHS_QP:
        if inst.status is Status.UNBOUNDED:
            with pytest.raises(UnboundedError):
                inst.program.solve(spec, time_limit=20)
        else:
            sol = inst.program.solve(spec, time_limit=20)
            assert sol.status is Status.OPTIMAL
            assert sol.objective == pytest.approx(inst.objective, rel=1e-7, abs=1e-7)


def _unused_blocks() -> Program:
    p = Program("unused")
    p.add_variables("x", 2, lb=0, ub=1)
    p.add_variables("u", 3, lb=2, ub=4)        # in no row, no cost: 0 is outside its bounds
    p.add_variables("w", 2, lb=None, ub=-1)    # one-sided, 0 outside too
    p.add_variables("f", 2, lb=None)           # free and in nothing: cvxpy left it out entirely
    p.add_constraints("r", {"x": [[1.0, 1.0]], "u": np.zeros((1, 3))}, lb=1)
    p.set_objective(linear={"x": [1.0, 2.0]})
    return p


@pytest.mark.parametrize("spec", LP_SPECS)
def test_unused_blocks_come_back_inside_their_bounds(spec):
    sol = _unused_blocks().solve(spec)
    assert sol.objective == pytest.approx(1.0, abs=1e-7)
    assert np.all((sol.primal["u"] >= 2) & (sol.primal["u"] <= 4))
    assert np.all(sol.primal["w"] <= -1) and np.isfinite(sol.primal["w"]).all()
    assert np.array_equal(sol.primal["f"], np.zeros(2))


@pytest.mark.parametrize("case, truth, specs", [
    ((1573, False, "maximize"), UnboundedError, ["scipy:highs"]),       # linprog said infeasible
    ((647, True, "minimize"), UnboundedError, ["cvxpy:CLARABEL"]),      # Clarabel said optimal
    ((736, True, "minimize"), UnboundedError, ["osqp:osqp"]),           # OSQP said infeasible
])
def test_planted_unbounded_programs_misread_before(case, truth, specs):
    from fairopt.modeling.planted import planted_unbounded
    seed, quadratic, sense = case
    inst = planted_unbounded(np.random.default_rng(seed), quadratic, sense)
    for spec in specs:
        with pytest.raises(truth):
            inst.program.solve(spec)


@pytest.mark.parametrize("spec", LP_SPECS)
def test_free_rows_are_accepted_and_constrain_nothing(spec):
    p = Program("free_rows")
    p.add_variables("x", 2, lb=0, ub=1)
    p.add_constraints("free", {"x": [[1.0, 1.0]]}, lb=None, ub=None)
    p.add_constraints("cap", {"x": [[1.0, 0.0]]}, ub=0.5)
    p.set_objective(linear={"x": [-1.0, -2.0]})
    sol = p.solve(spec)
    assert sol.objective == pytest.approx(-2.5, abs=1e-7)
    assert sol.dual["free"][0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("spec", LP_SPECS)
def test_model_without_rows_and_costs(spec):
    p = Program("empty")
    p.add_variables("x", 2, lb=1, ub=3)
    sol = p.solve(spec)
    assert sol.status is Status.OPTIMAL and sol.objective == 0.0
    assert np.all((sol.primal["x"] >= 1) & (sol.primal["x"] <= 3))


# ------------------------------------------------------------------------ malformed input
def _base() -> Program:
    p = Program("bad")
    p.add_variables("x", 3, lb=0, ub=1)
    return p


@pytest.mark.parametrize("build, match", [
    (lambda p: p.set_objective(linear={"x": [1.0, 1e300, 0.0]}), r"'x'.*index 1"),
    (lambda p: p.add_variables("y", 2, lb=[0.0, np.inf]), r"'y' lb.*\+inf at index 1"),
    (lambda p: p.add_variables("y", 2, ub=[-np.inf, 1.0]), r"'y' ub.*-inf at index 0"),
    (lambda p: p.add_constraints("r", {"x": np.ones((2, 3))}, lb=[0.0, np.inf]),
     r"'r' lb.*\+inf at index 1"),
    (lambda p: p.add_constraints("r", {"x": [[1.0, 1e300, 0.0]]}, ub=1.0), r"'r'.*\(0, 1\)"),
    (lambda p: p.add_constraints("r", {"x": np.ones((1, 3))}, ub=1e25), r"'r' ub.*index 0"),
    (lambda p: p.set_objective(quadratic={("x", "x"): np.diag([1.0, -1.0, 0.0])}),
     r"convex.*'x'\[1\]"),
    (lambda p: p.set_objective(quadratic={("x", "x"): [[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1]]}),
     r"convex.*smallest eigenvalue is -1"),
    (lambda p: p.set_objective(quadratic={("x", "x"): np.eye(3)}, sense="maximize"),
     r"concave"),
])
def test_malformed_input_fails_at_build_time(build, match):
    with pytest.raises(DataValidationError, match=match):
        build(_base())


def test_rejected_objective_leaves_the_program_unchanged():
    p = _base()
    p.set_objective(linear={"x": [1.0, 2.0, 3.0]})
    with pytest.raises(DataValidationError):
        p.set_objective(quadratic={("x", "x"): -np.eye(3)})
    assert p.solve("highs").objective == pytest.approx(0.0)


@pytest.mark.parametrize("spec", QP_SPECS)
def test_concave_maximisation_solves(spec):
    p = Program("concave")
    p.add_variables("x", 2, lb=None)
    p.add_constraints("s", {"x": [[1.0, 1.0]]}, ub=1.0)
    # maximise -(x1^2 + x2^2)/2 + x1 + 2 x2 subject to x1 + x2 <= 1: x = (0, 1), value 1.5
    p.set_objective(linear={"x": [1.0, 2.0]}, quadratic={("x", "x"): -np.eye(2)}, sense="maximize")
    sol = p.solve(spec)
    assert sol.objective == pytest.approx(1.5, abs=1e-6)
    # d(max)/d(ub) = the multiplier of x1 + x2 <= 1: 1 - x1 = 1 (stationarity of x1)
    assert sol.dual["s"][0] == pytest.approx(1.0, abs=1e-5)


# ------------------------------------------------------------------------ names and options
@pytest.mark.parametrize("solver", ["highs:foo", "osqp:foo", "scipy:interior-point-typo",
                                    "cvxpy:NOT_A_SOLVER", "pyomo:no_such_solver"])
def test_unknown_inner_solver_is_a_config_error_listing_valid_names(solver):
    with pytest.raises(ConfigError, match="valid names") as err:
        _unused_blocks().solve(solver)
    assert isinstance(err.value, SolverNotAvailableError) and err.value.available


@pytest.mark.parametrize("spec, options", [
    ("highs", {"no_such_option": 1}), ("highs", {"time_limit": "soon"}),
    ("osqp", {"eps_abss": 1e-6}), ("scipy", {"no_such_option": 1}),
    ("cvxpy:CLARABEL", {"no_such_option": 1}), ("cvxpy:OSQP", {"no_such_option": 1}),
    ("cvxpy:SCS", {"no_such_option": 1}), ("cvxpy:HIGHS", {"no_such_option": 1}),
    ("pyomo:highs", {"no_such_option": 1}), ("pyomo:appsi_highs", {"no_such_option": 1}),
])
def test_unknown_solver_options_are_config_errors(spec, options):
    if spec not in installed_specs() and spec.split(":")[0] not in ("highs", "osqp", "scipy"):
        pytest.skip(f"{spec} not installed")
    with pytest.raises(ConfigError):
        _unused_blocks().solve(spec, options=options)


def test_close_option_names_are_suggested():
    with pytest.raises(ConfigError, match="did you mean 'eps_abs'"):
        _unused_blocks().solve("osqp", options={"eps_abss": 1e-6})


@pytest.mark.parametrize("limit", [0, -1.0, "soon"])
def test_non_positive_time_limit_is_rejected(limit):
    with pytest.raises(ConfigError, match="time_limit"):
        SolverSpec.parse({"backend": "highs", "time_limit": limit})
    with pytest.raises(ConfigError, match="time_limit"):
        _unused_blocks().solve("highs", time_limit=limit)


def test_cvxpy_scipy_honours_the_time_limit(monkeypatch):
    import cvxpy as cp
    seen = {}
    original = cp.Problem.solve

    def spy(self, *args, **kwargs):
        seen.update(kwargs)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(cp.Problem, "solve", spy)
    sol = _unused_blocks().solve("cvxpy:SCIPY", time_limit=30.0)
    assert sol.status is Status.OPTIMAL
    assert seen["scipy_options"]["time_limit"] == 30.0


def test_solver_without_a_time_limit_refuses_one():
    from fairopt.modeling.registry import BACKENDS
    info = BACKENDS["cvxpy"]
    assert info.time_limit_key["PIQP"] is None  # such solvers are refused, never silently unlimited


# ------------------------------------------------------------------------ statuses and limits
def test_require_optimal_raises_typed_limit_error():
    rng = np.random.default_rng(0)
    p = Program("big")
    p.add_variables("x", 60, lb=0, ub=1)
    p.add_constraints("r", {"x": rng.normal(size=(40, 60))}, ub=1.0)
    p.set_objective(linear={"x": rng.normal(size=60)})
    sol = p.solve("osqp", options={"max_iter": 1})
    assert sol.status is Status.ITERATION_LIMIT
    with pytest.raises(SolverLimitError, match="iteration_limit"):
        p.solve("osqp", options={"max_iter": 1}, require_optimal=True)
    assert p.solve("highs", require_optimal=True).is_optimal


def test_status_vocabulary_reads_game_statuses():
    assert Status.parse("converged") is Status.OPTIMAL
    assert Status.parse("max_iter") is Status.ITERATION_LIMIT
    assert Status.parse(Status.TIME_LIMIT) is Status.TIME_LIMIT
    assert Status.parse("optimal") is Status.OPTIMAL
    with pytest.raises(ValueError):
        Status.parse("maybe")


# ------------------------------------------------------------------------ silence
_SILENT = """
import numpy as np
from fairopt.modeling import Program
p = Program("quiet")
p.add_variables("x", 2, lb=0, ub=1)
p.add_constraints("r", {"x": [[1.0, 1.0]]}, lb=0.5)
p.set_objective(linear={"x": [1.0, 2.0]}, quadratic={("x", "x"): np.eye(2)})
for spec in %r:
    p.solve(spec)
"""


def test_solvers_are_silent_unless_verbose():
    specs = ["highs", "osqp", "cvxpy:CLARABEL", "cvxpy:OSQP", "pyomo:highs"]
    out = subprocess.run([sys.executable, "-c", _SILENT % specs], capture_output=True, text=True,
                         check=True)
    assert out.stdout == "", out.stdout       # no HiGHS banner, no OSQP "Polishing ..." notes
    loud = subprocess.run([sys.executable, "-c", (_SILENT % ["highs"]).replace(
        "p.solve(spec)", "p.solve(spec, verbose=True)")], capture_output=True, text=True, check=True)
    assert "HiGHS" in loud.stdout


# ------------------------------------------------------------------------ registry
def test_installed_alternatives_take_the_problem_class():
    qp = installed_specs("QP")
    assert "cvxpy:SCIPY" not in qp and "pyomo:appsi_highs" not in qp and "scipy:highs" not in qp
    assert "highs:highs" in qp and "osqp:osqp" in qp
    q = Program("q")
    q.add_variables("x", 1, lb=None)
    q.set_objective(quadratic={("x", "x"): [[1.0]]})
    with pytest.raises(SolverNotAvailableError) as err:
        q.solve("cvxpy:SCIPY")
    assert err.value.available and all(s in qp for s in err.value.available)


def test_solvers_listing_is_honest_about_pyomo_smooth():
    from fairopt.modeling import available_backends
    from fairopt.modeling.registry import inner_solvers
    pyomo = next(r for r in available_backends() if r["backend"] == "pyomo")
    has_nlp = any(s in inner_solvers("pyomo") for s in ("ipopt", "scip"))
    assert ("smooth" in pyomo["problem_classes"]) == has_nlp
    assert "smooth" in pyomo["declared_classes"]


def test_algorithms_are_registered_by_their_formulations():
    from fairopt.modeling import available_backends
    rows = {r["backend"]: r for r in available_backends()}
    assert set(rows["native"]["problem_classes"]) == {"smooth", "threshold", "transport", "simplex_qp"}
    assert rows["sgd"]["problem_classes"] == ["threshold"]
    assert rows["column_generation"]["problem_classes"] == ["colgen"]
    assert rows["row_generation"]["problem_classes"] == ["rowgen"]
    assert SolverSpec.parse("native").backend == "native"
