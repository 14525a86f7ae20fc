"""ThresholdDebiaser on sufficient statistics: quantised scores (``score_bins``), chunked files
(memmap, ``.npy``) and Dask collections.

The fit reads the sample only through per-group score atoms (exact) or per-group histograms of
scores on ``score_bins`` equal bins (:mod:`fairopt.stats`); calibration is fitted on the same
statistics; the formulations solve on the driver. Predictions on a Dask input are a Dask
collection computed block by block.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from fairopt.criteria import criterion
from fairopt.errors import ConfigError, DataValidationError
from fairopt.postprocessing._scores import Source, map_scores
from fairopt.stats import (
    as_source,
    check_histogram_size,
    group_labels,
    is_dask,
    is_lazy,
    labels_and_range,
    n_rows,
    quantise,
    score_atoms,
    score_histogram,
)

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.formulations.constrained_classification import IsotonicScoreMap
    from fairopt.stats._atoms import ScoreAtoms


def lazy_input(*args: object) -> bool:
    """Any argument is a Dask collection, a memmap or a file path (fit by statistics)."""
    return any(a is not None and is_lazy(a) for a in args)


def check_score_bins(score_bins: object) -> int | None:
    """``None`` or an integer >= 2."""
    if score_bins is None:
        return None
    if isinstance(score_bins, bool) or not isinstance(score_bins, (int, np.integer)) or score_bins < 2:
        raise ConfigError(f"score_bins must be None (exact scores) or an integer >= 2, got {score_bins!r}.")
    return int(score_bins)


def fit_lazy(est: BaseEstimator, X: Source, y: Source | None, sensitive_features: Source | None,
             subgroups: ArrayLike | None, sample_weight: Source | None, constraint: str) -> BaseEstimator:
    """Fit from chunked / Dask sources: scores are ``X`` (``estimator=None``)."""
    if est.estimator is not None:
        raise DataValidationError(
            "chunked and Dask inputs need estimator=None with the scores as X (score the rows where "
            "they live, e.g. ddf.map_partitions(model.predict_proba)), so that no row reaches the driver.")
    cols, joint = _frame_columns(X, sensitive_features), None
    if cols is not None:       # column names of a Dask DataFrame, as in memory
        X, sensitive_features, joint = _split_dask_frame(X, cols)
    elif _several_columns(sensitive_features):    # a Dask frame of several sensitive columns
        sensitive_features, joint = _joint_groups(sensitive_features)
    elif sensitive_features is None or (isinstance(sensitive_features, (str, list, tuple, dict, pd.DataFrame))
                                        and not is_lazy(sensitive_features)):
        raise DataValidationError(
            "with a chunked or Dask X, pass sensitive_features as an array of the same kind (Dask array or "
            "Series, memmap or .npy path) with one group label per row, or column names of a Dask DataFrame X.")
    if subgroups is not None:
        raise DataValidationError("subgroups (covariance) are supported for in-memory inputs only; pass "
                                  "NumPy arrays or omit subgroups.")
    if getattr(est, "pos_label", None) not in (None, 1):
        raise DataValidationError(
            f"pos_label={est.pos_label!r}: chunked and Dask fits read y as 0/1 labels with 1 the favourable one; "
            "encode y where it lives, e.g. (y == favourable).astype(int), and leave pos_label=None.")
    est._check_score_map()
    kind = "identity" if est.score_map == "auto" else est.score_map
    f, g = as_source(X, "X", numeric=True), as_source(sensitive_features, "sensitive_features")
    yv = as_source(y, "y", numeric=True)
    w = as_source(sample_weight, "sample_weight", numeric=True)
    n = n_rows(f)
    if n == 0:
        raise DataValidationError("X has no rows.")
    smap = partial(map_scores, kind=kind)
    bins = check_score_bins(est.score_bins)
    if bins is None:
        labels, grid = group_labels(g), None
    else:
        check_histogram_size(bins, 2)      # refused before any pass over the data (at least two groups)
        # labels and score ranges in one pass over the data
        labels, lo, hi = labels_and_range(f, g, score_map=smap)
        grid = (lo, hi)
    # several columns: the rows carry codes of the joint labels (tuples, sorted as in memory)
    est.groups_ = pd.Index(labels) if joint is None else joint
    est.sensitive_columns_ = cols
    est.classes_, est.pos_label_, est._pos_index = np.array([0, 1]), 1, 1   # y is read as 0/1 labels
    est.n_features_in_ = 1
    return fit_statistics(est, f, g, labels, yv, w, constraint, smap, grid)


def _frame_columns(X: Any, sensitive_features: Any) -> list[str] | None:
    """Column names of a Dask DataFrame ``X`` that ``sensitive_features`` names (``None``: it names none)."""
    if not (is_dask(X) and hasattr(X, "columns")):
        return None
    if isinstance(sensitive_features, str):
        cols = [sensitive_features]
    elif (isinstance(sensitive_features, (list, tuple)) and sensitive_features
          and all(isinstance(c, str) for c in sensitive_features)):
        cols = list(sensitive_features)
    else:
        return None
    missing = [c for c in cols if c not in X.columns]
    if missing:
        raise DataValidationError(f"sensitive_features names {missing}: not a column of X, i.e. not in X's columns "
                                  f"{list(X.columns)[:20]}; pass existing column names or a Dask Series.")
    if len(set(cols)) != len(cols):
        raise DataValidationError(f"sensitive_features names a column twice: {cols}.")
    return cols


def _split_dask_frame(X: Any, cols: list[str], joint: pd.Index | None = None) -> tuple[Any, Any, pd.Index | None]:
    """The score column and the group labels of a Dask DataFrame whose columns ``cols`` are the
    sensitive features. One column: its values. Several: codes of the sorted distinct label tuples
    (``joint``, read from the data at fit; given at predict), the labels the in-memory fit has."""
    rest = [c for c in X.columns if c not in cols]
    if len(rest) != 1:
        raise DataValidationError(f"a Dask DataFrame X must hold the score column and the sensitive column(s) {cols} "
                                  f"only, got the other columns {rest[:10]}; select them, e.g. X[['score', *{cols}]].")
    f = X[rest[0]]
    if len(cols) == 1:
        return f, X[cols[0]], None
    codes, joint = _joint_groups(X[cols], joint)
    return f, codes, joint


def _joint_groups(frame: Any, joint: pd.Index | None = None) -> tuple[Any, pd.Index]:
    """Codes (a Dask Series) of the rows' label tuples of a several-column Dask frame of sensitive
    features among ``joint`` (the sorted distinct tuples: read from the data at fit, given at predict)."""
    cols = list(frame.columns)
    if joint is None:      # the distinct combinations are few: they come back to the driver
        distinct = frame.drop_duplicates().compute().sort_values(cols, kind="stable")
        joint = pd.MultiIndex.from_frame(distinct.reset_index(drop=True)).to_flat_index()
    index = pd.MultiIndex.from_tuples(list(joint), names=cols)
    codes = frame.map_partitions(partial(_joint_codes, index=index), meta=(None, "int64"))
    return codes, pd.Index(list(joint), tupleize_cols=False)


def _several_columns(sensitive_features: Any) -> bool:
    """A Dask DataFrame of two or more sensitive columns (one label tuple per row)."""
    return is_dask(sensitive_features) and getattr(sensitive_features, "ndim", 1) == 2 \
        and len(sensitive_features.columns) > 1


def _joint_codes(part: pd.DataFrame, index: pd.MultiIndex) -> pd.Series:
    """Position of each row's label tuple in ``index`` (one partition; an unseen tuple raises)."""
    codes = index.get_indexer(pd.MultiIndex.from_frame(part))
    if (codes < 0).any():
        bad = part[codes < 0].drop_duplicates().head(5).to_records(index=False).tolist()
        raise DataValidationError(f"sensitive_features has group(s) {bad} not seen at fit.")
    return pd.Series(codes, index=part.index, dtype="int64")


def fit_statistics(est: BaseEstimator, f: NDArray[Any], g: NDArray[Any], labels: NDArray[Any] | pd.Index,
                   y: NDArray[Any] | None, w: NDArray[Any] | None, constraint: str,
                   score_map: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
                   grid: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None) -> BaseEstimator:
    """Fit ``est`` from the statistics of the sources ``f`` (scores), ``g`` (raw groups, coded by
    position in ``labels``), ``y`` and ``w``; ``score_bins`` selects histograms over exact atoms."""
    from fairopt.formulations.constrained_classification import RandomizedThresholdParity
    from fairopt.formulations.constrained_classification.atoms import merge_atoms
    from fairopt.formulations.constrained_classification.covariance import (
        RandomizedThresholdCovariance,
    )
    from fairopt.formulations.constrained_classification.odds import (
        ThresholdMixtureOdds,
    )

    bins = check_score_bins(est.score_bins)
    K = len(labels)
    if bins is not None:      # refused before the statistics are read, with the bytes they would need
        check_histogram_size(bins, K)
    calibration = est.calibration
    if calibration == "auto":
        calibration = "isotonic_per_group" if y is not None and constraint == "demographic_parity" else None
    if calibration is not None and y is None:
        raise DataValidationError(f"calibration={est.calibration!r} fits P(y=1 | score) on the fitting sample, "
                                  "so fit needs its labels y; pass y or set calibration=None.")
    if criterion(constraint).needs_labels and y is None:
        raise DataValidationError(f"constraint={constraint!r} needs the labels y of the fitting sample.")
    if constraint == "covariance" and K != 2:
        raise DataValidationError(f"constraint='covariance' needs a binary sensitive attribute; got {K} groups "
                                  f"{list(labels)[:5]}.")
    need_y = y if (calibration is not None or criterion(constraint).needs_labels) else None
    if bins is None:
        at = score_atoms(f, g, labels, w, need_y, score_map=score_map)
        est.score_grid_ = None
    else:
        lo, hi = (None, None) if grid is None else grid
        h = score_histogram(f, g, labels, bins, w, need_y, lo=lo, hi=hi, score_map=score_map)
        cells = np.repeat(np.arange(K), bins)
        at = merge_atoms(cells, h.centres().ravel(), h.counts.ravel(),
                         None if h.positive is None else h.positive.ravel(), K)
        est.score_grid_ = (h.lo, h.hi, bins)
    empty = np.flatnonzero(np.diff(at.offsets) == 0)
    if empty.size:
        raise DataValidationError(f"groups {[labels[i] for i in empty]} have no rows (or zero total weight) in the "
                                  "post-processing sample; every group must be represented.")
    est.calibrator_ = None
    est.calibration_ = calibration
    if calibration is not None:
        est.calibrator_, at = calibrate_atoms(at, calibration == "isotonic_per_group")
    form: RandomizedThresholdParity | RandomizedThresholdCovariance | ThresholdMixtureOdds
    if constraint == "demographic_parity":
        form = RandomizedThresholdParity(gamma=est.gamma, eps=est.eps_, rho=est.rho, atoms=at)
    elif constraint == "covariance":             # one subgroup: cells 2 * 0 + s are the groups
        est.subgroups_ = pd.Index([None])
        form = RandomizedThresholdCovariance(None, None, gamma=est.gamma, eps=est.eps_, atoms=at)
    else:
        form = ThresholdMixtureOdds(None, None, None, constraint, est.eps_, atoms=at)
    return est._solve_form(form, constraint, est._solver_options(constraint))


def calibrate_atoms(at: ScoreAtoms, per_group: bool) -> tuple[IsotonicScoreMap, ScoreAtoms]:
    """Isotonic calibration fitted on labelled score atoms, and the atoms of the calibrated scores.

    The weighted isotonic regression of ``y`` on the score, fitted on the rows, is the same fit
    on the atoms (each atom: its score, its weight, its mean label), so one pass of pool adjacent
    violators over the sorted atoms of each group (``per_group``) or of all groups gives the
    :class:`~fairopt.formulations.constrained_classification.IsotonicScoreMap` that fitting it
    on the rows gives: the same breakpoints (sklearn's ``X_thresholds_`` / ``y_thresholds_``:
    points whose level equals both neighbours' dropped), without re-sorting the rows.

    Parameters
    ----------
    at : ScoreAtoms
        Atoms with ``positive`` (label-1 weight) set, every cell non-empty.
    per_group : bool
        One map per cell, or one pooled map.

    Returns
    -------
    calibrator : IsotonicScoreMap
        The fitted map.
    atoms : ScoreAtoms
        Atoms of the calibrated scores ``2 eta_hat - 1`` (atoms that calibrate to the same value in
        a cell merged), with their weights and label weights.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.constrained_classification.atoms import collapse_atoms
    >>> at = collapse_atoms(np.array([0.1, 0.2, 0.3, 0.4]), np.zeros(4, int), labels=np.array([0, 1, 0, 1]))
    >>> cal, merged = calibrate_atoms(at, per_group=True)
    >>> merged.score.tolist(), merged.weight.tolist()
    ([-1.0, 0.0, 1.0], [1.0, 2.0, 1.0])
    """
    from scipy.optimize import isotonic_regression

    from fairopt.formulations.constrained_classification import IsotonicScoreMap
    from fairopt.formulations.constrained_classification.atoms import merge_atoms

    K = at.n_cells
    positive = at.positive
    assert positive is not None      # the atoms were collected with labels
    maps: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    if per_group:
        maps = [(at.score[at.cell_slice(k)], at.weight[at.cell_slice(k)], positive[at.cell_slice(k)])
                for k in range(K)]
    else:
        pooled = merge_atoms(np.zeros(at.n_atoms, np.int64), at.score, at.weight, positive, 1)
        assert pooled.positive is not None
        maps = [(pooled.score, pooled.weight, pooled.positive)]
    breakpoints = []
    for k, (x, w, pos) in enumerate(maps):   # a loop over groups, not rows
        if w.sum() <= 0:
            raise DataValidationError(f"group {k} has no rows (or zero weight) to fit its isotonic "
                                      "calibration; use calibration='isotonic' (pooled) or merge groups.")
        eta = np.clip(isotonic_regression(pos / w, weights=w).x, 0.0, 1.0)
        keep = np.ones(eta.size, dtype=bool)
        keep[1:-1] = (eta[1:-1] != eta[:-2]) | (eta[1:-1] != eta[2:])
        breakpoints.append((x[keep], eta[keep]))
    cal = IsotonicScoreMap(per_group=per_group)
    cal.n_groups_, cal.breakpoints_ = K, breakpoints
    return cal, merge_atoms(at.cell, cal.transform(at.score, at.cell), at.weight, at.positive, K)


def quantise_fitted(est: BaseEstimator, f: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Scores rounded to the fitted grid (identity without ``score_bins``)."""
    grid = getattr(est, "score_grid_", None)
    if grid is None:
        return f
    lo, hi, bins = grid
    return quantise(f, cells, lo, hi, bins)


def _block_probability(est: BaseEstimator, kind: str, labels: NDArray[Any], f: ArrayLike,
                       g: NDArray[Any]) -> NDArray[np.float64]:
    codes = np.searchsorted(labels, g)
    codes = np.minimum(codes, len(labels) - 1)
    if (labels[codes] != g).any():
        raise DataValidationError("sensitive_features has groups not seen at fit.")
    f = quantise_fitted(est, map_scores(np.asarray(f, dtype=float), kind), codes)
    if est.calibrator_ is not None:
        f = est.calibrator_.transform(f, codes)
    out: NDArray[np.float64] = est.solution_.decision_probability(f, codes)
    return out


def decision_probability_lazy(est: BaseEstimator, X: Source,
                              sensitive_features: Source | None) -> NDArray[np.float64]:
    """``P(y_hat = 1)`` of chunked / Dask rows: a Dask array for Dask input, else a NumPy array
    computed chunk by chunk."""
    if est.estimator is not None:
        raise DataValidationError("chunked and Dask inputs need estimator=None with the scores as X.")
    if est.constraint_ == "covariance" and len(est.subgroups_) != 1:
        raise DataValidationError("a covariance fit with subgroups predicts in-memory inputs only.")
    kind = "identity" if est.score_map == "auto" else est.score_map
    fitted = est.sensitive_columns_ if sensitive_features is None and is_dask(X) else None
    cols = fitted if fitted is not None else _frame_columns(X, sensitive_features)
    labels = np.asarray(est.groups_)      # what the rows of g hold: the labels, or codes of the joint labels
    if cols:          # the fitted columns of a Dask DataFrame
        joint = est.groups_ if len(cols) > 1 else None
        X, sensitive_features, _ = _split_dask_frame(X, list(cols), joint)
        if joint is not None:
            labels = np.arange(len(joint))
    elif _several_columns(sensitive_features):
        sensitive_features, _ = _joint_groups(sensitive_features, est.groups_)
        labels = np.arange(len(est.groups_))
    if sensitive_features is None:
        raise DataValidationError("pass sensitive_features (one group label per row, or the column names of a Dask "
                                  "DataFrame X).")
    f, g = as_source(X, "X", numeric=True), as_source(sensitive_features, "sensitive_features")
    fn = partial(_block_probability, est, kind, labels)
    if is_dask(f) or is_dask(g):
        import dask.array as da
        f = f if is_dask(f) else da.from_array(f, chunks=g.chunks)
        g = g.rechunk(f.chunks) if is_dask(g) else da.from_array(g, chunks=f.chunks)
        result: NDArray[np.float64] = da.map_blocks(fn, f, g, dtype=float)
        return result
    from fairopt.stats import chunk_rows
    step = chunk_rows()
    n = f.shape[0]
    if g.shape[0] != n:
        raise DataValidationError(f"sensitive_features has {g.shape[0]} rows for {n} scores.")
    out = np.empty(n)
    for i in range(0, n, step):         # a loop over chunks, not rows
        out[i:i + step] = fn(np.asarray(f[i:i + step]), np.asarray(g[i:i + step]))
    return out


def _sample_block(h: NDArray[np.float64], seed: int, block_id: tuple[int, ...] | None = None) -> NDArray[np.int64]:
    assert block_id is not None  # dask's map_blocks passes the block's index
    rng = np.random.default_rng([seed, block_id[0]])
    return (rng.random(h.shape[0]) < h).astype(np.int64)


def sample_lazy(h: Any, random_state: int | np.random.RandomState | np.random.Generator | None) -> Any:
    """0/1 draws of a Dask array of probabilities, one reproducible stream per block.

    ``h`` and the result are Dask arrays (typed ``Any``: dask's decorated ``map_blocks`` does not type-check).
    """
    from fairopt._utils import as_generator
    seed = int(as_generator(random_state).integers(2**63))
    return h.map_blocks(partial(_sample_block, seed=seed), dtype=np.int64)
