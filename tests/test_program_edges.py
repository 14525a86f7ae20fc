"""Program edge cases answered the same on every back end: a program with no variable entries is a
constant (optimal, or infeasible when a row excludes 0), and an infeasibility caused by a fairness
block names the block and its row."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.constraints import selection_rate_parity
from fairopt.errors import InfeasibleError, UnknownSolverError
from fairopt.modeling import Program
from fairopt.modeling.registry import backend_installed

BACKENDS = [b for b in ("highs", "osqp", "scipy", "cvxpy", "pyomo") if backend_installed(b)]


def test_every_default_back_end_is_installed_here():
    assert BACKENDS == ["highs", "osqp", "scipy", "cvxpy", "pyomo"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_program_without_variables_is_its_constant_on_every_back_end(backend, sense):
    prog = Program("empty")
    prog.set_objective(constant=3.5, sense=sense)
    sol = prog.solve(backend)
    assert sol.is_optimal and sol.objective == 3.5
    assert sol.primal == {} and sol.dual == {} and sol.backend == backend
    assert Program("bare").solve(backend).objective == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_size_block_with_rows_is_feasible_exactly_when_rows_admit_zero(backend):
    prog = Program("zero")
    prog.add_variables("x", shape=0)
    prog.add_constraints("ok", {"x": np.zeros((2, 0))}, lb=[-1.0, 0.0], ub=[0.0, 2.0])
    prog.set_objective(constant=-2.0, sense="maximize")
    sol = prog.solve(backend)
    assert sol.is_optimal and sol.objective == -2.0
    assert sol.primal["x"].shape == (0,) and np.array_equal(sol.dual["ok"], np.zeros(2))
    prog.add_constraints("bad", {"x": np.zeros((3, 0))}, lb=[0.0, 0.0, 1.0])
    with pytest.raises(InfeasibleError, match=r"bad\[2\]") as err:
        prog.solve(backend)
    assert (err.value.constraint, err.value.row) == ("bad", 2)


def test_empty_program_still_checks_the_solver_name():
    with pytest.raises(UnknownSolverError, match="valid names"):
        Program("empty").solve("cvxpy:NOPE")


def _conflicting(groups):
    prog = Program("conflict")
    prog.add_variables("x", shape=4, lb=0, ub=1)
    prog.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
    prog.add_constraints("must", {"x": np.array([[1.0, 1.0, 0.0, 0.0]])}, lb=2)
    prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")
    block = selection_rate_parity(groups, eps=0.0)
    block.add_to(prog, "x")
    return prog, block


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasibility_from_a_fairness_block_names_the_block_and_row(backend):
    groups = np.array(["a", "a", "b", "b"])
    prog, block = _conflicting(groups)
    with pytest.raises(InfeasibleError) as err:
        prog.solve(backend)
    e = err.value
    assert e.constraint == block.name and e.program == "conflict"
    assert e.row_label == block.row_labels[e.row] and f"{block.name}[{e.row}]" in str(e)
    # the named row is the culprit: rows before it are feasible, adding it is not
    keep = Program("prefix")
    keep.add_variables("x", shape=4, lb=0, ub=1)
    keep.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
    keep.add_constraints("must", {"x": np.array([[1.0, 1.0, 0.0, 0.0]])}, lb=2)
    keep.add_variables("t", shape=block.n_aux, lb=None)
    rows = slice(0, e.row)
    keep.add_constraints("fair", {"x": block.A[rows], "t": block.T[rows]},
                         lb=block.lb[rows], ub=block.ub[rows])
    assert keep.solve("highs").is_optimal
    keep.add_constraints("culprit", {"x": block.A[[e.row]], "t": block.T[[e.row]]},
                         lb=block.lb[[e.row]], ub=block.ub[[e.row]])
    with pytest.raises(InfeasibleError):
        keep.solve("highs")


def test_infeasible_own_rows_are_named_without_labels():
    prog = Program("own")
    prog.add_variables("x", shape=3, lb=0, ub=1)
    prog.add_constraints("fine", {"x": np.ones((1, 3))}, ub=3)
    prog.add_constraints("caps", {"x": np.eye(3)}, lb=[0.0, 0.5, 2.0])
    with pytest.raises(InfeasibleError, match=r"caps\[2\]") as err:
        prog.solve("highs")
    assert (err.value.constraint, err.value.row, err.value.row_label) == ("caps", 2, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_empty_program_answers_like_solve_and_grows_into_a_real_one(backend):
    prog = Program("master")
    prog.add_variables("x", shape=0)
    prog.add_constraints("cover", {"x": np.zeros((1, 0))}, lb=0.0, ub=1.0)
    prog.set_objective(constant=0.5)
    model = prog.compile(backend)
    assert model.solve().objective == prog.solve(backend).objective == 0.5
    model.set_constraint_bounds("cover", lb=1.0)          # 1 <= 0: the constant is infeasible
    with pytest.raises(InfeasibleError, match=r"cover\[0\]"):
        model.solve()
    # column generation from an empty master: the back end's model takes over
    model.extend_variables("x", {"cover": np.ones((1, 2))}, cost=[3.0, 2.0], lb=0, ub=1)
    sol = model.solve()
    assert sol.is_optimal and sol.objective == pytest.approx(2.5, abs=1e-6)
    np.testing.assert_allclose(sol.primal["x"], [0.0, 1.0], atol=1e-6)
