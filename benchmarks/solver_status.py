"""Certify every exact back end (as the registry declares them, OR-Tools included) on LPs and QPs
whose truth is known by construction.

Writes ``benchmarks/results/solver_status.json``: per back end, the number of instances of each
kind it took, wrong statuses, wrong optima (objective off by more than 1e-6 relative, or a point
violating a row or bound by more than 1e-6), raw (untyped) exceptions, and the distribution of
the dual error against the planted multipliers where those are unique.

    python benchmarks/solver_status.py                # 1,000 instances per back end
    python benchmarks/solver_status.py --n 50         # smoke run

Instances come from :mod:`fairopt.modeling.planted` (seeded: instance ``i`` is seed ``i``): 60%
optimal (planted KKT pair; degenerate multipliers; singular P with free variables in its null
space), 20% infeasible (planted Farkas certificate), 20% unbounded (planted recession ray), half
of them QPs, half maximisations, scales 1e-3..1e3. An LP-only back end is given 1,000 LPs.
The back ends are those whose declared accuracy is exact (``registry.exact_specs``: 1e-6 or
better, so first-order methods at cvxpy's default tolerances are left out); an optimum counts as
right within the larger of 1e-6 and the solver's declared accuracy.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairopt.modeling import installed_specs  # noqa: E402
from fairopt.modeling.planted import check, random_instance  # noqa: E402
from fairopt.modeling.registry import BACKENDS  # noqa: E402
from fairopt.modeling.registry import exact_specs as declared_exact  # noqa: E402

TOL = 1e-6


def exact_specs() -> list[str]:
    """Installed exact LP and QP solvers, in the registry's order."""
    lp = declared_exact("LP")
    return lp + [s for s in declared_exact("QP") if s not in lp]


def tolerance(spec: str) -> float:
    backend, _, solver = spec.partition(":")
    return max(TOL, BACKENDS[backend].solver_accuracy(solver))


def run_spec(spec: str, n: int) -> dict:
    qp_ok = spec in installed_specs("QP")
    counts = {"instances": 0, "by_truth": {}, "wrong_status": 0, "wrong_optimum": 0,
              "raw_exceptions": 0, "failures": []}
    dual_errors, seconds = [], []
    seed = 0
    while counts["instances"] < n:
        inst = random_instance(seed, quadratic=None if qp_ok else False)
        seed += 1
        res = check(inst, spec)
        if res is None:
            continue
        counts["instances"] += 1
        counts["by_truth"][res.truth.value] = counts["by_truth"].get(res.truth.value, 0) + 1
        seconds.append(res.seconds)
        bad = None
        if res.status.startswith("raw:"):
            counts["raw_exceptions"] += 1
            bad = res.status
        elif not res.status_ok:
            counts["wrong_status"] += 1
            bad = f"status {res.status}, truth {res.truth.value}"
        elif res.objective_error > tolerance(spec) or res.violation > TOL:
            counts["wrong_optimum"] += 1
            bad = f"objective error {res.objective_error:.1e}, violation {res.violation:.1e}"
        if bad:
            counts["failures"].append({"seed": seed - 1, "kind": inst.kind, "what": bad})
        if res.dual_error is not None:
            dual_errors.append(res.dual_error)
    d = np.asarray(dual_errors)
    counts["dual_error"] = {"instances": int(d.size),
                            "median": float(np.median(d)) if d.size else None,
                            "p99": float(np.percentile(d, 99)) if d.size else None,
                            "max": float(d.max()) if d.size else None,
                            "within_1e-6": float(np.mean(d <= 1e-6)) if d.size else None}
    counts["seconds_median"] = float(np.median(seconds))
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="instances per back end")
    parser.add_argument("--specs", default=None, help="comma-separated back ends (default: all exact)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "solver_status.json"))
    args = parser.parse_args(argv)
    specs = args.specs.split(",") if args.specs else exact_specs()
    t0 = time.perf_counter()
    results = {}
    for spec in specs:
        t = time.perf_counter()
        results[spec] = run_spec(spec, args.n)
        r = results[spec]
        print(f"{spec:<20} n={r['instances']} wrong status={r['wrong_status']} wrong optimum="
              f"{r['wrong_optimum']} raw={r['raw_exceptions']} dual max={r['dual_error']['max']} "
              f"({time.perf_counter() - t:.0f} s)", flush=True)
    out = {"benchmark": "solver_status", "instances_per_backend": args.n, "tolerance": TOL,
           "python": platform.python_version(), "machine": platform.machine(),
           "seconds": time.perf_counter() - t0, "backends": results,
           "totals": {k: sum(r[k] for r in results.values())
                      for k in ("instances", "wrong_status", "wrong_optimum", "raw_exceptions")}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["totals"]))
    return 0 if not any(out["totals"][k] for k in ("wrong_status", "wrong_optimum", "raw_exceptions")) else 1


if __name__ == "__main__":
    sys.exit(main())
