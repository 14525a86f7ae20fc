"""Test-time decision rule of the fair robust log-loss model (Eq. 11; Eqs. 14–16).

The fitted θ̂ and λ̂ and the *training* frequencies ``p_γ`` (through the coefficient table of
:class:`~fairopt.formulations.constrained_classification.logloss_fairness.FairnessRows`) give
``c`` for a new row from its group ``a`` and a label ``y``. For demographic parity ``c`` does not
depend on ``y`` and ℙ is Eq. 11 directly. For the y-conditional constraints ℙ(ŷ|x,a,y) depends
on the unknown label; the rule mixes the two label-conditioned predictors with the fixed point
``r = ℚ(ŷ=1|y=0) / (ℚ(ŷ=0|y=1) + ℚ(ŷ=1|y=0))`` of Eq. 15 (Eq. 16) as the estimate of
``P(y=1|x,a)``::

    ℙ(ŷ=1|x,a) = r·ℙ(ŷ=1|x,a,y=1) + (1 − r)·ℙ(ŷ=1|x,a,y=0)        (Eq. 14)

The denominator vanishes only when the row is capped under ``y=1`` and floored under ``y=0``
(or ``P_e`` saturates); then every ``r`` is a fixed point and the rule uses ``r = P_e(x)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit

from fairopt.formulations.constrained_classification.logloss_fairness import approximator, truncate

if TYPE_CHECKING:
    import scipy.sparse as sp

#: denominators of Eq. 16 at or below this are treated as zero
DENOMINATOR_GUARD = 1e-12


@dataclass
class FairLogLossRule:
    """θ̂ (intercept last when ``fit_intercept``), λ̂ and the training coefficient table."""

    theta: np.ndarray
    lam: np.ndarray
    table: np.ndarray
    fit_intercept: bool
    label_conditioned: bool

    def scores(self, X: np.ndarray | sp.spmatrix) -> np.ndarray:
        """``s = θᵀx`` (logit of the untruncated ``P_e``)."""
        if self.fit_intercept:
            out: np.ndarray = np.asarray(X @ self.theta[:-1]).reshape(-1) + self.theta[-1]
            return out
        return np.asarray(X @ self.theta).reshape(-1)

    def _c(self, group: np.ndarray, y: int) -> np.ndarray:
        return self.lam @ self.table[:, group, y] if self.lam.size else np.zeros(group.shape[0])

    def conditional(self, s: np.ndarray, group: np.ndarray,
                    y: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(P, 1 − P, ℚ(ŷ=1), ℚ(ŷ=0))`` of rows with scores ``s`` if their label were ``y``."""
        c = self._c(group, y)
        P, P_bar, capped, floored = truncate(expit(s), expit(-s), c)
        Q1, Q0 = approximator(P, P_bar, c, capped, floored)
        return P, P_bar, Q1, Q0

    def proba(self, X: np.ndarray | sp.spmatrix,
              group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """``(ℙ(ŷ=1|x,a), ℙ(ŷ=0|x,a), r, guarded)``; ``r`` is None unless label-conditioned."""
        s = self.scores(X)
        group = np.asarray(group, dtype=np.int64)
        if not self.label_conditioned:
            P, P_bar, _, _ = self.conditional(s, group, 0)
            return P, P_bar, None, np.zeros(s.shape[0], bool)
        P1, Pb1, _, Q0_1 = self.conditional(s, group, 1)
        P0, Pb0, Q1_0, _ = self.conditional(s, group, 0)
        den = Q0_1 + Q1_0
        guarded = den <= DENOMINATOR_GUARD
        r = np.where(guarded, expit(s), Q1_0 / np.where(guarded, 1.0, den))
        return r * P1 + (1 - r) * P0, r * Pb1 + (1 - r) * Pb0, r, guarded
