"""Small data sets shipped inside the package (they work without ``FAIROPT_DATA_HOME``).

Two AIF360-style discretised domains, each stored as a counts table (one row per observed cell plus a
``count`` column) in ``fairopt/data/builtin/``:

* ``"compas"`` — 144 cells: sex × race (Caucasian vs not) × age category (3) × priors count
  (0, 1–3, >3) × charge degree (F, M) × two-year recidivism; 6,167 records.
* ``"adult"`` — 504 cells: sex × race (White vs non-white) × age decade (10…60, 70 = "70 or older") ×
  education years (5 = "<6", 6…12, 13 = ">12") × income > 50K; 45,222 records.

The tables are regenerated from the shared benchmark files by ``scripts/make_builtin_data.py``, which
calls :func:`make_builtin_counts` and :func:`counts_to_csv`; see ``builtin/CITATION.md``.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairopt.data.domain import Attribute, Domain
from fairopt.errors import DataValidationError

__all__ = [
    "ADULT_DOMAIN",
    "ADULT_SPEC",
    "BUILTIN_SPECS",
    "COMPAS_DOMAIN",
    "COMPAS_SPEC",
    "COUNT_COLUMN",
    "BuiltinData",
    "BuiltinSpec",
    "builtin_citation",
    "counts_to_csv",
    "load_builtin",
    "make_builtin_counts",
]

COUNT_COLUMN = "count"
_INF = float("inf")

COMPAS_DOMAIN = Domain([
    Attribute("sex", ("Male", "Female")),
    Attribute("race", ("Not-Caucasian", "Caucasian")),
    Attribute("age_cat", ("Less than 25", "25 - 45", "Greater than 45")),
    Attribute("priors_count", ("0", "1-3", ">3"), bins=(0, 1, 4, _INF)),
    Attribute("c_charge_degree", ("F", "M")),
    Attribute("two_year_recid", (0, 1)),
])

ADULT_DOMAIN = Domain([
    Attribute("sex", ("Female", "Male")),
    Attribute("race", ("Non-white", "White")),
    Attribute("age_decade", (10, 20, 30, 40, 50, 60, 70), bins=(10, 20, 30, 40, 50, 60, 70, _INF),
              source="age"),
    Attribute("education_years", (5, 6, 7, 8, 9, 10, 11, 12, 13),
              bins=(-_INF, 6, 7, 8, 9, 10, 11, 12, 13, _INF), source="education_num"),
    Attribute("income", (0, 1)),
])


def _prepare_compas(df: pd.DataFrame) -> pd.DataFrame:
    return df  # race is already binary in the shared file; priors are binned by the domain


def _prepare_adult(df: pd.DataFrame) -> pd.DataFrame:
    race = np.where(df["race"].to_numpy() == "White", "White", "Non-white")
    return df.assign(race=race)


@dataclass(frozen=True)
class BuiltinSpec:
    """Definition and standard fairness roles of a built-in domain.

    Attributes
    ----------
    name : str
        ``"compas"`` or ``"adult"``.
    domain : Domain
    label : str
        Outcome column.
    favourable_label : int
        The favourable outcome value (AIF360 convention: COMPAS 0 = did not reoffend, Adult 1 = > 50K).
    protected : str
        Default protected attribute.
    protected_attributes : tuple of str
        All attributes commonly used as protected.
    privileged : dict
        ``{attribute: privileged level}`` (AIF360 convention).
    source_dataset : str
        Loader (in :mod:`fairopt.data.loaders`) of the raw data the table was counted from.
    n_records : int
        Total count (rows of the raw file).
    citation : str
        Source and licence note; details in ``builtin/CITATION.md``.
    prepare : callable or None
        Maps the raw loader frame to the columns the domain's bins read (Adult: race → White / Non-white).

    Examples
    --------
    >>> from fairopt.data import BUILTIN_SPECS
    >>> spec = BUILTIN_SPECS["adult"]
    >>> spec.label, spec.favourable_label, spec.filename
    ('income', 1, 'adult.csv')
    """

    name: str
    domain: Domain
    label: str
    favourable_label: Any
    protected: str
    protected_attributes: tuple[Any, ...]
    privileged: dict[str, Any]
    source_dataset: str
    n_records: int
    citation: str
    prepare: Callable[[pd.DataFrame], pd.DataFrame] | None = field(repr=False, compare=False, default=None)

    @property
    def filename(self) -> str:
        """Name of the counts file inside ``fairopt/data/builtin/``."""
        return f"{self.name}.csv"

    def to_levels(self, raw: pd.DataFrame) -> pd.DataFrame:
        """Level values (one column per domain attribute) of the raw loader frame; validated."""
        prepared = self.prepare(raw) if self.prepare is not None else raw
        return self.domain.decode(self.domain.encode(prepared, discretize=True))

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Attributes other than the label."""
        return tuple(n for n in self.domain.names if n != self.label)


COMPAS_SPEC = BuiltinSpec(
    name="compas", domain=COMPAS_DOMAIN, label="two_year_recid", favourable_label=0,
    protected="race", protected_attributes=("race", "sex"),
    privileged={"race": "Caucasian", "sex": "Female"}, source_dataset="compas", n_records=6167,
    citation=("Counts derived from ProPublica's COMPAS recidivism analysis data "
              "(J. Angwin, J. Larson, S. Mattu, L. Kirchner, 'Machine Bias', ProPublica, 2016; "
              "https://github.com/propublica/compas-analysis)."),
    prepare=_prepare_compas)

ADULT_SPEC = BuiltinSpec(
    name="adult", domain=ADULT_DOMAIN, label="income", favourable_label=1,
    protected="sex", protected_attributes=("sex", "race"),
    privileged={"sex": "Male", "race": "White"}, source_dataset="adult", n_records=45222,
    citation=("Counts derived from the UCI Adult data set (B. Becker and R. Kohavi, 'Adult', UCI Machine "
              "Learning Repository, 1996, https://doi.org/10.24432/C5XW20), licensed CC BY 4.0."),
    prepare=_prepare_adult)

BUILTIN_SPECS: dict[str, BuiltinSpec] = {"compas": COMPAS_SPEC, "adult": ADULT_SPEC}


def _spec(name: str) -> BuiltinSpec:
    key = name.split(":", 1)[1] if name.startswith("builtin:") else name
    try:
        return BUILTIN_SPECS[key]
    except KeyError:
        raise DataValidationError(
            f"unknown built-in data set {name!r}; choose one of {sorted(BUILTIN_SPECS)} "
            f"(optionally prefixed 'builtin:')") from None


@dataclass(frozen=True, eq=False)
class BuiltinData:
    """A built-in counts table with its domain and roles.

    Attributes
    ----------
    spec : BuiltinSpec
    counts : DataFrame
        One row per observed cell, sorted by flat index: one column per domain attribute (level values)
        and an int64 ``count`` column.

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> compas = load_builtin("compas")
    >>> compas.n_records, compas.n_cells, compas.domain.size   # records, observed cells, domain
    (6167, 143, 144)
    >>> compas.label, compas.favourable_label
    ('two_year_recid', 0)
    """

    spec: BuiltinSpec
    counts: pd.DataFrame

    @property
    def name(self) -> str:
        """Name of the data set (``compas`` or ``adult``)."""
        return self.spec.name

    @property
    def domain(self) -> Domain:
        """The product domain of the counts table."""
        return self.spec.domain

    @property
    def label(self) -> str:
        """Name of the label column."""
        return self.spec.label

    @property
    def favourable_label(self) -> Any:
        """Label value that is the favourable outcome."""
        return self.spec.favourable_label

    @property
    def protected(self) -> str:
        """Default protected attribute."""
        return self.spec.protected

    @property
    def protected_attributes(self) -> tuple[Any, ...]:
        """Every attribute that can be used as protected."""
        return self.spec.protected_attributes

    @property
    def privileged(self) -> dict[str, Any]:
        """Privileged level of each protected attribute."""
        return self.spec.privileged

    @property
    def citation(self) -> str:
        """Source and preprocessing of the counts, as a citation string."""
        return self.spec.citation

    @property
    def n_records(self) -> int:
        """Total number of records (sum of counts)."""
        return int(self.counts[COUNT_COLUMN].sum())

    @property
    def n_cells(self) -> int:
        """Number of observed cells (rows of :attr:`counts`)."""
        return len(self.counts)

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """Sufficient statistics ``(cells (M, F) int64 codes, counts (M,) int64)``."""
        return self.domain.encode(self.counts), self.counts[COUNT_COLUMN].to_numpy(dtype=np.int64)

    def expand(self, *, shuffle: bool = False,
               random_state: int | np.random.Generator | None = None) -> pd.DataFrame:
        """One row per record (cells repeated by their counts with ``np.repeat``).

        Parameters
        ----------
        shuffle : bool, default False
            Permute the rows (otherwise they are grouped by cell in flat-index order).
        random_state : int, Generator or None
            Seed for the permutation (used only with ``shuffle=True``).
        """
        reps = self.counts[COUNT_COLUMN].to_numpy(dtype=np.int64)
        idx = np.repeat(np.arange(len(reps)), reps)
        if shuffle:
            idx = np.random.default_rng(random_state).permutation(idx)
        return self.counts.drop(columns=COUNT_COLUMN).iloc[idx].reset_index(drop=True)

    def __repr__(self) -> str:
        return (f"BuiltinData({self.name!r}: {self.n_cells} observed of {self.domain.size} cells, "
                f"{self.n_records} records)")


def _column_dtypes(domain: Domain) -> dict[str, Any]:
    out = {}
    for a in domain.attributes:
        kinds = {type(v) for v in a.levels}
        out[a.name] = "int64" if kinds == {int} else ("float64" if kinds <= {int, float} else str)
    return out


def _read_counts(file: Path, spec: BuiltinSpec) -> pd.DataFrame:
    dtypes = {**_column_dtypes(spec.domain), COUNT_COLUMN: "int64"}
    df = pd.read_csv(file, dtype=dtypes, keep_default_na=False)
    expected = [*spec.domain.names, COUNT_COLUMN]
    if list(df.columns) != expected:
        raise DataValidationError(f"built-in table {spec.filename} has columns {list(df.columns)}, "
                                  f"expected {expected}; regenerate it with scripts/make_builtin_data.py")
    spec.domain.encode(df)  # raises on unknown levels
    if (df[COUNT_COLUMN] <= 0).any():
        raise DataValidationError(f"built-in table {spec.filename} has non-positive counts")
    return df


def load_builtin(name: str) -> BuiltinData:
    """Load a built-in counts table: ``"compas"`` or ``"adult"`` (``"builtin:"`` prefix allowed).

    Returns
    -------
    BuiltinData
        ``.counts`` (DataFrame), ``.domain`` (:class:`Domain`), roles (``.label``, ``.favourable_label``,
        ``.protected``, ``.privileged``), ``.citation``, ``.codes()`` and ``.expand()``.

    Examples
    --------
    >>> data = load_builtin("compas")
    >>> data.domain.size, data.n_records
    (144, 6167)
    """
    spec = _spec(name)
    # one name per joinpath: Python 3.10's Traversable takes a single child
    ref = resources.files("fairopt.data").joinpath("builtin").joinpath(spec.filename)
    with resources.as_file(ref) as file:
        if not Path(file).is_file():
            raise DataValidationError(f"built-in table {spec.filename} is missing from the installed package "
                                      f"({file}); reinstall fairopt")
        counts = _read_counts(file, spec)
    return BuiltinData(spec, counts)


def builtin_citation() -> str:
    """Text of ``builtin/CITATION.md`` (sources, definitions and licences of the built-in tables).

    Examples
    --------
    >>> "COMPAS" in builtin_citation()
    True
    """
    return resources.files("fairopt.data").joinpath("builtin").joinpath("CITATION.md").read_text(encoding="utf-8")


def make_builtin_counts(name: str, raw: pd.DataFrame) -> pd.DataFrame:
    """Count the raw benchmark frame (from the spec's loader) into the built-in table ``name``.

    Applies the spec's preparation (Adult: race → White / Non-white), the domain's bins, and
    :meth:`Domain.counts`; rows are sorted by flat index.

    Examples
    --------
    >>> import pandas as pd
    >>> raw = pd.DataFrame({"sex": ["Male", "Female", "Male"],
    ...                     "race": ["Caucasian", "Not-Caucasian", "Caucasian"],
    ...                     "age_cat": ["25 - 45", "Less than 25", "25 - 45"],
    ...                     "priors_count": [0, 2, 0], "c_charge_degree": ["F", "M", "F"],
    ...                     "two_year_recid": [0, 1, 0]})
    >>> counts = make_builtin_counts("compas", raw)    # priors binned into "0", "1-3", ">3"
    >>> counts[["priors_count", "count"]].astype(str).values.tolist()
    [['0', '2'], ['1-3', '1']]
    """
    spec = _spec(name)
    return spec.domain.counts(spec.to_levels(raw), name=COUNT_COLUMN)


def counts_to_csv(counts: pd.DataFrame) -> bytes:
    """Bytes of a counts table exactly as shipped (UTF-8, ``\\n`` line ends, header, no index).

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> csv = counts_to_csv(load_builtin("compas").counts)
    >>> csv.splitlines()[0].decode()
    'sex,race,age_cat,priors_count,c_charge_degree,two_year_recid,count'
    """
    buf = io.StringIO()
    counts.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")
