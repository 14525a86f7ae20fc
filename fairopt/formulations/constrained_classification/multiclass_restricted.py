"""The fair multiclass LP restricted to candidate (atom, class) columns, certified by its duals.

The working-set solve (:mod:`~fairopt.formulations.constrained_classification.multiclass_working_set`)
keeps an atom free only where its class is in doubt, and then only with the classes whose
adjusted cost is within a window of its minimum: a :class:`Restriction` holds every other atom
*pinned* to one class and, for each free atom, the boolean mask of its *allowed* classes. Every
pair outside the mask is a column held at 0; the pinned atoms' mass moves into the rows' bounds.

**Certificate.** The restricted LP's duals give offsets ``(D, b)`` and with them the adjusted
cost ``a_k`` of every (atom, class) pair. Its dual feasibility gives ``a_k >= u_a`` on the allowed
columns, with equality on the used ones, where ``u_a`` is the atom's assign dual: the least
allowed adjusted cost. If on every atom that least allowed cost is also the least over *all*
classes, then ``(duals, u)`` is feasible for the dual of the full LP and complementary slackness
holds (every column held at 0 has a non-negative reduced cost), so the restricted optimum is the
full LP's optimum. Otherwise the offending classes join the mask and the LP is solved again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from fairopt._docstrings import doc_with, fill_doc
from fairopt.errors import InfeasibleError
from fairopt.formulations.constrained_classification._multiclass_flat import margins_flat
from fairopt.formulations.constrained_classification.multiclass_lp import (
    Q_TOL,
    SLACK_TOL,
    MulticlassSolution,
    MulticlassTransportLP,
)

if TYPE_CHECKING:
    from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    from fairopt.modeling import Program, SolverSpec

__all__ = [
    "RestrictedSolve",
    "Restriction",
    "assemble",
    "certify",
    "cost_unit",
    "event_numerators",
    "restricted_program",
    "solve_restricted",
]

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
B = NDArray[np.bool_]

#: an allowed class within this (relative) of the least adjusted cost still counts as a minimiser
CERT_TOL = 1e-9
#: a pinned class ahead of every other by this (times the cost scale) in single precision is
#: certified without the exact check (single-precision rounding is below 1e-6 of the scale)
SCREEN = 1e-5


@dataclass
class Restriction:
    """Which columns of the LP are present.

    Attributes
    ----------
    fixed : ndarray of int, shape (n_atoms,)
        Class of every pinned atom, ``-1`` for a free one.
    free : ndarray of int
        The free atoms, increasing.
    allowed : ndarray of bool, shape (len(free), K)
        Allowed classes of every free atom (at least one each).

    Examples
    --------
    >>> import numpy as np
    >>> r = Restriction.from_masks(np.array([[True, False], [True, True], [False, True]]))
    >>> r.fixed.tolist(), r.free.tolist(), r.n_columns
    ([0, -1, 1], [1], 2)
    """

    fixed: I64
    free: I64
    allowed: B

    @classmethod
    def from_masks(cls, allowed: B) -> Restriction:
        """The restriction with the allowed classes ``allowed`` (``(n_atoms, K)``, at least one
        per atom): atoms with one allowed class are pinned to it."""
        count = allowed.sum(axis=1)
        free = np.flatnonzero(count > 1).astype(np.int64)
        fixed = np.where(count > 1, -1, np.argmax(allowed, axis=1)).astype(np.int64)
        return cls(fixed=fixed, free=free, allowed=allowed[free])

    @property
    def n_columns(self) -> int:
        """Number of ``q`` columns of the restricted LP."""
        return int(self.allowed.sum())

    def widen(self, atoms: I64, extra: B) -> None:
        """Allow the classes ``extra`` (``(len(atoms), K)``) on ``atoms`` too; pinned atoms keep
        their class allowed and become free."""
        K = self.allowed.shape[1]
        masks = extra.copy()
        pinned = self.fixed[atoms] >= 0
        masks[np.flatnonzero(pinned), self.fixed[atoms[pinned]]] = True
        known = atoms[~pinned]
        self.allowed[np.searchsorted(self.free, known)] |= masks[~pinned]
        new = atoms[pinned]
        if new.size:
            free = np.concatenate([self.free, new])
            allowed = np.concatenate([self.allowed, masks[pinned].reshape(-1, K)])
            order = np.argsort(free, kind="stable")
            self.free, self.allowed = free[order], allowed[order]
            self.fixed[new] = -1


def event_numerators(lp: MulticlassTransportLP, events: list[tuple[int | None, int]], atoms: I64, classes: I64,
                     mass: F64) -> F64:
    """``sum_a mass_a w_a phi_e(s_a)`` per (group, event) over the (atom, class) pairs
    ``(atoms, classes)`` whose class is the event's predicted class (``(G, len(events))``).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> at = collapse_vectors(np.array([[.9, .1], [.2, .8]]), np.array([0, 1]))
    >>> lp = MulticlassTransportLP(at, 2, 1 - np.eye(2), "equal_opportunity")
    >>> event_numerators(lp, lp.events, np.array([0, 1]), np.array([0, 0]), np.ones(2)).tolist()
    [[0.9, 0.0], [0.2, 0.0]]
    """
    at = lp.atoms
    G, K = lp.n_groups, at.scores.shape[1]
    out = np.zeros((G, len(events)))
    key = at.group[atoms] * K + classes
    wm = at.weight[atoms] * mass
    cache: dict[int, F64] = {}
    for e, (j, k) in enumerate(events):   # a loop over events, not rows
        jj = -1 if j is None else int(j)
        if jj not in cache:
            wj = wm if jj < 0 else wm * at.scores[atoms, jj]
            cache[jj] = np.bincount(key, weights=wj, minlength=G * K).astype(np.float64, copy=False).reshape(G, K)
        out[:, e] = cache[jj][:, k]
    return out


def restricted_program(lp: MulticlassTransportLP, prep: Prepared, r: Restriction, elastic: float | None,
                       ) -> tuple[Program, I64, I64, I64]:
    """The LP over the columns of ``r`` as a :class:`fairopt.modeling.Program`, with every free
    atom's first allowed class eliminated (``q_ref = 1 - sum of the others``).

    Blocks: ``q`` (the other allowed pairs, each in ``[0, 1]``), ``r`` (pooled rates) and, with
    ``elastic``, ``slack``; rows ``pooled`` and ``gap`` as in :meth:`MulticlassTransportLP.build`
    (their duals mean the same) and ``assign`` (``sum q <= 1``) for atoms with three or more
    allowed classes only. An atom with two allowed classes is one bounded column and no row,
    so the simplex basis has about as many rows as there are gap rows, not one per atom.
    Returns the program, the atom and class of every ``q`` column, and every free atom's
    reference class.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> at = collapse_vectors(np.array([[.9, .1], [.4, .6], [.3, .7]]), np.array([0, 0, 1]))
    >>> lp = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity", 0.1)
    >>> r = Restriction.from_masks(np.array([[True, False], [True, True], [True, True]]))
    >>> prog, atom, cls, ref = restricted_program(lp, Prepared(lp), r, None)
    >>> atom.tolist(), cls.tolist(), ref.tolist()
    ([1, 2], [1, 1], [0, 0])
    """
    from fairopt.modeling import Program
    at = lp.atoms
    G = lp.n_groups
    W = float(prep.gw.sum())
    fi, cls = np.nonzero(r.allowed)
    first = np.ones(fi.shape[0], dtype=bool)
    first[1:] = fi[1:] != fi[:-1]
    ref = np.zeros(r.free.shape[0], dtype=np.int64)
    ref[fi[first]] = cls[first]
    fi, cls = fi[~first], cls[~first].astype(np.int64)
    atom = r.free[fi].astype(np.int64)
    rcls = ref[fi]
    n = atom.shape[0]
    grp = at.group[atom]
    E = len(lp.row_events)
    Vg, V, live = prep.Vg, prep.V, prep.live
    pin = np.flatnonzero(r.fixed >= 0)
    # pinned atoms and the free atoms' reference classes: mass in the rows' bounds
    num = event_numerators(lp, lp.row_events, np.concatenate([pin, r.free]), np.concatenate([r.fixed[pin], ref]),
                           np.ones(pin.shape[0] + r.free.shape[0]))
    c_pool = np.where(V > 0, num.sum(axis=0) / np.where(V > 0, V, 1.0), 0.0)
    c_gap = np.where(live, num / np.where(Vg > 0, Vg, 1.0), 0.0)
    grow = np.where(live, np.cumsum(live.ravel()).reshape(G, E) - 1, -1)
    prog = Program(name="fair_multiclass_restricted")
    prog.add_variables("q", shape=(n,), lb=0.0, ub=1.0)
    prog.add_variables("r", shape=(E,), lb=None, ub=None)
    many = np.flatnonzero(np.bincount(fi, minlength=r.free.shape[0]) > 1)
    if many.size:   # atoms with three or more allowed classes: the eliminated class stays >= 0
        row = np.full(r.free.shape[0], -1)
        row[many] = np.arange(many.shape[0])
        hit = np.flatnonzero(row[fi] >= 0)
        prog.add_constraints("assign", {"q": sp.csr_matrix((np.ones(hit.shape[0]), (row[fi[hit]], hit)),
                                                           shape=(many.shape[0], n))}, lb=None, ub=1.0)
    pr, pc, pv, gr, gc, gv = [], [], [], [], [], []
    for e in range(E):   # a loop over events, not rows
        if V[e] <= 0:
            continue
        for sign, which in ((1.0, cls), (-1.0, rcls)):   # a column's own class, minus its reference's
            sel = np.flatnonzero(which == prep.ev_k[e])
            a = atom[sel]
            ve = sign * (at.weight[a] if prep.ev_j[e] < 0 else at.weight[a] * at.scores[a, prep.ev_j[e]])
            pr.append(np.full(sel.shape[0], e))
            pc.append(sel)
            pv.append(ve / V[e])
            row_g = grow[grp[sel], e]
            ok = row_g >= 0
            gr.append(row_g[ok])
            gc.append(sel[ok])
            gv.append(ve[ok] / Vg[grp[sel[ok]], e])
    cat = MulticlassTransportLP._cat
    pooled = sp.csr_matrix((cat(pv), (cat(pr, np.int64), cat(pc, np.int64))), shape=(E, n))
    prog.add_constraints("pooled", {"q": pooled, "r": -sp.identity(E, format="csr")}, lb=-c_pool, ub=-c_pool)
    n_gap = int(live.sum())
    # costs in units of the largest atom weight (not of the total): each column's cost is O(1),
    # well above the solver's dual tolerances; the duals are scaled back by the caller
    unit = cost_unit(lp)
    c = (prep.SC[atom, cls] - prep.SC[atom, rcls]) * (at.weight[atom] / unit)
    linear: dict[str, Any] = {"q": c}
    if n_gap:
        gap = sp.csr_matrix((cat(gv), (cat(gr, np.int64), cat(gc, np.int64))), shape=(n_gap, n))
        sel_r = sp.csr_matrix((-np.ones(n_gap), (np.arange(n_gap), np.nonzero(live)[1])), shape=(n_gap, E))
        blocks: dict[str, Any] = {"q": gap, "r": sel_r}
        if elastic is not None:   # slack on every gap row, priced at `elastic` per unit
            prog.add_variables("slack", shape=(2 * n_gap,), lb=0.0, ub=None)
            eye = sp.identity(n_gap, format="csr")
            blocks["slack"] = sp.hstack([eye, -eye], format="csr")
            linear["slack"] = np.full(2 * n_gap, float(elastic) * W / unit)
        shift = c_gap[live]
        prog.add_constraints("gap", blocks, lb=-lp.eps - shift, ub=lp.eps - shift)
    prog.set_objective(linear=linear)
    return prog, atom, cls, ref


def cost_unit(lp: MulticlassTransportLP) -> float:
    """Weight unit of the restricted programs' costs: the largest atom weight.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> at = collapse_vectors(np.array([[.9, .1], [.4, .6]]), np.array([0, 1]), np.array([2.0, 3.0]))
    >>> cost_unit(MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity"))
    3.0
    """
    w = lp.atoms.weight
    return float(w.max()) if w.size and w.max() > 0 else 1.0


@dataclass
class RestrictedSolve:
    """A solved restricted LP: its columns' values and the offsets read off its duals.

    ``atom``, ``cls`` and ``q`` list every allowed (atom, class) pair of the free atoms with its
    probability (reference classes included); ``D``, ``b`` are the offsets and ``y_gap``, ``z``
    the gap and pooled rows' duals, in the full LP's units; ``objective`` is the free atoms'
    part of the expected cost.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.zeros(0, np.int64)
    >>> RestrictedSolve(z, z, np.zeros(0), np.zeros((1, 2, 2)), np.zeros((1, 2)), np.zeros((1, 2)),
    ...                 np.zeros(2), "b", "s", 0.0).q.shape
    (0,)
    """

    atom: I64
    cls: I64
    q: F64
    D: F64
    b: F64
    y_gap: F64
    z: F64
    backend: str
    solver: str
    objective: float


@doc_with(restricted_lp_example="""
>>> import numpy as np
>>> from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
>>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
>>> from fairopt.modeling.registry import default_spec
>>> at = collapse_vectors(np.array([[.9, .1], [.4, .6], [.3, .7]]), np.array([0, 0, 1]))
>>> lp = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity", 0.1)
>>> r = Restriction.from_masks(np.ones((3, 2), dtype=bool))
""")
def solve_restricted(lp: MulticlassTransportLP, prep: Prepared, spec: SolverSpec, r: Restriction,
                     elastic: float | None = None, **options: Any) -> RestrictedSolve:
    """Solve the LP over the columns of ``r``; an infeasible restriction (the pinned mass leaves
    no feasible point) raises :class:`~fairopt.errors.InfeasibleError`. With ``elastic`` (a
    price, in the full LP's cost units, above every gap row's dual) the gap rows get priced
    slack instead and a positive slack raises the same error; a price far above the duals
    makes the LP badly scaled, so the working-set solve does not use it.

    Examples
    --------
    {restricted_lp_example}
    >>> rs = solve_restricted(lp, Prepared(lp), default_spec("LP"), r)
    >>> full = lp.solve()
    >>> bool(abs(rs.objective - full.objective) < 1e-12)
    True
    """
    prog, atom, cls, ref = restricted_program(lp, prep, r, elastic)
    sol = prog.solve(spec, require_optimal=True, **options)
    if elastic is not None and "slack" in sol.primal and float(np.sum(sol.primal["slack"])) > SLACK_TOL:
        raise InfeasibleError(f"the LP with {int((r.fixed >= 0).sum())} pinned atoms needs gap slack: the "
                              "pinned mass leaves no feasible point.")
    at = lp.atoms
    G, K = lp.n_groups, at.scores.shape[1]
    E = len(lp.row_events)
    W = float(prep.gw.sum())
    back = cost_unit(lp) / W   # the program's costs are in units of the largest weight
    y_gap = np.zeros((G, E))
    if "gap" in sol.dual:
        y_gap[prep.live] = sol.dual["gap"] * back
    z = np.asarray(sol.dual.get("pooled", np.zeros(E)), float) * back
    with np.errstate(divide="ignore", invalid="ignore"):
        price = np.where(prep.live, y_gap / prep.Vg, 0.0) + np.where(prep.V > 0, z / prep.V, 0.0)[None, :]
    D, b = np.zeros((G, K, K)), np.zeros((G, K))
    for e in range(E):   # a loop over events
        j, k = int(prep.ev_j[e]), int(prep.ev_k[e])
        if j < 0:
            b[:, k] -= W * price[:, e]
        else:
            D[:, j, k] -= W * price[:, e]
    # every allowed pair with its value: the reference class takes the rest of the atom's mass
    qo = np.clip(np.asarray(sol.primal["q"], float), 0.0, 1.0)
    pos = np.searchsorted(r.free, atom)
    q_ref = np.clip(1.0 - np.bincount(pos, weights=qo, minlength=r.free.shape[0]), 0.0, 1.0)
    atom = np.concatenate([r.free, atom])
    cls = np.concatenate([ref, cls])
    q = np.concatenate([q_ref, qo])
    q[q < Q_TOL] = 0.0
    pos = np.searchsorted(r.free, atom)
    q /= np.bincount(pos, weights=q, minlength=r.free.shape[0])[pos]
    W = float(prep.gw.sum())
    objective = float(np.dot(at.weight[atom] * q, prep.SC[atom, cls])) / W   # the free atoms' part
    return RestrictedSolve(atom, cls, q, D, b, y_gap, z, sol.backend, sol.solver, objective)


def certify(prep: Prepared, r: Restriction, D: F64, b: F64, window: float) -> tuple[I64, B]:
    """Atoms whose least allowed adjusted cost under ``(D, b)`` is above their least adjusted
    cost (beyond ``CERT_TOL``), and for each the classes within ``window`` of that least cost
    (to allow next). Empty: the restricted optimum is the full LP's (the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    >>> from fairopt.formulations.constrained_classification.multiclass_lp import collapse_vectors
    >>> at = collapse_vectors(np.array([[.9, .1], [.4, .6]]), np.array([0, 1]))
    >>> lp = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity", 1.0)
    >>> r = Restriction.from_masks(np.array([[True, False], [True, False]]))
    >>> bad, extra = certify(Prepared(lp), r, np.zeros((2, 2, 2)), np.zeros((2, 2)), 0.0)
    >>> bad.tolist(), extra.tolist()
    ([1], [[False, True]])
    """
    m = prep.group.shape[0]
    if prep.cond:
        rows = np.arange(m)
    else:   # a single-precision screen: a pinned atom whose class leads every other by far more
        # than the rounding of single precision is certified; the others are checked exactly
        arg, gap = margins_flat(prep.SCt, prep.group, b)
        thr = SCREEN * (1.0 + float(np.abs(prep.SC).max(initial=0.0)) + float(np.abs(b).max(initial=0.0)))
        rows = np.flatnonzero((r.fixed < 0) | (arg != r.fixed) | (gap <= thr))
    A = prep.adjusted_rows(D, b, rows)
    amin = A.min(axis=1)
    have = np.empty(rows.shape[0])
    fx = r.fixed[rows]
    pin = np.flatnonzero(fx >= 0)
    have[pin] = A[pin, fx[pin]]
    fr = np.flatnonzero(fx < 0)
    if fr.size:
        have[fr] = np.where(r.allowed[np.searchsorted(r.free, rows[fr])], A[fr], np.inf).min(axis=1)
    over = np.flatnonzero(have - amin > CERT_TOL)
    if over.size:   # the tolerance is relative to the row's cost scale (>= 1)
        scale = 1.0 + np.abs(A[over]).max(axis=1)
        over = over[have[over] - amin[over] > CERT_TOL * scale]
    extra = A[over] <= (amin[over] + window)[:, None]
    return rows[over].astype(np.int64), extra


@fill_doc
def assemble(lp: MulticlassTransportLP, prep: Prepared, r: Restriction, rs: RestrictedSolve, t0: float,
             info: dict[str, Any]) -> MulticlassSolution:
    """The full solution from a certified restricted solve: class probabilities of every atom,
    offsets, duals, objective and rates (the pinned atoms' part summed by group, not per atom).

    Examples
    --------
    {restricted_lp_example}
    >>> prep = Prepared(lp)
    >>> sol = assemble(lp, prep, r, solve_restricted(lp, prep, default_spec("LP"), r), 0.0, {})
    >>> full = lp.solve()
    >>> bool(abs(sol.objective - full.objective) < 1e-12), bool(np.abs(sol.gaps - full.gaps).max() < 1e-12)
    (True, True)
    """
    at = lp.atoms
    m, K, G = at.n_atoms, at.scores.shape[1], lp.n_groups
    q = np.zeros((m, K))
    pin = np.flatnonzero(r.fixed >= 0)
    q[pin, r.fixed[pin]] = 1.0
    q[rs.atom, rs.cls] = rs.q
    W = float(at.weight.sum())
    cost_pin = float(np.dot(at.weight[pin], prep.SC[pin, r.fixed[pin]]))
    cost_free = float(np.dot(at.weight[rs.atom] * rs.q, prep.SC[rs.atom, rs.cls]))
    num = (event_numerators(lp, lp.events, pin, r.fixed[pin], np.ones(pin.shape[0]))
           + event_numerators(lp, lp.events, rs.atom, rs.cls, rs.q))
    den = lp.event_masses()
    ok = den > 0
    rates = np.full((G, len(lp.events)), np.nan)
    rates[ok] = num[ok] / den[ok]
    tot = den.sum(axis=0)
    pooled = np.where(tot > 0, num.sum(axis=0) / np.where(tot > 0, tot, 1.0), np.nan)
    gaps = np.where(np.isnan(rates), 0.0, np.abs(rates - pooled[None, :]))
    y_all, z_all = np.zeros((G, len(lp.events))), np.zeros(len(lp.events))
    idx = [lp.events.index(e) for e in lp.row_events]
    y_all[:, idx], z_all[idx] = rs.y_gap, rs.z
    return MulticlassSolution(q=q, D=rs.D, b=rs.b, objective=(cost_pin + cost_free) / W, rates=rates,
                              pooled=pooled, gaps=gaps, duals={"gap": y_all, "pooled": z_all}, backend=rs.backend,
                              solver=rs.solver, solve_seconds=time.perf_counter() - t0,
                              info={"n_atoms": m, "program_objective": rs.objective, **info})
