"""Registered solvers, one module ``<name>_backend`` each, declaring ``INFO``
(:class:`~fairopt.modeling.spec.BackendInfo`: the problem kinds each inner solver accepts and its
capabilities) and, per kind it accepts, ``compile(program, spec)`` (LP, QP, MILP: a
:class:`~fairopt.modeling.backends.base.CompiledModel`), ``solve_smooth(problem, spec, ...)``
(smooth) or ``solve_own(problem, spec, ...)`` (statistics problems, column- and row-generation
masters). Adding a solver means adding a module here and its name to :data:`NAMES`.

>>> "native" in NAMES
True
"""

#: every registered solver (back end), sorted (the order ``fairopt solvers`` lists them): the one
#: source of the names (:func:`fairopt.modeling.spec.backend_names` reads it without importing
#: any back end; the registry imports ``<name>_backend`` for each)
NAMES: tuple[str, ...] = ("column_generation", "column_pricing", "cvxpy", "highs", "native", "ortools", "osqp", "pyomo",
                          "row_generation", "scipy", "sgd")
