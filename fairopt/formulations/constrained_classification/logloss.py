"""Fair robust log-loss classification (Rezaei, Fathony, Memarrast & Ziebart, AAAI 2020).

The predictor ℙ minimises the worst-case log loss against an approximator ℚ that matches the
training feature moments, subject to a group-fairness constraint on ℙ (Eq. 9). Its dual is
``min_θ max_λ V(θ, λ)`` (Eq. 10); with ``φ(x, ŷ) = ŷ·x`` (``x`` holds the protected attribute
and, with ``fit_intercept``, a constant), the objective after the exact inner step is

    J(θ) = (1/n) Σ_i ℓ_i(θ, λ*(θ)) + (C/2) ‖θ_pen‖²

(Eq. 13, mean loss; the intercept is not penalised). ``ℓ_i + y_i s_i`` is ``log(1 + e^{s_i})``
on untruncated rows, ``s_i + log c_i`` on capped rows and ``log(−c_i)`` on floored rows
(``s = Xθ``). Without constraint, ``J`` is L2 logistic regression (scikit-learn's ``C`` is
``1/(nC)``).

Gradient (envelope theorem; **not** the paper's Eqs. 67–71, which use ``P_e`` instead of ``q``
at untruncated constrained rows)::

    ∇J(θ) = Xᵀ(q − y)/n + C θ_pen,    q = ℚ(ŷ=1) = P (1 + c (1 − P))

``native`` runs L-BFGS on ``J`` with the exact λ*(θ) of
:mod:`~fairopt.formulations.constrained_classification.logloss_fairness`. ``J`` has a kink on
``{θ : mean_{G1} P_e = mean_{G0} P_e}``, where the optimum often lies (the model can equalise the
untruncated rates by shifting the group offset); there L-BFGS stalls. The native solver then
finishes with semismooth Newton on the saddle conditions of ``V``::

    F(θ, λ) = [ Xᵀ(q(θ, λ) − y)/n + C θ_pen ,  gaps(ℙ_{θ,λ}) ] = 0

whose generalised Jacobian ``[[XᵀWX/n + C I_pen, B], [Bᵀ, −E]]`` is quasi-definite (``W`` the
curvature of the untruncated rows, ``E ⪰ 0`` from truncated rows), and certifies the result by
``‖F‖``: a saddle point of the convex–concave ``V``. λ̂ (interior on the kink) is stored and used
for ℙ and ℚ everywhere.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from fairopt.errors import DataValidationError
from fairopt.formulations.constrained_classification.logloss_fairness import (
    FairnessRows,
    RowTerms,
    approximator,
    exact_lambda,
    fairness_rows,
    no_truncation_interval,
    truncate,
)
from fairopt.formulations.constrained_classification.logloss_predict import FairLogLossRule
from fairopt.formulations.constrained_classification.logloss_problem import FairLogLossProblem as FairLogLossProblem
from fairopt.modeling.registry import backend_info
from fairopt.modeling.smooth import SmoothSolution, build_form, solve_smooth
from fairopt.modeling.solution import Status

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling import SolverSpec

#: training gap of group means the Newton polish drives below
GAP_TOL = 1e-11
#: training gap every back end's ℙ meets after the post-solve step (:meth:`FairLogLoss.exact_fairness`)
FAIR_TOL = 1e-9
#: dense features with fewer nonzeros than this fraction are stored sparse
SPARSE_DENSITY = 0.25


@dataclass
class FairLogLossSolution(SmoothSolution):
    """A solved fair log-loss model.

    ``primal["theta"]`` holds θ (the intercept last, when fitted); ``dual["fairness"]`` the
    price of fairness ``d J*/d gap = −λ`` per constraint row. ``lam`` is the paper's λ (interior
    of the no-truncation interval when the optimum is on the kink), ``P`` and ``q`` the training
    predictor and approximator, ``gaps`` the training gaps of ``P`` and ``kkt`` the saddle
    residual ``max(‖∇_θ V + Cθ_pen‖∞, ‖gaps‖∞)``; ``rule`` the test-time predictor.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification import FairLogLoss
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 200)
    >>> X = rng.normal(size=(200, 2))
    >>> solution = FairLogLoss(X, (X[:, 0] > 0).astype(int), group).solve()
    >>> type(solution).__name__, solution.is_optimal
    ('FairLogLossSolution', True)
    """

    lam: np.ndarray | None = None
    P: np.ndarray | None = field(default=None, repr=False)
    q: np.ndarray | None = field(default=None, repr=False)
    gaps: np.ndarray | None = None
    kkt: float = float("nan")
    n_truncated: int = 0
    on_kink: bool = False
    rows: list[Any] = field(default_factory=list)
    rule: FairLogLossRule | None = field(default=None, repr=False)


class FairLogLoss:
    """Fair robust log-loss model for one training sample.

    Parameters
    ----------
    X : array or sparse matrix (n, d)
        Features ``x`` (``φ(x, ŷ) = ŷ·x``); include the protected attribute as a feature to
        follow the paper.
    y : array (n,) of {0, 1}
        Labels (1 = favourable outcome).
    group : array (n,) of int
        Protected group codes ``0..K−1``; with two groups, code 1 is ``G1``.
    constraint : {"demographic_parity", "equal_opportunity", "equalized_odds"} or None
        Fairness constraint on ℙ (training sample); ``K > 2`` groups take demographic parity.
    C : float, default 0.01
        L2 weight on the mean-loss scale: ``J = mean ℓ + (C/2)‖θ‖²``.
    fit_intercept : bool, default True
        Append an unpenalised constant feature.
    n_groups : int, optional
        ``K`` (default ``group.max() + 1``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 200)
    >>> X = rng.normal(size=(200, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> solution = FairLogLoss(X, y, group, C=0.01).solve()
    >>> solution.status, bool(np.abs(solution.gaps).max() < 1e-8)
    (<Status.OPTIMAL: 'optimal'>, True)
    """

    name = "fair_logloss"

    def __init__(self, X: ArrayLike | sp.spmatrix, y: ArrayLike, group: ArrayLike,
                 constraint: str | None = "demographic_parity", C: float = 0.01,
                 fit_intercept: bool = True, n_groups: int | None = None) -> None:
        if not np.isfinite(C) or C < 0:
            raise DataValidationError(f"C must be finite and >= 0, got {C}.")
        X = sp.csr_matrix(X, dtype=float) if sp.issparse(X) else np.asarray(X, dtype=float)
        n = X.shape[0]
        if sp.issparse(X):
            if fit_intercept:
                X = sp.hstack([X, sp.csr_matrix(np.ones((n, 1)))], format="csr")
        else:
            # the density of the design with its intercept column, without building it first
            size, nnz = n * (X.shape[1] + int(fit_intercept)), np.count_nonzero(X) + n * int(fit_intercept)
            if size and nnz < SPARSE_DENSITY * size:
                # one-hot designs: products and the Newton Gram cost nnz
                X = _csr_with_intercept(X, fit_intercept)
            elif fit_intercept:
                # column-major (faster X @ θ, Xᵀ v), filled in one copy
                dense = np.empty((n, X.shape[1] + 1), order="F")
                dense[:, :-1] = X
                dense[:, -1] = 1.0
                X = dense
            else:
                X = np.asfortranarray(X)
        self.X = X
        self.y = np.asarray(y, dtype=float).reshape(-1)
        if self.y.shape[0] != n or not np.all((self.y == 0) | (self.y == 1)):
            raise DataValidationError("y must hold one 0/1 label per row of X.")
        self.group = np.asarray(group, dtype=np.int64).reshape(-1)
        self.constraint, self.C, self.fit_intercept = constraint, float(C), bool(fit_intercept)
        self.rows: FairnessRows = fairness_rows(self.group, self.y.astype(np.int64), constraint, n_groups)
        self.penalized = np.ones(X.shape[1])
        if fit_intercept:
            self.penalized[-1] = 0.0

    @property
    def n(self) -> int:
        """Number of training rows."""
        out: int = self.X.shape[0]
        return out

    @property
    def dim(self) -> int:
        """Number of parameters (features, plus the intercept when fitted)."""
        out: int = self.X.shape[1]
        return out

    # ----------------------------------------------------------------------- oracles
    def terms(self, theta: np.ndarray, lam: np.ndarray | None = None,
              orders: list[Any] | None = None) -> tuple[RowTerms, list[Any] | None]:
        """Predictor and approximator at θ and λ (default: the exact λ*(θ))."""
        s = self.X @ theta
        pe, pe_bar = expit(s), expit(-s)
        if lam is None:
            lam, orders = exact_lambda(pe, pe_bar, self.rows, orders)
        lam = np.asarray(lam, dtype=float)
        c = self.rows.c(lam)
        P, P_bar, capped, floored = truncate(pe, pe_bar, c)
        q, _ = approximator(P, P_bar, c, capped, floored)
        return RowTerms(s, pe, pe_bar, lam, c, P, P_bar, capped, floored, q), orders

    def row_losses(self, t: RowTerms) -> np.ndarray:
        """``ℓ_i`` of Eq. 13 at ``t`` (equal to ``V``'s terms minus ``c_i P_i``)."""
        one = np.ones_like(t.c)
        out: np.ndarray = np.where(t.capped, t.s + np.log(np.where(t.capped, t.c, one)),
                                   np.where(t.floored, np.log(np.where(t.floored, -t.c, one)),
                                            np.logaddexp(0.0, t.s))) - self.y * t.s
        return out

    def regulariser(self, theta: np.ndarray) -> float:
        """Value of the L2 penalty ``C/2 * ||theta||^2`` on the penalised coordinates.

        Parameters
        ----------
        theta : ndarray of shape (dim,)
            Parameter vector.

        Returns
        -------
        float
            The penalty.
        """
        return 0.5 * self.C * float(np.sum(self.penalized * theta * theta))

    def gradient(self, theta: np.ndarray, t: RowTerms) -> np.ndarray:
        """``Xᵀ(q − y)/n + C θ_pen`` (envelope theorem; ∇J at λ*, ∇_θ V at any fixed λ)."""
        out: np.ndarray = self.X.T @ (t.q - self.y) / self.n + self.C * self.penalized * theta
        return out

    def objective(self, theta: np.ndarray, lam: np.ndarray | None = None) -> float:
        """``J(θ)`` (``lam=None``), or ``V(θ, λ) + (C/2)‖θ_pen‖²`` at a fixed λ."""
        t, _ = self.terms(theta, lam)
        extra = 0.0 if lam is None else float(np.mean(t.c * t.P))
        return float(np.mean(self.row_losses(t))) + extra + self.regulariser(theta)

    def saddle_residual(self, theta: np.ndarray, lam: np.ndarray) -> tuple[float, float, RowTerms]:
        """``(‖∇_θ V + Cθ_pen‖∞, ‖gaps‖∞)`` at ``(θ, λ)``: both zero exactly at the saddle."""
        theta, lam = np.asarray(theta, dtype=float), np.asarray(lam, dtype=float)
        # the solver's last check and the post-solve certificate ask for the same point: one pass
        last = self.__dict__.get("_last_residual")
        if last is not None and np.array_equal(last[0], theta) and np.array_equal(last[1], lam):
            result: tuple[float, float, RowTerms] = last[2]
            return result
        t, _ = self.terms(theta, lam)
        g = self.gradient(theta, t)
        gaps = self.rows.gaps(t.P)
        out = float(np.max(np.abs(g))), float(np.max(np.abs(gaps), initial=0.0)), t
        self._last_residual = (theta.copy(), lam.copy(), out)
        return out

    @staticmethod
    def certified(grad_norm: float, gap_norm: float, tol: float) -> bool:
        """Saddle conditions met to ``tol``: stationarity and training gaps of ℙ."""
        return grad_norm <= tol and gap_norm <= tol

    # ----------------------------------------------------------------------- forms
    def build(self, backend: str | None = None) -> Any:
        """The joint convex form as a ``cvxpy.Problem`` (``backend="cvxpy"``, the default) or a
        pyomo ``ConcreteModel`` (``backend="pyomo"``): :func:`fairopt.modeling.smooth.build_form`."""
        return build_form(self.to_problem(), backend)

    def to_problem(self) -> FairLogLossProblem:
        """Wrap the model as a smooth problem for :func:`fairopt.modeling.smooth.solve_smooth`.

        Returns
        -------
        FairLogLossProblem
            Value and gradient oracle plus the cvxpy form (exponential cone).
        """
        return FairLogLossProblem(self)

    def summary(self) -> dict[str, Any]:
        """Describe the model: sizes, constraint, fairness rows and variable blocks.

        Returns
        -------
        dict
            Plain values, ready for JSON or a table.
        """
        return {"formulation": self.name, "problem_class": "smooth convex (exponential cone joint form)",
                "rows": self.n, "features": self.dim, "constraint": self.constraint,
                "fairness_rows": list(self.rows.names), "C": self.C,
                "fit_intercept": self.fit_intercept,
                "blocks": {"theta": self.dim, "p": self.n, "t": self.n,
                           "epigraph_1": self.n, "epigraph_0": self.n,
                           "fairness": self.rows.n_rows}}

    # ----------------------------------------------------------------------- solve
    def solve(self, solver: str | SolverSpec | Mapping[str, Any] | None = None, tol: float = 1e-8, max_iter: int = 1000,
              x0: ArrayLike | None = None, options: Mapping[str, Any] | None = None) -> FairLogLossSolution:
        """Fit θ and λ.

        Parameters
        ----------
        solver : str or SolverSpec, optional
            Default: the registry's smooth solver, ``"native"`` (L-BFGS with exact λ*, kink
            polish); ``"scipy[:L-BFGS-B]"`` (plain
            L-BFGS on J), ``"cvxpy[:CLARABEL|SCS]"`` (joint exponential-cone form; needed for
            ``K > 2`` groups) or ``"pyomo[:ipopt]"``.
        tol : float
            Target of the saddle residual (native); stopping tolerance of the others.
        max_iter : int
            Iteration limit.
        x0 : array, optional
            Warm start for θ (native, scipy).

        Returns
        -------
        FairLogLossSolution
            ``status`` is OPTIMAL exactly when the saddle conditions hold at the returned point
            (stationarity and training gaps of ℙ to ``tol``), whatever the back end reported; a
            time or iteration limit keeps its status otherwise. The native solver drives the
            gaps to rounding (exact λ*) or below 1e-11 (Newton polish on the kink).
        """
        problem = self.to_problem()
        sol = solve_smooth(problem, solver, tol=tol, max_iter=max_iter, options=options, x0=x0)
        theta = sol.primal["theta"].reshape(-1)
        on_oracles = backend_info(sol.backend).form is None   # θ only: λ*(θ) from the terms
        if "lambda" in sol.primal:
            lam = sol.primal.pop("lambda")
        elif on_oracles:
            lam = self.terms(theta)[0].lam
        else:
            lam = -sol.dual["fairness"] if "fairness" in sol.dual else np.zeros(0)
        theta, lam, moved = self.exact_fairness(theta, lam, tol)
        if moved:
            sol.primal["theta"] = theta.reshape(sol.primal["theta"].shape)
        gnorm, gapnorm, t = self.saddle_residual(theta, lam)
        kkt = max(gnorm, gapnorm)
        # every back end is judged by the same certificate: the saddle conditions of V
        status = sol.status
        if self.certified(gnorm, gapnorm, tol):
            status = Status.OPTIMAL
        elif status in (Status.OPTIMAL, Status.NUMERICAL):
            status = Status.NUMERICAL
        objective = sol.objective
        if on_oracles or moved:
            objective = float(np.mean(self.row_losses(t)) + np.mean(t.c * t.P)) + self.regulariser(theta)
        d = self.rows.gaps(t.pe)
        on_kink = bool(self.rows.n_rows and not t.truncated.any() and np.any(lam != 0)
                       and np.max(np.abs(d)) <= 1e-6)
        return FairLogLossSolution(
            status=status, objective=objective, primal=sol.primal,
            dual={**sol.dual, "fairness": -lam}, backend=sol.backend, solver=sol.solver,
            solve_seconds=sol.solve_seconds, iterations=sol.iterations, log=sol.log,
            program=self.name, x=theta, optimality=kkt, lam=lam, P=t.P, q=t.q,
            gaps=self.rows.gaps(t.P), kkt=kkt, n_truncated=int(t.truncated.sum()),
            on_kink=on_kink, rows=list(self.rows.names),
            rule=FairLogLossRule(theta.copy(), np.asarray(lam, float).copy(), self.rows.table,
                                 self.fit_intercept, any(v is not None for v in self.rows.label_value)))

    def exact_fairness(self, theta: np.ndarray, lam: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray, bool]:
        """Post-solve step for any back end: ``(θ, λ, θ moved)`` at which ℙ's training gaps are
        at most ``FAIR_TOL``, keeping the saddle's stationarity within ``max(tol, back end's)``.

        A back end's λ is a solver multiplier, right to its tolerance only (cvxpy leaves gaps of
        1e-7). Off the kink the exact λ*(θ) of the same θ is fair to rounding and stationary;
        on the kink λ*(θ) jumps to an end of the no-truncation interval and breaks stationarity,
        so the semismooth-Newton saddle polish moves (θ, λ) from the back end's point instead
        (it also covers ``K > 2`` groups). A point it cannot make fair is returned unchanged.
        """
        theta, lam = np.asarray(theta, float), np.asarray(lam, float)
        if not self.rows.n_rows or lam.shape != (self.rows.n_rows,):
            return theta, lam, False
        gnorm, gapnorm, _ = self.saddle_residual(theta, lam)
        if gapnorm <= FAIR_TOL:
            return theta, lam, False
        stationary = max(tol, gnorm)
        if self.rows.binary:
            exact = self.terms(theta)[0].lam
            g, gap, _ = self.saddle_residual(theta, exact)
            if gap <= FAIR_TOL and g <= stationary:
                return theta, exact, False
        th, lm, _, _ = self.semismooth_newton(theta, lam, min(tol, stationary))
        g, gap, _ = self.saddle_residual(th, lm)
        if gap <= FAIR_TOL and g <= stationary:
            return th, lm, True
        return theta, lam, False

    # ----------------------------------------------------------------------- native
    def semismooth_newton(self, theta: np.ndarray, lam: np.ndarray, tol: float, max_iter: int = 50,
                          deadline: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Semismooth Newton on the saddle conditions ``F(θ, λ) = 0`` (see module docstring).

        Returns ``(θ, λ, residual, iterations)``; backtracks on ``‖F‖₂``; stops at ``deadline``
        (a ``time.perf_counter`` value).
        """
        theta, lam = np.asarray(theta, float).copy(), np.asarray(lam, float).copy()
        d, R, n = self.dim, self.rows.n_rows, self.n
        coef = self.rows.coef

        def F(th: np.ndarray, lm: np.ndarray) -> tuple[np.ndarray, RowTerms]:
            t, _ = self.terms(th, lm)
            return np.concatenate([self.gradient(th, t), self.rows.gaps(t.P)]), t

        Fz, t = F(theta, lam)
        it = 0
        for it in range(1, max_iter + 1):
            gap = np.max(np.abs(Fz[d:]), initial=0.0)     # the polish drives gaps to GAP_TOL
            if (self.certified(np.max(np.abs(Fz[:d])), gap, tol) and gap <= GAP_TOL) \
                    or (deadline is not None and time.perf_counter() >= deadline):
                return theta, lam, Fz, it - 1
            untr = ~t.truncated
            w0 = np.where(untr, t.pe * t.pe_bar, 0.0)
            w = w0 * (1.0 + t.c * (t.pe_bar - t.pe))
            H = _weighted_gram(self.X, w) / n + self.C * np.diag(self.penalized)
            B = np.asarray(self.X.T @ (coef * w0).T) / n if R else np.zeros((d, 0))
            inv_c2 = np.divide(1.0, t.c * t.c, out=np.zeros(n), where=t.truncated)
            E = (coef * inv_c2) @ coef.T / n if R else np.zeros((0, 0))
            M = np.block([[H, B], [B.T, -E]])
            try:
                step = -np.linalg.solve(M, Fz)
            except np.linalg.LinAlgError:
                step = -np.linalg.lstsq(M, Fz, rcond=None)[0]
            norm0, a = np.linalg.norm(Fz), 1.0
            while a > 1e-8:
                Fn, tn = F(theta + a * step[:d], lam + a * step[d:])
                if np.linalg.norm(Fn) <= (1 - 1e-4 * a) * norm0:
                    break
                a *= 0.5
            else:
                return theta, lam, Fz, it
            theta, lam, Fz, t = theta + a * step[:d], lam + a * step[d:], Fn, tn
        return theta, lam, Fz, it

    def kink_multiplier(self, theta: np.ndarray) -> np.ndarray:
        """Least-squares λ on the kink: ``argmin ‖∇LR + Cθ + Σλ_r∇d_r‖`` clipped to the
        no-truncation interval (the note's step 2), used to start the Newton polish."""
        t, _ = self.terms(theta, np.zeros(self.rows.n_rows))
        g0 = self.gradient(theta, t)
        D = np.asarray(self.X.T @ (self.rows.coef * (t.pe * t.pe_bar)).T) / self.n
        lam = np.linalg.lstsq(D, -g0, rcond=None)[0]
        box = no_truncation_interval(t.pe, t.pe_bar, self.rows)
        out: np.ndarray = np.clip(lam, box[:, 0], box[:, 1])
        return out


def _csr_with_intercept(X: np.ndarray, fit_intercept: bool) -> sp.csr_matrix:
    """CSR form of a dense ``X`` (with a last column of ones when ``fit_intercept``), built in
    one pass over the nonzeros: the same matrix as ``csr_matrix(hstack([X, 1]))``, without the
    stacked copy and the COO detour."""
    X = np.ascontiguousarray(X)
    n, d = X.shape
    flat = np.flatnonzero(X)                       # row-major, so each row's columns are sorted
    cols, data = flat % d, X.ravel()[flat]
    counts = np.bincount(flat // d, minlength=n) + int(fit_intercept)
    index = np.int32 if flat.size + n < np.iinfo(np.int32).max else np.int64
    cols = cols.astype(index, copy=False)
    indptr = np.zeros(n + 1, dtype=index)
    np.cumsum(counts, out=indptr[1:])
    if fit_intercept:                              # the constant closes every row
        ends = indptr[1:] - 1
        body = np.ones(int(indptr[-1]), dtype=bool)
        body[ends] = False
        indices = np.empty(int(indptr[-1]), dtype=index)
        values = np.empty(int(indptr[-1]))
        indices[body], values[body] = cols, data
        indices[ends], values[ends] = d, 1.0
        cols, data = indices, values
    return sp.csr_matrix((data, cols, indptr), shape=(n, d + int(fit_intercept)))


def _weighted_gram(X: np.ndarray | sp.spmatrix, w: np.ndarray) -> np.ndarray:
    """``Xᵀ diag(w) X`` for dense or sparse ``X``."""
    if sp.issparse(X):
        return np.asarray((X.T @ X.multiply(w[:, None])).todense())  # type: ignore[union-attr]  # scipy has no stubs: issparse does not narrow
    out: np.ndarray = (X.T * w) @ X
    return out
