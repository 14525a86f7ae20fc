"""
Post-processing a regressor to statistical parity
=================================================

``RegressionDebiaser`` moves each group's distribution of predictions to output values on a grid
at the least expected squared loss against the original predictions, so that every group's output
CDF lies within ``eps`` of the pooled output CDF (statistical parity of Agarwal, Dudík and Wu 2019:
``|P(f >= z | A = a) - P(f >= z)| <= eps`` for every threshold ``z``). At ``eps = 0`` the outputs
follow the Wasserstein-2 barycenter of the groups' prediction distributions.

Left: the loss paid against ``eps``. Right: the groups' CDFs before and after at ``eps = 0``.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.postprocessing import RegressionDebiaser

rng = np.random.default_rng(0)
n = 3000
group = rng.integers(0, 3, n)
pred = rng.normal(size=n) * (1 + 0.3 * group) + 0.6 * group   # a regressor's predictions

epsilons = [0.0, 0.02, 0.05, 0.1, 0.2]
losses = [RegressionDebiaser(eps=e, grid=120).fit(pred, sensitive_features=group).train_loss_ for e in epsilons]
fair = RegressionDebiaser(eps=0.0, grid=120, random_state=0).fit(pred, sensitive_features=group)

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
ax0.plot(epsilons, losses, "o-")
ax0.set_xlabel("eps (largest CDF gap allowed)")
ax0.set_ylabel("expected squared change of the predictions")
ax0.set_title("Price of parity")
for a in range(3):
    s = np.sort(pred[group == a])
    ax1.step(s, np.arange(1, s.size + 1) / s.size, where="post", alpha=0.6, label=f"group {a} before")
    ax1.step(fair.grid_, fair.output_cdf_[a], where="post", linestyle="--", label=f"group {a} after")
ax1.set_xlabel("prediction")
ax1.set_ylabel("CDF")
ax1.set_title(f"CDF gap {fair.input_gap_:.2f} before, {fair.train_gap_:.2g} after")
ax1.legend(fontsize=7)
fig.tight_layout()
plt.show()
