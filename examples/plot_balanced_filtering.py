"""
Balanced filtering with a non-disclosive proxy
==============================================

Deng, Diana, Kearns and Roth filter a data set so that the protected groups are balanced among
the kept points, without using the group of any individual point: a proxy (a tree over the
features) assigns each point an acceptance probability, and the proxy's disclosivity ``alpha``
bounds how much it can reveal about the group. Synthetic data, three groups of unequal sizes,
whose features shift with the group.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from fairopt.filtering import BalancedFilter

rng = np.random.default_rng(0)
n = 3000
group = rng.choice(["a", "b", "c"], size=n, p=[0.6, 0.3, 0.1])
shift = pd.Series(group).map({"a": 0.0, "b": 0.8, "c": 1.6}).to_numpy()
X = pd.DataFrame({"x1": rng.normal(shift, 1.0), "x2": rng.normal(-shift, 1.0),
                  "x3": rng.normal(size=n)})

alphas = [0.05, 0.1, 0.2, 0.4]
imbalance, acceptance, shares = [], [], {}
for alpha in alphas:
    f = BalancedFilter(alpha=alpha, random_state=0).fit(X, group)
    imbalance.append(f.imbalance_)
    acceptance.append(f.acceptance_rate_)
    shares[alpha] = f
print("imbalance before filtering:", round(shares[alphas[0]].imbalance_before_, 3))

f = shares[0.2]
filtered = (f.cell_mass_ * f.sampling_probabilities_) @ f.conditional_matrix_
filtered = filtered / filtered.sum()
before = f.cell_mass_ @ f.conditional_matrix_

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
x = np.arange(len(f.groups_))
ax0.bar(x - 0.2, before, width=0.4, label="all points")
ax0.bar(x + 0.2, filtered, width=0.4, label="kept points (alpha = 0.2)")
ax0.axhline(1 / len(x), color="k", ls=":", label="uniform")
ax0.set_xticks(x, f.groups_)
ax0.set_xlabel("group")
ax0.set_ylabel("share of the points  [fraction]")
ax0.set_title("Group shares before and after filtering")
ax0.legend()
ax1.plot(alphas, imbalance, "o-", label="imbalance of the kept points")
ax1.axhline(shares[alphas[0]].imbalance_before_, color="gray", ls="--", label="imbalance before")
ax1.set_xlabel("disclosivity bound alpha  [probability]")
ax1.set_ylabel("L2 distance to the uniform group distribution")
ax1.set_title("More disclosive proxies balance better")
ax1.legend()
fig.tight_layout()
plt.show()
