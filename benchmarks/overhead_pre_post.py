"""Overhead benchmark (issue 26 §6): each pre-/post-processing estimator's ``fit`` against the bare
solve of its own program, timed two ways.

* ``bare_seconds`` ("bare from codes"): the program's statistics (integer codes, score atoms,
  collapsed points) are built once OUTSIDE the timer; the timer holds only the solve.
* ``bare_input_seconds`` ("bare from input"): the independent computation a user would write
  from the SAME raw input the fit gets (the string / integer columns, the label array): the
  obvious NumPy / pandas encoding (``pd.factorize`` per column, or ``np.unique(...,
  return_inverse=True)`` on a NumPy string array, whichever is faster there) INSIDE the timer,
  then the same solve. For the closed forms (Reweighing, RepresentationReweighing,
  ShiftInference) the statistics are the program, so this is the honest comparison; for the
  others it adds the encoding the fit must do and bare-from-codes skips.

For every estimator the three timings are taken in the same run, interleaved (fit, bare,
bare_input, fit, ...), after one warm-up of each, and the best of ``k`` repeats is kept;
``ratio = fit_seconds / bare_seconds`` and ``ratio_input = fit_seconds / bare_input_seconds``
(wall clock). The process CPU time of the same runs is kept too (``cpu_ratio``,
``cpu_ratio_input``): on a loaded machine a fit of a few milliseconds is often descheduled in the
middle, which inflates its best wall time but not its CPU time. Both bare answers are checked
against the estimator's (``agreement``, ``input_agreement``: objective, or the fitted numbers for
the closed forms, to 1e-6) so the timings are of the same program.

What "bare" (from codes) is, per entry, and what bare from input adds:

* ``threshold_debiaser`` (Adult, sex; logistic-regression scores ``2p - 1`` of the
  post-processing split; ``gamma=0.1``, ``eps=0``, free ``rho``, ``calibration=None``, the native
  exact solver): the per-group score atoms (sorted unique scores with their weights, the QP's
  sufficient statistics) are built once outside the timer; bare is the exact algorithm
  (bisection on ``rho`` over the tabulated ramps, then the per-group thresholds) run on them:
  ``RandomizedThresholdParity(atoms=...).solve_native()``. Objective: ``(gamma/2) E[h^2] - E[h f]``.
  From input: ``np.unique`` of the NumPy string groups (the fit gets the same array), the atoms
  (``collapse_atoms``) and the same solve.
* ``threshold_debiaser_isotonic`` (same, ``calibration="isotonic_per_group"`` with the labels):
  bare adds one pool-adjacent-violators fit per group on the prebuilt label atoms
  (``scipy.optimize.isotonic_regression``), re-collapses the calibrated atoms and runs the same
  exact algorithm. From input: as above, then the same calibration and solve.
* ``shift_inference`` (same scores and labels): a closed form; bare is the two ``np.bincount`` of
  the (prebuilt) group codes that give the group priors. Agreement: the priors. From input:
  ``np.unique(groups, return_inverse=True)`` then the same two ``bincount``.
* ``reweighing`` / ``representation_reweighing`` (the 45,222 Adult records over the 504-cell
  domain, sex): closed forms; the integer codes of the records (n x 5) are built once outside
  the timer; bare collapses them to cells (``np.unique`` of mixed-radix keys), evaluates the
  weight formula on the cell counts and spreads it back to the rows. Agreement: the row weights.
  From input: ``pd.factorize`` of each of the five raw columns (X's four, pandas 3's Arrow
  strings and int64, and y), then the same collapse and formula.
* ``maxent_resampler`` (the same records; ``C=0.5``, reweighted prior, weighted target): the
  distinct points, their prior weights and the target (the dual's statistics) are built once
  outside the timer; bare is an independent damped Newton on the dual
  ``h(lam) = log(C Z_u + (1-C) sum_i w_i e^{<lam, s_i>}) - <theta, lam>`` in plain NumPy (dense
  one-hot matrix of the points, the uniform part factorised over attributes), from ``lam = 0``
  with the same stopping rule (max marginal violation over every level <= tol).
  Objective: ``h(lam*)``. From input: ``pd.factorize`` of the five raw columns, the distinct
  points (``np.unique`` of mixed-radix keys), the reweighted prior (Algorithm 1, tau = 1), its
  one-hot marginals as the target, the one-hot matrix and the same Newton.
* ``balanced_filter`` (Adult, race, ``proxy="regression"``, ``alpha=0.2``): the program is the
  proxy's oracle call, ``LogisticRegression(max_iter=1000).fit`` on the encoded features, then
  the proxy-weights QP P1 and the acceptance LP. Bare is the same ``fit`` call on the same
  (prebuilt) encoded matrix, then the QP and the LP handed to ``highspy`` from their arrays
  (built once outside the timer from the estimator's conditional matrix). Objective: the QP's.
  From input: the same ``ColumnTransformer`` fitted afresh on the raw frame and the groups by
  ``pd.factorize``, then the same calls (the QP/LP arrays stay prebuilt: they come from the
  proxy's conditional matrix).
* ``fair_selection`` (credit applicant pool of the card, approval-rate parity ``eps=0.02``, LP
  relaxation): fit is ``approval_program(...).solve("highs")``; bare is
  ``scipy.optimize.linprog(method="highs")`` on ``Program.canonical()``'s arrays. From input:
  the groups by ``pd.factorize`` and the LP (budget row, ``0 <= r_a(x) - m <= eps`` per group)
  assembled with ``scipy.sparse`` from the pool's columns, then the same ``linprog``.

Run: ``FAIROPT_DATA_HOME=../shared/datasets python benchmarks/overhead_pre_post.py`` (writes
``benchmarks/results/overhead_pre_post.json``); ``--profile smoke`` runs one repeat of each on
subsamples (the test suite's check of the script and of the agreement); ``--only NAME ...``
runs some entries. ``overhead_pre_post_before.json`` holds the same script's run against the
code before the overhead work (commit 071de76, same load), for comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "results" / "overhead_pre_post.json"
PROFILES = {"full": {"repeats": 9, "rows": None, "selection_rows": None},
            "smoke": {"repeats": 1, "rows": 4000, "selection_rows": 3000}}
TOL = 1e-8


def interleaved(fns: dict, repeats: int) -> tuple[dict, dict]:
    """Best-of-``repeats`` wall and CPU times of each callable in ``fns`` (``fit``, ``bare``,
    ``bare_input``), alternated after one warm-up each; returns the times and the last results."""
    out = {key: fn() for key, fn in fns.items()}
    times: dict = {k: [] for key in fns for k in (key, key + "_cpu")}
    for _ in range(repeats):
        for key, fn in fns.items():
            c0, t0 = time.process_time(), time.perf_counter()
            out[key] = fn()
            times[key].append(time.perf_counter() - t0)
            times[key + "_cpu"].append(time.process_time() - c0)
    return {k: min(v) for k, v in times.items()}, out


def _entry(t: dict, fit_obj, bare_obj, agreement, input_obj, input_agreement, **extra) -> dict:
    return {"fit_seconds": t["fit"], "bare_seconds": t["bare"], "ratio": t["fit"] / t["bare"],
            "bare_input_seconds": t["bare_input"], "ratio_input": t["fit"] / t["bare_input"],
            "fit_cpu_seconds": t["fit_cpu"], "bare_cpu_seconds": t["bare_cpu"],
            "bare_input_cpu_seconds": t["bare_input_cpu"],
            "cpu_ratio": t["fit_cpu"] / max(t["bare_cpu"], 1e-9),
            "cpu_ratio_input": t["fit_cpu"] / max(t["bare_input_cpu"], 1e-9),
            "fit_objective": fit_obj, "bare_objective": bare_obj, "agreement": float(agreement),
            "bare_input_objective": input_obj, "input_agreement": float(input_agreement), **extra}


def _codes(column) -> np.ndarray:
    """Integer codes of one raw column, as a user would write them (pandas' hash table)."""
    return pd.factorize(column)[0]


# ----------------------------------------------------------------------------- data
def _adult_scores(rows):
    """Logistic-regression scores ``2p - 1`` on Adult's post-processing split, with sex and labels."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairopt.data import load_dataset
    df = load_dataset("adult")
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(df))
    df = df.iloc[idx].reset_index(drop=True)
    if rows is not None:   # smoke: train on a share of the rows that keeps the 40/30 split
        df = df.iloc[:int(rows / 0.3) + 1].reset_index(drop=True)
    y = df.pop("income").to_numpy().astype(int)
    sex = df["sex"].to_numpy().astype(str)
    num = df.select_dtypes("number").columns.tolist()
    cat = [c for c in df.columns if c not in num]
    pre = ColumnTransformer([("n", StandardScaler(), num), ("c", OneHotEncoder(handle_unknown="ignore"), cat)])
    ntr = int(0.4 * len(df))
    clf = make_pipeline(pre, LogisticRegression(max_iter=2000)).fit(df.iloc[:ntr], y[:ntr])
    post = slice(ntr, ntr + int(0.3 * len(df)))
    f = 2.0 * clf.predict_proba(df.iloc[post])[:, 1] - 1.0
    f, s, yy = f, sex[post], y[post]
    if rows is not None:
        f, s, yy = f[:rows], s[:rows], yy[:rows]
    return f, s, yy


def _adult_records(rows):
    from fairopt.data import load_builtin
    rec = load_builtin("adult").expand()
    if rows is not None:
        rec = rec.sample(rows, random_state=0).reset_index(drop=True)
    return rec.drop(columns="income"), rec["income"]


# ----------------------------------------------------------------------------- threshold
def threshold_debiaser(f, s, y, repeats: int, calibrated: bool) -> dict:
    from scipy.optimize import isotonic_regression

    from fairopt.formulations.constrained_classification import RandomizedThresholdParity
    from fairopt.formulations.constrained_classification.atoms import collapse_atoms, merge_atoms
    from fairopt.postprocessing import ThresholdDebiaser

    gamma = 0.1
    labels, codes = np.unique(s, return_inverse=True)
    K = len(labels)
    cal = "isotonic_per_group" if calibrated else None
    est = ThresholdDebiaser(gamma=gamma, calibration=cal)

    def fit():
        return est.fit(f, y if calibrated else None, sensitive_features=s).solution_

    at = collapse_atoms(f, codes, K, labels=y if calibrated else None)
    if calibrated:   # per group: sorted atoms with their label sums (built outside the timer)
        slices = [at.cell_slice(k) for k in range(K)]

    def solve(at, slices):
        if not calibrated:
            return RandomizedThresholdParity(gamma=gamma, atoms=at).solve_native()
        eta = np.empty(at.n_atoms)
        for sl in slices:   # a loop over groups
            w = at.weight[sl]
            eta[sl] = isotonic_regression(at.positive[sl] / w, weights=w).x
        cal_at = merge_atoms(at.cell, 2.0 * eta - 1.0, at.weight, at.positive, K)
        return RandomizedThresholdParity(gamma=gamma, atoms=cal_at).solve_native()

    def bare():
        return solve(at, slices if calibrated else None)

    def bare_input():   # from the raw labels: numpy's sort-based encoding, then atoms and the same solve
        _, g = np.unique(s, return_inverse=True)
        a = collapse_atoms(f, g, K, labels=y if calibrated else None)
        return solve(a, [a.cell_slice(k) for k in range(K)] if calibrated else None)

    t, o = interleaved({"fit": fit, "bare": bare, "bare_input": bare_input}, repeats)
    a, b, c = o["fit"], o["bare"], o["bare_input"]
    return _entry(t, a.objective, b.objective, abs(a.objective - b.objective), c.objective,
                  abs(a.objective - c.objective), rows=len(f), atoms=int(at.n_atoms), groups=K)


def shift_inference(f, s, y, repeats: int) -> dict:
    from fairopt.postprocessing import ShiftInference
    labels, codes = np.unique(s, return_inverse=True)
    K = len(labels)
    est = ShiftInference()

    def fit():
        e = est.fit(f, y, sensitive_features=s)
        return np.r_[e.group_priors_, e.prior_]

    yf = y.astype(float)

    def priors(codes):
        pk = np.bincount(codes, weights=yf, minlength=K) / np.bincount(codes, minlength=K)
        return np.clip(np.r_[pk, yf.mean()], 1e-6, 1 - 1e-6)

    def bare():
        return priors(codes)

    def bare_input():   # from the raw labels (numpy's sort-based encoding; faster than pd.factorize here)
        return priors(np.unique(s, return_inverse=True)[1])

    t, o = interleaved({"fit": fit, "bare": bare, "bare_input": bare_input}, repeats)
    a = o["fit"]
    return _entry(t, None, None, np.max(np.abs(a - o["bare"])), None, np.max(np.abs(a - o["bare_input"])),
                  rows=len(f))


# ----------------------------------------------------------------------------- reweighting
def reweighing(X, y, repeats: int, representation: bool) -> dict:
    from fairopt.data import load_builtin
    from fairopt.preprocessing import RepresentationReweighing, Reweighing
    dom = load_builtin("adult").domain
    codes = dom.encode(X.assign(income=y)[list(dom.names)])
    card = np.asarray(dom.cardinalities, dtype=np.int64)
    radix = np.r_[np.cumprod(card[::-1])[::-1][1:], 1]
    zcol, ycol = dom.index("sex"), dom.index("income")
    est = (RepresentationReweighing if representation else Reweighing)()

    def fit():
        return est.fit(X, y, sensitive_features="sex").sample_weight_

    def weights(codes, card, radix):
        _, inv, cnt = np.unique(codes @ radix, return_inverse=True, return_counts=True)
        pts = codes[np.unique(inv, return_index=True)[1]]
        z = pts[:, zcol]
        cz = np.bincount(z, weights=cnt, minlength=card[zcol])
        if representation:
            w = cnt / cz[z]
        else:
            yy = pts[:, ycol]
            cyz = np.zeros((card[ycol], card[zcol]))
            np.add.at(cyz, (yy, z), cnt)
            w = cnt * cyz.sum(axis=1)[yy] * cz[z] / (cnt.sum() * cyz[yy, z])
        row = (w / w.sum())[inv] / cnt[inv]
        return row * (len(row) / row.sum())

    def bare():
        return weights(codes, card, radix)

    def bare_input():   # from the raw X and y: pd.factorize of every column, then the same formula
        raw = np.column_stack([_codes(y if c == y.name else X[c]) for c in dom.names])
        k = raw.max(axis=0) + 1
        return weights(raw, k, np.r_[np.cumprod(k[::-1])[::-1][1:], 1])

    t, o = interleaved({"fit": fit, "bare": bare, "bare_input": bare_input}, repeats)
    a = o["fit"]
    return _entry(t, None, None, np.max(np.abs(a - o["bare"])), None, np.max(np.abs(a - o["bare_input"])),
                  rows=len(X))


# ----------------------------------------------------------------------------- max-ent
def _newton_dual(S, n_levels, logw, C, theta, tol, max_iter=100):
    """Damped Newton on the max-ent dual from lam = 0 (plain NumPy; S: dense reference-coded
    one-hot rows of the distinct points; every attribute one-hot)."""
    d = S.shape[1]
    starts = np.r_[0, np.cumsum(np.asarray(n_levels) - 1)]
    logC, log1C = np.log(C), np.log1p(-C)
    logk = float(np.sum(np.log(n_levels)))

    def state(lam):
        lzu, mu_u, blocks = logC - logk, np.empty(d), []
        for f in range(len(n_levels)):          # a loop over attributes
            a = np.r_[0.0, lam[starts[f]:starts[f + 1]]]
            m = a.max()
            e = np.exp(a - m)
            lzu += m + np.log(e.sum())
            p = e[1:] / e.sum()
            mu_u[starts[f]:starts[f + 1]] = p
            blocks.append(p)
        sc = logw + S @ lam
        m = sc.max()
        e = np.exp(sc - m)
        lzw = log1C + m + np.log(e.sum())
        rho = e / e.sum()
        lz = np.logaddexp(lzu, lzw)
        pi = np.exp(lzu - lz)
        mu_w = S.T @ rho
        return lz, pi, mu_u, mu_w, rho, blocks

    def grad_of(st):
        _, pi, mu_u, mu_w, _, _ = st
        return pi * mu_u + (1 - pi) * mu_w - theta

    def violation(g):
        v = np.abs(g).max()
        for f in range(len(n_levels)):
            v = max(v, abs(g[starts[f]:starts[f + 1]].sum()))
        return v

    lam = np.zeros(d)
    st = state(lam)
    h = st[0] - theta @ lam
    it = 0
    for it in range(max_iter):   # noqa: B007  (the count is returned)
        g = grad_of(st)
        if violation(g) <= tol:
            break
        _, pi, mu_u, mu_w, rho, blocks = st
        Hu = np.zeros((d, d))
        for f, p in enumerate(blocks):
            sl = slice(starts[f], starts[f + 1])
            Hu[sl, sl] = np.diag(p) - np.outer(p, p)
        Hw = (S.T * rho) @ S - np.outer(mu_w, mu_w)
        du = mu_u - mu_w
        H = pi * Hu + (1 - pi) * Hw + pi * (1 - pi) * np.outer(du, du)
        step = -np.linalg.solve(H + 1e-12 * np.eye(d), g)
        t = 1.0
        while True:
            new = state(lam + t * step)
            hn = new[0] - theta @ (lam + t * step)
            if hn <= h + 1e-4 * t * (g @ step) or t < 1e-10:
                break
            t *= 0.5
        lam, st, h = lam + t * step, new, hn
    return lam, h, it


def maxent_resampler(X, y, repeats: int) -> dict:
    from fairopt.preprocessing import MaxEntResampler
    est = MaxEntResampler(C=0.5, tol=TOL)

    iters = {}

    def fit():
        e = est.fit(X, y, sensitive_features="sex")
        iters["fit"] = e.n_iter_
        return e.solution_.objective

    est.fit(X, y, sensitive_features="sex")
    model = est.model_
    enc = model.encoding
    n_levels = np.asarray(enc.n_levels)
    starts = np.r_[0, np.cumsum(n_levels - 1)]
    pts = model.points
    S = np.zeros((pts.shape[0], int(starts[-1])))
    for f in range(pts.shape[1]):   # reference coding: level 0 has no column
        r = np.flatnonzero(pts[:, f] > 0)
        S[r, starts[f] + pts[r, f] - 1] = 1.0
    w = model.prior_weights
    live = w > 0
    S, logw = S[live], np.log(w[live] / w[live].sum())
    theta = np.asarray(model.theta, dtype=float)

    def bare():
        _, h, iters["bare"] = _newton_dual(S, n_levels, logw, model.C, theta, TOL)
        return h

    names = list(model.encoding.names)
    yc, zc = names.index(y.name), names.index("sex")

    def bare_input():
        # from the raw X and y: pd.factorize of every column (first-seen level order: the reference
        # level changes, the optimum does not), distinct points by mixed-radix keys, the
        # reweighted prior, its marginals as the target, then the same Newton
        raw = np.column_stack([_codes(y if c == y.name else X[c]) for c in names])
        k = raw.max(axis=0) + 1
        radix = np.r_[np.cumprod(k[::-1])[::-1][1:], 1]
        _, first, cnt = np.unique(raw @ radix, return_index=True, return_counts=True)
        p = raw[first]
        yy, zz = p[:, yc], p[:, zc]
        cyz = np.zeros((k[yc], k[zc]))
        np.add.at(cyz, (yy, zz), cnt)
        w = cnt * cyz.sum(axis=1)[yy] / cyz[yy, zz]   # Algorithm 1's prior (tau = 1): equal group shares
        w /= w.sum()
        st = np.r_[0, np.cumsum(k - 1)]
        S2 = np.zeros((p.shape[0], int(st[-1])))
        th = np.empty(int(st[-1]))
        for j in range(p.shape[1]):   # a loop over attributes: reference coding, level 0 dropped
            r = np.flatnonzero(p[:, j] > 0)
            S2[r, st[j] + p[r, j] - 1] = 1.0
            th[st[j]:st[j + 1]] = np.bincount(p[:, j], weights=w, minlength=k[j])[1:]
        _, h, _ = _newton_dual(S2, k, np.log(w), model.C, th, TOL)
        return h

    t, o = interleaved({"fit": fit, "bare": bare, "bare_input": bare_input}, repeats)
    a, b, c = o["fit"], o["bare"], o["bare_input"]
    return _entry(t, a, b, abs(a - b), c, abs(a - c), rows=len(X), points=int(pts.shape[0]),
                  dual_dim=int(S.shape[1]), fit_iterations=iters["fit"], bare_iterations=iters["bare"])


# ----------------------------------------------------------------------------- balanced filter
def _highs_solve(canon, options: dict | None = None):
    import highspy
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for k, v in (options or {}).items():
        h.setOptionValue(k, v)
    lp = highspy.HighsLp()
    n, m = canon.n, canon.m
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = canon.c, canon.xl, canon.xu
    lp.row_lower_, lp.row_upper_ = canon.rl, canon.ru
    A = canon.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    if canon.P is None:
        h.passModel(lp)
    else:
        model = highspy.HighsModel()
        model.lp_ = lp
        P = sp_tril(canon.P)
        model.hessian_.dim_ = n
        model.hessian_.format_ = highspy.HessianFormat.kTriangular
        model.hessian_.start_, model.hessian_.index_, model.hessian_.value_ = P.indptr, P.indices, P.data
        h.passModel(model)
    h.run()
    return h.getInfo().objective_function_value + canon.constant, np.asarray(h.getSolution().col_value)


def sp_tril(P):
    import scipy.sparse as sp
    return sp.tril(P, format="csc")


def balanced_filter(rows, repeats: int) -> dict:
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression

    from fairopt.data import load_dataset
    from fairopt.filtering import BalancedFilter
    from fairopt.formulations.proxy_weights.programs import acceptance_program, default_form, p1_program
    df = load_dataset("adult").drop(columns="income")
    if rows is not None:
        df = df.sample(rows, random_state=0).reset_index(drop=True)
    est = BalancedFilter(alpha=0.2, proxy="regression", random_state=0)

    def fit():
        e = est.fit(df, sensitive_features="race")
        return e

    e = fit()
    X = df.drop(columns="race")
    Z = e.encoder_.transform(X)
    z = e.groups_.get_indexer(df["race"])
    A, mass = e.conditional_matrix_, e.cell_mass_
    qp = p1_program(A, form=default_form("highs")).canonical()
    lp = acceptance_program(A, mass, A.T @ e.weights_, 1e-9).canonical()
    from threadpoolctl import threadpool_limits

    def fit_obj():
        return fit().proxy_.model.coef_

    def solve(Z, z):
        with threadpool_limits(limits=1, user_api="blas"):
            model = LogisticRegression(max_iter=1000).fit(Z, z)
            obj, _ = _highs_solve(qp)
            _highs_solve(lp, {"primal_feasibility_tolerance": 1e-10})
        return model.coef_, obj

    def bare():
        return solve(Z, z)

    def bare_input():   # from the raw frame: the same encoder fitted afresh, the groups by pd.factorize
        return solve(clone(e.encoder_).fit_transform(X), pd.factorize(df["race"], sort=True)[0])

    t, o = interleaved({"fit": fit_obj, "bare": bare, "bare_input": bare_input}, repeats)
    a, (coef, obj), (coef_in, obj_in) = o["fit"], o["bare"], o["bare_input"]
    fit_qp = float(np.sum((A.T @ e.weights_ - 1.0 / A.shape[1]) ** 2))
    agree = max(float(np.max(np.abs(a - coef))), abs(fit_qp - obj))
    agree_in = max(float(np.max(np.abs(a - coef_in))), abs(fit_qp - obj_in))
    return _entry(t, fit_qp, obj, agree, obj_in, agree_in, rows=len(df), cells=int(A.shape[0]),
                  groups=int(A.shape[1]))


# ----------------------------------------------------------------------------- fair selection
def fair_selection(rows, repeats: int) -> dict:
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from fairopt.constraints import selection_rate_parity
    from fairopt.runs.fair_selection import Data, Parameters, approval_program, score_applicants
    params = Parameters()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = score_applicants(Data(), params)
    if rows is not None:
        pool = pool.sample(rows, random_state=0).reset_index(drop=True)
    budget = params.budget_fraction * float(pool["exposure"].sum())

    def fit():
        block = selection_rate_parity(pool["group"], eps=0.02, name="parity")
        return approval_program(pool, budget, block).solve("highs").objective

    canon = approval_program(pool, budget, selection_rate_parity(pool["group"], eps=0.02)).canonical()
    A, rl, ru = canon.A, canon.rl, canon.ru
    eq = rl == ru
    up, low = np.isfinite(ru) & ~eq, np.isfinite(rl) & ~eq
    A_ub, b_ub = sp.vstack([A[up], -A[low]], format="csr"), np.r_[ru[up], -rl[low]]
    A_eq, b_eq, bounds = A[eq], rl[eq], np.c_[canon.xl, canon.xu]

    def bare():
        r = linprog(canon.c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq if eq.any() else None,
                    b_eq=b_eq if eq.any() else None, bounds=bounds, method="highs")
        return canon.sense * (r.fun + canon.constant)

    def bare_input():
        # from the pool's columns: groups by pd.factorize; variables x (n) and the mean rate m;
        # rows: the budget, then 0 <= r_a(x) - m <= eps per group, handed to linprog
        g = _codes(pool["group"])
        n, k = len(g), int(g.max()) + 1
        rate = sp.csr_matrix((1.0 / np.bincount(g)[g], (g, np.arange(n))), shape=(k, n))
        R = sp.hstack([rate, sp.csr_matrix(-np.ones((k, 1)))], format="csr")
        budget_row = sp.csr_matrix(np.r_[pool["exposure"].to_numpy(), 0.0][None, :])
        A_in = sp.vstack([budget_row, R, -R], format="csr")
        b_in = np.r_[budget, np.full(k, 0.02), np.zeros(k)]
        cost = -np.r_[pool["profit"].to_numpy(), 0.0]
        r = linprog(cost, A_ub=A_in, b_ub=b_in, bounds=[(0.0, 1.0)] * n + [(None, None)], method="highs")
        return -r.fun

    t, o = interleaved({"fit": fit, "bare": bare, "bare_input": bare_input}, repeats)
    a, b, c = o["fit"], o["bare"], o["bare_input"]
    return _entry(t, a, b, abs(a - b) / max(1.0, abs(a)), c, abs(a - c) / max(1.0, abs(a)), rows=len(pool),
                  variables=int(canon.n))


# ----------------------------------------------------------------------------- main
def run(profile: str = "full", out: Path = OUT, only: list[str] | None = None, note: str = "") -> dict:
    cfg = PROFILES[profile]
    k, rows = cfg["repeats"], cfg["rows"]
    res = {"profile": profile, "repeats": k, "cpus": os.cpu_count(), "machine": platform.node(),
           "load_average_at_start": list(os.getloadavg()),
           "machine_note": (note or "machine conditions not stated") + "; ratios are of interleaved "
                           "fit/bare runs in the same process", "estimators": {}}
    f, s, y = _adult_scores(rows)
    X, yr = _adult_records(rows)
    jobs = {
        "threshold_debiaser": lambda: threshold_debiaser(f, s, y, k, calibrated=False),
        "threshold_debiaser_isotonic": lambda: threshold_debiaser(f, s, y, k, calibrated=True),
        "shift_inference": lambda: shift_inference(f, s, y, k),
        "reweighing": lambda: reweighing(X, yr, k, representation=False),
        "representation_reweighing": lambda: reweighing(X, yr, k, representation=True),
        "maxent_resampler": lambda: maxent_resampler(X, yr, k),
        "balanced_filter": lambda: balanced_filter(rows, k),
        "fair_selection": lambda: fair_selection(cfg["selection_rows"], k),
    }
    for name, job in jobs.items():
        if only and name not in only:
            continue
        res["estimators"][name] = job()
        print(name, json.dumps(res["estimators"][name], default=float), flush=True)
    res["load_average_at_end"] = list(os.getloadavg())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2, default=float) + "\n")
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="full")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--note", default="", help="machine conditions, stored in the JSON")
    a = ap.parse_args()
    run(a.profile, Path(a.out), a.only, a.note)
