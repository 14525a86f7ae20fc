"""Back ends for the max-entropy dual ``min_λ h(λ)``.

``native``  damped Newton in reference-level coordinates (default): Cholesky of ``H (+ μI)``,
            Armijo backtracking on ``h``, stop at ``‖E_p[α] − θ‖∞ ≤ tol`` over *all* levels.
``scipy``   ``scipy.optimize.minimize`` with the exact gradient, and the exact Hessian for the
            trust-region methods (``trust-exact`` default, ``trust-krylov``, ``L-BFGS-B``).
``cvxpy``   the dual as an exponential-cone program (Clarabel by default, or SCS)::

                minimise LSE([log C − Σ log k_f + Σ_f LSE(a_f(λ)),  log(1 − C) + log w_i + <λ, s_i>])
                         − <θ, λ>

``pyomo``   the same objective as an unconstrained NLP on a ``ConcreteModel``; solved by Ipopt only
            when it is installed, otherwise :class:`~fairopt.errors.SolverNotAvailableError`.

Every back end returns ``(lam, n_iter, status_text, log)``; the caller re-checks the marginal
violation and never reports a non-converged run as optimal.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from fairopt.errors import ConfigError, InfeasibleError, SolverError, SolverNotAvailableError
from fairopt.formulations.maxent.oracle import DualOracle

BACKENDS = ("native", "scipy", "cvxpy", "pyomo")
SCIPY_METHODS = ("trust-exact", "trust-krylov", "L-BFGS-B")


@dataclass
class BackendResult:
    lam: np.ndarray
    n_iter: int
    converged: bool
    message: str
    log: str = ""
    solver: str = ""


def full_violation(oracle: DualOracle, grad: np.ndarray) -> float:
    """``max |E_p[α] − θ|`` over every level, reference levels included."""
    enc = oracle.enc
    v = float(np.max(np.abs(grad))) if grad.size else 0.0
    for f in range(enc.n_attributes):
        if enc.kinds[f] == "onehot" and enc.n_levels[f] > 1:
            v = max(v, abs(float(grad[enc.block(f)].sum())))
    return v


#: how to bound the run time of the inner solvers that do not take ``time_limit`` here
_OWN_LIMITS = {"cvxpy": "CLARABEL: time_limit, SCS: time_limit_secs", "pyomo": "ipopt: max_cpu_time"}


def check_settings(backend: str, options: dict | None, time_limit: float | None) -> None:
    """Refuse settings a back end would otherwise ignore silently.

    ``native`` takes no solver options; ``time_limit`` is honoured by ``native`` and ``scipy``
    (checked once per iteration) and refused by ``cvxpy`` and ``pyomo``, whose inner solvers take
    their own limit through ``options``.
    """
    if backend == "native" and options:
        raise ConfigError(
            f"the native max-entropy back end takes no solver options (got {sorted(options)}); "
            "set tol and max_iter instead, or choose backend 'scipy', 'cvxpy' or 'pyomo', whose "
            "options are passed to the solver.")
    if time_limit is not None and backend in _OWN_LIMITS:
        raise ConfigError(
            f"time_limit is not supported by the {backend} back end of the max-entropy dual; pass "
            f"the inner solver's own limit in the solver options ({_OWN_LIMITS[backend]}) or use "
            "backend 'native' or 'scipy', which honour time_limit.")


# ------------------------------------------------------------------------------ native Newton
def lambda_bound(oracle: DualOracle, eta: float) -> float:
    """Divergence guard from the corrected Lemma 4.2: ``‖λ*‖₂ ≤ log(|Ω|/C)/η`` (full coding);
    reference coding at most doubles each coordinate, so the guard is generous."""
    if oracle.C <= 0 or eta <= 0:
        return 1e3
    Lq = oracle.enc.log_domain_size + np.log(1.0 / oracle.C)
    return 4.0 * Lq / eta + 50.0


def newton(oracle: DualOracle, tol: float = 1e-10, max_iter: int = 100, lam0=None,
           eta: float = 0.0, boundary_hint: str = "", time_limit: float | None = None) -> BackendResult:
    """Damped Newton with Armijo backtracking (see module docstring).

    ``time_limit`` (seconds) is checked before every Newton step; reaching it returns the current
    iterate with message ``"time limit"`` (``converged=False``).

    BLAS is limited to one thread: the systems are small (``d`` in the hundreds), and threaded
    BLAS on a busy machine costs far more in contention than it gains.
    """
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return _newton(oracle, tol, max_iter, lam0, eta, boundary_hint, deadline)
    with threadpool_limits(limits=1, user_api="blas"):
        return _newton(oracle, tol, max_iter, lam0, eta, boundary_hint, deadline)


def _newton(oracle: DualOracle, tol: float, max_iter: int, lam0, eta: float,
            boundary_hint: str, deadline: float | None = None) -> BackendResult:
    d = oracle.dim
    lam = np.zeros(d) if lam0 is None else np.asarray(lam0, float).copy()
    bound = lambda_bound(oracle, eta)
    lines = []
    st = oracle.state(lam)
    h = st.log_z - float(oracle.theta @ lam)
    g = st.mean - oracle.theta
    for it in range(max_iter + 1):
        viol = full_violation(oracle, g)
        lines.append(f"iter {it:3d}  h={h:.15e}  max_violation={viol:.3e}")
        if viol <= tol:
            return BackendResult(lam, it, True, "converged", "\n".join(lines), "newton")
        if it == max_iter:
            break
        if d == 0:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            lines.append(f"time limit reached after {it} iterations")
            return BackendResult(lam, it, False, "time limit", "\n".join(lines), "newton")
        H = oracle.hessian_from_state(st)
        mu, step = 0.0, None
        scale = max(np.trace(H) / d, 1e-300)
        for _ in range(40):
            try:
                c = sla.cho_factor(H + mu * np.eye(d), lower=True, check_finite=False)
                step = -sla.cho_solve(c, g, check_finite=False)
                if np.all(np.isfinite(step)):
                    break
            except np.linalg.LinAlgError:
                pass
            mu = 1e-12 * scale if mu == 0 else mu * 10
        if step is None:
            raise SolverError("Newton system could not be factorised.", status="numerical",
                              log="\n".join(lines))
        nu2 = -float(g @ step)
        t = 1.0
        if nu2 >= 1e-12:
            while t >= 1e-10:
                st_new = oracle.state(lam + t * step)
                h_new = st_new.log_z - float(oracle.theta @ (lam + t * step))
                if h_new <= h - 1e-4 * t * nu2:
                    break
                t *= 0.5
            if t < 1e-10:
                # rounding floor: accept the full step only if it still shrinks the violation
                st_new = oracle.state(lam + step)
                g_new = st_new.mean - oracle.theta
                if full_violation(oracle, g_new) < viol:
                    t = 1.0
                else:
                    raise InfeasibleError(
                        f"max-entropy Newton line search stalled at max marginal violation "
                        f"{viol:.3e}; the target is (numerically) on the boundary of the hull"
                        + (f" — nearest block: {boundary_hint}." if boundary_hint else "."),
                        program="maxent", constraint=boundary_hint or None, log="\n".join(lines))
        else:
            st_new = oracle.state(lam + step)
        lam = lam + t * step
        st = st_new
        h = st.log_z - float(oracle.theta @ lam)
        g = st.mean - oracle.theta
        if np.linalg.norm(lam) > bound:
            raise InfeasibleError(
                f"max-entropy dual diverges (‖λ‖₂ = {np.linalg.norm(lam):.3g} exceeds the "
                f"Lemma 4.2 guard {bound:.3g}): the target is outside the relative interior of "
                "the prior's hull" + (f"; nearest block: {boundary_hint}." if boundary_hint else "."),
                program="maxent", constraint=boundary_hint or None, log="\n".join(lines))
    return BackendResult(lam, max_iter, False, "iteration limit", "\n".join(lines), "newton")


# ------------------------------------------------------------------------------------ scipy
def scipy_solve(oracle: DualOracle, method: str | None, tol: float, max_iter: int,
                options: dict | None = None, time_limit: float | None = None) -> BackendResult:
    from scipy.optimize import minimize

    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)

    method = method or "trust-exact"
    canon = {m.lower(): m for m in SCIPY_METHODS}
    if method.lower() not in canon:
        raise ConfigError(f"scipy method {method!r} is not supported; choose one of {SCIPY_METHODS}.")
    method = canon[method.lower()]
    opts = {"maxiter": max_iter, "gtol": tol * 0.1}
    if method == "L-BFGS-B":
        opts.update(ftol=1e-15, maxcor=30, maxiter=max(max_iter, 2000))
    opts.update(options or {})
    best = {"lam": np.zeros(oracle.dim), "viol": np.inf}

    def fun(lam):
        # trust-region subproblem solvers can propose non-finite points near convergence:
        # reject them (value +inf) and remember the best certified iterate seen
        if not np.all(np.isfinite(lam)):
            return np.inf, np.zeros_like(lam)
        v, g = oracle.value_grad(lam)
        viol = full_violation(oracle, g)
        if viol < best["viol"]:
            best.update(lam=np.array(lam, dtype=float), viol=viol)
        return v, g

    def hess(lam):
        return oracle.hessian(lam) if np.all(np.isfinite(lam)) else np.eye(oracle.dim)

    timed_out = []

    def stop_at_deadline(intermediate_result):
        # scipy ends the run when the callback raises StopIteration (checked once per iteration)
        if deadline is not None and time.perf_counter() >= deadline:
            timed_out.append(True)
            raise StopIteration

    kw = {} if method == "L-BFGS-B" else {"hess": hess}
    if deadline is not None:
        kw["callback"] = stop_at_deadline
    with np.errstate(invalid="ignore", over="ignore"):
        res = minimize(fun, np.zeros(oracle.dim), jac=True, method=method, options=opts, **kw)
    lam = np.asarray(res.x, float)
    if not np.all(np.isfinite(lam)) or full_violation(oracle, oracle.gradient(lam)) > best["viol"]:
        lam = best["lam"]
    if timed_out:
        return BackendResult(lam, int(getattr(res, "nit", 0) or 0), False, "time limit", str(res), method)
    return BackendResult(lam, int(getattr(res, "nit", 0) or 0), bool(res.success),
                         str(res.message), str(res), method)


# ------------------------------------------------------------------------------------ cvxpy
def build_cvxpy(oracle: DualOracle):
    """The dual as a cvxpy problem; returns ``(problem, lam_variable)``."""
    import cvxpy as cp

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


def cvxpy_solve(oracle: DualOracle, solver: str | None, tol: float, max_iter: int,
                options: dict | None = None) -> BackendResult:
    import cvxpy as cp

    solver = (solver or "CLARABEL").upper()
    if solver not in cp.installed_solvers():
        raise SolverNotAvailableError(f"cvxpy solver {solver!r} is not installed.",
                                      available=[f"cvxpy:{s}" for s in cp.installed_solvers()
                                                 if s in ("CLARABEL", "SCS", "ECOS", "MOSEK")])
    prob, lam = build_cvxpy(oracle)
    opts: dict = {}
    if solver == "CLARABEL":
        opts = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                "tol_ktratio": 1e-10, "max_iter": max(max_iter, 200)}
    elif solver == "SCS":
        opts = {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iters": 200_000}
    opts.update(options or {})
    try:
        with warnings.catch_warnings():
            # "solution may be inaccurate" at the tight tolerances: the caller re-checks marginals
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver=solver, **opts)
    except cp.error.SolverError as exc:
        raise SolverError(f"cvxpy/{solver} failed on the max-entropy dual: {exc}",
                          status="error") from exc
    if lam.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        raise SolverError(f"cvxpy/{solver} returned status {prob.status!r}.", status=prob.status)
    stats = prob.solver_stats
    return BackendResult(np.asarray(lam.value, float), int(stats.num_iters or 0),
                         prob.status == "optimal", prob.status, "", solver)


# ------------------------------------------------------------------------------------ pyomo
def build_pyomo(oracle: DualOracle):
    """The dual as a pyomo ``ConcreteModel`` (an unconstrained smooth NLP).

    Named components: ``lam[j]`` (dual variables, reference coding), ``level_sum[f]``
    (``(1/k_f) Σ_v e^{a_{f,v}}``, the uniform part factorises over attributes), ``weight[i]`` and
    ``score[i] = <λ, s_i>`` over the distinct data points, ``log_partition`` (``log Z``) and the
    objective ``dual = log_partition − <θ, λ>``. Expressions are assembled from the CSR rows of the
    feature matrix (pyomo has no array expressions, so one linear expression per point is built).
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

        def level_sum(model, f):
            phi = sp.csr_matrix(enc.phi(f))
            cols = np.arange(enc.block(f).start, enc.block(f).stop)
            return pyo.quicksum(
                pyo.exp(pyo.quicksum(float(c) * model.lam[int(j)]
                                     for c, j in zip(phi.data[phi.indptr[v]:phi.indptr[v + 1]],
                                                     cols[phi.indices[phi.indptr[v]:phi.indptr[v + 1]]])))
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

        def score(model, i):
            lo, hi = S.indptr[i], S.indptr[i + 1]
            return pyo.quicksum(float(c) * model.lam[int(j)]
                                for c, j in zip(S.data[lo:hi], S.indices[lo:hi]))

        m.score = pyo.Expression(m.P, rule=score)
        parts.append((1.0 - oracle.C) * pyo.quicksum(m.weight[i] * pyo.exp(m.score[i]) for i in m.P))
    m.log_partition = pyo.Expression(expr=pyo.log(pyo.quicksum(parts)))
    m.dual = pyo.Objective(
        expr=m.log_partition - pyo.quicksum(float(oracle.theta[j]) * m.lam[j] for j in m.I),
        sense=pyo.minimize)
    return m


def pyomo_solve(oracle: DualOracle, solver: str | None, tol: float, max_iter: int,
                options: dict | None = None) -> BackendResult:
    import pyomo.environ as pyo

    name = solver or "ipopt"
    model = build_pyomo(oracle)
    opt = pyo.SolverFactory(name)
    if not opt.available(exception_flag=False):
        raise SolverNotAvailableError(
            f"pyomo solver {name!r} is not available (the max-entropy dual is a smooth NLP and "
            "needs Ipopt); the model was built but cannot be solved here.",
            available=["native", "scipy:trust-exact", "cvxpy:CLARABEL"])
    opts = {"tol": tol * 1e-2, "max_iter": max(max_iter, 500)} if name == "ipopt" else {}
    opts.update(options or {})
    for k, v in opts.items():
        opt.options[k] = v
    res = opt.solve(model)
    term = str(res.solver.termination_condition)
    lam = np.array([pyo.value(model.lam[j]) for j in range(oracle.dim)], dtype=float)
    return BackendResult(lam, 0, term == "optimal", term, str(res), name)


def run_backend(oracle: DualOracle, backend: str, inner: str | None, tol: float, max_iter: int,
                options: dict | None = None, eta: float = 0.0, boundary_hint: str = "",
                time_limit: float | None = None) -> tuple:
    """Dispatch (after :func:`check_settings`); returns ``(BackendResult, seconds)``."""
    check_settings(backend, options, time_limit)
    t0 = time.perf_counter()
    if backend == "native":
        res = newton(oracle, tol=tol, max_iter=max_iter, eta=eta, boundary_hint=boundary_hint,
                     time_limit=time_limit)
    elif backend == "scipy":
        res = scipy_solve(oracle, inner, tol, max_iter, options, time_limit)
    elif backend == "cvxpy":
        res = cvxpy_solve(oracle, inner, tol, max_iter, options)
    else:
        res = pyomo_solve(oracle, inner, tol, max_iter, options)
    return res, time.perf_counter() - t0
