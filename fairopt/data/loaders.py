"""Loaders for the benchmark data sets.

Each loader reads ``<dir>/<name>.csv.gz`` (or ``<name>.csv``), where ``<dir>`` is the ``path`` argument
(a folder, or the file itself), else the folder named by the environment variable
``FAIROPT_DATA_HOME``, else the user cache folder (``~/.cache/fairopt`` on Linux) where
``fairopt data fetch`` puts files when no data home is set. The loaders never download anything; a missing file raises
:class:`~fairopt.errors.DataNotFoundError` saying where to put it and where it comes from.

Every loader checks that the promised columns exist with the promised kinds (integer, float, string) and
that they hold no missing values, so later code can rely on the documented schema. String columns come
back with pandas' default string dtype (``str`` on pandas ≥ 3, ``object`` before).
"""
from __future__ import annotations

import gzip
import os
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairopt.data._file_checks import _F, _I, _S, _check_protected, _check_schema, _row, _truncation
from fairopt.data._homes import user_cache_home
from fairopt.errors import DataNotFoundError, DataValidationError

__all__ = [
    "CRIME_DERIVED_COLUMNS",
    "CRIME_RACE_COLUMNS",
    "DATASETS",
    "DATA_HOME_ENV",
    "DatasetInfo",
    "crime_majority_white",
    "data_home",
    "dataset_path",
    "load_adult",
    "load_bank",
    "load_compas",
    "load_credit",
    "load_crime",
    "load_dataset",
    "load_german",
    "load_law",
]

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
    schema: dict
    protected: tuple = field(default=())

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
def data_home(path: str | os.PathLike | None = None) -> Path | None:
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


def dataset_path(name: str, path: str | os.PathLike | None = None) -> Path:
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
def _read(name: str, path: str | os.PathLike | None, allow_missing: tuple[str, ...] = ()) -> pd.DataFrame:
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


# ---------------------------------------------------------------------- loaders
def load_adult(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """UCI Adult census income (train + test, rows with missing values removed; 45,222 rows).

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``adult.csv.gz``; default ``$FAIROPT_DATA_HOME``.

    Returns
    -------
    DataFrame
        int64: ``age``, ``fnlwgt``, ``education_num`` (1–16), ``capital_gain``, ``capital_loss``,
        ``hours_per_week``, ``income`` (1 = income > 50K);
        string: ``workclass``, ``education``, ``marital_status``, ``occupation``, ``relationship``,
        ``race`` (White, Black, Asian-Pac-Islander, Amer-Indian-Eskimo, Other), ``sex`` (Female, Male),
        ``native_country``.

    Raises
    ------
    DataNotFoundError
        If the file is missing.
    DataValidationError
        If a documented column is absent, of the wrong kind or has missing values.

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_adult()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_adult("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'adult' not found
    """
    return _read("adult", path)


def load_compas(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """ProPublica COMPAS two-year recidivism data (6,167 rows).

    Race is pre-binarised in the file, so the usual African-American/Caucasian restriction cannot be
    re-applied. ``age_cat`` is ProPublica's label (age 45 falls in ``"Greater than 45"``).

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``compas.csv.gz``; default ``$FAIROPT_DATA_HOME``.

    Returns
    -------
    DataFrame
        int64: ``age``, ``juv_fel_count``, ``juv_misd_count``, ``juv_other_count``, ``priors_count``,
        ``decile_score`` (1–10), ``two_year_recid`` (1 = reoffended within two years);
        string: ``sex`` (Female, Male), ``race`` (Caucasian, Not-Caucasian), ``age_cat``
        (Less than 25, 25 - 45, Greater than 45), ``c_charge_degree`` (F, M), ``c_charge_desc``,
        ``score_text`` (Low, Medium, High).

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_compas()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_compas("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'compas' not found
    """
    return _read("compas", path)


def load_law(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """LSAC law school / bar passage data (21,791 rows).

    ``ugpa`` is kept as stored: a nominal 0–4 grade point average of which 18 rows exceed 4 (up to
    4.2). The fair-regression runner uses ``clip(ugpa / 4, 0, 1)`` as its target, so those rows get
    the target 1.0. Two rows have ``ugpa == 0``; they are kept.

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``law.csv.gz``; default ``$FAIROPT_DATA_HOME``.

    Returns
    -------
    DataFrame
        float64: ``lsat``, ``ugpa`` (0–4.2), ``zfya`` (standardised first-year average);
        string: ``race`` (White, Black, Asian, Hispanic, Mexican, Other, Puertorican, Amerindian),
        ``sex`` (Female, Male); int64: ``pass_bar`` (1 = passed).

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_law()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_law("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'law' not found
    """
    return _read("law", path)


def load_crime(path: str | os.PathLike | None = None, *, drop_derived: bool = False) -> pd.DataFrame:
    """UCI Communities and Crime (1,993 rows in the shared copy; UCI lists 1,994).

    Attributes are min–max scaled to [0, 1] by UCI; columns with missing values were removed and the
    state code is one-hot encoded as ``state_<FIPS>``.

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``crime.csv.gz``; default ``$FAIROPT_DATA_HOME``.
    drop_derived : bool, default False
        Drop :data:`CRIME_DERIVED_COLUMNS` (``high_crime``, a thresholded ``ViolentCrimesPerPop``, and
        ``>0.06black``, a thresholded ``racepctblack``). They leak the target / protected attribute:
        drop them before regressing on ``ViolentCrimesPerPop``.

    Returns
    -------
    DataFrame
        string: ``communityname``; int64: ``fold`` (UCI's 10 folds), ``state_*`` (0/1),
        ``high_crime``, ``>0.06black`` (unless dropped); float64 in [0, 1]: the remaining socio-economic
        attributes, among them ``racepctblack``, ``racePctWhite``, ``racePctAsian``, ``racePctHisp`` and
        the target ``ViolentCrimesPerPop``. See :func:`crime_majority_white` for the protected attribute.

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_crime()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_crime("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'crime' not found
    """
    df = _read("crime", path)
    other = [c for c in df.columns if c not in DATASETS["crime"].schema]
    bad = [c for c in other if not pd.api.types.is_numeric_dtype(df[c]) or df[c].isna().any()
           or np.isinf(df[c].to_numpy(dtype=float)).any()]
    if bad:
        v = df[bad[0]]
        bad_rows = (pd.to_numeric(v, errors="coerce").isna() | np.isinf(pd.to_numeric(v, errors="coerce"))).to_numpy()
        raise DataValidationError(f"crime columns {bad[:5]} of {dataset_path('crime', path)} should be finite numbers "
                                  f"without missing values; column {bad[0]!r}: {_row(bad_rows)}")
    return df.drop(columns=list(CRIME_DERIVED_COLUMNS)) if drop_derived else df


def crime_majority_white(df: pd.DataFrame) -> np.ndarray:
    """Protected attribute for Communities and Crime: is the community's largest race group white?

    Returns a boolean array, True where ``racePctWhite`` is at least each of ``racepctblack``,
    ``racePctAsian`` and ``racePctHisp`` (ties count as white). These columns are scaled per column by UCI,
    so this compares scaled shares; on the shared copy 78.9 % of communities are majority white.

    Examples
    --------
    >>> import pandas as pd
    >>> shares = pd.DataFrame({"racePctWhite": [0.9, 0.1], "racepctblack": [0.1, 0.8],
    ...                        "racePctAsian": [0.0, 0.05], "racePctHisp": [0.0, 0.05]})
    >>> crime_majority_white(shares).tolist()
    [True, False]
    """
    missing = [c for c in CRIME_RACE_COLUMNS if c not in df.columns]
    if missing:
        raise DataValidationError(f"crime_majority_white needs columns {missing}")
    r = df[list(CRIME_RACE_COLUMNS)].to_numpy(dtype=float)
    return r[:, 1] >= np.delete(r, 1, axis=1).max(axis=1)


def load_credit(path: str | os.PathLike | None = None, *, repair_sex: bool = True) -> pd.DataFrame:
    """UCI Default of Credit Card Clients (Taiwan, 2005; 30,000 rows).

    The shared copy stores ``SEX`` as ``"Male"`` on 18,112 rows and blank on 11,888. UCI codes SEX as
    1 = male, 2 = female, with 11,888 men and 18,112 women; client ID 1 is a woman in UCI but "Male"
    in the copy, and the default rates (20.8 % on "Male" rows, 24.2 % on blank rows) are UCI's rates for
    women and men. With ``repair_sex=True`` (default) the loader detects exactly this pattern, recodes
    ``"Male" → "Female"`` and blank → ``"Male"``, and warns. Any other missing ``SEX`` values raise.

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``credit.csv.gz``; default ``$FAIROPT_DATA_HOME``.
    repair_sex : bool, default True
        Recode the known ``SEX`` defect described above; with False the column is returned as stored
        (``"Male"`` or missing).

    Returns
    -------
    DataFrame
        int64: ``ID``, ``AGE``, ``PAY_0``, ``PAY_2`` … ``PAY_6`` (repayment status, −2…8),
        ``default`` (1 = default next month), ``EDUCATION`` and ``MARRIAGE`` (UCI integer codes);
        float64: ``LIMIT_BAL``, ``BILL_AMT1`` … ``BILL_AMT6``, ``PAY_AMT1`` … ``PAY_AMT6``;
        string: ``SEX`` (Female, Male).

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_credit()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_credit("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'credit' not found
    """
    df = _read("credit", path, allow_missing=("SEX",))
    sex = df["SEX"]
    if not sex.isna().any():
        return _check_protected(df, DATASETS["credit"], dataset_path("credit", path))
    present = set(sex.dropna().unique())
    if not repair_sex:
        return df
    if present != {"Male"}:
        raise DataValidationError(
            f"column 'SEX' has {int(sex.isna().sum())} missing values besides {sorted(present)}; expected "
            f"either no missing values or the known 'Male'/blank defect of the shared copy")
    warnings.warn(
        "credit.csv.gz stores SEX as 'Male'/blank; recoding to UCI's coding ('Male' rows are women, blank "
        "rows are men: 18,112 women and 11,888 men as in UCI). Pass repair_sex=False to keep it as stored.",
        UserWarning, stacklevel=2)
    df["SEX"] = pd.Series(np.where(sex.isna().to_numpy(), "Male", "Female"), index=df.index, dtype=sex.dtype)
    return df


def load_bank(path: str | os.PathLike | None = None, *, drop_duplicates: bool = True) -> pd.DataFrame:
    """UCI Bank Marketing, ``bank-full`` (45,211 rows).

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``bank.csv.gz``; default ``$FAIROPT_DATA_HOME``.
    drop_duplicates : bool, default True
        Drop exact duplicate rows, keeping the first. The shared copy has 45,212 rows, one more than UCI's
        45,211: row 27,349 repeats row 1 in every field (including call duration and balance). The index
        is reset after dropping.

    Returns
    -------
    DataFrame
        int64: ``age``, ``balance``, ``day``, ``duration``, ``campaign``, ``pdays`` (−1 = not contacted
        before), ``previous``, ``y`` (1 = subscribed a term deposit);
        string: ``job`` (12 values, the sensitive attribute in balanced filtering), ``marital``,
        ``education``, ``default``, ``housing``, ``loan``, ``contact``, ``month``, ``poutcome``.

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_bank()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_bank("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'bank' not found
    """
    df = _read("bank", path)
    if drop_duplicates:
        df = df.drop_duplicates(keep="first").reset_index(drop=True)
    return df


def load_german(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """UCI Statlog German Credit, one-hot encoded (1,000 rows).

    Parameters
    ----------
    path : str or path-like, optional
        The file, or a folder holding ``german.csv.gz``; default ``$FAIROPT_DATA_HOME``.

    Returns
    -------
    DataFrame
        int64 throughout: ``month``, ``credit-amount``, ``investment-as-income-percentage``,
        ``residence-since``, ``number-of-credits``, ``people-liable-for``, binary ``sex`` (1 on 690 rows),
        ``age`` (binarised, 1 on 851 rows), ``sex-age``, the label ``credit-label`` (1 on 300 rows), and 0/1
        indicators ``<attribute>_A<code>`` for the categorical UCI attributes (status, credit-history,
        purpose, savings, employment, other-debtors, property, installment-plans, housing, skill-level,
        telephone, foreign-worker).

    Raises
    ------
    DataNotFoundError, DataValidationError

    Examples
    --------
    With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_german()`` returns the
    frame described above. A missing file raises an error that says where to put it and where the
    data come from:

    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_german("/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'german' not found
    """
    df = _read("german", path)
    bad = [c for c in df.columns if not pd.api.types.is_integer_dtype(df[c])]
    if bad:
        raise DataValidationError(f"german columns {bad[:5]} should be integer")
    return df


_LOADERS = {"adult": load_adult, "compas": load_compas, "law": load_law, "crime": load_crime,
            "credit": load_credit, "bank": load_bank, "german": load_german}


def load_dataset(name: str, path: str | os.PathLike | None = None, **kwargs: Any) -> pd.DataFrame:
    """Load a benchmark data set by name (``"adult"``, ``"compas"``, ``"law"``, ``"crime"``, ``"credit"``,
    ``"bank"``, ``"german"``); ``kwargs`` go to the specific loader.

    Examples
    --------
    >>> from fairopt.errors import DataNotFoundError
    >>> try:
    ...     load_dataset("law", "/no/such/folder")
    ... except DataNotFoundError as err:
    ...     print(str(err).split(":")[0])
    Data set 'law' not found
    """
    _info(name)
    return _LOADERS[name](path, **kwargs)
