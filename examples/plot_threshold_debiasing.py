"""
Post-processing: randomized thresholds for statistical parity
=============================================================

Alabdulmohsin and Lucic's post-processing leaves a trained classifier as it is and learns, per
group, a randomised threshold on its score so that the groups' positive-prediction rates differ
by at most ``gamma``. The favourable prediction is ``1``. The data are synthetic: the score of
a logistic regression depends on ``sex``.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from fairopt.postprocessing import ThresholdDebiaser

rng = np.random.default_rng(0)
n = 3000
X = pd.DataFrame({"x": rng.normal(size=n), "sex": rng.integers(0, 2, n)})
y = (X["x"] + 0.8 * X["sex"] + rng.normal(size=n) > 0.5).astype(int)
clf = LogisticRegression().fit(X[:1000], y[:1000])
X_post, y_post, X_test = X[1000:2000], y[1000:2000], X[2000:]

before = clf.predict(X_test)
gammas = [0.2, 0.1, 0.05, 0.0]
after = {}
for gamma in gammas:
    deb = ThresholdDebiaser(estimator=clf, prefit=True, gamma=gamma)
    deb.fit(X_post, y_post, sensitive_features=X_post["sex"])
    after[gamma] = deb.predict_proba(X_test, sensitive_features=X_test["sex"])[:, 1]


def rates(pred):
    return [float(np.mean(pred[X_test["sex"].to_numpy() == s])) for s in (0, 1)]


fig, ax = plt.subplots(figsize=(7, 4))
labels = ["classifier"] + [f"gamma={g}" for g in gammas]
values = np.array([rates(before)] + [rates(after[g]) for g in gammas])
x = np.arange(len(labels))
ax.bar(x - 0.2, values[:, 0], width=0.4, label="sex = 0")
ax.bar(x + 0.2, values[:, 1], width=0.4, label="sex = 1")
ax.set_xticks(x, labels)
ax.set_xlabel("model (gamma: allowed rate difference)")
ax.set_ylabel("P(prediction = 1 | sex)  [probability]")
ax.set_title("Positive-prediction rate per group, test data")
ax.legend()
fig.tight_layout()
plt.show()
