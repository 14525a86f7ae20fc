"""`fairopt solvers` is the truth: every (back end, inner solver, problem kind) the registry
declares -- fairopt's own algorithms included -- is accepted by the solve path of that kind, on a
problem of that kind whose answer is known, and every other combination is refused with a
ConfigError naming the back ends that can; the CLI and docs/modeling.md list exactly the
registry."""
from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from fairopt.errors import SolverNotAvailableError, WrongProblemClassError
from fairopt.modeling import Program, SolverSpec
from fairopt.modeling.kinds import ColumnGenerationMaster, LazyRows
from fairopt.modeling.registry import (
    BACKENDS,
    PROBLEM_CLASSES,
    available_backends,
    default_spec,
    inner_solvers,
    solve_own,
)
from fairopt.modeling.smooth import CvxpyForm, PyomoForm, SmoothProblem, solve_smooth

ROOT = Path(__file__).resolve().parents[1]
COMBOS = [(b.name, s, p) for b in BACKENDS.values() for s in b.solvers for p in PROBLEM_CLASSES]


def _program(problem_class: str) -> Program:
    p = Program(f"tiny_{problem_class}")
    p.add_variables("x", 2, lb=0, ub=3, integer=problem_class == "MILP")
    p.add_constraints("r", {"x": [[1.0, 1.0]]}, lb=1.5)
    quad = {("x", "x"): np.eye(2)} if problem_class == "QP" else None
    p.set_objective(linear={"x": [1.0, 2.0]}, quadratic=quad)
    return p


class Bowl(SmoothProblem):
    """``f(w) = |w - 1|² / 2`` with every form, so any smooth back end can take it."""

    name, description, family = "bowl", "quadratic bowl", "bowl"
    blocks = MappingProxyType({"w": slice(0, 3)})
    has_hessian = True

    def value_grad(self, x):
        d = x - 1.0
        return 0.5 * float(d @ d), d

    def hessian(self, x):
        return np.eye(3)

    def to_cvxpy(self):
        import cvxpy as cp
        w = cp.Variable(3)
        return CvxpyForm(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w - 1.0))), {"w": w})

    def to_pyomo(self):
        import pyomo.environ as pyo
        m = pyo.ConcreteModel()
        m.w = pyo.Var(range(3))
        m.obj = pyo.Objective(expr=0.5 * sum((m.w[i] - 1.0) ** 2 for i in range(3)))
        return PyomoForm(m, {"w": m.w})


def _threshold_problem():
    from fairopt.formulations.constrained_classification import RandomizedThresholdParity
    rng = np.random.default_rng(0)
    return RandomizedThresholdParity(rng.random(300), rng.integers(0, 2, 300), 0.1, 0.05, 0.4)


class Quantiles:
    """A one-dimensional transport statistics problem: the W2 barycenter of two groups' score
    distributions, whose quantile function is the weighted mean of the groups' (kind ``transport``)."""

    kind = "transport"

    def __init__(self):
        rng = np.random.default_rng(1)
        self.a, self.b = np.sort(rng.normal(0, 1, 50)), np.sort(rng.normal(1, 2, 50))

    def solve_native(self):
        return {"barycenter": 0.5 * (self.a + self.b)}


def _simplex_problem():
    from fairopt.formulations.proxy_weights.programs import _SimplexLeastSquares
    return _SimplexLeastSquares(np.array([[0.9, 0.1], [0.2, 0.8]]), False, np.array([0.5, 0.5]))


def _lazy_rows():
    """The LP of :func:`_program` with its row supplied by a separation oracle."""
    p = Program("tiny_rowgen")
    p.add_variables("x", 2, lb=0, ub=3)
    p.set_objective(linear={"x": [1.0, 2.0]})
    return LazyRows(p, lambda x: (np.array([[1.0, 1.0]]), np.array([1.5]), np.array([np.inf])))


def _lazy_columns():
    """The LP of :func:`_program` with its columns supplied by a pricing oracle: the master starts
    from ``x_1`` alone; ``x_0`` prices in (reduced cost ``1 - y < 0`` at the master's ``y = 2``)."""
    from fairopt.modeling.lazy_columns import ColumnBlock, LazyColumns
    A, c = np.array([[1.0, 1.0]]), np.array([1.0, 2.0])

    def price(y, x):
        return ColumnBlock(A[:, [0]], c[[0]], 0.0, 3.0) if x.size == 1 and c[0] - A[:, 0] @ y < -1e-9 else None
    return LazyColumns([1.5], [np.inf], ColumnBlock(np.zeros((1, 0)), [], [], []),
                       ColumnBlock(A[:, [1]], c[[1]], 0.0, 3.0), price)


def _solve(backend: str, solver: str, problem_class: str):
    spec = f"{backend}:{solver}"
    if problem_class == "smooth":
        return solve_smooth(Bowl(), spec, tol=1e-6)
    if problem_class == "threshold":
        options = {"n_steps": 200, "random_state": 0} if backend == "sgd" else {}
        return solve_own(_threshold_problem(), SolverSpec(backend, solver, options), "threshold")
    if problem_class == "transport":
        return solve_own(Quantiles(), spec, "transport")
    if problem_class == "simplex_qp":
        return solve_own(_simplex_problem(), spec, "simplex_qp")
    if problem_class == "colgen":
        return solve_own(ColumnGenerationMaster(_program("LP"), "x", np.array([False, True])), spec, "colgen")
    if problem_class == "rowgen":
        return solve_own(_lazy_rows(), spec, "rowgen")
    if problem_class == "pricing":
        return solve_own(_lazy_columns(), spec, "pricing")
    return _program(problem_class).solve(spec)


@pytest.mark.parametrize("backend,solver,problem_class", COMBOS,
                         ids=[f"{b}:{s}:{p}" for b, s, p in COMBOS])
def test_solve_accepts_exactly_what_the_registry_declares(backend, solver, problem_class):
    declared = problem_class in BACKENDS[backend].solvers[solver]
    if not declared:
        with pytest.raises(WrongProblemClassError, match=f"Back ends that take {problem_class}"):
            _solve(backend, solver, problem_class)
        return
    if solver not in inner_solvers(backend):
        with pytest.raises(SolverNotAvailableError) as err:   # declared, not installed here
            _solve(backend, solver, problem_class)
        assert not isinstance(err.value, WrongProblemClassError)
        return
    sol = _solve(backend, solver, problem_class)
    if problem_class == "threshold":
        assert np.all(np.isfinite(sol.thresholds))
        assert sol.backend == backend   # stamped by solve_own: the solver that ran
    elif problem_class == "smooth":
        assert sol.is_optimal and np.allclose(sol.primal["w"], 1.0, atol=1e-4)
    elif problem_class == "transport":
        q = Quantiles()
        np.testing.assert_allclose(sol["barycenter"], 0.5 * (q.a + q.b))
    elif problem_class == "simplex_qp":   # P1 at q = (3/7, 4/7), where A'q is uniform
        assert sol.is_optimal and sol.backend == backend
        np.testing.assert_allclose(sol.primal["q"], [3 / 7, 4 / 7], atol=1e-8)
        assert sol.objective == pytest.approx(0.0, abs=1e-12)
    else:   # LP, colgen, rowgen, pricing 1.5 at x = (1.5, 0); QP 2.5625 at (1.25, 0.25); MILP 2 at (2, 0)
        expected = {"LP": 1.5, "colgen": 1.5, "rowgen": 1.5, "pricing": 1.5, "QP": 2.5625, "MILP": 2.0}[problem_class]
        assert sol.objective == pytest.approx(expected, rel=1e-4), (sol.status, sol.log)
        if problem_class in ("colgen", "rowgen"):
            assert sol.is_optimal and sol.backend == backend
            np.testing.assert_allclose(sol.primal["x"], [1.5, 0.0], atol=1e-9)
        if problem_class == "pricing":   # columns in the order added: x_1, then x_0
            assert sol.is_optimal and sol.backend == backend and sol.iterations == 1
            np.testing.assert_allclose(sol.primal["columns"], [0.0, 1.5], atol=1e-9)


def test_every_problem_class_has_one_default_that_takes_it():
    for p in PROBLEM_CLASSES:
        spec = default_spec(p)
        assert p in BACKENDS[spec.backend].solvers[spec.solver]
        assert [b.name for b in BACKENDS.values() if p in b.default_for] == [spec.backend]


def test_fairopt_solvers_prints_the_registry(capsys):
    from fairopt.cli import main
    assert main(["solvers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == json.loads(json.dumps(available_backends()))
    assert [r["backend"] for r in rows] == list(BACKENDS)
    for r in rows:
        info = BACKENDS[r["backend"]]
        assert r["declared"] == {s: list(c) for s, c in info.solvers.items()}
        assert r["default_for"] == list(info.default_for)
    assert main(["solvers"]) == 0
    table = capsys.readouterr().out
    for b in BACKENDS:
        assert re.search(rf"^\W*{b}\b", table, re.M), f"`fairopt solvers` does not list {b}"


def declared_table() -> str:
    """The back-end table of docs/modeling.md, as the registry declares it."""
    lines = ["| back end | inner solver | problem kinds | default for |", "|---|---|---|---|"]
    for b in BACKENDS.values():
        for s, classes in b.solvers.items():
            default = [p for p in b.default_for if b.default_solver.get(p) == s]
            lines.append(f"| `{b.name}` | `{s}` | {', '.join(classes)} | {', '.join(default)} |")
    return "\n".join(lines)


def test_docs_list_exactly_the_registry():
    text = (ROOT / "docs" / "modeling.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- declared back ends: begin -->\n(.*?)\n<!-- declared back ends: end -->",
                      text, re.S)
    assert block, "docs/modeling.md lost its declared back-end table"
    assert block.group(1).strip() == declared_table(), (
        "docs/modeling.md's declared back-end table differs from the registry; replace it with:\n"
        + declared_table())
