"""
A fairness block in your own pyomo model and in a cvxpy problem
===============================================================

``fairopt.constraints`` builds the fairness rows once and attaches them to a model you already
have: a pyomo ``Block`` on your indexed ``Var`` (``to_pyomo``) or a list of cvxpy constraints on
your ``Variable`` (``to_cvxpy``). Here a small shortlist (pick at most 8 of 24 candidates for the
largest total score, being picked is favourable) gets selection-rate parity between two groups
in both modelling languages; both give the same plan and the same dual.
"""

import cvxpy as cp
import matplotlib.pyplot as plt
import numpy as np
import pyomo.environ as pyo

from fairopt.constraints import selection_rate_parity

rng = np.random.default_rng(4)
n = 24
group = np.repeat(["a", "b"], n // 2)
score = rng.uniform(0, 1, n) + np.where(group == "a", 0.5, 0.0)
parity = selection_rate_parity(group, eps=0.1)

# --- your pyomo model ---
m = pyo.ConcreteModel()
m.x = pyo.Var(range(n), bounds=(0, 1))
m.size = pyo.Constraint(expr=sum(m.x[i] for i in range(n)) <= 8)
m.score = pyo.Objective(expr=sum(score[i] * m.x[i] for i in range(n)), sense=pyo.maximize)
m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
block = parity.to_pyomo(m.x)
pyo.SolverFactory("appsi_highs").solve(m)
x_pyomo = np.array([pyo.value(m.x[i]) for i in range(n)])

# --- your cvxpy problem ---
x = cp.Variable(n)
rows = parity.to_cvxpy(x)
problem = cp.Problem(cp.Maximize(score @ x), [x >= 0, x <= 1, cp.sum(x) <= 8] + rows)
problem.solve(solver="HIGHS")
x_cvxpy = x.value

# the unconstrained plan, for comparison
plain = np.zeros(n)
plain[np.argsort(-score)[:8]] = 1.0

print("objective pyomo", round(pyo.value(m.score), 6), "cvxpy", round(problem.value, 6))
print("d f*/d eps pyomo", round(parity.price_of_fairness(block).parameters["eps"], 6),
      "cvxpy", round(parity.price_of_fairness(rows, problem=problem).parameters["eps"], 6))

fig, ax = plt.subplots(figsize=(6.5, 4))
labels = ["no fairness rows", "pyomo + block", "cvxpy + rows"]
rates = np.array([[plan[group == g].mean() for g in ("a", "b")]
                  for plan in (plain, x_pyomo, x_cvxpy)])
xs = np.arange(len(labels))
ax.bar(xs - 0.2, rates[:, 0], width=0.4, label="group a")
ax.bar(xs + 0.2, rates[:, 1], width=0.4, label="group b")
ax.set_xticks(xs, labels)
ax.set_xlabel("model")
ax.set_ylabel("selection rate  [fraction of the group]")
ax.set_title("Selection-rate parity (eps = 0.1) added to a user's model")
ax.legend()
fig.tight_layout()
plt.show()
