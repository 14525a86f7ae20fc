"""Blocks for exposure-fair rankings over a user's ``n x m`` matrix variable ``P``.

``P[i, j]`` is the probability that item ``i`` is shown at position ``j`` (``m = n`` positions,
or ``m = k < n`` for a top-k ranking). The blocks act on ``vec(P) = P.ravel()`` (row-major, the
layout of a 2-D :class:`~fairopt.modeling.Program` variable and of ``cp.vec(P, order="C")``).

Definitions (Singh & Joachims 2018, fixed here):

- position weights ``v_1 = 1``, ``v_j = 1 / log2(1 + j)`` (:func:`position_weights`), or a user's
  own nonnegative click model;
- exposure of item ``i``: ``(P v)_i``; exposure of group ``a``: ``E_a = mean_{i in a} (P v)_i``;
- merit of group ``a``: ``M_a = mean_{i in a} u_i`` of the relevances ``u``;
- the three criteria compare ``E_a`` (parity), ``E_a / M_a`` (exposure proportional to merit) or
  ``CTR_a / M_a`` with ``CTR_a = mean_{i in a} u_i (P v)_i`` (impact); ``eps`` bounds the largest
  difference between groups.

"Largest difference <= eps" is written against an auxiliary band, as in
:func:`~fairopt.constraints.selection_rate_parity`: ``f_a - t >= 0`` and ``f_a - t <= eps`` for
every group, ``2K`` rows instead of ``K(K-1)`` pairs. The duals of the ``<= eps`` rows sum to
``d f*/d eps``, the price of fairness; with pairwise rows the same derivative is spread over
whichever pairs happen to bind, and a degenerate optimum gives non-unique pair duals.

The doubly-stochastic rows are a separate block (:func:`doubly_stochastic`), so a user may
replace them (top-k truncation, items pinned to positions, a different ranking polytope).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt._param_validation import NONNEGATIVE, check_count, check_value
from fairopt.constraints._scaling import power_of_two
from fairopt.constraints.block import FairnessBlock, Sensitivity
from fairopt.constraints.builders import _vector, encode_groups
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

CRITERIA = ("parity", "merit", "impact")


def position_weights(n_positions: int, k: int | None = None) -> np.ndarray:
    """Position weights ``v_j = 1 / log2(1 + j)`` for ``j = 1..n_positions`` (``v_1 = 1``), set
    to zero beyond the first ``k`` positions if ``k`` is given.

    Examples
    --------
    >>> position_weights(3).round(4).tolist()
    [1.0, 0.6309, 0.5]
    >>> position_weights(3, k=2).round(4).tolist()
    [1.0, 0.6309, 0.0]
    """
    n_positions = check_count("position_weights", "n_positions", n_positions)
    v = 1.0 / np.log2(1.0 + np.arange(1, n_positions + 1))
    if k is not None:
        v[check_count("position_weights", "k", k, high=n_positions):] = 0.0
    weights: np.ndarray = v
    return weights


def check_position_weights(v: ArrayLike, m: int | None = None) -> np.ndarray:
    """Validate a click model: finite, nonnegative, one weight per position.

    Examples
    --------
    >>> check_position_weights([1.0, 0.5, 0.2], 3).tolist()
    [1.0, 0.5, 0.2]
    """
    arr = np.asarray(v, dtype=float).reshape(-1)
    if m is not None and arr.shape[0] != m:
        raise DataValidationError(f"position weights v have {arr.shape[0]} entries; expected one per "
                                  f"position ({m}).")
    if arr.size == 0 or not np.isfinite(arr).all() or (arr < 0).any():
        raise DataValidationError("position weights v must be finite and nonnegative (a click "
                                  "probability per position).")
    return arr


# ------------------------------------------------------------------------ ranking polytope
def doubly_stochastic(n_items: int, n_positions: int | None = None, *, fixed: Mapping[int, int] | None = None,
                      name: str = "doubly_stochastic") -> FairnessBlock:
    """Rows making ``P`` (``n_items x n_positions``) a probabilistic ranking.

    Each position is filled exactly once (``sum_i P[i, j] = 1``); each item is shown exactly
    once (``sum_j P[i, j] = 1``) when ``n_positions == n_items``, at most once (``<= 1``) for a
    top-k ranking (``n_positions < n_items``). Equalities are written as two one-sided rows so
    each dual is a derivative with respect to one bound. ``fixed`` pins items to positions:
    ``{item: position}`` adds ``P[item, position] >= 1``.

    Parameters
    ----------
    n_items : int
    n_positions : int, optional
        Number of positions shown (default ``n_items``).
    fixed : mapping int -> int, optional
        Items (row indices) that must stay at a position (column index).
    name : str

    Returns
    -------
    FairnessBlock
        No tolerance; replace it with your own rows for another ranking polytope.

    Examples
    --------
    >>> from fairopt.modeling import Program
    >>> ds = doubly_stochastic(3, fixed={2: 0})
    >>> prog = Program("rank")
    >>> _ = prog.add_variables("P", shape=(3, 3), lb=0, ub=1)
    >>> _ = ds.add_to(prog, "P")
    >>> prog.set_objective(linear={"P": [3, 2, 1, 2, 1, 0, 1, 0, 0]}, sense="maximize")
    >>> prog.solve().primal["P"].reshape(3, 3)[2].round(6).tolist()
    [1.0, 0.0, 0.0]
    """
    n = check_count("doubly_stochastic", "n_items", n_items)
    m = n if n_positions is None else check_count("doubly_stochastic", "n_positions", n_positions)
    if n < 1 or not 1 <= m <= n:
        raise DataValidationError(f"a ranking needs 1 <= n_positions <= n_items; got n_items={n}, "
                                  f"n_positions={m}.")
    items = sp.kron(sp.eye(n), np.ones((1, m)), format="csr")    # row i: sum_j P[i, j]
    slots = sp.kron(np.ones((1, n)), sp.eye(m), format="csr")    # row j: sum_i P[i, j]
    parts: list[sp.csr_matrix] = []
    sense: list[int] = []
    labels: list[str] = []
    if m == n:
        parts += [items, items]
        sense += [1] * n + [-1] * n
        labels += [f"item[{i}] >= 1" for i in range(n)] + [f"item[{i}] <= 1" for i in range(n)]
    else:
        parts.append(items)
        sense += [-1] * n
        labels += [f"item[{i}] <= 1" for i in range(n)]
    parts += [slots, slots]
    sense += [1] * m + [-1] * m
    labels += [f"position[{j}] >= 1" for j in range(m)] + [f"position[{j}] <= 1" for j in range(m)]
    if fixed:
        if not isinstance(fixed, Mapping):
            raise DataValidationError("fixed must be a mapping item -> position.")
        it = np.array([int(i) for i in fixed], dtype=np.int64)
        pos = np.array([int(j) for j in fixed.values()], dtype=np.int64)
        if ((it < 0) | (it >= n)).any() or ((pos < 0) | (pos >= m)).any():
            raise DataValidationError(f"fixed: items must be in [0, {n}) and positions in [0, {m}); "
                                      f"got {dict(fixed)}.")
        if np.unique(pos).size != pos.size:
            raise DataValidationError(f"fixed: two items pinned to the same position in {dict(fixed)}.")
        parts.append(sp.csr_matrix((np.ones(it.size), (np.arange(it.size), it * m + pos)),
                                   shape=(it.size, n * m)))
        sense += [1] * it.size
        labels += [f"P[{i}, {j}] >= 1" for i, j in zip(it, pos, strict=False)]
    A = sp.vstack(parts, format="csr")
    bound = np.ones(A.shape[0])
    return FairnessBlock(name=name, kind="doubly_stochastic", groups=pd.Index([]), A=A,
                         T=np.zeros((A.shape[0], 0)), sense=np.asarray(sense, dtype=np.int8),
                         bound=bound, row_labels=labels, aux_names=[], parameters={})


# ------------------------------------------------------------------------ exposure
def _exposure_coefficients(codes: np.ndarray, K: int, relevance: np.ndarray | None,
                          criterion: str) -> tuple[np.ndarray, np.ndarray]:
    """Per item ``c_i`` and per group ``s_a`` such that the compared quantity of group ``a`` is
    ``f_a = s_a sum_{i in a} c_i (P v)_i`` (shared by the blocks and the ranking solvers)."""
    size = np.bincount(codes, minlength=K).astype(float)
    if criterion == "parity":
        return np.ones(codes.shape[0]), 1.0 / size
    merit = np.bincount(codes, weights=relevance, minlength=K) / size
    if (merit <= 0).any():
        a = int(np.argmax(merit <= 0))
        raise DataValidationError(f"group number {a} (in sorted label order) has zero merit (mean relevance), "
                                  "so exposure per unit of merit is undefined; use criterion='parity' or give "
                                  "positive relevances.")
    if criterion == "merit":
        c = np.ones(codes.shape[0])
    elif relevance is None:
        raise DataValidationError(f"criterion={criterion!r} needs the items' relevance.")
    else:
        c = relevance
    return c, 1.0 / (size * merit)


def exposure_block(groups: ArrayLike, eps: float, *, criterion: str = "parity",
                   relevance: ArrayLike | None = None, v: ArrayLike | None = None,
                   n_positions: int | None = None, name: str | None = None) -> FairnessBlock:
    """Group fairness of exposure over ``vec(P)``: ``max_a f_a - min_a f_a <= eps``.

    ``f_a`` is the group's mean exposure ``E_a`` (``criterion="parity"``), its exposure per unit
    of merit ``E_a / M_a`` (``"merit"``), or its click-through per unit of merit
    ``CTR_a / M_a`` (``"impact"``); see the module docstring for the definitions.

    Parameters
    ----------
    groups : array-like of shape (n_items,)
        Group label of each item (K >= 2 groups).
    eps : float
        Largest allowed difference between groups (>= 0, in exposure units, or exposure per unit
        of merit).
    criterion : {"parity", "merit", "impact"}
    relevance : array-like of shape (n_items,), optional
        Nonnegative relevances ``u`` (required for merit and impact).
    v : array-like of shape (n_positions,), optional
        Position weights (default :func:`position_weights`).
    n_positions : int, optional
        Number of columns of ``P`` (default ``len(v)`` or ``n_items``).
    name : str, optional
        Block name (default ``"exposure_" + criterion``).

    Returns
    -------
    FairnessBlock
        Rows ``f_a - t >= 0`` and ``f_a - t <= eps`` with auxiliary level ``t``; its price of
        fairness ``parameters["eps"]`` is ``d f*/d eps``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> u = np.array([0.9, 0.8, 0.3, 0.2])
    >>> g = np.array(["a", "a", "b", "b"])
    >>> prog = Program("rank")
    >>> _ = prog.add_variables("P", shape=(4, 4), lb=0, ub=1)
    >>> _ = doubly_stochastic(4).add_to(prog, "P")
    >>> fair = exposure_block(g, eps=0.05)
    >>> _ = fair.add_to(prog, "P")
    >>> prog.set_objective(linear={"P": np.outer(u, position_weights(4)).ravel()}, sense="maximize")
    >>> sol = prog.solve()
    >>> fair.violation(sol.primal["P"], sol.primal[fair.aux_name]) < 1e-9
    True
    """
    if criterion not in CRITERIA:
        raise DataValidationError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")
    codes, labels = encode_groups(groups)
    n, K = codes.shape[0], len(labels)
    check_value("eps", eps, [NONNEGATIVE], "exposure_block")   # largest difference between groups
    eps = float(eps)
    if n_positions is not None:
        n_positions = check_count("exposure_block", "n_positions", n_positions)
    if v is None:
        v = position_weights(n if n_positions is None else n_positions)
    v = check_position_weights(v, n_positions)
    m = v.shape[0]
    if m > n:
        raise DataValidationError(f"{m} position weights for {n} items; a ranking has at most one "
                                  "position per item.")
    rel = None
    if criterion != "parity":
        if relevance is None:
            raise DataValidationError(f"criterion={criterion!r} needs relevance (merit = mean relevance).")
        rel = _vector(relevance, n, "relevance", lo=0.0)
    c, s = _exposure_coefficients(codes, K, rel, criterion)
    # exposure per unit of merit carries 1 / the relevance scale: rows times that scale (a power
    # of two, see fairopt.constraints._scaling), bound and d bound / d eps with them
    f = power_of_two(float(np.abs(rel).max())) if criterion == "merit" and rel is not None else 1.0
    item_coef = s[codes] * c * f
    rows = np.repeat(codes, m)
    cols = np.arange(n * m)
    F = sp.csr_matrix((np.outer(item_coef, v).ravel(), (rows, cols)), shape=(K, n * m))
    A = sp.vstack([F, F], format="csr")
    T = -np.ones((2 * K, 1))
    sense = np.r_[np.ones(K), -np.ones(K)].astype(np.int8)
    bound = np.r_[np.zeros(K), np.full(K, eps * f)]
    what = {"parity": "exposure", "merit": "exposure_per_merit", "impact": "impact_per_merit"}[criterion]
    row_labels = ([f"{what}[{g}] - level >= 0" for g in labels]
                  + [f"{what}[{g}] - level <= eps" for g in labels])
    return FairnessBlock(name=name or f"exposure_{criterion}", kind=f"exposure_{criterion}", groups=labels,
                         A=A, T=T, sense=sense, bound=bound, row_labels=row_labels, aux_names=["level"],
                         parameters={"eps": eps},
                         sensitivity={"eps": Sensitivity(dbound=np.r_[np.zeros(K), np.full(K, f)],
                                                         domain=NONNEGATIVE)})


def exposure_parity(groups: ArrayLike, eps: float, *, v: ArrayLike | None = None, n_positions: int | None = None,
                    name: str = "exposure_parity") -> FairnessBlock:
    """Demographic parity of exposure: mean exposure per group within ``eps``
    (:func:`exposure_block` with ``criterion="parity"``).

    Examples
    --------
    >>> exposure_parity(["a", "a", "b"], eps=0.1).m
    4
    """
    return exposure_block(groups, eps, criterion="parity", v=v, n_positions=n_positions, name=name)


def exposure_merit(groups: ArrayLike, relevance: ArrayLike, eps: float, *,
                   v: ArrayLike | None = None, n_positions: int | None = None,
                   name: str = "exposure_merit") -> FairnessBlock:
    """Exposure proportional to merit: ``E_a / M_a`` within ``eps`` across groups
    (:func:`exposure_block` with ``criterion="merit"``).

    Examples
    --------
    >>> exposure_merit(["a", "a", "b"], [0.9, 0.5, 0.4], eps=0.1).kind
    'exposure_merit'
    """
    return exposure_block(groups, eps, criterion="merit", relevance=relevance, v=v,
                          n_positions=n_positions, name=name)


def exposure_impact(groups: ArrayLike, relevance: ArrayLike, eps: float, *,
                    v: ArrayLike | None = None, n_positions: int | None = None,
                    name: str = "exposure_impact") -> FairnessBlock:
    """Disparate impact of exposure: click-through per unit of merit ``CTR_a / M_a`` within
    ``eps`` across groups (:func:`exposure_block` with ``criterion="impact"``).

    Examples
    --------
    >>> exposure_impact(["a", "a", "b"], [0.9, 0.5, 0.4], eps=0.1).kind
    'exposure_impact'
    """
    return exposure_block(groups, eps, criterion="impact", relevance=relevance, v=v,
                          n_positions=n_positions, name=name)
