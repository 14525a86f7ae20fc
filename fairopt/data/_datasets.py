"""Where the benchmark files live and what they must hold: :class:`DatasetInfo`, :data:`DATASETS`,
:func:`data_home`, :func:`dataset_path` and the checked CSV read every loader shares (re-exported by
:mod:`fairopt.data.loaders`)."""
from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fairopt.data._file_checks import _F, _I, _S, _check_protected, _check_schema, _truncation
from fairopt.data._homes import user_cache_home
from fairopt.errors import DataNotFoundError, DataValidationError

__all__ = ["CRIME_DERIVED_COLUMNS", "CRIME_RACE_COLUMNS", "DATASETS", "DATA_HOME_ENV", "DatasetInfo", "data_home",
           "dataset_path"]

DATA_HOME_ENV = "FAIROPT_DATA_HOME"


@dataclass(frozen=True)
class DatasetInfo:
    """Where a benchmark file comes from and what it must contain.

    Attributes
    ----------
    name : str
        Loader name; the file is ``<name>.csv.gz``.
    source : str
        Original public source (named in error messages and citations).
    url : str
        Where the original can be obtained.
    schema : dict
        ``{column: kind}`` with kind ``"int"``, ``"float"``, ``"number"`` or ``"str"``: the columns
        the loader guarantees.
    protected : tuple of str
        Columns used as protected attributes; each must hold at least two groups.

    Examples
    --------
    >>> from fairopt.data import DATASETS
    >>> DATASETS["law"].filename
    'law.csv.gz'
    """

    name: str
    source: str
    url: str
    schema: dict[str, str]
    protected: tuple[str, ...] = field(default=())

    @property
    def filename(self) -> str:
        """Name of the gzipped CSV file looked up in the data home."""
        return f"{self.name}.csv.gz"


CRIME_RACE_COLUMNS = ("racepctblack", "racePctWhite", "racePctAsian", "racePctHisp")
CRIME_DERIVED_COLUMNS = ("high_crime", ">0.06black")

DATASETS: dict[str, DatasetInfo] = {
    "adult": DatasetInfo(
        "adult", "UCI Machine Learning Repository, Adult (Becker and Kohavi, 1996; census income)",
        "https://archive.ics.uci.edu/dataset/2/adult",
        {"age": _I, "fnlwgt": _I, "education_num": _I, "capital_gain": _I, "capital_loss": _I,
         "hours_per_week": _I, "workclass": _S, "education": _S, "marital_status": _S, "occupation": _S,
         "relationship": _S, "race": _S, "sex": _S, "native_country": _S, "income": _I}, ("race", "sex")),
    "compas": DatasetInfo(
        "compas", "ProPublica COMPAS recidivism analysis (compas-scores-two-years; Angwin et al., 2016)",
        "https://github.com/propublica/compas-analysis",
        {"sex": _S, "age": _I, "race": _S, "juv_fel_count": _I, "juv_misd_count": _I,
         "juv_other_count": _I, "priors_count": _I, "decile_score": _I, "two_year_recid": _I,
         "age_cat": _S, "c_charge_degree": _S, "c_charge_desc": _S, "score_text": _S}, ("race", "sex")),
    "law": DatasetInfo(
        "law", "LSAC National Longitudinal Bar Passage Study (Wightman, 1998)",
        "https://eric.ed.gov/?id=ED469370",
        {"lsat": _F, "ugpa": _F, "zfya": _F, "race": _S, "sex": _S, "pass_bar": _I}, ("race", "sex")),
    "crime": DatasetInfo(
        "crime", "UCI Machine Learning Repository, Communities and Crime (Redmond, 2009)",
        "https://archive.ics.uci.edu/dataset/183/communities+and+crime",
        {"communityname": _S, "fold": _I, **{c: _F for c in CRIME_RACE_COLUMNS},
         "ViolentCrimesPerPop": _F, "high_crime": _I, ">0.06black": _I}, (">0.06black",)),
    "credit": DatasetInfo(
        "credit", "UCI Machine Learning Repository, Default of Credit Card Clients (Yeh and Lien, 2009)",
        "https://archive.ics.uci.edu/dataset/350/default+of+credit+card+clients",
        {"ID": _I, "LIMIT_BAL": _F, "SEX": _S, "AGE": _I,
         **{c: _I for c in ("PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6")},
         **{f"BILL_AMT{i}": _F for i in range(1, 7)}, **{f"PAY_AMT{i}": _F for i in range(1, 7)},
         "default": _I, "EDUCATION": _I, "MARRIAGE": _I}, ("SEX",)),
    "bank": DatasetInfo(
        "bank", "UCI Machine Learning Repository, Bank Marketing, bank-full (Moro, Cortez and Rita, 2014)",
        "https://archive.ics.uci.edu/dataset/222/bank+marketing",
        {"age": _I, "job": _S, "marital": _S, "education": _S, "default": _S, "balance": _I,
         "housing": _S, "loan": _S, "contact": _S, "day": _I, "month": _S, "duration": _I,
         "campaign": _I, "pdays": _I, "previous": _I, "poutcome": _S, "y": _I}, ("job",)),
    "german": DatasetInfo(
        "german", "UCI Machine Learning Repository, Statlog (German Credit Data) (Hofmann, 1994)",
        "https://archive.ics.uci.edu/dataset/144/statlog+german+credit+data",
        {"month": _I, "credit-amount": _I, "investment-as-income-percentage": _I, "sex": _I,
         "residence-since": _I, "age": _I, "number-of-credits": _I, "people-liable-for": _I,
         "credit-label": _I, "sex-age": _I}, ("sex",)),
}


# ---------------------------------------------------------------------- locating files
def data_home(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The data folder: ``path`` if given, else ``$FAIROPT_DATA_HOME``, else ``None``.

    Examples
    --------
    >>> str(data_home("/srv/fairness-data"))
    '/srv/fairness-data'
    """
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get(DATA_HOME_ENV)
    return Path(env).expanduser() if env else None


def _where_from(info: DatasetInfo) -> str:
    return (f"The file is a preprocessed copy (gzipped CSV, columns as in docs/data.md) of the {info.source}, "
            f"available from {info.url}.")


def dataset_path(name: str, path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the file of data set ``name``.

    ``path`` may be the file itself or a folder holding ``<name>.csv.gz`` (or ``<name>.csv``). The order
    looked in: ``path``, else ``$FAIROPT_DATA_HOME``, else the user cache folder that
    ``fairopt data fetch`` writes to when no data home is set (``fairopt.data._homes.user_cache_home``).

    Raises
    ------
    DataNotFoundError
        Naming the paths looked at, the environment variable and the original public source.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "adult.csv.gz").write_bytes(b"")
    >>> dataset_path("adult", folder).name
    'adult.csv.gz'
    """
    info = _info(name)
    if path is not None and Path(path).expanduser().is_file():
        return Path(path).expanduser()
    folder = data_home(path)
    if folder is None:
        cache = user_cache_home()     # last in the order: where ``fairopt data fetch`` writes without a home
        found = next((c for c in (cache / info.filename, cache / f"{name}.csv") if c.is_file()), None)
        if found is not None:
            return found
        raise DataNotFoundError(
            f"No location given for data set {name!r}: pass path='/folder/or/{info.filename}', set the "
            f"environment variable {DATA_HOME_ENV} to a folder containing {info.filename}, or run "
            f"'fairopt data fetch {name}' (it writes to {cache}, which the loaders read last). {_where_from(info)}")
    if folder.is_file():
        origin = "path" if path is not None else DATA_HOME_ENV
        raise DataNotFoundError(f"{origin}={str(folder)!r} is a file, not the folder holding {info.filename}; point "
                                f"{origin} at that folder (or pass the data file itself as path=).")
    candidates = [folder / info.filename, folder / f"{name}.csv"]
    for c in candidates:
        if c.is_file():
            return c
    origin = "the path argument" if path is not None else f"{DATA_HOME_ENV}={os.environ.get(DATA_HOME_ENV)!r}"
    raise DataNotFoundError(
        f"Data set {name!r} not found: looked for {candidates[0].resolve()} (and {candidates[1].name}) "
        f"from {origin}. Put {info.filename} in that folder, or point {DATA_HOME_ENV} or path= at the "
        f"folder that has it. {_where_from(info)}")


def _info(name: str) -> DatasetInfo:
    try:
        return DATASETS[name]
    except KeyError:
        raise DataValidationError(f"unknown data set {name!r}; known: {sorted(DATASETS)}") from None


# ---------------------------------------------------------------------- validation
def _read(name: str, path: str | os.PathLike[str] | None, allow_missing: tuple[str, ...] = ()) -> pd.DataFrame:
    file = dataset_path(name, path)
    info = DATASETS[name]
    try:
        df = pd.read_csv(file)
    except gzip.BadGzipFile as exc:
        raise DataValidationError(
            f"{file} is not a gzip file ({exc}); a plain CSV must be named {name}.csv, a gzipped one "
            f"{name}.csv.gz. {_where_from(info)}") from exc
    except (EOFError, zlib.error) as exc:
        raise DataValidationError(
            f"{file} is a truncated or corrupt gzip file ({type(exc).__name__}: {exc}): {_truncation(file)}. "
            f"Copy it again (a partial download or a full disk truncates it). {_where_from(info)}") from exc
    except pd.errors.EmptyDataError as exc:
        raise DataValidationError(f"{file} is empty (no header, no rows); re-create it. {_where_from(info)}") from exc
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"could not read {file}: it is not UTF-8 text ({exc}); save it as UTF-8.") from exc
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataValidationError(f"could not read {file} as a (gzipped) CSV: {exc}") from exc
    header = pd.read_csv(file, header=None, nrows=1).iloc[0].tolist() if df.shape[1] else []
    dupes = sorted({str(c) for c in header if header.count(c) > 1})
    if dupes:   # pandas would rename the second copy "<name>.1" and the loader read the first silently
        raise DataValidationError(f"{file} names column(s) {dupes} more than once in its header (line 1); "
                                  "keep one column per name.")
    df = _check_schema(df, info, file, allow_missing)
    info_checked = DatasetInfo(info.name, info.source, info.url, info.schema,
                               tuple(c for c in info.protected if c not in allow_missing))
    return _check_protected(df, info_checked, file)
