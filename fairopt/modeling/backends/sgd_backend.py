"""``sgd``: projected stochastic gradient with averaging, the problem's own streaming algorithm.

Dispatches to the problem's ``solve_sgd`` method with the spec's options (``n_steps``,
``batch_size``, ``step_size``, ``sampling``, ``random_state``) merged under the caller's. A
fixed number of stochastic steps is approximate: the result is never certified optimal.
"""
from __future__ import annotations

from fairopt.modeling.spec import BackendInfo

INFO = BackendInfo(
    name="sgd", module="numpy",
    description="projected stochastic gradient with averaging (streaming threshold debiasing)",
    solvers={"sgd": ("threshold",)}, default_solver={"threshold": "sgd"},
    time_limit_key={"sgd": None}, iteration_limit_key={"sgd": "n_steps"})


def solve_own(problem, spec, **options):
    """Run ``problem.solve_sgd(**options)`` with the spec's options underneath."""
    return problem.solve_sgd(**{**dict(spec.options), **options})
