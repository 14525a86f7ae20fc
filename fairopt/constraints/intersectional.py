"""Rate parity over the intersections of several protected columns, and lazy row generation.

:func:`intersectional_parity` builds the rate-parity block over every intersectional cell
(race x sex x age band x region ...) with at least ``min_size`` members; cells below the minimum
are reported (``block.excluded``, and a warning) rather than silently dropped. With ``K`` cells
the full block has ``2K`` rows; :func:`solve_lazy` solves a :class:`~fairopt.modeling.Program`
plus a block by adding only the rows the current point violates to a compiled HiGHS model
(``addRows``) and re-solving from the previous basis, until no row is violated. A point that
satisfies every row and is optimal for a relaxation of the full problem is optimal for the full
problem, so the optimum is the same; ungenerated rows get dual 0, which with the generated rows'
duals is a dual solution of the full LP, so the price of fairness is read as usual.
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.constraints.block import FairnessBlock
from fairopt.constraints.builders import _rate_parity, _vector
from fairopt.errors import DataValidationError, InfeasibleError, SolverError

if TYPE_CHECKING:
    import highspy
    from numpy.typing import ArrayLike

    from fairopt.constraints.block import PriceOfFairness
    from fairopt.modeling import Program
    from fairopt.modeling.canonical import Canonical


def intersectional_parity(groups: pd.DataFrame | ArrayLike | Mapping[str, ArrayLike], *, eps: float,
                          min_size: int = 1, weights: ArrayLike | None = None,
                          name: str = "intersectional_parity") -> FairnessBlock:
    """Rate parity across intersectional cells of several protected columns.

    Parameters
    ----------
    groups : DataFrame, 2-D array or mapping of columns
        Protected columns; each observed combination of their values is a cell.
    eps : float
        Largest allowed difference of rates between cells, in [0, 1].
    min_size : int
        Cells with fewer members are left out of the block (listed in ``block.excluded``).
    weights : array-like of shape (n,), optional
        Candidate weights defining the rate: 1 (selection rate, the default), ``y`` (true
        positive rate), ``1 - y`` (false positive rate).
    name : str

    Returns
    -------
    FairnessBlock
        The block of :func:`~fairopt.constraints.selection_rate_parity` over the kept cells, with
        an ``excluded`` DataFrame (cell, size) attribute.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sex": list("ffmmff"), "race": list("xxyyxy")})
    >>> block = intersectional_parity(df, eps=0.1, min_size=2)  # warns: cell ('f', 'y') is left out
    >>> [str(g) for g in block.groups], block.excluded["size"].tolist()
    (["('f', 'x')", "('m', 'y')"], [1])
    """
    from fairopt.validation import check_groups
    g = check_groups(groups, min_groups=2, name="protected columns")
    codes = np.asarray(g.codes, dtype=np.int64)
    n = codes.shape[0]
    min_size = int(min_size)
    if min_size < 1:
        raise DataValidationError(f"min_size must be >= 1, got {min_size}.")
    size = np.bincount(codes, minlength=len(g.labels))
    keep = size >= min_size
    if keep.sum() < 2:
        raise DataValidationError(f"only {int(keep.sum())} cell(s) have at least min_size={min_size} members; "
                                  "lower min_size or use fewer protected columns.")
    w = np.ones(n) if weights is None else _vector(weights, n, "weights", lo=0.0)
    new = np.cumsum(keep) - 1
    labels = pd.Index(list(g.labels[keep]), tupleize_cols=False)
    member = keep[codes]
    kept_codes = np.where(member, new[codes], 0)
    block = _rate_parity(name, "intersectional_parity", (kept_codes, labels),
                         [("rate", np.where(member, w, 0.0), "members with positive weight")], eps, None)
    block.excluded = pd.DataFrame({"cell": list(g.labels[~keep]), "size": size[~keep]})
    if (~keep).any():
        warnings.warn(f"intersectional_parity: {int((~keep).sum())} cell(s) with fewer than {min_size} members "
                      f"({int(size[~keep].sum())} candidates) are not constrained; see block.excluded.",
                      UserWarning, stacklevel=2)
    return block


@dataclass
class LazySolution:
    """Result of :func:`solve_lazy`.

    Attributes
    ----------
    objective : float
        Optimal objective (the program's sense).
    primal : dict of str to ndarray
        Values of the program's variables and of the block's auxiliary variables.
    dual : dict of str to ndarray
        ``dual[block.name]``: one dual per row of the full block (0 for rows never generated),
        in fairopt's convention (``d f*/d bound``).
    rows_generated, rounds : int
        Rows of the block added to the model, and re-solves.
    full_rows : int
        Rows of the full block.
    seconds : float

    Examples
    --------
    See :func:`solve_lazy`.
    """

    objective: float
    primal: dict
    dual: dict
    rows_generated: int
    rounds: int
    full_rows: int
    seconds: float
    generated: np.ndarray | None = field(repr=False, default=None)
    log: list = field(repr=False, default_factory=list)

    def price_of_fairness(self, block: FairnessBlock, var: str) -> PriceOfFairness:
        """The block's :class:`~fairopt.constraints.PriceOfFairness` (rows and ``d f*/d eps``)."""
        return block._price(self.dual[block.name], self.primal[var], self.primal[block.aux_name])


def _tightest_eps(canon: Canonical, s: slice, block: FairnessBlock) -> float | None:
    """Smallest ``eps`` for which the program (canonical form ``canon``, block on columns ``s``)
    is feasible: ``eps`` becomes a variable ``w >= 0`` in the rows whose bound moves with it,
    minimised. ``None`` if the block has no ``eps`` or the program is infeasible for every eps."""
    import highspy
    sens = block.sensitivity.get("eps")
    if sens is None or sens.dA is not None or sens.dT is not None:
        return None
    h = _highs_lp(canon, block.n_aux + 1)
    inf = highspy.kHighsInf
    h.changeColsCost(canon.n + block.n_aux + 1, np.arange(canon.n + block.n_aux + 1, dtype=np.int32),
                     np.r_[np.zeros(canon.n + block.n_aux), 1.0])
    h.changeColBounds(canon.n + block.n_aux, 0.0, inf)
    eps = float(block.parameters["eps"])
    db = np.asarray(sens.dbound, dtype=float)
    rows = sp.hstack([sp.csr_matrix((block.m, s.start)), block.A, sp.csr_matrix((block.m, canon.n - s.stop)),
                      sp.csr_matrix(block.T), sp.csr_matrix(-db[:, None])], format="csr")
    bound = block.bound - eps * db
    lo = np.where(block.sense > 0, bound, -inf)
    hi = np.where(block.sense < 0, bound, inf)
    h.addRows(block.m, lo, hi, rows.nnz, rows.indptr[:-1].astype(np.int32), rows.indices.astype(np.int32), rows.data)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return float(h.getSolution().col_value[canon.n + block.n_aux])


def _add_rows(h: highspy.Highs, block: FairnessBlock, A: sp.csr_matrix, viol: np.ndarray, s: slice,
              canon: Canonical, inf: float) -> None:
    k = viol.size
    new_rows = sp.hstack([sp.csr_matrix((k, s.start)), A[viol], sp.csr_matrix((k, canon.n - s.stop)),
                          sp.csr_matrix(block.T[viol])], format="csr")
    lo = np.where(block.sense[viol] > 0, block.bound[viol], -inf)
    hi = np.where(block.sense[viol] < 0, block.bound[viol], inf)
    h.addRows(k, lo, hi, new_rows.nnz, new_rows.indptr[:-1].astype(np.int32),
              new_rows.indices.astype(np.int32), new_rows.data)


def _highs_lp(canon: Canonical, n_aux: int) -> highspy.Highs:
    import highspy

    from fairopt.modeling.backends.base import quiet
    with quiet():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = canon.n + n_aux, canon.m
    lp.col_cost_ = np.r_[canon.c, np.zeros(n_aux)]
    lp.col_lower_ = np.r_[canon.xl, np.full(n_aux, -np.inf)]
    lp.col_upper_ = np.r_[canon.xu, np.full(n_aux, np.inf)]
    lp.row_lower_, lp.row_upper_ = canon.rl, canon.ru
    A = sp.hstack([canon.A, sp.csr_matrix((canon.m, n_aux))], format="csc")
    A.sort_indices()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = canon.n + n_aux, canon.m
    h.passModel(lp)
    return h


def solve_lazy(program: Program, var: str, block: FairnessBlock, *, tol: float = 1e-9,
               max_rows_per_round: int | None = None, max_rounds: int = 10_000,
               options: Mapping[str, Any] | None = None, seed: ArrayLike | None = None) -> LazySolution:
    """Solve ``program`` with ``block`` on variable ``var`` by row generation on HiGHS.

    Parameters
    ----------
    program : Program
        A linear program (no integer blocks) *without* the block.
    var : str
        The program variable the block's columns refer to.
    block : FairnessBlock
        Its rows are added only when violated by more than ``tol``.
    max_rows_per_round : int, optional
        Add at most this many of the most violated rows per round (default: all violated rows).
    max_rounds : int
    options : dict, optional
        HiGHS options (e.g. ``{"solver": "simplex"}``).
    seed : array-like of int, optional
        Rows of the block to add before the first solve.

    Returns
    -------
    LazySolution

    Raises
    ------
    InfeasibleError
        The program with the generated rows is infeasible (``constraint`` names the block).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from fairopt.modeling import Program
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1] * 3, "b": [0, 1] * 6})
    >>> block = intersectional_parity(df, eps=0.0)
    >>> prog = Program("pick")
    >>> _ = prog.add_variables("x", shape=12, lb=0, ub=1)
    >>> _ = prog.add_constraints("size", {"x": np.ones((1, 12))}, ub=6)
    >>> prog.set_objective(linear={"x": np.arange(12.0)}, sense="maximize")
    >>> sol = solve_lazy(prog, "x", block)
    >>> round(sol.objective, 6), sol.rows_generated <= block.m
    (49.0, True)
    """
    import highspy
    t0 = time.perf_counter()
    canon = program.canonical()
    if canon.is_mip or canon.P is not None:
        raise DataValidationError("solve_lazy takes a linear program (no integer blocks, no quadratic "
                                  "objective); solve the LP relaxation or add the block with add_to.")
    if var not in canon.var_slices:
        raise DataValidationError(f"program {program.name!r} has no variable {var!r}; known: {list(canon.var_slices)}.")
    s = canon.var_slices[var]
    if s.stop - s.start != block.n:
        raise DataValidationError(f"variable {var!r} has {s.stop - s.start} entries but block {block.name!r} "
                                  f"was built for {block.n}.")
    h = _highs_lp(canon, block.n_aux)
    for k, val in (options or {}).items():
        h.setOptionValue(k, val)
    A = block.A.tocsr()
    generated = np.zeros(block.m, dtype=bool)
    order = []
    inf = highspy.kHighsInf
    rounds = 0
    log = []
    pending = None if seed is None else np.unique(np.asarray(seed, dtype=np.int64))
    while True:
        if pending is not None and pending.size:
            viol, pending = pending, None
            _add_rows(h, block, A, viol, s, canon, inf)
            generated[viol] = True
            order.append(viol)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            tight = _tightest_eps(canon, s, block)
            hint = (f" The smallest feasible eps is {tight:.6g}." if tight is not None
                    else " The program is infeasible at any eps (check its other constraints).")
            raise InfeasibleError(f"program {program.name!r} with fairness block {block.name!r} is infeasible "
                                  f"(after {int(generated.sum())} generated rows).{hint}",
                                  program=program.name, constraint=block.name,
                                  tightest=None if tight is None else {"eps": tight})
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverError(f"row generation stopped with HiGHS status {h.modelStatusToString(status)}.",
                              status=str(status))
        z = np.asarray(h.getSolution().col_value)
        x, t = z[s], z[canon.n:]
        if not generated.any() and block.n_aux:
            # no row yet, so the level t is arbitrary: test the rows at the level that centres the
            # current rates instead (only genuinely spread-out cells count as violated)
            rates = block.A @ x
            t = np.full(block.n_aux, 0.5 * (rates.max() + rates.min()) - 0.5 * float(block.parameters.get("eps", 0)))
        gap = block.sense * (block.bound - block.activity(x, t))
        viol = np.flatnonzero((gap > tol) & ~generated)
        if viol.size == 0:
            break
        if max_rows_per_round is not None and viol.size > max_rows_per_round:
            viol = viol[np.argsort(-gap[viol])[:max_rows_per_round]]
        _add_rows(h, block, A, viol, s, canon, inf)
        generated[viol] = True
        order.append(viol)
        rounds += 1
        log.append((time.perf_counter() - t0, int(viol.size)))
        if rounds > max_rounds:
            raise SolverError(f"row generation did not converge in {max_rounds} rounds; raise max_rounds.")
    sol = h.getSolution()
    row_dual = np.asarray(sol.row_dual)
    y = np.zeros(block.m)
    rows = np.concatenate(order) if order else np.zeros(0, dtype=np.int64)
    y[rows] = canon.sense * row_dual[canon.m:canon.m + rows.size]
    info = h.getInfo()
    objective = canon.sense * (info.objective_function_value + canon.constant)
    primal = {v: z[sl].reshape(canon.var_shapes[v]) for v, sl in canon.var_slices.items()}
    primal[block.aux_name] = z[canon.n:]
    dual = {block.name: y}
    return LazySolution(objective=float(objective), primal=primal, dual=dual, rows_generated=int(generated.sum()),
                        rounds=rounds + 1, full_rows=block.m, seconds=time.perf_counter() - t0,
                        generated=generated, log=log)
