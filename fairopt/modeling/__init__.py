"""The modeling core: canonical programs, named solutions, solver registry and back ends.

>>> from fairopt.modeling import Program
>>> prog = Program(name="example")
"""
from fairopt.modeling.program import Constraint, Program, ProgramSummary, Variable
from fairopt.modeling.registry import (BACKENDS, SolverSpec, available_backends, installed_specs)
from fairopt.modeling.solution import Solution, Status

__all__ = ["BACKENDS", "Constraint", "Program", "ProgramSummary", "Solution", "SolverSpec", "Status",
           "Variable", "available_backends", "installed_specs"]
