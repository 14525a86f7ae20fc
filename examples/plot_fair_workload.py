"""
Fair workload plans: utilitarian, α-fair, max-min, leximin and Gini-bounded
===========================================================================

Tasks that need one skill for a few hours go to workers who have the skill, within their
capacities; senior workers cost more per hour. The synthetic workload of the
``workload-balance`` model card is used at a smaller size (24 workers, 400 tasks, 10 skills),
and the assignment is relaxed to fractions of tasks so that every plan, including the α-fair one
(a conic program), solves on the same feasible set. A worker's *spare share* is the share of
her capacity left free, ``1 - hours / capacity``.

- utilitarian: the cheapest plan;
- α-fair (α = 2): the spare shares' α-fair welfare (:func:`fairopt.constraints.alpha_fairness`
  on the spare hours);
- max-min: the smallest spare share as large as possible;
- leximin: the sorted spare shares lexicographically largest
  (:func:`fairopt.constraints.solve_leximin`);
- Gini ≤ 0.04: the cheapest plan whose Gini coefficient of the utilisations is at most 0.04
  (:func:`fairopt.constraints.balance`).
"""

import cvxpy as cp
import matplotlib.pyplot as plt
import numpy as np

from fairopt.constraints import alpha_fairness, balance, measure_value, solve_leximin
from fairopt.data.workload import make_workload

w = make_workload(24, 400, n_skills=10, n_teams=3, load=0.9, seed=2)
H = w.hours_matrix.toarray()                       # hours on each worker per task of each pair
C = w.cover_matrix.toarray()
cap = w.workers["capacity"].to_numpy(float)
worker = np.arange(cap.size)
cost = w.workers["cost"].to_numpy(float) @ H
counts = w.types["count"].to_numpy(float)


def feasible():
    """The relaxed assignment ``y`` and the spare hours ``s`` of each worker."""
    y, s = cp.Variable(H.shape[1]), cp.Variable(H.shape[0])
    return y, s, [y >= 0, C @ y == counts, H @ y + s == cap, s >= 0]


def spare_share(s_value):
    return s_value / cap


plans = {}
y, s, cons = feasible()
cp.Problem(cp.Minimize(cost @ y), cons).solve(solver="HIGHS")
plans["utilitarian"] = (spare_share(s.value), float(cost @ y.value))

for name, alpha in (("α-fair (α = 2)", 2.0), ("max-min", np.inf)):
    y, s, cons = feasible()
    objective, rows = alpha_fairness(worker, 1.0 / cap, alpha, normalize="sum").to_cvxpy(s)
    cp.Problem(objective, [*cons, *rows]).solve(solver="CLARABEL")
    plans[name] = (spare_share(s.value), float(cost @ y.value))

y, s, cons = feasible()
problem = cp.Problem(cp.Minimize(0), cons)
lex = solve_leximin(problem, (s, worker, 1.0 / cap), solver="HIGHS")
plans["leximin"] = (spare_share(s.value), float(cost @ y.value))

y, s, cons = feasible()
utilisation = cp.multiply(1.0 / cap, H @ y)
cp.Problem(cp.Minimize(cost @ y), [*cons, *balance(utilisation, "gini", max_value=0.04).to_cvxpy()]).solve(
    solver="HIGHS")
plans["Gini ≤ 0.04"] = (spare_share(s.value), float(cost @ y.value))

fig, ax = plt.subplots(figsize=(7, 4))
for k, (name, (spare, total)) in enumerate(plans.items()):
    gini = measure_value(1 - spare, "gini")
    ax.plot(np.arange(1, spare.size + 1) + 0.06 * (k - 2), np.sort(spare), marker="o",
            label=f"{name}: cost {total:,.0f}, Gini of utilisation {gini:.3f}")
ax.set_xlabel("workers, sorted by spare share")
ax.set_ylabel("spare share of capacity")
ax.set_title("Five plans for the same tasks")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# The leximin plan's sorted spare shares match the levels solve_leximin reports; its smallest
# share equals the max-min plan's, and no plan raises the smallest share above it.
print(np.round(lex.levels, 4), np.round(np.sort(plans["max-min"][0]), 4))
