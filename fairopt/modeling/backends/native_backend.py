"""``native``: the problem's own algorithm.

fairopt's formulations carry algorithms of their own: damped Newton on the max-entropy dual,
L-BFGS with the exact inner multiplier on fair log-loss, exact threshold roots for randomized
threshold debiasing. This back end only dispatches: a smooth problem runs its
:meth:`~fairopt.modeling.smooth.SmoothProblem.native_solve`, any other problem its
``solve_native`` method. It takes no solver options (tolerance and iteration limit are the
formulation's own parameters).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from fairopt.errors import ConfigError
from fairopt.modeling.backends.base import SmoothOracle
from fairopt.modeling.solution import NativeResult
from fairopt.modeling.spec import BackendInfo, SolverSpec

INFO = BackendInfo(
    name="native", module="numpy",
    description="the problem's own algorithm: Newton or L-BFGS on smooth duals (max-entropy, fair "
                "log-loss with its exact inner multiplier), exact roots for threshold debiasing",
    solvers={"native": ("smooth", "threshold")},
    default_solver={"smooth": "native", "threshold": "native"},
    time_limit_key={"native": "time_limit"}, iteration_limit_key={"native": None},
    default_for=("smooth", "threshold"))


def _no_options(problem: object, spec: SolverSpec) -> None:
    if spec.options:
        raise ConfigError(
            f"the native {getattr(problem, 'family', 'fairopt')} back end takes no solver options "
            f"(got {sorted(spec.options)}); set tol and max_iter instead, or choose backend "
            "'scipy', 'cvxpy' or 'pyomo', whose options are passed to the solver.")


def solve_smooth(problem: SmoothOracle, spec: SolverSpec, x0: np.ndarray, tol: float, max_iter: int,
                 deadline: float | None) -> NativeResult:
    """Run ``problem.native_solve(x0, tol, max_iter, deadline)``."""
    _no_options(problem, spec)
    return problem.native_solve(x0, tol, max_iter, deadline)


def solve_own(problem: Any, spec: SolverSpec, **options: Any) -> Any:
    """Run ``problem.solve_native(**options)`` (a formulation's exact algorithm)."""
    # ``problem`` is any formulation with a ``solve_native`` method; the result is its own type
    _no_options(problem, spec)
    return problem.solve_native(**options)
