"""Product domains of categorical attributes.

A :class:`Domain` is ``Ω = V_1 × … × V_F``: an ordered list of attributes, each with an ordered tuple of
levels. Records are represented by integer *codes* ``x[f] ∈ {0, …, k_f − 1}`` (level positions), by a
mixed-radix *flat index* (row-major: the first attribute is the most significant digit, as in
``numpy.ravel_multi_index``), or by a one-hot row of length ``Σ_f k_f``.

Numeric columns become categorical through half-open bins ``[e_j, e_{j+1})`` (``pd.cut(right=False)``
semantics); use ``-inf`` / ``inf`` as the first / last edge for open-ended bins.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.data.attribute import Attribute, _as_attribute, _check_row_weights, _fmt_edge, _level_codes, _py
from fairopt.errors import DataValidationError

__all__ = ["Attribute", "Domain"]

_INT64_LIMIT = 2**63


def category_levels(dtype: pd.CategoricalDtype) -> tuple[Any, ...]:
    """Levels of a categorical column: the declared order of an *ordered* categorical (pandas
    ``ordered=True``, a polars ``Enum``), else the sorted categories.

    An unordered categorical has no meaningful order: a polars ``Categorical`` or an Arrow
    dictionary lists categories in order of appearance, pandas in the order they were declared.
    Sorting makes the same data give the same levels (and so the same fitted parameters and seeded
    samples) whatever the frame library; categories that cannot be compared keep their order.

    Examples
    --------
    >>> import pandas as pd
    >>> category_levels(pd.CategoricalDtype(["m", "f"]))
    ('f', 'm')
    >>> category_levels(pd.CategoricalDtype(["low", "mid", "high"], ordered=True))
    ('low', 'mid', 'high')
    """
    cats = dtype.categories
    if dtype.ordered:
        return tuple(cats)
    try:
        return tuple(cats.sort_values())
    except TypeError:      # mixed label types: no order to sort by
        return tuple(cats)


class Domain:
    """A finite product domain ``Ω = V_1 × … × V_F`` of categorical attributes.

    Parameters
    ----------
    attributes : sequence or mapping
        The attributes in order: :class:`Attribute` objects, ``(name, levels)`` pairs, dicts of
        :class:`Attribute` fields, or a mapping ``{name: levels}``.

    Attributes
    ----------
    attributes : tuple of Attribute
    names : tuple of str
    levels : dict
        ``{name: tuple of levels}``.
    cardinalities : tuple of int
        ``(k_1, …, k_F)``.
    size : int
        ``|Ω| = Π k_f``, exact (a Python int, so ``10**11`` and beyond are fine).

    Examples
    --------
    >>> d = Domain([("sex", ["F", "M"]), ("y", [0, 1])])
    >>> d.size, d.ravel(d.encode(pd.DataFrame({"sex": ["M"], "y": [1]}))).tolist()
    (4, [3])
    """

    def __init__(self, attributes: Iterable[Any] | Mapping[str, Any]) -> None:
        if isinstance(attributes, Mapping):
            attributes = list(attributes.items())
        attrs = tuple(_as_attribute(a) for a in attributes)
        if not attrs:
            raise DataValidationError("a Domain needs at least one attribute")
        names = [a.name for a in attrs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise DataValidationError(f"duplicate attribute names in Domain: {dupes}")
        self.attributes: tuple[Attribute, ...] = attrs

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(cls, df: pd.DataFrame, columns: Sequence[str] | None = None, *,
                   bins: Mapping[str, Sequence[float]] | None = None,
                   labels: Mapping[str, Sequence[Any]] | None = None,
                   levels: Mapping[str, Sequence[Any]] | None = None) -> Domain:
        """Build a domain from the columns of a frame.

        Parameters
        ----------
        df : DataFrame
        columns : sequence of str, optional
            Columns to use, in order (default: all columns of ``df``).
        bins : mapping, optional
            ``{column: edges}`` for numeric columns to discretise into ``[e_j, e_{j+1})``.
        labels : mapping, optional
            ``{column: level labels}`` for binned columns (default: strings ``"[a, b)"``).
        levels : mapping, optional
            ``{column: ordered levels}`` for categorical columns. Otherwise a pandas ``Categorical``
            column's levels are its categories (sorted, unless the categorical is *ordered*: then
            in its declared order; ``category_levels``) and any other column uses its sorted
            distinct values, so the levels never depend on the frame library or the row order.

        Raises
        ------
        DataValidationError
            If a column is missing or a categorical column holds missing values.
        """
        bins, labels, levels = dict(bins or {}), dict(labels or {}), dict(levels or {})
        columns = list(df.columns if columns is None else columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise DataValidationError(f"columns {missing} are not in the frame (has {list(df.columns)})")
        unknown = sorted((set(bins) | set(labels) | set(levels)) - set(columns))
        if unknown:
            raise DataValidationError(f"bins/labels/levels given for columns {unknown} not in {columns}")
        attrs = []
        for c in columns:
            if c in bins:
                edges = [float(e) for e in bins[c]]
                lab = labels.get(c)
                if lab is None:
                    lab = [f"[{_fmt_edge(a)}, {_fmt_edge(b)})" for a, b in itertools.pairwise(edges)]
                attrs.append(Attribute(c, tuple(lab), bins=tuple(edges)))
                continue
            if c in labels:
                raise DataValidationError(f"labels given for column {c!r} without bins")
            col = df[c]
            if c in levels:
                lv = tuple(levels[c])
            elif isinstance(col.dtype, pd.CategoricalDtype):
                lv = category_levels(col.dtype)
            else:
                if col.isna().any():
                    raise DataValidationError(
                        f"column {c!r} has {int(col.isna().sum())} missing values; fill or drop them "
                        f"before building a Domain")
                lv = tuple(np.sort(pd.unique(col.to_numpy())))
            attrs.append(Attribute(c, lv))
        return cls(attrs)

    # ------------------------------------------------------------------ basic properties
    @property
    def names(self) -> tuple[str, ...]:
        """Attribute names, in code order."""
        return tuple(a.name for a in self.attributes)

    @property
    def levels(self) -> dict[str, tuple[Any, ...]]:
        """Levels of each attribute, keyed by attribute name."""
        return {a.name: a.levels for a in self.attributes}

    @property
    def cardinalities(self) -> tuple[int, ...]:
        """Number of levels of each attribute, in code order."""
        return tuple(a.cardinality for a in self.attributes)

    @property
    def n_attributes(self) -> int:
        """Number of attributes."""
        return len(self.attributes)

    @property
    def size(self) -> int:
        """Number of cells of the product domain (an exact Python int)."""
        return math.prod(self.cardinalities)

    @property
    def strides(self) -> tuple[int, ...]:
        """Mixed-radix place values (Python ints): ``flat = Σ_f codes[f] * strides[f]``."""
        out, s = [], 1
        for k in reversed(self.cardinalities):
            out.append(s)
            s *= k
        return tuple(reversed(out))

    @property
    def one_hot_offsets(self) -> np.ndarray:
        """``(F + 1,)`` int64 offsets: attribute ``f`` occupies one-hot columns ``[o[f], o[f+1])``."""
        return np.concatenate([[0], np.cumsum(self.cardinalities)]).astype(np.int64)

    @property
    def one_hot_names(self) -> list[str]:
        """Column names ``"attribute=level"`` of :meth:`one_hot`."""
        return [f"{a.name}={v}" for a in self.attributes for v in a.levels]

    def index(self, name: str) -> int:
        """Position of attribute ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise DataValidationError(f"unknown attribute {name!r}; domain has {list(self.names)}") from None

    def __getitem__(self, name: str) -> Attribute:
        return self.attributes[self.index(name)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and self.attributes == other.attributes

    def __hash__(self) -> int:
        return hash(self.attributes)

    def __repr__(self) -> str:
        parts = ", ".join(f"{a.name}[{a.cardinality}]" for a in self.attributes)
        return f"Domain({parts}; size={self.size})"

    def subdomain(self, names: Iterable[str]) -> Domain:
        """The marginal domain over ``names`` (in the given order)."""
        return Domain([self[n] for n in names])

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description (inverse of :meth:`from_dict`)."""
        return {"attributes": [
            {"name": a.name, "levels": list(a.levels),
             **({"bins": list(a.bins)} if a.bins is not None else {}),
             **({"source": a.source} if a.source else {})} for a in self.attributes]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Domain:
        """Rebuild a domain from the dictionary written by :meth:`to_dict`.

        Parameters
        ----------
        d : mapping
            ``{"attributes": [{"name": ..., "levels": [...], ...}, ...]}``.

        Returns
        -------
        Domain
            The domain with the same attributes, levels and binning.
        """
        return cls([Attribute(**{**a, "levels": tuple(a["levels"])}) for a in d["attributes"]])

    # ------------------------------------------------------------------ frames <-> codes
    def _require_columns(self, df: pd.DataFrame, cols: Sequence[str]) -> None:
        if not isinstance(df, pd.DataFrame):
            raise DataValidationError(f"expected a pandas DataFrame, got {type(df).__name__}")
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise DataValidationError(
                f"frame lacks domain column(s) {missing}; it has {list(df.columns)}")

    def _raise_bad(self, attr: Attribute, values: ArrayLike, codes: np.ndarray, what: str) -> None:
        bad = np.flatnonzero(codes < 0)
        vals = np.asarray(values, dtype=object)[bad]
        nan = pd.isna(vals)
        if nan.any():
            raise DataValidationError(
                f"column {attr.column!r} has {int(nan.sum())} missing value(s) (first at row "
                f"{bad[np.argmax(nan)]}); missing values are never dropped silently: drop or impute them first")
        first = _py(vals[0])
        distinct = pd.unique(vals)
        if attr.bins is not None:
            raise DataValidationError(
                f"column {attr.column!r} value {first!r} (row {bad[0]}, {len(bad)} row(s) in all) lies "
                f"outside the bins [{_fmt_edge(attr.bins[0])}, {_fmt_edge(attr.bins[-1])}) of attribute "
                f"{attr.name!r}; widen the edges (use -inf/inf for open ends)")
        raise DataValidationError(
            f"column {attr.name!r} has unknown {what} {first!r} (row {bad[0]}; {len(distinct)} distinct "
            f"unknown value(s): {[_py(v) for v in distinct[:5]]}); expected one of {list(attr.levels)}")

    def discretize(self, df: pd.DataFrame) -> pd.DataFrame:
        """Apply the bins: return a frame with one column per attribute holding level values.

        Binned attributes read their ``source`` column and map ``[e_j, e_{j+1})`` to ``levels[j]``
        (like ``pd.cut(x, bins, right=False, labels=levels)``). Other attributes are copied from their
        source column. Values outside every bin, or NaN, raise :class:`DataValidationError`.
        """
        self._require_columns(df, [a.column for a in self.attributes])
        out = {}
        for a in self.attributes:
            col = df[a.column].to_numpy()
            if a.bins is None:
                out[a.name] = col
                continue
            codes = a.raw_codes(col)
            if (codes < 0).any():
                self._raise_bad(a, col, codes, "value")
            out[a.name] = np.asarray(a.levels)[codes] if self._homogeneous(a) else \
                np.asarray(a.levels, dtype=object)[codes]
        return pd.DataFrame(out, index=df.index)

    @staticmethod
    def _homogeneous(a: Attribute) -> bool:
        return len({type(v) for v in a.levels}) == 1 and not isinstance(a.levels[0], (tuple, bytes))

    def encode(self, df: pd.DataFrame, *, discretize: bool = False) -> np.ndarray:
        """Integer codes ``(n, F)`` (int64) of the level values in ``df``'s attribute columns.

        Parameters
        ----------
        df : DataFrame
            Holds a column per attribute name (extra columns are ignored).
        discretize : bool, default False
            First apply :meth:`discretize` (read raw source columns and bin numeric ones).

        Raises
        ------
        DataValidationError
            A value that is not a declared level (naming the column and the value), or a missing value.
        """
        if discretize:
            df = self.discretize(df)
        self._require_columns(df, self.names)
        codes = np.empty((len(df), self.n_attributes), dtype=np.int64)
        for j, a in enumerate(self.attributes):
            values = df[a.name].to_numpy()
            c = _level_codes(a.levels, values)
            if (c < 0).any():
                self._raise_bad(a, values, c, "level")
            codes[:, j] = c
        return codes

    def check_codes(self, codes: ArrayLike) -> np.ndarray:
        """Validate an ``(n, F)`` integer code array and return it as int64."""
        arr = np.asarray(codes)
        if arr.ndim == 1 and self.n_attributes == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[1] != self.n_attributes:
            raise DataValidationError(
                f"codes must have shape (n, {self.n_attributes}), got {arr.shape}")
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            if not (np.isfinite(arr.astype(float)).all() and (arr == np.round(arr)).all()):
                raise DataValidationError("codes must be integers (no NaN, no fractions)")
        arr = arr.astype(np.int64, copy=False)
        k = np.asarray(self.cardinalities, dtype=np.int64)
        bad = (arr < 0) | (arr >= k)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise DataValidationError(
                f"code {arr[i, j]} at row {i} is out of range for attribute {self.names[j]!r} "
                f"(valid codes 0..{k[j] - 1})")
        return arr

    def decode(self, codes: ArrayLike, *, categorical: bool = False) -> pd.DataFrame:
        """Frame of level values for integer ``codes`` ``(n, F)``; the inverse of :meth:`encode`.

        With ``categorical=True`` every column is an ordered ``pd.Categorical`` with the domain's levels.
        """
        codes = self.check_codes(codes)
        out = {}
        for j, a in enumerate(self.attributes):
            if categorical:
                out[a.name] = pd.Categorical.from_codes(codes[:, j], categories=list(a.levels), ordered=True)
            elif self._homogeneous(a):
                out[a.name] = np.asarray(a.levels)[codes[:, j]]
            else:
                out[a.name] = np.asarray(a.levels, dtype=object)[codes[:, j]]
        return pd.DataFrame(out)

    # ------------------------------------------------------------------ flat index
    def ravel(self, codes: ArrayLike) -> np.ndarray:
        """Mixed-radix flat index of each row of ``codes`` (first attribute most significant).

        Returns int64 when ``size < 2**63``; otherwise an object array of exact Python ints.
        """
        codes = self.check_codes(codes)
        if self.size < _INT64_LIMIT:
            return codes @ np.asarray(self.strides, dtype=np.int64)
        flat = np.zeros(len(codes), dtype=object)
        for j, s in enumerate(self.strides):
            flat = flat + codes[:, j].astype(object) * s
        return flat

    def unravel(self, flat: ArrayLike) -> np.ndarray:
        """Codes ``(n, F)`` of flat indices (int64 or object arrays of Python ints); inverse of :meth:`ravel`."""
        arr = np.asarray(flat)
        if arr.ndim == 0:
            arr = arr[None]
        if arr.ndim != 1:
            raise DataValidationError(f"flat indices must be one-dimensional, got shape {arr.shape}")
        if arr.dtype == object:
            if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in arr):
                raise DataValidationError("flat indices must be integers (int64 or Python ints)")
        elif np.issubdtype(arr.dtype, np.integer):
            arr = arr.astype(np.int64) if arr.dtype != np.uint64 else arr.astype(object)
        else:
            raise DataValidationError(f"flat indices must be integers, got dtype {arr.dtype}")
        if len(arr):
            lo, hi = arr.min(), arr.max()
            if lo < 0 or hi >= self.size:
                raise DataValidationError(
                    f"flat index out of range [0, {self.size}): min {lo}, max {hi}")
        if self.size < _INT64_LIMIT:
            arr = arr.astype(np.int64)
        elif arr.dtype != object:
            arr = arr.astype(object)
        codes = np.empty((len(arr), self.n_attributes), dtype=np.int64)
        rest = arr
        for j in range(self.n_attributes - 1, -1, -1):
            k = self.cardinalities[j]
            codes[:, j] = (rest % k).astype(np.int64)
            rest = rest // k
        return codes

    # ------------------------------------------------------------------ one-hot and counts
    def one_hot(self, codes: ArrayLike) -> sp.csr_matrix:
        """Sparse one-hot matrix ``(n, Σ k_f)`` (float64 CSR), one 1 per attribute and row.

        Columns follow :attr:`one_hot_offsets` / :attr:`one_hot_names`.
        """
        codes = self.check_codes(codes)
        n, F = codes.shape
        indices = (codes + self.one_hot_offsets[:-1]).ravel()
        indptr = np.arange(0, n * F + 1, F, dtype=np.int64)
        return sp.csr_matrix((np.ones(n * F), indices, indptr), shape=(n, int(self.one_hot_offsets[-1])))

    def _to_codes(self, data: pd.DataFrame | ArrayLike) -> np.ndarray:
        return self.encode(data) if isinstance(data, pd.DataFrame) else self.check_codes(data)

    def unique_codes(self, data: pd.DataFrame | ArrayLike,
                     sample_weight: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Collapse records to the distinct cells they occupy.

        Parameters
        ----------
        data : DataFrame or array of codes ``(n, F)``
        sample_weight : array ``(n,)``, optional
            Row weights (finite, ``>= 0``); the returned counts are then float sums of weights.

        Returns
        -------
        cells : ndarray ``(M, F)`` int64
            Distinct code rows, sorted by flat index.
        counts : ndarray ``(M,)``
            Number of records (int64) or summed weights (float64) per cell.
        """
        codes = self._to_codes(data)
        w = None if sample_weight is None else _check_row_weights(sample_weight, len(codes))
        if len(codes) == 0:
            return codes.reshape(0, self.n_attributes), np.zeros(0, dtype=np.int64 if sample_weight is None else float)
        if self.size < _INT64_LIMIT:  # 1-D unique on flat indices is much faster than row-wise unique
            flat, inverse, counts = np.unique(self.ravel(codes), return_inverse=True, return_counts=True)
            cells = self.unravel(flat)
        else:
            cells, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
        if w is None:
            return cells, counts.astype(np.int64)
        return cells, np.bincount(inverse.ravel(), weights=w, minlength=len(cells))

    def counts(self, data: pd.DataFrame | ArrayLike, sample_weight: ArrayLike | None = None, *,
               name: str = "count") -> pd.DataFrame:
        """Sufficient statistics: one row per observed cell with its level values and a count column.

        Rows are sorted by flat index (lexicographic order of codes). See :meth:`unique_codes`.
        """
        cells, counts = self.unique_codes(data, sample_weight)
        if name in self.names:
            raise DataValidationError(f"count column name {name!r} clashes with an attribute name")
        out = self.decode(cells)
        out[name] = counts
        return out
