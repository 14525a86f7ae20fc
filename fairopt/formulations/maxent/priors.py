"""Priors and expectation targets of the max-entropy model (Celis, Keswani & Vishnoi 2020, §3).

Data are rows of integer level codes (see :mod:`.encoding`), collapsed to distinct points
``s_1..s_M`` with counts ``n_i``. A *weighting* is a probability vector ``w`` over those points.

Weightings
----------
``data_weights``          ``w_i = n_i / N`` (prior ``q_C^d``).
``fair_reweighting``      Algorithm 1, generalised to a k-level protected attribute and any discrete
                          label: ``w(y, z) ∝ tau_z c(y)``, so ``Y`` is independent of ``Z`` under ``w``
                          (statistical rate 1) and group shares are ``tau_z / sum(tau)``.
``kamiran_calders``       ``w_i ∝ n_i c(y) c(z) / (N c(y, z))`` (Kamiran & Calders reweighing).
``representation``        ``w_i ∝ n_i / c(z)`` (equal group shares, labels untouched within groups).

Targets
-------
A target is a list with one block per attribute: a probability vector over the levels of a
one-hot attribute, or a length-1 array holding the mean of a scalar attribute. ``theta^d`` is the
raw mean, ``theta^w`` the mean under the Algorithm 1 weights and ``theta^b`` the raw mean with the
protected block replaced by equal shares.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from fairopt._docstrings import fill_doc
from fairopt.errors import DataValidationError
from fairopt.formulations.maxent.encoding import Encoding

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def collapse(codes: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Collapse code rows to distinct points.

    Returns
    -------
    points : ndarray (M, F)
        Distinct rows in lexicographic order.
    counts : ndarray (M,)
        Number of rows (or summed ``weights``) per distinct point.
    inverse : ndarray (n,)
        Index of each input row in ``points``.

    Examples
    --------
    >>> import numpy as np
    >>> points, weights, inverse = collapse(np.array([[0, 1], [0, 1], [1, 2]]))
    >>> points.tolist(), weights.tolist(), inverse.tolist()
    ([[0, 1], [1, 2]], [2.0, 1.0], [0, 0, 1])
    """
    codes = np.asarray(codes)
    radix = _radix(codes)
    if radix is None:    # huge domain: row-wise unique
        points, inverse = np.unique(codes, axis=0, return_inverse=True)
    else:                # mixed-radix int64 keys keep the lexicographic order; 1-D unique is ~10x faster
        flat = codes.astype(np.int64, copy=False) @ radix
        size = int(radix[0]) * (int(codes[:, 0].max()) + 1)   # the number of possible keys
        if size <= 4 * flat.shape[0] + 1024:   # keys as dense as the rows: count, no sort
            seen = np.bincount(flat, minlength=size) > 0
            keys = np.flatnonzero(seen)
            inverse = (np.cumsum(seen) - 1)[flat]
        else:
            keys, inverse = np.unique(flat, return_inverse=True)
        points = np.empty((keys.shape[0], codes.shape[1]), dtype=codes.dtype)
        for f in range(codes.shape[1]):   # decode keys back to code rows, one attribute at a time
            points[:, f], keys = np.divmod(keys, radix[f])
    inverse = np.asarray(inverse).reshape(-1)
    if weights is None:   # integer counts, exact in float
        counts = np.bincount(inverse, minlength=points.shape[0]).astype(float)
    else:
        counts = np.bincount(inverse, weights=np.asarray(weights, dtype=float), minlength=points.shape[0])
    return points, counts, inverse


def _radix(codes: np.ndarray) -> np.ndarray | None:
    """Mixed-radix place values of code rows (first column most significant), or ``None`` when
    the observed ranges do not fit an int64 key (or codes are negative)."""
    if codes.ndim != 2 or codes.shape[0] == 0 or codes.shape[1] == 0 or codes.min() < 0:
        return None
    # column by column: a max over axis 0 of a row-major (n, F) array is several times slower
    sizes = [int(codes[:, f].max()) + 1 for f in range(codes.shape[1])]
    total = 1
    for k in sizes:
        total *= k
    if total >= 2 ** 62:
        return None
    return np.cumprod([1, *sizes[::-1][:-1]])[::-1].astype(np.int64)


def _cells(points: np.ndarray, label: int, protected: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    y = points[:, label]
    z = points[:, protected]
    ky = int(y.max()) + 1
    kz = int(z.max()) + 1
    return y, z, ky, kz


def _cell_counts(points: np.ndarray, counts: np.ndarray, label: int, protected: int,
                 n_levels: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, z, ky, kz = _cells(points, label, protected)
    if n_levels is not None:
        ky, kz = int(n_levels[label]), int(n_levels[protected])
    c_yz = np.zeros((ky, kz))
    np.add.at(c_yz, (y, z), counts)
    return y, z, c_yz


def data_weights(counts: ArrayLike) -> np.ndarray:
    """Empirical weights ``n_i / N``.

    Examples
    --------
    >>> import numpy as np
    >>> data_weights(np.array([1, 3])).tolist()
    [0.25, 0.75]
    """
    counts = np.asarray(counts, dtype=float)
    out: np.ndarray = counts / counts.sum()
    return out


def group_factors(tau: float | ArrayLike, kz: int) -> np.ndarray:
    """Per-level factors ``tau_z`` of the protected attribute.

    A float ``tau`` scales level 0 (the paper's ``Z = 0``) and leaves the others at 1; a sequence
    gives one factor per level. Every factor must lie in ``(0, 1]``.
    """
    if np.ndim(tau) == 0:
        t = float(cast(float, tau))  # ndim 0: a scalar
        if not 0.0 < t <= 1.0:
            raise DataValidationError(f"tau must lie in (0, 1], got {t} (tau = 0 divides by zero).")
        out = np.ones(kz)
        out[0] = t
        return out
    out = np.asarray(tau, dtype=float).reshape(-1)
    if out.shape != (kz,):
        raise DataValidationError(f"tau needs one factor per protected level ({kz}), got {out.shape}.")
    if np.any(out <= 0) or np.any(out > 1):
        raise DataValidationError(f"every tau factor must lie in (0, 1], got {out.tolist()}.")
    return out


@fill_doc
def fair_reweighting(points: np.ndarray, counts: ArrayLike, label: int, protected: int,
                     tau: float | ArrayLike = 1.0, n_levels: Sequence[int] | None = None,
                     names: Sequence[str] | None = None) -> np.ndarray:
    """Algorithm 1 of Celis et al. (2020), generalised to k protected levels and any label.

    ``w_i ∝ n_i tau_{z_i} c(y_i) / c0(y_i, z_i)`` where ``c(y)`` are label counts and ``c0(y, z)``
    the raw cell counts, so ``w(y, z) ∝ tau_z c(y)``: the label marginal is kept, ``Y`` is
    independent of ``Z`` (statistical rate exactly 1 for every ``tau``) and ``w(Z = z) ∝ tau_z``.
    Linear time in the number of points.

    Raises
    ------
    DataValidationError
        If a (label, group) cell with positive label mass is empty, which makes the weights
        undefined (merge rare groups or drop the level).

    Examples
    --------
    >>> import numpy as np
    {example_compas_codes}
    >>> from fairopt.formulations.maxent import collapse
    >>> from fairopt.metrics import statistical_rate
    >>> points, weights, _ = collapse(codes)
    >>> label, race = names.index("two_year_recid"), names.index("race")
    >>> w = fair_reweighting(points, weights, label, race)
    >>> round(statistical_rate(points[:, label], points[:, race], sample_weight=w), 6)
    1.0
    """
    counts = np.asarray(counts, dtype=float)
    y, z, c_yz = _cell_counts(points, counts, label, protected, n_levels)
    c_y = c_yz.sum(axis=1)
    taus = group_factors(tau, c_yz.shape[1])
    empty = (c_yz == 0) & (c_y[:, None] > 0)
    if empty.any():
        yy, zz = np.argwhere(empty)[0]
        lab = names[label] if names else f"attribute {label}"
        grp = names[protected] if names else f"attribute {protected}"
        raise DataValidationError(
            f"Algorithm 1 needs every (label, group) cell to be observed: no rows with "
            f"{lab} level {yy} and {grp} level {zz}. Merge rare groups or drop the level.")
    w = counts * taus[z] * c_y[y] / c_yz[y, z]
    if w.sum() <= 0:
        raise DataValidationError("no rows to reweight.")
    out: np.ndarray = w / w.sum()
    return out


# ---------------------------------------------------------------------------------- targets
def level_marginals(points: np.ndarray, weights: ArrayLike, enc: Encoding) -> list[np.ndarray]:
    """Per-attribute level distributions of a weighting of the points."""
    weights = np.asarray(weights, dtype=float)
    return [np.bincount(points[:, f], weights=weights, minlength=enc.n_levels[f]) / weights.sum()
            for f in range(enc.n_attributes)]


@fill_doc
def target_from_weights(points: np.ndarray, weights: ArrayLike, enc: Encoding) -> list[np.ndarray]:
    """Target blocks (level probabilities or scalar means) of a weighting of the points.

    Examples
    --------
    >>> import numpy as np
    {example_compas_codes}
    >>> from fairopt.formulations.maxent import collapse
    >>> points, weights, _ = collapse(codes)
    >>> target = target_from_weights(points, weights / weights.sum(), encoding)
    >>> target[names.index("race")].round(4).tolist()              # the data's race shares
    [0.6595, 0.3405]
    """
    marg = level_marginals(points, weights, enc)
    return [m if enc.kinds[f] == "onehot" else np.array([float(enc.values[f] @ m)])
            for f, m in enumerate(marg)]


@fill_doc
def balanced_target(target: list[np.ndarray], enc: Encoding, protected: int) -> list[np.ndarray]:
    """``theta^b``: ``target`` with the protected attribute split equally between its levels.

    Examples
    --------
    >>> import numpy as np
    {example_compas_codes}
    >>> from fairopt.formulations.maxent import collapse, target_from_weights
    >>> points, weights, _ = collapse(codes)
    >>> target = target_from_weights(points, weights / weights.sum(), encoding)
    >>> balanced_target(target, encoding, names.index("race"))[names.index("race")].tolist()
    [0.5, 0.5]
    """
    out = [np.array(t, dtype=float, copy=True) for t in target]
    k = enc.n_levels[protected]
    if enc.kinds[protected] == "onehot":
        out[protected] = np.full(k, 1.0 / k)
    else:
        out[protected] = np.array([float(enc.values[protected].mean())])
    return out


def target_from_user(theta: ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike],
                     enc: Encoding) -> list[np.ndarray]:
    """Normalise a user target: a mapping ``{name: probs or mean}``, a list of blocks, or a flat
    vector of full one-hot probabilities / scalar means in attribute order."""
    F = enc.n_attributes
    if isinstance(theta, Mapping):
        missing = [n for n in enc.names if n not in theta]
        extra = [n for n in theta if n not in enc.names]
        if missing or extra:
            raise DataValidationError(
                f"target mapping must name every attribute exactly: missing {missing}, unknown {extra}.")
        blocks = [np.atleast_1d(np.asarray(theta[n], dtype=float)) for n in enc.names]
    elif isinstance(theta, (list, tuple)) and len(theta) == F and any(np.ndim(t) > 0 for t in theta):
        blocks = [np.atleast_1d(np.asarray(t, dtype=float)) for t in theta]
    else:
        flat = np.asarray(theta, dtype=float).reshape(-1)
        sizes = [k if kind == "onehot" else 1 for k, kind in zip(enc.n_levels, enc.kinds, strict=False)]
        if flat.size != sum(sizes):
            raise DataValidationError(
                f"a flat target needs {sum(sizes)} entries (all one-hot levels and one mean per "
                f"scalar attribute), got {flat.size}.")
        blocks = np.split(flat, np.cumsum(sizes)[:-1])
    for f, b in enumerate(blocks):
        want = enc.n_levels[f] if enc.kinds[f] == "onehot" else 1
        if b.shape != (want,):
            raise DataValidationError(
                f"target for attribute {enc.names[f]!r} needs {want} entries, got {b.shape[0]}.")
    return blocks


def smooth_target(target: list[np.ndarray], enc: Encoding, kappa: float) -> list[np.ndarray]:
    """Mix one-hot blocks with the uniform distribution: ``(1 - kappa) theta_f + kappa / k_f``."""
    if kappa == 0:
        return [np.array(t, dtype=float) for t in target]
    out = []
    for f, t in enumerate(target):
        if enc.kinds[f] == "onehot":
            out.append((1 - kappa) * np.asarray(t, float) + kappa / enc.n_levels[f])
        else:
            v = enc.values[f]
            out.append((1 - kappa) * np.asarray(t, float) + kappa * float(v.mean()))
    return out


@fill_doc
def validate_target(target: list[np.ndarray], enc: Encoding, level_names: Sequence[Sequence[Any]] | None = None,
                    sum_tol: float = 1e-9) -> np.ndarray:
    """Check that a target lies in the relative interior of ``conv(phi(Omega))``.

    Returns the reference-coded target vector (length ``enc.dim``).

    Raises
    ------
    DataValidationError
        Naming the attribute level whose target is on (or beyond) the boundary of the hull, or a
        one-hot block that is not a probability vector (the dual would be unbounded below).

    Examples
    --------
    {example_compas}
    >>> import numpy as np
    >>> from fairopt.errors import DataValidationError
    >>> from fairopt.formulations.maxent import collapse, target_from_weights
    >>> points, weights, _ = collapse(cells.repeat(counts, axis=0))
    >>> target = target_from_weights(points, weights / weights.sum(), encoding)
    >>> validate_target(target, encoding).shape        # the reference-coded theta
    (8,)
    >>> target[names.index("race")] = np.array([1.0, 0.0])   # a level with no mass
    >>> try:
    ...     validate_target(target, encoding)
    ... except DataValidationError as err:
    ...     print(str(err).split(":")[0])
    target for attribute 'race' level 1 is 0
    """
    parts = []
    for f, t in enumerate(target):
        t = np.asarray(t, dtype=float)
        name = enc.names[f]
        if not np.all(np.isfinite(t)):
            raise DataValidationError(f"target for attribute {name!r} is not finite: {t.tolist()}.")
        if enc.kinds[f] == "onehot":
            if abs(t.sum() - 1.0) > sum_tol:
                raise DataValidationError(
                    f"target for one-hot attribute {name!r} must sum to 1 (got {t.sum():.12g}); "
                    "otherwise the dual is unbounded below.")
            bad = np.nonzero(t <= 0)[0]
            if bad.size:
                v = int(bad[0])
                lev = level_names[f][v] if level_names is not None else v
                raise DataValidationError(
                    f"target for attribute {name!r} level {lev!r} is {t[v]:.3g}: it is on the "
                    "boundary of the feasible hull (every level needs positive mass). Drop the "
                    "level from the domain or smooth the target (theta_smoothing > 0).")
            parts.append(enc.phi(f).T @ (t / t.sum()))
        else:
            v = enc.values[f]
            lo, hi = float(v.min()), float(v.max())
            if not lo < float(t[0]) < hi:
                raise DataValidationError(
                    f"target mean {float(t[0]):.6g} of scalar attribute {name!r} must lie strictly "
                    f"inside ({lo:.6g}, {hi:.6g}); it is on the boundary of the feasible hull.")
            parts.append(t.copy())
    return np.concatenate(parts) if parts else np.zeros(0)


def boundary_distance(target: list[np.ndarray], enc: Encoding) -> tuple[float, str]:
    """Smallest distance of a target block to the hull boundary, and which attribute attains it."""
    best, who = np.inf, ""
    for f, t in enumerate(target):
        if enc.kinds[f] == "onehot":
            dist = float(np.min(t))
        else:
            v = enc.values[f]
            dist = float(min(t[0] - v.min(), v.max() - t[0]) / max(v.max() - v.min(), 1e-300))
        if dist < best:
            best, who = dist, enc.names[f]
    return best, who
