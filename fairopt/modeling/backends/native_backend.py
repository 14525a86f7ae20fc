"""``native``: the problem's own algorithm.

fairopt's formulations carry algorithms of their own: damped Newton on the max-entropy dual,
L-BFGS with the exact inner multiplier on fair log-loss, exact threshold roots for randomized
threshold debiasing and transport statistics problems, accelerated projected gradient on a
least-squares problem over the simplex (``projected_gradient``, kind ``simplex_qp``). This back
end only dispatches: a smooth problem runs its
:meth:`~fairopt.modeling.smooth.SmoothProblem.native_solve`, any other problem its
``solve_native`` method. ``native`` takes no solver options (tolerance and iteration limit are
the formulation's own parameters); ``projected_gradient`` takes ``tol`` and ``max_iter``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from fairopt.errors import ConfigError
from fairopt.modeling.backends.base import SmoothOracle
from fairopt.modeling.solution import NativeResult
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

#: options of the projected-gradient method
PG_OPTIONS = ("tol", "max_iter")

INFO = BackendInfo(
    name="native", module="numpy",
    description="the problem's own algorithm: Newton or L-BFGS on smooth duals (max-entropy, fair "
                "log-loss with its exact inner multiplier), exact roots for threshold debiasing",
    solvers={"native": ("smooth", "threshold", "transport"), "projected_gradient": ("simplex_qp",)},
    default_solver={"smooth": "native", "threshold": "native", "transport": "native",
                    "simplex_qp": "projected_gradient"},
    time_limit_key={"native": "time_limit", "projected_gradient": None},
    time_limit_classes=("smooth", "threshold", "transport"),
    iteration_limit_key={"native": None, "projected_gradient": "max_iter"},
    accuracy={"projected_gradient": 1e-6},
    duals=("native",), default_for=("smooth", "threshold", "transport", "simplex_qp"))


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
    """Run ``problem.solve_native(**options)`` (a formulation's exact algorithm); for
    ``projected_gradient`` the spec's ``tol`` and ``max_iter`` go underneath ``options``."""
    # ``problem`` is any formulation with a ``solve_native`` method; the result is its own type
    if spec.solver == "projected_gradient":
        reject_unknown_options("native:projected_gradient", spec.options, PG_OPTIONS)
        return problem.solve_native(**{**dict(spec.options), **options})
    _no_options(problem, spec)
    return problem.solve_native(**options)
