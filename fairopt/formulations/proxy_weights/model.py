"""The proxy-weights formulation: sampling weights that balance the kept sample."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.formulations.proxy_weights.programs import (
    check_conditional_matrix,
    hull_distance_l1,
    max_acceptance_weights,
    p1_program,
    solve_p1,
    uniform_target,
)
from fairopt.formulations.proxy_weights.sampling import imbalance, sampling_probabilities
from fairopt.modeling import Program, Solution, SolverSpec
from fairopt.modeling.program import ProgramSummary

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass
class ProxyWeightsResult:
    """Solution of :class:`ProxyWeights`.

    Attributes
    ----------
    q : ndarray (ℓ,)
        Optimal weights (on the simplex for P1; non-negative for P1′); 0 on dropped cells.
    p : ndarray (K,)
        ``Aᵀq``: the point of the hull (P1) or cone (P1′) nearest U.
    distance : float
        ``‖Aᵀq − u‖₂``: dist(U, C(A)) for P1, the cone residual for P1′.
    imbalance : float
        ``‖π − U‖₂`` of the kept sample's group distribution ``π = Aᵀq / 1ᵀq`` (equal to
        ``distance`` for P1; the quantity to report for P1′).
    rho : ndarray (ℓ,)
        Sampling probabilities of Algorithm 2, ``max ρ = 1``.
    normaliser : float
        ``C = max_j q_j/r̂_j``.
    acceptance_rate : float
        ``1ᵀq / C``: expected fraction of points kept.
    dropped_cells : ndarray of int
        Cells left out because their mass is at most ``min_cell_mass`` (ρ = 0 there).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.proxy_weights import ProxyWeights
    >>> result = ProxyWeights(np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([0.7, 0.3])).solve()
    >>> type(result).__name__, round(result.acceptance_rate, 4)
    ('ProxyWeightsResult', 0.525)
    """

    q: np.ndarray
    p: np.ndarray
    distance: float
    imbalance: float
    rho: np.ndarray
    normaliser: float
    acceptance_rate: float
    dropped_cells: np.ndarray
    relaxed: bool
    solution: Solution
    solve_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def distribution(self) -> np.ndarray:
        """Group distribution of the kept sample."""
        out: np.ndarray = self.p / self.p.sum()
        return out


class ProxyWeights:
    """P1 / P1′ of Deng et al. for a fitted proxy, plus the ρ conversion of Algorithm 1.

    Parameters
    ----------
    conditional_matrix : array (ℓ, K)
        ``A_jk = Pr[z = k | ẑ = j]``; rows are group distributions.
    cell_mass : array (ℓ,), optional
        ``r̂_j = Pr[ẑ = j]``; default uniform. Needed for ρ.
    relaxed : bool, default False
        Solve P1′ (no ``1ᵀq = 1``; non-negative least squares) instead of P1.
    acceptance : {"max", "solver"}, default "max"
        ``"max"`` runs the acceptance LP among optimal q so ρ is unique and acceptance is
        largest; ``"solver"`` keeps whichever optimal q the back end returned.
    min_cell_mass : float, default 0
        Cells with ``r̂_j`` at most this are dropped (ρ_j = 0): tiny cells make ρ explode and
        their rows are noisy estimates.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> result = ProxyWeights(A, cell_mass).solve()
    >>> result.q.round(6).tolist(), round(result.imbalance, 6)
    ([0.428571, 0.571429], 0.0)
    >>> result.rho.round(6).tolist(), round(result.acceptance_rate, 6)
    ([0.321429, 1.0], 0.525)
    """

    def __init__(self, conditional_matrix: ArrayLike, cell_mass: ArrayLike | None = None, *, relaxed: bool = False,
                 acceptance: Literal["max", "solver"] = "max", min_cell_mass: float = 0.0,
                 name: str = "proxy_weights") -> None:
        self.A = check_conditional_matrix(conditional_matrix)
        ell, self.K = self.A.shape
        self.cell_mass = np.full(ell, 1.0 / ell) if cell_mass is None else np.asarray(cell_mass, float)
        if self.cell_mass.shape != (ell,) or (self.cell_mass < 0).any() or not np.isfinite(self.cell_mass).all():
            raise DataValidationError(f"cell_mass must be {ell} non-negative numbers (one per row of A).")
        if acceptance not in ("max", "solver"):
            raise DataValidationError(f"acceptance must be 'max' or 'solver', got {acceptance!r}.")
        self.relaxed, self.acceptance, self.name = bool(relaxed), acceptance, name
        self.min_cell_mass = float(min_cell_mass)
        self.live = self.cell_mass > self.min_cell_mass
        if not self.live.any():
            raise DataValidationError(f"every cell has mass ≤ min_cell_mass = {self.min_cell_mass}.")

    def build(self, form: str = "lifted") -> Program:
        """The P1/P1′ :class:`~fairopt.modeling.Program` over the live cells."""
        return p1_program(self.A[self.live], relaxed=self.relaxed, form=form, name=self.name)

    def summary(self) -> ProgramSummary:
        """Describe the built program (blocks, sizes, problem class).

        Returns
        -------
        ProgramSummary
            The summary of :meth:`build`'s program.
        """
        return self.build().summary()

    def hull_distance_l1(self, solver: str | SolverSpec | None = None) -> float:
        """P3 optimum: ℓ₁ distance of U from C(A) over live cells (0 iff U ∈ C(A))."""
        return hull_distance_l1(self.A[self.live], solver)

    def solve(self, solver: str | SolverSpec | None = None) -> ProxyWeightsResult:
        """Solve for the proxy weights and the sampling probabilities.

        Parameters
        ----------
        solver : str or SolverSpec, optional
            Back end for the LP or QP (``"backend[:solver]"``).

        Returns
        -------
        ProxyWeightsResult
            Weights, sampling probabilities, disclosivity, imbalance and the solver's solution.

        Raises
        ------
        InfeasibleError
            If no weights meet the disclosivity bound.
        """
        t0 = time.perf_counter()
        A = self.A[self.live]
        q_live, sol = solve_p1(A, relaxed=self.relaxed, solver=solver)
        p = A.T @ q_live
        if self.acceptance == "max":
            # p = Aᵀq_live exactly, so the face {q: |Aᵀq − p| ≤ 1e-9} is non-empty
            q_live = max_acceptance_weights(A, self.cell_mass[self.live], p, tol=1e-9)
            if not self.relaxed:
                q_live = q_live / q_live.sum()
            p = A.T @ q_live
        q = np.zeros(self.A.shape[0])
        q[self.live] = q_live
        rho, C, rate = sampling_probabilities(q, self.cell_mass, self.min_cell_mass)
        u = uniform_target(self.K)
        return ProxyWeightsResult(
            q=q, p=p, distance=float(np.linalg.norm(p - u)), imbalance=imbalance(p / p.sum()),
            rho=rho, normaliser=C, acceptance_rate=rate, dropped_cells=np.flatnonzero(~self.live),
            relaxed=self.relaxed, solution=sol, solve_seconds=time.perf_counter() - t0)
