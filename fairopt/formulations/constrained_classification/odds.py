"""Equal opportunity and equalized odds as an LP over score atoms (beyond the paper).

Label-based criteria need the labels of the fitting sample, and a rule free to set each atom's
probability would simply copy them. The rule is therefore restricted, like Hardt et al.'s, to be
non-decreasing in the score within each group: ``q_j = sum_{i <= j} d_i`` with increments
``d_i >= 0`` and ``sum_i d_i <= 1`` (atoms sorted by score). A mixture of thresholds, in
other words, with ``d_i`` the weight of "predict 1 iff f >= f_i". In the increments every
group rate is linear with *suffix sums* as coefficients (the ROC curve of the group):

    TPR_k = (1/P_k) sum_i d_i R+_i,   FPR_k = (1/Q_k) sum_i d_i R-_i,   rate_k = (1/n_k) sum_i d_i R_i

with ``R+_i`` (``R-_i``, ``R_i``) the positive (negative, total) weight at scores ``>= f_i`` in
the group. The LP maximises accuracy ``sum_i d_i (R+_i - R-_i) / N`` (``objective="labels"``)
or the paper's score objective ``sum_i d_i F_i / N`` with ``F_i = sum_{j >= i} c_j f_j``
(``objective="scores"``), subject to ``|TPR_k - r1| <= eps/2`` (equal opportunity), plus
``|FPR_k - r0| <= eps/2`` (equalized odds), or ``|rate_k - r| <= eps/2`` (demographic parity),
with free common rates ``r1, r0, r in [0, 1]``. A simplex vertex mixes at most a few thresholds.

**Hull reduction.** With the accuracy objective every coefficient of ``d_i`` (gain, TPR, FPR and
rate rows) is a linear function of the group's ROC point ``(R-_i, R+_i)``, and ``sum d <= 1``
lets the leftover mass sit at ``(0, 0)``. So the set of reachable (objective, rates) per group is
the convex hull of ``{(0, 0)} and the ROC points``, and the LP restricted to the thresholds at
the hull's vertices has the same optimal value (every other point is a convex combination of
vertices, with the same total mass or less). The vertices are a few hundred at most in
practice, whatever the number of distinct scores, so the LP size no longer grows with ``n``;
only the sort and one hull per group (``O(n log n)``) do.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp
from scipy.spatial import ConvexHull, QhullError

from fairopt._param_validation import NONNEGATIVE, check_value
from fairopt.criteria import criterion, resolve
from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.constrained_classification.atoms import ScoreAtoms, collapse_atoms
from fairopt.formulations.constrained_classification.multiclass_lp import SolvedLP
from fairopt.modeling.parametric import ParametricProblem
from fairopt.modeling.registry import SolverSpec, resolve_solver

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling import Program

CONSTRAINTS = ("equal_opportunity", "equalized_odds", "demographic_parity")
#: increments below this are dropped from the deployed step rule
D_TOL = 1e-12


@dataclass
class StepRule:
    """Non-decreasing step rule of one group: ``h(f) = levels[searchsorted(cuts, f, 'right')]``."""

    cuts: np.ndarray
    levels: np.ndarray

    def __call__(self, f: np.ndarray) -> np.ndarray:
        return self.levels[np.searchsorted(self.cuts, f, side="right")]


@dataclass
class OddsSolution(SolvedLP):
    """Fitted monotone mixture-of-thresholds rule and its fitted group rates."""

    rules: list[Any]
    tpr: np.ndarray
    fpr: np.ndarray
    rate: np.ndarray
    accuracy: float
    objective: float

    def decision_probability(self, f: ArrayLike, groups: ArrayLike) -> np.ndarray:
        """``P(y_hat = 1)`` of rows with scores ``f`` in groups ``groups`` (one step rule per group)."""
        f = np.asarray(f, dtype=float)
        h = np.empty(f.shape[0])
        for g, rule in enumerate(self.rules):     # a loop over groups, not rows
            m = groups == g
            h[m] = rule(f[m])
        return h


def _suffix_within(x: np.ndarray, offsets: np.ndarray, cell: np.ndarray) -> np.ndarray:
    """``sum_{j >= i, same cell} x_j`` for cell-major arrays."""
    rc = np.concatenate([np.cumsum(x[::-1])[::-1], [0.0]])
    out: np.ndarray = rc[:-1] - rc[offsets[1:]][cell]
    return out


#: vectorised pruning passes before the hull falls back to Qhull on the remaining points
HULL_PASSES = 64


def hull_chain(x: np.ndarray, y: np.ndarray, upper: bool) -> np.ndarray:
    """Indices of the upper (or lower) convex hull vertices of a chain of points with
    non-decreasing ``x`` (ends included), by pruning: a point on or below (above) the segment
    joining its current neighbours is not a vertex, and all such points go at once, pass after
    pass (each removal is justified by points of the original set).

    Examples
    --------
    >>> import numpy as np
    >>> hull_chain(np.array([0., 1, 2, 3]), np.array([0., 2, 2.5, 3]), upper=True).tolist()
    [0, 1, 3]
    """
    idx = np.arange(x.shape[0])
    for _ in range(HULL_PASSES):
        if idx.size <= 2:
            return idx
        a, b, c = idx[:-2], idx[1:-1], idx[2:]
        cross = (x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a])
        bad = cross >= 0 if upper else cross <= 0
        if not bad.any():
            return idx
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~bad
        idx = idx[keep]
    try:      # slow convergence (long, nearly straight stretches): finish with Qhull
        vert = ConvexHull(np.column_stack([x[idx], y[idx]])).vertices
    except QhullError:   # all remaining points on one line: its ends suffice
        return idx[[0, -1]]
    return np.sort(idx[vert])


class ThresholdMixtureOdds:
    """Monotone randomized post-processing for label-based criteria, as an LP over atoms.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Scores (any monotone scale: the rule only uses their order).
    groups : array-like of int, shape (n,)
        Group codes ``0 .. K-1``.
    labels : array-like of {0, 1}, shape (n,)
        Labels of the fitting sample.
    constraint : {"equal_opportunity", "equalized_odds", "demographic_parity"}
    eps : float, default 0.0
        Largest allowed gap between the groups' TPRs (and FPRs).
    objective : {"labels", "scores"}, default "labels"
        Empirical accuracy, or the paper's ``E[h f]`` (needs ``f ~ 2 eta - 1``).
    """

    name = "constrained_classification.odds"

    def __init__(self, scores: ArrayLike | None, groups: ArrayLike | None, labels: ArrayLike | None,
                 constraint: str = "equalized_odds",
                 eps: float = 0.0, objective: Literal["labels", "scores"] = "labels",
                 sample_weight: ArrayLike | None = None, n_groups: int | None = None,
                 atoms: ScoreAtoms | None = None) -> None:
        constraint = resolve(constraint, CONSTRAINTS)
        if objective not in ("labels", "scores"):
            raise ConfigError(f"objective must be 'labels' or 'scores', got {objective!r}.")
        check_value("eps", eps, [NONNEGATIVE], "ThresholdMixtureOdds")   # the largest gap between group rates
        eps = float(eps)
        self.constraint, self.eps, self.objective = constraint, eps, objective
        if atoms is None:
            if scores is None or groups is None or labels is None:
                raise DataValidationError("pass scores, groups and labels (or precomputed atoms).")
            y = np.asarray(labels).reshape(-1)
            if not np.isin(y, (0, 1)).all():
                raise DataValidationError("labels must be 0/1.")
            atoms = collapse_atoms(scores, groups, n_groups, sample_weight, labels=y)
        elif atoms.positive is None:
            raise DataValidationError("atoms for the label-based constraints need their positive weights "
                                      "(collect them with labels).")
        self.atoms = at = atoms
        K = at.n_cells
        assert at.positive is not None  # collected with the labels (checked above)
        self.pos = at.positive
        self.neg = at.weight - at.positive
        self.P = np.bincount(at.cell, weights=self.pos, minlength=K)
        self.Q = np.bincount(at.cell, weights=self.neg, minlength=K)
        self.n = at.cell_weight
        # every label the criterion's events condition on must occur in every group (fairopt.criteria)
        for label in criterion(constraint).label_cells((1, 0), positive=1):
            bad = np.flatnonzero((self.P if label == 1 else self.Q) <= 0)
            if bad.size:
                kind, rate = ("positive", "true") if label == 1 else ("negative", "false")
                raise DataValidationError(f"groups {bad.tolist()} have no {kind} labels; their {rate} "
                                          "positive rate is undefined.")

    def _suffixes(self) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "_Rpn"):
            at = self.atoms
            self._Rpn = (_suffix_within(self.pos, at.offsets, at.cell), _suffix_within(self.neg, at.offsets, at.cell))
        return self._Rpn

    def support(self) -> np.ndarray:
        """Atoms whose thresholds the LP keeps: all of them for ``objective="scores"``, else the
        vertices of each group's hull of ROC points and ``(0, 0)`` (see the module docstring)."""
        at = self.atoms
        if self.objective != "labels":
            return np.arange(at.n_atoms)
        Rp, Rn = self._suffixes()
        keep = []
        for k in range(at.n_cells):   # a loop over groups, not rows
            sl = at.cell_slice(k)
            # the ROC chain from (0, 0) through the thresholds by decreasing score: both
            # coordinates non-decreasing, one strictly (every atom has positive weight)
            x = np.concatenate([[0.0], Rn[sl][::-1]])
            y = np.concatenate([[0.0], Rp[sl][::-1]])
            chain = np.union1d(hull_chain(x, y, upper=True), hull_chain(x, y, upper=False))
            keep.append(sl.stop - chain[chain > 0])
        return np.sort(np.concatenate(keep))

    def _rows(self, cols: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, sp.csr_matrix]]:
        at = self.atoms
        cols = np.arange(at.n_atoms) if cols is None else cols
        K = at.n_cells
        Rp, Rn = (r[cols] for r in self._suffixes())
        cell = at.cell[cols]
        blocks = {}
        if self.constraint in ("equal_opportunity", "equalized_odds"):
            blocks["tpr"] = Rp / self.P[cell]
        if self.constraint == "equalized_odds":
            blocks["fpr"] = Rn / self.Q[cell]
        if self.constraint == "demographic_parity":
            blocks["rate"] = (Rp + Rn) / self.n[cell]
        m = cols.shape[0]
        mats = {k: sp.csr_matrix((v, (cell, np.arange(m))), shape=(K, m)) for k, v in blocks.items()}
        return Rp, Rn, mats

    def build(self, cols: np.ndarray | None = None) -> Program:
        """The LP as a :class:`fairopt.modeling.Program`.

        Variables ``d`` (threshold weights, ``>= 0``; one per atom, or per atom of ``cols`` when
        given, e.g. :meth:`support`) and one free common rate per criterion
        (``tpr_common``, ``fpr_common`` or ``rate_common``); constraints ``mass`` (``sum d <= 1``
        per group) and ``tpr`` / ``fpr`` / ``rate`` (band of half-width ``eps/2`` around the
        common rate).
        """
        from fairopt.modeling import Program
        at = self.atoms
        K = at.n_cells
        cols = np.arange(at.n_atoms) if cols is None else cols
        m = cols.shape[0]
        Rp, Rn, mats = self._rows(cols)
        prog = Program(name=f"threshold_mixture_{self.constraint}")
        prog.add_variables("d", shape=(m,), lb=0.0, ub=1.0)
        ones = sp.csr_matrix((np.ones(m), (at.cell[cols], np.arange(m))), shape=(K, m))
        prog.add_constraints("mass", {"d": ones}, ub=1.0)
        half = 0.5 * self.eps
        for name, mat in mats.items():
            prog.add_variables(f"{name}_common", shape=(1,), lb=0.0, ub=1.0)
            prog.add_constraints(name, {"d": mat, f"{name}_common": -np.ones((K, 1))}, lb=-half, ub=half)
        N = float(at.weight.sum())
        if self.objective == "labels":
            gain = (Rp - Rn) / N
        else:
            gain = _suffix_within(at.weight * at.score, at.offsets, at.cell)[cols] / N
        prog.set_objective(linear={"d": gain}, sense="maximize")
        return prog

    def parametric_problem(self) -> ParametricProblem:
        """The LP with its rate rows as functions of ``eps`` (exact frontiers): the thresholds at
        each group's ROC-hull vertices, every rate row within ``eps/2`` of its free common rate,
        and the expected error as the method's objective (``objective="labels"`` only).

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> f, g = rng.uniform(-1, 1, 500), rng.integers(0, 2, 500)
        >>> y = (rng.uniform(size=500) < (f + 1) / 2).astype(int)
        >>> problem = ThresholdMixtureOdds(f, g, y, "equalized_odds").parametric_problem()
        >>> [r.name for r in problem.rows], problem.objective
        (['tpr', 'fpr'], 'expected error')
        """
        from fairopt.formulations.constrained_classification.parametric import odds_problem
        return odds_problem(self)

    def solve(self, solver: str | SolverSpec | None = None, **options: Any) -> OddsSolution:
        """Solve the LP (any LP solver of :mod:`fairopt.modeling`; the registry's default, a
        simplex, returns a vertex: a mixture of few thresholds per group)."""
        # a solver without LPs (native, sgd) is refused by the registry, naming those with
        spec = resolve_solver(solver, "LP")
        t0 = time.perf_counter()
        cols = self.support()
        prog = self.build(cols)
        sol = prog.solve(spec, require_optimal=True, **options)
        at = self.atoms
        d = np.zeros(at.n_atoms)
        d[cols] = np.clip(sol.primal["d"], 0.0, None)
        d[d < D_TOL] = 0.0
        q = np.minimum(np.concatenate([np.cumsum(d[at.cell_slice(k)]) for k in range(at.n_cells)]), 1.0)
        rules = []
        for k in range(at.n_cells):
            sl = at.cell_slice(k)
            f, dk = at.score[sl], d[sl]
            idx = np.flatnonzero(dk > 0)
            cuts = np.where(idx == 0, -np.inf, 0.5 * (f[idx] + f[np.maximum(idx - 1, 0)]))
            levels = np.concatenate([[0.0], np.minimum(np.cumsum(dk[idx]), 1.0)])
            rules.append(StepRule(cuts=cuts, levels=levels))
        K = at.n_cells
        tp = np.bincount(at.cell, weights=self.pos * q, minlength=K)
        fp = np.bincount(at.cell, weights=self.neg * q, minlength=K)
        acc = float((tp.sum() + (self.neg * (1 - q)).sum()) / at.weight.sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            tpr, fpr = tp / self.P, fp / self.Q
        return OddsSolution(rules=rules, tpr=tpr, fpr=fpr, rate=(tp + fp) / self.n, accuracy=acc,
                            objective=sol.objective, q=q, duals=dict(sol.dual), backend=sol.backend,
                            solver=sol.solver, solve_seconds=time.perf_counter() - t0)

    def summary(self) -> dict[str, Any]:
        return {"formulation": self.name, "problem_class": "LP", "constraint": self.constraint,
                "n_atoms": self.atoms.n_atoms, "n_groups": self.atoms.n_cells, "eps": self.eps}
