"""``column_generation``: fairopt's column generation for LPs with a huge variable block (kind
``colgen``, a :class:`~fairopt.modeling.kinds.ColumnGenerationMaster`).

Written for the mapping LP of Calmon et al. 2017 with 10^6..10^7 mapping cells: the mapping LP
has one variable per (record type, candidate cell) but few rows (validity and
distortion per record type, one utility row per key, a few discrimination rows), so an optimal
basis holds at most as many mapping cells as there are rows. :func:`solve_column_generation`
solves a *restricted master* over a small set of columns with HiGHS's simplex, prices every
column against its duals in one sparse product (``c - A' y``, vectorised), adds the most
negative ones and re-solves from the previous basis (a warm start: added columns keep the
basis primal feasible), until no column prices out. The final duals are then dual feasible
for the full LP, so the point is optimal for it; the certificate is checked on the full
program with :func:`fairopt.modeling.certify.max_violation` (primal feasibility) and
:func:`fairopt.modeling.certify.kkt_residual` (dual feasibility and complementary slackness),
not taken from the solver.

Infeasible starting sets are handled by elastic artificial columns (one per row side) with a
large cost: a positive artificial at convergence means the penalty was too small or the LP is
infeasible, and the full LP is then solved instead (the log says so).

The method is generic in the objective and the constraint blocks: it reads only the canonical
arrays of the :class:`~fairopt.modeling.Program` (``Program.canonical()``).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.errors import SolverError
from fairopt.modeling.canonical import to_solution
from fairopt.modeling.certify import FEAS_TOL, KKT_TOL, kkt_residual, max_violation
from fairopt.modeling.solution import Solution, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

if TYPE_CHECKING:
    import highspy

    from fairopt.modeling.kinds import ColumnGenerationMaster

__all__ = ["INFO", "ColumnGenerationInfo", "solve_column_generation", "solve_own"]

#: options of the method (the rest are HiGHS options of the restricted masters)
OWN_OPTIONS = ("max_rounds", "columns_per_round")


def _check_options(solver: str, options: Mapping[str, Any]) -> None:
    from fairopt.modeling.backends.highs_backend import check_options
    check_options("highs", {k: v for k, v in options.items() if k not in OWN_OPTIONS})


INFO = BackendInfo(
    name="column_generation", module="highspy",
    description="fairopt's column generation: restricted masters by HiGHS's primal simplex, "
                "vectorised pricing, optimality certified on the full LP",
    solvers={"column_generation": ("colgen",)}, default_solver={"colgen": "column_generation"},
    time_limit_key={"column_generation": None},
    iteration_limit_key={"column_generation": "max_rounds"},
    duals=("column_generation",), warm_start=("column_generation",), default_for=("colgen",),
    check_options=_check_options)

#: reduced cost below which a column enters the master
PRICE_TOL = 1e-10
#: cost of an artificial column, relative to the largest objective coefficient
ARTIFICIAL_COST = 1e4


class ColumnGenerationInfo(dict[str, Any]):
    """Diagnostics of a column-generation solve (a dict): ``rounds``, ``master_columns``,
    ``pricing_seconds``, ``master_seconds``, ``max_violation``, ``kkt_residual``.

    Examples
    --------
    >>> ColumnGenerationInfo(rounds=3)["rounds"]
    3
    """


def _highs(quiet: bool = True) -> highspy.Highs:
    import highspy
    h = highspy.Highs()  # type: ignore[no-untyped-call, unused-ignore]  # strict only: highspy ships no annotations
    h.setOptionValue("output_flag", not quiet)
    # tight tolerances: the certificate is checked on the full program afterwards
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("dual_feasibility_tolerance", 1e-10)
    h.setOptionValue("solver", "simplex")
    h.setOptionValue("simplex_strategy", 4)   # primal: added columns keep the basis primal feasible
    return h


def _add_columns(h: highspy.Highs, A_csc: sp.csc_matrix, cols: np.ndarray, c: np.ndarray, xl: np.ndarray,
                 xu: np.ndarray) -> None:
    sub = A_csc[:, cols]
    sub.sort_indices()
    h.addCols(len(cols), c[cols], xl[cols], xu[cols], int(sub.nnz), sub.indptr[:-1].astype(np.int32),
              sub.indices.astype(np.int32), sub.data)


def solve_column_generation(prog: Any, block: str, initial: ArrayLike, *, max_rounds: int = 200,
                            columns_per_round: int | None = None, verbose: bool = False,
                            options: dict[str, Any] | None = None) -> Solution:
    """Solve the LP ``prog`` by column generation over the variable block ``block``.

    Parameters
    ----------
    prog : Program
        A linear program (no quadratic terms, no integer variables).
    block : str
        Name of the (large) variable block whose columns are generated; every other variable is
        in the master from the start.
    initial : array of int or bool mask over the block
        Columns of ``block`` in the first master (for a mapping: each record type's own cell).
    max_rounds : int, default 200
        Pricing rounds before giving up (:class:`~fairopt.errors.SolverError`).
    columns_per_round : int, optional
        Most negative reduced costs added per round (default: three per row).
    verbose : bool, default False
        HiGHS log of the masters.

    Returns
    -------
    Solution
        ``status="optimal"`` only when the full-program certificate holds (primal violation
        ``<= FEAS_TOL``, KKT residual ``<= KKT_TOL``); ``info`` in ``solution.log`` and
        ``Solution.iterations`` (rounds).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("assign")
    >>> _ = prog.add_variables("x", shape=(6,), lb=0.0)
    >>> A = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 0, 1, 0, 0]])
    >>> _ = prog.add_constraints("rows", {"x": A[:2]}, lb=1.0, ub=1.0)
    >>> _ = prog.add_constraints("cap", {"x": A[2:]}, ub=1.0)
    >>> prog.set_objective(linear={"x": [1.0, 2.0, 3.0, 1.0, 5.0, 6.0]})
    >>> sol = solve_column_generation(prog, "x", [2, 5])
    >>> sol.status.value, round(sol.objective, 9)
    ('optimal', 3.0)
    """
    t0 = time.perf_counter()
    canon = prog.canonical()
    if canon.P is not None and canon.P.nnz:
        raise SolverError("column generation solves linear programs only; this program has a quadratic term.")
    if canon.integrality is not None and canon.integrality.any():
        raise SolverError("column generation solves linear programs only; this program has integer variables.")
    n, m = canon.n, canon.m
    blk = canon.var_slices[block]
    init = np.asarray(initial)
    init = np.flatnonzero(init) if init.dtype == bool else init.astype(np.int64)
    in_master = np.ones(n, dtype=bool)          # every column outside the block is always in
    in_master[blk] = False
    in_master[blk.start + init] = True
    A_csc = canon.A.tocsc()
    Ab_T = canon.A[:, blk].T.tocsr()             # pricing: reduced costs of the block in one product
    c, xl, xu = canon.c, canon.xl, canon.xu
    per_round = columns_per_round or 3 * m

    h = _highs(quiet=True)
    for k, v in (options or {}).items():
        h.setOptionValue(k, v)
    import highspy
    inf = highspy.kHighsInf
    rl = np.where(np.isfinite(canon.rl), canon.rl, -inf)
    ru = np.where(np.isfinite(canon.ru), canon.ru, inf)
    h.addRows(m, rl, ru, 0, np.zeros(m + 1, np.int32)[:-1], np.zeros(0, np.int32), np.zeros(0))
    order = np.flatnonzero(in_master)                # master column k is full column order[k]
    _add_columns(h, A_csc, order, c, np.where(np.isfinite(xl), xl, -inf), np.where(np.isfinite(xu), xu, inf))
    # elastic artificials, +e_i and -e_i, so that every master is feasible
    big = ARTIFICIAL_COST * max(1.0, float(np.abs(c).max(initial=0.0)))
    eye = sp.identity(m, format="csc")
    art = sp.hstack([eye, -eye], format="csc")
    h.addCols(2 * m, np.full(2 * m, big), np.zeros(2 * m), np.full(2 * m, inf), int(art.nnz),
              art.indptr[:-1].astype(np.int32), art.indices.astype(np.int32), art.data)
    n_art_start = len(order)

    pricing_s = master_s = 0.0
    rounds = 0
    while True:
        t = time.perf_counter()
        h.run()
        master_s += time.perf_counter() - t
        if verbose:
            print(f"round {rounds}: master {time.perf_counter() - t:.2f}s, {len(order)} columns,"
                  f" objective {h.getInfo().objective_function_value:.10g}")
        status = h.getModelStatus().name
        if status != "kOptimal":
            raise SolverError(f"the restricted master ended with HiGHS status {status}.", status=status)
        sol = h.getSolution()
        y = np.asarray(sol.row_dual)
        t = time.perf_counter()
        d = c[blk] - Ab_T @ y
        d[in_master[blk]] = 0.0
        neg = np.flatnonzero(d < -PRICE_TOL)
        pricing_s += time.perf_counter() - t
        if neg.size == 0:
            break
        rounds += 1
        if rounds > max_rounds:
            raise SolverError(f"column generation did not converge in {max_rounds} rounds.", status="iteration_limit")
        if neg.size > per_round:
            neg = neg[np.argpartition(d[neg], per_round)[:per_round]]
        new = blk.start + np.sort(neg)
        in_master[new] = True
        # new columns go after the artificials: keep a map of master index -> full column
        _add_columns(h, A_csc, new, c, xl, xu)
        order = np.concatenate([order, new])
    vals = np.asarray(sol.col_value)
    art_vals = vals[n_art_start:n_art_start + 2 * m]
    master = np.concatenate([vals[:n_art_start], vals[n_art_start + 2 * m:]])
    x = np.zeros(n)
    x[order] = master
    x = np.clip(x, np.where(np.isfinite(xl), xl, -np.inf), np.where(np.isfinite(xu), xu, np.inf))
    viol = max_violation(canon, x)
    kkt = kkt_residual(canon, x, y, None)
    info = ColumnGenerationInfo(rounds=rounds, master_columns=int(in_master[blk].sum()),
                                pricing_seconds=pricing_s, master_seconds=master_s,
                                artificial=float(art_vals.max(initial=0.0)), max_violation=viol, kkt_residual=kkt)
    ok = info["artificial"] <= FEAS_TOL and viol <= FEAS_TOL and kkt <= KKT_TOL
    log = ("column generation: " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                              for k, v in info.items())
           + ("; certified on the full program (primal feasibility and KKT)" if ok else "; NOT certified"))
    out = to_solution(canon, Status.OPTIMAL if ok else Status.NUMERICAL, x, y, None, backend=INFO.name,
                      solver=INFO.name, seconds=time.perf_counter() - t0, iterations=rounds, log=log)
    out.info = info
    return out


def solve_own(problem: ColumnGenerationMaster, spec: SolverSpec, **options: Any) -> Solution:
    """Solve a :class:`~fairopt.modeling.kinds.ColumnGenerationMaster`; the spec's options
    ``max_rounds`` and ``columns_per_round`` override the master's, the others are HiGHS options
    of the restricted masters (checked by :func:`~fairopt.modeling.registry.check_spec`)."""
    own = {k: v for k, v in spec.options.items() if k in OWN_OPTIONS}
    highs_options = {k: v for k, v in spec.options.items() if k not in OWN_OPTIONS}
    merged = {"max_rounds": problem.max_rounds, "columns_per_round": problem.columns_per_round, **own, **options}
    return solve_column_generation(problem.program, problem.block, problem.initial, verbose=spec.verbose,
                                   options=highs_options or None, **merged)
