"""Builders of fairness constraint blocks over a decision vector ``x`` and group labels.

``x_i`` is the decision on candidate ``i``: a selection probability in [0, 1] or a 0/1 choice.
For group ``a`` with members ``i in a`` and nonnegative weights ``w_i`` the weighted rate is

    r_a(x) = sum_{i in a} w_i x_i / W_a,      W_a = sum_{i in a} w_i,

which is the selection rate (``w = 1``), the true positive rate (``w = y`` or a qualification
probability ``q``) or the false positive rate (``w = 1 - y``). Every builder returns a
:class:`~fairopt.constraints.block.FairnessBlock`; all coefficients are assembled in one
vectorised pass as sparse matrices.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt._docstrings import fill_doc
from fairopt._param_validation import RATE, RATIO, check_value
from fairopt.constraints._scaling import power_of_two
from fairopt.constraints.block import FairnessBlock, Sensitivity
from fairopt.criteria import CRITERIA, resolve
from fairopt.criteria import criterion as criterion_entry
from fairopt.errors import DataValidationError, ParameterError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


# ------------------------------------------------------------------------ inputs
def encode_groups(groups: ArrayLike) -> tuple[np.ndarray, pd.Index]:
    """Integer codes ``0..K-1`` and the sorted group labels (tuples for several columns), by
    :func:`fairopt.validation.check_groups`; a fairness block needs at least two groups.

    Examples
    --------
    >>> codes, labels = encode_groups(["b", "a", "b"])
    >>> codes.tolist(), list(labels)
    ([1, 0, 1], ['a', 'b'])
    """
    from fairopt.validation import check_groups
    g = check_groups(groups, min_groups=2, name="group labels")
    return np.asarray(g.codes, dtype=np.int64), g.labels


def _vector(values: ArrayLike, n: int, what: str, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.shape[0] != n:
        raise DataValidationError(f"{what} has {arr.shape[0]} entries; expected one per candidate ({n}).")
    bad = ~np.isfinite(arr)
    if lo is not None:
        bad |= arr < lo
    if hi is not None:
        bad |= arr > hi
    if bad.any():
        i = int(np.argmax(bad))
        rng = f" in [{lo}, {hi}]" if lo is not None and hi is not None else (f" >= {lo}" if lo is not None else "")
        raise DataValidationError(f"{what} must be finite{rng}; entry {i} is {arr[i]}.")
    return arr


def _labels01(y: ArrayLike, n: int) -> np.ndarray:
    arr = _vector(y, n, "labels y")
    if not np.isin(arr, (0.0, 1.0)).all():
        i = int(np.argmax(~np.isin(arr, (0.0, 1.0))))
        raise DataValidationError(f"labels y must be 0/1 (1 = qualified); entry {i} is {arr[i]}. "
                                  "For probabilities of qualification pass scores=... instead.")
    return arr


def _per_group(value: ArrayLike | Mapping[Any, float] | None, labels: pd.Index, what: str,
               default: float) -> np.ndarray:
    """A scalar, a ``{group: value}`` mapping or a sequence in label order -> one value per group."""
    K = len(labels)
    if value is None:
        return np.full(K, default)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in labels]
        if unknown:
            raise DataValidationError(f"{what}: unknown group(s) {unknown}; groups are {list(labels)}.")
        return np.array([float(value.get(g, default)) for g in labels])
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        return np.full(K, float(arr))
    if arr.shape != (K,):
        raise DataValidationError(f"{what}: give a scalar, a mapping group -> value, or {K} values in the "
                                  f"order {list(labels)}; got shape {arr.shape}.")
    return arr


def _group_matrix(codes: np.ndarray, K: int, w: np.ndarray) -> sp.csr_matrix:
    """``G[a, i] = w_i`` if candidate ``i`` is in group ``a``."""
    G = sp.csr_matrix((w, (codes, np.arange(codes.shape[0]))), shape=(K, codes.shape[0]))
    G.eliminate_zeros()
    return G


def _rate_matrix(codes: np.ndarray, labels: pd.Index, w: np.ndarray, meaning: str) -> sp.csr_matrix:
    """``R[a, i] = w_i / W_a``; raises when a group has no weight (its rate is undefined)."""
    W = np.bincount(codes, weights=w, minlength=len(labels))
    if (W <= 0).any():
        g = labels[int(np.argmax(W <= 0))]
        raise DataValidationError(f"group {g!r} has no {meaning}, so its rate is undefined; drop the group "
                                  "or merge it with another.")
    return _group_matrix(codes, len(labels), w / W[codes])


def _tolerance(eps: object, ratio: object, owner: str) -> tuple[str, float]:
    """The form and value of a parity tolerance, checked once here with the domains that
    :meth:`FairnessBlock.set_tolerance` checks later (``RATE``,
    ``RATIO``)."""
    if (eps is None) == (ratio is None):
        raise ParameterError(f"{owner}: give exactly one of eps (difference form: max rate - min rate <= eps) "
                             "or ratio (ratio form: min rate / max rate >= ratio; 0.8 is the four-fifths rule).")
    if eps is not None:
        check_value("eps", eps, [RATE], owner)   # a difference of rates
        return "difference", float(eps)  # type: ignore[arg-type]
    check_value("ratio", ratio, [RATIO], owner)  # min rate / max rate; 0.8 is the four-fifths rule
    return "ratio", float(ratio)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ rate parity (shared)
def _rate_parity(name: str, kind: str, groups: tuple[np.ndarray, pd.Index], rates: list[tuple[str, np.ndarray, str]],
                 eps: float | None, ratio: float | None) -> FairnessBlock:
    """Parity of the weighted rates ``rates = [(key, w, meaning)]``, each with its own level ``t``.

    Difference form, ``t`` = lowest rate:  ``r_a - t >= 0`` and ``r_a - t <= eps``.
    Ratio form,      ``t`` = highest rate: ``r_a - t <= 0`` and ``r_a - ratio * t >= 0``.
    Both are exact reformulations of ``max_a r_a - min_a r_a <= eps`` and
    ``min_a r_a >= ratio * max_a r_a`` with K rows per side instead of K(K-1)/2 pairs.
    """
    form, value = _tolerance(eps, ratio, kind)
    codes, labels = groups
    K, p = len(labels), len(rates)
    R = sp.vstack([_rate_matrix(codes, labels, w, meaning) for _, w, meaning in rates], format="csr")
    E = np.kron(np.eye(p), np.ones((K, 1)))  # row (j, a) -> level t_j
    first, second = (1.0, -1.0) if form == "difference" else (-1.0, 1.0)
    A = sp.vstack([R, R], format="csr")
    if form == "difference":
        T = np.vstack([-E, -E])
        bound = np.concatenate([np.zeros(p * K), np.full(p * K, value)])
        sens = Sensitivity(dbound=np.concatenate([np.zeros(p * K), np.ones(p * K)]), domain=RATE)
        rel = ("- {k}_min >= 0", "- {k}_min <= eps")
    else:
        T = np.vstack([-E, -value * E])
        bound = np.zeros(2 * p * K)
        # d(r_a - ratio t)/d ratio = -t on the second half
        sens = Sensitivity(dbound=np.zeros(2 * p * K), dT=np.vstack([np.zeros((p * K, p)), -E]), domain=RATIO)
        rel = ("- {k}_max <= 0", "- ratio*{k}_max >= 0")
    sense = np.concatenate([np.full(p * K, first), np.full(p * K, second)]).astype(np.int8)
    keys = [k for k, _, _ in rates]
    row_labels = [f"{k}[{g}] {r.format(k=k)}" for r in rel for k in keys for g in labels]
    aux = [f"{k}_{'min' if form == 'difference' else 'max'}" for k in keys]
    param = "eps" if form == "difference" else "ratio"
    return FairnessBlock(name=name, kind=f"{kind}_{form}", groups=labels, A=A, T=T, sense=sense,
                         bound=bound, row_labels=row_labels, aux_names=aux, parameters={param: value},
                         sensitivity={param: sens})


def _event_rates(which: str, q: np.ndarray | None, w: np.ndarray) -> list[tuple[str, np.ndarray, str]]:
    """The weighted rates compared by criterion ``which``, from its registry entry's binary events
    (:meth:`fairopt.criteria.Criterion.events` with classes ``(1, 0)``, favourable 1):
    ``(key, weight of each candidate, what a group with no weight lacks)``. All rows: the
    selection rate (weights ``w``); ``Y = 1``: the true positive rate (weights ``q``, the
    qualification); ``Y = 0``: the false positive rate (weights ``1 - q``)."""
    rates = []
    for e in criterion_entry(which).events((1, 0), positive=1):
        if e.given is None:
            rates.append(("selection_rate", w, "candidates with positive weight"))
        else:
            assert q is not None   # a label-conditioned criterion (needs_labels): q was read
            rates.append(("tpr", q, "qualified members (y = 1 or score > 0)") if e.given == 1
                         else ("fpr", 1.0 - q, "unqualified members (y = 0 or score < 1)"))
    return rates


@fill_doc
def selection_rate_parity(groups: ArrayLike, *, eps: float | None = None, ratio: float | None = None,
                          weights: ArrayLike | None = None, name: str = "selection_rate_parity") -> FairnessBlock:
    """Statistical (demographic) parity of selection rates across K groups.

    Difference form (``eps``): ``max_a r_a(x) - min_a r_a(x) <= eps``. Ratio form (``ratio``):
    ``min_a r_a(x) >= ratio * max_a r_a(x)`` (``ratio = 0.8`` is the four-fifths rule of
    disparate impact). ``r_a`` is the (``weights``-weighted) share of group ``a`` that is selected.

    Parameters
    ----------
    groups : array-like of shape (n,) or DataFrame
        Group label of each candidate (several columns: intersectional groups).
    eps, ratio : float
        Exactly one: the allowed rate difference in [0, 1], or the allowed rate ratio in (0, 1].
    weights : array-like of shape (n,), optional
        Nonnegative candidate weights (e.g. how many applicants a row stands for).
    name : str
        Name of the constraint block (a Python identifier).

    Returns
    -------
    FairnessBlock
        Rows ``name`` with auxiliary level variable ``selection_rate_min`` (difference form) or
        ``selection_rate_max`` (ratio form). Its price of fairness is ``d f*/d eps`` or
        ``d f*/d ratio``.

    Examples
    --------
    {example_shortlist_program}
    >>> parity = selection_rate_parity(groups, eps=0.0)
    >>> _ = parity.add_to(prog, "x")
    >>> sol = prog.solve()
    >>> (sol.primal["x"] > 0.5).tolist()
    [True, False, True, False]
    """
    codes, labels = encode_groups(groups)
    n = codes.shape[0]
    w = np.ones(n) if weights is None else _vector(weights, n, "weights", lo=0.0)
    return _rate_parity(name, "selection_rate_parity", (codes, labels), _event_rates("demographic_parity", None, w),
                        eps, ratio)


def _qualification(y: ArrayLike | None, scores: ArrayLike | None, n: int) -> np.ndarray:
    if (y is None) == (scores is None):
        raise DataValidationError("give exactly one of y (0/1 labels, 1 = qualified) or scores "
                                  "(probability in [0, 1] that each candidate is qualified).")
    if y is not None:
        return _labels01(y, n)
    assert scores is not None  # exactly one of y and scores is given (checked above)
    return _vector(scores, n, "scores", lo=0.0, hi=1.0)


def equal_opportunity(groups: ArrayLike, y: ArrayLike | None = None, *,
                      scores: ArrayLike | None = None, eps: float | None = None,
                      ratio: float | None = None, name: str = "equal_opportunity") -> FairnessBlock:
    """Parity of true positive rates: among qualified candidates, each group is selected at the
    same rate up to ``eps`` (or ``ratio``).

    With labels ``y`` the rate of group ``a`` is ``sum_{i in a, y_i = 1} x_i / |{i in a: y_i = 1}|``;
    with qualification probabilities ``scores = q`` it is the expected rate
    ``sum_{i in a} q_i x_i / sum_{i in a} q_i``. Other parameters as in
    :func:`selection_rate_parity`.

    Examples
    --------
    Equal selection rates among the qualified candidates (``y = 1``) of each group:

    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> groups = np.array(["a", "a", "b", "b"])
    >>> y = np.array([1, 0, 1, 1])
    >>> prog = Program("hire")
    >>> _ = prog.add_variables("x", shape=4, lb=0, ub=1)
    >>> _ = prog.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
    >>> prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")
    >>> _ = equal_opportunity(groups, y, eps=0.0).add_to(prog, "x")
    >>> sol = prog.solve()
    >>> x = sol.primal["x"]
    >>> round(float(x[0]), 6) == round(float(x[2:].mean()), 6)
    True
    """
    codes, labels = encode_groups(groups)
    q = _qualification(y, scores, codes.shape[0])
    return _rate_parity(name, "equal_opportunity", (codes, labels), _event_rates("equal_opportunity", q, q),
                        eps, ratio)


def equalized_odds(groups: ArrayLike, y: ArrayLike | None = None, *,
                   scores: ArrayLike | None = None, eps: float | None = None,
                   ratio: float | None = None, name: str = "equalized_odds") -> FairnessBlock:
    """Parity of true positive rates *and* of false positive rates across groups, each up to
    ``eps`` (or ``ratio``); see :func:`equal_opportunity` for ``y`` / ``scores``. The false
    positive rate weights candidate ``i`` by ``1 - q_i``.

    Examples
    --------
    >>> import numpy as np
    >>> groups = np.array(["a", "a", "b", "b"])
    >>> from fairopt.modeling import Program
    >>> prog = Program("hire")
    >>> _ = prog.add_variables("x", shape=4, lb=0, ub=1)
    >>> _ = prog.add_constraints("size", {"x": np.ones((1, 4))}, ub=2)
    >>> prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")
    >>> _ = equalized_odds(groups, np.array([1, 0, 1, 0]), eps=0.0).add_to(prog, "x")
    >>> (prog.solve().primal["x"] > 0.5).tolist()
    [True, False, True, False]
    """
    codes, labels = encode_groups(groups)
    q = _qualification(y, scores, codes.shape[0])
    return _rate_parity(name, "equalized_odds", (codes, labels), _event_rates("equalized_odds", q, q), eps, ratio)


# ------------------------------------------------------------------------ representation
def representation_bounds(groups: ArrayLike, lower: ArrayLike | Mapping[Any, float] = 0.0,
                          upper: ArrayLike | Mapping[Any, float] = 1.0, *, weights: ArrayLike | None = None,
                          name: str = "representation") -> FairnessBlock:
    """Each group's share of the selection lies in ``[lower_a, upper_a]``.

    With ``S_a = sum_{i in a} w_i x_i`` and ``S = sum_a S_a`` the rows are the linear forms
    ``S_a - lower_a S >= 0`` and ``S_a - upper_a S <= 0`` (only for ``lower_a > 0`` and
    ``upper_a < 1``; the others hold for any nonnegative selection).

    Parameters
    ----------
    lower, upper : float, mapping group -> float, or sequence in label order
        Share bounds in [0, 1], ``lower_a <= upper_a``, ``sum lower <= 1 <= sum upper``.
    weights : array-like of shape (n,), optional
        Nonnegative candidate weights (default 1: shares of the selected head count).

    Returns
    -------
    FairnessBlock
        Tolerances ``lower[g]`` / ``upper[g]``; their prices are ``d f*/d lower_g`` and
        ``d f*/d upper_g``.

    Examples
    --------
    Each group's share of the selected mass between 40 % and 60 %:

    >>> import numpy as np
    >>> block = representation_bounds(np.array(["a", "a", "a", "b"]), lower=0.4, upper=0.6)
    >>> float(block.violation(np.array([1.0, 0.0, 0.0, 1.0]))) <= 1e-12
    True
    >>> float(block.violation(np.array([1.0, 1.0, 1.0, 0.0]))) > 0
    True
    """
    codes, labels = encode_groups(groups)
    n = codes.shape[0]
    w = np.ones(n) if weights is None else _vector(weights, n, "weights", lo=0.0)
    lo = _per_group(lower, labels, "lower", 0.0)
    hi = _per_group(upper, labels, "upper", 1.0)
    if (lo < 0).any() or (hi > 1).any() or (lo > hi).any() or not np.isfinite(np.r_[lo, hi]).all():
        raise DataValidationError(f"representation bounds need 0 <= lower <= upper <= 1 per group; got "
                                  f"lower={lo.tolist()}, upper={hi.tolist()} for groups {list(labels)}.")
    if lo.sum() > 1 + 1e-12 or hi.sum() < 1 - 1e-12:
        raise DataValidationError(f"representation bounds are contradictory: lower shares sum to {lo.sum():g} "
                                  f"and upper shares to {hi.sum():g}; need sum(lower) <= 1 <= sum(upper), "
                                  "otherwise only the empty selection satisfies them.")
    G = _group_matrix(codes, len(labels), w).toarray()
    total = w[None, :]
    low, up = np.flatnonzero(lo > 0), np.flatnonzero(hi < 1)
    A = sp.csr_matrix(np.vstack([G[low] - lo[low, None] * total, G[up] - hi[up, None] * total]))
    m = low.size + up.size
    sens, params = {}, {}
    for j, (idx, vals, key) in enumerate(((low, lo, "lower"), (up, hi, "upper"))):
        for r, a in enumerate(idx):
            row = r + (0 if j == 0 else low.size)  # d(S_a - v S)/dv = -S on that row
            sens[f"{key}[{labels[a]}]"] = Sensitivity(
                dbound=np.zeros(m), dA=sp.csr_matrix((-w, (np.full(n, row), np.arange(n))), shape=(m, n)),
                domain=RATE)   # a share
            params[f"{key}[{labels[a]}]"] = float(vals[a])
    sense = np.r_[np.ones(low.size), -np.ones(up.size)].astype(np.int8)
    row_labels = ([f"share[{labels[a]}] >= {lo[a]:g}" for a in low]
                  + [f"share[{labels[a]}] <= {hi[a]:g}" for a in up])
    return FairnessBlock(name=name, kind="representation_bounds", groups=labels, A=A, T=np.zeros((m, 0)),
                         sense=sense, bound=np.zeros(m), row_labels=row_labels, aux_names=[],
                         parameters=params, sensitivity=sens)


# ------------------------------------------------------------------------ group cost
def group_cost_bounds(groups: ArrayLike, cost: ArrayLike, lower: ArrayLike | Mapping[Any, float] | None = None,
                      upper: ArrayLike | Mapping[Any, float] | None = None, *, normalize: str = "sum",
                      name: str = "group_cost") -> FairnessBlock:
    """Bound each group's cost ``C_a(x) = sum_{i in a} c_i x_i`` (``normalize="sum"``) or its
    mean over the group's members (``normalize="mean"``) to ``[lower_a, upper_a]``.

    Use it for per-group budgets (``upper``), guaranteed minimum spend or benefit per group
    (``lower`` with ``c`` = benefit), or a bounded group loss. ``lower``/``upper`` are scalars,
    mappings group -> value or sequences in label order; ``None`` (or infinite) means no bound.
    Tolerances ``lower[g]`` / ``upper[g]``; their prices are ``d f*/d bound``.

    Parameters
    ----------
    groups : array-like of shape (n,) or DataFrame
        Group label of each candidate.
    cost : array-like of shape (n,)
        Cost (or benefit, or loss) ``c_i`` of selecting candidate ``i``.
    lower, upper : float, mapping or sequence, optional
        Bounds per group (scalars apply to every group); ``None`` means no bound.
    normalize : {"sum", "mean"}, default "sum"
        Bound the group's total cost or its mean over the group's members.
    name : str
        Name of the constraint block (a Python identifier).

    Returns
    -------
    FairnessBlock
        One row per finite bound; its prices are ``d f*/d lower[g]`` and ``d f*/d upper[g]``.

    Examples
    --------
    A budget of 0.7 per group:

    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> block = group_cost_bounds(np.array(["a", "a", "b"]), cost=[1.0, 1.0, 1.0], upper=0.7)
    >>> prog = Program("spend")
    >>> _ = prog.add_variables("x", shape=3, lb=0, ub=1)
    >>> prog.set_objective(linear={"x": [3.0, 2.0, 1.0]}, sense="maximize")
    >>> _ = block.add_to(prog, "x")
    >>> prog.solve().primal["x"].round(6).tolist()
    [0.7, 0.0, 0.7]
    """
    codes, labels = encode_groups(groups)
    n, K = codes.shape[0], len(labels)
    c = _vector(cost, n, "cost")
    if normalize not in ("sum", "mean"):
        raise DataValidationError(f"normalize must be 'sum' or 'mean', got {normalize!r}.")
    if lower is None and upper is None:
        raise DataValidationError("group_cost_bounds needs lower and/or upper bounds.")
    lo = _per_group(lower, labels, "lower", -np.inf)
    hi = _per_group(upper, labels, "upper", np.inf)
    if np.isnan(np.r_[lo, hi]).any() or (lo > hi).any():
        raise DataValidationError(f"group cost bounds need lower <= upper per group; got lower={lo.tolist()}, "
                                  f"upper={hi.tolist()} for groups {list(labels)}.")
    scale = 1.0 / np.bincount(codes, minlength=K) if normalize == "mean" else np.ones(K)
    f = 1.0 / power_of_two(float(np.abs(c * scale[codes]).max()))   # rows of magnitude ~1
    C = _group_matrix(codes, K, c * scale[codes] * f)
    low, up = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
    A = sp.vstack([C[low], C[up]], format="csr")
    m = low.size + up.size
    sens, params = {}, {}
    for j, (idx, vals, key) in enumerate(((low, lo, "lower"), (up, hi, "upper"))):
        for r, a in enumerate(idx):
            e = np.zeros(m)
            e[r + (0 if j == 0 else low.size)] = f
            sens[f"{key}[{labels[a]}]"], params[f"{key}[{labels[a]}]"] = Sensitivity(dbound=e), float(vals[a])
    word = "cost" if normalize == "sum" else "mean_cost"
    return FairnessBlock(
        name=name, kind="group_cost_bounds", groups=labels, A=A, T=np.zeros((m, 0)),
        sense=np.r_[np.ones(low.size), -np.ones(up.size)].astype(np.int8),
        bound=np.r_[lo[low], hi[up]] * f, aux_names=[], parameters=params, sensitivity=sens,
        row_labels=[f"{word}[{labels[a]}] >= {lo[a]:g}" for a in low]
        + [f"{word}[{labels[a]}] <= {hi[a]:g}" for a in up])


# ------------------------------------------------------------------------ by criterion name
def rate_parity(criterion: str, groups: ArrayLike, y: ArrayLike | None = None, *,
                scores: ArrayLike | None = None, eps: float | None = None,
                ratio: float | None = None, name: str | None = None) -> FairnessBlock:
    """The block of a rate criterion named as everywhere else in fairopt (aliases resolved by
    :mod:`fairopt.criteria`): ``demographic_parity`` (alias ``statistical_parity``) is
    :func:`selection_rate_parity`, ``equal_opportunity`` and ``equalized_odds`` the functions of
    those names (they need ``y`` or ``scores``).

    Examples
    --------
    >>> block = rate_parity("statistical_parity", ["a", "a", "b", "b"], eps=0.1)
    >>> block.kind, block.m
    ('selection_rate_parity_difference', 4)
    """
    which = resolve(criterion, [c.name for c in CRITERIA.values() if c.is_rate], "criterion")
    if not criterion_entry(which).needs_labels:
        if y is not None or scores is not None:
            raise DataValidationError(f"{which} compares all candidates: drop y/scores "
                                      "(or choose a criterion conditioned on the label, e.g. equal_opportunity).")
        return selection_rate_parity(groups, eps=eps, ratio=ratio, name=name or which)
    codes, labels = encode_groups(groups)
    q = _qualification(y, scores, codes.shape[0])
    return _rate_parity(name or which, which, (codes, labels), _event_rates(which, q, q), eps, ratio)
