"""Turn the public raw files into the benchmark frames that :mod:`fairopt.data.loaders` read.

Each ``preprocess_<name>`` is a pure function: it takes the raw file(s) in the format the public
source distributes (a path, raw ``bytes``, or for credit the sheet as a DataFrame) and returns the
frame stored in ``<name>.csv.gz``, with the columns, dtypes, row order and values of the shared
benchmark copy. Nothing is downloaded here; :mod:`fairopt.data.fetch` does that and writes the result.

The row orders come from the pipeline that made the shared copies: Adult, law and crime were shuffled
with ``DataFrame.sample(frac=1, random_state=888)`` (numpy's legacy ``RandomState`` stream, which is
frozen, so the permutation is reproducible); COMPAS, credit, bank and German keep the source order.
Where the shared copy carries a defect, the function says so and what it does (see docs/data.md,
"Getting the data").
"""
from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError

__all__ = [
    "SHUFFLE_SEED", "RawSource", "preprocess_adult", "preprocess_bank", "preprocess_compas", "preprocess_credit",
    "preprocess_crime", "preprocess_german", "preprocess_law", "write_benchmark",
]

#: a raw input file: its path (``str`` or ``os.PathLike``) or its content as ``bytes``
RawSource = str | os.PathLike[str] | bytes
SHUFFLE_SEED = 888
_STR = pd.Series(["x"]).dtype      # pandas' default string dtype (str on pandas >= 3, object before)

ADULT_RAW_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
    "income")
_ADULT_ORDER = (
    "age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week", "workclass",
    "education", "marital_status", "occupation", "relationship", "race", "sex", "native_country", "income")

_COMPAS_COLUMNS = (
    "sex", "age", "race", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count",
    "decile_score", "two_year_recid", "age_cat", "c_charge_degree", "c_charge_desc", "score_text")

# The 128 attributes of communities.data, in file order (communities.names, "@attribute" lines).
CRIME_RAW_COLUMNS = (
    "state", "county", "community", "communityname", "fold", "population", "householdsize", "racepctblack",
    "racePctWhite", "racePctAsian", "racePctHisp", "agePct12t21", "agePct12t29", "agePct16t24", "agePct65up",
    "numbUrban", "pctUrban", "medIncome", "pctWWage", "pctWFarmSelf", "pctWInvInc", "pctWSocSec", "pctWPubAsst",
    "pctWRetire", "medFamInc", "perCapInc", "whitePerCap", "blackPerCap", "indianPerCap", "AsianPerCap",
    "OtherPerCap", "HispPerCap", "NumUnderPov", "PctPopUnderPov", "PctLess9thGrade", "PctNotHSGrad",
    "PctBSorMore", "PctUnemployed", "PctEmploy", "PctEmplManu", "PctEmplProfServ", "PctOccupManu",
    "PctOccupMgmtProf", "MalePctDivorce", "MalePctNevMarr", "FemalePctDiv", "TotalPctDiv", "PersPerFam",
    "PctFam2Par", "PctKids2Par", "PctYoungKids2Par", "PctTeen2Par", "PctWorkMomYoungKids", "PctWorkMom",
    "NumIlleg", "PctIlleg", "NumImmig", "PctImmigRecent", "PctImmigRec5", "PctImmigRec8", "PctImmigRec10",
    "PctRecentImmig", "PctRecImmig5", "PctRecImmig8", "PctRecImmig10", "PctSpeakEnglOnly",
    "PctNotSpeakEnglWell", "PctLargHouseFam", "PctLargHouseOccup", "PersPerOccupHous", "PersPerOwnOccHous",
    "PersPerRentOccHous", "PctPersOwnOccup", "PctPersDenseHous", "PctHousLess3BR", "MedNumBR", "HousVacant",
    "PctHousOccup", "PctHousOwnOcc", "PctVacantBoarded", "PctVacMore6Mos", "MedYrHousBuilt", "PctHousNoPhone",
    "PctWOFullPlumb", "OwnOccLowQuart", "OwnOccMedVal", "OwnOccHiQuart", "RentLowQ", "RentMedian", "RentHighQ",
    "MedRent", "MedRentPctHousInc", "MedOwnCostPctInc", "MedOwnCostPctIncNoMtg", "NumInShelters", "NumStreet",
    "PctForeignBorn", "PctBornSameState", "PctSameHouse85", "PctSameCity85", "PctSameState85", "LemasSwornFT",
    "LemasSwFTPerPop", "LemasSwFTFieldOps", "LemasSwFTFieldPerPop", "LemasTotalReq", "LemasTotReqPerPop",
    "PolicReqPerOffic", "PolicPerPop", "RacialMatchCommPol", "PctPolicWhite", "PctPolicBlack", "PctPolicHisp",
    "PctPolicAsian", "PctPolicMinor", "OfficAssgnDrugUnits", "NumKindsDrugsSeiz", "PolicAveOTWorked",
    "LandArea", "PopDens", "PctUsePubTrans", "PolicCars", "PolicOperBudg", "LemasPctPolicOnPatr",
    "LemasGangUnitDeploy", "LemasPctOfficDrugUn", "PolicBudgPerPop", "ViolentCrimesPerPop",
)

_CREDIT_AMOUNTS = ("LIMIT_BAL", *(f"BILL_AMT{i}" for i in range(1, 7)), *(f"PAY_AMT{i}" for i in range(1, 7)))
_CREDIT_ORDER = ("ID", "LIMIT_BAL", "SEX", "AGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6",
                 *_CREDIT_AMOUNTS[1:], "default", "EDUCATION", "MARRIAGE")
# UCI's sheet names the target "default payment next month"; the Kaggle CSV export of the same
# sheet names it "default.payment.next.month".
_CREDIT_TARGETS = ("default payment next month", "default.payment.next.month")

GERMAN_RAW_COLUMNS = (
    "status", "month", "credit-history", "purpose", "credit-amount", "savings", "employment",
    "investment-as-income-percentage", "personal-status", "other-debtors", "residence-since", "property",
    "age", "installment-plans", "housing", "number-of-credits", "skill-level", "people-liable-for",
    "telephone", "foreign-worker", "credit-label")
_GERMAN_MALE = ("A91", "A93", "A94")       # german.doc: A92 and A95 are female


# ---------------------------------------------------------------------- helpers
def _source(raw: RawSource) -> io.BytesIO | Path:
    """A path or a bytes buffer that pandas and zipfile can read."""
    if isinstance(raw, (bytes, bytearray)):
        return io.BytesIO(raw)
    path = Path(raw)
    if not path.is_file():
        raise DataValidationError(f"raw file {path} does not exist")
    return path


def _shuffle(df: pd.DataFrame) -> pd.DataFrame:
    return df.sample(frac=1.0, random_state=SHUFFLE_SEED).reset_index(drop=True)


def _require(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataValidationError(f"{what} lacks column(s) {missing}; is it the right raw file?")


def _check_width(df: pd.DataFrame, n: int, what: str) -> None:
    if df.shape[1] != n:
        raise DataValidationError(f"{what} has {df.shape[1]} fields per line, expected {n}; is it the right raw file?")


def _codes_to_labels(s: pd.Series, mapping: dict[Any, Any], column: str, what: str) -> pd.Series:
    bad = ~s.isin(list(mapping))
    if bad.any():
        raise DataValidationError(
            f"column {column!r} of {what} has value(s) {sorted(s[bad].astype(str).unique())[:5]} outside "
            f"{sorted(mapping)}")
    return s.map(mapping).astype(_STR)


# ---------------------------------------------------------------------- the data sets
def preprocess_adult(train: RawSource, test: RawSource) -> pd.DataFrame:
    """UCI Adult: ``adult.data`` + ``adult.test`` -> the 45,222-row ``adult.csv.gz`` frame.

    Rows with a missing value (``?``) are removed (3,620 of 48,842), the test labels' trailing ``.`` is
    dropped, ``income`` becomes 1 for ``>50K``, and the rows are shuffled with seed 888.

    Parameters
    ----------
    train, test : path-like or bytes
        UCI's ``adult.data`` and ``adult.test`` (comma-separated, no header; ``adult.test`` starts with
        one comment line).

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_adult`, in the file's order.

    Examples
    --------
    >>> raw = (b"39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
    ...        b"Male, 2174, 0, 40, United-States, <=50K\\n")
    >>> test = (b"|1x3 Cross validator\\n25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, "
    ...         b"Own-child, Black, Male, 0, 0, 40, United-States, >50K.\\n")
    >>> preprocess_adult(raw, test)["income"].tolist()
    [1, 0]
    """
    opts = {"header": None, "skipinitialspace": True, "na_values": "?", "keep_default_na": False}
    frames = [pd.read_csv(_source(train), **opts), pd.read_csv(_source(test), skiprows=1, **opts)]
    for f, what in zip(frames, ("adult.data", "adult.test"), strict=False):
        _check_width(f, len(ADULT_RAW_COLUMNS), what)
        f.columns = list(ADULT_RAW_COLUMNS)
    df = pd.concat(frames, ignore_index=True).dropna()
    label = df["income"].str.rstrip(".")
    bad = ~label.isin([">50K", "<=50K"])
    if bad.any():
        raise DataValidationError(f"adult income labels {sorted(label[bad].unique())[:5]} are not '<=50K'/'>50K'")
    df["income"] = (label == ">50K").astype(np.int64)
    df = df.astype({c: np.int64 for c in ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
                                          "hours_per_week")})
    return _shuffle(df[list(_ADULT_ORDER)])


def preprocess_compas(raw: RawSource) -> pd.DataFrame:
    """ProPublica ``compas-scores-two-years.csv`` -> the 6,167-row ``compas.csv.gz`` frame.

    ProPublica's own filter is applied (charge within 30 days of the screening, ``is_recid != -1``, no
    ordinary traffic offence ``c_charge_degree == "O"``, a score present): 6,172 rows. The 5 of them
    without a ``c_charge_desc`` are dropped, race is binarised to ``Caucasian`` / ``Not-Caucasian``,
    and the source order is kept.

    Parameters
    ----------
    raw : path-like or bytes
        ``compas-scores-two-years.csv`` from ProPublica's compas-analysis repository.

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_compas`.

    Examples
    --------
    >>> head = ("sex,age,race,juv_fel_count,juv_misd_count,juv_other_count,priors_count,decile_score,"
    ...         "two_year_recid,age_cat,c_charge_degree,c_charge_desc,score_text,days_b_screening_arrest,is_recid")
    >>> raw = (head + "\\nMale,69,Other,0,0,0,0,1,0,Greater than 45,F,Assault,Low,-1,0"
    ...               "\\nMale,34,Caucasian,0,0,0,0,3,1,25 - 45,F,Battery,Low,-45,1\\n").encode()
    >>> preprocess_compas(raw)[["age", "race"]].values.tolist()    # the second is screened 45 days late
    [[69, 'Not-Caucasian']]
    """
    df = pd.read_csv(_source(raw))
    _require(df, (*_COMPAS_COLUMNS, "days_b_screening_arrest", "is_recid"), "compas-scores-two-years.csv")
    keep = (df["days_b_screening_arrest"].between(-30, 30) & (df["is_recid"] != -1)
            & (df["c_charge_degree"] != "O") & df["score_text"].notna() & (df["score_text"] != "N/A"))
    out = df.loc[keep, list(_COMPAS_COLUMNS)].dropna().reset_index(drop=True)
    out["race"] = out["race"].where(out["race"] == "Caucasian", "Not-Caucasian")
    return out


def preprocess_law(raw: RawSource) -> pd.DataFrame:
    """LSAC bar passage data (``law_data.csv``) -> the 21,791-row ``law.csv.gz`` frame.

    ``law_data.csv`` is the LSAC extract distributed with Kusner et al.'s counterfactual fairness code
    (columns ``race, sex, LSAT, UGPA, region_first, ZFYA, sander_index, first_pf`` after an index
    column). ``sex`` 1/2 becomes ``Female``/``Male``, ``first_pf`` becomes ``pass_bar``, ``ugpa`` keeps
    its 0–4 scale, and the rows are shuffled with seed 888.

    Parameters
    ----------
    raw : path-like or bytes
        ``law_data.csv``.

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_law`.

    Examples
    --------
    >>> raw = b",race,sex,LSAT,UGPA,region_first,ZFYA,sander_index,first_pf\\n0,White,1,39.0,3.1,GL,-0.98,0.78,1.0\\n"
    >>> preprocess_law(raw)[["lsat", "sex", "pass_bar"]].values.tolist()
    [[39.0, 'Female', 1]]
    """
    df = pd.read_csv(_source(raw), index_col=0).reset_index(drop=True)
    _require(df, ("LSAT", "UGPA", "ZFYA", "race", "sex", "first_pf"), "law_data.csv")
    out = pd.DataFrame({
        "lsat": df["LSAT"].astype(np.float64), "ugpa": df["UGPA"].astype(np.float64),
        "zfya": df["ZFYA"].astype(np.float64), "race": df["race"],
        "sex": _codes_to_labels(df["sex"], {1: "Female", 2: "Male"}, "sex", "law_data.csv"),
        "pass_bar": df["first_pf"].astype(np.int64)})
    return _shuffle(out)


def preprocess_crime(raw: RawSource, *, drop_first_record: bool = True) -> pd.DataFrame:
    """UCI ``communities.data`` -> the ``crime.csv.gz`` frame (1,993 rows).

    Attributes with a missing value (``?``) are removed, ``state`` is one-hot encoded as ``state_<FIPS>``
    (0/1, codes in numeric order, appended after the other attributes), ``>0.06black`` =
    ``racepctblack > 0.06`` and ``high_crime`` = ``ViolentCrimesPerPop > 0.25`` are appended, and the rows
    are shuffled with seed 888.

    Parameters
    ----------
    raw : path-like or bytes
        UCI's ``communities.data`` (comma-separated, no header, 1,994 records of 128 attributes).
    drop_first_record : bool, default True
        The shared benchmark copy lacks UCI's first record (Lakewood city): the pipeline that made it
        read the header-less file as if its first line were a header. True reproduces the copy (1,993
        rows, which every shipped result used); False keeps all 1,994 records (the shuffle then gives a
        different order).

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_crime`.

    Examples
    --------
    >>> row = "6,?,?,Town,1," + ",".join(["0.5"] * 122) + ",0.3\\n"
    >>> df = preprocess_crime((row + row.replace("Town", "City")).encode(), drop_first_record=False)
    >>> df.shape, int(df["high_crime"].sum())
    ((2, 128), 2)
    """
    df = pd.read_csv(_source(raw), header=None, na_values="?", keep_default_na=False)
    _check_width(df, len(CRIME_RAW_COLUMNS), "communities.data")
    df.columns = list(CRIME_RAW_COLUMNS)
    if drop_first_record:
        df = df.iloc[1:]
    df = df.loc[:, df.notna().all()]
    df = pd.get_dummies(df, columns=["state"], dtype=np.int64)
    derived = pd.DataFrame({">0.06black": (df["racepctblack"] > 0.06).astype(np.int64),
                            "high_crime": (df["ViolentCrimesPerPop"] > 0.25).astype(np.int64)})
    return _shuffle(pd.concat([df, derived], axis=1))


def preprocess_credit(sheet: pd.DataFrame) -> pd.DataFrame:
    """UCI Default of Credit Card Clients (the ``.xls`` sheet) -> the 30,000-row ``credit.csv.gz`` frame.

    The target column becomes ``default``; amounts become float64; ``SEX`` is written as UCI codes it
    (1 = ``Male``, 2 = ``Female``); ``EDUCATION`` and ``MARRIAGE`` keep their integer codes and move to
    the end; the source order is kept. The shared copy stores ``SEX`` wrongly (``"Male"`` for UCI's
    women, blank for its men); :func:`fairopt.data.load_credit` repairs that, so loading this frame and
    loading the shared copy give the same result.

    Parameters
    ----------
    sheet : DataFrame
        The sheet as ``pandas.read_excel(path, header=1)`` reads it: ``ID``, ``LIMIT_BAL``, ``SEX``,
        ``EDUCATION``, ``MARRIAGE``, ``AGE``, ``PAY_0``, ``PAY_2`` … ``PAY_6``, ``BILL_AMT1`` … ``6``,
        ``PAY_AMT1`` … ``6`` and ``default payment next month``.

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_credit`.

    Examples
    --------
    >>> import pandas as pd
    >>> cols = ["ID", "LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE", "PAY_0", "PAY_2", "PAY_3",
    ...         "PAY_4", "PAY_5", "PAY_6", *[f"BILL_AMT{i}" for i in range(1, 7)],
    ...         *[f"PAY_AMT{i}" for i in range(1, 7)], "default payment next month"]
    >>> sheet = pd.DataFrame([[1, 20000, 2, 2, 1, 24, 2, 2, -1, -1, -2, -2, *[0] * 12, 1]], columns=cols)
    >>> preprocess_credit(sheet)[["SEX", "LIMIT_BAL", "default"]].values.tolist()
    [['Female', 20000.0, 1]]
    """
    target = next((c for c in _CREDIT_TARGETS if c in sheet.columns), None)
    if target is None:
        raise DataValidationError(
            f"the credit sheet has no target column (one of {list(_CREDIT_TARGETS)}); read the .xls with "
            f"header=1 (its first row holds X1..X23 labels). Columns seen: {list(sheet.columns)[:8]}...")
    df = sheet.rename(columns={target: "default"})
    _require(df, _CREDIT_ORDER, "the credit sheet")
    out = df[list(_CREDIT_ORDER)].astype({c: np.int64 for c in _CREDIT_ORDER if c not in (*_CREDIT_AMOUNTS, "SEX")})
    out = out.astype({c: np.float64 for c in _CREDIT_AMOUNTS})
    out["SEX"] = _codes_to_labels(df["SEX"], {1: "Male", 2: "Female"}, "SEX", "the credit sheet")
    return out.reset_index(drop=True)


def preprocess_bank(raw: RawSource, *, duplicate_row: bool = True) -> pd.DataFrame:
    """UCI Bank Marketing ``bank.zip`` (or ``bank-full.csv``) -> the ``bank.csv.gz`` frame.

    ``bank-full.csv`` (45,211 rows, ``;``-separated) is read, ``y`` becomes 1 for ``yes``, and the
    source order is kept.

    Parameters
    ----------
    raw : path-like or bytes
        UCI's ``bank.zip`` (the member ``bank-full.csv`` is read) or ``bank-full.csv`` itself.
    duplicate_row : bool, default True
        The shared benchmark copy has one extra row: a copy of ``bank-full.csv``'s record 27,349
        (1-based) inserted as the second row. True reproduces the copy (45,212 rows), so that
        :func:`fairopt.data.load_bank`, which drops the later duplicate, returns the same frame as on the
        shared copy; False gives UCI's 45,211 rows in UCI's order.

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_bank`.

    Examples
    --------
    >>> raw = (b'"age";"job";"marital";"education";"default";"balance";"housing";"loan";"contact";"day";'
    ...        b'"month";"duration";"campaign";"pdays";"previous";"poutcome";"y"\\n'
    ...        b'58;"management";"married";"tertiary";"no";2143;"yes";"no";"unknown";5;"may";261;1;-1;0;'
    ...        b'"unknown";"no"\\n')
    >>> preprocess_bank(raw, duplicate_row=False)[["age", "y"]].values.tolist()
    [[58, 0]]
    """
    src = _source(raw)
    if zipfile.is_zipfile(src):
        with zipfile.ZipFile(src) as z:
            if "bank-full.csv" not in z.namelist():
                raise DataValidationError(f"the bank archive lacks bank-full.csv; it holds {z.namelist()}")
            src = io.BytesIO(z.read("bank-full.csv"))
    elif isinstance(src, io.BytesIO):
        src.seek(0)
    df = pd.read_csv(src, sep=";")
    _check_width(df, 17, "bank-full.csv")
    bad = ~df["y"].isin(["yes", "no"])
    if bad.any():
        raise DataValidationError(f"bank-full.csv column 'y' has values {sorted(df['y'][bad].unique())[:5]}")
    df["y"] = (df["y"] == "yes").astype(np.int64)
    if duplicate_row:
        if len(df) <= 27348:
            raise DataValidationError(
                f"bank-full.csv has {len(df)} rows; duplicate_row=True needs UCI's 45,211 (pass False for a subset)")
        df = pd.concat([df.iloc[:1], df.iloc[[27348]], df.iloc[1:]], ignore_index=True)
    return df


def preprocess_german(raw: RawSource) -> pd.DataFrame:
    """UCI Statlog ``german.data`` -> the 1,000-row one-hot ``german.csv.gz`` frame.

    ``personal-status`` becomes ``sex`` (1 = male: A91, A93, A94), ``age`` becomes 1 for age ≥ 25,
    ``credit-label`` is 1 for bad credit (class 2), ``sex-age`` = ``sex`` AND ``age``; the other
    categorical attributes become 0/1 indicators ``<attribute>_<code>`` (codes present in the data,
    in string order), appended after the numeric attributes; the source order is kept.

    Parameters
    ----------
    raw : path-like or bytes
        UCI's ``german.data`` (space-separated, 21 fields, no header).

    Returns
    -------
    DataFrame
        The columns of :func:`fairopt.data.load_german`, all int64.

    Examples
    --------
    >>> raw = b"A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1\\n"
    >>> preprocess_german(raw)[["sex", "age", "credit-label", "sex-age", "status_A11"]].values.tolist()
    [[1, 1, 0, 1, 1]]
    """
    df = pd.read_csv(_source(raw), sep=r"\s+", header=None)
    _check_width(df, len(GERMAN_RAW_COLUMNS), "german.data")
    df.columns = list(GERMAN_RAW_COLUMNS)
    bad = ~df["credit-label"].isin([1, 2])
    if bad.any():
        raise DataValidationError(f"german.data class column has values {sorted(df['credit-label'][bad].unique())}")
    df = df.rename(columns={"personal-status": "sex"})
    df["sex"] = df["sex"].isin(_GERMAN_MALE).astype(np.int64)
    df["age"] = (df["age"] >= 25).astype(np.int64)
    df["credit-label"] = (df["credit-label"] == 2).astype(np.int64)
    df["sex-age"] = df["sex"] & df["age"]
    categorical = [c for c in df.columns if df[c].dtype.kind not in "iu"]
    return pd.get_dummies(df, columns=categorical, dtype=np.int64).astype(np.int64)


def write_benchmark(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a preprocessed frame as gzipped CSV (what the loaders read) and return the path.

    The file is written to a temporary name first and renamed, so an interrupted run never leaves a
    truncated ``<name>.csv.gz`` for the loaders to find.

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> p = write_benchmark(pd.DataFrame({"a": [1]}), pathlib.Path(tempfile.mkdtemp()) / "x.csv.gz")
    >>> pd.read_csv(p)["a"].tolist()
    [1]
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    df.to_csv(tmp, index=False, compression="gzip")
    os.replace(tmp, path)
    return path
