"""
Max-entropy fair distribution and resampling
============================================

Celis, Keswani and Vishnoi's max-entropy pre-processing fits the distribution of largest entropy
relative to a prior built from the data, whose expected features match a target, then samples a
new data set from it. Here on the built-in COMPAS records (6,167 rows) with ``sex`` as the
protected attribute. The rates use the label ``two_year_recid = 1`` as the *favourable* one, as
the max-entropy paper and the ``maxent-compas-small`` card do (see
:doc:`/user_guide/favourable_labels`).

The distribution matches the target's per-attribute expectations and takes every dependence
between attributes (for instance between sex and the label) from the prior. So the *target*
sets the groups' shares: ``"data"`` keeps the data's, ``"weighted"`` (the paper's theta^w)
makes them equal. The *prior* sets the label's dependence on sex: ``"data"`` mixes the empirical
distribution with the uniform one (weight ``C``), ``"reweighted"`` (the paper's q_C^w) first
reweights the records so that the label is independent of sex. The figure compares the
statistical and representation rates of the fitted distributions with those of the data.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.data import load_builtin
from fairopt.metrics import representation_rate, statistical_rate
from fairopt.preprocessing import MaxEntResampler

records = load_builtin("compas").expand()
X, y = records.drop(columns="two_year_recid"), records["two_year_recid"]
print(f"{len(records)} records")

labels = ["data as it is"]
sr = [statistical_rate(y, records["sex"], pos_label=1)]
rr = [representation_rate(records["sex"])]
for prior, target in (("data", "data"), ("data", "weighted"), ("reweighted", "weighted")):
    m = MaxEntResampler(C=0.5, prior=prior, target=target, pos_label=1, random_state=0)
    m.fit(X, y, sensitive_features="sex")
    labels.append(f"prior={prior}\ntarget={target}")
    sr.append(m.statistical_rate())
    rr.append(m.representation_rate())
for name, s, r in zip(labels, sr, rr):
    print(f"{name.replace(chr(10), ' '):<36} statistical rate {s:.3f}  representation rate {r:.3f}")

fig, ax = plt.subplots(figsize=(8, 4))
x = np.arange(len(labels))
ax.bar(x - 0.2, sr, width=0.4, label="statistical rate (favourable: two_year_recid = 1)")
ax.bar(x + 0.2, rr, width=0.4, label="representation rate (female / male share)")
ax.set_xticks(x, labels, fontsize=9)
ax.set_xlabel("distribution (max-ent with C = 0.5)")
ax.set_ylabel("min / max ratio across sex groups  [1 = parity]")
ax.set_ylim(0.0, 1.25)
ax.set_title("Fairness of the max-entropy distributions on COMPAS (by sex)")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()
