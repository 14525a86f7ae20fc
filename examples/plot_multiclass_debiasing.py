"""
Post-processing a multiclass classifier: fair class rates per group
===================================================================

``MulticlassDebiaser`` takes any classifier's class probabilities and fits the least costly
randomized, group-dependent rule whose class rates per group stay within ``eps`` of the pooled
rates. The data are synthetic: three classes whose probabilities depend on ``group``. Left:
the expected error against ``eps`` for the randomized rule and its deterministic version. Right:
each group's predicted class rates before (the classifier's argmax) and after (``eps = 0.02``).
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from fairopt.postprocessing import MulticlassDebiaser

rng = np.random.default_rng(0)
n = 12000
X = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "group": rng.integers(0, 2, n)})
logits = np.column_stack([X.x1 + 0.8 * X.group, X.x2, -X.x1 - 0.8 * X.group])
y = np.array(["a", "b", "c"])[np.argmax(logits + rng.gumbel(size=(n, 3)), axis=1)]
feats = ["x1", "x2", "group"]
clf = LogisticRegression().fit(X[feats][:4000], y[:4000])
post, test = slice(4000, 8000), slice(8000, None)

eps_grid = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2]
costs = {"randomized": [], "deterministic": []}
for eps in eps_grid:
    deb = MulticlassDebiaser(clf, prefit=True, eps=eps, deterministic=True)
    deb.fit(X[feats][post], y[post], sensitive_features=X.group[post])
    costs["randomized"].append(deb.randomized_cost_)
    costs["deterministic"].append(deb.train_cost_)

deb = MulticlassDebiaser(clf, prefit=True, eps=0.02, random_state=0)
deb.fit(X[feats][post], y[post], sensitive_features=X.group[post])
g_test = X.group[test].to_numpy()
before = np.eye(3)[np.argmax(clf.predict_proba(X[feats][test]), axis=1)]
after = deb.predict_proba(X[feats][test], sensitive_features=g_test)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
for name, values in costs.items():
    ax1.plot(eps_grid, values, marker="o", label=name)
ax1.set_xlabel("eps (largest |group rate - pooled rate|)")
ax1.set_ylabel("expected error on the fitting sample")
ax1.set_title("Cost of fairness")
ax1.legend()
width = 0.2
for i, (name, P) in enumerate((("before", before), ("after", after))):
    for grp in (0, 1):
        rates = P[g_test == grp].mean(axis=0)
        ax2.bar(np.arange(3) + (2 * i + grp - 1.5) * width, rates, width=width,
                label=f"{name}, group {grp}", alpha=0.5 if name == "before" else 1.0)
ax2.set_xticks(np.arange(3), [f"class {c}" for c in deb.classes_])
ax2.set_ylabel("P(prediction = class | group), test data")
ax2.set_title("Class rates per group")
ax2.legend(fontsize=8)
fig.tight_layout()
plt.show()
