"""Exposure-fair rankings for one query or a batch: :func:`fair_ranking`.

Given relevances ``u`` and group labels of the items of each query, find the probabilistic
ranking ``P`` (doubly stochastic, ``P[i, j]`` = probability that item ``i`` is at position
``j``) maximising the expected utility ``u' P v`` subject to group fairness of exposure within
``eps`` (:mod:`fairopt.constraints.ranking` has the definitions and the blocks for a user's own
model). The result carries ``P``, the utility, the exposure per group, the price of fairness
``d U*/d eps`` and a Birkhoff–von Neumann decomposition of ``P`` into deterministic rankings.

Two methods give the same optimum:

- ``method="colgen"`` (default): column generation over permutations
  (:mod:`fairopt.ranking.colgen`); pricing is a sort, the master has ``2K + 1`` rows per query,
  and all queries of a batch share one block-diagonal master.
- ``method="lp"``: the LP over ``P`` built from the blocks
  :func:`~fairopt.constraints.doubly_stochastic` and :func:`~fairopt.constraints.exposure_block`
  on any LP back end of :class:`~fairopt.modeling.Program` (the reference; ``n^2`` variables).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd

from fairopt.constraints.builders import encode_groups
from fairopt.constraints.ranking import (
    CRITERIA,
    check_position_weights,
    doubly_stochastic,
    exposure_block,
    position_weights,
)
from fairopt.errors import DataValidationError, InfeasibleError, SizeLimitError
from fairopt.modeling.lazy_columns import resolve_pricing_solver
from fairopt.modeling.registry import resolve_solver
from fairopt.ranking.bvn import BirkhoffDecomposition, birkhoff_decomposition
from fairopt.ranking.colgen import BatchMaster

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from fairopt.modeling import SolverSpec

    _Floats = NDArray[np.float64]
    #: one query's solution: ``P``, utility, price of fairness, decomposition and solver facts
    _Solved = tuple[NDArray[np.float64] | None, float, float, BirkhoffDecomposition, dict[str, Any]]

__all__ = ["BirkhoffDecomposition", "RankingResult", "birkhoff_decomposition", "fair_ranking"]


#: default memory limit of the dense ranking matrix ``P`` (1 GiB: ``n`` up to about 11,500 items);
#: pass ``max_bytes`` to :func:`fair_ranking` or :meth:`RankingResult.dense` to change it
MAX_DENSE_BYTES = 2 ** 30


@dataclass
class RankingResult:
    """One query's fair ranking.

    Column generation never forms the ``n x n`` matrix ``P``: the result holds its Birkhoff–von
    Neumann decomposition and the item exposures ``P v``, and builds ``P`` on first access
    (refused with :class:`~fairopt.errors.SizeLimitError` above ``max_bytes``).

    Attributes
    ----------
    utility, utility_unfair : float
        ``u' P v`` of the fair ranking and of the ranking by relevance.
    price_of_fairness : float
        ``d U*/d eps`` at the given ``eps`` (utility one more unit of allowed disparity buys).
    decomposition : BirkhoffDecomposition
        Deterministic rankings and their probabilities reproducing ``P``.
    item_exposure : ndarray of shape (n_items,)
        Expected exposure ``(P v)_i`` of each item.
    max_bytes : int or None
        Memory limit of :attr:`P` (``None``: no limit).

    Examples
    --------
    >>> import numpy as np
    >>> res = fair_ranking(np.array([1.0, 0.9, 0.2, 0.1]), np.array(["a", "a", "b", "b"]), eps=0.0)
    >>> res.exposure["exposure"].round(6).tolist()
    [0.640402, 0.640402]
    >>> res.P.shape
    (4, 4)
    """

    utility: float
    utility_unfair: float
    price_of_fairness: float
    exposure_columns: dict[str, Any] = field(repr=False)
    decomposition: BirkhoffDecomposition
    item_exposure: np.ndarray = field(repr=False)
    n_positions: int
    info: dict[str, Any] = field(default_factory=dict)
    max_bytes: int | None = MAX_DENSE_BYTES
    _dense: np.ndarray | None = field(default=None, repr=False)

    @property
    def P(self) -> np.ndarray:
        """Probability ``P[i, j]`` that item ``i`` is shown at position ``j``, shape
        ``(n_items, n_positions)`` (built from the decomposition on first access, within
        :attr:`max_bytes`)."""
        return self.dense(self.max_bytes)

    def dense(self, max_bytes: int | None = MAX_DENSE_BYTES) -> np.ndarray:
        """The ranking matrix ``P``, refused with :class:`~fairopt.errors.SizeLimitError` if it
        needs more than ``max_bytes`` (``None``: no limit).

        Examples
        --------
        >>> import numpy as np
        >>> res = fair_ranking(np.array([1.0, 0.5, 0.2]), np.array(["a", "b", "a"]), eps=0.1)
        >>> float(res.dense().sum())
        3.0
        """
        if self._dense is None:
            n, m = self.decomposition.n_items, self.n_positions
            _check_dense(n, m, max_bytes, "the ranking matrix P")
            self._dense = self.decomposition.matrix()[:, :m]
        return self._dense

    @property
    def exposure(self) -> pd.DataFrame:
        """Per group: ``size``, ``merit``, ``exposure``, ``fairness`` and the ``*_unfair`` values
        (built on access, so a batch of thousands of queries does not pay for its tables)."""
        cols = dict(self.exposure_columns)
        index = pd.Index(cols.pop("group"), name="group")
        return pd.DataFrame(cols, index=index)

    @property
    def disparity(self) -> float:
        """Largest difference of the compared value between groups."""
        f = self.exposure_columns["fairness"]
        return float(f.max() - f.min())


def _check_dense(n: int, m: int, max_bytes: int | None, what: str,
                 instead: str = "use the decomposition or item_exposure instead") -> None:
    need = 8 * int(n) * int(m)
    if max_bytes is not None and need > max_bytes:
        raise SizeLimitError(
            f"{what} of {n} items x {m} positions needs {need / 2**30:.3g} GiB, above the limit of "
            f"{max_bytes / 2**30:.3g} GiB; {instead}, or pass "
            f"max_bytes=None (or a larger limit) to allow it.", needed_bytes=need, limit_bytes=max_bytes)


def _queries(relevance: Any, groups: Any) -> tuple[bool, list[_Floats], list[np.ndarray]]:
    """Lists of per-query relevance vectors and group labels (a single query -> one entry)."""
    if isinstance(relevance, (list, tuple)) and len(relevance) == 0:
        raise DataValidationError("relevance is empty; pass the scores of one query (1-D) or of a batch of queries.")
    if isinstance(relevance, (list, tuple)):
        single = np.ndim(relevance[0]) == 0          # a plain list of scores is one query
    else:
        single = np.asarray(relevance).ndim == 1
    if single:
        rel, grp = [relevance], [groups]
    elif isinstance(relevance, (list, tuple)):
        rel, grp = list(relevance), list(groups)
    else:
        rel, grp = list(np.asarray(relevance, dtype=float)), list(np.asarray(groups, dtype=object))
    if len(rel) != len(grp):
        raise DataValidationError(f"{len(rel)} queries of relevances but {len(grp)} of group labels.")
    rel = [np.asarray(r, dtype=float).reshape(-1) for r in rel]
    grp = [np.asarray(g).reshape(-1) for g in grp]
    for q, (r, g) in enumerate(zip(rel, grp, strict=False)):
        if r.shape != g.shape:
            raise DataValidationError(f"query {q}: {r.size} relevances but {g.size} group labels.")
        if r.size < 2 or not np.isfinite(r).all():
            raise DataValidationError(f"query {q}: relevances must be finite, at least two items.")
    return single, rel, grp


def fair_ranking(relevance: ArrayLike | Sequence[ArrayLike], groups: ArrayLike | Sequence[ArrayLike], eps: float, *,
                 criterion: Literal["parity", "merit", "impact"] = "parity", k: int | None = None,
                 v: ArrayLike | None = None, method: Literal["colgen", "lp"] = "colgen",
                 solver: str | SolverSpec | None = None,
                 max_rounds: int = 20_000,
                 max_bytes: int | None = MAX_DENSE_BYTES) -> RankingResult | list[RankingResult]:
    """Utility-maximising rankings with group fairness of exposure, for one query or a batch.

    Parameters
    ----------
    relevance : array-like of shape (n,), (Q, n), or a list of Q arrays
        Relevance (utility) of each item of each query.
    groups : array-like of the same shape(s)
        Group label of each item (labels are shared across queries; a query may lack a group).
    eps : float
        Largest allowed difference between groups of the compared value (>= 0).
    criterion : {"parity", "merit", "impact"}
        Mean exposure, exposure per unit of merit, or click-through per unit of merit.
    k : int, optional
        Show only the first ``k`` positions (``v_j = 0`` beyond ``k``; ``P`` is ``n x k``).
    v : array-like, optional
        Position weights, one per shown position (default ``1 / log2(1 + j)``).
    method : {"colgen", "lp"}
        Column generation over permutations (fast) or the LP over ``P`` (reference).
    solver : str or SolverSpec, optional
        LP solver for ``method="lp"`` (any LP solver of ``fairopt solvers``; default the
        registry's). For ``method="colgen"``: a solver of the ``pricing`` kind, or any LP solver
        with duals, which then solves the restricted masters (re-solved each round; the default
        warm-starts them). Parsed and checked up front: an unknown solver raises
        :class:`~fairopt.errors.UnknownSolverError` listing the installed LP solvers.
    max_rounds : int
        Cap on column-generation rounds.
    max_bytes : int or None
        Memory limit of a dense ``n x n`` matrix: ``method="lp"`` (whose LP has ``n^2`` variables)
        is refused up front above it, and so is reading :attr:`RankingResult.P`. Column
        generation never forms the matrix (default 1 GiB; ``None``: no limit).

    Returns
    -------
    RankingResult or list of RankingResult
        One result per query (a list for a batch).

    Raises
    ------
    SizeLimitError
        ``method="lp"`` would need a dense ``n x n`` variable above ``max_bytes``.
    InfeasibleError
        No ranking meets ``eps`` (possible for merit/impact or top-k); ``constraint`` names the
        block and ``tightest["eps"]`` gives the smallest feasible eps.

    Examples
    --------
    >>> import numpy as np
    >>> res = fair_ranking(np.array([0.9, 0.8, 0.5, 0.4]), np.array(["a", "a", "b", "b"]), eps=0.05)
    >>> round(res.disparity, 6) <= 0.05, round(float(res.decomposition.weights.sum()), 9)
    (True, 1.0)
    """
    if criterion not in CRITERIA:
        raise DataValidationError(f"criterion must be one of {CRITERIA}, got {criterion!r}.")
    if method not in ("colgen", "lp"):
        raise DataValidationError(f"method must be 'colgen' or 'lp', got {method!r}.")
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise DataValidationError(f"eps must be a number >= 0 (the largest exposure gap), got {eps!r}.")
    eps = float(eps)
    if not np.isfinite(eps) or eps < 0:
        raise DataValidationError(f"eps must be finite and >= 0, got {eps}.")
    # parsed once, where it enters: column generation takes a solver of its kind or an LP solver
    # with duals for its restricted masters, the LP over P any LP solver
    spec = resolve_pricing_solver(solver) if method == "colgen" else resolve_solver(solver, "LP")
    single, rel, grp = _queries(relevance, groups)
    if method == "lp":  # n^2 variables, plus the solver's copies: refuse before building anything
        for scores in rel:
            _check_dense(scores.size, scores.size if k is None else min(int(k), scores.size), max_bytes,
                         "method='lp' (one LP variable per item and position)",
                         "use method='colgen', which never forms the matrix")
    codes_all, labels = encode_groups(np.concatenate(grp))
    codes = np.split(codes_all, np.cumsum([r.size for r in rel])[:-1])   # one view per query
    K = len(labels)
    if criterion != "parity":
        for query, scores in enumerate(rel):
            if (scores < 0).any():
                raise DataValidationError(f"query {query}: criterion={criterion!r} needs nonnegative relevances.")
    results: list[RankingResult | None] = [None] * len(rel)
    sizes = np.array([r.size for r in rel])
    for n in np.unique(sizes):  # queries of equal length share one vectorised master
        idx = np.flatnonzero(sizes == n)
        vv = _weights(v, k, int(n))
        R = np.vstack([rel[q] for q in idx])
        C = np.vstack([codes[q] for q in idx])
        coef = _coefficients(R, C, K, criterion, labels, idx)
        # solve on relevances scaled to max |u| = 1 per query, so solver tolerances mean the same
        # at every scale; the merit criterion's compared value scales as 1 / scale, so its eps does
        scale = np.abs(R).max(axis=1)
        scale = np.where(scale > 0, scale, 1.0)
        eps_q = eps * scale if criterion == "merit" else np.full(idx.size, eps)
        Rn = R / scale[:, None]
        coef_n = coef * scale[:, None] if criterion == "merit" else coef
        if method == "colgen":
            out = _solve_colgen(Rn, C, K, coef_n, vv, eps_q, criterion, labels, idx, max_rounds, scale, spec)
        else:
            out = [_solve_lp(Rn[r], C[r], labels, vv, float(eps_q[r]), criterion, spec, q, float(scale[r]))
                   for r, q in enumerate(idx)]
        m = int(np.count_nonzero(vv)) if k is not None else int(n)
        for r, q in enumerate(idx):
            P, util, price, dec, info = out[r]
            if dec.orders.shape[1] > m:  # top-k: only the shown positions
                dec = BirkhoffDecomposition(dec.weights, dec.orders[:, :m], dec.n_items)
            # back to the caller's units: U = scale U_n; eps_n = eps (parity, impact) or scale eps (merit)
            util, price = util * scale[r], price * scale[r] * (scale[r] if criterion == "merit" else 1.0)
            results[q] = _result(P, m, util, price, dec, R[r], C[r], K, labels, vv, coef[r], info, max_bytes)
    # every query's entry is filled above
    return cast("RankingResult | list[RankingResult]", results[0] if single else results)


def _weights(v: ArrayLike | None, k: int | None, n: int) -> np.ndarray:
    if v is None:
        return position_weights(n, k)
    vv = check_position_weights(v)
    if vv.shape[0] > n:
        raise DataValidationError(f"{vv.shape[0]} position weights for a query of {n} items.")
    return np.concatenate([vv, np.zeros(n - vv.shape[0])])


def _coefficients(R: _Floats, C: np.ndarray, K: int, criterion: str, labels: np.ndarray, idx: np.ndarray) -> _Floats:
    """``c_i s_{g(i)}`` per item: the compared value of group ``a`` is ``sum_{i in a} coef_i (P v)_i``."""
    Q, _n = R.shape
    flat = (np.arange(Q)[:, None] * K + C).ravel()
    size = np.bincount(flat, minlength=Q * K).reshape(Q, K).astype(float)
    if criterion == "parity":
        s = np.divide(1.0, size, out=np.zeros_like(size), where=size > 0)
        return np.take_along_axis(s, C, axis=1)            # s[q, C[q, i]]
    merit = np.bincount(flat, weights=R.ravel(), minlength=Q * K).reshape(Q, K)
    merit = np.divide(merit, size, out=np.zeros_like(merit), where=size > 0)
    zero = (size > 0) & (merit <= 0)
    if zero.any():
        q, a = np.argwhere(zero)[0]
        raise DataValidationError(f"query {idx[q]}: group {labels[a]!r} has zero merit (mean relevance), so "
                                  f"exposure per unit of merit is undefined; use criterion='parity'.")
    s = np.divide(1.0, size * merit, out=np.zeros_like(size), where=size > 0)
    c = np.ones_like(R) if criterion == "merit" else R
    return np.take_along_axis(s, C, axis=1) * c


def _infeasible(criterion: str, eps: float, tightest: ArrayLike, queries: np.ndarray) -> InfeasibleError:
    worst = float(np.nanmax(tightest))
    which = ", ".join(str(q) for q in queries[:10]) + (" ..." if len(queries) > 10 else "")
    return InfeasibleError(
        f"fairness block 'exposure_{criterion}' is infeasible at eps={eps:g} for query {which}: the "
        f"smallest feasible eps is {worst:.6g}; use eps >= that (or another criterion).",
        program="fair_ranking", constraint=f"exposure_{criterion}", tightest={"eps": worst})


def _solve_colgen(R: _Floats, C: np.ndarray, K: int, coef: _Floats, v: _Floats, eps: _Floats, criterion: str,
                  labels: np.ndarray, idx: np.ndarray, max_rounds: int, scale: _Floats,
                  spec: SolverSpec) -> list[_Solved]:
    master = BatchMaster(R, C, K, coef, v, solver=spec)
    res = master.solve_fair(eps, max_rounds)
    if not np.isnan(res.tightest).all():
        bad = np.flatnonzero(~np.isnan(res.tightest))
        tight = res.tightest[bad] / (scale[bad] if criterion == "merit" else 1.0)
        raise _infeasible(criterion, float(eps[bad[0]] / (scale[bad[0]] if criterion == "merit" else 1.0)),
                          tight, idx[bad])
    out: list[_Solved] = []
    n = R.shape[1]
    for q in range(R.shape[0]):
        dec = BirkhoffDecomposition(res.weights[q], res.orders[q].astype(np.int64), n)
        info = {"method": "colgen", "rounds": res.rounds, "columns": res.columns}
        out.append((None, float(res.utility[q]), float(res.price[q]), dec, info))
    return out


def _solve_lp(u: _Floats, codes: np.ndarray, labels: np.ndarray, v: _Floats, eps: float, criterion: str,
              solver: str | SolverSpec | None, q: int | np.integer[Any], scale: float) -> _Solved:
    from fairopt.modeling import Program
    n = u.shape[0]
    m = int(np.flatnonzero(v)[-1]) + 1 if v.any() else 1
    vv = v[:m]
    present = np.unique(codes)
    g = labels[codes] if present.size > 1 else None
    prog = Program("fair_ranking")
    prog.add_variables("P", shape=(n, m), lb=0.0, ub=1.0)
    doubly_stochastic(n, m).add_to(prog, "P")
    block = None
    if g is not None:
        block = exposure_block(np.asarray(g, dtype=object), eps, criterion=criterion, relevance=u, v=vv,
                               name=f"exposure_{criterion}")
        block.add_to(prog, "P")
    prog.set_objective(linear={"P": np.outer(u, vv).ravel()}, sense="maximize")
    try:
        sol = prog.solve(solver, require_optimal=True)
    except InfeasibleError:
        coef = _coefficients(u[None], codes[None], len(labels), criterion, labels, np.array([q]))
        # the tightest eps by phase one of column generation, on the registry's default solver of
        # its kind (exact; the LP's own solver may be a first-order one)
        probe = BatchMaster(u[None], codes[None], len(labels), coef, np.r_[vv, np.zeros(n - m)])
        unit = scale if criterion == "merit" else 1.0
        tight = probe.solve_fair(np.array([eps])).tightest / unit
        raise _infeasible(criterion, eps / unit, tight, np.array([q])) from None
    P = _round_off(sol.primal["P"].reshape(n, m))
    price = block.price_of_fairness(sol).parameters["eps"] if block is not None else 0.0
    return P, float(sol.objective), float(price), birkhoff_decomposition(P), {"method": "lp", "backend": sol.backend}


def _round_off(P: _Floats, sweeps: int = 500) -> _Floats:
    """Remove a solver's round-off from a (sub-)doubly stochastic ``P``, for the Birkhoff-von
    Neumann decomposition: entries below 1e-9 become 0 and the rest are clipped to 1, then columns
    are scaled to sum 1 and rows to sum at most 1 (Sinkhorn sweeps). Where the dropped entries
    leave no doubly stochastic scaling, only the clipping is kept. A first-order solver's point
    (OSQP, PDLP) moves by about its tolerance; a simplex point does not move."""
    clipped = np.clip(P, 0.0, 1.0)
    for start in (np.where(clipped < 1e-9, 0.0, clipped), clipped):
        Q = _sinkhorn(start, sweeps)
        if Q is not None:
            return Q
    return clipped


def _sinkhorn(P: _Floats, sweeps: int) -> _Floats | None:
    """Columns to sum 1, rows to sum (at most, for top-k) 1; ``None`` if that is not reached to 1e-12."""
    square = P.shape[0] == P.shape[1]
    for _ in range(sweeps):
        cols = P.sum(axis=0, keepdims=True)
        if (cols <= 0).any():
            return None
        P = P / cols
        rows = P.sum(axis=1, keepdims=True)
        over = np.ones_like(rows, dtype=bool) if square else rows > 1.0
        P = np.where(over & (rows > 0), P / np.where(rows > 0, rows, 1.0), P)
        if np.abs(P.sum(axis=0) - 1).max() <= 1e-12 and (P.sum(axis=1) <= 1 + 1e-12).all():
            return P
    return None


def _result(P: _Floats | None, m: int, util: float, price: float, dec: BirkhoffDecomposition, u: _Floats,
            codes: np.ndarray, K: int, labels: np.ndarray, v: _Floats, coef: _Floats, info: dict[str, Any],
            max_bytes: int | None) -> RankingResult:
    counts = np.bincount(codes, minlength=K)
    present = np.flatnonzero(counts)             # the groups of this query, in code order
    lab = labels[present]

    def per_group(x: _Floats) -> _Floats:
        return (np.bincount(codes, weights=x, minlength=K) / np.maximum(counts, 1))[present]

    size = counts[present]
    if P is not None:
        P = P[:, :m]
        m = P.shape[1]
        e_fair = P @ v[:m]
    else:  # (P v)_i = sum_t w_t v[position of i in ranking t], without forming P
        e_fair = np.zeros(u.shape[0])
        T, k = dec.orders.shape
        np.add.at(e_fair, dec.orders, dec.weights[:, None] * np.broadcast_to(v[:k], (T, k)))
    e_unfair = np.empty(u.shape[0])
    e_unfair[np.argsort(-u, kind="stable")] = v
    table = {"group": list(lab), "size": size, "merit": per_group(u)}
    for key, e in (("", e_fair), ("_unfair", e_unfair)):
        table[f"exposure{key}"] = per_group(e)
        table[f"fairness{key}"] = np.bincount(codes, weights=coef * e, minlength=K)[present]
    return RankingResult(utility=util, utility_unfair=float(u @ e_unfair), price_of_fairness=price,
                         exposure_columns=table, decomposition=dec, item_exposure=e_fair, n_positions=m,
                         info=info, max_bytes=max_bytes, _dense=P)
