"""
Fair classification by reductions: selection rates under demographic parity
===========================================================================

``FairClassifier`` runs the exponentiated-gradient reduction of Agarwal et al. (2018) with a
cost-sensitive oracle (logistic regression by default) and returns a randomised classifier.
The favourable prediction is ``1``. On synthetic data where one feature is correlated with the
group, the unconstrained classifier selects the groups at different rates; tightening ``eps``
closes the gap at a small cost in accuracy.
"""

import matplotlib.pyplot as plt
import numpy as np

from fairopt.inprocessing import FairClassifier

rng = np.random.default_rng(1)
n = 1500
group = rng.integers(0, 2, n)
X = np.column_stack([rng.normal(size=n), group + rng.normal(scale=0.7, size=n)])
y = (X[:, 0] + 0.9 * X[:, 1] + rng.normal(scale=0.8, size=n) > 0.6).astype(int)
train, test = np.arange(n) < 1000, np.arange(n) >= 1000

epsilons = [0.3, 0.1, 0.05, 0.01]
rates, accuracy = [], []
for eps in epsilons:
    clf = FairClassifier(constraint="demographic_parity", eps=eps, max_iter=30, random_state=0)
    clf.fit(X[train], y[train], sensitive_features=group[train])
    proba = clf.predict_proba(X[test])[:, 1]          # the randomised classifier in expectation
    rates.append([proba[group[test] == g].mean() for g in (0, 1)])
    accuracy.append(np.mean(np.where(y[test] == 1, proba, 1 - proba)))
rates = np.array(rates)

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
x = np.arange(len(epsilons))
ax0.bar(x - 0.2, rates[:, 0], width=0.4, label="group 0")
ax0.bar(x + 0.2, rates[:, 1], width=0.4, label="group 1")
ax0.set_xticks(x, [f"eps={e}" for e in epsilons])
ax0.set_xlabel("demographic-parity tolerance")
ax0.set_ylabel("P(prediction = 1 | group)  [probability]")
ax0.set_title("Selection rate per group (test)")
ax0.legend()
ax1.plot(np.abs(rates[:, 0] - rates[:, 1]), accuracy, "o-", label="FairClassifier")
ax1.set_xlabel("selection-rate difference (test)  [probability]")
ax1.set_ylabel("expected accuracy (test)  [fraction]")
ax1.set_title("Accuracy against disparity")
ax1.legend()
fig.tight_layout()
plt.show()
