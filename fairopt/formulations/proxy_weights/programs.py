"""The proxy-weights programs of balanced filtering (Deng, Diana, Kearns & Roth).

Notation: ``A`` (ℓ×K) is the conditional matrix, row ``a_j`` the group distribution inside
proxy cell ``j``; ``r̂`` the cell masses; ``u = U' = (1/K, ..., 1/K)``.

P1 (Algorithm 1), lifted with ``p = Aᵀq``::

    min ‖p − u‖²   s.t.  p − Aᵀq = 0  (lift),   1ᵀq = 1  (simplex),   q ≥ 0

The objective is strictly convex in ``p``, so ``p*`` (the point of the hull C(A) nearest U) is
unique even where ``q*`` is not, and the Hessian is diagonal. P1′ (``relaxed=True``) drops the
simplex row: a non-negative least-squares problem whose ``p*`` is the point of the cone spanned by
the rows nearest U. Since rows of A sum to one, ``1ᵀp = 1ᵀq`` and ``‖p − u‖² = ‖p‖² − 1/K`` on
the simplex.

P3, hull membership: the phase-I LP ``min 1ᵀ(s⁺ + s⁻)`` s.t. ``Aᵀq + s⁺ − s⁻ = u``, ``1ᵀq = 1``;
its optimum (an ℓ₁ distance) is 0 exactly when U ∈ C(A).

Acceptance LP: among optimal q, ``min t`` s.t. ``|Aᵀq − p*| ≤ τ``, ``1ᵀq = 1ᵀp*``, ``q ≤ t·r̂``.
Its optimum is the smallest normaliser C, so the acceptance rate ``1ᵀq/C`` is the largest and ρ
is unique up to LP degeneracy.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.errors import DataValidationError, SolverError
from fairopt.modeling import Program, SolverSpec, Status
from fairopt.modeling.registry import accepts, capabilities, resolve_solver, solve_own, with_feasibility_tolerance
from fairopt.modeling.solution import Solution


def check_conditional_matrix(A: ArrayLike) -> np.ndarray:
    """Return ``A`` as a float (ℓ, K) array after checking that its rows are distributions."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 2:
        raise DataValidationError(f"conditional matrix must be 2-D (cells × groups, ≥ 2 groups); "
                                  f"got shape {A.shape}.")
    if not np.isfinite(A).all() or (A < -1e-12).any():
        raise DataValidationError("conditional matrix must hold finite, non-negative probabilities.")
    bad = np.abs(A.sum(axis=1) - 1.0) > 1e-8
    if bad.any():
        j = int(np.argmax(bad))
        raise DataValidationError(f"row {j} of the conditional matrix sums to {A[j].sum():.6g}; "
                                  "each row must be a group distribution summing to 1.")
    out: np.ndarray = np.clip(A, 0.0, None)
    return out


def uniform_target(K: int) -> np.ndarray:
    return np.full(K, 1.0 / K)


def default_form(solver: str | SolverSpec | None = None) -> str:
    """An active-set QP solver (capability ``active_set_qp`` in ``fairopt solvers``: HiGHS's
    QP, directly or through pyomo or cvxpy) gets the condensed form, the others the lifted one.

    On the lifted form with free ``p`` HiGHS stopped with "claims optimality, but with primal
    infeasibilities" on 6 of 40 random skewed instances; the condensed form solved all 40.

    Examples
    --------
    >>> default_form(), default_form("osqp")
    ('condensed', 'lifted')
    """
    return "condensed" if capabilities(resolve_solver(solver, "QP"))["active_set_qp"] else "lifted"


class _SimplexLeastSquares:
    """P1/P1′ as a problem of kind ``simplex_qp``, for the solvers that take that structure."""

    kind = "simplex_qp"

    def __init__(self, A: np.ndarray, relaxed: bool, u: np.ndarray) -> None:
        self.A, self.relaxed, self.u = A, relaxed, u

    def solve_native(self, tol: float = 1e-10, max_iter: int = 20_000) -> Solution:
        t0 = time.perf_counter()
        q, iters, ok = solve_native(self.A, relaxed=self.relaxed, target=self.u, tol=tol, max_iter=max_iter)
        p = self.A.T @ q
        return Solution(status=Status.OPTIMAL if ok else Status.ITERATION_LIMIT,
                        objective=float((p - self.u) @ (p - self.u)), primal={"q": q, "p": p}, dual={},
                        backend="", solver="", solve_seconds=time.perf_counter() - t0, iterations=iters,
                        program="proxy_weights")


def p1_program(A: ArrayLike, relaxed: bool = False, target: ArrayLike | None = None, form: str = "lifted",
               name: str = "proxy_weights") -> Program:
    """P1 (or P1′ if ``relaxed``); the objective equals ``‖Aᵀq − u‖²`` in both forms.

    ``form="lifted"`` uses variables ``(q, p)`` with the equality block ``lift``;
    ``form="condensed"`` uses ``q`` alone with Hessian ``2AAᵀ`` and linear term ``−2Au``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> program = p1_program(A)
    >>> program.summary().problem_class, round(program.solve().objective, 9)
    ('QP', 0.0)
    """
    A = check_conditional_matrix(A)
    ell, K = A.shape
    u = uniform_target(K) if target is None else np.asarray(target, dtype=float)
    if form not in ("lifted", "condensed"):
        raise DataValidationError(f"form must be 'lifted' or 'condensed', got {form!r}.")
    prog = Program(name + ("_relaxed" if relaxed else ""))
    prog.add_variables("q", shape=(ell,), lb=0.0)
    if form == "lifted":
        prog.add_variables("p", shape=(K,), lb=None)
        prog.add_constraints("lift", {"p": sp.identity(K, format="csr"), "q": -sp.csr_matrix(A.T)},
                             lb=0.0, ub=0.0)
        prog.set_objective(linear={"p": -2.0 * u}, quadratic={("p", "p"): 2.0 * sp.identity(K)},
                           constant=float(u @ u))
    else:
        prog.set_objective(linear={"q": -2.0 * A @ u}, quadratic={("q", "q"): 2.0 * A @ A.T},
                           constant=float(u @ u))
    if not relaxed:
        prog.add_constraints("simplex", {"q": np.ones((1, ell))}, lb=1.0, ub=1.0)
    return prog


def hull_membership_program(A: ArrayLike, target: ArrayLike | None = None, name: str = "hull_membership") -> Program:
    """P3 as a phase-I LP; optimum 0 iff the target lies in the convex hull of A's rows.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> round(hull_membership_program(A).solve().objective, 9)   # uniform is in the hull
    0.0
    """
    A = check_conditional_matrix(A)
    ell, K = A.shape
    u = uniform_target(K) if target is None else np.asarray(target, dtype=float)
    prog = Program(name)
    prog.add_variables("q", shape=(ell,), lb=0.0)
    prog.add_variables("s_plus", shape=(K,), lb=0.0)
    prog.add_variables("s_minus", shape=(K,), lb=0.0)
    eye = sp.identity(K, format="csr")
    prog.add_constraints("target", {"q": sp.csr_matrix(A.T), "s_plus": eye, "s_minus": -eye}, lb=u, ub=u)
    prog.add_constraints("simplex", {"q": np.ones((1, ell))}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"s_plus": np.ones(K), "s_minus": np.ones(K)})
    return prog


def acceptance_program(A: ArrayLike, cell_mass: ArrayLike, p_star: ArrayLike, tol: float = 1e-7,
                       name: str = "max_acceptance") -> Program:
    """The LP ``min t`` over optimal q (``|Aᵀq − p*| ≤ tol``) with ``q_j ≤ t·r̂_j``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> q_star = np.array([3 / 7, 4 / 7])
    >>> program = acceptance_program(A, cell_mass, A.T @ q_star)
    >>> program.solve().is_optimal
    True
    """
    A = check_conditional_matrix(A)
    ell = A.shape[0]
    r_hat = np.asarray(cell_mass, dtype=float)
    p_star = np.asarray(p_star, dtype=float)
    prog = Program(name)
    prog.add_variables("q", shape=(ell,), lb=0.0)
    prog.add_variables("t", shape=(1,), lb=0.0)
    prog.add_constraints("optimal_face", {"q": sp.csr_matrix(A.T)}, lb=p_star - tol, ub=p_star + tol)
    prog.add_constraints("mass", {"q": np.ones((1, ell))}, lb=p_star.sum(), ub=p_star.sum())
    prog.add_constraints("ratio", {"q": sp.identity(ell, format="csr"), "t": -r_hat.reshape(-1, 1)},
                         ub=0.0)
    prog.set_objective(linear={"t": [1.0]})
    return prog


# ---- native reference ------------------------------------------------------------------------
def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex (sort-based).

    Examples
    --------
    >>> import numpy as np
    >>> project_simplex(np.array([0.8, 0.6])).round(6).tolist()
    [0.6, 0.4]
    """
    s = np.sort(v)[::-1]
    css = np.cumsum(s) - 1.0
    k = np.arange(1, v.size + 1)
    cond = s - css / k > 0
    rho = k[cond][-1]
    out: np.ndarray = np.maximum(v - css[rho - 1] / rho, 0.0)
    return out


def solve_native(A: ArrayLike, relaxed: bool = False, target: ArrayLike | None = None, tol: float = 1e-13,
                 max_iter: int = 200_000) -> tuple[np.ndarray, int, bool]:
    """Accelerated projected gradient on the condensed form ``f(q) = ‖Aᵀq − u‖²``.

    Stops when an optimality measure falls below ``tol``: on the simplex the Frank–Wolfe gap
    ``⟨∇f, q⟩ − min_j ∇f_j`` (an upper bound on ``f(q) − f*``); on the orthant (P1′) the KKT
    residual ``max_j |min(q_j, ∇f_j)|``. Returns ``(q, iterations, converged)``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> q, iterations, converged = solve_native(A)
    >>> q.round(6).tolist(), converged
    ([0.428571, 0.571429], True)
    """
    A = check_conditional_matrix(A)
    ell, K = A.shape
    u = uniform_target(K) if target is None else np.asarray(target, dtype=float)
    L = 2.0 * np.linalg.norm(A, 2) ** 2  # Lipschitz constant of ∇f
    project = (lambda v: np.maximum(v, 0.0)) if relaxed else project_simplex
    q = np.full(ell, 1.0 / ell)
    y, q_prev, theta = q.copy(), q.copy(), 1.0
    for it in range(1, max_iter + 1):
        grad_y = 2.0 * A @ (A.T @ y - u)
        q = project(y - grad_y / L)
        grad = 2.0 * A @ (A.T @ q - u)
        if relaxed:
            gap = float(np.max(np.abs(np.minimum(q, grad))))
        else:
            gap = float(grad @ q - grad.min())
        if gap <= tol:
            return q, it, True
        theta_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
        y = q + ((theta - 1.0) / theta_next) * (q - q_prev)
        if (grad @ (q - q_prev)) > 0:  # adaptive restart keeps the method monotone
            y, theta_next = q.copy(), 1.0
        q_prev, theta = q, theta_next
    return q, max_iter, False


def solve_p1(A: ArrayLike, relaxed: bool = False, solver: str | SolverSpec | None = None,
             target: ArrayLike | None = None,
             form: str | None = None) -> tuple[np.ndarray, Solution]:
    """Solve P1/P1′ with any QP solver (default: the registry's) or a solver of the structured
    kind ``simplex_qp`` (``native:projected_gradient``); return ``(q, solution)``.

    ``form`` defaults to :func:`default_form` of the solver.

    ``q`` is clipped to ≥ 0 (and renormalised onto the simplex for P1). Non-optimal solver
    status raises :class:`SolverError`.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> q, solution = solve_p1(A)
    >>> q.round(6).tolist(), solution.is_optimal
    ([0.428571, 0.571429], True)
    """
    structured = solver is not None and accepts(solver, "simplex_qp")
    spec = resolve_solver(solver, "simplex_qp" if structured else "QP")
    A = check_conditional_matrix(A)
    K = A.shape[1]
    u = uniform_target(K) if target is None else np.asarray(target, dtype=float)
    if structured:
        sol = solve_own(_SimplexLeastSquares(A, relaxed, u), spec, "simplex_qp")
        sol.backend, sol.solver = spec.backend, str(spec.solver)
    else:
        sol = p1_program(A, relaxed=relaxed, target=u, form=form or default_form(spec)).compile(spec).solve()
    if not sol.is_optimal:
        raise SolverError(f"proxy-weights QP ended with status {sol.status} on back end "
                          f"{sol.backend!r}; raise max_iter / the time limit or choose another back end.",
                          status=sol.status, log=sol.log)
    q = np.clip(np.asarray(sol.primal["q"], dtype=float), 0.0, None)
    if not relaxed:
        q = q / q.sum()
    return q, sol


def hull_distance_l1(A: ArrayLike, solver: str | SolverSpec | None = None, target: ArrayLike | None = None) -> float:
    """Optimum of P3: the ℓ₁ distance from the target to C(A) (0 iff inside).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> round(hull_distance_l1(A), 9)        # the uniform distribution is in the hull
    0.0
    """
    return float(hull_membership_program(A, target).solve(solver, require_optimal=True).objective)


def max_acceptance_weights(A: ArrayLike, cell_mass: ArrayLike, p_star: ArrayLike,
                           solver: str | SolverSpec | None = None, tol: float = 1e-9) -> np.ndarray:
    """q on the optimal face of P1/P1′ that minimises ``max_j q_j/r̂_j`` (acceptance LP).

    A solver that declares its primal feasibility tolerance option (``fairopt solvers``:
    HiGHS) runs with it at ``tol/10`` so the face is kept to ``tol``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> q_star = np.array([0.428571, 0.571429])
    >>> max_acceptance_weights(A, cell_mass, A.T @ q_star).round(4).tolist()
    [0.4286, 0.5714]
    """
    spec = resolve_solver(solver, "LP")
    spec = with_feasibility_tolerance(spec, tol / 10)
    sol = acceptance_program(A, cell_mass, p_star, tol).compile(spec).solve()
    if not sol.is_optimal:
        raise SolverError(f"acceptance LP ended with status {sol.status}; widen tol (the optimal "
                          "face of P1 was not reproduced within it).", status=sol.status, log=sol.log)
    out: np.ndarray = np.clip(np.asarray(sol.primal["q"], dtype=float), 0.0, None)
    return out
