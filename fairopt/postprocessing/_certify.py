"""Population guarantees of post-processing by group thresholds (see :mod:`fairopt.guarantees`).

Every rule :class:`~fairopt.postprocessing.ThresholdDebiaser` can return predicts 1 with a
probability that is non-decreasing in the (calibrated) score within each group: a ramp, a
threshold with one randomized level, a monotone mixture of thresholds, or any of these after an
isotonic (monotone) calibration or score binning. Each such rule is a mixture of threshold
rules on the raw score, so the DKW bound on each group's score CDF (per label value for the
error-rate criteria) covers the rule that the fit picked on the same rows.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairopt._arrays import as_1d
from fairopt._labels import label_codes
from fairopt.criteria import canonical, criterion
from fairopt.errors import DataValidationError
from fairopt.formulations.constrained_classification.multiclass_lp import events_for
from fairopt.guarantees import (
    Certificate,
    attempt_confidence,
    certification_split,
    check_confidence,
    event_certificate,
    gap_margin,
)
from fairopt.validation import check_groups, check_weights, num_rows


def cell_counts(codes: ArrayLike, n_groups: int, y: ArrayLike | None, constraint: str) -> np.ndarray:
    """Rows per group (and per conditioning label): shape ``(n_groups, n_conditions)``."""
    g = np.asarray(codes, dtype=np.int64).reshape(-1)
    conditions = criterion(constraint).conditions
    if not conditions:
        return np.bincount(g, minlength=n_groups)[:, None].astype(float)
    if y is None:
        raise DataValidationError(f"confidence with constraint={constraint!r} needs the labels y at fit.")
    yv = np.asarray(y).reshape(-1)
    return np.column_stack([np.bincount(g[yv == c], minlength=n_groups) for c in conditions]).astype(float)


def threshold_margin(counts: np.ndarray | None, constraint: str, confidence: object,
                     sample_weight: ArrayLike | None, where: str) -> tuple[float, dict[str, float], int]:
    """DKW slack of the range of group rates: ``(margin, per-rate margins, rows)``.

    ``counts`` are :func:`cell_counts` of the fitting rows.

    Raises
    ------
    DataValidationError
        A criterion or input the bound does not cover: the covariance criterion, non-uniform
        sample weights (the i.i.d. reading of the sample), or a group (label cell) with no rows.
    """
    conf = check_confidence(confidence, where)
    if criterion(constraint).conditions is None:
        raise DataValidationError(f"{where}: confidence is offered for the rate criteria (demographic parity, "
                                  f"equal opportunity, equalized odds); {constraint!r} compares no rates, so it has "
                                  f"no population bound here (use confidence=None).")
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=float)
        if w.size and not np.allclose(w, w.flat[0]):
            raise DataValidationError(f"{where}: confidence needs unweighted rows (the DKW bound is for an i.i.d. "
                                      f"sample); fit without sample_weight or with confidence=None.")
    if counts is None:
        raise DataValidationError(f"{where}: confidence with constraint={constraint!r} needs the labels y at fit.")
    margin, per_rate = gap_margin(counts, conf, kind="range")
    return margin, per_rate, int(counts[:, 0].sum() if counts.shape[1] == 1 else counts.sum())


def certificate(rates: ArrayLike, margin: float, per_rate: dict[str, float], confidence: float,
                n_rows: int) -> Certificate:
    """Certificate of a fitted rule from its training rates (one row of rates per condition)."""
    r = np.atleast_2d(np.asarray(rates, dtype=float))
    gap = float(np.max(np.ptp(r, axis=-1))) if r.size else 0.0
    return Certificate(float(confidence), gap + margin, gap, margin, "dkw", per_rate, n_rows)


def _take(a: Any, idx: np.ndarray) -> Any:
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    if hasattr(a, "tocsr"):
        return a.tocsr()[idx]
    return np.asarray(a)[idx]


class MulticlassHoldout:
    """Held-out certification of :class:`~fairopt.postprocessing.MulticlassDebiaser`'s fixed rule.

    The LP picks among all randomized rules on the score vectors, a class with no useful
    uniform bound, so a share ``certify_size`` of the rows (stratified by group and, for the
    error-rate criteria, by label) is held out. Every event ``(j, k)`` has the rate
    ``P(yhat = k | Y = j, A = g)`` (``j`` None: all rows), the mean of the rule's column ``k``
    over the held-out rows of class ``j`` in group ``g``; the deviation gap
    ``max |group rate - pooled rate|`` is certified by :func:`~fairopt.guarantees.event_certificate`.
    With ``attempts > 1`` the margin and every certificate use the union-bound share of the
    confidence that :func:`~fairopt.guarantees.certify_in_turn` needs.
    """

    def __init__(self, estimator: Any, X: Any, y: Any, sensitive_features: Any, sample_weight: Any,
                 attempts: int = 1) -> None:
        where = "MulticlassDebiaser.fit"
        self.confidence = check_confidence(estimator.confidence, where)
        # each of the attempts' certificates at this confidence: all hold at once at `confidence`
        self.each = attempt_confidence(self.confidence, attempts)
        self.eps = float(estimator.eps)
        self.constraint: str = canonical(estimator.constraint) or str(estimator.constraint)
        n = num_rows(X)
        if sample_weight is not None:
            w = check_weights(sample_weight, n)
            if w.size and not np.allclose(w, w[0]):
                raise DataValidationError(f"{where}: confidence needs unweighted rows (Hoeffding's bound is for an "
                                          f"i.i.d. sample); fit without sample_weight or with confidence=None.")
        self.grp = check_groups(sensitive_features, n, X=X)
        self.labelled = self.constraint != "demographic_parity"
        if self.labelled and y is None:
            raise DataValidationError(f"{where}: confidence with constraint={estimator.constraint!r} certifies rates "
                                      f"among the rows of each true class, so fit needs the labels y.")
        strata = self.grp.codes.astype(np.int64)
        if self.labelled:
            yc = pd.factorize(as_1d(y, f"{where}: y", n), sort=True)[0].astype(np.int64)
            strata = strata * (int(yc.max()) + 1) + yc
        self.fit, self.cert = certification_split(strata, None, estimator.certify_size,
                                                  random_state=estimator.random_state)
        self.X, self.y, self.sf, self.sw = X, y, sensitive_features, sample_weight
        self.margin = float("nan")

    def _sf(self, idx: np.ndarray) -> Any:
        return self.sf if self.grp.columns is not None else _take(self.sf, idx)

    def part(self) -> tuple[Any, Any, Any, Any]:
        """``(X, y, sensitive_features, sample_weight)`` of the rows the rule is fitted on."""
        f = self.fit
        return (_take(self.X, f), None if self.y is None else _take(self.y, f), self._sf(f),
                None if self.sw is None else _take(self.sw, f))

    def _events(self, classes: np.ndarray) -> tuple[list[Any], np.ndarray]:
        events = events_for(self.constraint, len(classes))
        m = self.cert.size
        if self.labelled:
            yc = label_codes(_take(self.y, self.cert), classes, m, "MulticlassDebiaser.fit: y")
            masks = np.column_stack([yc == j for j, _ in events])
        else:
            masks = np.ones((m, len(events)), dtype=bool)
        return events, masks

    def held_out_margin(self, classes: np.ndarray) -> float:
        """The Hoeffding margin the held-out cell sizes allow (at each attempt's confidence): it
        depends on the counts only, so it is fixed before any held-out prediction is read."""
        _, masks = self._events(classes)
        G = len(self.grp.labels)
        counts = np.eye(G)[self.grp.codes[self.cert]].T @ masks.astype(float)
        self.margin, _ = gap_margin(counts, self.each, kind="deviation", pooled=masks.sum(axis=0))
        return self.margin

    def certify(self, estimator: Any) -> Certificate:
        """Certificate of the fitted rule on the held-out rows."""
        events, masks = self._events(estimator.classes_)
        P = estimator.predict_proba(_take(self.X, self.cert), sensitive_features=self._sf(self.cert))
        values = P[:, [k for _, k in events]]
        return event_certificate(values, masks, self.grp.codes[self.cert], self.each, kind="deviation",
                                 n_groups=len(self.grp.labels))
