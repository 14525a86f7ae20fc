"""A fairness block over part of a :class:`~fairopt.modeling.Program` variable, or over a linear
expression of it (per period, cumulative), by composing its rows with a selection matrix."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.constraints.targets import BlockLike
    from fairopt.modeling import Program
    from fairopt.modeling.program import Constraint


def _selection_matrix(over: ArrayLike | sp.spmatrix, size: int, n: int) -> sp.csr_matrix:
    """``M`` of shape ``(n, size)`` from entry indices or a matrix."""
    if sp.issparse(over) or (isinstance(over, np.ndarray) and over.ndim == 2):
        M = sp.csr_matrix(over, dtype=float)
        if M.shape != (n, size):
            raise DataValidationError(f"over: a matrix must have shape ({n}, {size}) (block entries x variable "
                                      f"entries), got {M.shape}.")
        return M
    idx = np.asarray(over).reshape(-1)
    if idx.dtype == bool:
        idx = np.flatnonzero(idx)
    if not np.issubdtype(idx.dtype, np.integer):
        raise DataValidationError("over: give integer entry indices, a boolean mask or a matrix.")
    if idx.size != n:
        raise DataValidationError(f"over selects {idx.size} entries but the block has {n}.")
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise DataValidationError(f"over: indices must be in [0, {size}).")
    return sp.csr_matrix((np.ones(n), (np.arange(n), idx)), shape=(n, size))


def _add_over(block: BlockLike, program: Program, var: str, over: ArrayLike | sp.spmatrix) -> Constraint:
    if var not in program.variables:
        raise DataValidationError(f"program {program.name!r} has no variable {var!r}; "
                                  f"known: {list(program.variables)}.")
    M = _selection_matrix(over, program.variables[var].size, block.n)
    coeffs = {var: (block.A @ M).tocsr()}
    if block.n_aux:
        program.add_variables(block.aux_name, shape=(block.n_aux,), lb=None, ub=None)
        coeffs[block.aux_name] = sp.csr_matrix(block.T)
    block._program_map = M
    return program.add_constraints(block.name, coeffs, lb=block.lb, ub=block.ub)
