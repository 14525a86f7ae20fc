"""Distances between a raw and a repaired or generated data distribution.

Used by Celis et al. (2020) to report how far generated data moves from the raw data: KL
divergence on small domains and the Frobenius norm of the covariance (or correlation) difference
on large ones. Calmon et al. (2017) also offer a KL utility.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.metrics._validation import as_1d, as_float, check_weights

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["DEFAULT_KL_SMOOTHING", "covariance_difference_norm", "kl_divergence"]

#: Probability mass added to every cell of ``q`` before renormalising (the value used in the
#: max-entropy paper's released evaluation code for cells unseen in the raw data).
DEFAULT_KL_SMOOTHING = 1e-7


def _record_counts(frame: pd.DataFrame, columns: list[Any], weights: ArrayLike | None, name: str) -> pd.Series:
    """Weighted count of every distinct record over ``columns``."""
    missing = frame[columns].isna().to_numpy()
    if missing.any():
        col = columns[int(np.argmax(missing.any(axis=0)))]
        raise DataValidationError(
            f"{name} has {int(missing.sum())} missing value(s) (e.g. in column {col!r}); impute or drop them, or "
            "encode missing as its own category.")
    w = check_weights(weights, len(frame), f"sample_weight_{name}")
    key = "__fairopt_weight__"
    table = frame[columns].assign(**{key: w})
    return table.groupby(columns, observed=True, sort=False)[key].sum()


def _aligned(p: Any, q: Any, sample_weight_p: ArrayLike | None,
             sample_weight_q: ArrayLike | None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    if isinstance(p, pd.DataFrame) or isinstance(q, pd.DataFrame):
        if not (isinstance(p, pd.DataFrame) and isinstance(q, pd.DataFrame)):
            raise DataValidationError("pass p and q both as DataFrames of records, or both as aligned counts.")
        if set(p.columns) != set(q.columns) or p.columns.has_duplicates or q.columns.has_duplicates:
            raise DataValidationError(
                f"p and q must have the same (unique) columns; p has {list(p.columns)}, q has {list(q.columns)}.")
        cols = list(p.columns)
        if len(p) == 0 or len(q) == 0:
            raise DataValidationError("p and q need at least one record each.")
        p, q = (_record_counts(p, cols, sample_weight_p, "p"), _record_counts(q, cols, sample_weight_q, "q"))
    elif sample_weight_p is not None or sample_weight_q is not None:
        raise DataValidationError("sample weights apply to DataFrames of records; for counts, weight the counts.")
    if isinstance(p, pd.Series) and isinstance(q, pd.Series):
        if p.index.has_duplicates or q.index.has_duplicates:
            raise DataValidationError("p and q indexes must label each cell once; aggregate duplicates first.")
        p, q = p.align(q, join="outer", fill_value=0.0)
    elif isinstance(p, pd.Series) or isinstance(q, pd.Series):
        raise DataValidationError("pass p and q both as Series (aligned by index) or both as arrays.")
    pa = np.asarray(p, dtype=float).ravel() if np.ndim(p) else None
    qa = np.asarray(q, dtype=float).ravel() if np.ndim(q) else None
    if pa is None or qa is None or np.shape(p) != np.shape(q):
        raise DataValidationError(
            f"p and q must be aligned arrays of the same shape; got {np.shape(p)} and {np.shape(q)}.")
    for arr, name in ((pa, "p"), (qa, "q")):
        as_float(arr, name)
        if (arr < 0).any():
            raise DataValidationError(f"{name} has negative entries; pass counts or probabilities.")
        if not arr.sum() > 0:
            raise DataValidationError(f"{name} sums to 0; it must have positive mass.")
    return pa, qa


def kl_divergence(p_counts_or_probs: ArrayLike | pd.Series | pd.DataFrame,
                  q_counts_or_probs: ArrayLike | pd.Series | pd.DataFrame,
                  smoothing: float | Literal["laplace"] = DEFAULT_KL_SMOOTHING, *,
                  sample_weight_p: ArrayLike | None = None, sample_weight_q: ArrayLike | None = None,
                  domain_size: int | None = None) -> float:
    """Kullback-Leibler divergence ``KL(p || q) = sum_x p(x) log(p(x) / q(x))`` in nats.

    Parameters
    ----------
    p_counts_or_probs, q_counts_or_probs : array-like, Series or DataFrame
        Either aligned arrays of the same shape (counts or probabilities over the cells of a
        domain; each is normalised to sum 1), Series aligned by index (missing cells are 0),
        or two DataFrames of records over the same columns (column order may differ), whose
        distinct rows are counted and aligned by value.
    smoothing : float or "laplace", default 1e-7
        Handling of cells where ``q`` is 0. A float ``s >= 0`` adds probability ``s`` to every
        cell of normalised ``q`` and renormalises: ``q~ = (q + s) / (1 + s |Omega|)``. The
        default 1e-7 is what Celis et al. (2020) use for cells unseen in the raw data.
        ``"laplace"`` adds one pseudo-count to every cell of ``q``'s counts:
        ``q~ = (c + 1) / (sum c + |Omega|)`` (meant for counts, not probabilities). With
        ``smoothing=0`` a cell with ``p > 0 = q`` gives ``inf``. ``p`` is never smoothed.
    sample_weight_p, sample_weight_q : array-like, optional
        Row weights for DataFrame inputs.
    domain_size : int, optional
        ``|Omega|``, the number of cells of the domain, when it exceeds the cells present in the
        inputs (records only show observed cells; cells unseen in both still take smoothing
        mass). Defaults to the number of aligned cells.

    Returns
    -------
    float
        ``KL(p || q) >= 0``, 0 iff the (smoothed) distributions agree; ``inf`` if unsmoothed
        ``q`` misses mass where ``p`` has some.

    Notes
    -----
    The direction matters: Celis et al. report ``KL(P_synthetic || P_raw)``, i.e. ``p`` is the
    generated data and ``q`` the raw data.

    Examples
    --------
    >>> round(kl_divergence([3.0, 1.0, 0.0], [2.0, 2.0, 2.0]), 6)
    0.536277
    """
    pa, qa = _aligned(p_counts_or_probs, q_counts_or_probs, sample_weight_p, sample_weight_q)
    cells = pa.size
    if domain_size is not None:
        if int(domain_size) < cells:
            raise DataValidationError(
                f"domain_size={domain_size} is smaller than the {cells} distinct cells in the inputs.")
        cells = int(domain_size)
    p = pa / pa.sum()
    if isinstance(smoothing, str):
        if smoothing != "laplace":
            raise DataValidationError(f"smoothing must be a float >= 0 or 'laplace', got {smoothing!r}.")
        q = (qa + 1.0) / (qa.sum() + float(cells))
    else:
        s = float(smoothing)
        if not (np.isfinite(s) and s >= 0):
            raise DataValidationError(f"smoothing must be a finite float >= 0 or 'laplace', got {smoothing!r}.")
        q = (qa / qa.sum() + s) / (1.0 + s * float(cells))
    support = p > 0
    if (q[support] <= 0).any():
        return float("inf")
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def _as_matrix(X: Any, name: str, columns: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any] | None]:
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        if columns is not None:
            if set(X.columns) != set(columns):
                raise DataValidationError(
                    f"{name} has columns {list(X.columns)} but the other sample has {list(columns)}; pass the same "
                    "columns (order may differ).")
            X = X[list(columns)]
        bad = [c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
        if bad:
            raise DataValidationError(
                f"{name} has non-numeric column(s) {bad}; encode them first (integer codes or one-hot).")
        return as_float(X.to_numpy(dtype=float), name), list(X.columns)
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataValidationError(f"{name} must be 2-D (rows x columns); got shape {arr.shape}.")
    return as_float(arr, name), None


def _weighted_cov(X: np.ndarray, w: np.ndarray, ddof: float, name: str) -> np.ndarray:
    total = w.sum()
    if not total - ddof > 0:
        raise DataValidationError(
            f"{name} has total weight {total:g}, too small for ddof={ddof}; pass more rows or ddof=0.")
    centred = X - (w @ X) / total
    out: np.ndarray = (centred * w[:, None]).T @ centred / (total - ddof)
    return out


def _to_corr(cov: np.ndarray, name: str, columns: list[Any] | None) -> np.ndarray:
    sd = np.sqrt(np.diag(cov))
    flat = ~(sd > 0)
    if flat.any():
        which = [columns[j] for j in np.flatnonzero(flat)] if columns else list(np.flatnonzero(flat))
        raise DataValidationError(
            f"{name} has constant column(s) {which[:5]}, whose correlation is undefined; drop them or use "
            "kind='cov'.")
    out: np.ndarray = cov / np.outer(sd, sd)
    return out


def covariance_difference_norm(X1: ArrayLike | pd.DataFrame, X2: ArrayLike | pd.DataFrame,
                               sample_weight1: ArrayLike | None = None, sample_weight2: ArrayLike | None = None, *,
                               kind: Literal["cov", "corr"] = "cov", squared: bool = False,
                               ddof: float = 0) -> float:
    """Frobenius norm ``||Cov(X1) - Cov(X2)||_F`` of the difference of (weighted) covariances.

    Parameters
    ----------
    X1, X2 : array-like of shape (n1, d) and (n2, d), or DataFrames
        Two samples over the same numeric columns (DataFrames are aligned by column name).
    sample_weight1, sample_weight2 : array-like, optional
        Non-negative row weights, with frequency semantics: weight k equals k repeated rows.
    kind : {"cov", "corr"}, default "cov"
        Compare covariance matrices, or Pearson correlation matrices (scale-free; the max-entropy
        paper's released code compares correlations).
    squared : bool, default False
        Return ``||.||_F^2`` (the paper's appendix) instead of ``||.||_F`` (its main text).
    ddof : int, default 0
        The covariance divides by ``sum(w) - ddof``; 0 gives the plug-in (population)
        covariance, 1 the unbiased one for frequency weights. Irrelevant for ``kind="corr"``.

    Returns
    -------
    float
        Symmetric in the two samples, 0 when their second moments agree.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> covariance_difference_norm(X, X)
    0.0
    >>> bool(covariance_difference_norm(X, 2 * X) > 1)
    True
    """
    if kind not in ("cov", "corr"):
        raise DataValidationError(f"kind must be 'cov' or 'corr', got {kind!r}.")
    A, cols = _as_matrix(X1, "X1")
    B, _ = _as_matrix(X2, "X2", columns=cols if isinstance(X2, (pd.DataFrame, pd.Series)) else None)
    if A.shape[1] != B.shape[1]:
        raise DataValidationError(f"X1 has {A.shape[1]} columns but X2 has {B.shape[1]}; pass the same columns.")
    covs = []
    for X, weights, name in ((A, sample_weight1, "X1"), (B, sample_weight2, "X2")):
        if X.shape[0] == 0:
            raise DataValidationError(f"{name} has no rows.")
        w = check_weights(as_1d(weights, f"sample_weight{name[-1]}", X.shape[0]) if weights is not None
                          else None, X.shape[0], f"sample_weight{name[-1]}")
        cov = _weighted_cov(X, w, ddof, name)
        covs.append(_to_corr(cov, name, cols) if kind == "corr" else cov)
    sq = float(np.sum((covs[0] - covs[1]) ** 2))
    return sq if squared else float(np.sqrt(sq))
