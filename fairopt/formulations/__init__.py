"""The declarative fairness models. Each builds a solver-agnostic program (or a smooth convex
model) from data and parameters, solves it on any suitable back end and reports a named result."""
