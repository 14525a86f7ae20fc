"""Checks of a benchmark file's contents: the schema, the protected columns, a damaged gzip.

Split from :mod:`fairopt.data.loaders`. Every error names the file, the column and the first bad
row (0-based data row and file line; the header is line 1).
"""
from __future__ import annotations

import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class _Info(Protocol):
    """What the checks read of a ``fairopt.data.loaders.DatasetInfo`` (which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def schema(self) -> Mapping[str, str]: ...
    @property
    def protected(self) -> tuple[str, ...]: ...


#: column kinds of a loader schema
_I, _F, _N, _S = "int", "float", "number", "str"


def _row(mask: ArrayLike) -> str:
    """Where the first True of ``mask`` is: data row (0-based) and file line (the header is line 1)."""
    i = int(np.argmax(np.asarray(mask)))
    return f"first at row {i} (line {i + 2} of the file)"


def _check_schema(df: pd.DataFrame, info: _Info, file: Path, allow_missing: tuple[str, ...] = ()) -> pd.DataFrame:
    if df.shape[0] == 0:
        raise DataValidationError(
            f"{file} has a header but no data rows (columns {list(df.columns)[:10]}); re-create it from the "
            f"{info.source}.")
    absent = [c for c in info.schema if c not in df.columns]
    if absent:
        raise DataValidationError(
            f"{file} lacks column(s) {absent} promised by load_{info.name}; it has {list(df.columns)[:20]}"
            f"{'...' if df.shape[1] > 20 else ''}. Re-create it from the {info.source} with the documented columns.")
    for col, kind in info.schema.items():
        s = df[col]
        missing = s.isna().to_numpy()
        if col not in allow_missing and missing.any():
            raise DataValidationError(
                f"column {col!r} of {file} has {int(missing.sum())} missing value(s), {_row(missing)}; the "
                "loader promises none")
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        if kind == _S:
            if numeric:
                df[col] = s.astype(str)
            continue
        if not numeric:
            parsed = pd.to_numeric(s, errors="coerce")
            bad = parsed.isna().to_numpy() & ~missing
            if not bad.any() and pd.api.types.is_numeric_dtype(parsed):
                bad = np.abs(parsed.to_numpy(dtype=float)) >= 2.0 ** 63   # beyond int64: read as objects
            where = f", {_row(bad)}: {s.iloc[int(np.argmax(bad))]!r}" if bad.any() else ""
            raise DataValidationError(f"column {col!r} of {file} should be numeric, got dtype {s.dtype}{where}")
        if not pd.api.types.is_integer_dtype(s):
            v = s.to_numpy(dtype=float)
            inf = np.isinf(v)
            if inf.any():   # inf would become -9223372036854775808 as int64, or poison every mean
                raise DataValidationError(
                    f"column {col!r} of {file} has {int(inf.sum())} infinite value(s), {_row(inf)}; the loader "
                    f"promises finite {'integers' if kind == _I else 'numbers'}")
            if kind == _I:
                frac = ~missing & (v != np.round(np.where(missing, 0.0, v)))
                if frac.any():
                    raise DataValidationError(f"column {col!r} of {file} should hold integers, {_row(frac)}: "
                                              f"{float(v[int(np.argmax(frac))])!r}")
                if missing.any():
                    raise DataValidationError(f"column {col!r} of {file} should hold integers, {_row(missing)}: "
                                              "a missing value")
                df[col] = v.astype(np.int64)
            elif kind == _F:
                df[col] = s.astype(np.float64)
        elif kind == _F:
            df[col] = s.astype(np.float64)
    return df


def _check_protected(df: pd.DataFrame, info: _Info, file: Path) -> pd.DataFrame:
    """Every protected column holds at least two groups (a fairness report compares groups)."""
    for col in info.protected:
        values = pd.unique(df[col].dropna())
        if len(values) < 2:
            raise DataValidationError(
                f"column {col!r} of {file} (a protected attribute of load_{info.name}) holds a single group "
                f"{list(values)} on all {len(df)} rows, from row 0 on; fairness metrics compare groups, so the "
                "file is not a usable copy of the data set. Re-create it from the "
                f"{info.source}.")
    return df


def _truncation(file: Path) -> str:
    """Where a damaged gzip ends: the last complete line and the column the cut falls in."""
    try:
        # a decompressor object returns what the damaged stream holds instead of raising
        data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(file.read_bytes())
    except (OSError, zlib.error):
        data = b""
    lines = data.count(b"\n")
    if lines == 0:
        return "not even the header line is complete"
    names = data.split(b"\n", 1)[0].decode("utf-8", "replace").split(",")
    k = data.rsplit(b"\n", 1)[-1].decode("utf-8", "replace").count(",")
    col = names[min(k, len(names) - 1)].strip()
    return (f"the data end inside row {lines - 1} (line {lines + 1} of the file), in column {col!r}; "
            f"{lines - 1} complete row(s) precede it")
