"""The modeling core: back-end agreement, the dual convention, failures, native objects."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fairopt.errors import DataValidationError, InfeasibleError, SolverNotAvailableError, UnboundedError
from fairopt.modeling import Program, SolverSpec, Status, available_backends, installed_specs
from fairopt.modeling.registry import exact_specs

#: exact LP solvers as the registry declares them (first-order methods at default tolerances are
#: not); cvxpy's SCIPY interface reports no duals
LP_SPECS = [s for s in exact_specs("LP") if s != "cvxpy:SCIPY"]
QP_SPECS = [s for s in installed_specs("QP")   # ECOS declares 1e-4 on QPs (their cone form)
            if s not in ("cvxpy:SCS", "cvxpy:SCIPY", "cvxpy:ECOS", "pyomo:appsi_highs")] + ["pyomo"]


def _planted_program(seed: int, quadratic: bool) -> tuple[Program, dict]:
    """A random program with a known, strictly complementary optimum.

    Rows are equalities, ``>=`` rows, ``<=`` rows and two-sided rows; variables have lower,
    upper, two-sided and no bounds; for an LP the optimum is a nondegenerate vertex, so the
    optimal duals are unique and comparable entrywise.
    """
    rng = np.random.default_rng(seed)
    n1, n2 = 4, 3  # two variable blocks, one of them 2-D
    n = n1 + n2
    x_star = rng.uniform(-1, 1, n)
    m = 9
    A = rng.normal(size=(m, n))
    A[np.abs(A) < 0.3] = 0.0  # some sparsity
    Ax = A @ x_star
    # choose active rows: for an LP a vertex needs n active constraints (rows + bounds)
    n_active_rows = 5 if not quadratic else 3
    active = rng.choice(m, n_active_rows, replace=False)
    kinds = rng.choice(["eq", "lb", "ub"], size=n_active_rows)
    lb, ub = np.full(m, -np.inf), np.full(m, np.inf)
    y = np.zeros(m)
    slack = np.setdiff1d(np.arange(m), active)
    lb[slack[::2]] = Ax[slack[::2]] - rng.uniform(0.5, 1.0, slack[::2].size)
    ub[slack[1::2]] = Ax[slack[1::2]] + rng.uniform(0.5, 1.0, slack[1::2].size)
    ub[slack[::3]] = Ax[slack[::3]] + 2.0  # some two-sided slack rows
    for r, k in zip(active, kinds, strict=False):
        mag = rng.uniform(0.5, 2.0)
        if k == "eq":
            lb[r] = ub[r] = Ax[r]
            y[r] = rng.choice([-1, 1]) * mag
        elif k == "lb":
            lb[r], y[r] = Ax[r], mag           # d f / d lb >= 0
            ub[r] = Ax[r] + 3.0 if rng.random() < 0.5 else np.inf
        else:
            ub[r], y[r] = Ax[r], -mag          # d f / d ub <= 0
    # variable bounds: the remaining active constraints for an LP vertex
    xl, xu = x_star - rng.uniform(0.5, 1, n), x_star + rng.uniform(0.5, 1, n)
    xu[::4] = np.inf
    xl[1::5] = -np.inf
    z = np.zeros(n)
    n_active_bounds = n - n_active_rows if not quadratic else 1
    for j in rng.choice(n, n_active_bounds, replace=False):
        if rng.random() < 0.5:
            xl[j], z[j] = x_star[j], rng.uniform(0.5, 2)
        else:
            xu[j], z[j] = x_star[j], -rng.uniform(0.5, 2)
    if quadratic:
        L = rng.normal(size=(n, n))
        P = L @ L.T + 0.5 * np.eye(n)
    else:
        P = np.zeros((n, n))
    # stationarity in fairopt's convention: P x + c = A'y + z
    c = A.T @ y + z - P @ x_star
    prog = Program(f"planted_{'qp' if quadratic else 'lp'}_{seed}")
    prog.add_variables("u", shape=(n1,), lb=xl[:n1], ub=xu[:n1])
    prog.add_variables("w", shape=(1, n2), lb=xl[n1:].reshape(1, n2), ub=xu[n1:].reshape(1, n2))
    prog.add_constraints("eqs", {"u": A[:3, :n1], "w": sp.csr_matrix(A[:3, n1:])}, lb=lb[:3], ub=ub[:3])
    prog.add_constraints("rest", {"u": A[3:, :n1], "w": A[3:, n1:]}, lb=lb[3:], ub=ub[3:])
    quad = {("u", "u"): P[:n1, :n1], ("w", "w"): P[n1:, n1:], ("u", "w"): P[:n1, n1:]} if quadratic else None
    prog.set_objective(linear={"u": c[:n1], "w": c[n1:]}, quadratic=quad, constant=1.25)
    objective = 0.5 * x_star @ P @ x_star + c @ x_star + 1.25
    return prog, {"x": x_star, "y": y, "z": z, "objective": objective}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("spec", LP_SPECS)
def test_lp_backends_agree_with_planted_optimum(spec, seed):
    prog, truth = _planted_program(seed, quadratic=False)
    sol = prog.solve(spec)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(truth["objective"], rel=1e-6, abs=1e-7)
    x = np.concatenate([sol.primal["u"], sol.primal["w"].ravel()])
    np.testing.assert_allclose(x, truth["x"], atol=1e-6)
    y = np.concatenate([sol.dual["eqs"], sol.dual["rest"]])
    np.testing.assert_allclose(y, truth["y"], atol=1e-6)
    if sol.reduced_cost:
        z = np.concatenate([sol.reduced_cost["u"], sol.reduced_cost["w"].ravel()])
        np.testing.assert_allclose(z, truth["z"], atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("spec", QP_SPECS)
def test_qp_backends_agree_with_planted_optimum(spec, seed):
    prog, truth = _planted_program(seed, quadratic=True)
    assert prog.problem_class == "QP"
    sol = prog.solve(spec)
    assert sol.objective == pytest.approx(truth["objective"], rel=1e-6, abs=1e-7)
    x = np.concatenate([sol.primal["u"], sol.primal["w"].ravel()])
    np.testing.assert_allclose(x, truth["x"], atol=1e-5)
    y = np.concatenate([sol.dual["eqs"], sol.dual["rest"]])
    np.testing.assert_allclose(y, truth["y"], atol=1e-5)


def test_dual_is_derivative_of_optimum_for_maximisation():
    """Finite differences confirm the convention also in the maximisation sense."""
    def build(cap):
        prog = Program("maxprog")
        prog.add_variables("x", shape=(2,), lb=0.0)
        prog.add_constraints("cap", {"x": [[1.0, 2.0]]}, ub=cap)
        prog.add_constraints("mix", {"x": [[1.0, -1.0]]}, lb=-1.0, ub=0.5)
        prog.set_objective(linear={"x": [3.0, 2.0]}, sense="maximize")
        return prog
    fd = (build(4.0 + 1e-3).solve("highs").objective - build(4.0).solve("highs").objective) / 1e-3
    for spec in LP_SPECS:
        sol = build(4.0).solve(spec)
        assert sol.dual["cap"][0] == pytest.approx(fd, abs=1e-5), spec
        assert sol.dual["cap"][0] > 0  # more capacity raises a maximum


def test_warm_started_resolve_matches_fresh_solve():
    prog, _ = _planted_program(3, quadratic=False)
    rng = np.random.default_rng(0)
    for spec in ("highs", "osqp", "scipy", "cvxpy:CLARABEL"):
        comp = prog.compile(spec)
        comp.solve()
        c_new = {"u": rng.normal(size=4), "w": rng.normal(size=3)}
        comp.set_objective(linear=c_new)
        comp.set_constraint_bounds("rest", ub=prog.constraints["rest"].ub + 0.1)
        warm = comp.solve()
        fresh_prog, _ = _planted_program(3, quadratic=False)
        fresh_prog.set_objective(linear=c_new, constant=1.25)
        fresh = fresh_prog.compile("highs")
        fresh.set_constraint_bounds("rest", ub=prog.constraints["rest"].ub + 0.1)
        assert warm.objective == pytest.approx(fresh.solve().objective, rel=1e-7, abs=1e-8), spec
    # the compiled copy does not leak updates into the program
    assert np.isfinite(prog.canonical().c).all()


def _infeasible():
    prog = Program("contradiction")
    prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    prog.add_constraints("too_much", {"x": np.ones((1, 2))}, lb=3.0)
    prog.set_objective(linear={"x": [1.0, 1.0]})
    return prog


def _unbounded():
    prog = Program("runaway")
    prog.add_variables("x", shape=(2,), lb=0.0)
    prog.add_constraints("row", {"x": [[1.0, -1.0]]}, ub=1.0)
    prog.set_objective(linear={"x": [-1.0, -1.0]})
    return prog


@pytest.mark.parametrize("spec", LP_SPECS)
def test_infeasible_and_unbounded_raise_typed_errors(spec):
    with pytest.raises(InfeasibleError) as err:
        _infeasible().solve(spec)
    assert err.value.program == "contradiction" and "contradiction" in str(err.value)
    with pytest.raises(UnboundedError) as err:
        _unbounded().solve(spec)
    assert "runaway" in str(err.value)


def test_time_limit_is_flagged_not_optimal():
    rng = np.random.default_rng(1)
    n, m = 3000, 1500
    prog = Program("big")
    prog.add_variables("x", shape=(n,), lb=0.0, ub=1.0)
    prog.add_constraints("rows", {"x": sp.random(m, n, density=0.05, random_state=1)}, ub=rng.uniform(1, 2, m))
    prog.set_objective(linear={"x": -rng.uniform(size=n)})
    sol = prog.solve("highs", time_limit=1e-4)
    assert sol.status is Status.TIME_LIMIT and not sol.is_optimal


def test_missing_solver_lists_alternatives():
    prog = _unbounded()
    with pytest.raises(SolverNotAvailableError) as err:
        prog.solve("cvxpy:NOT_A_SOLVER")
    assert "highs:highs" in str(err.value) and err.value.available
    with pytest.raises(SolverNotAvailableError):
        prog.solve("pyomo:gurobi_persistent_missing")
    qp = Program("q")
    qp.add_variables("x", shape=(1,))
    qp.set_objective(quadratic={("x", "x"): [[1.0]]})
    with pytest.raises(SolverNotAvailableError, match="does not take QP"):
        qp.solve("scipy")
    with pytest.raises(SolverNotAvailableError, match="does not take QP"):
        qp.solve("pyomo:appsi_highs")


def test_registry_and_spec_parsing():
    names = {b["backend"]: b for b in available_backends()}
    assert {"highs", "osqp", "scipy", "cvxpy", "pyomo"} <= set(names)
    assert "appsi_highs" in names["pyomo"]["solvers"]
    assert "CLARABEL" in names["cvxpy"]["solvers"]
    spec = SolverSpec.parse({"backend": "cvxpy", "solver": "CLARABEL", "options": {"max_iter": 50},
                             "time_limit": 5})
    assert (spec.backend, spec.solver, spec.options["max_iter"], spec.time_limit) == ("cvxpy", "CLARABEL", 50, 5)
    assert SolverSpec.parse("pyomo:appsi_highs").solver == "appsi_highs"
    from fairopt.errors import ConfigError
    with pytest.raises(ConfigError, match="unknown solver back end"):
        SolverSpec.parse("gurobipy")
    with pytest.raises(ConfigError, match="unknown key"):
        SolverSpec.parse({"backend": "highs", "tolerance": 1})


def test_bad_building_input_is_rejected():
    prog = Program("bad")
    prog.add_variables("x", shape=(3,))
    with pytest.raises(DataValidationError, match="expected"):
        prog.add_constraints("c", {"x": np.ones((2, 4))}, ub=1)
    with pytest.raises(DataValidationError, match="unknown variable"):
        prog.add_constraints("c", {"y": np.ones((2, 3))}, ub=1)
    with pytest.raises(DataValidationError, match="lb > ub"):
        prog.add_constraints("c", {"x": np.ones((1, 3))}, lb=2, ub=1)
    with pytest.raises(DataValidationError, match="already has"):
        prog.add_variables("x", shape=(1,))
    with pytest.raises(DataValidationError, match="NaN"):
        prog.add_constraints("d", {"x": np.ones((1, 3))}, ub=np.nan)


def test_native_objects_can_be_extended_and_solved(tmp_path):
    import cvxpy as cp
    import pyomo.environ as pyo
    toy = Program("toy")
    toy.add_variables("x", shape=(2,), lb=0.0)
    toy.add_constraints("cap", {"x": [[1.0, 2.0]]}, ub=4.0)
    toy.set_objective(linear={"x": [3.0, 2.0]}, sense="maximize")
    problem, variables, constraints = toy.to_cvxpy()
    assert set(variables) == {"x"} and set(constraints["cap"]) == {"le"}
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(12.0, rel=1e-7)
    # the caller's side constraint moves the optimum to x = (1, 1.5)
    extended = cp.Problem(problem.objective, [*problem.constraints, variables["x"][0] <= 1.0])
    extended.solve(solver="CLARABEL")
    assert extended.value == pytest.approx(6.0, rel=1e-7)

    model = toy.to_pyomo()
    assert isinstance(model.x, pyo.Var) and isinstance(model.cap, pyo.Constraint)
    model.side = pyo.Constraint(expr=model.x[0] <= 1.0)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    pyo.SolverFactory("appsi_highs").solve(model)
    assert pyo.value(model.objective) == pytest.approx(6.0, rel=1e-9)
    assert pyo.value(model.x[1]) == pytest.approx(1.5, rel=1e-9)

    prog, _ = _planted_program(1, quadratic=False)
    for ext in ("mps", "lp"):
        path = tmp_path / f"m.{ext}"
        prog.write(path)
        text = path.read_text()
        assert "rest_0" in text and "u_0" in text
    with pytest.raises(DataValidationError, match=r"\.mps or \.lp"):
        prog.write(tmp_path / "m.txt")


def test_summary_reports_blocks():
    prog, _ = _planted_program(0, quadratic=True)
    s = prog.summary()
    assert s.problem_class == "QP" and s.n_variables == 7 and s.n_constraints == 9
    assert [v["name"] for v in s.variables] == ["u", "w"]
    assert s.variables[1]["shape"] == [1, 3]
    assert "rest" in str(s) and s.as_dict()["nnz"] == prog.canonical().A.nnz


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_cvxpy_iteration_cap_is_an_iteration_limit():
    prog, _ = _planted_program(2, quadratic=True)
    sol = prog.solve("cvxpy:CLARABEL", options={"max_iter": 1})
    assert sol.status is Status.ITERATION_LIMIT and not sol.is_optimal


@pytest.mark.parametrize("spec", ["highs", "scipy", "cvxpy:CLARABEL", "osqp"])
def test_extend_variables_matches_a_fresh_build(spec):
    """Column generation: growing the last block and re-solving equals building the big program."""
    rng = np.random.default_rng(5)
    G = rng.normal(size=(4, 9))          # rows x hypotheses
    cost = rng.uniform(size=9)

    def build(k):
        prog = Program("master")
        prog.add_variables("s", shape=(1,), lb=0.0)
        prog.add_variables("q", shape=(k,), lb=0.0)
        prog.add_constraints("fair", {"q": G[:, :k], "s": -np.ones((4, 1))}, ub=0.1)
        prog.add_constraints("simplex", {"q": np.ones((1, k))}, lb=1.0, ub=1.0)
        prog.set_objective(linear={"q": cost[:k], "s": [3.0]})
        return prog
    comp = build(3).compile(spec)
    comp.solve()
    for k0, k1 in ((3, 6), (6, 9)):
        comp.extend_variables("q", {"fair": G[:, k0:k1], "simplex": np.ones((1, k1 - k0))}, cost[k0:k1])
        grown = comp.solve()
        fresh = build(k1).solve("highs")
        assert grown.objective == pytest.approx(fresh.objective, rel=1e-7, abs=1e-9)
        assert grown.primal["q"].shape == (k1,)
        np.testing.assert_allclose(grown.dual["fair"], fresh.dual["fair"], atol=1e-6)
    with pytest.raises(DataValidationError, match="last"):
        comp.extend_variables("s", {}, [1.0])
