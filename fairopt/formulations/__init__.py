"""The declarative fairness models. Each builds a solver-agnostic program (or a smooth convex
model) from data and parameters, solves it on any suitable back end and reports a named result."""

#: packages that register algorithms of their own with :func:`fairopt.modeling.registry.register_algorithm`;
#: the registry imports them when a spec or ``fairopt solvers`` needs those names
ALGORITHM_OWNERS = ("fairopt.formulations.maxent", "fairopt.formulations.constrained_classification")
