"""Covariance extension (Appendix E.1): bound ``|Cov(h, 1_S | k)|`` within known subgroups.

For a binary sensitive indicator ``s_i = 1_S(i)`` and subgroups ``k`` fixed in advance, the
fitted conditional covariance is ``(1/n_k) sum_{i in k} z_i q_i`` with ``z_i = s_i - rho_k`` and
``rho_k`` the share of ``S`` in subgroup ``k``. The model is

    minimize over 0 <= q_i <= 1   (1/N) sum_i [ (gamma/2) q_i^2 - f_i q_i ]
    subject to, for every k:      -eps <= (1/n_k) sum_{i in k} z_i q_i <= eps

(note ``eps``, not ``eps/2``). Its solution is ``q_i = clip((f_i - theta_k z_i)/gamma, 0, 1)``:
thresholds ``theta_k (1 - rho_k)`` for members of ``S`` and ``-theta_k rho_k`` for the others. The
exact solver carries over because ``c_k(theta) = (1/n_k) sum z_i clip((f_i - theta z_i)/gamma)``
is continuous and non-increasing. By Proposition 2 (E.2) the subgroups must be known: no
deterministic rule is unbiased over every possible grouping.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.constrained_classification.atoms import ScoreAtoms, collapse_atoms
from fairopt.formulations.constrained_classification.parity import (
    _no_options,
    check_parameters,
)
from fairopt.formulations.constrained_classification.ramp import (
    CellRamp,
    parity_threshold,
)
from fairopt.formulations.constrained_classification.solution import (
    ThresholdSolution,
    threshold_from_q,
)
from fairopt.modeling.registry import OWN_ALGORITHM, SolverSpec, accepts, resolve_solver, solve_own

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling import Program


class RandomizedThresholdCovariance:
    """Randomized thresholds bounding the conditional covariance with a binary attribute.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Scores in ``[-1, 1]``.
    sensitive : array-like of {0, 1}, shape (n,)
        Indicator ``1_S`` of the sensitive class.
    subgroups : array-like of int, shape (n,), optional
        Subgroup codes ``0 .. K-1`` (default: one subgroup).
    gamma : float, default 0.1
        Ramp width (``> 0``).
    eps : float, default 0.0
        Bound on ``|Cov(h, 1_S | k)|``.
    sample_weight : array-like, optional
        Row weights.

    Notes
    -----
    Cells are ``(k, s)`` pairs with code ``2 k + s``; ``thresholds`` of the solution are per cell.
    """

    name = "constrained_classification.covariance"

    def __init__(self, scores: ArrayLike | None, sensitive: ArrayLike | None, subgroups: ArrayLike | None = None,
                 gamma: float = 0.1, eps: float = 0.0, sample_weight: ArrayLike | None = None,
                 n_subgroups: int | None = None, atoms: ScoreAtoms | None = None) -> None:
        self.gamma, self.eps, _ = check_parameters(gamma, eps, None)
        if self.gamma <= 0:
            raise ConfigError("the covariance model needs gamma > 0 (its rule is a ramp in z-scaled scores).")
        if atoms is None:
            if scores is None or sensitive is None:
                raise DataValidationError("pass scores and sensitive (or precomputed atoms).")
            s = np.asarray(sensitive).reshape(-1)
            if not np.isin(s, (0, 1)).all():
                raise DataValidationError("sensitive must be a 0/1 indicator of the sensitive class.")
            k = np.zeros(s.shape[0], dtype=np.int64) if subgroups is None else np.asarray(subgroups).reshape(-1)
            K = int(k.max()) + 1 if n_subgroups is None else int(n_subgroups)
            atoms = collapse_atoms(scores, 2 * k.astype(np.int64) + s.astype(np.int64), 2 * K,
                                   sample_weight, allow_empty=True)
        else:                               # precomputed atoms over the cells 2 k + s
            K = atoms.n_cells // 2
        self.atoms = atoms
        cw = self.atoms.cell_weight.reshape(K, 2)
        self.subgroup_weight = cw.sum(axis=1)
        if (self.subgroup_weight <= 0).any():
            raise DataValidationError(f"subgroups {np.flatnonzero(self.subgroup_weight <= 0).tolist()} "
                                      "have no rows.")
        self.share = cw[:, 1] / self.subgroup_weight          # rho_k
        self.n_subgroups = K
        at = self.atoms
        self.sub = at.cell // 2
        self.z = (at.cell % 2) - self.share[self.sub]

    def cell_thresholds(self, theta: np.ndarray) -> np.ndarray:
        """Per-cell thresholds ``theta_k z``: ``theta_k (1 - rho_k)`` for S, ``-theta_k rho_k`` else."""
        out = np.empty(2 * self.n_subgroups)
        out[0::2] = -theta * self.share
        out[1::2] = theta * (1 - self.share)
        return out

    def _finish(self, theta: np.ndarray, backend: str, solver: str, t0: float, **info: Any) -> ThresholdSolution:
        at = self.atoms
        q = np.clip((at.score - theta[self.sub] * self.z) / self.gamma, 0.0, 1.0)
        cov = np.bincount(self.sub, weights=at.weight * self.z * q, minlength=self.n_subgroups) / self.subgroup_weight
        obj = float(np.sum(at.weight * (0.5 * self.gamma * q * q - at.score * q)) / at.weight.sum())
        th = self.cell_thresholds(theta)
        return ThresholdSolution(thresholds=th, tie_probs=np.zeros_like(th), theta=np.asarray(theta, float),
                                 rho=float("nan"), gamma=self.gamma, eps=self.eps, rates=cov, objective=obj,
                                 q=q, backend=backend, solver=solver,
                                 solve_seconds=time.perf_counter() - t0, info=info)

    def build(self) -> Program:
        """QP over atoms: variables ``q``; constraint ``covariance`` (one row per subgroup)."""
        from fairopt.modeling import Program
        at, K = self.atoms, self.n_subgroups
        N = float(at.weight.sum())
        prog = Program(name="threshold_covariance_qp")
        prog.add_variables("q", shape=(at.n_atoms,), lb=0.0, ub=1.0)
        coef = at.weight * self.z / self.subgroup_weight[self.sub]
        A = sp.csr_matrix((coef, (self.sub, np.arange(at.n_atoms))), shape=(K, at.n_atoms))
        prog.add_constraints("covariance", {"q": A}, lb=-self.eps, ub=self.eps)
        c = at.weight * (at.n_atoms / N)
        prog.set_objective(linear={"q": -c * at.score}, quadratic={("q", "q"): sp.diags(self.gamma * c)})
        return prog

    def solve_native(self, t0: float | None = None, **options: Any) -> ThresholdSolution:
        """The exact solver, one threshold root per subgroup (run by the ``native`` back end)."""
        _no_options("exact", options)
        t0 = time.perf_counter() if t0 is None else t0
        at, K = self.atoms, self.n_subgroups
        a = at.weight / self.subgroup_weight[self.sub]
        theta = np.zeros(K)
        for k in range(K):
            m = self.sub == k
            theta[k] = parity_threshold(CellRamp(at.score[m], a[m], self.gamma, self.z[m]), 0.0, self.eps)
        return self._finish(theta, OWN_ALGORITHM, "exact", t0)

    def solve_sgd(self, t0: float | None = None, **options: Any) -> ThresholdSolution:
        """Projected SGD on the covariance dual (run by the ``sgd`` back end); ``options`` go to
        :func:`~fairopt.formulations.constrained_classification.sgd.sgd_thresholds`."""
        from fairopt.formulations.constrained_classification.atoms import ScoreAtoms
        from fairopt.formulations.constrained_classification.sgd import sgd_thresholds
        t0 = time.perf_counter() if t0 is None else t0
        at, K = self.atoms, self.n_subgroups
        offsets = np.searchsorted(self.sub, np.arange(K + 1))
        sub_atoms = ScoreAtoms(cell=self.sub, score=at.score, weight=at.weight, positive=None,
                               offsets=offsets)
        theta, state = sgd_thresholds(sub_atoms, self.gamma, 0.0, self.eps, z=self.z, **options)
        out = self._finish(theta, OWN_ALGORITHM, "projected_sgd", t0, n_steps=state.n_steps)
        out.status, out.iterations = "iteration_limit", state.n_steps
        return out

    def solve(self, solver: str | SolverSpec | None = None, **options: Any) -> ThresholdSolution:
        """Solve with a solver of threshold problems (default the registry's: ``"native"``,
        exact; ``"sgd"``) or a Program QP solver."""
        t0 = time.perf_counter()
        at, K = self.atoms, self.n_subgroups
        if solver is None or accepts(solver, "threshold"):   # the problem's own algorithms
            out: ThresholdSolution = solve_own(self, resolve_solver(solver, "threshold"), "threshold", t0=t0, **options)
            return out
        spec = resolve_solver(solver, "QP")
        prog = self.build()
        sol = prog.solve(spec, require_optimal=True, **options)
        q = np.clip(sol.primal["q"], 0.0, 1.0)
        dual = -sol.dual["covariance"] * (float(at.weight.sum()) / at.n_atoms) / self.subgroup_weight
        theta = np.array([threshold_from_q(at.score[self.sub == k], q[self.sub == k], self.gamma,
                                           z=self.z[self.sub == k], weight=at.weight[self.sub == k],
                                           dual=float(dual[k])) for k in range(K)])
        return self._finish(theta, sol.backend, sol.solver, t0, q_solver=q)

    def summary(self) -> dict[str, Any]:
        return {"formulation": self.name, "problem_class": "QP", "n_atoms": self.atoms.n_atoms,
                "n_subgroups": self.n_subgroups, "gamma": self.gamma, "eps": self.eps}
