"""Discretisation of numeric columns for :class:`~fairopt.preprocessing.TVRepair` (``n_bins``).

Calmon et al. (2017) repair categorical records and bin numeric attributes first (age into
decades). :class:`ColumnBins` holds the edges learnt at fit and one representative value per bin
(the weighted median of the training values in it); a repaired record keeps its value when its bin
is unchanged and takes the representative of its new bin otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BINNINGS", "ColumnBins", "learn_bins", "numeric_columns"]

#: edge rules of ``TVRepair(binning=...)``
BINNINGS = ("quantile", "uniform")


@dataclass(frozen=True)
class ColumnBins:
    """Bins ``[e_0, e_1), [e_1, e_2), ..., [e_{k-1}, e_k]`` of one numeric column.

    Values below ``e_0`` fall in the first bin and values above ``e_k`` in the last one (test data
    may leave the training range).

    Examples
    --------
    >>> import numpy as np
    >>> bins = ColumnBins(np.array([0.0, 10.0, 20.0]), np.array([4.0, 15.0]))
    >>> bins.codes(np.array([-1.0, 3.0, 10.0, 25.0])).tolist()
    [0, 0, 1, 1]
    """

    edges: NDArray[np.float64]
    representatives: NDArray[np.float64]

    @property
    def n_bins(self) -> int:
        """Number of bins ``k``."""
        return len(self.representatives)

    def codes(self, values: NDArray[np.float64]) -> NDArray[np.int64]:
        """Bin index of every value (vectorised)."""
        return np.searchsorted(self.edges[1:-1], values, side="right").astype(np.int64)

    def restore(self, values: NDArray[np.float64], old: NDArray[np.int64],
                new: NDArray[np.int64]) -> NDArray[np.float64]:
        """Values after a repair moved bin ``old`` to ``new``: kept where the bin is unchanged, the
        new bin's representative elsewhere."""
        return np.where(old == new, values, self.representatives[new])


def _weighted_median(values: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    # inverted-CDF quantile: a weight-2 row gives exactly what the row repeated twice gives
    return float(np.quantile(values, 0.5, weights=weights, method="inverted_cdf"))


def learn_bins(values: NDArray[np.float64], weights: NDArray[np.float64], n_bins: int,
               binning: Literal["quantile", "uniform"]) -> ColumnBins:
    """Edges and representatives of at most ``n_bins`` bins of ``values`` (rows of weight 0 ignored).

    ``"quantile"`` edges are weighted quantiles (inverted CDF; repeated edges merge, so heavy ties
    give fewer bins); ``"uniform"`` edges split ``[min, max]`` evenly. A bin's representative is the
    weighted median of its training values (its midpoint when no training value falls in it).

    Examples
    --------
    >>> import numpy as np
    >>> ages = np.arange(20.0, 81.0)
    >>> bins = learn_bins(ages, np.ones(61), 3, "uniform")
    >>> bins.edges.tolist(), bins.representatives.tolist()
    ([20.0, 40.0, 60.0, 80.0], [29.0, 49.0, 70.0])
    """
    keep = weights > 0
    v, w = values[keep], weights[keep]
    if binning == "quantile":
        edges = np.unique(np.quantile(v, np.linspace(0.0, 1.0, n_bins + 1), weights=w, method="inverted_cdf"))
    else:
        edges = np.linspace(v.min(), v.max(), n_bins + 1)
    if len(edges) < 2:                     # one distinct value: a single bin
        edges = np.array([edges[0], edges[0]])
    edges = edges.astype(np.float64)
    bins = ColumnBins(edges, np.zeros(len(edges) - 1))
    code = bins.codes(v)
    reps = np.array([_weighted_median(v[code == j], w[code == j]) if (code == j).any()
                     else 0.5 * (edges[j] + edges[j + 1]) for j in range(bins.n_bins)])   # a loop over bins
    return ColumnBins(edges, reps)


def numeric_columns(frame: pd.DataFrame, columns: list[str], n_bins: int,
                    weights: NDArray[np.float64]) -> list[str]:
    """The columns of ``columns`` that ``n_bins`` discretises: numeric (not boolean) with more than
    ``n_bins`` distinct values among the rows of positive weight.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": np.arange(10.0), "edu": [0, 1] * 5, "sex": ["f", "m"] * 5})
    >>> numeric_columns(frame, ["age", "edu", "sex"], 3, np.ones(10))
    ['age']
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    keep = weights > 0
    return [c for c in columns if is_numeric_dtype(frame[c].dtype) and not is_bool_dtype(frame[c].dtype)
            and frame[c][keep].nunique() > n_bins]
