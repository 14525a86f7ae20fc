"""Fair multiclass post-processing as a linear program over distinct score vectors.

Rows carry calibrated class probabilities ``s(x) in R^K`` (``s_j = P(Y = j | x)``), a group
``g`` and a weight ``w``. A randomized group-dependent rule ``q_k(s, g)`` (probability of
predicting class ``k``) has expected cost ``sum_i w_i sum_k q_k(x_i) (s(x_i) C)_k / W`` and
rates, for an *event* ``e = (j, k)`` (``j`` a true class, or ``None`` for all rows)::

    R_{g,e} = sum_{i in g} w_i phi_e(x_i) q_k(x_i) / sum_{i in g} w_i phi_e(x_i),
    phi_e(x) = s_j(x)  (or 1 when j is None)

and the pooled rate ``R_e`` over all rows the same way. The fairness constraint is
``|R_{g,e} - R_e| <= eps`` for every group and event. Rows sharing (group, score vector) get the
same ``q`` at an optimum (the problem is symmetric in them and convex), so the LP is written over
*atoms* (distinct pairs, weights summed): per group a transport from the atoms to the ``K``
classes, coupled through the pooled rates.

LP (variables ``q[a, k] >= 0`` and one free pooled rate ``r_e`` per event)::

    minimise   sum_a sum_k q[a, k] w_a (s_a C)_k / W
    subject to sum_k q[a, k] = 1                                  (assign, per atom)
               sum_a q[a, k_e] v_{a,e} / V_e - r_e = 0             (pooled, per event)
               -eps <= sum_{a in g} q[a, k_e] v_{a,e} / V_{g,e} - r_e <= eps   (gap, per group, event)

with ``v_{a,e} = w_a phi_e(s_a)``. A gap row whose group mass ``V_{g,e}`` is zero (a rate that
is undefined) is left out. With the duals ``y`` of the gap rows and ``z`` of the pooled rows, the
reduced cost of ``q[a, k]`` is ``w_a / W`` times the *adjusted cost*

    a_k(s, g) = (s C)_k - W sum_{e: k_e = k} phi_e(s) (y_{g,e} / V_{g,e} + z_e / V_e)
              = (s (C + D_g))_k + b_{g,k},

so the optimal rule is the argmin of an offset-adjusted cost (``D_g`` holds the conditional
events' offsets, ``b_g`` the unconditional ones), randomized only on atoms where several
classes tie. That is the rule deployed on new score vectors.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import scipy.sparse as sp

from fairopt.criteria import canonical, criterion
from fairopt.errors import ConfigError, DataValidationError, InfeasibleError
from fairopt.formulations.constrained_classification.multiclass_atoms import VectorAtoms, collapse_vectors, row_keys
from fairopt.modeling.registry import SolverSpec, default_spec

if TYPE_CHECKING:
    from fairopt.modeling import Program
    from fairopt.modeling.parametric import ParametricProblem

__all__ = [
    "MULTICLASS_CONSTRAINTS",
    "MulticlassSolution",
    "MulticlassTransportLP",
    "SolvedLP",
    "VectorAtoms",
    "adjusted_costs",
    "collapse_vectors",
    "events_for",
    "rates_and_gaps",
    "row_keys",
]

MULTICLASS_CONSTRAINTS = ("demographic_parity", "equal_opportunity", "equalized_odds")
#: an atom's class probability above this counts as used (fractional atoms are the tied ones)
Q_TOL = 1e-9
#: total gap slack of an elastic restricted LP below which it counts as feasible
SLACK_TOL = 1e-9

Event = tuple[int | None, int]


def events_for(constraint: str, n_classes: int) -> list[Event]:
    """Events ``(j, k)`` compared across groups, read from the criterion's registry entry
    (:meth:`fairopt.criteria.Criterion.events`): ``j`` the true class conditioned on (``None``:
    all rows), ``k`` the predicted class.

    Examples
    --------
    >>> events_for("statistical_parity", 2)
    [(None, 0), (None, 1)]
    >>> events_for("equal_opportunity", 3)
    [(0, 0), (1, 1), (2, 2)]
    """
    name = canonical(constraint)
    if name not in MULTICLASS_CONSTRAINTS:
        raise ConfigError(f"constraint must be one of {MULTICLASS_CONSTRAINTS} (or an alias), got {constraint!r}.")
    # the classes are 0..K-1, so every event's classes are ints
    return [cast(Event, (e.given, e.predicted)) for e in criterion(name).events(int(n_classes))]


def rates_and_gaps(S: np.ndarray, groups: np.ndarray, weight: np.ndarray, P: np.ndarray,
                   events: list[Event], n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group rates ``(n_groups, n_events)`` (NaN where undefined), pooled rates and
    ``|group - pooled|`` (0 where undefined) of the rule with class probabilities ``P``.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[.7, .3], [.2, .8]]); P = np.array([[1., 0.], [0., 1.]])
    >>> rates, pooled, gaps = rates_and_gaps(S, np.array([0, 1]), np.ones(2), P, [(None, 1)], 2)
    >>> rates.ravel().tolist(), pooled.tolist(), gaps.ravel().tolist()
    ([0.0, 1.0], [0.5], [0.5, 0.5])
    """
    E = len(events)
    rates, pooled = np.full((n_groups, E), np.nan), np.zeros(E)
    for e, (j, k) in enumerate(events):   # a loop over events, not rows
        v = weight if j is None else weight * S[:, j]
        den = np.bincount(groups, weights=v, minlength=n_groups)
        num = np.bincount(groups, weights=v * P[:, k], minlength=n_groups)
        ok = den > 0
        rates[ok, e] = num[ok] / den[ok]
        pooled[e] = num.sum() / den.sum() if den.sum() > 0 else np.nan
    gaps = np.where(np.isnan(rates), 0.0, np.abs(rates - pooled[None, :]))
    return rates, pooled, gaps


def adjusted_costs(S: np.ndarray, groups: np.ndarray, cost: np.ndarray, D: np.ndarray,
                   b: np.ndarray) -> np.ndarray:
    """``(s (C + D_g))_k + b_{g,k}`` for every row (a loop over groups, not rows).

    Examples
    --------
    >>> import numpy as np
    >>> C = 1 - np.eye(2); D = np.zeros((1, 2, 2)); b = np.array([[0.0, 0.1]])
    >>> adjusted_costs(np.array([[.5, .5]]), np.array([0]), C, D, b).tolist()
    [[0.5, 0.6]]
    """
    out: np.ndarray = S @ cost
    out += b[groups]
    if not D.any():   # no conditional events: the offsets are per (group, class)
        return out
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(D.shape[0] + 1))
    for g in range(D.shape[0]):   # a loop over groups, not rows
        rows = order[bounds[g]:bounds[g + 1]]
        if rows.size:
            out[rows] += S[rows] @ D[g]
    return out


@dataclass(kw_only=True)
class SolvedLP:
    """What a solved post-processing LP records besides its rule (keyword-only fields, shared by
    :class:`MulticlassSolution` and the equalized-odds threshold LP's ``OddsSolution``).

    Attributes
    ----------
    q : ndarray
        The LP's decision probabilities per atom.
    duals : dict
        Row duals by block name.
    backend, solver : str
        Who solved it.
    status : str
        ``"optimal"`` unless stated.
    solve_seconds : float
        Wall time of the solve.
    info : dict
        Sizes and diagnostics.

    Examples
    --------
    >>> import numpy as np
    >>> SolvedLP(q=np.ones(2), duals={}, backend="b", solver="s").status
    'optimal'
    """

    q: np.ndarray
    duals: dict[str, Any]
    backend: str
    solver: str
    status: str = "optimal"
    solve_seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class MulticlassSolution(SolvedLP):
    """Solved fair multiclass LP: the atoms' class probabilities and the offset rule.

    Attributes
    ----------
    q : ndarray of shape (n_atoms, K)
        Class probabilities of every atom.
    D, b : ndarray
        Offsets of the rule ``argmin_k (s (C + D_g))_k + b_{g,k}`` (shapes ``(G, K, K)``, ``(G, K)``).
    objective : float
        Expected cost on the fitting sample.
    rates, pooled, gaps : ndarray
        Group rates ``(G, n_events)``, pooled rates and ``|group - pooled|``.
    duals : dict
        ``"gap"`` (``(G, n_events)``) and ``"pooled"`` row duals.

    Examples
    --------
    >>> import numpy as np
    >>> at = collapse_vectors(np.array([[.9, .1], [.2, .8]]), np.array([0, 1]))
    >>> sol = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity", eps=1.0).solve()
    >>> sol.q.argmax(axis=1).tolist(), round(sol.objective, 6)
    ([0, 1], 0.15)
    """

    D: np.ndarray
    b: np.ndarray
    objective: float
    rates: np.ndarray
    pooled: np.ndarray
    gaps: np.ndarray


class MulticlassTransportLP:
    """The fair multiclass post-processing LP over atoms (see the module docstring).

    Parameters
    ----------
    atoms : VectorAtoms
        Distinct (group, score vector) pairs with weights (:func:`collapse_vectors`).
    n_groups : int
        Number of groups.
    cost : ndarray of shape (K, K)
        ``cost[j, k]``: cost of predicting ``k`` when the true class is ``j``.
    constraint : str
        ``"demographic_parity"``, ``"equal_opportunity"`` or ``"equalized_odds"`` (or an alias).
    eps : float, default 0.0
        Largest allowed ``|group rate - pooled rate|``.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[.9, .1], [.4, .6], [.3, .7], [.8, .2]])
    >>> at = collapse_vectors(S, np.array([0, 0, 1, 1]))
    >>> sol = MulticlassTransportLP(at, 2, 1 - np.eye(2), "demographic_parity").solve()
    >>> bool(sol.gaps.max() < 1e-9), round(sol.objective, 6)
    (True, 0.25)
    """

    name = "constrained_classification.multiclass"

    def __init__(self, atoms: VectorAtoms, n_groups: int, cost: np.ndarray, constraint: str,
                 eps: float = 0.0) -> None:
        eps = float(eps)
        if not np.isfinite(eps) or eps < 0:
            raise ConfigError(f"eps (largest |group rate - pooled rate|) must be >= 0, got {eps}.")
        self.atoms, self.n_groups, self.eps = atoms, int(n_groups), eps
        self.cost = np.asarray(cost, dtype=float)
        K = atoms.scores.shape[1]
        if self.cost.shape != (K, K):
            raise DataValidationError(f"cost must be a {K} x {K} matrix, got shape {self.cost.shape}.")
        self.events = events_for(constraint, K)
        # with two classes q_0 = 1 - q_1 on every atom, so the gap row of (j, 1) is that of (j, 0)
        # negated: when both are events only (j, 0) enters the LP (its dual prices both)
        self.row_events = [e for e in self.events if K > 2 or e[1] == 0 or (e[0], 0) not in self.events]
        self._row_index = [self.events.index(e) for e in self.row_events]
        self.constraint: str = canonical(constraint) or constraint   # events_for refused unknown names
        gw = np.bincount(atoms.group, weights=atoms.weight, minlength=self.n_groups)
        if (gw <= 0).any():
            raise DataValidationError(f"groups {np.flatnonzero(gw <= 0).tolist()} have zero total weight.")

    def _event_weights(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        at = self.atoms
        v = [at.weight if j is None else at.weight * at.scores[:, j] for j, _ in self.row_events]
        Vg = np.stack([np.bincount(at.group, weights=ve, minlength=self.n_groups) for ve in v], axis=1)
        return v, Vg, Vg.sum(axis=0)

    def event_masses(self) -> np.ndarray:
        """Denominators of the rates, ``(n_groups, len(events))``: each group's weight, or its
        weight of true class ``j`` (``sum w s_j``) for an event conditioned on ``Y = j``.

        Examples
        --------
        >>> lp = MulticlassTransportLP(collapse_vectors(np.array([[.9, .1], [.4, .6]]), np.array([0, 1])), 2,
        ...                            1 - np.eye(2), "equal_opportunity")
        >>> lp.event_masses().tolist()      # events (Y=0, yhat=0), (Y=1, yhat=1)
        [[0.9, 0.1], [0.4, 0.6]]
        """
        at, G = self.atoms, self.n_groups
        mass: dict[int | None, np.ndarray] = {}
        for j, _ in self.events:   # a loop over conditions, not rows
            if j not in mass:
                mass[j] = np.bincount(at.group, weights=at.weight if j is None else at.weight * at.scores[:, j],
                                      minlength=G).astype(np.float64)
        return np.column_stack([mass[j] for j, _ in self.events]) if self.events else np.zeros((G, 0))

    @staticmethod
    def _cat(xs: list[np.ndarray], dtype: type = float) -> np.ndarray:
        return np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype)

    def build(self, fixed: np.ndarray | None = None, elastic: float | None = None) -> Program:
        """The LP as a :class:`fairopt.modeling.Program`: variables ``q`` (free atoms x classes,
        row-major) and ``r`` (pooled rates); rows ``assign``, ``pooled`` and ``gap``.

        ``fixed`` (one class per atom, ``-1`` for free atoms) pins atoms to one class: they get
        no variables, and their mass moves into the rows' bounds (the working-set solve).
        ``elastic`` adds slack columns to the gap rows at that price per unit, so that the
        restricted LP is always feasible (a positive slack at the optimum means the pinned mass
        leaves no feasible point).
        """
        from fairopt.modeling import Program
        at = self.atoms
        K, G = at.scores.shape[1], self.n_groups
        W = float(at.weight.sum())
        v, Vg, V = self._event_weights()
        free = np.arange(at.n_atoms) if fixed is None else np.flatnonzero(fixed < 0)
        m = free.shape[0]
        grp = at.group[free]
        prog = Program(name="fair_multiclass_transport")
        prog.add_variables("q", shape=(m * K,), lb=0.0, ub=None)
        E = len(self.row_events)
        prog.add_variables("r", shape=(E,), lb=None, ub=None)
        cols = np.arange(m * K)
        assign = sp.csr_matrix((np.ones(m * K), (np.repeat(np.arange(m), K), cols)), shape=(m, m * K))
        prog.add_constraints("assign", {"q": assign}, lb=1.0, ub=1.0)
        ev_k = np.array([k for _, k in self.row_events])
        keep = V > 0
        pr, pc, pv = [], [], []
        gr, gc, gv = [], [], []
        live = (Vg > 0) & keep[None, :]
        # row index of the gap row (g, e), in (g, e) row-major order of the live pairs
        grow = np.where(live, np.cumsum(live.ravel()).reshape(G, E) - 1, -1)
        c_pool, c_gap = np.zeros(E), np.zeros((G, E))
        for e in range(E):   # a loop over events, not rows
            if not keep[e]:
                continue
            if fixed is not None:   # pinned mass of this event's class, pooled and per group
                pin = fixed == ev_k[e]
                c_pool[e] = v[e][pin].sum() / V[e]
                with np.errstate(divide="ignore", invalid="ignore"):
                    c_gap[:, e] = np.where(Vg[:, e] > 0, np.bincount(at.group[pin], weights=v[e][pin],
                                                                      minlength=G) / Vg[:, e], 0.0)
            col = np.arange(m) * K + ev_k[e]
            ve = v[e][free]
            pr.append(np.full(m, e))
            pc.append(col)
            pv.append(ve / V[e])
            row = grow[grp, e]
            ok = row >= 0
            gr.append(row[ok])
            gc.append(col[ok])
            gv.append(ve[ok] / Vg[grp[ok], e])
        n_gap = int(live.sum())
        cat = self._cat
        pooled = sp.csr_matrix((cat(pv), (cat(pr, np.int64), cat(pc, np.int64))), shape=(E, m * K))
        r_eye = -sp.identity(E, format="csr")
        prog.add_constraints("pooled", {"q": pooled, "r": r_eye}, lb=-c_pool, ub=-c_pool)
        if n_gap:
            gap = sp.csr_matrix((cat(gv), (cat(gr, np.int64), cat(gc, np.int64))), shape=(n_gap, m * K))
            ge = np.nonzero(live)[1]
            sel = sp.csr_matrix((-np.ones(n_gap), (np.arange(n_gap), ge)), shape=(n_gap, E))
            shift = c_gap[live]
            blocks = {"q": gap, "r": sel}
            if elastic is not None:   # slack on every gap row, priced at `elastic` per unit
                prog.add_variables("slack", shape=(2 * n_gap,), lb=0.0, ub=None)
                eye = sp.identity(n_gap, format="csr")
                blocks["slack"] = sp.hstack([eye, -eye], format="csr")
            prog.add_constraints("gap", blocks, lb=-self.eps - shift, ub=self.eps - shift)
        self._live, self._Vg, self._V = live, Vg, V
        c = ((at.scores[free] @ self.cost) * (at.weight[free] / W)[:, None]).ravel()
        if elastic is not None and n_gap:
            prog.set_objective(linear={"q": c, "slack": np.full(2 * n_gap, float(elastic))})
        else:
            prog.set_objective(linear={"q": c})
        return prog

    def solve(self, solver: str | SolverSpec | None = None, **options: Any) -> MulticlassSolution:
        """Solve the full LP with ``solver`` (a :class:`~fairopt.modeling.SolverSpec` string;
        ``None``: the registry's default LP solver) and derive the offset rule from the duals.
        For many atoms see ``multiclass_working_set.solve_auto``."""
        spec = default_spec("LP") if solver is None else SolverSpec.parse(solver)
        return self.solve_fixed(spec, None, time.perf_counter(), **options)

    def solve_fixed(self, spec: SolverSpec, fixed: np.ndarray | None, t0: float, elastic: float | None = None,
                    **options: Any) -> MulticlassSolution:
        """Solve the LP with the atoms of ``fixed`` (``-1``: free) pinned to their class.

        With ``elastic`` (a price above every gap row's dual) the gap rows get slack columns;
        a positive slack at the optimum raises :class:`~fairopt.errors.InfeasibleError`, as the
        restricted LP itself would, without the back end's infeasibility proof."""
        sol = self.build(fixed, elastic).solve(spec, require_optimal=True, **options)
        if elastic is not None and "slack" in sol.primal and float(np.sum(sol.primal["slack"])) > SLACK_TOL:
            raise InfeasibleError(f"the LP with {int((fixed >= 0).sum()) if fixed is not None else 0} pinned atoms "
                                  "needs gap slack: the pinned mass leaves no feasible point.")
        at = self.atoms
        m, K, G = at.n_atoms, at.scores.shape[1], self.n_groups
        qf = np.clip(sol.primal["q"].reshape(-1, K), 0.0, None)
        qf[qf < Q_TOL] = 0.0
        qf /= qf.sum(axis=1, keepdims=True)
        if fixed is None:
            q = qf
        else:
            q = np.zeros((m, K))
            pinned = fixed >= 0
            q[np.flatnonzero(pinned), fixed[pinned]] = 1.0
            q[~pinned] = qf
        W = float(at.weight.sum())
        y_gap = np.zeros((G, len(self.row_events)))
        if "gap" in sol.dual:
            y_gap[self._live] = sol.dual["gap"]
        z = np.asarray(sol.dual.get("pooled", np.zeros(len(self.row_events))), float)
        with np.errstate(divide="ignore", invalid="ignore"):
            price = np.where(self._live, y_gap / self._Vg, 0.0) + np.where(self._V > 0, z / self._V, 0.0)[None, :]
        y_all, z_all = np.zeros((G, len(self.events))), np.zeros(len(self.events))
        y_all[:, self._row_index], z_all[self._row_index] = y_gap, z
        D, b = np.zeros((G, K, K)), np.zeros((G, K))
        for e, (j, k) in enumerate(self.row_events):
            if j is None:
                b[:, k] -= W * price[:, e]
            else:
                D[:, j, k] -= W * price[:, e]
        rates, pooled, gaps = rates_and_gaps(at.scores, at.group, at.weight, q, self.events, G)
        objective = float(np.sum((at.scores @ self.cost) * q * at.weight[:, None]) / W)
        return MulticlassSolution(q=q, D=D, b=b, objective=objective, rates=rates, pooled=pooled, gaps=gaps,
                                  duals={"gap": y_all, "pooled": z_all}, backend=sol.backend, solver=sol.solver,
                                  solve_seconds=time.perf_counter() - t0,
                                  info={"n_atoms": m, "program_objective": sol.objective})

    def parametric_problem(self) -> ParametricProblem:
        """The full LP with its ``gap`` rows widening as ``|gap| <= eps`` (for exact frontiers).

        The value is the expected cost of the module docstring, a convex piecewise-linear
        function of ``eps``; it is flat beyond the gap of a cost-minimising rule that ignores
        fairness (``eps_max``), and every ``eps >= 0`` is feasible (a rule that ignores the score
        meets every constraint).

        Examples
        --------
        >>> import numpy as np
        >>> from fairopt.modeling.parametric import value_curve
        >>> S = np.array([[.9, .1], [.4, .6], [.3, .7], [.8, .2]])
        >>> lp = MulticlassTransportLP(collapse_vectors(S, np.array([0, 0, 1, 1])), 2, 1 - np.eye(2),
        ...                            "demographic_parity")
        >>> pp = lp.parametric_problem()
        >>> curve = value_curve(pp.program, pp.rows, pp.eps_min, pp.eps_max)
        >>> [round(float(v), 6) for v in curve([0.0, pp.eps_max])], round(pp.eps_max, 6)
        ([0.25, 0.25], 0.0)
        """
        from fairopt.modeling.parametric import MovingRows, ParametricProblem
        prog = self.build()
        at, K = self.atoms, self.atoms.scores.shape[1]
        best = np.eye(K)[np.argmin(at.scores @ self.cost, axis=1)]      # fairness-blind optimum
        _, _, gaps = rates_and_gaps(at.scores, at.group, at.weight, best, self.events, self.n_groups)
        rows = [MovingRows("gap", dlb=-1.0, dub=1.0)] if "gap" in prog.constraints else []
        return ParametricProblem(prog, rows, 0.0, float(gaps.max(initial=0.0)), "expected cost")

    def summary(self) -> dict[str, Any]:
        """Sizes of the collapsed problem."""
        return {"formulation": self.name, "problem_class": "LP", "n_atoms": self.atoms.n_atoms,
                "n_classes": int(self.atoms.scores.shape[1]), "n_groups": self.n_groups,
                "n_events": len(self.events), "eps": self.eps}
