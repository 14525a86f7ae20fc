"""
A sweep and its frontier
========================

``fairopt sweep`` (or :func:`fairopt.runs.sweep.run_sweep`) runs one model card over a grid of
parameters, writing one result per point, and ``fairopt frontier`` (or
:func:`fairopt.runs.frontier.frontier`) collects them into a table. Here the quick-start card
(TV repair of the built-in COMPAS data by race, favourable label ``two_year_recid = 0``) is
swept over the statistical-rate target; the figure is the frontier between fairness and the
distance moved. The same sweep runs on a Dask cluster with ``executor="dask"``.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from fairopt.runs.frontier import frontier
from fairopt.runs.sweep import run_sweep

work = Path(tempfile.mkdtemp())
card = work / "quickstart.toml"
card.write_text("""
[card]
name = "quickstart"
description = "TV repair of the built-in COMPAS domain by race"

[data]
dataset = "builtin:compas"

[formulation]
name = "tv_repair"

[parameters]
protected = "race"
statistical_rate = 1.0
representation = "data"

[solver]
backend = "highs"
""")

grid = {"statistical_rate": [0.80, 0.84, 0.88, 0.92, 0.96, 1.0]}
summary = run_sweep(card, grid, out=work / "sweep")
print([r["status"] for r in summary.records])
points = frontier(work / "sweep").points.sort_values("parameters.statistical_rate")
print(points[["parameters.statistical_rate", "metrics.tv_distance",
              "metrics.statistical_rate_after"]])

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(points["metrics.statistical_rate_after"], points["metrics.tv_distance"], "o-",
        label="one sweep point per target")
before = summary.records[0]["metrics"]["statistical_rate_before"]
ax.axvline(before, color="gray", ls="--", label=f"data as it is ({before:.3f})")
ax.set_xlabel("statistical rate after repair  [min/max ratio of favourable rates]")
ax.set_ylabel("TV distance moved  [probability mass]")
ax.set_title("Fairness-distance frontier of the quick-start card")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()
