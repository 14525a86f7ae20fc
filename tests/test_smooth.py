"""The smooth-problem seam: one protocol, one solve_smooth, honest statuses on every back end."""
from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest
from scipy.special import expit

from fairopt.errors import ConfigError, SolverNotAvailableError
from fairopt.modeling import SolverSpec, Status
from fairopt.modeling.smooth import CvxpyForm, NativeResult, PyomoForm, SmoothProblem, solve_smooth


class Logistic(SmoothProblem):
    """Mean logistic loss + (C/2)‖w‖² with value, gradient, Hessian and both declarative forms."""

    name = "logistic"
    description = "test logistic problem"

    def __init__(self, X, y, C, hessian=True):
        self.X, self.y, self.C = X, y, C
        self.blocks = {"w": slice(0, X.shape[1])}
        self.has_hessian = hessian

    def value_grad(self, w):
        z = self.X @ w
        n = len(z)
        f = np.mean(np.logaddexp(0, z) - self.y * z) + 0.5 * self.C * w @ w
        return f, self.X.T @ (expit(z) - self.y) / n + self.C * w

    def hessian(self, w):
        p = expit(self.X @ w)
        return (self.X.T * (p * (1 - p))) @ self.X / len(p) + self.C * np.eye(len(w))

    def to_cvxpy(self):
        import cvxpy as cp
        w = cp.Variable(self.X.shape[1], name="w")
        z = self.X @ w
        obj = cp.sum(cp.logistic(z) - cp.multiply(self.y, z)) / len(self.y) + 0.5 * self.C * cp.sum_squares(w)
        return CvxpyForm(cp.Problem(cp.Minimize(obj)), {"w": w})

    def to_pyomo(self):
        import pyomo.environ as pyo
        m = pyo.ConcreteModel()
        m.J = pyo.RangeSet(0, self.X.shape[1] - 1)
        m.w = pyo.Var(m.J, initialize=0.0)
        n = len(self.y)
        m.obj = pyo.Objective(expr=sum(
            pyo.log(1 + pyo.exp(sum(float(self.X[i, j]) * m.w[j] for j in m.J)))
            - float(self.y[i]) * sum(float(self.X[i, j]) * m.w[j] for j in m.J) for i in range(n)) / n
            + 0.5 * self.C * sum(m.w[j] ** 2 for j in m.J))
        return PyomoForm(m, {"w": m.w})


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(300, 4)), np.ones(300)]
    y = (rng.random(300) < expit(X @ np.array([1.0, -2.0, 0.5, 0.0, 0.3]))).astype(float)
    return Logistic(X, y, C=0.01)


def test_native_newton_matches_sklearn(problem):
    from sklearn.linear_model import LogisticRegression
    sol = solve_smooth(problem, "native", tol=1e-10)
    assert sol.is_optimal and sol.solver == "newton" and sol.optimality <= 1e-10
    n = len(problem.y)
    sk = LogisticRegression(C=1 / (n * problem.C), fit_intercept=False, tol=1e-12, max_iter=10_000)
    sk.fit(problem.X, problem.y)
    np.testing.assert_allclose(sol.primal["w"], sk.coef_.ravel(), atol=1e-6)


@pytest.mark.parametrize("spec", ["scipy", "scipy:trust-krylov", "scipy:L-BFGS-B", "scipy:BFGS",
                                  "cvxpy:CLARABEL", "cvxpy:SCS"])
def test_backends_agree(problem, spec):
    ref = solve_smooth(problem, "native", tol=1e-10)
    sol = solve_smooth(problem, spec, tol=1e-7, max_iter=500)
    assert sol.is_optimal, (spec, sol.status, sol.optimality)
    np.testing.assert_allclose(sol.primal["w"], ref.primal["w"], atol=1e-5)
    assert abs(sol.objective - ref.objective) <= 1e-9


def test_native_without_hessian_runs_lbfgs(problem):
    problem.has_hessian = False
    sol = solve_smooth(problem, "native", tol=1e-9, max_iter=500)
    assert sol.is_optimal and sol.solver == "L-BFGS-B"
    with pytest.raises(ConfigError, match="needs a Hessian"):
        solve_smooth(problem, "scipy:trust-exact")


def test_limits_are_never_optimal(problem):
    sol = solve_smooth(problem, "native", tol=1e-12, max_iter=1)
    assert sol.status is Status.ITERATION_LIMIT and not sol.is_optimal and sol.optimality > 1e-12
    sol = solve_smooth(problem, SolverSpec("native", time_limit=1e-9), tol=1e-12)
    assert sol.status is Status.TIME_LIMIT and not sol.is_optimal
    sol = solve_smooth(problem, SolverSpec("scipy", solver="L-BFGS-B", time_limit=1e-9), tol=1e-12)
    assert sol.status is Status.TIME_LIMIT
    sol = solve_smooth(problem, "scipy:trust-krylov", tol=1e-14, max_iter=1)
    assert sol.status is Status.ITERATION_LIMIT


def test_cvxpy_status_is_certified_by_the_oracle(problem):
    # a loose SCS run reports "optimal" itself, but the gradient says otherwise
    sol = solve_smooth(problem, "cvxpy:SCS", tol=1e-12, options={"eps_abs": 1e-3, "eps_rel": 1e-3})
    assert sol.optimality > 1e-12 and sol.status is Status.NUMERICAL


def test_settings_are_refused(problem):
    with pytest.raises(ConfigError, match="does not take"):
        solve_smooth(problem, "highs")
    with pytest.raises(ConfigError, match="takes no solver options"):
        solve_smooth(problem, {"backend": "native", "options": {"maxiter": 3}})
    with pytest.raises(ConfigError, match="time_limit is not supported by the cvxpy"):
        solve_smooth(problem, {"backend": "cvxpy", "time_limit": 1.0})
    class NoForms(SmoothProblem):          # an oracle with no cvxpy/pyomo form
        blocks = MappingProxyType({"x": slice(0, 1)})

        def value_grad(self, x):
            return float(x @ x), 2 * x
    with pytest.raises(ConfigError, match="no cvxpy form"):
        solve_smooth(NoForms(), "cvxpy")


def test_pyomo_builds_and_needs_ipopt(problem):
    import pyomo.environ as pyo
    form = problem.to_pyomo()
    w = np.array([0.3, -0.1, 0.2, 0.0, 0.5])
    for j in range(5):
        form.variables["w"][j].value = w[j]
    assert abs(pyo.value(form.model.obj) - problem.value(w)) <= 1e-12
    if pyo.SolverFactory("ipopt").available(exception_flag=False):
        sol = solve_smooth(problem, "pyomo")
        assert sol.is_optimal
    else:
        with pytest.raises(SolverNotAvailableError, match="Ipopt") as err:
            solve_smooth(problem, "pyomo")
        assert "cvxpy:CLARABEL" in err.value.available


def test_own_native_algorithm_and_uncertified_status(problem):
    class Own(Logistic):
        certifies = False            # e.g. a kink: the oracle's measure proves nothing

        def native_solve(self, x0, tol, max_iter, deadline):
            return NativeResult(np.zeros(self.dim), 7, Status.ITERATION_LIMIT, "own", "own",
                                primal={"extra": np.ones(2)}, dual={"row": np.array([0.5])})

    sol = solve_smooth(Own(problem.X, problem.y, problem.C), "native")
    assert sol.status is Status.ITERATION_LIMIT and sol.solver == "own" and sol.iterations == 7
    assert sol.primal["extra"].tolist() == [1, 1] and sol.dual["row"].tolist() == [0.5]
    assert np.all(sol.primal["w"] == 0)
