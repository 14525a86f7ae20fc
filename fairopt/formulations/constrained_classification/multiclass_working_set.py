"""Exact working-set solve of the fair multiclass LP for many atoms.

The optimal rule is the argmin of the offset-adjusted cost ``a_k(s, g)``, randomized only on
ties (see :mod:`~fairopt.formulations.constrained_classification.multiclass_lp`), so far from
the decision boundaries an atom's class is known once the offsets are. The method:

1. offsets from the LP over a random subsample of atoms (weights rescaled per group), or from
   the smoothed small dual (:func:`solve_dual_working_set`, the scale path);
2. the ``n_free`` atoms with the smallest margin between their best and second-best adjusted
   cost (and every atom within ``tie_tol`` of a tie) stay free, each with only the *candidate*
   classes within the same window of its least adjusted cost; every other atom is pinned to
   its argmin class;
3. the LP over those columns
   (:mod:`~fairopt.formulations.constrained_classification.multiclass_restricted`: the pinned
   mass moves into the rows' bounds, and each free atom's first candidate is eliminated, so an
   atom with two candidates is one bounded column and no row) gives new offsets; an atom whose
   least adjusted cost is attained by no allowed class gets the classes within the window as
   candidates (a pinned one is freed), and step 3 repeats. When the pinned mass leaves no
   feasible point, the window quadruples its atom count (by margin) and step 3 repeats.

**Exactness.** When no atom objects, the restricted LP's primal plus the pinned one-hot rows,
with its duals and ``u_a = min_k a_k``, satisfy the full LP's primal and dual feasibility and
complementary slackness (every column left out, pinned atom or candidate-less class, has a
non-negative reduced cost): the result is optimal for the full LP, not an approximation. The
check runs in double precision on every atom that a single-precision screen cannot clear. If
``max_rounds`` pass without that certificate the full LP is solved.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt._docstrings import doc_with, fill_doc
from fairopt.errors import InfeasibleError
from fairopt.formulations.constrained_classification._multiclass_flat import margins_flat
from fairopt.formulations.constrained_classification.multiclass_dual import Prepared, dual_offsets
from fairopt.formulations.constrained_classification.multiclass_lp import (
    MulticlassSolution,
    MulticlassTransportLP,
    VectorAtoms,
)
from fairopt.formulations.constrained_classification.multiclass_restricted import (
    Restriction,
    assemble,
    certify,
    solve_restricted,
)

if TYPE_CHECKING:
    from fairopt.modeling import SolverSpec

__all__ = ["certify_from_offsets", "solve_auto", "solve_dual_working_set", "solve_working_set"]

#: LPs with more variables (atoms x classes) than this are solved by the working-set method
WORKING_SET_MIN = 50_000

#: atoms in the subsample that sets the first offsets, and free atoms per round
SAMPLE_ATOMS = 4000
FREE_ATOMS = 6000
MAX_ROUNDS = 12
#: atoms within this margin of a tie under the dual's offsets start free (capped), each with the
#: classes within it of its least adjusted cost: about 2.5 times the dual's last temperature
TIE_TOL = 1e-3


@doc_with(multiclass_lp_example="""
>>> import numpy as np
>>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
>>> from fairopt.modeling.registry import default_spec
>>> rng = np.random.default_rng(0)
>>> S = rng.dirichlet(np.ones(3), 3000); g = rng.integers(0, 2, 3000)
>>> lp = MulticlassTransportLP(collapse_vectors(S, g), 2, 1 - np.eye(3), "demographic_parity", 0.01)
""")
def solve_working_set(lp: MulticlassTransportLP, spec: SolverSpec, sample_atoms: int = SAMPLE_ATOMS,
                      free_atoms: int = FREE_ATOMS, max_rounds: int = MAX_ROUNDS,
                      random_state: int = 0, **options: Any) -> MulticlassSolution:
    """Solve ``lp`` exactly by the working-set method (see the module docstring).

    Examples
    --------
    {multiclass_lp_example}
    >>> ws = solve_working_set(lp, default_spec("LP"), sample_atoms=300, free_atoms=300)
    >>> full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    >>> bool(abs(ws.objective - full.objective) < 1e-9), ws.info["certified"]
    (True, True)
    """
    t0 = time.perf_counter()
    at, G, C = lp.atoms, lp.n_groups, lp.cost
    m = at.n_atoms
    rng = np.random.default_rng(random_state)
    # 1. first offsets: a subsample holding every group, its weights rescaled to the groups' totals
    pick = np.unique(np.concatenate([rng.choice(m, size=min(m, sample_atoms), replace=False),
                                     np.unique(at.group, return_index=True)[1]]))
    gw = np.bincount(at.group, weights=at.weight, minlength=G)
    sw = np.bincount(at.group[pick], weights=at.weight[pick], minlength=G)
    sub = VectorAtoms(group=at.group[pick], scores=at.scores[pick],
                      weight=at.weight[pick] * (gw / sw)[at.group[pick]], hashes=at.hashes[pick])
    first = MulticlassTransportLP(sub, G, C, lp.constraint, lp.eps)
    sol0 = first.solve_fixed(spec, None, t0, **options)
    return certify_from_offsets(lp, spec, sol0.D, sol0.b, free_atoms, max_rounds, t0, **options)


@fill_doc
def certify_from_offsets(lp: MulticlassTransportLP, spec: SolverSpec, D: np.ndarray, b: np.ndarray,
                         free_atoms: int, max_rounds: int, t0: float, tie_tol: float = 0.0,
                         prep: Prepared | None = None, **options: Any) -> MulticlassSolution:
    """Steps 2-3 of the working-set method from the offsets ``(D, b)``: free the ``free_atoms``
    atoms nearest a tie (and every atom within ``tie_tol`` of one, up to ``4 free_atoms``), each
    with the classes within the same window of its least adjusted cost, pin the others to their
    argmin class, and re-solve until the LP's duals certify every column left out
    (:mod:`~fairopt.formulations.constrained_classification.multiclass_restricted`).

    Examples
    --------
    {multiclass_lp_example}
    >>> zero = np.zeros((2, 3, 3)), np.zeros((2, 3))   # poor offsets: more rounds, same optimum
    >>> ws = certify_from_offsets(lp, default_spec("LP"), *zero, free_atoms=200, max_rounds=30, t0=0.0)
    >>> full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    >>> bool(abs(ws.objective - full.objective) < 1e-9), ws.info["certified"]
    (True, True)
    """
    at = lp.atoms
    m, K = at.n_atoms, at.scores.shape[1]
    prep = Prepared(lp) if prep is None else prep
    if prep.cond:
        A = prep.adjusted(D, b)
        arg = np.argmin(A, axis=1)
        margin = np.partition(A, 1, axis=1)[:, 1] - A[np.arange(m), arg] if K > 1 else np.full(m, np.inf)
    else:   # the selection needs no exactness (the certificate is exact): single precision
        arg, margin32 = margins_flat(prep.SCt, at.group, b)
        margin = margin32.astype(np.float64)
    n_free = min(max(free_atoms, min(int((margin <= tie_tol).sum()), 4 * free_atoms)), m)

    def window_for(count: int) -> float:   # the margin of the count-th atom nearest a tie (the cap holds)
        return float(np.partition(margin, count - 1)[count - 1]) if count < m else np.inf

    def near_classes(window: float) -> tuple[np.ndarray, np.ndarray]:   # atoms within it, their classes
        near = np.flatnonzero(margin <= window)
        rel = prep.adjusted_rows(D, b, near)
        return near, rel <= (rel.min(axis=1) + window)[:, None]

    window = window_for(n_free)
    near, allowed = near_classes(window)
    fixed = arg.astype(np.int64)
    fixed[near] = -1
    r = Restriction(fixed=fixed, free=near.astype(np.int64), allowed=allowed)
    rounds = 0
    for rounds in range(1, max_rounds + 1):   # 3. re-solve until no column left out objects
        try:
            rs = solve_restricted(lp, prep, spec, r, **options)
        except InfeasibleError:   # the pinned mass leaves the free atoms too little room: widen
            n_free = min(4 * n_free, m)
            window = window_for(n_free)
            r.widen(*near_classes(window))
            continue
        bad, extra = certify(prep, r, rs.D, rs.b, window)
        if bad.size == 0:
            return assemble(lp, prep, r, rs, t0, {"certified": True, "rounds": rounds, "n_free": int(r.free.size),
                                                  "n_columns": r.n_columns})
        r.widen(bad, extra)
    # no certificate within max_rounds: the full LP
    out = lp.solve_fixed(spec, None, t0, **options)
    out.info.update(certified=True, rounds=rounds, n_free=m, fallback="full LP")
    return out


@fill_doc
def solve_dual_working_set(lp: MulticlassTransportLP, spec: SolverSpec, free_atoms: int | None = None,
                           max_rounds: int = MAX_ROUNDS, tie_tol: float = TIE_TOL,
                           **options: Any) -> MulticlassSolution:
    """The working-set method started from the smoothed dual's offsets
    (:func:`~fairopt.formulations.constrained_classification.multiclass_dual.dual_offsets`): the
    scale path. Exact for the same reason as :func:`solve_working_set`.

    Examples
    --------
    {multiclass_lp_example}
    >>> ws = solve_dual_working_set(lp, default_spec("LP"))
    >>> full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    >>> bool(abs(ws.objective - full.objective) < 1e-9), ws.info["certified"]
    (True, True)
    """
    t0 = time.perf_counter()
    prep = Prepared(lp)
    D, b, info = dual_offsets(lp, prep=prep)
    t1 = time.perf_counter()
    n_rows = int(np.count_nonzero(np.bincount(lp.atoms.group, minlength=lp.n_groups) > 0)) * len(lp.row_events)
    n_free = max(2 * n_rows, 500) if free_atoms is None else free_atoms
    out = certify_from_offsets(lp, spec, D, b, n_free, max_rounds, t0, tie_tol=tie_tol, prep=prep, **options)
    out.info.update(info, path="dual", dual_seconds=t1 - t0)
    return out


def solve_auto(lp: MulticlassTransportLP, spec: SolverSpec, **options: Any) -> MulticlassSolution:
    """The full LP up to ``WORKING_SET_MIN`` variables, the working-set method above.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> from fairopt.modeling.registry import default_spec
    >>> at = collapse_vectors(np.array([[.9, .1], [.2, .8]]), np.array([0, 1]))
    >>> lp = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity", eps=1.0)
    >>> round(solve_auto(lp, default_spec("LP")).objective, 6)
    0.15
    """
    t0 = time.perf_counter()
    if lp.atoms.n_atoms * lp.atoms.scores.shape[1] <= WORKING_SET_MIN:
        return lp.solve_fixed(spec, None, t0, **options)
    out = solve_dual_working_set(lp, spec, **options)
    out.solve_seconds = time.perf_counter() - t0
    return out
