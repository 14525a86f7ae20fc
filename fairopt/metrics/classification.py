"""Group fairness metrics for (possibly soft) binary predictions and for group representation.

Notation: ``g`` ranges over the groups defined by ``sensitive_features`` (one column, or the
intersection of several), ``w`` are sample weights, ``h_i`` is the prediction of row ``i`` read as
``P(y_hat_i = 1)`` (hard labels are 0/1; probabilities in [0, 1] are used as expectations), and
every rate is a weighted group mean ``r_g = sum_{i in g} w_i h_i / sum_{i in g} w_i``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.metrics import _lazy
from fairopt.metrics._validation import (
    binary_truth,
    check_weights,
    group_means,
    prediction_expectation,
    require_groups,
)
from fairopt.validation import check_groups

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "MetricSignatureError",
    "demographic_parity_difference",
    "demographic_parity_ratio",
    "equal_opportunity_difference",
    "equalized_odds_difference",
    "group_rates",
    "group_summary",
    "representation_rate",
    "statistical_rate",
]

_RATES = ("selection", "share", "base_rate", "tpr", "fpr")
_METHODS = ("between_groups", "to_overall")
_Method = Literal["between_groups", "to_overall"]


def _n_rows(sensitive_features: Any) -> int:
    if isinstance(sensitive_features, (pd.DataFrame, pd.Series)):
        return len(sensitive_features)
    if isinstance(sensitive_features, dict):
        return len(pd.DataFrame(sensitive_features))
    arr = np.asarray(sensitive_features)
    if arr.ndim == 0:  # a scalar is not one group label per row
        raise DataValidationError(
            f"sensitive_features must hold the group of every row (a 1-D array, Series, DataFrame or dict of "
            f"columns), got the scalar {sensitive_features!r}.")
    return len(arr)


def _rates(rate: str, sensitive_features: Any, *, y_pred: ArrayLike | None = None, y_true: ArrayLike | None = None,
           sample_weight: ArrayLike | None = None, pos_label: object = 1,
           groups: Sequence[Any] | pd.Index | None = None,
           metric: str | None = None) -> tuple[NDArray[np.float64], float, pd.Index]:
    """Per-group rates, the overall rate, and the group labels (shared by every public metric).

    ``metric`` names a fairness metric, which needs at least two groups."""
    if rate not in _RATES:
        raise DataValidationError(f"rate must be one of {_RATES}, got {rate!r}.")
    if _lazy.lazy_input(sensitive_features, y_pred, y_true, sample_weight):
        return _lazy.lazy_rates(rate, sensitive_features, y_pred, y_true, sample_weight, pos_label, groups)
    n = _n_rows(sensitive_features)
    grp = check_groups(sensitive_features, n, groups=groups)
    if metric is not None:
        require_groups(grp, metric)
    w = check_weights(sample_weight, n)
    if n == 0:
        raise DataValidationError("the inputs have no rows; metrics need at least one row per group.")
    if rate == "share":
        total = np.bincount(grp.codes, weights=w, minlength=grp.n_groups)
        return total / total.sum(), 1.0 / grp.n_groups, grp.labels
    truth = None
    if rate in ("base_rate", "tpr", "fpr"):
        if y_true is None:
            raise DataValidationError(f"rate={rate!r} needs y_true.")
        truth = binary_truth(y_true, n, pos_label)
    if rate == "base_rate":
        values, mask, what, cond = (cast("NDArray[np.bool_]", truth).astype(float), None,
                                    "the base rate P(y=1 | group)", "")
    else:
        values = prediction_expectation(y_pred, n, pos_label)
        if rate == "selection":
            mask, what, cond = None, "the selection rate P(y_hat=1 | group)", ""
        elif rate == "tpr":
            mask, what, cond = truth, "the true positive rate", f"y_true == {pos_label!r}"
        else:
            mask, what, cond = ~cast("NDArray[np.bool_]", truth), "the false positive rate", f"y_true != {pos_label!r}"
    means, _ = group_means(grp, values, w, what, mask=mask, condition=cond)
    sel_w = w if mask is None else w[mask]
    sel_v = values if mask is None else values[mask]
    overall = float(np.dot(sel_w, sel_v) / sel_w.sum())
    return means, overall, grp.labels


def _difference(rates: np.ndarray, overall: float, method: str) -> float:
    if method not in _METHODS:
        raise DataValidationError(f"method must be one of {_METHODS}, got {method!r}.")
    if method == "to_overall":
        return float(np.max(np.abs(rates - overall)))
    return float(rates.max() - rates.min())


def _ratio(rates: np.ndarray, overall: float, method: str) -> float:
    if method not in _METHODS:
        raise DataValidationError(f"method must be one of {_METHODS}, got {method!r}.")
    if method == "to_overall":
        lo = np.minimum(rates, overall)
        hi = np.maximum(rates, overall)
    else:
        lo, hi = rates.min(), rates.max()
    # Equal rates (including all zero) are perfectly fair: ratio 1.
    ratio = np.where(hi > 0, lo / np.where(hi > 0, hi, 1.0), 1.0)
    return float(np.min(ratio))


def group_rates(y_pred: ArrayLike | None, sensitive_features: Any, *, y_true: ArrayLike | None = None,
                sample_weight: ArrayLike | None = None, pos_label: object = 1,
                rate: Literal["selection", "share", "base_rate", "tpr", "fpr"] = "selection",
                groups: Sequence[Any] | pd.Index | None = None) -> pd.Series:
    """Per-group rates as a pandas Series indexed by group label (a MetricFrame-lite).

    Parameters
    ----------
    y_pred : array-like of shape (n,) or None
        Predictions: 0/1 labels, probabilities of class 1 in [0, 1] (used as expectations), or
        arbitrary binary labels compared with ``pos_label``. Ignored for ``rate="share"`` and
        ``rate="base_rate"``.
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Group membership; several columns define intersectional groups (one group per observed
        combination, labelled by a MultiIndex).
    y_true : array-like of shape (n,), optional
        Binary ground truth, needed for ``"base_rate"``, ``"tpr"`` and ``"fpr"``.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights; a weight of k is equivalent to repeating the row k times.
    pos_label : scalar, default 1
        The favourable label, in ``y_true`` and (for non-[0, 1] labels) in ``y_pred``.
    rate : {"selection", "share", "base_rate", "tpr", "fpr"}
        ``P(y_hat=1 | g)``, the weighted share of ``g``, ``P(y=1 | g)``, ``P(y_hat=1 | y=1, g)``
        or ``P(y_hat=1 | y=0, g)``.
    groups : sequence, optional
        Declared list of all groups (labels, or tuples for several columns); groups absent from
        the data get share 0, and any other rate of an absent group is an error.

    Returns
    -------
    pandas.Series
        One value per group, named after ``rate``.

    Raises
    ------
    DataValidationError
        On mismatched lengths, missing values, negative weights, or a group on which the
        requested rate is undefined (no rows, or no positives for ``"tpr"``).

    Examples
    --------
    >>> group_rates([1, 0, 1, 1], ["a", "a", "b", "b"]).tolist()
    [0.5, 1.0]
    """
    rates, _, labels = _rates(rate, sensitive_features, y_pred=y_pred, y_true=y_true,
                              sample_weight=sample_weight, pos_label=pos_label, groups=groups)
    return pd.Series(rates, index=labels, name=rate)


def group_summary(sensitive_features: Any, *, y_pred: ArrayLike | None = None, y_true: ArrayLike | None = None,
                  sample_weight: ArrayLike | None = None, pos_label: object = 1) -> pd.DataFrame:
    """Per-group table: weight, share, and (when the inputs allow) selection, base rate, TPR, FPR.

    Unlike the scalar metrics this is descriptive: a rate that is undefined for a group (for
    example a TPR in a group without positives) is reported as NaN instead of raising.

    Returns
    -------
    pandas.DataFrame
        Indexed by group, with columns ``weight``, ``share`` and, if ``y_pred`` is given,
        ``selection_rate``; if ``y_true`` is given, ``base_rate``; if both, ``tpr`` and ``fpr``.

    Examples
    --------
    >>> table = group_summary(["a", "a", "b", "b"], y_pred=[1, 0, 1, 1], y_true=[1, 0, 1, 0])
    >>> table[["selection_rate", "tpr", "fpr"]].to_dict("index")
    {'a': {'selection_rate': 0.5, 'tpr': 1.0, 'fpr': 0.0}, 'b': {'selection_rate': 1.0, 'tpr': 1.0, 'fpr': 1.0}}
    """
    n = _n_rows(sensitive_features)
    grp = check_groups(sensitive_features, n)
    w = check_weights(sample_weight, n)
    total = np.bincount(grp.codes, weights=w, minlength=grp.n_groups)
    out = {"weight": total, "share": total / total.sum()}

    def mean(values: NDArray[np.float64], mask: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
        codes, ww = (grp.codes, w) if mask is None else (grp.codes[mask], w[mask])
        vv = values if mask is None else values[mask]
        den = np.bincount(codes, weights=ww, minlength=grp.n_groups)
        num = np.bincount(codes, weights=ww * vv, minlength=grp.n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

    h = None if y_pred is None else prediction_expectation(y_pred, n, pos_label)
    t = None if y_true is None else binary_truth(y_true, n, pos_label)
    if h is not None:
        out["selection_rate"] = mean(h)
    if t is not None:
        out["base_rate"] = mean(t.astype(float))
    if h is not None and t is not None:
        out["tpr"] = mean(h, t)
        out["fpr"] = mean(h, ~t)
    return pd.DataFrame(out, index=grp.labels)


def statistical_rate(y_pred: ArrayLike, sensitive_features: Any, sample_weight: ArrayLike | None = None,
                     pos_label: object = 1) -> float:
    """Statistical rate ``min_g P(y_hat=1 | g) / max_g P(y_hat=1 | g)`` (1 = parity, 0 = worst).

    Also known as the disparate-impact ratio (the "80% rule" asks for >= 0.8). Used as a data
    constraint by Calmon et al. (2017) and Celis et al. (2020), where ``y_pred`` is the
    (synthetic) label column and ``pos_label`` the label value whose rate is compared.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        Labels or soft predictions. Numeric values in [0, 1] are read as ``P(y_hat = 1)`` and
        averaged (so hard 0/1 labels give the usual frequency and probabilities give the
        expected rate of a randomised classifier); other labels are compared with ``pos_label``.
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Group membership; several columns give intersectional groups.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights (frequency semantics).
    pos_label : scalar, default 1
        The favourable outcome. For [0, 1]-valued predictions only 1 and 0 are meaningful.

    Returns
    -------
    float
        In [0, 1]. Groups whose rates are all equal (including all zero) give 1.0.

    Raises
    ------
    DataValidationError
        Mismatched lengths, missing values, negative weights, a group whose weights are all 0, or
        a single group (there is nothing to compare: an error, not a perfect 1.0).

    Examples
    --------
    >>> statistical_rate([1, 0, 1, 1], ["a", "a", "b", "b"])
    0.5
    >>> statistical_rate([1, 0, 1, 1], ["a", "a", "b", "b"], pos_label=0)
    0.0
    """
    rates, overall, _ = _rates("selection", sensitive_features, y_pred=y_pred,
                               sample_weight=sample_weight, pos_label=pos_label, metric="statistical_rate")
    return _ratio(rates, overall, "between_groups")


def representation_rate(sensitive_features: Any, sample_weight: ArrayLike | None = None,
                        groups: Sequence[Any] | pd.Index | None = None) -> float:
    """Representation rate ``min_g P(g) / max_g P(g)`` of the (weighted) group shares.

    1 means all groups are equally represented. Celis et al. (2020) constrain it in generated
    data; Calmon et al. (2017) fix the group masses, which fixes it.

    Parameters
    ----------
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Group membership; several columns give intersectional groups.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights, e.g. counts of a cell table.
    groups : sequence, optional
        All groups that should be present. A declared group absent from the data (or with zero
        weight) has share 0 and makes the rate 0. Without it only observed groups count, and a
        single observed group is an error.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> representation_rate(["a", "a", "b"])
    0.5
    """
    shares, _, _ = _rates("share", sensitive_features, sample_weight=sample_weight, groups=groups,
                          metric="representation_rate")
    return float(shares.min() / shares.max())


class MetricSignatureError(DataValidationError, TypeError):
    """A fairlearn-named metric was called in fairopt's old ``(y_pred, sensitive_features)`` form (or
    with ``sensitive_features`` / ``sample_weight`` passed positionally); the message shows the
    fairlearn form ``(y_true, y_pred, *, sensitive_features=..., sample_weight=...)``.

    Examples
    --------
    >>> issubclass(MetricSignatureError, TypeError)
    True
    """


_MISSING = object()


def _fairlearn_form(metric: str, y_pred: object, legacy: tuple[object, ...], sensitive_features: Any) -> Any:
    """The groups of a fairlearn-form call; the old forms raise :class:`MetricSignatureError`
    instead of being misread (``metric(y_pred, s)`` would otherwise take ``s`` for the predictions)."""
    form = (f"{metric}(y_true, y_pred, *, sensitive_features=..., sample_weight=None) (fairlearn's form; "
            "y_true may be None where the metric does not read it)")
    if legacy:
        raise MetricSignatureError(f"{metric} got {2 + len(legacy)} positional arguments; sensitive_features and "
                                   f"sample_weight are keyword-only now: call {form}.")
    if y_pred is _MISSING:
        raise MetricSignatureError(f"{metric} got one array; the old fairopt form {metric}(y_pred, "
                                   f"sensitive_features) is gone: call {form}.")
    if sensitive_features is _MISSING:
        raise MetricSignatureError(f"{metric} needs sensitive_features=...; passing the groups as the second "
                                   f"positional argument was fairopt's old form: call {form}.")
    return sensitive_features


def demographic_parity_difference(y_true: ArrayLike | None, y_pred: Any = _MISSING, *legacy: object,
                                  sensitive_features: Any = _MISSING, method: _Method = "between_groups",
                                  sample_weight: ArrayLike | None = None, pos_label: object = 1) -> float:
    """Demographic (statistical) parity difference ``max_g P(y_hat=1|g) - min_g P(y_hat=1|g)``.

    fairlearn's signature; ``y_true`` is not read (pass it or ``None``). 0 means parity.
    ``method="to_overall"`` gives ``max_g |r_g - r|`` against the overall rate ``r``. Soft
    predictions in [0, 1] are averaged as expectations (fairlearn counts ``y_pred == 1``); with
    hard labels the value equals fairlearn's. A single group raises
    :class:`DataValidationError`; the old form ``(y_pred, sensitive_features)`` raises
    :class:`MetricSignatureError`. Used by Alabdulmohsin & Lucic (2021) (Definition 1,
    ``<= eps``) and as the DP violation of Rezaei et al. (2020).

    Parameters
    ----------
    y_true : array-like or None
        Ground truth (not read).
    y_pred : array-like of shape (n,)
        0/1 labels, probabilities of class 1, or labels compared with ``pos_label``.
    sensitive_features : array-like, Series, DataFrame, dict of columns
        Group membership; several columns give intersectional groups.
    method : {"between_groups", "to_overall"}
    sample_weight : array-like of shape (n,), optional
    pos_label : scalar, default 1
        fairopt's addition: the favourable label.

    Examples
    --------
    >>> from fairopt.metrics import demographic_parity_difference
    >>> demographic_parity_difference([0, 1, 0, 1], [1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    sf = _fairlearn_form("demographic_parity_difference", y_pred, legacy, sensitive_features)
    rates, overall, _ = _rates("selection", sf, y_pred=y_pred, sample_weight=sample_weight,
                               pos_label=pos_label, metric="demographic_parity_difference")
    return _difference(rates, overall, method)


def demographic_parity_ratio(y_true: ArrayLike | None, y_pred: Any = _MISSING, *legacy: object,
                             sensitive_features: Any = _MISSING, method: _Method = "between_groups",
                             sample_weight: ArrayLike | None = None, pos_label: object = 1) -> float:
    """Demographic parity ratio ``min_g r_g / max_g r_g``; with the default ``method`` it equals
    :func:`statistical_rate`.

    fairlearn's signature (``y_true`` is not read). ``method="to_overall"`` returns
    ``min_g min(r_g, r) / max(r_g, r)`` where ``r`` is the overall selection rate. Unlike
    fairlearn, all-zero rates give 1.0 instead of NaN.

    Examples
    --------
    >>> from fairopt.metrics import demographic_parity_ratio
    >>> demographic_parity_ratio(None, [1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    sf = _fairlearn_form("demographic_parity_ratio", y_pred, legacy, sensitive_features)
    rates, overall, _ = _rates("selection", sf, y_pred=y_pred, sample_weight=sample_weight,
                               pos_label=pos_label, metric="demographic_parity_ratio")
    return _ratio(rates, overall, method)


def equal_opportunity_difference(y_true: ArrayLike, y_pred: Any = _MISSING, *legacy: object,
                                 sensitive_features: Any = _MISSING, method: _Method = "between_groups",
                                 sample_weight: ArrayLike | None = None, pos_label: object = 1) -> float:
    """Equal opportunity difference: ``max_g TPR_g - min_g TPR_g``, ``TPR_g = P(y_hat=1 | y=1, g)``.

    fairlearn's signature. Soft predictions give expected TPRs; equals fairlearn's
    ``equal_opportunity_difference`` on hard labels. A group without positive labels makes the
    TPR undefined and raises :class:`DataValidationError`.

    Examples
    --------
    >>> from fairopt.metrics import equal_opportunity_difference
    >>> equal_opportunity_difference([1, 1, 1, 1], [1, 1, 0, 1], sensitive_features=["a", "a", "b", "b"])
    0.5
    """
    sf = _fairlearn_form("equal_opportunity_difference", y_pred, legacy, sensitive_features)
    rates, overall, _ = _rates("tpr", sf, y_pred=y_pred, y_true=y_true, sample_weight=sample_weight,
                               pos_label=pos_label, metric="equal_opportunity_difference")
    return _difference(rates, overall, method)


def equalized_odds_difference(y_true: ArrayLike, y_pred: Any = _MISSING, *legacy: object,
                              sensitive_features: Any = _MISSING, method: _Method = "between_groups",
                              sample_weight: ArrayLike | None = None, pos_label: object = 1,
                              agg: Literal["worst_case", "mean", "sum"] = "worst_case") -> float:
    """Equalized odds difference over the TPR and FPR group gaps (fairlearn's signature).

    With ``D_TPR = max_g TPR_g - min_g TPR_g`` and ``D_FPR`` likewise for
    ``FPR_g = P(y_hat=1 | y=0, g)``:

    - ``agg="worst_case"`` (default, fairlearn's default): ``max(D_TPR, D_FPR)``;
    - ``agg="mean"``: ``(D_TPR + D_FPR) / 2`` (fairlearn's ``agg="mean"``);
    - ``agg="sum"``: ``D_TPR + D_FPR``, the EOdd violation ``sum_y |...|`` reported by Rezaei et
      al. (2020) for two groups (fairopt's addition).

    Groups lacking positive or negative labels raise :class:`DataValidationError`.

    Examples
    --------
    >>> from fairopt.metrics import equalized_odds_difference
    >>> equalized_odds_difference([1, 0, 1, 0], [1, 0, 0, 1], sensitive_features=["a", "a", "b", "b"])
    1.0
    """
    sf = _fairlearn_form("equalized_odds_difference", y_pred, legacy, sensitive_features)
    if agg not in ("worst_case", "mean", "sum"):
        raise DataValidationError(f"agg must be 'worst_case', 'mean' or 'sum', got {agg!r}.")
    kw = {"y_pred": y_pred, "y_true": y_true, "sample_weight": sample_weight, "pos_label": pos_label,
          "metric": "equalized_odds_difference"}
    tpr, tpr_all, _ = _rates("tpr", sf, **kw)
    fpr, fpr_all, _ = _rates("fpr", sf, **kw)
    d_tpr, d_fpr = _difference(tpr, tpr_all, method), _difference(fpr, fpr_all, method)
    if agg == "worst_case":
        return max(d_tpr, d_fpr)
    return (d_tpr + d_fpr) / 2.0 if agg == "mean" else d_tpr + d_fpr
