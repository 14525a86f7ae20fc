"""
Swapping solvers on one model and timing them
=============================================

Every fairopt program solves on any back end that accepts its problem class. The same TV repair
of the built-in COMPAS data (exact statistical parity by race, favourable label
``two_year_recid = 0``, the full per-cell LP) is solved by each installed LP back end; the
objectives agree and the figure compares the wall-clock times. Times are from the machine that
built this page.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from fairopt.data import load_builtin
from fairopt.formulations.tv_repair import TVRepair
from fairopt.modeling import available_backends

compas = load_builtin("compas")
cells, counts = compas.codes()
model = TVRepair(compas.domain, cells, counts, protected="race", label="two_year_recid",
                 favourable_label=0, statistical_rate=1.0, form="full")

candidates = ["highs", "scipy", "osqp", "cvxpy:CLARABEL", "pyomo:appsi_highs"]
installed = {b["backend"] for b in available_backends() if b["installed"]}
times, tv = {}, {}
for spec in candidates:
    if spec.split(":")[0] not in installed:
        continue
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        result = model.solve(spec)
        best = min(best, time.perf_counter() - start)
    times[spec], tv[spec] = best, result.tv
    print(f"{spec:<20} TV = {result.tv:.6f}   {best * 1e3:7.1f} ms")
print("largest disagreement of the optimum:", max(tv.values()) - min(tv.values()))

fig, ax = plt.subplots(figsize=(6.5, 4))
names = list(times)
ms = [times[s] * 1e3 for s in names]
bars = ax.barh(names, ms, color="C0", label="best of 3 solves")
ax.bar_label(bars, labels=[f"{v:.0f} ms" for v in ms], padding=3)
ax.set_xlim(0, max(ms) * 1.2)
ax.set_xlabel("build + solve time  [milliseconds]")
ax.set_ylabel("back end")
ax.set_title(f"One TV-repair LP, {len(names)} back ends, same optimum {tv[names[0]]:.5f}")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
