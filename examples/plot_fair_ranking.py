"""
Exposure-fair ranking: who gets the attention at the top
========================================================

Twelve candidates of two groups are ranked for one query. Ranked by relevance alone, group "a"
(slightly more relevant on average) takes the top positions, where attention is highest
(position weight ``v_j = 1 / log2(1 + j)``), and gets far more *exposure* than group "b".
:func:`fairopt.ranking.fair_ranking` returns the utility-maximising *random* ranking ``P``
(``P[i, j]`` = probability that item ``i`` is shown at position ``j``) whose mean exposure per
group differs by at most ``eps``, together with deterministic rankings to sample from.

Being shown high in the ranking is the favourable outcome. Left: the exposure each group has
accumulated down the ranking (mean over the group's items of ``sum_{j' <= j} P[i, j'] v_j'``),
before and after. Right: each group's mean exposure at the end of the ranking; the fair ranking
brings the two within ``eps`` at a small loss of utility.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.constraints import position_weights
from fairopt.ranking import fair_ranking

rng = np.random.default_rng(3)
n = 12
groups = np.array(["a"] * 6 + ["b"] * 6)
relevance = np.round(np.where(groups == "a", 0.65, 0.45) + rng.uniform(-0.2, 0.2, n), 3)

eps = 0.02
res = fair_ranking(relevance, groups, eps=eps)
v = position_weights(n)

# the unfair ranking: items sorted by relevance (a permutation matrix)
P0 = np.zeros((n, n))
P0[np.argsort(-relevance, kind="stable"), np.arange(n)] = 1.0

print(res.exposure.round(4))
print(f"utility: {res.utility:.4f} fair vs {res.utility_unfair:.4f} by relevance; "
      f"price of fairness d U*/d eps = {res.price_of_fairness:.4f}")
print(f"P is a mixture of {len(res.decomposition.weights)} deterministic rankings")

positions = np.arange(1, n + 1)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [2, 1]})
for g, colour in zip(["a", "b"], ["tab:blue", "tab:orange"]):
    in_g = groups == g
    before = (P0[in_g] * v).mean(axis=0).cumsum()
    after = (res.P[in_g] * v).mean(axis=0).cumsum()
    ax0.plot(positions, before, "o--", color=colour, alpha=0.6, label=f"group {g}, by relevance")
    ax0.plot(positions, after, "s-", color=colour, label=f"group {g}, fair (eps = {eps})")
ax0.set_xticks(positions)
ax0.set_xlabel("position in the ranking")
ax0.set_ylabel("cumulative exposure per item  [position weight]")
ax0.set_title("Exposure accumulated down the ranking")
ax0.legend(fontsize="small", loc="lower right")

x = np.arange(2)
ax1.bar(x - 0.2, res.exposure["exposure_unfair"], 0.4, color="grey", label="by relevance")
ax1.bar(x + 0.2, res.exposure["exposure"], 0.4, color="tab:green", label=f"fair (eps = {eps})")
ax1.set_xticks(x, [f"group {g}" for g in res.exposure.index])
ax1.set_xlabel("group")
ax1.set_ylabel("mean exposure  [position weight]")
ax1.set_title("Exposure per group")
ax1.legend(fontsize="small", loc="upper right")
fig.tight_layout()
plt.show()
