"""Overhead benchmark of the in-processing estimators: each ``fit`` against the bare solve of its own program.

For every estimator, on a real data set at the size its benchmark or model card uses, the script
measures ``fit_seconds`` (best of ``k`` repeats of ``fit`` after one warm-up) and ``bare_seconds``
(best of ``k`` repeats of the same program's solver calls made directly, with nothing around
them), the two interleaved in one run, and ``ratio = fit_seconds / bare_seconds``. Everything the
bare solve needs is built once, outside the timer, from the same statistics; the bare answer is
checked against the estimator's (objective to 1e-6) so that both timings are of the same program.

What "bare" is, per estimator:

``FairClassifier`` (Adult, sex, standardised numeric + one-hot categorical features, 70 % split as
in ``benchmarks/fair_classification.py``; demographic parity, eps = 0.01, default learner)
    The exponentiated-gradient game is a loop of oracle calls and best-mixture LPs. A recording
    fit logs every L-BFGS call of the learner (labels, weights, starting point, options) and every
    best-mixture LP (pool costs, constraint values, penalty ``B``). The bare solve replays them: the
    same ``scipy.optimize.minimize(method="L-BFGS-B")`` calls from the same starts on an
    independently written weighted logistic loss (scikit-learn's objective), and the same LPs
    handed to highspy directly (one model, new hypotheses appended as columns, as the game does).
    Scoring each hypothesis on the data, the multiplier updates, validation and the result are
    fairopt's overhead. Objective: the penalised value ``cost + B max(0, max violation)`` of the
    fitted mixture against the bare optimum of the mixture LP it came from (the game returns its
    best LP iterate, ``returned_lp``; ``bare_final_lp_objective`` is the last one). The same
    check holds for both ``FairRegressor`` entries.
``FairRegressor`` (the ``fair-regression-adult-2k`` card: Adult, 2,000-row sample, 50 % train,
logistic loss, risk-minimisation oracle, N = 40, eps = 0.05)
    The same game with the LR heuristic oracle: the bare solve is the same number of
    ``LogisticRegression(max_iter=1000).fit`` calls on the same two-label reweighted data (the
    design stacked twice, built once) and the same best-mixture LPs through highspy.
``FairRegressor[least_squares]`` (the ``fair-regression-law`` card: law school, 50 % train, square
loss, least-squares heuristic over ``LinearRegression``, N = 40, eps = 0.05)
    The same game with the LS heuristic, whose learner is factored once per game. The bare solve
    is the heuristic's own arithmetic replayed on the recorded multipliers: each best response's
    targets (first minimising cell of its cost table ``g_lambda``, the table built outside the
    timer like an LP's arrays), the proximal refinement's argmins over the ``n x (N + 1)`` table,
    the minimum-norm least squares ``LinearRegression`` computes (one thin SVD of the centred
    design, two products per target) and each fit's training predictions, plus the same mixture
    LPs, with every candidate's Lagrangian (the moment's statistics) to keep the best, as the
    heuristic does. ``targets_differing`` checks that the replay computed the fit's targets
    (share of rows that differ; 0 when exact). For
    context, ``sklearn_refit_seconds`` times the same fits as ``LinearRegression().fit`` calls
    that refactor the design each time.
``SEORegressor`` (Adult, full 50 % training split of ``fairopt.runs.fair_regression.prepare_data``)
    A closed form: the zero-covariance least-squares solution by numpy on the design with the
    intercept column, the weights and the centred group indicators built outside the timer.
    Objective: the weighted mean squared error of the coefficients.
``FairLogLossClassifier`` (the ``fair-logloss-adult`` card: Adult, sex, 70 % training split,
demographic parity, C = 0.01, native solver)
    A smooth solve: the model's own solver (scipy's L-BFGS-B on ``J(θ)`` with the exact
    multiplier, then the semismooth-Newton saddle polish) called directly on the model built from
    the validated arrays outside the timer, from the same start (zero). Validation, building the
    model and the post-solve certificate are fairopt's overhead. Objective: ``J`` at the solution.

Timings are wall-clock on a shared machine (the JSON records the load and the CPU count);
compare the ratios, which take both timings in the same run, interleaved. ``ratio`` is best of
fit over best of bare; ``ratio_median_pairs``, the median of the ratios of adjacent fit/bare
pairs, shows how far a load change during the run moved it. BLAS runs on one thread for both.

Run: ``FAIROPT_DATA_HOME=../shared/datasets python benchmarks/overhead_inprocessing.py
[--profile full|smoke] [--repeats K]``; writes ``benchmarks/results/overhead_inprocessing.json``.
``--profile smoke`` runs on small samples with one repeat (the test suite's check of the script).
"""
from __future__ import annotations

import os

# BLAS on one thread, for fit and bare alike: on 2 shared cores a threaded OpenBLAS made the tiny
# BLAS calls of L-BFGS-B's update (scipy's setulb) 50x slower under load (9 ms a call instead of
# 0.2 ms), noise that is in neither fairopt's code nor the solver's work.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
OUT = ROOT / "benchmarks" / "results" / "overhead_inprocessing.json"

#: profile -> rows kept per data set (None = the benchmark's size), repeats, game iteration caps
PROFILES = {
    "full": {"rows": None, "repeats": 5, "fr_subsample": 2000, "fc_max_iter": 50, "fr_max_iter": 20,
             "fr_refine_rounds": 3, "ll_max_iter": 1000, "ls_subsample": None},
    "smoke": {"rows": 1500, "repeats": 1, "fr_subsample": 400, "fc_max_iter": 10, "fr_max_iter": 3,
              "fr_refine_rounds": 1, "ll_max_iter": 1000, "ls_subsample": 1000},
}
OBJECTIVE_TOL = 1e-6


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _interleaved(fit, bare, repeats: int) -> dict:
    """Best of ``repeats`` of each after one warm-up each, the two alternating."""
    fit()
    bare()
    tf, tb = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit()
        tf.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        bare()
        tb.append(time.perf_counter() - t0)
    # the best-of ratio is the measure; the median ratio of adjacent pairs shows how much a load
    # change during the run moved it
    return {"fit_seconds": min(tf), "bare_seconds": min(tb), "ratio": min(tf) / min(tb),
            "ratio_median_pairs": float(np.median(np.array(tf) / np.array(tb))),
            "fit_seconds_all": tf, "bare_seconds_all": tb}


# ---------------------------------------------------------------------------- bare pieces
def logistic_loss_grad(theta, X, y, s, S, C):
    """Scikit-learn's weighted L2 logistic objective (mean scale, unpenalised intercept last)
    and its gradient, written independently of fairopt."""
    from scipy.special import expit
    coef = theta[:-1]
    z = X @ coef + theta[-1]
    f = float(s @ (np.logaddexp(0.0, z) - y * z)) / S + 0.5 * float(coef @ coef) / (C * S)
    r = s * (expit(z) - y)
    return f, np.concatenate([X.T @ r / S + coef / (C * S), [r.sum() / S]])


class BareMixtureLP:
    """The best-mixture LP ``min c'q + B s, G'q - s <= b, sum q = 1, q, s >= 0`` in highspy,
    the pool's new hypotheses appended as columns between solves (the game's warm start)."""

    def __init__(self, bound):
        import highspy
        self.hp, self.bound = highspy, np.asarray(bound, float)
        self.h, self.k, self.B = None, 0, None

    def solve(self, costs, G, B) -> float:
        hp, h = self.hp, self.h
        M = self.bound.size
        K = costs.size
        if h is None:
            h = self.h = hp.Highs()
            h.setOptionValue("output_flag", False)
            inf = hp.kHighsInf
            none = np.array([], np.int32)
            h.addRows(M, np.full(M, -inf), self.bound, 0, none, none, np.array([]))     # fairness rows
            h.addRows(1, np.array([1.0]), np.array([1.0]), 0, none, none, np.array([]))  # simplex row
            # column s: -1 in every fairness row
            h.addCols(1, np.array([B]), np.array([0.0]), np.array([inf]), M,
                      np.array([0], np.int32), np.arange(M, dtype=np.int32), -np.ones(M))
        elif B != self.B:
            h.changeColCost(0, B)
        if K > self.k:
            new = G[self.k:K]
            n = K - self.k
            # each new column: its M constraint values, then 1 in the simplex row
            idx = np.tile(np.arange(M + 1, dtype=np.int32), n)
            val = np.column_stack([new, np.ones(n)]).ravel()
            h.addCols(n, costs[self.k:K], np.zeros(n), np.full(n, hp.kHighsInf), idx.size,
                      np.arange(0, idx.size, M + 1, dtype=np.int32), idx, val)
        self.k, self.B = K, B
        h.run()
        return float(h.getInfo().objective_function_value)


def _record_lps():
    """Patch ``BestMixtureLP.solve`` to log its inputs and optimum; returns (log, undo)."""
    from fairopt.formulations import cost_sensitive as cs
    orig = cs.BestMixtureLP.solve
    log = []

    def solve(self, costs, G, B):
        q, lam, s = orig(self, costs, G, B)
        c = np.asarray(costs, float)
        log.append({"bound": self.bound.copy(), "costs": c.copy(), "G": np.atleast_2d(np.asarray(G, float)).copy(),
                    "B": float(B), "objective": float(c @ q + B * s)})
        return q, lam, s
    cs.BestMixtureLP.solve = solve
    return log, lambda: setattr(cs.BestMixtureLP, "solve", orig)


def _replay_lps(lps) -> list:
    lp, values = None, []
    for rec in lps:
        if lp is None or rec["costs"].size < lp.k:
            lp = BareMixtureLP(rec["bound"])
        values.append(lp.solve(rec["costs"], rec["G"], rec["B"]))
    return values


def _penalised(res) -> float:
    return float(res.cost + res.B * res.max_violation)


def _game_objectives(res, lps: list, bare_values: list) -> dict:
    """The estimator's objective (penalised value of the returned mixture) and the bare optimum of
    the mixture LP it came from: the game returns its best LP iterate, not always the last one."""
    fit_obj = _penalised(res)
    k = int(np.argmin([abs(rec["objective"] - fit_obj) for rec in lps]))
    return {"fit_objective": fit_obj, "bare_objective": bare_values[k], "returned_lp": k,
            "bare_final_lp_objective": bare_values[-1], "recorded_lp_objectives": [r["objective"] for r in lps]}


# ---------------------------------------------------------------------------- FairClassifier
def fair_classifier(prof: dict) -> dict:
    from fair_classification import adult
    from scipy.optimize import minimize

    from fairopt.inprocessing import FairClassifier
    from fairopt.reductions import logistic as warm
    Xtr, _, ytr, _, atr, _ = adult()
    if prof["rows"]:
        Xtr, ytr, atr = Xtr[:prof["rows"]], ytr[:prof["rows"]], atr[:prof["rows"]]

    def fit():
        return FairClassifier(eps=0.01, random_state=0, max_iter=prof["fc_max_iter"]).fit(
            Xtr, ytr, sensitive_features=atr)

    lps, undo = _record_lps()
    calls = []
    orig_min = warm.minimize

    def recording_minimize(fun, x0, args=(), **kw):
        res = orig_min(fun, x0, args=args, **kw)
        y, s, S = args
        calls.append({"x0": np.array(x0, copy=True), "y": y.copy(), "s": s.copy(), "S": S,
                      "options": dict(kw["options"]), "x": res.x.copy()})
        return res
    warm.minimize = recording_minimize
    try:
        est = fit()
    finally:
        warm.minimize = orig_min
        undo()
    X = np.ascontiguousarray(Xtr, dtype=float)
    C = 1.0          # LogisticRegression's default, the estimator's learner
    out = {}

    def bare():
        out["x"] = [minimize(logistic_loss_grad, c["x0"], args=(X, c["y"], c["s"], c["S"], C), method="L-BFGS-B",
                             jac=True, options=c["options"]).x for c in calls]
        out["lp"] = _replay_lps(lps)
    timing = _interleaved(fit, bare, prof["repeats"])
    theta_diff = max((float(np.max(np.abs(a - c["x"]))) for a, c in zip(out["x"], calls, strict=True)), default=0.0)
    return {"data": "adult", "rows": int(X.shape[0]), "features": int(X.shape[1]), "eps": 0.01,
            "oracle_calls": len(calls), "lp_solves": len(lps), "status": est.status_,
            **_game_objectives(est.result_, lps, out["lp"]), "max_theta_difference": theta_diff,
            "bare": "scipy L-BFGS-B per oracle call (same starts, weights, options) + highspy per mixture LP",
            **timing}


# ---------------------------------------------------------------------------- FairRegressor
def fair_regressor(prof: dict) -> dict:
    from sklearn.linear_model import LogisticRegression

    from fairopt.inprocessing import FairRegressor
    from fairopt.runs.fair_regression import prepare_data
    d = prepare_data("adult", subsample=prof["fr_subsample"], random_state=0)
    X, y, a = d["X_train"], d["y_train"], d["a_train"]
    params = {"eps": 0.05, "grid_size": 40, "loss": "logistic", "oracle": "risk_minimization",
              "max_iter": prof["fr_max_iter"], "min_iter": min(10, prof["fr_max_iter"]), "eta0": 2.0,
              "refine_rounds": prof["fr_refine_rounds"], "round": "mid", "random_state": 0}

    def fit():
        return FairRegressor(**params).fit(X, y, sensitive_features=a)

    lps, undo = _record_lps()
    weights, coefs = [], []
    orig_fit = LogisticRegression.fit

    def recording_fit(self, X2, y2, sample_weight=None):
        res = orig_fit(self, X2, y2, sample_weight=sample_weight)
        weights.append(np.array(sample_weight, copy=True))
        coefs.append(np.r_[self.coef_.ravel(), self.intercept_])
        return res
    LogisticRegression.fit = recording_fit
    try:
        est = fit()
    finally:
        LogisticRegression.fit = orig_fit
        undo()
    X2 = np.vstack([X, X])
    y2 = np.r_[np.ones(len(y)), np.zeros(len(y))]
    out = {}

    def bare():
        fits = [LogisticRegression(max_iter=1000).fit(X2, y2, sample_weight=w) for w in weights]
        out["coef"] = [np.r_[f.coef_.ravel(), f.intercept_] for f in fits]
        out["lp"] = _replay_lps(lps)
    timing = _interleaved(fit, bare, prof["repeats"])
    coef_diff = max((float(np.max(np.abs(a_ - b_))) for a_, b_ in zip(out["coef"], coefs, strict=True)), default=0.0)
    return {"data": "adult", "card": "fair-regression-adult-2k", "rows": int(X.shape[0]),
            "features": int(X.shape[1]), "eps": 0.05, "learner_fits": len(weights), "lp_solves": len(lps),
            "status": est.status_, **_game_objectives(est.result_, lps, out["lp"]),
            "max_coef_difference": coef_diff,
            "bare": "LogisticRegression.fit per oracle fit (same two-label weights) + highspy per mixture LP",
            **timing}


def fair_regressor_least_squares(prof: dict) -> dict:
    """The ``fair-regression-law`` card: least-squares heuristic over a factored LinearRegression."""
    from fairopt.inprocessing import FairRegressor
    from fairopt.reductions import oracles
    from fairopt.runs.fair_regression import prepare_data
    d = prepare_data("law", subsample=prof["ls_subsample"], random_state=0)
    X, y, a = d["X_train"], d["y_train"], d["a_train"]
    params = {"eps": 0.05, "grid_size": 40, "oracle": "least_squares", "B": 10.0,
              "max_iter": prof["fr_max_iter"], "min_iter": min(10, prof["fr_max_iter"]), "eta0": 2.0,
              "refine_rounds": prof["fr_refine_rounds"], "round": "mid", "random_state": 0}

    def fit():
        return FairRegressor(**params).fit(X, y, sensitive_features=a)

    lps, undo = _record_lps()
    targets, calls = [], []
    orig_fit, orig_sp_fit = oracles.FactoredLeastSquares.fit, oracles._HeuristicSP._fit

    def recording_fit(self, U):
        targets.append(np.array(U, dtype=float, copy=True))
        return orig_fit(self, U)

    def recording_sp_fit(self, lam):
        calls.append((self, np.array(lam, dtype=float, copy=True)))     # one best response's multipliers
        return orig_sp_fit(self, lam)
    oracles.FactoredLeastSquares.fit, oracles._HeuristicSP._fit = recording_fit, recording_sp_fit
    try:
        est = fit()
    finally:
        oracles.FactoredLeastSquares.fit, oracles._HeuristicSP._fit = orig_fit, orig_sp_fit
        undo()
    # the program's data, built outside the timer: each best response's cost table g_lambda over
    # the (label, group, cell) grid (the moment's statistics, as the LPs' arrays are for the LP)
    oracle = calls[0][0]
    m = oracle.moment
    tables = [(oracles.prefix_table(m.cost_sensitive_table(lam)), lam) for _, lam in calls]
    ycode, group, N, alpha = m.ycode, m.group, m.grid.size, m.grid.alpha
    mids = np.minimum(np.arange(N + 1) / N + 0.5 / N, 1.0)
    R, rhos = int(oracle.refine_rounds), [float(r) for r in oracle.refine_weights]
    out = {}

    def bare():
        # the heuristic's arithmetic: targets from the cost table (first minimising cell), the
        # proximal refinement's argmins over the n x (N + 1) table, LinearRegression's minimum-norm
        # least squares factored once (thin SVD, two products per target), each candidate's
        # training predictions and Lagrangian (the moment's statistics, the constraint values by
        # definition) to keep the best; then the same mixture LPs
        xm = X.mean(axis=0)
        Uf, S, Vt = np.linalg.svd(X - xm, full_matrices=False)
        keep = S > max(X.shape) * np.finfo(float).eps * S[0]
        Ut, V_s = Uf[:, keep].T, Vt[keep].T / S[keep]

        def candidate(U, lam):
            used.append(U)
            u_mean = U.mean()
            coef = V_s @ (Ut @ (U - u_mean))
            f = np.clip(X @ coef + (u_mean - xm @ coef), 0.0, 1.0)
            return f, float(m.lagrangian(*m.stats(f), lam))
        used = []
        for T, lam in tables:
            kstar = np.argmax(T <= T.min(axis=-1, keepdims=True) + oracles.TIE_TOLERANCE, axis=-1)
            best, best_value = candidate(np.minimum(kstar * alpha + 0.5 * alpha, 1.0)[ycode, group], lam)
            G = T[ycode, group]
            for rho in rhos:
                f = best
                for _ in range(R):
                    f, value = candidate(mids[np.argmin(G + rho * (mids[None, :] - f[:, None]) ** 2, axis=1)], lam)
                    if value < best_value:
                        best, best_value = f, value
        out["targets"] = used
        out["lp"] = _replay_lps(lps)
    timing = _interleaved(fit, bare, prof["repeats"])
    from sklearn.linear_model import LinearRegression

    def unfactored():
        for U in targets:
            LinearRegression().fit(X, U)
    # context only: the same fits by scikit-learn, refactoring X each time (what the oracle did
    # before it factored the design once per game)
    lr = min(_time(unfactored) for _ in range(max(1, prof["repeats"] // 2)))
    timing["sklearn_refit_seconds"], timing["fit_over_sklearn_refits"] = lr, timing["fit_seconds"] / lr
    return {"data": "law", "card": "fair-regression-law", "rows": int(X.shape[0]), "features": int(X.shape[1]),
            "eps": 0.05, "learner_fits": len(targets), "lp_solves": len(lps), "status": est.status_,
            **_game_objectives(est.result_, lps, out["lp"]),
            "targets_differing": _targets_differing(targets, out["targets"]),
            "bare": "targets from each best response's cost table, the proximal refinement's argmins, one thin "
                    "SVD of the centred design + two products, the training predictions and the Lagrangian per "
                    "least-squares fit, + highspy per mixture LP", **timing}


def _targets_differing(fitted: list, bare: list) -> float:
    """Largest share of rows whose target differs between the fit and the bare replay (0: the bare
    computed every one of the fit's least-squares targets)."""
    if len(fitted) != len(bare):
        raise AssertionError(f"the bare replay made {len(bare)} least-squares fits, the fit {len(fitted)}")
    return max((float(np.mean(a != b)) for a, b in zip(fitted, bare, strict=True)), default=0.0)


# ---------------------------------------------------------------------------- SEORegressor
def seo_closed_form(Xt, y, w, Ac):
    """``beta_OLS - M K (K'MK)^-1 K' beta_OLS`` with ``M = (Xt'WXt)^+``, ``K = Xt'W Ac``."""
    XtW = Xt.T * w
    M = np.linalg.pinv(XtW @ Xt)
    beta = M @ (XtW @ y)
    K = XtW @ Ac
    return beta - M @ K @ np.linalg.solve(K.T @ M @ K, K.T @ beta)


def seo(prof: dict) -> dict:
    from fairopt.inprocessing import SEORegressor
    from fairopt.runs.fair_regression import prepare_data
    d = prepare_data("adult", subsample=prof["rows"], random_state=0)
    X, y, a = d["X_train"], d["y_train"], d["a_train"]

    def fit():
        return SEORegressor().fit(X, y, sensitive_features=a)
    est = fit()
    Xt = np.hstack([X, np.ones((len(y), 1))])
    w = np.ones(len(y))
    labels = np.unique(a)
    A = (a[:, None] == labels[None, 1:]).astype(float)
    Ac = A - np.average(A, axis=0, weights=w)
    out = {}

    def bare():
        out["coef"] = seo_closed_form(Xt, y, w, Ac)
    timing = _interleaved(fit, bare, prof["repeats"])

    def mse(coef):
        return float(np.average((Xt @ coef - y) ** 2, weights=w))
    return {"data": "adult", "rows": int(X.shape[0]), "features": int(X.shape[1]),
            "fit_objective": mse(est.coef_), "bare_objective": mse(out["coef"]),
            "max_coef_difference": float(np.max(np.abs(est.coef_ - out["coef"]))),
            "bare": "numpy closed form on the design with intercept column built outside the timer", **timing}


# ---------------------------------------------------------------------------- FairLogLossClassifier
def fair_logloss(prof: dict) -> dict:
    from fairopt.formulations.constrained_classification.logloss import FairLogLoss
    from fairopt.inprocessing import FairLogLossClassifier
    from fairopt.runs.fair_logloss import load_task, train_test
    task = load_task("adult")
    tr, te = train_test(len(task.y), 0.3, np.random.default_rng([0, 0]))
    if prof["rows"]:
        tr = tr[:prof["rows"]]
    Xtr, _ = task.split(tr, te)        # non-binary columns standardised, as the card's run does
    ytr, gtr = task.y[tr], task.group[tr]
    C, tol, max_iter = 0.01, 1e-8, prof["ll_max_iter"]

    def fit():
        return FairLogLossClassifier(constraint="demographic_parity", C=C, tol=tol, max_iter=max_iter).fit(
            Xtr, ytr, gtr)
    est = fit()
    model = FairLogLoss(Xtr, ytr, gtr, "demographic_parity", C, True, n_groups=2)
    problem = model.to_problem()
    x0 = problem.initial_point()
    out = {}

    def bare():
        model.__dict__.pop("_last_residual", None)     # no point remembered from the previous repeat
        out["r"] = problem.native_solve(x0, tol, max_iter, None)
    timing = _interleaved(fit, bare, prof["repeats"])
    r = out["r"]
    theta, lam = r.x, r.primal["lambda"]
    t, _ = model.terms(theta, lam)
    bare_obj = float(np.mean(model.row_losses(t)) + np.mean(t.c * t.P)) + model.regulariser(theta)
    return {"data": "adult", "card": "fair-logloss-adult", "rows": len(ytr), "features": int(Xtr.shape[1]),
            "status": est.status_, "fit_objective": float(est.solution_.objective), "bare_objective": bare_obj,
            "max_theta_difference": float(np.max(np.abs(est.solution_.x - theta))),
            "bare": "the model's L-BFGS-B + semismooth Newton solve on the prebuilt model, from zero", **timing}


ESTIMATORS = {"FairClassifier": fair_classifier, "FairRegressor": fair_regressor,
              "FairRegressor[least_squares]": fair_regressor_least_squares, "SEORegressor": seo,
              "FairLogLossClassifier": fair_logloss}


def run(profile: str = "full", out: Path = OUT, repeats: int | None = None, only=None, note: str = "") -> dict:
    """Measure every estimator (or those in ``only``) and write the JSON to ``out``."""
    prof = dict(PROFILES[profile])
    if repeats is not None:
        prof["repeats"] = int(repeats)
    result = {"profile": profile, "repeats": prof["repeats"], "objective_tol": OBJECTIVE_TOL,
              "machine": {"cpu_count": os.cpu_count(), "load_average_start": list(os.getloadavg()),
                          "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
                          "python": platform.python_version(), "note": note
                          or "shared machine: other jobs ran at the same time; compare ratios, not seconds"},
              "estimators": {}}
    for name, bench in ESTIMATORS.items():
        if only and name not in only:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rec = bench(prof)
        rec["objective_difference"] = abs(rec["fit_objective"] - rec["bare_objective"])
        rec["same_program"] = rec["objective_difference"] <= OBJECTIVE_TOL
        result["estimators"][name] = rec
        print(f"{name:24s} fit {rec['fit_seconds']:.4f}s  bare {rec['bare_seconds']:.4f}s  "
              f"ratio {rec['ratio']:.2f} (median of pairs {rec['ratio_median_pairs']:.2f})  "
              f"objective diff {rec['objective_difference']:.2e}", flush=True)
    result["machine"]["load_average_end"] = list(os.getloadavg())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=float) + "\n")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="full")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--only", nargs="*", choices=sorted(ESTIMATORS))
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    run(args.profile, Path(args.out), args.repeats, args.only, args.note)
