"""Fairness blocks whose tolerances are solver parameters: a cvxpy ``Parameter`` or a pyomo mutable
``Param`` per tolerance, so a sweep over ``eps`` (or ratio, shares, bounds) changes a value and
re-solves the same model instead of rebuilding the block.

Every builder's rows depend linearly on each tolerance ``theta`` (through the bounds, or through
the coefficients of ``x`` or of the level ``t``), with the derivatives stored in the block's
``sensitivity`` table; so the rows are written once as::

    (A0 + sum_theta theta dA) x + (T0 + sum_theta theta dT) t  (>= or <=)  b0 + sum_theta theta db

with ``A0 = A - theta_0 dA`` etc. at the block's current values ``theta_0``.
:meth:`FairnessBlock.set_tolerance` updates the block's own arrays (so prices read afterwards
refer to the new values) and every parameter created from it.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt._param_validation import Interval, check_value
from fairopt.constraints.targets import BlockLike, CvxpyBlock, check_size
from fairopt.errors import DataValidationError, ParameterError

if TYPE_CHECKING:
    import cvxpy as cp
    import pyomo.environ as pyo

#: per tolerance: the derivatives ``(dA, dT, db)`` of the rows' coefficients and bounds
_Derivs = dict[str, tuple[sp.csr_matrix, np.ndarray, np.ndarray]]


def _parts(block: BlockLike) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, _Derivs]:
    """``A0, T0, b0`` and per tolerance ``(dA, dT, db)`` (sparse / dense, zeros where absent)."""
    m, n, p = block.m, block.n, block.n_aux
    A0, T0, b0 = block.A.copy().astype(float), block.T.astype(float).copy(), block.bound.astype(float).copy()
    deriv = {}
    for key, s in block.sensitivity.items():
        theta = float(block.parameters[key])
        dA = s.dA if s.dA is not None else sp.csr_matrix((m, n))
        dT = s.dT if s.dT is not None else np.zeros((m, p))
        db = np.asarray(s.dbound, dtype=float)
        A0 = A0 - theta * dA
        T0 = T0 - theta * dT
        b0 = b0 - theta * db
        deriv[key] = (sp.csr_matrix(dA), np.asarray(dT, dtype=float), db)
    return sp.csr_matrix(A0), T0, b0, deriv


def check_tolerance(block: BlockLike, key: str, value: object, where: str = "set_tolerance") -> float:
    """``value`` as the float tolerance ``key`` of ``block``, checked against the domain its
    builder declared (``Sensitivity.domain``; any finite number if none): the one check of a
    tolerance on every path (builder, :meth:`~fairopt.constraints.FairnessBlock.set_tolerance`,
    a pyomo ``Param`` of :meth:`~fairopt.constraints.FairnessBlock.to_pyomo_parametric`).

    Raises
    ------
    ParameterError
        ``key`` is no tolerance of the block, or ``value`` is outside its domain.
    """
    if key not in block.sensitivity:
        raise ParameterError(f"fairness block {block.name!r} has no tolerance {key!r}; its tolerances are "
                             f"{list(block.sensitivity)}.")
    domain = getattr(block.sensitivity[key], "domain", None)
    check_value(key, value, [domain or Interval(Real, None, None, closed="neither")], f"{block.name}.{where}")
    return float(value)  # type: ignore[arg-type]


def _set_tolerance(block: BlockLike, values: Mapping[str, float]) -> None:
    new = {k: float(block.parameters[k]) for k in block.sensitivity}
    for k, v in values.items():   # every value checked before anything changes
        new[k] = check_tolerance(block, k, v)
    A0, T0, b0, deriv = _parts(block)
    A, T, b = A0.copy(), T0.copy(), b0.copy()
    for k, (dA, dT, db) in deriv.items():
        A = A + new[k] * dA
        T = T + new[k] * dT
        b = b + new[k] * db
    block.A, block.T, block.bound = sp.csr_matrix(A), T, b
    block.parameters.update(new)
    for handle in getattr(block, "_handles", []):
        handle(new)


def _build_cvxpy_parametric(block: BlockLike, x: cp.Expression) -> CvxpyBlock:
    import cvxpy as cp
    size = int(np.prod(x.shape)) if x.shape else 1
    check_size(block, size, "cvxpy expression x")
    xv = x if len(x.shape) == 1 else cp.reshape(x, (size,), order="C")
    aux = cp.Variable(block.n_aux, name=block.aux_name) if block.n_aux else None
    A0, T0, b0, deriv = _parts(block)
    params = {k: cp.Parameter(name=f"{block.name}_{k}".replace("[", "_").replace("]", ""),
                              value=float(block.parameters[k])) for k in deriv}
    parts = []
    for s in (1, -1):
        rows = np.flatnonzero(block.sense == s)
        if not rows.size:
            continue
        lhs = A0[rows] @ xv
        if aux is not None:
            lhs = lhs + T0[rows] @ aux
        rhs = b0[rows]
        for k, (dA, dT, db) in deriv.items():
            term = None
            if dA[rows].nnz:
                term = dA[rows] @ xv
            if aux is not None and np.any(dT[rows]):
                term = dT[rows] @ aux if term is None else term + dT[rows] @ aux
            if term is not None:
                lhs = lhs + params[k] * term
            if np.any(db[rows]):
                rhs = rhs + params[k] * db[rows]
        parts.append((rows, lhs >= rhs if s > 0 else lhs <= rhs))
    out = CvxpyBlock(block, x, aux, parts)
    out.parameters = params

    def update(values: Mapping[str, float], params: dict[str, cp.Parameter] = params) -> None:
        for k, p in params.items():
            p.value = values[k]
    block._handles = [*getattr(block, "_handles", []), update]
    return out


def _build_pyomo_parametric(block: BlockLike, var: pyo.Var, name: str,
                            index: Iterable[Any] | None = None) -> pyo.Block:
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression
    if not getattr(var, "is_indexed", lambda: False)():
        raise DataValidationError(f"to_pyomo_parametric needs an indexed pyomo Var, got {type(var).__name__}.")
    keys = list(var.index_set()) if index is None else list(index)
    check_size(block, len(keys), f"pyomo variable {var.name!r}")
    model = var.parent_block()
    if model.component(name) is not None:
        raise DataValidationError(f"the pyomo model already has a component named {name!r}; pass name=....")
    model.add_component(name, pyo.Block())
    blk = model.component(name)
    blk.aux = pyo.Var(range(block.n_aux), domain=pyo.Reals)
    A0, T0, b0, deriv = _parts(block)
    names = list(deriv)

    def valid(_: pyo.Block, value: object, key: str) -> bool:   # a value set on the Param directly too
        check_tolerance(block, key, value, where="tolerance")
        return True
    blk.tolerance = pyo.Param(names, mutable=True, initialize={k: float(block.parameters[k]) for k in names},
                              validate=valid)
    flat = [var[k] for k in keys] + [blk.aux[j] for j in range(block.n_aux)]
    M0 = sp.hstack([A0, sp.csr_matrix(T0)], format="csr")
    dM = {k: sp.hstack([dA, sp.csr_matrix(dT)], format="csr") for k, (dA, dT, _) in deriv.items()}

    def linear(M: sp.csr_matrix, r: int) -> Any:  # a pyomo LinearExpression
        a, b = M.indptr[r], M.indptr[r + 1]
        return LinearExpression(constant=0.0, linear_coefs=M.data[a:b].tolist(),
                                linear_vars=[flat[j] for j in M.indices[a:b]])

    def rule(_: pyo.Block, r: int) -> object:  # one expression per row from CSR slices; tolerances: mutable params
        expr = linear(M0, r)
        rhs = float(b0[r])
        for k in names:
            if dM[k].indptr[r + 1] > dM[k].indptr[r]:
                expr = expr + blk.tolerance[k] * linear(dM[k], r)
            if deriv[k][2][r]:
                rhs = rhs + float(deriv[k][2][r]) * blk.tolerance[k]
        return expr >= rhs if block.sense[r] > 0 else expr <= rhs
    blk.rows = pyo.Constraint(range(block.m), rule=rule)
    blk._fairopt = (block, var, keys)

    def update(values: Mapping[str, float], blk: pyo.Block = blk) -> None:
        for k in names:
            blk.tolerance[k] = values[k]
    block._handles = [*getattr(block, "_handles", []), update]
    return blk
