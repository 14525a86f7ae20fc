"""
Fair classification by reductions: selection rates under demographic parity
===========================================================================

``FairClassifier`` runs the exponentiated-gradient reduction of Agarwal et al. (2018) with a
cost-sensitive oracle (logistic regression by default) and returns a randomised classifier.
The favourable prediction is ``1``. Demographic parity with tolerance ``eps`` bounds how far
each group's selection rate may be from the overall rate, on the training data. On synthetic
data where one feature is correlated with the group, tightening ``eps`` closes the gap between
the groups at a small cost in accuracy; the test data follow the training data up to sampling
noise.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.inprocessing import FairClassifier

rng = np.random.default_rng(1)
n = 3000
group = rng.integers(0, 2, n)
X = np.column_stack([rng.normal(size=n), group + rng.normal(scale=0.7, size=n)])
y = (X[:, 0] + 0.9 * X[:, 1] + rng.normal(scale=0.8, size=n) > 0.6).astype(int)
train = np.arange(n) < 2000
splits = {"train": train, "test": ~train}

epsilons = [0.3, 0.1, 0.05, 0.02, 0.01]
rates = {s: [] for s in splits}
accuracy = {s: [] for s in splits}
for eps in epsilons:
    clf = FairClassifier(constraint="demographic_parity", eps=eps, max_iter=50, random_state=0)
    clf.fit(X[train], y[train], sensitive_features=group[train])
    for split, rows in splits.items():
        proba = clf.predict_proba(X[rows])[:, 1]      # the randomised classifier in expectation
        rates[split].append([proba[group[rows] == g].mean() for g in (0, 1)])
        accuracy[split].append(np.mean(np.where(y[rows] == 1, proba, 1 - proba)))
    print(f"eps={eps:<5} status={clf.status_} train rates {np.round(rates['train'][-1], 3)}")

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
r = np.array(rates["train"])
x = np.arange(len(epsilons))
ax0.bar(x - 0.2, r[:, 0], width=0.4, label="group 0")
ax0.bar(x + 0.2, r[:, 1], width=0.4, label="group 1")
ax0.set_xticks(x, [f"eps={e}" for e in epsilons])
ax0.set_xlabel("demographic-parity tolerance")
ax0.set_ylabel("P(prediction = 1 | group)  [probability]")
ax0.set_title("Selection rate per group (training data)")
ax0.legend()
for split, style in (("train", "o-"), ("test", "s--")):
    rr = np.array(rates[split])
    ax1.plot(np.abs(rr[:, 0] - rr[:, 1]), accuracy[split], style, label=f"{split} data")
ax1.set_xlabel("selection-rate difference between the groups  [probability]")
ax1.set_ylabel("expected accuracy  [fraction]")
ax1.set_title("Accuracy against disparity, one point per eps")
ax1.legend()
fig.tight_layout()
plt.show()
