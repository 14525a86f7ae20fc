"""Finite-sample guarantees: how far a rate measured on a sample can be from the population's.

Two kinds of bound, both two-sided and both valid for rules chosen on the same data only where
stated:

* **Uniform over threshold rules (DKW).** For ``n`` i.i.d. scores with CDF ``F`` and empirical
  CDF ``F_n``, ``P(sup_s |F_n(s) - F(s)| > e) <= 2 exp(-2 n e^2)`` (Dvoretzky–Kiefer–Wolfowitz
  with Massart's constant). Every rule that predicts 1 with probability ``h(s)`` for a
  non-decreasing ``h`` with values in [0, 1] is a mixture of thresholds
  (``h(s) = integral of 1{s > t} dmu(t)``, plus the left limits ``1{s >= t}``), so its rate
  ``E[h(S)] = integral of (1 - F(t)) dmu(t)`` is within ``e`` of the sample rate **for every such
  rule at once**. Randomized-threshold post-processing picks one of these rules per group
  (and per label value for the error-rate criteria), so the bound holds for the rule it picked.
* **A fixed rule on held-out rows (Hoeffding).** The mean of ``n`` i.i.d. values in [0, 1]
  (the predicted probabilities of a randomized rule fixed before those rows were seen) is
  within ``sqrt(log(2/delta) / (2 n))`` of its expectation with probability ``1 - delta``.

A union bound spends ``delta = 1 - confidence`` over every rate that enters the constraint.
Sample weights break the i.i.d. reading of a sample, so weighted fits are not certified.

A held-out certificate can land above ``eps`` even when the rule met its tightened tolerance on
the fitting rows (the held-out gap is itself a noisy estimate). :func:`certify_in_turn` therefore
fixes a short schedule of training tolerances before the held-out rows are read, fits them in
turn, and stops at the first rule whose certificate is within ``eps``. Each candidate is a fixed
rule for the held-out rows, and a union bound over the ``attempts`` candidates
(``delta / attempts`` each) makes every certificate hold at once, so the one reported holds at
``confidence`` whichever is picked.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt.errors import DataValidationError, InfeasibleError

__all__ = ["HOLDOUT_ATTEMPTS", "Certificate", "attempt_confidence", "certification_split", "certify_in_turn",
           "check_confidence", "dkw_margin", "event_certificate", "gap_margin", "hoeffding_margin",
           "holdout_certificate", "no_guarantee", "range_margin", "tightened_eps"]

_Fitted = TypeVar("_Fitted")

#: training tolerances a held-out certification tries in turn (see :func:`certify_in_turn`)
HOLDOUT_ATTEMPTS = 3


def check_confidence(confidence: object, where: str) -> float:
    """Validate a confidence level: a float strictly between 0 and 1.

    Examples
    --------
    >>> check_confidence(0.95, "ThresholdDebiaser")
    0.95
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) \
            or not 0.0 < float(confidence) < 1.0:
        raise DataValidationError(f"{where}: confidence must be a number strictly between 0 and 1 "
                                  f"(for example 0.95), got {confidence!r}.")
    return float(confidence)


def _counts(n: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(n, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 1):
        raise DataValidationError(f"every sample size must be at least 1, got {arr.tolist()}: a group (or a "
                                  f"group's label cell) with no rows cannot be certified.")
    return arr


def _sqrt_log_margin(n: ArrayLike, delta: float) -> NDArray[np.float64]:
    """``sqrt(log(2 / delta) / (2 n))``: the DKW–Massart and the two-sided Hoeffding deviation
    have this same form."""
    if not 0 < delta < 1:
        raise DataValidationError(f"delta must be in (0, 1), got {delta}.")
    margin: NDArray[np.float64] = np.sqrt(np.log(2.0 / delta) / (2.0 * _counts(n)))
    return margin


def dkw_margin(n: ArrayLike, delta: float) -> NDArray[np.float64]:
    """Uniform deviation of an empirical CDF: ``sqrt(log(2 / delta) / (2 n))`` (DKW–Massart).

    With probability at least ``1 - delta`` the empirical CDF of ``n`` i.i.d. draws is within
    this distance of the true CDF everywhere, so every mixture of threshold rules has its rate
    within it too.

    Examples
    --------
    >>> round(float(dkw_margin(1000, 0.05)), 4)
    0.0429
    """
    return _sqrt_log_margin(n, delta)


def hoeffding_margin(n: ArrayLike, delta: float) -> NDArray[np.float64]:
    """Two-sided Hoeffding deviation of a mean of ``n`` values in [0, 1] for a fixed rule.

    Examples
    --------
    >>> round(float(hoeffding_margin(400, 0.01)), 4)
    0.0814
    """
    return _sqrt_log_margin(n, delta)


def range_margin(margins: ArrayLike) -> float:
    """Slack on the range ``max_g r_g - min_g r_g`` when each ``r_g`` may move by ``margins[g]``.

    The range can grow by at most the sum of the two largest margins (the two groups that end up
    at the extremes move apart).

    Examples
    --------
    >>> range_margin([0.01, 0.05, 0.02])
    0.07
    """
    m = np.sort(np.asarray(margins, dtype=float).reshape(-1))[::-1]
    if m.size < 2:
        raise DataValidationError("a rate gap needs at least two groups.")
    return round(float(m[0] + m[1]), 15)


def gap_margin(counts: ArrayLike, confidence: float, *, kind: str = "range",
               pooled: ArrayLike | None = None) -> tuple[float, dict[str, float]]:
    """Slack a fairness gap can gain from sample to population, with a union bound.

    Parameters
    ----------
    counts : array-like of shape (n_groups, n_conditions)
        Rows behind each group's rate in each conditioning event (one column for demographic
        parity; one per label value for equalized odds; the positives for equal opportunity).
    confidence : float in (0, 1)
        Every rate is within its margin of the population's at once with at least this
        probability (``delta = 1 - confidence`` split evenly over the rates).
    kind : {"range", "deviation"}
        ``"range"``: the gap is ``max_g r_g - min_g r_g`` per condition (slack: the two largest
        group margins). ``"deviation"``: the gap is ``max_g |r_g - r|`` against the pooled rate
        ``r`` (slack: a group's margin plus the pooled rate's, whose row counts are ``pooled``,
        default the column sums).

    Returns
    -------
    margin : float
        The largest slack over the conditions.
    per_rate : dict
        Each rate's own margin, keyed ``"g{group}|c{condition}"`` (and ``"pooled|c{condition}"``).

    Examples
    --------
    >>> margin, rates = gap_margin([[1000], [4000]], 0.95)
    >>> round(margin, 4), len(rates)
    (0.0702, 2)
    """
    conf = check_confidence(confidence, "gap_margin")
    n = np.asarray(counts, dtype=float)
    if n.ndim == 1:
        n = n[:, None]
    if n.ndim != 2 or n.shape[0] < 2:
        raise DataValidationError(f"gap_margin needs counts of shape (n_groups >= 2, n_conditions), got {n.shape}.")
    if kind not in ("range", "deviation"):
        raise DataValidationError(f"gap_margin: kind must be 'range' or 'deviation', got {kind!r}.")
    n_rates = n.size + (n.shape[1] if kind == "deviation" else 0)
    delta = (1.0 - conf) / n_rates
    eps = dkw_margin(n, delta)
    per_rate = {f"g{g}|c{c}": float(eps[g, c]) for g in range(n.shape[0]) for c in range(n.shape[1])}
    if kind == "range":
        return max(range_margin(eps[:, c]) for c in range(n.shape[1])), per_rate
    tot = n.sum(axis=0) if pooled is None else np.asarray(pooled, dtype=float).reshape(-1)
    eps0 = dkw_margin(tot, delta)
    per_rate.update({f"pooled|c{c}": float(eps0[c]) for c in range(n.shape[1])})
    return float(np.max(eps.max(axis=0) + eps0)), per_rate


def tightened_eps(eps: float, margin: float, confidence: float, where: str) -> float:
    """The training tolerance that certifies ``eps`` on the population, or the error saying which
    ``eps`` can be certified at this confidence and sample size.

    Examples
    --------
    >>> tightened_eps(0.1, 0.03, 0.95, "here")
    0.07
    """
    if eps < margin:
        raise InfeasibleError(
            f"{where}: eps = {eps:g} cannot be certified at confidence {confidence:g} with this sample: the "
            f"sampling error alone can add {margin:.4g} to the gap. The smallest certifiable eps is {margin:.4g} "
            f"(lower the confidence, or add rows to the smallest groups).",
            constraint="fairness", tightest={"eps": float(margin)})
    return round(float(eps - margin), 15)


@dataclass
class Certificate:
    """A population bound on a fairness gap, and how it was obtained.

    Attributes
    ----------
    confidence : float
        The bound holds with at least this probability over the draw of the sample.
    certified_eps : float
        Population gap bound: the sample gap plus ``margin``.
    sample_gap : float
        The gap measured on the rows the bound is computed from.
    margin : float
        What the sampling error can add to the gap.
    method : str
        ``"dkw"`` (uniform over the rule class, same rows as the fit) or ``"hoeffding-holdout"``
        (a fixed rule, held-out rows).
    per_rate : dict
        Margin of every rate that entered the union bound, by name.
    n_rows : int
        Rows the bound is computed from.

    Examples
    --------
    >>> c = Certificate(0.95, 0.12, 0.05, 0.07, "dkw", {"a": 0.03, "b": 0.04}, 2000)
    >>> c.holds(0.15)
    True
    """

    confidence: float
    certified_eps: float
    sample_gap: float
    margin: float
    method: str
    per_rate: Mapping[str, float] = field(default_factory=dict)
    n_rows: int = 0

    def holds(self, eps: float) -> bool:
        """Whether the certified population gap is at most ``eps``."""
        return self.certified_eps <= eps + 1e-12

    def describe(self) -> str:
        """One sentence for reports."""
        how = ("DKW bound on each group's score CDF, uniform over threshold rules, on the fitting rows"
               if self.method == "dkw" else "Hoeffding bound on held-out rows for the fitted rule")
        return (f"with probability >= {self.confidence:g}, the population gap is <= {self.certified_eps:.4g} "
                f"(sample gap {self.sample_gap:.4g} + margin {self.margin:.4g}; {how}; union bound over "
                f"{len(self.per_rate)} rates).")


def _strata(groups: np.ndarray, y: np.ndarray | None, conditions: tuple[int, ...]) -> NDArray[np.int64]:
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    if not conditions or y is None:
        return g
    in_condition: NDArray[np.bool_] = np.asarray(y).reshape(-1) == conditions[0]   # numpy types == as Any
    return g * 2 + in_condition.astype(np.int64)


def certification_split(groups: ArrayLike, y: ArrayLike | None, certify_size: float, *,
                        conditions: tuple[int, ...] = (), random_state: object = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(fit, certify)``: a held-out share of the rows, stratified by group (and label).

    The rule is fitted on the first part only, so the second part certifies a fixed rule.

    Examples
    --------
    >>> import numpy as np
    >>> fit, cert = certification_split(np.repeat([0, 1], 50), None, 0.3, random_state=0)
    >>> len(fit), len(cert), np.bincount(np.repeat([0, 1], 50)[cert]).tolist()
    (70, 30, [15, 15])
    """
    from sklearn.model_selection import train_test_split
    size = float(certify_size)
    if not 0.0 < size < 1.0:
        raise DataValidationError(f"certify_size must be a share of the rows strictly between 0 and 1, got "
                                  f"{certify_size!r}.")
    strata = _strata(np.asarray(groups), None if y is None else np.asarray(y), conditions)
    idx = np.arange(strata.size)
    try:
        fit, cert = train_test_split(idx, test_size=size, stratify=strata, random_state=random_state)
    except ValueError as err:
        raise DataValidationError(f"cannot hold out {size:g} of the rows in every group (and label): {err} "
                                  f"Use a larger certify_size or groups with more rows.") from None
    return np.sort(fit), np.sort(cert)


def holdout_certificate(proba: ArrayLike, groups: ArrayLike, y: ArrayLike | None, confidence: float, *,
                        conditions: tuple[int, ...] = (), kind: str = "deviation") -> Certificate:
    """Hoeffding certificate of a fixed randomized rule on held-out rows.

    Parameters
    ----------
    proba : array-like of shape (n,)
        The rule's probability of the favourable decision on each held-out row.
    groups : array-like of int
        Group code of each row.
    y : array-like or None
        Labels (needed when ``conditions`` is not empty).
    confidence : float in (0, 1)
        Probability with which the certificate holds.
    conditions : tuple of int
        Label values that condition the rates (``()``: all rows; ``(1,)``: equal opportunity;
        ``(1, 0)``: equalized odds).
    kind : {"deviation", "range"}
        The gap: each group's distance to the pooled rate, or the range of group rates.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 2, 4000)
    >>> c = holdout_certificate(np.full(4000, 0.3), g, None, 0.95)
    >>> round(c.sample_gap, 9), c.method, round(c.margin, 3)
    (0.0, 'hoeffding-holdout', 0.059)
    """
    conf = check_confidence(confidence, "holdout_certificate")
    p = np.asarray(proba, dtype=float).reshape(-1)
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    n_groups = int(g.max()) + 1 if g.size else 0
    masks = [np.ones(p.size, dtype=bool)] if not conditions else [np.asarray(y).reshape(-1) == c for c in conditions]
    counts = np.column_stack([np.bincount(g[m], minlength=n_groups) for m in masks]).astype(float)
    pooled = np.array([m.sum() for m in masks], dtype=float)
    rates = np.column_stack([np.bincount(g[m], weights=p[m], minlength=n_groups) for m in masks]) \
        / np.maximum(counts, 1)
    margin, per_rate = gap_margin(counts, conf, kind=kind, pooled=pooled)
    if kind == "range":
        gap = float(np.max(np.ptp(rates, axis=0)))
    else:
        overall = np.array([p[m].mean() for m in masks])
        gap = float(np.max(np.abs(rates - overall)))
    return Certificate(conf, gap + margin, gap, margin, "hoeffding-holdout", per_rate, int(p.size))


def event_certificate(proba: ArrayLike, masks: ArrayLike, groups: ArrayLike, confidence: float, *,
                      kind: str = "deviation", n_groups: int | None = None) -> Certificate:
    """Hoeffding certificate of a fixed rule on held-out rows, one rate per event.

    The general form of :func:`holdout_certificate`: event ``e`` has its own per-row value in
    [0, 1] (``proba[:, e]``, e.g. a column of a multiclass rule's ``predict_proba``) and its own
    conditioning rows (``masks[:, e]``, e.g. the rows of one true class). Group ``g``'s rate of
    event ``e`` is the mean of ``proba[:, e]`` over the rows of ``g`` in ``masks[:, e]``; the
    union bound of :func:`gap_margin` runs over every group's rate of every event (and the pooled
    rate of every event for ``kind="deviation"``).

    Parameters
    ----------
    proba : array-like of shape (n, n_events)
        Values in [0, 1] of a rule fixed before these rows were seen.
    masks : array-like of bool, shape (n, n_events)
        Conditioning rows of each event.
    groups : array-like of int, shape (n,)
        Group code of each row.
    confidence : float in (0, 1)
        Probability with which the certificate holds.
    kind : {"deviation", "range"}
        The gap: each group's distance to the pooled rate, or the range of group rates (per event).
    n_groups : int, optional
        Number of groups (default: largest code + 1); a group without rows in an event's
        conditioning set cannot be certified.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 2, 6000); y = rng.integers(0, 3, 6000)
    >>> P = np.full((6000, 3), 1 / 3)                       # a rule ignoring the row
    >>> masks = np.column_stack([y == k for k in range(3)])  # event k: predicted k given Y = k
    >>> c = event_certificate(P, masks, g, 0.95)
    >>> round(c.sample_gap, 9), len(c.per_rate), bool(0.05 < c.margin < 0.1)
    (0.0, 9, True)
    """
    conf = check_confidence(confidence, "event_certificate")
    P = np.asarray(proba, dtype=float)
    M = np.asarray(masks, dtype=bool)
    g = np.asarray(groups, dtype=np.int64).reshape(-1)
    if P.ndim != 2 or M.shape != P.shape or g.size != P.shape[0]:
        raise DataValidationError(f"event_certificate needs proba and masks of one shape (n, n_events) and one group "
                                  f"per row, got {P.shape}, {M.shape} and {g.size} groups.")
    if np.any(~np.isfinite(P)) or np.any(P < -1e-12) or np.any(P > 1 + 1e-12):
        raise DataValidationError("event_certificate: every value must be a probability in [0, 1].")
    G = int(g.max()) + 1 if n_groups is None else int(n_groups)
    onehot = np.eye(G)[g]                                    # (n, G)
    counts = onehot.T @ M.astype(float)                      # (G, n_events)
    sums = onehot.T @ (P * M)
    margin, per_rate = gap_margin(counts, conf, kind=kind, pooled=M.sum(axis=0))
    rates = sums / counts
    if kind == "range":
        gap = float(np.max(np.ptp(rates, axis=0)))
    else:
        overall = (P * M).sum(axis=0) / M.sum(axis=0)
        gap = float(np.max(np.abs(rates - overall)))
    return Certificate(conf, gap + margin, gap, margin, "hoeffding-holdout", per_rate, int(P.shape[0]))


def no_guarantee(estimator: object, where: str, why: str, instead: str) -> None:
    """Refuse ``confidence`` on an estimator that offers no population guarantee.

    Does nothing when ``estimator.confidence`` is None; otherwise raises a
    :class:`~fairopt.errors.DataValidationError` that says why no bound is offered and what to
    use instead.

    Examples
    --------
    >>> class Model:
    ...     confidence = 0.9
    >>> no_guarantee(Model(), "Model.fit", "its rule class has no uniform bound",
    ...              "ThresholdDebiaser")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    fairopt.errors.DataValidationError: ...
    """
    confidence = getattr(estimator, "confidence", None)
    if confidence is None:
        return
    check_confidence(confidence, where)
    raise DataValidationError(f"{where}: no population guarantee is offered here ({why}), so confidence="
                              f"{confidence!r} cannot be honoured. Use confidence=None, or {instead}.")


def attempt_confidence(confidence: float, attempts: int = HOLDOUT_ATTEMPTS) -> float:
    """Confidence of each of ``attempts`` held-out certificates so that all hold at once with
    probability ``confidence`` (a union bound: ``1 - (1 - confidence) / attempts``).

    Examples
    --------
    >>> round(attempt_confidence(0.95, 3), 6)
    0.983333
    """
    if isinstance(attempts, bool) or not isinstance(attempts, (int, np.integer)) or attempts < 1:
        raise DataValidationError(f"attempts must be a positive integer, got {attempts!r}.")
    return 1.0 - (1.0 - check_confidence(confidence, "attempt_confidence")) / int(attempts)


def certify_in_turn(fit: Callable[[float], _Fitted], certify: Callable[[_Fitted], Certificate], eps: float,
                    margin: float, confidence: float, where: str,
                    attempts: int = HOLDOUT_ATTEMPTS) -> tuple[_Fitted, Certificate, float]:
    """Fit at a fixed schedule of tightening tolerances until a held-out certificate is within ``eps``.

    The tolerances are ``t_j = (eps - margin) (attempts - j) / attempts`` for ``j = 0, 1, ...``,
    fixed before the held-out rows are read. ``margin`` and ``certify`` must use
    :func:`attempt_confidence` (the union bound over the attempts); the certificate returned is
    labelled with ``confidence``, at which it holds whichever attempt is picked.

    Parameters
    ----------
    fit : callable
        ``fit(t)`` fits on the fitting rows at training tolerance ``t`` and returns the fitted state.
    certify : callable
        ``certify(state)``: the held-out :class:`Certificate` of that state, at the attempts' confidence.
    eps : float
        The population tolerance asked for.
    margin : float
        Held-out margin at the attempts' confidence (known before any fit: it depends on counts only).
    confidence : float
        The overall confidence.
    where : str
        Name used in the error when ``eps`` cannot be certified.
    attempts : int
        Most fits to try.

    Returns
    -------
    state, certificate, tolerance
        The first attempt whose certificate holds at ``eps``, or else the attempt with the smallest
        certified gap.

    Raises
    ------
    InfeasibleError
        ``eps`` is below ``margin`` (``tightest`` is the smallest certifiable ``eps``).

    Examples
    --------
    >>> fits = []
    >>> def fit(t):
    ...     fits.append(t)
    ...     return t
    >>> def certify(t):                  # a held-out gap 0.02 above the training tolerance
    ...     return Certificate(0.98, t + 0.02 + 0.05, t + 0.02, 0.05, "hoeffding-holdout")
    >>> state, cert, t = certify_in_turn(fit, certify, 0.15, 0.05, 0.95, "here")
    >>> [round(f, 4) for f in fits], round(cert.certified_eps, 4), cert.confidence
    ([0.1, 0.0667], 0.1367, 0.95)
    """
    top = tightened_eps(eps, margin, confidence, where)
    best: tuple[_Fitted, Certificate, float] | None = None
    for j in range(int(attempts) if top > 0 else 1):
        t = round(top * (attempts - j) / attempts, 15)
        state = fit(t)
        cert = replace(certify(state), confidence=float(confidence))
        if best is None or cert.certified_eps < best[1].certified_eps:
            best = (state, cert, t)
        if cert.holds(eps):
            break
    assert best is not None
    return best


def warn_if_uncertified(where: str, certificate: Certificate, eps: float, trained_eps: float) -> None:
    """Warn (:class:`~fairopt.errors.CertificateWarning`) when a held-out certificate holds only
    above the requested ``eps``: the rule met the tightened tolerance on its fitting rows, but its
    gap on the certification rows came out larger.

    Examples
    --------
    >>> import warnings
    >>> cert = Certificate(0.95, 0.12, 0.05, 0.07, "hoeffding-holdout", {}, 600)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_uncertified("Estimator", cert, 0.1, 0.03)
    >>> caught[0].category.__name__
    'CertificateWarning'
    """
    if certificate.certified_eps > eps + 1e-12:
        import warnings

        from fairopt.errors import CertificateWarning
        warnings.warn(f"{where}: the certified population gap {certificate.certified_eps:.4g} exceeds eps = {eps:g} "
                      f"(held-out gap {certificate.sample_gap:.4g} against a training tolerance of "
                      f"{trained_eps:.4g}); certified_eps_ is what holds at confidence {certificate.confidence:g}.",
                      CertificateWarning, stacklevel=3)
