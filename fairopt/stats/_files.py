"""File inputs of the chunked readers, checked before use: a ``.npy`` array's header, dtype and size,
a Parquet file's footer. Every refusal names the file and says how to re-create it."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from fairopt.errors import DataTypeError, DataValidationError


def open_npy(path: str, name: str = "X") -> np.memmap | np.ndarray:
    """``path`` opened memory-mapped after its header, dtype and size are checked: a file that is
    not a ``.npy`` array, an object array (it would need pickle, which runs code from the file)
    and a truncated file (fewer bytes than its header promises) are refused.

    Examples
    --------
    >>> import numpy as np
    >>> np.save("/tmp/_fairopt_doc_scores.npy", np.arange(3.0))
    >>> open_npy("/tmp/_fairopt_doc_scores.npy").tolist()
    [0.0, 1.0, 2.0]
    """
    fix = "re-create it with numpy.save(path, array) from a numeric or string array"
    if not os.path.exists(path):
        raise DataValidationError(f"{name}={path!r} does not exist.")
    if not os.path.isfile(path):
        raise DataValidationError(f"{name}={path!r} is not a file (a directory?); pass the path of a .npy array.")
    size = os.path.getsize(path)
    fmt = np.lib.format
    try:
        with open(path, "rb") as fh:
            version = fmt.read_magic(fh)
            # 2.0 and 3.0 share the 4-byte header length (3.0 only allows utf-8 field names)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = read(fh)
            offset = fh.tell()
    except (ValueError, OSError, SyntaxError, EOFError) as exc:
        raise DataValidationError(f"{name}={path!r} is not a valid .npy file ({size} bytes; its header cannot be "
                                  f"read: {exc}); {fix}.") from exc
    if dtype.hasobject:
        raise DataTypeError(f"{name}={path!r} holds Python objects (dtype {dtype}), which cannot be read "
                            f"memory-mapped and would need pickle; {fix} (e.g. array.astype(float) or .astype(str)).")
    need = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size < need:
        raise DataValidationError(
            f"{name}={path!r} is truncated: its header promises shape {tuple(shape)} of {dtype} ({need} bytes with "
            f"the header) but the file has {size} bytes; {fix}.")
    if int(np.prod(shape, dtype=np.int64)) == 0:   # numpy cannot memory-map zero bytes
        return np.zeros(shape, dtype=dtype, order="F" if fortran else "C")
    mapped: np.memmap[Any, np.dtype[Any]] = np.load(path, mmap_mode="r")   # numpy types np.load as Any
    return mapped


def open_parquet(path: str, name: str = "X") -> Any:
    """A :class:`pyarrow.parquet.ParquetFile` (a file) or :class:`pyarrow.dataset.Dataset` (a
    directory) of ``path``, its footer and schema read first: a damaged or non-Parquet file is
    refused with a :class:`~fairopt.errors.DataValidationError` naming it.

    Examples
    --------
    >>> import pandas as pd
    >>> pd.DataFrame({"a": [1, 2]}).to_parquet("/tmp/_fairopt_doc_open.parquet")
    >>> open_parquet("/tmp/_fairopt_doc_open.parquet").metadata.num_rows
    2
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    if not os.path.exists(path):
        raise DataValidationError(f"{name}={path!r} does not exist.")
    try:
        if os.path.isfile(path):
            return pq.ParquetFile(path)
        import pyarrow.dataset as pads
        return pads.dataset(path, format="parquet")
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise DataValidationError(
            f"{name}={path!r} is not a readable Parquet file ({os.path.getsize(path) if os.path.isfile(path) else 'a'}"
            f"{' bytes' if os.path.isfile(path) else ' directory'}: {exc}); re-write it, e.g. "
            "DataFrame.to_parquet(path), or pass the frame itself.") from exc
