"""``sgd``: projected stochastic gradient with averaging, the problem's own streaming algorithm.

Dispatches to the problem's ``solve_sgd`` method with the spec's options (``n_steps``,
``batch_size``, ``step_size``, ``sampling``, ``random_state``) merged under the caller's. A
fixed number of stochastic steps is approximate: the result is never certified optimal.
"""
from __future__ import annotations

from typing import Any

from fairopt.modeling.spec import BackendInfo, SolverSpec

INFO = BackendInfo(
    name="sgd", module="numpy",
    description="projected stochastic gradient with averaging (streaming threshold debiasing)",
    solvers={"sgd": ("threshold",)}, default_solver={"threshold": "sgd"},
    time_limit_key={"sgd": None}, iteration_limit_key={"sgd": "n_steps"}, accuracy={"sgd": 1e-2})


def solve_own(problem: Any, spec: SolverSpec, **options: Any) -> Any:
    """Run ``problem.solve_sgd(**options)`` with the spec's options underneath."""
    # ``problem`` is any formulation with a ``solve_sgd`` method; the result is its own type
    return problem.solve_sgd(**{**dict(spec.options), **options})
