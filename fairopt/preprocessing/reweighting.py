"""Reweighting pre-processors: Kamiran–Calders :class:`Reweighing` and
:class:`RepresentationReweighing`, with the weight formulas they use.

Both weight the observed records (collapsed to distinct cells with their counts) and resample
them; the formulas need only cell counts, so they live here rather than with the max-entropy
model (which uses the Kamiran–Calders form as one of its priors, Algorithm 1).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fairopt._utils import as_generator
from fairopt.data import Domain
from fairopt.errors import DataValidationError
from fairopt.formulations.maxent import priors as P
from fairopt.preprocessing._frame import _decode, _FrameMixin, _n_samples, _share, check_sample_weight
from fairopt.validation import RANDOM_STATE, check_weights, validate_params

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import ArrayLike, NDArray

    from fairopt.preprocessing._frame import Records, Seed

_W = TypeVar("_W", bound="_WeightedResampler")

__all__ = ["RepresentationReweighing", "Reweighing", "kamiran_calders_weights", "representation_weights"]


def kamiran_calders_weights(points: NDArray[np.int64], counts: ArrayLike, label: int, protected: int,
                            n_levels: Sequence[int] | None = None) -> NDArray[np.float64]:
    """Kamiran–Calders reweighing: ``w_i ∝ n_i c(y) c(z) / (N c(y, z))`` (``Y ⊥ Z``, group sizes kept).

    ``points`` are distinct cells (integer codes, one column per attribute) with total weights
    ``counts``; ``label``/``protected`` index the label and protected columns.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.preprocessing.reweighting import kamiran_calders_weights
    >>> points = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])   # columns: group, label
    >>> w = kamiran_calders_weights(points, [3.0, 1.0, 1.0, 3.0], label=1, protected=0)
    >>> w.tolist()                        # label 1 is now as frequent in both groups
    [0.25, 0.25, 0.25, 0.25]
    """
    counts = np.asarray(counts, dtype=float)
    y, z, c_yz = P._cell_counts(points, counts, label, protected, n_levels)
    N = counts.sum()
    c_y, c_z = c_yz.sum(axis=1), c_yz.sum(axis=0)
    cell = c_yz[y, z]   # 0 only for points whose rows all have weight 0: they get weight 0
    w = np.divide(counts * c_y[y] * c_z[z], N * cell, out=np.zeros_like(counts), where=cell > 0)
    out: NDArray[np.float64] = w / w.sum()
    return out


def representation_weights(points: NDArray[np.int64], counts: ArrayLike, protected: int,
                           n_levels: Sequence[int] | None = None,
                           group_names: Sequence[object] | None = None) -> NDArray[np.float64]:
    """Representation reweighting: ``w_i ∝ n_i / c(z)`` (equal group shares).

    A group whose rows all have weight 0 cannot get an equal share: that raises
    :class:`~fairopt.errors.DataValidationError` naming the group.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.preprocessing.reweighting import representation_weights
    >>> points = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])   # columns: group, label
    >>> w = representation_weights(points, [6.0, 2.0, 1.0, 1.0], protected=0)
    >>> w.tolist(), float(w[:2].sum()), float(w[2:].sum())   # each group gets half the mass
    ([0.375, 0.125, 0.25, 0.25], 0.5, 0.5)
    """
    counts = np.asarray(counts, dtype=float)
    z = points[:, protected]
    kz = int(n_levels[protected]) if n_levels is not None else int(z.max()) + 1
    c_z = np.bincount(z, weights=counts, minlength=kz)
    dead = np.unique(z[c_z[z] <= 0])
    if dead.size:
        names = [group_names[g] if group_names is not None else int(g) for g in dead]
        raise DataValidationError(f"protected group(s) {names} have zero total sample_weight, so they cannot be "
                                  "reweighted to an equal share; give their rows positive weight or drop them.")
    w = counts / c_z[z]
    out: NDArray[np.float64] = w / w.sum()
    return out


class _WeightedResampler(_FrameMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Reweights the observed rows; sampling draws rows with probability ∝ weight."""

    _parameter_constraints: ClassVar[dict[str, Any]] = {"random_state": RANDOM_STATE, "domain": [None, Domain]}

    def __init__(self, random_state: Seed = None, domain: Domain | None = None) -> None:
        self.random_state = random_state
        self.domain = domain

    #: weighting scheme of the subclass: "kamiran_calders" or "representation"
    _scheme = "kamiran_calders"

    def _weights(self, points: NDArray[np.int64], counts: NDArray[np.float64], label: int, protected: int,
                 k: Sequence[int]) -> NDArray[np.float64]:
        if self._scheme == "representation":
            return representation_weights(points, counts, protected, k, self.domain_.levels[self.sensitive_name_])
        return kamiran_calders_weights(points, counts, label, protected, k)

    def fit(self: _W, X: Records, y: ArrayLike, sensitive_features: Any = None,
            sample_weight: ArrayLike | None = None) -> _W:
        """Compute one weight per row (``sample_weight_``, mean 1 over rows)."""
        t0 = time.perf_counter()
        validate_params(self)
        _, codes, label, protected = self._prepare(X, y, sensitive_features, self.domain)
        check_sample_weight(sample_weight, self.domain_, codes, self.sensitive_name_, f"{type(self).__name__}.fit")
        sw = check_weights(sample_weight, len(codes))
        points, counts, inverse = P.collapse(codes, sw)
        k = self.domain_.cardinalities
        w_pts = self._weights(points, counts, label, protected, k)
        row = _share(w_pts[inverse] * sw, counts[inverse])
        self.sample_weight_ = row * (len(row) / row.sum())
        self.points_, self.point_weights_ = points, w_pts
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def sample_codes(self, n: int, random_state: Seed = None) -> NDArray[np.int64]:
        """Draw ``n`` records (as domain codes) from the reweighted distribution.

        Parameters
        ----------
        n : int
            Number of records.
        random_state : int, Generator or None
            Seed; default the estimator's ``random_state``.

        Returns
        -------
        ndarray of shape (n, n_attributes)
            Codes of the drawn records (decode with ``domain_.decode``).

        Raises
        ------
        NotFittedError
            If called before ``fit``.
        """
        self._check_fitted()
        rs = self.random_state if random_state is None else random_state
        rng = as_generator(rs)
        cdf = np.cumsum(self.point_weights_)
        idx = np.minimum(np.searchsorted(cdf, rng.random(_n_samples(n)) * cdf[-1], side="right"),
                         len(cdf) - 1)
        out: NDArray[np.int64] = self.points_[idx]
        return out

    def sample(self, n: int, random_state: Seed = None) -> pd.DataFrame | pl.DataFrame:
        """Draw ``n`` rows of the reweighted empirical distribution."""
        codes = self.sample_codes(n, random_state)
        return self._output(_decode(self.domain_, codes, self.dtypes_))


class Reweighing(_WeightedResampler):
    """Kamiran & Calders reweighing: ``w ∝ c(y) c(z) / (N c(y, z))`` per row.

    Makes the label independent of the protected attribute (statistical rate 1 of the weighted
    data) while keeping group sizes (the representation rate is unchanged).

    Parameters
    ----------
    random_state : int, Generator or None
        Default seed of :meth:`sample`.
    domain : fairopt.data.Domain, optional
        Fixes the level sets and code order (default: read from the fitted frame).

    Attributes
    ----------
    sample_weight_ : ndarray (n_samples,)
        Weight of each training row (mean 1).
    points_, point_weights_ : ndarray
        Distinct training cells (codes of :attr:`domain_`) and their probabilities.
    domain_ : fairopt.data.Domain
        Product domain of the fitted columns (levels and code order of the cells).

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"sex": ["F", "F", "M", "M", "M", "M"]})
    >>> y = pd.Series([0, 1, 1, 1, 1, 0])
    >>> rw = Reweighing(random_state=0).fit(X, y, sensitive_features="sex")
    >>> rw.sample(4).shape[0]
    4
    """

    _scheme = "kamiran_calders"


class RepresentationReweighing(_WeightedResampler):
    """Representation reweighting: ``w ∝ 1 / c(z)`` per row, so every group has equal share.

    Reaches representation rate 1; within-group label rates (statistical rate) are unchanged.
    Parameters and attributes as :class:`Reweighing`.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"sex": ["F", "F", "M", "M", "M", "M"], "x": [0, 1, 0, 1, 1, 0]})
    >>> y = pd.Series([0, 1, 1, 1, 1, 0])
    >>> rr = RepresentationReweighing(random_state=0).fit(X, y, sensitive_features="sex")
    >>> list(rr.sample(4).columns)
    ['sex', 'x', 'y']
    """

    _scheme = "representation"
