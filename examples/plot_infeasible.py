"""
An infeasible target and the tightest feasible setting
======================================================

A fairness target can be impossible together with the rest of a model. fairopt does not return a
silently wrong answer: the solve raises :class:`fairopt.errors.InfeasibleError`, naming the
program. The tightest feasible tolerance is itself an LP: make ``eps`` a variable and minimise
it. Here a shortlist must pick at least 10 of 30 candidates, only qualified candidates may be
picked, and group ``b`` has few qualified candidates, so exact selection-rate parity cannot hold.
Being picked is the favourable outcome.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.constraints import selection_rate_parity
from fairopt.errors import InfeasibleError
from fairopt.modeling import Program

n = 30
group = np.array(["a"] * 15 + ["b"] * 15)
qualified = np.r_[np.ones(15), np.r_[np.ones(2), np.zeros(13)]]   # 15 of a, 2 of b
score = np.linspace(1.0, 2.0, n)


def shortlist(eps):
    prog = Program("shortlist")
    prog.add_variables("x", shape=n, lb=0, ub=qualified)
    prog.add_constraints("size", {"x": np.ones((1, n))}, lb=10)
    prog.set_objective(linear={"x": score}, sense="maximize")
    selection_rate_parity(group, eps=eps).add_to(prog, "x")
    return prog


try:
    shortlist(0.0).solve("highs", require_optimal=True)
except InfeasibleError as err:
    print("eps = 0:", type(err).__name__, "-", str(err).splitlines()[0])

# tightest eps: variables x and eps, rows rate_a - rate_b <= eps and rate_b - rate_a <= eps
tight = Program("tightest")
tight.add_variables("x", shape=n, lb=0, ub=qualified)
tight.add_variables("eps", shape=1, lb=0)
tight.add_constraints("size", {"x": np.ones((1, n))}, lb=10)
diff = np.where(group == "a", 1 / 15, -1 / 15)[None, :]
tight.add_constraints("a_over_b", {"x": diff, "eps": -np.ones((1, 1))}, ub=0)
tight.add_constraints("b_over_a", {"x": -diff, "eps": -np.ones((1, 1))}, ub=0)
tight.set_objective(linear={"eps": [1.0]})
eps_min = float(tight.solve("highs").primal["eps"][0])
print(f"tightest feasible eps: {eps_min:.4f}")

grid = np.linspace(0.0, 1.0, 41)
values = []
for eps in grid:
    try:
        values.append(shortlist(eps).solve("highs", require_optimal=True).objective)
    except InfeasibleError:
        values.append(np.nan)

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(grid, values, "o-", ms=3, label="optimal total score")
ax.axvspan(0, eps_min, color="red", alpha=0.15, label="infeasible (InfeasibleError)")
ax.axvline(eps_min, color="red", ls="--", label=f"tightest feasible eps = {eps_min:.3f}")
ax.set_xlabel("allowed selection-rate difference eps  [probability]")
ax.set_ylabel("total score of the shortlist  [score units]")
ax.set_title("Where the fairness target stops being feasible")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
