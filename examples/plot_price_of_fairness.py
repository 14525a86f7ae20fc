"""
Reading the price of fairness from the duals
============================================

The dual of a fairness row is the change of the optimal objective per unit change of its bound.
``FairnessBlock.price_of_fairness`` turns the duals into the derivative of the optimum with
respect to the tolerance ``eps``. The figure checks it against the optimum itself: the slopes
read from the duals at a few ``eps`` are the tangents of the profit curve.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.constraints import selection_rate_parity
from fairopt.modeling import Program

rng = np.random.default_rng(3)
n = 40
group = np.where(rng.random(n) < 0.5, "a", "b")
profit = rng.gamma(2.0, 1.0, n) + np.where(group == "a", 1.2, 0.0)


def solve(eps):
    prog = Program("shortlist")
    prog.add_variables("x", shape=n, lb=0, ub=1)
    prog.add_constraints("size", {"x": np.ones((1, n))}, ub=12)
    prog.set_objective(linear={"x": profit}, sense="maximize")
    parity = selection_rate_parity(group, eps=eps)
    parity.add_to(prog, "x")
    sol = prog.solve("highs")
    return sol.objective, parity.price_of_fairness(sol).parameters["eps"]


grid = np.linspace(0.0, 0.4, 41)
curve = np.array([solve(e)[0] for e in grid])

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(grid, curve, label="optimal profit f*(eps)")
for e in (0.05, 0.15, 0.25):
    value, slope = solve(e)
    seg = np.linspace(e - 0.04, e + 0.04, 2)
    ax.plot(seg, value + slope * (seg - e), "r-", lw=2)
    ax.annotate(f"d f*/d eps = {slope:.2f}", (e, value), textcoords="offset points",
                xytext=(5, -15), fontsize=8)
    print(f"eps={e}: dual slope {slope:.4f}")
ax.plot([], [], "r-", lw=2, label="slope read from the duals")
ax.set_xlabel("allowed selection-rate difference eps  [probability]")
ax.set_ylabel("optimal profit  [profit units]")
ax.set_title("Price of fairness: duals are the tangents")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
