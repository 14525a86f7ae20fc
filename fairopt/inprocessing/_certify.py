"""Held-out certification of a game's randomized classifier (see :mod:`fairopt.guarantees`).

A mixture of an oracle's hypotheses has no useful uniform bound, so the rows are split: the game
is played on one part with the tolerance tightened by the Hoeffding margin that the held-out
part's group sizes allow (known before the fit), and the fixed fitted rule is certified on the
held-out part. With ``attempts > 1`` the margin and the certificates use the union-bound share
of the confidence that :func:`fairopt.guarantees.certify_in_turn` needs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from fairopt.criteria import criterion
from fairopt.errors import DataValidationError
from fairopt.guarantees import (
    Certificate,
    attempt_confidence,
    certification_split,
    check_confidence,
    gap_margin,
    holdout_certificate,
)
from fairopt.validation import Groups


def _rows(X: Any, idx: np.ndarray) -> Any:
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


class Holdout:
    """The fit / certification split of one fit with ``confidence``."""

    def __init__(self, estimator: Any, y: np.ndarray, groups: Groups, sample_weight: np.ndarray | None,
                 where: str, kind: str = "deviation", attempts: int = 1) -> None:
        self.kind = kind
        self.confidence = check_confidence(estimator.confidence, where)
        # each of the attempts' certificates at this confidence: all hold at once at `confidence`
        self.each = attempt_confidence(self.confidence, attempts)
        if not isinstance(estimator.constraint, str) or criterion(estimator.constraint).conditions is None:
            raise DataValidationError(f"{where}: confidence is offered for the rate criteria named by a string "
                                      f"(demographic parity, equal opportunity, equalized odds); "
                                      f"{estimator.constraint!r} has no population bound here.")
        eps = getattr(estimator, "eps", 0.0)    # an estimator without eps fits exact equality
        if not isinstance(eps, (int, float, np.floating)) or isinstance(eps, bool):
            raise DataValidationError(f"{where}: confidence needs one number eps (the same bound for every group), "
                                      f"got {eps!r}.")
        self.eps = float(eps)
        if sample_weight is not None and not np.allclose(sample_weight, sample_weight[0]):
            raise DataValidationError(f"{where}: confidence needs unweighted rows (Hoeffding's bound is for an i.i.d. "
                                      f"sample); fit without sample_weight or with confidence=None.")
        self.conditions = criterion(estimator.constraint).conditions or ()
        self.fit, self.cert = certification_split(groups.codes, y, estimator.certify_size,
                                                  conditions=self.conditions,
                                                  random_state=getattr(estimator, "random_state", None))
        masks = [np.ones(self.cert.size, bool)] if not self.conditions else \
            [y[self.cert] == c for c in self.conditions]
        codes = groups.codes[self.cert]
        counts = np.column_stack([np.bincount(codes[m], minlength=groups.n_groups) for m in masks])
        self.margin, _ = gap_margin(counts, self.each, kind=kind,
                                    pooled=[m.sum() for m in masks])

    def part(self, X: Any, y: np.ndarray, groups: Groups) -> tuple[Any, np.ndarray, Groups]:
        """The rows the game is played on."""
        return _rows(X, self.fit), y[self.fit], Groups(groups.codes[self.fit], groups.labels, groups.columns)

    def certify(self, proba: np.ndarray, y: np.ndarray, groups: Groups) -> Certificate:
        """Certificate of the fitted rule (its favourable-label probabilities on the held-out rows)."""
        return holdout_certificate(proba, groups.codes[self.cert], y[self.cert], self.each,
                                   conditions=self.conditions, kind=self.kind)
