"""Rate parity over the intersections of several protected columns, and lazy row generation.

:func:`intersectional_parity` builds the rate-parity block over every intersectional cell
(race x sex x age band x region ...) with at least ``min_size`` members; cells below the minimum
are reported (``block.excluded``, and a warning) rather than silently dropped. With ``K`` cells
the full block has ``2K`` rows; :func:`solve_lazy` solves a :class:`~fairopt.modeling.Program`
plus a block by adding only the rows the current point violates to the back end's compiled
model (``CompiledModel.add_rows``; HiGHS adds them in place) and re-solving from the previous
basis, until no row is violated; :func:`solve_parity` picks row generation or the full block
by the number of cells. A point that
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

from fairopt.constraints.block import FairnessBlock
from fairopt.constraints.builders import _rate_parity, _vector
from fairopt.constraints.leximin_targets import copy_program
from fairopt.errors import DataValidationError, FairoptError, InfeasibleError, SolverError
from fairopt.modeling.registry import SolverSpec

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.constraints.block import PriceOfFairness
    from fairopt.modeling import Program


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
    primal: dict[str, Any]
    dual: dict[str, Any]
    rows_generated: int
    rounds: int
    full_rows: int
    seconds: float
    generated: np.ndarray | None = field(repr=False, default=None)
    log: list[Any] = field(repr=False, default_factory=list)

    def price_of_fairness(self, block: FairnessBlock, var: str) -> PriceOfFairness:
        """The block's :class:`~fairopt.constraints.PriceOfFairness` (rows and ``d f*/d eps``)."""
        return block._price(self.dual[block.name], self.primal[var], self.primal[block.aux_name])


def _tightest_eps(program: Program, var: str, block: FairnessBlock, spec: SolverSpec) -> float | None:
    """Smallest ``eps`` for which ``program`` with ``block`` on ``var`` is feasible: ``eps``
    becomes a variable ``w >= 0`` in the rows whose bound moves with it, minimised. ``None`` if
    the block has no ``eps`` or the program is infeasible for every eps."""
    sens = block.sensitivity.get("eps")
    if sens is None or sens.dA is not None or sens.dT is not None:
        return None
    work = copy_program(program)
    work.add_variables(block.aux_name, block.n_aux, lb=None, ub=None)
    slack = f"{block.name}_eps"
    work.add_variables(slack, 1, lb=0.0, ub=None)
    db = np.asarray(sens.dbound, dtype=float)
    bound = block.bound - float(block.parameters["eps"]) * db
    work.add_constraints(block.name, {var: block.A, block.aux_name: block.T, slack: -db[:, None]},
                         lb=np.where(block.sense > 0, bound, -np.inf), ub=np.where(block.sense < 0, bound, np.inf))
    work.set_objective(linear={slack: [1.0]})
    try:
        sol = work.solve(spec, require_optimal=True)
    except FairoptError:
        return None
    return float(sol.primal[slack][0])


#: cells from which :func:`solve_parity` generates rows instead of adding the full block: at 1,200
#: cells and 10^5 candidates the row generation is faster than the full LP
#: (benchmarks/results/intersectional.json); below it the full LP is small anyway
LAZY_MIN_CELLS = 200


def solve_lazy(program: Program, var: str, block: FairnessBlock, *, tol: float = 1e-9,
               max_rows_per_round: int | None = None, max_rounds: int = 10_000,
               options: Mapping[str, Any] | None = None, seed: ArrayLike | None = None,
               solver: str | SolverSpec | None = None) -> LazySolution:
    """Solve ``program`` with ``block`` on variable ``var`` by row generation.

    The program is compiled once for the back end of ``solver`` (the registry's LP default when
    ``None``) with the options the back end declares for restricted masters (HiGHS: presolve off,
    since each round adds a few rows to a model re-solved from its last basis, and the first
    master by interior point with crossover, the re-solves by warm dual simplex;
    :func:`fairopt.modeling.registry.restricted_master_options`); violated rows are appended to
    the compiled model (``CompiledModel.add_rows``) and the model re-solved.

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
        Solver options, on top of the restricted-master ones (e.g. ``{"presolve": "on"}``).
    seed : array-like of int, optional
        Rows of the block to add before the first solve.
    solver : str or SolverSpec, optional
        ``"backend[:solver]"`` for the restricted masters (default: the registry's LP default).

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
    from fairopt.modeling.registry import master_resolve_options, resolve_solver, restricted_master_options
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
    if block.aux_name in canon.var_slices:
        raise DataValidationError(f"program {program.name!r} already has a variable {block.aux_name!r}; rename "
                                  "the block.")
    base = resolve_solver(solver, "LP")
    spec = SolverSpec.parse(base, options={**restricted_master_options(base, "LP"), **dict(options or {})})
    work = copy_program(program)
    work.add_variables(block.aux_name, block.n_aux, lb=None, ub=None)
    work.set_objective(linear={v: canon.sense * canon.c[sl] for v, sl in canon.var_slices.items()},
                       constant=canon.sense * canon.constant, sense=program.sense)
    model = work.compile(spec)
    A = block.A.tocsr()
    generated = np.zeros(block.m, dtype=bool)
    order: list[np.ndarray] = []
    rounds = 0
    log = []
    pending = None if seed is None else np.unique(np.asarray(seed, dtype=np.int64))

    def add(rows: np.ndarray) -> None:
        model.add_rows(f"{block.name}_round{len(order)}", {var: A[rows], block.aux_name: block.T[rows]},
                       lb=np.where(block.sense[rows] > 0, block.bound[rows], -np.inf),
                       ub=np.where(block.sense[rows] < 0, block.bound[rows], np.inf))
        generated[rows] = True
        order.append(rows)
    while True:
        if pending is not None and pending.size:
            add(pending)
            pending = None
        try:
            sol = model.solve(require_optimal=True)
        except InfeasibleError:
            tight = _tightest_eps(program, var, block, base)
            hint = (f" The smallest feasible eps is {tight:.6g}." if tight is not None
                    else " The program is infeasible at any eps (check its other constraints).")
            raise InfeasibleError(f"program {program.name!r} with fairness block {block.name!r} is infeasible "
                                  f"(after {int(generated.sum())} generated rows).{hint}",
                                  program=program.name, constraint=block.name,
                                  tightest=None if tight is None else {"eps": tight}) from None
        x, t = np.asarray(sol.primal[var]).ravel(), np.asarray(sol.primal[block.aux_name]).ravel()
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
        if not rounds:   # e.g. a first solve by interior point, then warm simplex re-solves
            model.set_options({**master_resolve_options(base, "LP"), **dict(options or {})})
        add(viol)
        rounds += 1
        log.append((time.perf_counter() - t0, int(viol.size)))
        if rounds > max_rounds:
            raise SolverError(f"row generation did not converge in {max_rounds} rounds; raise max_rounds.")
    y = np.zeros(block.m)
    for k, rows in enumerate(order):
        y[rows] = sol.dual[f"{block.name}_round{k}"]
    primal = {v: np.asarray(val) for v, val in sol.primal.items()}
    return LazySolution(objective=float(sol.objective), primal=primal, dual={block.name: y},
                        rows_generated=int(generated.sum()), rounds=rounds + 1, full_rows=block.m,
                        seconds=time.perf_counter() - t0, generated=generated, log=log)


def solve_parity(program: Program, var: str, block: FairnessBlock, *, method: str = "auto",
                 solver: str | SolverSpec | None = None) -> LazySolution:
    """Solve ``program`` with a (many-cell) parity ``block`` on ``var`` by whichever path is
    faster: row generation (:func:`solve_lazy`) from ``LAZY_MIN_CELLS`` (200) cells, else the full
    block added to a copy of the program and solved once.

    Parameters
    ----------
    program, var, block
        As for :func:`solve_lazy`.
    method : {"auto", "lazy", "full"}
    solver : str or SolverSpec, optional

    Returns
    -------
    LazySolution
        For the full path ``rows_generated == full_rows`` and ``rounds == 1``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from fairopt.modeling import Program
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1] * 3, "b": [0, 1] * 6})
    >>> prog = Program("pick")
    >>> _ = prog.add_variables("x", shape=12, lb=0, ub=1)
    >>> _ = prog.add_constraints("size", {"x": np.ones((1, 12))}, ub=6)
    >>> prog.set_objective(linear={"x": np.arange(12.0)}, sense="maximize")
    >>> round(solve_parity(prog, "x", intersectional_parity(df, eps=0.0)).objective, 6)
    49.0
    """
    if method not in ("auto", "lazy", "full"):
        raise DataValidationError(f"method must be 'auto', 'lazy' or 'full', got {method!r}.")
    if method == "lazy" or (method == "auto" and len(block.groups) >= LAZY_MIN_CELLS):
        return solve_lazy(program, var, block, solver=solver)
    t0 = time.perf_counter()
    work = copy_program(program)
    canon = program.canonical()
    work.set_objective(linear={v: canon.sense * canon.c[sl] for v, sl in canon.var_slices.items()},
                       constant=canon.sense * canon.constant, sense=program.sense)
    block.add_to(work, var)
    sol = work.solve(solver, require_optimal=True)
    return LazySolution(objective=float(sol.objective), primal={k: np.asarray(v) for k, v in sol.primal.items()},
                        dual={block.name: np.asarray(sol.dual[block.name])}, rows_generated=block.m, rounds=1,
                        full_rows=block.m, seconds=time.perf_counter() - t0,
                        generated=np.ones(block.m, dtype=bool))
