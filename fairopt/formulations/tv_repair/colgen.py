"""Column generation for huge mapping LPs: the method is the registered solver
``column_generation`` (:mod:`fairopt.modeling.backends.column_generation_backend`); this module
keeps its import path.

>>> from fairopt.formulations.tv_repair.colgen import solve_column_generation
>>> callable(solve_column_generation)
True
"""
from fairopt.modeling.backends.column_generation_backend import ColumnGenerationInfo, solve_column_generation

__all__ = ["ColumnGenerationInfo", "solve_column_generation"]
