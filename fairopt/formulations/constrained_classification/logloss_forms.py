"""The joint convex form of the fair robust log-loss model, for cvxpy and pyomo.

For fixed ℙ the inner maximisation of Eq. 9 over ``ℚ ∈ Δ ∩ Ξ`` is an LP whose dual (multiplier
θ of the moment-matching set Ξ) gives the jointly convex problem in ``(θ, p)``::

    minimise  (1/n) Σ_i [ t_i − θᵀφ(x_i, y_i) ] + (C/2) ‖θ_pen‖²
    s.t.      t_i ≥ θᵀx_i − log p_i          (epigraph_1, an exponential cone per row)
              t_i ≥ −log(1 − p_i)           (epigraph_0)
              Σ_i coef[r, i] p_i / n = 0     (fairness, one row per constraint row)

with ``φ(x, ŷ) = ŷ·x``. At the optimum ``p = ℙ``, the fairness multipliers are the paper's λ
(cvxpy reports ``+λ``; fairopt's dual, ``d f*/d rhs``, is ``−λ``) and ``n ×`` the epigraph
multipliers are ``ℚ(ŷ=1)`` and ``ℚ(ŷ=0)``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.modeling.smooth import CvxpyForm, PyomoForm

if TYPE_CHECKING:
    import pyomo.environ as pyo

#: pyomo keeps p inside (ε, 1 − ε) so that Ipopt never evaluates log(0)
P_MARGIN = 1e-12


def build_cvxpy(X: np.ndarray | sp.spmatrix, y: np.ndarray, coef: np.ndarray, C: float,
                penalized: np.ndarray) -> CvxpyForm:
    """The joint problem as cvxpy objects (variables ``theta``, ``p``, ``t``)."""
    import cvxpy
    cp: Any = cvxpy   # its atoms are implicit re-exports, which mypy --strict does not see

    n, d = X.shape
    theta = cp.Variable(d, name="theta")
    p = cp.Variable(n, name="p")
    t = cp.Variable(n, name="t")
    s = X @ theta
    cons = {"epigraph_1": s - cp.log(p) <= t, "epigraph_0": -cp.log(1 - p) <= t}
    if coef.shape[0]:
        A = sp.csr_matrix(coef / n)
        cons["fairness"] = A @ p == 0
    pen = np.flatnonzero(penalized)
    objective = cp.sum(t - cp.multiply(y, s)) / n
    if C > 0 and pen.size:
        objective = objective + 0.5 * C * cp.sum_squares(theta[pen])
    problem = cp.Problem(cp.Minimize(objective), list(cons.values()))
    return CvxpyForm(problem, {"theta": theta, "p": p, "t": t}, cons)


def build_pyomo(X: np.ndarray | sp.spmatrix, y: np.ndarray, coef: np.ndarray, C: float,
                penalized: np.ndarray) -> PyomoForm:
    """The same problem as a pyomo ``ConcreteModel`` (a smooth NLP for Ipopt).

    Named components: ``theta[j]``, ``p[i]`` in ``[ε, 1 − ε]``, ``t[i]``, ``score[i] = θᵀx_i``,
    constraints ``epigraph_1[i]``, ``epigraph_0[i]``, ``fairness[r]`` and the objective
    ``loss``; duals through the ``dual`` suffix. Pyomo has no array expressions, so one linear
    expression per row is built from the rows of ``X`` (use the array back ends for speed).
    """
    import pyomo.environ as pyo

    X = sp.csr_matrix(X)
    n, d = X.shape
    m = pyo.ConcreteModel(name="fair_logloss")
    m.J = pyo.RangeSet(0, d - 1)
    m.I = pyo.RangeSet(0, n - 1)
    m.theta = pyo.Var(m.J, initialize=0.0)
    m.p = pyo.Var(m.I, bounds=(P_MARGIN, 1 - P_MARGIN), initialize=0.5)
    m.t = pyo.Var(m.I, initialize=float(np.log(2.0)))

    def score(model: pyo.ConcreteModel, i: int) -> Any:  # a pyomo expression
        lo, hi = X.indptr[i], X.indptr[i + 1]
        return pyo.quicksum(float(v) * model.theta[int(j)]
                            for v, j in zip(X.data[lo:hi], X.indices[lo:hi], strict=True))

    m.score = pyo.Expression(m.I, rule=score)
    m.epigraph_1 = pyo.Constraint(m.I, rule=lambda mdl, i: mdl.score[i] - pyo.log(mdl.p[i]) <= mdl.t[i])
    m.epigraph_0 = pyo.Constraint(m.I, rule=lambda mdl, i: -pyo.log(1 - mdl.p[i]) <= mdl.t[i])
    cons = {"epigraph_1": m.epigraph_1, "epigraph_0": m.epigraph_0}
    if coef.shape[0]:
        m.R = pyo.RangeSet(0, coef.shape[0] - 1)
        nz = [np.flatnonzero(coef[r]) for r in range(coef.shape[0])]
        m.fairness = pyo.Constraint(m.R, rule=lambda mdl, r: pyo.quicksum(
            float(coef[r, i] / n) * mdl.p[int(i)] for i in nz[r]) == 0)
        cons["fairness"] = m.fairness
    pen = [int(j) for j in np.flatnonzero(penalized)]
    m.loss = pyo.Objective(
        expr=pyo.quicksum(m.t[i] - float(y[i]) * m.score[i] for i in m.I) / n
        + 0.5 * C * pyo.quicksum(m.theta[j] ** 2 for j in pen), sense=pyo.minimize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return PyomoForm(m, {"theta": m.theta, "p": m.p, "t": m.t}, cons)
