"""
What fairopt does: repair a data set to statistical parity
==========================================================

The quick start (``models/quickstart.toml``) as a script. The built-in COMPAS counts table (144
cells, 6,167 records, shipped with the package) has a favourable outcome ``two_year_recid = 0``
(no re-arrest within two years). Its favourable rate differs between the race groups; the
total-variation repair moves as little probability mass as possible so that the ratio of the
two rates (the *statistical rate*) reaches a target ``tau``.

The dual of the statistical-rate row is the marginal cost of the target: multiplied by the
repaired favourable rate of the reference group it gives ``d TV*/d tau``, which the right panel
compares with the curve itself.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.data import load_builtin
from fairopt.formulations.tv_repair import TVRepair

compas = load_builtin("compas")
cells, counts = compas.codes()
print(f"{compas.name}: {int(counts.sum())} records in {len(cells)} observed cells; "
      f"favourable label {compas.label} = {compas.favourable_label}")


def repair(tau):
    model = TVRepair(compas.domain, cells, counts, protected="race", label="two_year_recid",
                     favourable_label=0, statistical_rate=tau)
    return model.solve("highs")


def favourable_rates(p):
    """Favourable rate of each race group under the cell distribution ``p``."""
    race = compas.domain.names.index("race")
    label = compas.domain.names.index("two_year_recid")
    levels = compas.domain.levels["race"]
    fav = cells[:, label] == 0
    return {lvl: float(p[(cells[:, race] == k) & fav].sum() / p[cells[:, race] == k].sum())
            for k, lvl in enumerate(levels)}


exact = repair(1.0)
before, after = favourable_rates(exact.q), favourable_rates(exact.p)
print("statistical rate before and after:", exact.statistical_rate)
print("dual of the statistical-rate row:", np.round(exact.solution.dual["statistical_rate"], 4))
print("price of fairness d TV*/d tau:", round(exact.price_of_fairness, 4))

taus = np.linspace(0.80, 1.0, 11)
tv = np.array([repair(t).tv for t in taus])

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
groups = list(before)
x = np.arange(len(groups))
ax0.bar(x - 0.2, [before[g] for g in groups], width=0.4, label="data")
ax0.bar(x + 0.2, [after[g] for g in groups], width=0.4, label="repaired (tau = 1)")
ax0.set_xticks(x, groups)
ax0.set_xlabel("race group")
ax0.set_ylabel("P(two_year_recid = 0 | race)  [probability]")
ax0.set_ylim(0, 0.85)
ax0.set_title("Favourable rate per group")
ax0.legend(loc="upper left", ncol=2)

ax1.plot(taus, tv, "o-", label="TV distance moved, TV*(tau)")
slope = exact.price_of_fairness
ax1.plot(taus[-4:], exact.tv + slope * (taus[-4:] - 1.0), "--",
         label=f"slope from the dual: {slope:.3f} per unit tau")
ax1.set_xlabel("statistical-rate target tau  [ratio of favourable rates]")
ax1.set_ylabel("total-variation distance  [probability mass]")
ax1.set_title("Cost of the fairness target")
ax1.legend(loc="upper left")
fig.tight_layout()
plt.show()
