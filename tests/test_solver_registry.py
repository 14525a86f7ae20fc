"""`fairopt solvers` is the truth: every (back end, inner solver, problem class) the registry
declares is accepted by the solve path of that class, and every other combination is refused
with a ConfigError naming the back ends that can; the CLI and docs/modeling.md list exactly the
registry."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from fairopt.errors import SolverNotAvailableError, WrongProblemClassError
from fairopt.modeling import Program, SolverSpec
from fairopt.modeling.registry import (BACKENDS, PROBLEM_CLASSES, available_backends, default_spec,
                                       inner_solvers, solve_own)
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
    blocks = {"w": slice(0, 3)}
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


def _solve(backend: str, solver: str, problem_class: str):
    if problem_class == "smooth":
        return solve_smooth(Bowl(), f"{backend}:{solver}", tol=1e-6)
    if problem_class == "threshold":
        options = {"n_steps": 200, "random_state": 0} if backend == "sgd" else {}
        return solve_own(_threshold_problem(), SolverSpec(backend, solver, options), "threshold")
    return _program(problem_class).solve(f"{backend}:{solver}")


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
    elif problem_class == "smooth":
        assert sol.is_optimal and np.allclose(sol.primal["w"], 1.0, atol=1e-4)
    else:   # LP 1.5 at x = (1.5, 0); QP 2.5625 at (1.25, 0.25); MILP 2 at (2, 0)
        expected = {"LP": 1.5, "QP": 2.5625, "MILP": 2.0}[problem_class]
        assert sol.objective == pytest.approx(expected, rel=1e-4), (sol.status, sol.log)


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
    lines = ["| back end | inner solver | problem classes | default for |", "|---|---|---|---|"]
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
