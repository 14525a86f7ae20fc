"""Scaling benchmark: Dask and chunked statistics, the quantised threshold fit, huge Calmon
mappings by column generation, import times, and the Adult Calmon fit against a bare LP.

Run: ``FAIROPT_DATA_HOME=../shared/datasets python benchmarks/scale.py`` (writes
``benchmarks/results/scale.json``); ``--quick`` runs every section at reduced sizes (minutes),
``--smoke`` at tiny sizes (the test suite's check that the script works).

Sections (full sizes):

* ``import``: ``python -c pass``, ``import fairopt`` and ``fairopt --help`` (best of 5).
* ``dask_threshold``: a Dask ``LocalCluster`` with 2 workers fits ``ThresholdDebiaser(score_bins=2**16)``
  on 10^8 synthetic scores generated in chunks on the workers; time and peak RSS per worker.
* ``dask_metrics``: group metrics of the debiased rule's probabilities (a Dask array) on the same rows.
* ``dask_maxent``: ``MaxEntResampler`` counts over 10^7 synthetic records (a Dask DataFrame).
* ``chunked_threshold``: the same fit from ``.npy`` files of 10^8 scores, in a fresh process:
  time and peak RSS (``ru_maxrss``, pages of the mapped file included).
* ``quantised_vs_exact``: at 10^6 scores, accuracy and fairness gap of ``score_bins=2**16`` against
  the exact fit.
* ``mapping``: the 1,045,537-cell Adult mapping (age ±45 years, education +3) by column
  generation and by HiGHS's interior point in the same run.
* ``mapping_10m``: the same with weekly hours in 5 bins (11,188,184 cells) by column generation,
  with its peak memory (a fresh process).
* ``adult_calmon``: ``TVRepair.fit`` on Adult (AIF360's layout) against two bare solves of the
  same program (scipy/HiGHS ``linprog``, cold; highspy with the fit's own warm-started primal
  simplex), timed interleaved, and against AIF360's ``OptTools`` (see :func:`adult_calmon`).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "results" / "scale.json"
SIZES = {
    "full": {"dask_scores": 10**8, "dask_chunk": 5 * 10**6, "maxent_records": 10**7, "chunked_scores": 10**8,
             "quantised_scores": 10**6, "mapping": (45, 3), "bins": 2**16, "aif360": True, "repeats": 5,
             "maxent_partitions": 20},
    "quick": {"dask_scores": 10**7, "dask_chunk": 10**6, "maxent_records": 10**6, "chunked_scores": 10**7,
              "quantised_scores": 10**6, "mapping": (5, 1), "bins": 2**16, "aif360": True, "repeats": 3,
              "maxent_partitions": 10},
    "smoke": {"dask_scores": 2 * 10**5, "dask_chunk": 5 * 10**4, "maxent_records": 2 * 10**4,
              "chunked_scores": 2 * 10**5, "quantised_scores": 10**5, "mapping": None, "bins": 2**10,
              "aif360": False, "repeats": 1, "maxent_partitions": 2},
}


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


# ----------------------------------------------------------------------------- imports
def import_times(repeats: int) -> dict:
    py = sys.executable
    cli = shutil.which("fairopt", path=str(Path(py).parent)) or shutil.which("fairopt")

    def run(args):
        return lambda: subprocess.run(args, check=True, capture_output=True)
    out = {"python_pass": _best(run([py, "-c", "pass"]), repeats),
           "import_fairopt": _best(run([py, "-c", "import fairopt"]), repeats)}
    if cli:
        out["fairopt_help"] = _best(run([cli, "--help"]), repeats)
    out["import_fairopt_minus_pass"] = out["import_fairopt"] - out["python_pass"]
    if "fairopt_help" in out:
        out["fairopt_help_minus_pass"] = out["fairopt_help"] - out["python_pass"]
    out["targets"] = {"import_fairopt": 0.3, "fairopt_help": 0.5}
    return out


# ----------------------------------------------------------------------------- synthetic scores
def _block_scores(block_id, n_rows: int, chunk: int, seed: int, what: str):
    """One chunk of the synthetic population: group g in {0,1,2}, label y ~ Bernoulli(eta),
    calibrated score f = 2 eta - 1 with a group-dependent eta (rows generated where they are used)."""
    i = block_id[0] if isinstance(block_id, tuple) else block_id
    m = min(chunk, n_rows - i * chunk)
    rng = np.random.default_rng([seed, i])
    g = rng.integers(0, 3, m).astype(np.int8)
    eta = 1.0 / (1.0 + np.exp(-rng.normal(0.6 * g - 0.6, 1.2, m)))
    if what == "g":
        return g
    if what == "f":
        return 2.0 * eta - 1.0
    return (rng.random(m) < eta).astype(np.int8)


def _dask_population(n: int, chunk: int, seed: int = 0):
    """Scores, groups and labels as slices of one Dask array, so that each block of the
    population is generated once per pass over the data."""
    from functools import partial

    import dask.array as da
    chunks = ((3,), (chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ()))
    base = da.map_blocks(partial(_worker_block, n_rows=n, chunk=chunk, seed=seed), chunks=chunks, dtype=float)
    return base[0], base[1].astype(np.int8), base[2].astype(np.int8)


def _worker_block(block_id=None, **kw):
    return np.stack([_block_scores((block_id[1],), what=w, **kw) for w in ("f", "g", "y")])


def _peak_rss_mb() -> float:
    """This process's own peak resident memory (``VmHWM``; ``ru_maxrss`` would include a parent's
    peak inherited across fork/exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _worker_peaks(client) -> dict:
    peaks = client.run(_peak_rss_mb)
    return {str(k): round(v, 1) for k, v in peaks.items()}


def dask_sections(sizes: dict) -> dict:
    from dask.distributed import Client, LocalCluster

    from fairopt.metrics import demographic_parity_difference, statistical_rate
    from fairopt.postprocessing import ThresholdDebiaser
    out = {}
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                         local_directory=tmp, memory_limit="3GiB") as cluster, Client(cluster) as client:
        n, chunk, bins = sizes["dask_scores"], sizes["dask_chunk"], sizes["bins"]
        f, g, y = _dask_population(n, chunk)
        t0 = time.perf_counter()
        est = ThresholdDebiaser(score_bins=bins, calibration=None).fit(f, y, g)
        out["dask_threshold"] = {"rows": n, "chunk_rows": chunk, "score_bins": bins, "workers": 2,
                                 "fit_seconds": time.perf_counter() - t0,
                                 "fitted_rates": est.fitted_rates_.tolist(),
                                 "worker_peak_rss_mb": _worker_peaks(client)}
        h = est.predict_proba(f, sensitive_features=g)[:, 1]
        t0 = time.perf_counter()
        sr = statistical_rate(h, g)
        dpd = demographic_parity_difference(None, h, sensitive_features=g)
        out["dask_metrics"] = {"rows": n, "seconds": time.perf_counter() - t0, "statistical_rate": sr,
                               "demographic_parity_difference": dpd,
                               "note": "on the debiased rule's probabilities, a Dask array computed on the workers",
                               "worker_peak_rss_mb": _worker_peaks(client)}
        out["dask_maxent"] = dask_maxent(sizes["maxent_records"], sizes["maxent_partitions"], client)
    return out


def _records_block(i: int, m: int, seed: int):
    import pandas as pd
    rng = np.random.default_rng([seed, i])
    s = rng.integers(0, 2, m)
    a = np.minimum(rng.poisson(2 + s, m), 6)
    e = rng.integers(0, 4, m)
    y = (rng.random(m) < 0.2 + 0.1 * s + 0.05 * e).astype(int)
    return pd.DataFrame({"sex": s, "age": a, "edu": e, "y": y})


def dask_maxent(n: int, parts: int, client) -> dict:
    import dask
    import dask.dataframe as dd

    from fairopt.preprocessing import MaxEntResampler
    m = -(-n // parts)
    meta = _records_block(0, 1, 0).iloc[:0]
    ddf = dd.from_delayed([dask.delayed(_records_block)(i, min(m, n - i * m), 1) for i in range(parts)], meta=meta)
    t0 = time.perf_counter()
    est = MaxEntResampler(C=0.5, target="balanced").fit(ddf, "y", "sex")
    return {"records": n, "partitions": parts, "fit_seconds": time.perf_counter() - t0,
            "distinct_records": len(est.prior_weights_), "kl": est.kl_,
            "worker_peak_rss_mb": _worker_peaks(client)}


# ----------------------------------------------------------------------------- chunked path
CHUNKED_CHILD = """
import sys, time, json
from fairopt.postprocessing import ThresholdDebiaser
def hwm():
    return [int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
t = time.perf_counter()
est = ThresholdDebiaser(score_bins=int(sys.argv[3]), calibration=None).fit(sys.argv[1], None, sys.argv[2])
print(json.dumps({"fit_seconds": time.perf_counter() - t, "fitted_rates": est.fitted_rates_.tolist(),
                  "peak_rss_mb": hwm()}))
"""


def chunked_threshold(n: int, bins: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        fp, gp = os.path.join(tmp, "scores.npy"), os.path.join(tmp, "groups.npy")
        f = np.lib.format.open_memmap(fp, mode="w+", dtype=np.float64, shape=(n,))
        g = np.lib.format.open_memmap(gp, mode="w+", dtype=np.int8, shape=(n,))
        chunk = 1 << 22
        for b, i in enumerate(range(0, n, chunk)):      # a loop over chunks, not rows
            f[i:i + chunk] = _block_scores(b, n, chunk, 2, "f")
            g[i:i + chunk] = _block_scores(b, n, chunk, 2, "g")
        f.flush()
        g.flush()
        del f, g
        base = subprocess.run([sys.executable, "-c", (
            "import numpy, pandas, sklearn, scipy, highspy, fairopt.postprocessing\n"
            "print([int(l.split()[1]) / 1024 for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])")],
            check=True, capture_output=True, text=True)
        res = subprocess.run([sys.executable, "-c", CHUNKED_CHILD, fp, gp, str(bins), "fit"], check=True,
                             capture_output=True, text=True)
        out = json.loads(res.stdout.strip().splitlines()[-1])
    out.update({"rows": n, "score_bins": bins, "file_mb": n * 9 / 2**20, "limit_mb": 1024,
                "baseline_rss_after_imports_mb": float(base.stdout.strip()),
                "mode": "score_bins (exact atoms of 10^8 distinct scores need 2.4 GB of atoms alone)"})
    return out


# ----------------------------------------------------------------------------- quantised vs exact
def quantised_vs_exact(n: int, bins: int) -> dict:
    from fairopt.postprocessing import ThresholdDebiaser
    f = _block_scores(0, n, n, 3, "f")
    g = _block_scores(0, n, n, 3, "g").astype(int)
    y = _block_scores(0, n, n, 3, "y").astype(int)
    out = {"rows": n, "score_bins": bins}
    for gamma in (0.0, 0.01):
        res = {}
        for name, kw in (("exact", {}), ("quantised", {"score_bins": bins})):
            t0 = time.perf_counter()
            est = ThresholdDebiaser(gamma=gamma, calibration=None, **kw).fit(f, y, g)
            sec = time.perf_counter() - t0
            h = est.decision_probability(f, sensitive_features=g)
            rates = np.bincount(g, weights=h) / np.bincount(g)
            res[name] = {"fit_seconds": sec, "accuracy": float(np.mean(h * y + (1 - h) * (1 - y))),
                         "fairness_gap": float(rates.max() - rates.min()),
                         "objective": float(np.mean(h * f - 0.5 * gamma * h * h))}
        lo, hi, b = est.score_grid_
        res["accuracy_difference"] = abs(res["exact"]["accuracy"] - res["quantised"]["accuracy"])
        res["fairness_gap_difference"] = abs(res["exact"]["fairness_gap"] - res["quantised"]["fairness_gap"])
        res["objective_loss"] = res["exact"]["objective"] - res["quantised"]["objective"]
        res["objective_bound"] = float(np.max(hi - lo) / b)
        out[f"gamma={gamma}"] = res
    return out


# ----------------------------------------------------------------------------- mappings
def mapping(age_step: int, edu_up: int, with_ipm: bool = True, hours_bins: int = 0) -> dict:
    """The unbinned Adult mapping (raw age x education number x income, D = sex); with
    ``hours_bins`` also weekly hours in that many bins (any move between them costs 0.1 per bin)."""
    from fairopt.data import Attribute, Domain, load_adult
    from fairopt.formulations.tv_repair import OptimizedPreprocessing
    raw = load_adult()
    ages, edus = sorted(raw["age"].unique()), sorted(raw["education_num"].unique())
    attrs = [Attribute("sex", ("Female", "Male")), Attribute("age", tuple(int(a) for a in ages)),
             Attribute("education_num", tuple(int(e) for e in edus))]
    table = {"age": {"kind": "ordinal", "up": 1 / age_step, "down": 1 / age_step, "max_up": age_step,
                     "max_down": age_step},
             "education_num": {"kind": "ordinal", "up": 0.5, "down": 0.0, "max_up": edu_up, "max_down": 0},
             "income": {"kind": "matrix", "matrix": {1: {0: 1.0}, 0: {1: 0.0}}}}
    if hours_bins:
        raw = raw.assign(hours=np.minimum(raw["hours_per_week"] // (100 // hours_bins), hours_bins - 1))
        attrs.append(Attribute("hours", tuple(range(hours_bins))))
        table["hours"] = {"kind": "ordinal", "up": 0.1, "down": 0.1, "max_up": hours_bins, "max_down": hours_bins}
    dom = Domain([*attrs, Attribute("income", (0, 1))])
    t0 = time.perf_counter()
    cells, counts = dom.unique_codes(raw[list(dom.names)])
    model = OptimizedPreprocessing(dom, cells, counts, protected="sex", label="income", distortion=table,
                                   clist=[0.99, 1.99], dlist=[0.1, 0.0], discrimination="additive",
                                   epsilon=0.02, utility="xy", conditioning="dxy")
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    cg = model.solve("column_generation")
    cg_s = time.perf_counter() - t0
    out = {"age_step": age_step, "edu_up": edu_up, "hours_bins": hours_bins, "variables": model.n_variables,
           "setup_seconds": setup, "peak_rss_mb": _peak_rss_mb(),
           "column_generation": {"seconds": cg_s, "objective": cg.objective, "status": cg.status,
                                 "log": cg.solution.log, **{k: v for k, v in cg.solution.info.items()}}}
    if with_ipm:
        t0 = time.perf_counter()
        ipm = model.solve("highs", options={"solver": "ipm"})
        out["highs_ipm"] = {"seconds": time.perf_counter() - t0, "objective": ipm.objective, "status": ipm.status}
        out["relative_objective_difference"] = abs(cg.objective - ipm.objective) / abs(ipm.objective)
        out["speedup"] = out["highs_ipm"]["seconds"] / cg_s
    return out


LARGE_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import scale
print(json.dumps(scale.mapping(45, 3, with_ipm=False, hours_bins=5), default=float))
"""


def mapping_10m() -> dict:
    """A 10^7-cell mapping (adds weekly hours in 5 bins) by column generation, in a fresh process
    so that its peak memory is its own."""
    res = subprocess.run([sys.executable, "-c", LARGE_CHILD, str(Path(__file__).resolve().parent)],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _bare_same_start(canon, basic_columns: np.ndarray, basic_rows: np.ndarray):
    """highspy given the program's arrays, the primal simplex and the identity mapping's
    starting basis: the solve ``TVRepair.fit`` runs, with nothing around it."""
    import highspy
    A = canon.A.tocsc()
    A.sort_indices()
    args = (canon.n, canon.m, A.nnz, highspy.MatrixFormat.kColwise, highspy.ObjSense.kMinimize, canon.constant,
            canon.c, canon.xl, canon.xu, canon.rl, canon.ru, A.indptr.astype(np.int32), A.indices.astype(np.int32),
            A.data, np.zeros(canon.n, dtype=np.int32))
    st = highspy.HighsBasisStatus
    cols = np.where(basic_columns, st.kBasic, st.kLower).tolist()
    rows = np.where(basic_rows, st.kBasic, st.kLower).tolist()

    def solve() -> float:
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("simplex_strategy", 4)
        h.passModel(*args)
        basis = highspy.HighsBasis()
        basis.col_status, basis.row_status, basis.valid = cols, rows, True
        h.setBasis(basis)
        h.run()
        h.getSolution()
        return float(h.getInfo().objective_function_value)
    return solve


def adult_calmon(repeats: int, with_aif360: bool) -> dict:
    """``TVRepair.fit`` on Adult (AIF360's 252-cell layout and settings) against two bare solves
    of the same program, timed interleaved in one loop (best of at least 5, wall and CPU time):

    * ``bare_lp``: the program's arrays (``Program.canonical()``, built once outside the timer)
      handed to ``scipy.optimize.linprog(method="highs")``: a cold HiGHS solve of the full LP
      with scipy's defaults (the like-for-like solver-speed reference of issue 26);
    * ``bare_same_start``: the same arrays handed to highspy with the solve fairopt now runs
      (primal simplex from the identity mapping's basis), so ``fit / bare_same_start`` is the
      fit's own overhead.

    The program is the same in all three (no variable or row is dropped) and the three optima
    must agree to 1e-9. AIF360's ``OptTools`` solves the same problem with its cvxpy default.
    """
    import scipy.sparse as sp
    from scipy.optimize import linprog

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tv_repair_vs_aif360 import SETTINGS, _aif360, _records

    from fairopt.data import load_builtin
    from fairopt.formulations.tv_repair import AdultDistortion, OptimizedPreprocessing
    from fairopt.preprocessing import TVRepair
    X, y, features = _records("252")
    domain = load_builtin("adult").domain
    dist = AdultDistortion()
    fitted = {}

    def fit():
        fitted["est"] = TVRepair(distortion=dist, solver="highs", domain=domain, **SETTINGS).fit(
            X, y, sensitive_features="sex")
    # the program, built once from the built-in counts (the cells and counts the fit collapses X to)
    data = load_builtin("adult")
    cells, counts = data.codes()
    model = OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                   features=["age_decade", "education_years"], distortion=dist, **SETTINGS)
    prog = model.build()
    canon = prog.canonical()
    A, rl, ru = canon.A, canon.rl, canon.ru
    eq = rl == ru
    up, low = np.isfinite(ru) & ~eq, np.isfinite(rl) & ~eq
    A_ub, b_ub = sp.vstack([A[up], -A[low]], format="csr"), np.r_[ru[up], -rl[low]]
    A_eq, b_eq, bounds = A[eq], rl[eq], np.c_[canon.xl, canon.xu]
    objectives = {}

    def bare():
        objectives["bare_lp"] = float(linprog(canon.c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                                              method="highs").fun)
    same = _bare_same_start(canon, *model._identity_basis(prog))

    def bare_same():
        objectives["bare_same_start"] = same()
    timed = {"fit": fit, "bare_lp": bare, "bare_same_start": bare_same}
    n_rep = max(repeats, 5)
    wall: dict = {k: [] for k in timed}
    cpu: dict = {k: [] for k in timed}
    for fn in timed.values():        # warm-up: imports, solver start-up
        fn()
    for _ in range(n_rep):           # interleaved: the three see the same machine load
        for k, fn in timed.items():
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[k].append(time.perf_counter() - w0)
            cpu[k].append(time.process_time() - c0)
    est = fitted["est"]
    objectives["fit"] = float(est.objective_)
    spread = max(objectives.values()) - min(objectives.values())
    if spread > 1e-9:
        raise AssertionError(f"the fit and the bare solves disagree by {spread:.3g}: {objectives}")
    best = {k: min(v) for k, v in wall.items()}
    best_cpu = {k: min(v) for k, v in cpu.items()}
    out = {"records": len(X), "variables": int(canon.n), "rows": int(canon.m), "timing_repeats": n_rep,
           "objective": objectives["fit"], "bare_lp_objective": objectives["bare_lp"],
           "bare_same_start_objective": objectives["bare_same_start"], "objective_spread": spread,
           "fit_seconds": best["fit"], "bare_lp_seconds": best["bare_lp"],
           "bare_same_start_seconds": best["bare_same_start"],
           "fit_over_bare": best["fit"] / best["bare_lp"],
           "fit_over_bare_same_start": best["fit"] / best["bare_same_start"],
           "cpu_seconds": best_cpu, "cpu_fit_over_bare": best_cpu["fit"] / best_cpu["bare_lp"],
           "cpu_fit_over_bare_same_start": best_cpu["fit"] / best_cpu["bare_same_start"],
           "fit_solve_seconds": est.result_.solve_seconds, "fit_simplex_iterations": est.result_.solution.iterations,
           "notes": ("bare_lp: scipy linprog(method='highs'), a cold solve of the same arrays; bare_same_start: "
                     "highspy with the fit's own algorithm (primal simplex from the identity mapping's basis); "
                     "timed interleaved, best of the repeats; cpu_seconds: process CPU time of the same runs")}
    if with_aif360:
        runs = []
        for _ in range(max(1, repeats // 2)):
            c0 = time.process_time()
            runs.append({**_aif360(X, y, features), "cpu_seconds": time.process_time() - c0})
        aif = min(runs, key=lambda r: r["fit_seconds"])
        out["aif360_seconds"] = aif["fit_seconds"]
        out["aif360_cpu_seconds"] = min(r["cpu_seconds"] for r in runs)
        out["aif360_objective"] = aif["objective"]
        out["speedup_vs_aif360"] = aif["fit_seconds"] / best["fit"]
        # under load a 20 ms fit waits for a core far more, relatively, than a 3 s one: CPU time too
        out["speedup_vs_aif360_cpu"] = out["aif360_cpu_seconds"] / best_cpu["fit"]
    return out


SECTIONS = ("import", "dask", "chunked_threshold", "quantised_vs_exact", "mapping", "mapping_10m", "adult_calmon")


def run(profile: str = "quick", out: Path = OUT, note: str = "", only: tuple[str, ...] = SECTIONS) -> dict:
    """Run the ``only`` sections at ``profile``'s sizes. A partial run updates those sections of an
    existing JSON of the same profile and records its note per section, so a figure measured on a
    quiet machine can replace one measured under load without re-running the hour-long rest."""
    unknown = set(only) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    sizes = SIZES[profile]
    result: dict = {}
    if set(only) != set(SECTIONS) and out.exists():
        result = json.loads(out.read_text())
        if result.get("profile") != profile:
            raise SystemExit(f"{out} holds the {result.get('profile')!r} profile; run all sections or use --out")
    result.update({"profile": profile, "sizes": dict(sizes), "cpus": os.cpu_count()})
    notes = result.setdefault("section_notes", {})
    if "import" in only:
        result["import"] = import_times(sizes["repeats"])
    if "dask" in only:
        result.update(dask_sections(sizes))
    if "chunked_threshold" in only:
        result["chunked_threshold"] = chunked_threshold(sizes["chunked_scores"], sizes["bins"])
    if "quantised_vs_exact" in only:
        result["quantised_vs_exact"] = quantised_vs_exact(sizes["quantised_scores"], sizes["bins"])
    if "mapping" in only and sizes["mapping"] is not None:
        result["mapping"] = mapping(*sizes["mapping"])
    if "mapping_10m" in only and profile == "full":
        result["mapping_10m"] = mapping_10m()
    if "adult_calmon" in only and (os.environ.get("FAIROPT_DATA_HOME") or profile != "smoke"):
        result["adult_calmon"] = adult_calmon(sizes["repeats"], sizes["aif360"])
    for section in only:
        notes[section] = note
    out.parent.mkdir(parents=True, exist_ok=True)
    # atomic: a partial run rewrites a JSON that holds other sections, so an interrupted write
    # must leave the old file whole
    from fairopt.runs.files import write_bytes_atomic
    write_bytes_atomic(out, json.dumps(result, indent=2, default=float) + "\n")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="reduced sizes (minutes)")
    group.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite's check)")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--note", default="", help="machine conditions, stored in the JSON per section")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help=f"comma-separated sections to (re-)run, updating the JSON: {', '.join(SECTIONS)}")
    args = parser.parse_args()
    res = run("smoke" if args.smoke else "quick" if args.quick else "full", Path(args.out), args.note,
              tuple(s.strip() for s in args.only.split(",") if s.strip()))
    print(json.dumps(res, indent=2, default=float))
