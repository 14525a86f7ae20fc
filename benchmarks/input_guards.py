"""What the size guards of the product-domain estimators measure (issue 31).

* ``MaxEntResampler`` on the COMPAS large domain with every charge description (389 levels,
  499 levels in total, ~7.9e10 cells): the fit time, far inside ``max_levels``;
* ``TVRepair`` on synthetic records with two k-level features: mapping cells (observed (d, x, y)
  records x candidate (x̂, ŷ) cells), fit time and traced peak Python memory per cell, the figure
  behind ``fairopt._data_checks.BYTES_PER_CELL`` (tracemalloc sees numpy and scipy buffers, not
  HiGHS's own C++ memory, so it is a lower bound).

Run: ``FAIROPT_DATA_HOME=../shared/datasets python benchmarks/input_guards.py [--note TEXT]``
(writes ``benchmarks/results/input_guards.json``).
"""
from __future__ import annotations

import argparse
import json
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd


def maxent_compas_all_charges() -> dict:
    from fairopt.data import Attribute, Domain, load_compas
    from fairopt.formulations.maxent.datasets import compas_large_domain
    from fairopt.preprocessing import MaxEntResampler
    raw = load_compas()
    charges = tuple(sorted(raw["c_charge_desc"].unique()))
    dom = Domain([a if a.name != "c_charge_desc" else Attribute("c_charge_desc", charges)
                  for a in compas_large_domain(raw).attributes])
    frame = dom.decode(dom.encode(raw, discretize=True))
    X, y = frame.drop(columns="two_year_recid"), frame["two_year_recid"]
    t0 = time.perf_counter()
    m = MaxEntResampler(target="balanced", domain=dom).fit(X, y, "sex")
    return {"charge_levels": len(charges), "total_levels": int(sum(dom.cardinalities)), "domain_size": float(dom.size),
            "fit_seconds": time.perf_counter() - t0, "solve_seconds": m.solve_seconds_,
            "max_violation": m.max_violation_, "representation_rate": m.representation_rate()}


def tv_cells(k: int, n: int = 20000, seed: int = 0) -> dict:
    from fairopt.preprocessing import TVRepair
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"s": rng.integers(0, 2, n), "a": rng.integers(0, k, n), "b": rng.integers(0, k, n)})
    y = rng.integers(0, 2, n)
    observed = len(np.unique(np.column_stack([X["s"], X["a"], X["b"], y]), axis=0))
    cells = observed * k * k * 2
    tracemalloc.start()
    t0 = time.perf_counter()
    TVRepair(epsilon=0.1, max_cells=None).fit(X, y, "s")
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"levels_per_feature": k, "cells": cells, "fit_seconds": seconds, "peak_traced_bytes": peak,
            "bytes_per_cell": peak / cells}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)
    payload = {"note": args.note, "maxent_compas_all_charges": maxent_compas_all_charges(),
               "tv_repair_cells": [tv_cells(k) for k in (10, 20)]}
    out = Path(args.out) / "input_guards.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1))
    print(json.dumps(payload, indent=1))
    return payload


if __name__ == "__main__":
    main()
