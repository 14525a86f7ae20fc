"""The three domains of the max-entropy paper's experiments, built from the shared data.

``"adult"``         504 cells: sex × race (White / Non-white) × age decade (7) × education years (9)
                    × income; from the full Adult file (45,222 rows) in file order.
``"compas-small"``  144 cells: sex × race × age category × priors (0, 1–3, >3) × charge degree ×
                    two-year recidivism; 6,167 rows.
``"compas-large"``  every column of the shared COMPAS file, discretised so that every level keeps at
                    least ~13 records (``|Ω| ≈ 1.0e10``). The shared file lacks the paper's days in
                    jail, ``is_recid`` and charge flags; the charge description stands in for the
                    flags (50 most frequent descriptions plus "Other").

Without ``FAIROPT_DATA_HOME`` (or ``path``), ``"adult"`` and ``"compas-small"`` fall back to the
built-in counts tables (rows expanded and shuffled with a fixed seed, since file order is lost).
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairopt.data import ADULT_SPEC, COMPAS_SPEC, Attribute, Domain, data_home, load_adult, load_builtin, load_compas
from fairopt.errors import ConfigError

_INF = float("inf")
PAPER_DATASETS = ("adult", "compas-small", "compas-large")
N_CHARGE_DESCRIPTIONS = 50

#: bins of the numeric COMPAS columns in the large domain (half-open [a, b))
LARGE_BINS = {
    "age": [18, 20, *range(21, 60), 60, 62, 64, 66, 69, 72, _INF],
    "priors_count": [*range(0, 21), 21, 24, 27, _INF],
    "juv_fel_count": [0, 1, 2, 3, 4, _INF],
    "juv_misd_count": [0, 1, 2, 3, 4, _INF],
    "juv_other_count": [0, 1, 2, 3, 4, _INF],
}


@dataclass
class PaperData:
    """Records of one paper domain (level values), with roles.

    Attributes
    ----------
    frame : DataFrame
        One column per attribute holding level values, rows in file order.
    domain : Domain
        Level sets fixed from the full data (never per fold).
    label : str
    protected : tuple of str
        Protected attributes studied in the paper for this domain.
    pos_label : object
        Label value whose rate defines the statistical rate (1 in the paper's code).
    source : str
        ``"file"`` or ``"builtin"``.
    """

    name: str
    frame: pd.DataFrame
    domain: Domain
    label: str
    protected: tuple[Any, ...]
    pos_label: object
    source: str

    @property
    def features(self) -> list[str]:
        return [c for c in self.frame.columns if c != self.label]


def _labels(edges: Iterable[float]) -> tuple[str, ...]:
    out = []
    for a, b in itertools.pairwise(edges):
        if b == _INF:
            out.append(f"{int(a)}+")
        elif b - a == 1:
            out.append(str(int(a)))
        else:
            out.append(f"{int(a)}-{int(b) - 1}")
    return tuple(out)


def compas_large_domain(raw: pd.DataFrame) -> Domain:
    """Domain of the large COMPAS experiment for the shared COMPAS file."""
    top = raw["c_charge_desc"].value_counts().index[:N_CHARGE_DESCRIPTIONS]
    attrs = [
        Attribute("sex", ("Male", "Female")),
        Attribute("age", _labels(LARGE_BINS["age"]), bins=tuple(LARGE_BINS["age"])),
        Attribute("race", ("Not-Caucasian", "Caucasian")),
        *[Attribute(c, _labels(LARGE_BINS[c]), bins=tuple(LARGE_BINS[c]))
          for c in ("juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count")],
        Attribute("decile_score", tuple(range(1, 11))),
        Attribute("age_cat", ("Less than 25", "25 - 45", "Greater than 45")),
        Attribute("c_charge_degree", ("F", "M")),
        Attribute("c_charge_desc", (*sorted(top), "Other")),
        Attribute("score_text", ("Low", "Medium", "High")),
        Attribute("two_year_recid", (0, 1)),
    ]
    return Domain(attrs)


def load_paper_dataset(name: str, path: str | os.PathLike[str] | None = None) -> PaperData:
    """Load one of :data:`PAPER_DATASETS` as level values with its domain."""
    if name not in PAPER_DATASETS:
        raise ConfigError(f"unknown max-entropy data set {name!r}; choose one of {PAPER_DATASETS}.")
    have_files = path is not None or data_home() is not None
    if name == "compas-large":
        raw = load_compas(path)
        dom = compas_large_domain(raw)
        raw = raw.assign(c_charge_desc=raw["c_charge_desc"].where(
            raw["c_charge_desc"].isin(dom["c_charge_desc"].levels), "Other"))
        frame = dom.decode(dom.encode(raw, discretize=True))
        return PaperData(name, frame, dom, "two_year_recid", ("sex", "race"), 1, "file")
    spec = ADULT_SPEC if name == "adult" else COMPAS_SPEC
    protected = ("sex",) if name == "adult" else ("sex", "race")
    if have_files:
        raw = load_adult(path) if name == "adult" else load_compas(path)
        prepared = spec.prepare(raw) if spec.prepare is not None else raw
        frame = spec.domain.decode(spec.domain.encode(prepared, discretize=True))
        source = "file"
    else:
        frame = load_builtin(spec.name).expand(shuffle=True, random_state=0)
        source = "builtin"
    return PaperData(name, frame, spec.domain, spec.label, protected, 1, source)


def contiguous_folds(n: int, k: int = 5) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The paper code's folds: contiguous blocks of ``n // k`` rows, the remainder in the last.

    Yields ``(train_index, test_index)`` pairs.
    """
    size = n // k
    idx = np.arange(n)
    for f in range(k):
        lo, hi = f * size, (n if f == k - 1 else (f + 1) * size)
        yield np.r_[idx[:lo], idx[hi:]], idx[lo:hi]
