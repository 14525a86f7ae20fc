"""Solver back ends, one module ``<name>_backend`` each, declaring ``INFO``
(:class:`~fairopt.modeling.spec.BackendInfo`) and, per problem class it takes, ``compile(program,
spec)`` (LP, QP, MILP: a :class:`~fairopt.modeling.backends.base.CompiledModel`),
``solve_smooth(problem, spec, ...)`` (smooth) or ``solve_own(problem, spec, ...)`` (the
problem's own algorithms). Adding a back end means adding a module here; nothing else changes."""
