"""The max-entropy dual ``min_λ h(λ)`` as a :class:`~fairopt.modeling.smooth.SmoothProblem`.

:class:`MaxEntDual` wraps the counting oracle for :func:`~fairopt.modeling.smooth.solve_smooth`:

``native``  damped Newton in reference-level coordinates (default): Cholesky of ``H (+ μI)``,
            Armijo backtracking on ``h``, stop at ``‖E_p[α] − θ‖∞ ≤ tol`` over *all* levels.
``scipy``   ``scipy.optimize.minimize`` with the exact gradient, and the exact Hessian for the
            trust-region methods (``trust-exact`` default, ``trust-krylov``, ``L-BFGS-B``).
``cvxpy``   the dual as an exponential-cone program (Clarabel by default, or SCS)::

                minimise LSE([log C − Σ log k_f + Σ_f LSE(a_f(λ)),  log(1 − C) + log w_i + <λ, s_i>])
                         − <θ, λ>

``pyomo``   the same objective as an unconstrained NLP on a ``ConcreteModel``; solved by Ipopt only
            when it is installed, otherwise :class:`~fairopt.errors.SolverNotAvailableError`.

The optimality measure is the max marginal violation over every level (the gradient of the
unconstrained convex dual, reference levels included), so a run is OPTIMAL exactly when it is
certified; divergence of λ or a stalled line search is reported as infeasibility of the target.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt._docstrings import fill_doc
from fairopt.errors import InfeasibleError
from fairopt.formulations.maxent.oracle import DualOracle, MixtureState
from fairopt.modeling.registry import backends_for
from fairopt.modeling.smooth import CvxpyForm, PyomoForm, SmoothProblem

if TYPE_CHECKING:
    import cvxpy as cp
    import pyomo.environ as pyo

BACKENDS = tuple(backends_for("smooth"))


@fill_doc
def full_violation(oracle: DualOracle, grad: np.ndarray) -> float:
    """``max |E_p[α] − θ|`` over every level, reference levels included.

    Examples
    --------
    >>> import numpy as np
    {example_compas_model}
    >>> oracle = model.oracle()
    >>> bool(full_violation(oracle, oracle.gradient(solution.primal["lambda"])) < 1e-8)
    True
    """
    enc = oracle.enc
    v = float(np.max(np.abs(grad))) if grad.size else 0.0
    for f in range(enc.n_attributes):
        if enc.kinds[f] == "onehot" and enc.n_levels[f] > 1:
            v = max(v, abs(float(grad[enc.block(f)].sum())))
    return v


def lambda_bound(oracle: DualOracle, eta: float) -> float:
    """Divergence guard from the corrected Lemma 4.2: ``‖λ*‖₂ ≤ log(|Ω|/C)/η`` (full coding);
    reference coding at most doubles each coordinate, so the guard is generous."""
    if oracle.C <= 0 or eta <= 0:
        return 1e3
    Lq = oracle.enc.log_domain_size + np.log(1.0 / oracle.C)
    out: float = 4.0 * Lq / eta + 50.0
    return out


class MaxEntDual(SmoothProblem):
    """``h(λ) = log Z(λ) − <θ, λ>`` with value, gradient and Hessian from the counting oracle.

    Parameters
    ----------
    oracle : DualOracle
    eta : float
        Distance of θ from the boundary of the hull (Lemma 4.2), for the divergence guard.
    boundary_hint : str
        Name of the block nearest the boundary, for messages.
    """

    name = "maxent_dual"
    description = "max-entropy dual"
    family = "max-entropy"
    has_hessian = True

    def __init__(self, oracle: DualOracle, eta: float = 0.0, boundary_hint: str = "") -> None:
        self.oracle = oracle
        self.blocks = {"lambda": slice(0, oracle.dim)}
        self.bound = lambda_bound(oracle, eta)
        self.boundary_hint = boundary_hint
        self.last_state: MixtureState | None = None  # state of the last value_grad call (Newton reuses it)

    def value_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        lam = np.array(lam, dtype=float)  # a copy: scipy reuses its buffers
        st = self.oracle.state(lam)
        self.last_state = st
        return st.log_z - float(self.oracle.theta @ lam), st.mean - self.oracle.theta

    def state(self, lam: np.ndarray) -> MixtureState:
        """The oracle state at ``lam`` (cached from the last evaluation when it matches)."""
        st = self.last_state
        if st is None or not np.array_equal(st.lam, lam):
            st = self.oracle.state(np.asarray(lam, dtype=float))
        return st

    def hessian(self, lam: np.ndarray) -> np.ndarray:
        return self.oracle.hessian_from_state(self.state(lam))

    def optimality(self, lam: np.ndarray, grad: np.ndarray) -> float:
        return full_violation(self.oracle, grad)

    def _where(self) -> str:
        return f"; nearest block: {self.boundary_hint}." if self.boundary_hint else "."

    def check_iterate(self, lam: np.ndarray, log: str) -> None:
        norm = float(np.linalg.norm(lam))
        if norm > self.bound:
            raise InfeasibleError(
                f"max-entropy dual diverges (‖λ‖₂ = {norm:.3g} exceeds the Lemma 4.2 guard "
                f"{self.bound:.3g}): the target is outside the relative interior of the prior's "
                "hull" + self._where(), program="maxent", constraint=self.boundary_hint or None,
                log=log)

    def stall_error(self, violation: float, log: str) -> Exception:
        return InfeasibleError(
            f"max-entropy Newton line search stalled at max marginal violation {violation:.3e}; "
            "the target is (numerically) on the boundary of the hull"
            + (f" — nearest block: {self.boundary_hint}." if self.boundary_hint else "."),
            program="maxent", constraint=self.boundary_hint or None, log=log)

    def to_cvxpy(self) -> CvxpyForm:
        problem, lam = build_cvxpy(self.oracle)
        return CvxpyForm(problem, {"lambda": lam})

    def to_pyomo(self) -> PyomoForm:
        model = build_pyomo(self.oracle)
        return PyomoForm(model, {"lambda": model.lam})

# ------------------------------------------------------------------------------------ cvxpy
@fill_doc
def build_cvxpy(oracle: DualOracle) -> tuple[cp.Problem, cp.Variable]:
    """The dual as a cvxpy problem; returns ``(problem, lam_variable)``.

    Examples
    --------
    {example_compas}
    >>> model = MaxEnt(cells.repeat(counts, axis=0), encoding,
    ...                label=names.index("two_year_recid"), protected=names.index("race"))
    >>> problem, lam = build_cvxpy(model.oracle())
    >>> native = model.solve().objective
    >>> bool(abs(problem.solve(solver="CLARABEL") - native) < 1e-6)
    True
    """
    import cvxpy
    cp: Any = cvxpy   # its atoms are implicit re-exports, which mypy --strict does not see

    enc = oracle.enc
    lam = cp.Variable(enc.dim, name="lambda")
    terms = []
    if oracle.has_u:
        pieces = []
        for f in range(enc.n_attributes):
            blk = enc.block(f)
            if enc.kinds[f] == "onehot":
                if enc.n_levels[f] == 1:
                    continue
                a_f = cp.hstack([np.zeros(1), lam[blk]])
            else:
                a_f = enc.values[f] * lam[blk]
            pieces.append(cp.log_sum_exp(a_f))
        const = float(np.log(oracle.C) - enc.log_domain_size)
        uni = const + (cp.sum(cp.hstack(pieces)) if pieces else 0.0)
        terms.append(cp.reshape(uni, (1,), order="C"))
    if oracle.has_w:
        terms.append(float(np.log1p(-oracle.C)) + oracle.log_w + oracle.S @ lam)
    objective = cp.log_sum_exp(cp.hstack(terms)) - oracle.theta @ lam
    return cp.Problem(cp.Minimize(objective)), lam


# ------------------------------------------------------------------------------------ pyomo
@fill_doc
def build_pyomo(oracle: DualOracle) -> pyo.ConcreteModel:
    """The dual as a pyomo ``ConcreteModel`` (an unconstrained smooth NLP).

    Named components: ``lam[j]`` (dual variables, reference coding), ``level_sum[f]``
    (``(1/k_f) Σ_v e^{a_{f,v}}``, the uniform part factorises over attributes), ``weight[i]`` and
    ``score[i] = <λ, s_i>`` over the distinct data points, ``log_partition`` (``log Z``) and the
    objective ``dual = log_partition − <θ, λ>``. Expressions are assembled from the CSR rows of the
    feature matrix (pyomo has no array expressions, so one linear expression per point is built).

    Examples
    --------
    {example_compas}
    >>> model = MaxEnt(cells.repeat(counts, axis=0), encoding,
    ...                label=names.index("two_year_recid"), protected=names.index("race"))
    >>> type(build_pyomo(model.oracle())).__name__
    'ConcreteModel'
    """
    import pyomo.environ as pyo
    import scipy.sparse as sp

    enc = oracle.enc
    m = pyo.ConcreteModel(name="maxent_dual")
    m.I = pyo.RangeSet(0, enc.dim - 1)
    m.lam = pyo.Var(m.I, initialize=0.0, domain=pyo.Reals)
    parts = []
    if oracle.has_u:
        m.F = pyo.RangeSet(0, enc.n_attributes - 1)

        def level_sum(model: pyo.ConcreteModel, f: int) -> Any:  # a pyomo expression
            phi = sp.csr_matrix(enc.phi(f))
            cols = np.arange(enc.block(f).start, enc.block(f).stop)
            return pyo.quicksum(
                pyo.exp(pyo.quicksum(float(c) * model.lam[int(j)]
                                     for c, j in zip(phi.data[phi.indptr[v]:phi.indptr[v + 1]],
                                                     cols[phi.indices[phi.indptr[v]:phi.indptr[v + 1]]], strict=False)))
                for v in range(enc.n_levels[f])) / enc.n_levels[f]

        m.level_sum = pyo.Expression(m.F, rule=level_sum)
        uniform = oracle.C
        for f in m.F:
            uniform = uniform * m.level_sum[f]
        parts.append(uniform)
    if oracle.has_w:
        S = sp.csr_matrix(oracle.S)
        m.P = pyo.RangeSet(0, S.shape[0] - 1)
        m.weight = pyo.Param(m.P, initialize=dict(enumerate(oracle.weights.tolist())))

        def score(model: pyo.ConcreteModel, i: int) -> Any:  # a pyomo expression
            lo, hi = S.indptr[i], S.indptr[i + 1]
            return pyo.quicksum(float(c) * model.lam[int(j)]
                                for c, j in zip(S.data[lo:hi], S.indices[lo:hi], strict=False))

        m.score = pyo.Expression(m.P, rule=score)
        parts.append((1.0 - oracle.C) * pyo.quicksum(m.weight[i] * pyo.exp(m.score[i]) for i in m.P))
    m.log_partition = pyo.Expression(expr=pyo.log(pyo.quicksum(parts)))
    m.dual = pyo.Objective(
        expr=m.log_partition - pyo.quicksum(float(oracle.theta[j]) * m.lam[j] for j in m.I),
        sense=pyo.minimize)
    return m


