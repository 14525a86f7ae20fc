"""What :meth:`Program.summary <fairopt.modeling.Program.summary>` reports: :class:`ProgramSummary`
and the bound and row-kind digests it prints (re-exported by :mod:`fairopt.modeling.program`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ProgramSummary"]


def _range(arr: np.ndarray) -> list[float] | float | None:
    if arr.size == 0:
        return None
    lo, hi = float(arr.min()), float(arr.max())
    return lo if lo == hi else [lo, hi]


def _row_kind(lb: np.ndarray, ub: np.ndarray) -> str:
    eq = lb == ub
    if eq.all():
        return "=="
    kinds = []
    if (np.isfinite(lb) & ~eq).any():
        kinds.append(">=")
    if (np.isfinite(ub) & ~eq).any():
        kinds.append("<=")
    if eq.any():
        kinds.append("==")
    return ",".join(kinds) or "free"


@dataclass
class ProgramSummary:
    """Printable, JSON-friendly description of a :class:`Program`.

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> prog = Program("toy")
    >>> _ = prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    >>> summary = prog.summary()
    >>> summary.problem_class, summary.n_variables, summary.variables[0]["ub"]
    ('LP', 2, 1.0)
    """

    name: str
    sense: str
    problem_class: str
    n_variables: int
    n_constraints: int
    nnz: int
    quadratic_nnz: int
    variables: list[dict[str, Any]]
    constraints: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        """The summary as a plain dictionary.

        Returns
        -------
        dict
            Field name to value.
        """
        return dict(self.__dict__)

    def __str__(self) -> str:
        lines = [f"program {self.name}: {self.problem_class}, {self.sense}, "
                 f"{self.n_variables} variables, {self.n_constraints} rows, {self.nnz} nonzeros"
                 + (f", {self.quadratic_nnz} quadratic nonzeros" if self.quadratic_nnz else "")]
        lines.append("  variables:")
        lines += [f"    {v['name']:<24} shape={tuple(v['shape'])!s:<14} lb={v['lb']} ub={v['ub']}"
                  + (" integer" if v.get("integer") else "")
                  for v in self.variables]
        lines.append("  constraints:")
        lines += [f"    {c['name']:<24} rows={c['rows']:<8} nnz={c['nnz']:<8} {c['kind']:<8} "
                  f"blocks={c['blocks']}" for c in self.constraints]
        return "\n".join(lines)
