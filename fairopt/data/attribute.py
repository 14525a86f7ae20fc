"""Attributes of a product domain: a name, ordered levels and, for numeric columns, bin edges.

Split from :mod:`fairopt.data.domain`, which re-exports :class:`Attribute`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def _py(value: Any) -> Any:
    """Convert numpy scalars to Python scalars so levels compare, hash and print cleanly."""
    return value.item() if isinstance(value, np.generic) else value


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)) or value is pd.NA \
        or value is pd.NaT


def _check_row_weights(sample_weight: ArrayLike, n: int) -> np.ndarray:
    """``sample_weight`` as float64 ``(n,)``: finite and non-negative, naming the first bad entry."""
    try:
        w = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"sample_weight must be numeric: {exc}") from exc
    if w.shape != (n,):
        raise DataValidationError(f"sample_weight must have one entry per row, shape ({n},); got shape {w.shape}.")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.argmax(bad))
        why = "NaN" if np.isnan(w[i]) else ("infinite" if np.isinf(w[i]) else f"negative ({w[i]:g})")
        raise DataValidationError(
            f"sample_weight[{i}] is {why}; weights must be finite and >= 0 ({int(bad.sum())} bad "
            "entries in all). Drop those rows or fix their weights.")
    return w


def _fmt_edge(e: float) -> str:
    if math.isinf(e):
        return "inf" if e > 0 else "-inf"
    return str(int(e)) if float(e).is_integer() else repr(float(e))


def _level_codes(levels: tuple[Any, ...], values: ArrayLike) -> np.ndarray:
    """Position of each value in ``levels`` (int64), ``-1`` for unknown or missing values."""
    index = pd.Index(list(levels), dtype=object if len({type(v) for v in levels}) > 1 else None)
    out: np.ndarray = index.get_indexer(pd.Index(values)).astype(np.int64)
    return out


@dataclass(frozen=True)
class Attribute:
    """One categorical attribute of a :class:`Domain`.

    Parameters
    ----------
    name : str
        Column name of the attribute in encoded / decoded frames.
    levels : sequence
        Ordered, distinct level values (strings, ints, ...). Level ``j`` has code ``j``.
    bins : sequence of float, optional
        Increasing bin edges ``e_0 < … < e_k`` for a numeric source column; level ``j`` is the
        half-open interval ``[e_j, e_{j+1})``. Use ``-inf`` / ``inf`` for open-ended first / last bins.
        Requires ``len(levels) == len(bins) - 1``.
    source : str, optional
        Column read by :meth:`Domain.discretize` (default: ``name``), e.g. ``"age"`` for an attribute
        ``"age_decade"``.

    Examples
    --------
    >>> import numpy as np
    >>> age = Attribute("age_decade", (10, 20, 30), bins=(10, 20, 30, np.inf), source="age")
    >>> age.cardinality
    3
    """

    name: str
    levels: tuple[Any, ...]
    bins: tuple[Any, ...] | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DataValidationError(f"attribute names must be non-empty strings, got {self.name!r}")
        levels = tuple(_py(v) for v in self.levels)
        if len(levels) == 0:
            raise DataValidationError(f"attribute {self.name!r} needs at least one level")
        if any(_is_missing(v) for v in levels):
            raise DataValidationError(f"attribute {self.name!r} has a missing (NaN/None) level: {levels}")
        if len(set(levels)) != len(levels):
            raise DataValidationError(f"attribute {self.name!r} has duplicate levels: {levels}")
        object.__setattr__(self, "levels", levels)
        if self.bins is not None:
            edges = tuple(float(e) for e in self.bins)
            if any(math.isnan(e) for e in edges) or any(b <= a for a, b in itertools.pairwise(edges)):
                raise DataValidationError(
                    f"bins of attribute {self.name!r} must be strictly increasing numbers, got {edges}")
            if len(edges) != len(levels) + 1:
                raise DataValidationError(
                    f"attribute {self.name!r} has {len(levels)} levels but {len(edges)} bin edges; "
                    f"pass exactly one more edge than levels")
            object.__setattr__(self, "bins", edges)
        if self.source is not None and not isinstance(self.source, str):
            raise DataValidationError(f"source of attribute {self.name!r} must be a column name")

    @property
    def cardinality(self) -> int:
        """Number of levels ``k_f``."""
        return len(self.levels)

    @property
    def column(self) -> str:
        """Column that :meth:`Domain.discretize` reads."""
        return self.source or self.name

    def raw_codes(self, values: ArrayLike) -> np.ndarray:
        """Map raw values of the source column to level codes (``-1`` where no bin contains them)."""
        if self.bins is None:
            return _level_codes(self.levels, values)
        x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
        codes = np.searchsorted(np.asarray(self.bins), x, side="right").astype(np.int64) - 1
        codes[(codes >= self.cardinality) | np.isnan(x)] = -1
        out: np.ndarray = codes
        return out


def _as_attribute(spec: object) -> Attribute:
    if isinstance(spec, Attribute):
        return spec
    if isinstance(spec, Mapping):
        return Attribute(**spec)
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], str):
        return Attribute(spec[0], tuple(spec[1]))
    raise DataValidationError(
        f"cannot read an attribute from {spec!r}; pass Attribute(name, levels), (name, levels) or a dict")
