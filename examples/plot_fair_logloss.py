"""
Fair robust log-loss classification
===================================

Rezaei et al.'s fair robust log-loss classifier plays a minimax game against an adversary that
matches the training statistics, with the fairness constraint written into the game; its
predictions satisfy the constraint exactly on the training data. The favourable label is ``1``.
The figure compares the per-group true-positive and false-positive rates of a plain logistic
regression and of ``FairLogLossClassifier`` with equalized odds, on synthetic data.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from fairopt.inprocessing import FairLogLossClassifier

rng = np.random.default_rng(2)
n = 1500
group = rng.integers(0, 2, n)
X = np.column_stack([rng.normal(size=n), group + rng.normal(scale=0.6, size=n)])
y = (X[:, 0] + 0.8 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.5).astype(int)
train, test = np.arange(n) < 1000, np.arange(n) >= 1000

plain = LogisticRegression().fit(X[train], y[train]).predict_proba(X[test])[:, 1]
fair_clf = FairLogLossClassifier(constraint="equalized_odds", C=0.01)
fair_clf.fit(X[train], y[train], sensitive_features=group[train])
fair = fair_clf.predict_proba(X[test], group[test])[:, 1]
print("largest training gap:", float(np.abs(fair_clf.solution_.gaps).max()))


def odds(proba):
    g, t = group[test], y[test]
    return np.array([[proba[(g == k) & (t == 1)].mean(), proba[(g == k) & (t == 0)].mean()]
                     for k in (0, 1)])


fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, (name, proba) in zip(axes, [("logistic regression", plain),
                                    ("FairLogLossClassifier (equalized odds)", fair)]):
    r = odds(proba)
    x = np.arange(2)
    ax.bar(x - 0.2, r[0], width=0.4, label="group 0")
    ax.bar(x + 0.2, r[1], width=0.4, label="group 1")
    ax.set_xticks(x, ["true-positive rate", "false-positive rate"])
    ax.set_xlabel("rate (test data)")
    ax.set_title(name)
    ax.legend()
axes[0].set_ylabel("expected P(prediction = 1 | y, group)  [probability]")
fig.tight_layout()
plt.show()
