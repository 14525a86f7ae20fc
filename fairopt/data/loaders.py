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

import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from fairopt._docstrings import fill_doc, register
from fairopt.data._datasets import (
    CRIME_DERIVED_COLUMNS,
    CRIME_RACE_COLUMNS,
    DATA_HOME_ENV,
    DATASETS,
    DatasetInfo,
    _info,
    _read,
    data_home,
    dataset_path,
)
from fairopt.data._file_checks import _check_protected, _row
from fairopt.errors import DataValidationError

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

_Loader = TypeVar("_Loader", bound=Callable[..., Any])

register("dataset_path", """
Parameters
----------
path : str or path-like, optional
    The file, or a folder holding ``@DATASET@.csv.gz``; default ``$FAIROPT_DATA_HOME``.""")
register("dataset_errors", """
Raises
------
DataNotFoundError
    If the file is missing.
DataValidationError
    If a documented column is absent, of the wrong kind or has missing values.

Examples
--------
With the benchmark file in ``$FAIROPT_DATA_HOME`` (or ``path=``), ``load_@DATASET@()`` returns the
frame described above. A missing file raises an error that says where to put it and where the
data come from:

>>> from fairopt.errors import DataNotFoundError
>>> try:
...     load_@DATASET@("/no/such/folder")
... except DataNotFoundError as err:
...     print(str(err).split(":")[0])
Data set '@DATASET@' not found""")


def _dataset_doc(name: str) -> Callable[[_Loader], _Loader]:
    """Fill the shared loader pieces (``{dataset_path}``, ``{dataset_errors}``) for data set ``name``."""
    def decorate(func: _Loader) -> _Loader:
        fill_doc(func)
        func.__doc__ = (func.__doc__ or "").replace("@DATASET@", name)
        return func
    return decorate


# ---------------------------------------------------------------------- loaders
@_dataset_doc("adult")
def load_adult(path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """UCI Adult census income (train + test, rows with missing values removed; 45,222 rows).

    {dataset_path}

    Returns
    -------
    DataFrame
        int64: ``age``, ``fnlwgt``, ``education_num`` (1–16), ``capital_gain``, ``capital_loss``,
        ``hours_per_week``, ``income`` (1 = income > 50K);
        string: ``workclass``, ``education``, ``marital_status``, ``occupation``, ``relationship``,
        ``race`` (White, Black, Asian-Pac-Islander, Amer-Indian-Eskimo, Other), ``sex`` (Female, Male),
        ``native_country``.

    {dataset_errors}
    """
    return _read("adult", path)


@_dataset_doc("compas")
def load_compas(path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """ProPublica COMPAS two-year recidivism data (6,167 rows).

    Race is pre-binarised in the file, so the usual African-American/Caucasian restriction cannot be
    re-applied. ``age_cat`` is ProPublica's label (age 45 falls in ``"Greater than 45"``).

    {dataset_path}

    Returns
    -------
    DataFrame
        int64: ``age``, ``juv_fel_count``, ``juv_misd_count``, ``juv_other_count``, ``priors_count``,
        ``decile_score`` (1–10), ``two_year_recid`` (1 = reoffended within two years);
        string: ``sex`` (Female, Male), ``race`` (Caucasian, Not-Caucasian), ``age_cat``
        (Less than 25, 25 - 45, Greater than 45), ``c_charge_degree`` (F, M), ``c_charge_desc``,
        ``score_text`` (Low, Medium, High).

    {dataset_errors}
    """
    return _read("compas", path)


@_dataset_doc("law")
def load_law(path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """LSAC law school / bar passage data (21,791 rows).

    ``ugpa`` is kept as stored: a nominal 0–4 grade point average of which 18 rows exceed 4 (up to
    4.2). The fair-regression runner uses ``clip(ugpa / 4, 0, 1)`` as its target, so those rows get
    the target 1.0. Two rows have ``ugpa == 0``; they are kept.

    {dataset_path}

    Returns
    -------
    DataFrame
        float64: ``lsat``, ``ugpa`` (0–4.2), ``zfya`` (standardised first-year average);
        string: ``race`` (White, Black, Asian, Hispanic, Mexican, Other, Puertorican, Amerindian),
        ``sex`` (Female, Male); int64: ``pass_bar`` (1 = passed).

    {dataset_errors}
    """
    return _read("law", path)


@_dataset_doc("crime")
def load_crime(path: str | os.PathLike[str] | None = None, *, drop_derived: bool = False) -> pd.DataFrame:
    """UCI Communities and Crime (1,993 rows in the shared copy; UCI lists 1,994).

    Attributes are min–max scaled to [0, 1] by UCI; columns with missing values were removed and the
    state code is one-hot encoded as ``state_<FIPS>``.

    {dataset_path}
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

    {dataset_errors}
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
    white: np.ndarray = r[:, 1] >= np.delete(r, 1, axis=1).max(axis=1)
    return white


@_dataset_doc("credit")
def load_credit(path: str | os.PathLike[str] | None = None, *, repair_sex: bool = True) -> pd.DataFrame:
    """UCI Default of Credit Card Clients (Taiwan, 2005; 30,000 rows).

    The shared copy stores ``SEX`` as ``"Male"`` on 18,112 rows and blank on 11,888. UCI codes SEX as
    1 = male, 2 = female, with 11,888 men and 18,112 women; client ID 1 is a woman in UCI but "Male"
    in the copy, and the default rates (20.8 % on "Male" rows, 24.2 % on blank rows) are UCI's rates for
    women and men. With ``repair_sex=True`` (default) the loader detects exactly this pattern, recodes
    ``"Male" → "Female"`` and blank → ``"Male"``, and warns. Any other missing ``SEX`` values raise.

    {dataset_path}
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

    {dataset_errors}
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


@_dataset_doc("bank")
def load_bank(path: str | os.PathLike[str] | None = None, *, drop_duplicates: bool = True) -> pd.DataFrame:
    """UCI Bank Marketing, ``bank-full`` (45,211 rows).

    {dataset_path}
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

    {dataset_errors}
    """
    df = _read("bank", path)
    if drop_duplicates:
        df = df.drop_duplicates(keep="first").reset_index(drop=True)
    return df


@_dataset_doc("german")
def load_german(path: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """UCI Statlog German Credit, one-hot encoded (1,000 rows).

    {dataset_path}

    Returns
    -------
    DataFrame
        int64 throughout: ``month``, ``credit-amount``, ``investment-as-income-percentage``,
        ``residence-since``, ``number-of-credits``, ``people-liable-for``, binary ``sex`` (1 on 690 rows),
        ``age`` (binarised, 1 on 851 rows), ``sex-age``, the label ``credit-label`` (1 on 300 rows), and 0/1
        indicators ``<attribute>_A<code>`` for the categorical UCI attributes (status, credit-history,
        purpose, savings, employment, other-debtors, property, installment-plans, housing, skill-level,
        telephone, foreign-worker).

    {dataset_errors}
    """
    df = _read("german", path)
    bad = [c for c in df.columns if not pd.api.types.is_integer_dtype(df[c])]
    if bad:
        raise DataValidationError(f"german columns {bad[:5]} should be integer")
    return df


_LOADERS = {"adult": load_adult, "compas": load_compas, "law": load_law, "crime": load_crime,
            "credit": load_credit, "bank": load_bank, "german": load_german}


def load_dataset(name: str, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> pd.DataFrame:
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
