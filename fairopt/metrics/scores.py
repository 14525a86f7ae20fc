"""Statistical parity of real-valued predictions (Agarwal, Dudik & Wu, 2019).

For a score ``f`` and group ``a`` the paper's moment is
``gamma_{a,z} = P(f >= z | A = a) - P(f >= z)``, a difference of survival functions against the
**pooled** one (which includes group ``a``). The SP disparity is
``max_a sup_z |gamma_{a,z}|``: a Kolmogorov-Smirnov distance between each group's score
distribution and the pooled distribution. It is invariant under strictly increasing transforms
of the score, and ``sum_a P(A=a) gamma_{a,z} = 0`` for every ``z``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast, overload

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.metrics._validation import as_1d, as_float, check_weights, group_means, require_groups
from fairopt.validation import Groups, check_groups

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["ks_statistical_parity", "statistical_parity_gamma"]


def _survival(counts: np.ndarray) -> np.ndarray:
    """``out[j] = sum(counts[j:]) / sum(counts)`` with a trailing 0 (threshold above every value)."""
    tail = np.cumsum(counts[::-1])[::-1]
    out: np.ndarray = np.append(tail, 0.0) / tail[0]
    return out


def _prepare(y_score: ArrayLike, sensitive_features: Any, sample_weight: ArrayLike | None
             ) -> tuple[Groups, NDArray[np.float64], NDArray[np.float64], NDArray[np.intp], NDArray[np.float64],
                        NDArray[np.intp], NDArray[np.intp]]:
    s = as_float(as_1d(y_score, "y_score"), "y_score")
    n = s.shape[0]
    if n == 0:
        raise DataValidationError("y_score is empty; statistical parity needs at least one row per group.")
    grp = check_groups(sensitive_features, n)
    w = check_weights(sample_weight, n)
    group_means(grp, None, w, "P(f >= z | group)")  # raises on zero-weight groups
    values, k = np.unique(s, return_inverse=True)
    pooled = _survival(np.bincount(k, weights=w, minlength=values.size))
    order = np.argsort(grp.codes, kind="stable")
    bounds = np.searchsorted(grp.codes[order], np.arange(grp.n_groups + 1))
    return grp, w, values, k, pooled, order, bounds


def _check_grid(grid: ArrayLike) -> NDArray[np.float64]:
    z = as_float(as_1d(grid, "grid"), "grid")
    if z.size == 0:
        raise DataValidationError("grid is empty; pass at least one threshold or grid=None for the exact sweep.")
    return z


def _group_survival(k: NDArray[np.intp], w: NDArray[np.float64], order: NDArray[np.intp], lo: int,
                    hi: int) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Distinct pooled value indices held by one group, and the group's survival on them."""
    rows = order[lo:hi]
    idx, inv = np.unique(k[rows], return_inverse=True)
    return idx, _survival(np.bincount(inv, weights=w[rows], minlength=idx.size))


@overload
def ks_statistical_parity(y_score: ArrayLike, sensitive_features: Any, sample_weight: ArrayLike | None = ...,
                          grid: ArrayLike | None = ..., *, return_groups: Literal[False] = ...) -> float: ...
@overload
def ks_statistical_parity(y_score: ArrayLike, sensitive_features: Any, sample_weight: ArrayLike | None = ...,
                          grid: ArrayLike | None = ..., *,
                          return_groups: Literal[True]) -> tuple[float, pd.Series]: ...
def ks_statistical_parity(y_score: ArrayLike, sensitive_features: Any, sample_weight: ArrayLike | None = None,
                          grid: ArrayLike | None = None, *,
                          return_groups: bool = False) -> float | tuple[float, pd.Series]:
    """SP disparity ``max_a sup_z |P(f >= z | A=a) - P(f >= z)|`` of real-valued predictions.

    Parameters
    ----------
    y_score : array-like of shape (n,)
        Real-valued predictions ``f(X)`` (any finite reals; the paper's are in [0, 1]).
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Protected attribute ``A``; several columns give intersectional groups.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights, used in both the group and the pooled survival functions.
    grid : array-like of thresholds, optional
        Evaluate ``z`` only on these values (e.g. the paper's ``{1/N, ..., 1}``). By default
        the supremum over all real ``z`` is computed exactly.
    return_groups : bool, default False
        Also return ``sup_z |gamma_{a,z}|`` per group.

    Returns
    -------
    float, or (float, pandas.Series) if ``return_groups``
        The disparity in [0, 1]; 0 means the score distribution is the same in every group.

    Notes
    -----
    Exact mode sorts the scores once (``O(n log n)``) and sweeps. Within a group the survival
    function only changes at that group's distinct values while the pooled one is non-increasing,
    so ``sup_z`` is attained at a group value or at the next pooled value above one; each group is
    evaluated at those ``O(n_a)`` points, for ``O(n log n)`` in total whatever the number of
    groups. Both survival functions are left-continuous step functions, so ``z`` just above the
    largest score (where both vanish) and ``z`` at most the smallest (both 1) contribute 0.

    A single group raises :class:`DataValidationError`. Invariant under any strictly increasing transform of ``y_score``
    in exact mode (on a grid, transform the grid too).

    Examples
    --------
    >>> scores = [0.1, 0.4, 0.35, 0.8, 0.6, 0.2]
    >>> round(ks_statistical_parity(scores, ["a", "a", "a", "b", "b", "b"]), 6)
    0.333333
    """
    grp, w, values, k, pooled, order, bounds = _prepare(y_score, sensitive_features, sample_weight)
    require_groups(grp, "ks_statistical_parity")
    z = None if grid is None else _check_grid(grid)
    pooled_at_z = None if z is None else pooled[np.searchsorted(values, z, side="left")]
    per_group = np.empty(grp.n_groups)
    for g in range(grp.n_groups):  # loop over groups, vectorised within a group
        idx, surv = _group_survival(k, w, order, bounds[g], bounds[g + 1])
        if z is None:
            gap_at = np.abs(surv[:-1] - pooled[idx])
            gap_next = np.abs(surv[1:] - pooled[idx + 1])
            per_group[g] = max(gap_at.max(), gap_next.max())
        else:
            own = surv[np.searchsorted(values[idx], z, side="left")]
            per_group[g] = np.abs(own - cast("NDArray[np.float64]", pooled_at_z)).max()   # set with z
    value = float(per_group.max())
    if return_groups:
        return value, pd.Series(per_group, index=grp.labels, name="ks_statistical_parity")
    return value


def statistical_parity_gamma(y_score: ArrayLike, sensitive_features: Any, grid: ArrayLike,
                             sample_weight: ArrayLike | None = None) -> pd.DataFrame:
    """Signed moments ``gamma_{a,z} = P(f >= z | A=a) - P(f >= z)`` on a grid of thresholds.

    Parameters
    ----------
    y_score : array-like of shape (n,)
        Real-valued predictions.
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Protected attribute.
    grid : array-like of shape (N,)
        Thresholds ``z``.
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights.

    Returns
    -------
    pandas.DataFrame
        Groups as rows, thresholds as columns. With weighted shares ``p_a`` every column
        satisfies ``sum_a p_a gamma_{a,z} = 0``; ``abs().to_numpy().max()`` equals
        :func:`ks_statistical_parity` on the same grid.

    Examples
    --------
    >>> scores = [0.1, 0.4, 0.35, 0.8, 0.6, 0.2]
    >>> gamma = statistical_parity_gamma(scores, ["a", "a", "a", "b", "b", "b"], grid=[0.3, 0.5])
    >>> gamma.round(6).values.tolist()
    [[0.0, -0.333333], [0.0, 0.333333]]
    """
    grp, w, values, k, pooled, order, bounds = _prepare(y_score, sensitive_features, sample_weight)
    z = _check_grid(grid)
    pooled_at_z = pooled[np.searchsorted(values, z, side="left")]
    gamma = np.empty((grp.n_groups, z.size))
    for g in range(grp.n_groups):
        idx, surv = _group_survival(k, w, order, bounds[g], bounds[g + 1])
        gamma[g] = surv[np.searchsorted(values[idx], z, side="left")] - pooled_at_z
    return pd.DataFrame(gamma, index=grp.labels, columns=pd.Index(z, name="z"))
