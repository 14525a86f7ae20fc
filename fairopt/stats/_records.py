"""Record tables (Dask DataFrames, Parquet files) collapsed to distinct records with weights, and
contingency counts of cells by groups."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.stats._files import open_parquet
from fairopt.stats._sources import _check_weights, add_sums, chunk_rows, is_dask, map_reduce

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray


def cell_group_counts(cells: Any, groups: Any, n_cells: int, n_groups: int, sample_weight: Any = None,
                      chunk_rows: int | None = None) -> np.ndarray:
    """Weighted counts ``N[j, k]`` of rows in cell ``j`` (integer codes) and group ``k`` (codes):
    the statistic of a conditional matrix (balanced filtering), shape ``(n_cells, n_groups)``.

    Examples
    --------
    >>> import numpy as np
    >>> cell_group_counts(np.array([0, 1, 1]), np.array([1, 0, 1]), 2, 2).tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    def part(c: NDArray[Any], g: NDArray[Any], w: NDArray[Any] | None) -> NDArray[np.float64]:
        c, g = np.asarray(c), np.asarray(g)
        for name, v, hi in (("cell", c, n_cells), ("group", g, n_groups)):
            if v.size and (not np.issubdtype(v.dtype, np.integer) or v.min() < 0 or v.max() >= hi):
                raise DataValidationError(f"{name} codes must be integers in 0 .. {hi - 1}.")
        idx = c.astype(np.int64) * n_groups + g
        return np.bincount(idx, weights=_check_weights(w), minlength=n_cells * n_groups).astype(float)
    return map_reduce(part, add_sums, [cells, groups, sample_weight], chunk_rows).reshape(n_cells, n_groups)


# --------------------------------------------------------------------------- record tables
def is_lazy_frame(X: object) -> bool:
    """A Dask DataFrame, or a path to a Parquet file or directory.

    Examples
    --------
    >>> import pandas as pd
    >>> is_lazy_frame(pd.DataFrame({"a": [1]})), is_lazy_frame("records.parquet")
    (False, True)
    """
    if isinstance(X, (str, os.PathLike)):
        return os.fspath(X).endswith(".parquet")
    return is_dask(X) and hasattr(X, "columns")


def collapse_records(X: Any, y: Any, sensitive_features: Any, sample_weight: Any = None, batch_rows: int | None = None
                     ) -> tuple[pd.DataFrame, pd.Series, str | list[str] | pd.Series, pd.Series]:
    """Distinct records of a Dask DataFrame or Parquet file with their total weight.

    Counting formulations (max-ent, TV repair, the Calmon mapping) depend on the records only
    through these counts over the product domain, so ``fit`` on the returned table with
    ``sample_weight=weight`` is the fit on the rows. ``y`` and ``sensitive_features`` are column
    names of ``X`` (or Dask Series aligned with it); ``sample_weight`` a column name, a Dask
    Series, or ``None``. Parquet files are read in record batches of ``batch_rows``.

    Returns
    -------
    X, y, sensitive_features, weight : pandas objects
        Features (the protected column kept when it is a column of ``X``), label Series,
        protected column name or Series, and weights, one row per distinct record.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": [1, 1, 2], "s": ["f", "f", "m"], "y": [0, 0, 1]})
    >>> X.to_parquet("/tmp/_fairopt_doc.parquet")
    >>> Xc, yc, sc, w = collapse_records("/tmp/_fairopt_doc.parquet", "y", "s")
    >>> Xc.to_dict("list"), yc.tolist(), sc, w.tolist()
    ({'a': [1, 2], 's': ['f', 'm']}, [0, 1], 's', [2.0, 1.0])
    """
    import pandas as pd

    extra = {}
    names = list(sensitive_features) if (isinstance(sensitive_features, (list, tuple)) and sensitive_features
                                        and all(isinstance(c, str) for c in sensitive_features)) else None
    for key, v in (("__y__", y), ("__s__", None if names else sensitive_features), ("__w__", sample_weight)):
        if v is not None and not isinstance(v, str):
            if not is_dask(v):
                raise DataValidationError(f"with a Dask or Parquet X, pass {key.strip('_')} as a column name or a "
                                          "Dask Series aligned with X.")
            extra[key] = v
    y_name = y if isinstance(y, str) else "__y__"
    s_name = sensitive_features if isinstance(sensitive_features, str) else "__s__"
    s_names = names if names is not None else [s_name]
    w_name = sample_weight if isinstance(sample_weight, str) else ("__w__" if sample_weight is not None else None)

    def count(frame: pd.DataFrame) -> pd.DataFrame:
        keys = [c for c in frame.columns if c != w_name]
        if frame[keys].isna().any().any():
            bad = frame[keys].columns[frame[keys].isna().any()].tolist()
            raise DataValidationError(f"columns {bad} have missing values; drop or impute them first.")
        w = frame[w_name].astype(float) if w_name else pd.Series(1.0, index=frame.index)
        if not np.isfinite(w).all() or (w < 0).any():
            raise DataValidationError("sample_weight must be finite and non-negative.")
        return w.groupby([frame[k] for k in keys], sort=True, observed=True).sum().rename("__weight__").reset_index()

    if is_dask(X):
        frame = X.assign(**extra) if extra else X
        cols = list(frame.columns)
        for need in (y_name, *s_names):
            if need not in cols:
                raise DataValidationError(f"column {need!r} is not in X (columns {cols[:10]}).")
        meta = frame._meta.drop(columns=[w_name] if w_name else [])
        meta = meta.assign(__weight__=np.zeros(0))
        parts = frame.map_partitions(count, meta=meta)
        keys = [c for c in cols if c != w_name]
        # one tree reduction (split_out=1): the distinct records fit on the driver anyway
        table = parts.groupby(keys, sort=False)["__weight__"].sum(split_out=1).compute().reset_index()
    else:
        import pyarrow as pa
        if extra:
            raise DataValidationError("with a Parquet X, y / sensitive_features / sample_weight must be column names.")
        path = os.fspath(X)
        ds = open_parquet(path, "X")          # footer and schema read first: a damaged file is refused
        rows = batch_rows or chunk_rows()
        batches = ds.iter_batches(batch_size=rows) if hasattr(ds, "iter_batches") else ds.to_batches(batch_size=rows)
        try:
            tables = [count(b.to_pandas()) for b in batches]      # a loop over batches, not rows
        except (pa.ArrowException, OSError) as exc:               # a damaged page inside the file
            raise DataValidationError(f"X={path!r} cannot be read past its footer ({exc}); re-write it, e.g. "
                                      "DataFrame.to_parquet(path).") from exc
        if not tables:
            raise DataValidationError(f"X={path!r} has no rows.")
        keys = [c for c in tables[0].columns if c != "__weight__"]
        for need in (y_name, *s_names):
            if need not in keys:
                raise DataValidationError(f"column {need!r} is not in {path!r} (columns {keys[:10]}).")
        table = pd.concat(tables).groupby(keys, sort=True, observed=True)["__weight__"].sum().reset_index()
    table = table.sort_values([c for c in table.columns if c != "__weight__"], kind="stable").reset_index(drop=True)
    weight = table.pop("__weight__").astype(float)
    # a Dask Series keeps its name, as a pandas one does in memory (the label column is named after it)
    y_out = table.pop(y_name).rename(getattr(y, "name", None) if y_name == "__y__" else y_name)
    if names is not None:      # several column names: passed on, so the estimator answers as in memory
        s_out: str | list[str] | pd.Series = names
    elif s_name == "__s__":
        s_out = table.pop("__s__").rename(getattr(sensitive_features, "name", None))
    else:
        s_out = s_name
    return table, y_out, s_out, weight
