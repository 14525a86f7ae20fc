"""
Choose a tolerance from a certified frontier
============================================

Post-processing a classifier to equalized odds on the built-in Adult data (sex as the protected
attribute). :func:`fairopt.frontier` returns the **whole** trade-off between the training error
and the tolerance ``eps`` (the largest gap between the groups' true- and false-positive rates)
exactly: the optimal error is piecewise linear in ``eps``, and the frontier lists its
breakpoints. With ``confidence=0.95`` each point also carries the gap that holds **on the
population** with probability 0.95 (a DKW bound, uniform over threshold rules).

The example picks the most accurate tolerance whose certified population gap stays below a
target of 0.1, refits with ``confidence=0.95`` at that tolerance, and checks the gap on rows
that neither the classifier nor the thresholds saw.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

import fairopt
from fairopt.data import load_builtin
from fairopt.postprocessing import ThresholdDebiaser

adult = load_builtin("adult")
frame = adult.expand(shuffle=True, random_state=0)
X = frame[["age_decade", "education_years"]].to_numpy(float)
y = frame["income"].to_numpy().astype(int)
sex = frame["sex"].to_numpy()
train, post, test = np.split(np.arange(len(y)), [len(y) // 3, 2 * len(y) // 3])
clf = LogisticRegression().fit(X[train], y[train])

debiaser = ThresholdDebiaser(clf, prefit=True, constraint="equalized_odds")
front = fairopt.frontier(debiaser, X[post], y[post], sensitive_features=sex[post], confidence=0.95)
print(f"{front.method} frontier: {front.breakpoints.size} breakpoints from {front.solves} LP solves")

target = 0.1
ok = front.certified_eps <= target
eps = float(front.eps[ok].max())          # the loosest (most accurate) tolerance still certified
print(f"eps = {eps:.4f}: training error {np.interp(eps, front.eps, front.value):.4f}, "
      f"certified population gap {np.interp(eps, front.eps, front.certified_eps):.4f}")

fitted = ThresholdDebiaser(clf, prefit=True, constraint="equalized_odds", eps=target, confidence=0.95)
fitted.fit(X[post], y[post], sensitive_features=sex[post])
p = fitted.predict_proba(X[test], sensitive_features=sex[test])[:, 1]
gap = max(np.ptp([p[(sex[test] == s) & (y[test] == c)].mean() for s in np.unique(sex)]) for c in (0, 1))
print(f"refit with eps={target}, confidence=0.95: trained to {fitted.eps_:.4f}, certified "
      f"{fitted.certified_eps_:.4f}; gap on unseen rows {gap:.4f}")

fig, ax = plt.subplots(figsize=(7, 4.2))
front.plot(ax, label="training error (exact)")
ax.set_xlabel("tolerance eps (largest gap between the groups' TPR and FPR)")
ax.set_ylabel("training error")
ax.legend(fontsize=8)
ax.axvline(target, color="grey", lw=0.8, ls=":")
ax.annotate("target population gap", (target, front.value.max()), fontsize=8, ha="left", va="top")
ax.set_title("Equalized-odds frontier on Adult, with the gap certified at 95 %")
fig.tight_layout()
plt.show()
