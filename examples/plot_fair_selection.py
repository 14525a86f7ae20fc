"""
Fair selection: parity constraints on your own decision variables
=================================================================

A lender approves applicants to maximise expected profit within a budget. ``fairopt.constraints``
adds the fairness rows: here selection-rate parity between two groups, as an LP (approval
probabilities in ``[0, 1]``) and as a MIP (0/1 approvals). Being selected is the favourable
outcome. The figure shows the profit as the allowed difference of approval rates shrinks.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.constraints import selection_rate_parity
from fairopt.modeling import Program

rng = np.random.default_rng(0)
n = 60
group = np.where(rng.random(n) < 0.5, "a", "b")
profit = rng.gamma(2.0, 1.0, n) + np.where(group == "a", 1.0, 0.0)   # group a looks more profitable
cost = rng.uniform(0.5, 1.5, n)


def plan(eps, binary):
    prog = Program("approvals")
    prog.add_variables("x", shape=n, lb=0, ub=1, binary=binary)
    prog.add_constraints("budget", {"x": cost[None, :]}, ub=20.0)
    prog.set_objective(linear={"x": profit}, sense="maximize")
    parity = selection_rate_parity(group, eps=eps)
    parity.add_to(prog, "x")
    return prog.solve("highs")


epsilons = np.array([0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0])
lp = [plan(e, False).objective for e in epsilons]
mip = [plan(e, True).objective for e in epsilons]
print("profit without the parity rows:", round(lp[-1], 3))

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.plot(epsilons, lp, "o-", label="LP (approval probabilities)")
ax.plot(epsilons, mip, "s--", label="MIP (0/1 approvals)")
ax.set_xlabel("allowed approval-rate difference eps  [probability]")
ax.set_ylabel("expected profit  [profit units]")
ax.set_title("Profit under selection-rate parity")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
