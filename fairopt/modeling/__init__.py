"""The modeling core: canonical programs, named solutions, solver registry and back ends.

>>> from fairopt.modeling import Program
>>> prog = Program(name="example")
"""
from fairopt.modeling.canonical import Canonical, to_solution
from fairopt.modeling.kinds import ColumnGenerationMaster, LazyRows
from fairopt.modeling.program import Constraint, Program, ProgramSummary, Variable
from fairopt.modeling.registry import (
                                       BACKENDS,
                                       available_backends,
                                       check_spec,
                                       default_spec,
                                       installed_specs,
                                       parse_solver,
                                       resolve_solver,
)
from fairopt.modeling.solution import Solution, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

__all__ = ["BACKENDS", "BackendInfo", "Canonical", "ColumnGenerationMaster", "Constraint", "LazyRows", "Program",
           "ProgramSummary", "Solution", "SolverSpec", "Status", "Variable", "available_backends", "check_spec",
           "default_spec", "installed_specs", "parse_solver", "resolve_solver", "to_solution"]
