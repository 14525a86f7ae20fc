"""Type aliases shared by the optimized-preprocessing modules."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy as np

    from fairopt.modeling.spec import SolverSpec

#: a solver: ``"backend[:solver]"``, a spec or a config table
SolverLike: TypeAlias = "str | SolverSpec | Mapping[str, Any]"
#: what ``solve(solver=...)`` takes: a solver, or ``None`` for the default one
SolverArg: TypeAlias = "str | SolverSpec | Mapping[str, Any] | None"
#: a seed or generator for :func:`numpy.random.default_rng`
RandomState: TypeAlias = "int | np.random.Generator | None"
#: one discrimination row: (group index, other group index or -1 for the target, label index)
RowMeta: TypeAlias = "tuple[int, int, int]"
