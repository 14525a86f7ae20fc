"""Sufficient statistics of large inputs, computed where the data lives.

fairopt's statistics-based formulations read their data only through small summaries: per-group
score atoms (threshold post-processing), per-group histograms of quantised scores, per-group sums
(metrics) and counts over a product domain (max-ent, the Calmon mapping). This module computes
them by map-reduce over *chunks*, so that the rows themselves never sit in one process:

* a NumPy array is one chunk (or several, see ``chunk_rows``);
* a :class:`numpy.memmap`, or a path to a ``.npy`` file (opened memory-mapped), is read
  ``chunk_rows`` rows at a time, so the resident memory stays bounded whatever the file size;
* a Dask array or Series is reduced on its workers (one partial statistic per block, combined in
  a tree), and only the combined statistic comes back to the driver.

Every function returns the same NumPy arrays whatever the input kind, so the formulations solve
on the driver unchanged. Dask is imported only when a Dask collection is passed.

Examples
--------
>>> import numpy as np
>>> from fairopt.stats import group_labels, score_histogram
>>> f = np.array([0.0, 0.5, 1.0, 0.2, 0.4])
>>> g = np.array(["a", "a", "a", "b", "b"])
>>> labels = group_labels(g)
>>> labels.tolist()
['a', 'b']
>>> h = score_histogram(f, g, labels, bins=2)
>>> h.counts.tolist()
[[1.0, 2.0], [1.0, 1.0]]
"""
from __future__ import annotations

from fairopt.stats._records import cell_group_counts, collapse_records, is_lazy_frame
from fairopt.stats._scores import (
                                  HISTOGRAM_BYTES_PER_BIN,
                                  MAX_HISTOGRAM_BYTES,
                                  ScoreHistogram,
                                  bin_centres,
                                  bin_index,
                                  check_histogram_size,
                                  quantise,
                                  score_atoms,
                                  score_histogram,
                                  score_range,
)
from fairopt.stats._sources import (
                                  as_source,
                                  chunk_rows,
                                  group_labels,
                                  group_sums,
                                  is_dask,
                                  is_lazy,
                                  keyed_group_sums,
                                  labels_and_range,
                                  map_reduce,
                                  n_rows,
                                  set_chunk_rows,
)

__all__ = ["HISTOGRAM_BYTES_PER_BIN", "MAX_HISTOGRAM_BYTES", "ScoreHistogram", "as_source", "bin_centres", "bin_index",
           "cell_group_counts", "check_histogram_size", "chunk_rows",
           "collapse_records", "group_labels", "group_sums", "is_dask", "is_lazy", "is_lazy_frame",
           "keyed_group_sums", "labels_and_range", "map_reduce", "n_rows", "quantise", "score_atoms",
           "score_histogram", "score_range", "set_chunk_rows"]
