"""
Optimized pre-processing: a randomised mapping with distortion control
======================================================================

Calmon et al.'s optimized pre-processing learns a randomised map from each record ``(d, x, y)``
to a new ``(x_hat, y_hat)``: it keeps the mapped data close to the original (utility), bounds
how far each record may move (distortion) and makes the label rates of the groups close
(discrimination control). Here on the built-in Adult counts (504 cells, shipped with the
package): protected ``sex``, features age decade and years of education, favourable label
``income = 1`` (more than 50K a year).

The figure shows the favourable rate of each group before and after the mapping, and how the
utility loss grows as the discrimination tolerance ``epsilon`` shrinks.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.data import load_builtin
from fairopt.formulations.tv_repair import OptimizedPreprocessing

adult = load_builtin("adult")
cells, counts = adult.codes()
print(f"favourable label: {adult.label} = {adult.favourable_label}")


def mapping(epsilon):
    return OptimizedPreprocessing(
        adult.domain, cells, counts, protected="sex", label="income",
        features=["age_decade", "education_years"], discrimination="ratio", epsilon=epsilon,
        distortion="adult", clist=[0.99, 1.99, 2.99], dlist=[0.1, 0.05, 0.0],
        conditioning="dxy", utility="xy")


result = mapping(0.05).solve("highs")
rates = result.rates[result.rates["income"] == 1].set_index("sex")
print(rates)

epsilons = np.array([0.02, 0.05, 0.1, 0.2, 0.4, 0.8])
objective = [mapping(e).solve("highs").objective for e in epsilons]

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
x = np.arange(len(rates))
ax0.bar(x - 0.2, rates["before"], width=0.4, label="data")
ax0.bar(x + 0.2, rates["after"], width=0.4, label="mapped (epsilon = 0.05)")
ax0.set_xticks(x, rates.index)
ax0.set_xlabel("sex")
ax0.set_ylabel("P(income = 1 | sex)  [probability]")
ax0.set_title("Favourable rate per group")
ax0.legend()

ax1.plot(epsilons, objective, "o-", label="utility loss (TV of the mapped law)")
ax1.set_xscale("log")
ax1.set_xlabel("discrimination tolerance epsilon  [ratio margin]")
ax1.set_ylabel("utility loss  [probability mass]")
ax1.set_title("Less discrimination costs more utility")
ax1.legend()
fig.tight_layout()
plt.show()
