"""Tests of fairopt.data: Domain, loaders, built-in tables."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import requires_data
from hypothesis import given, settings
from hypothesis import strategies as st

from fairopt.data import (
    ADULT_DOMAIN,
    BUILTIN_SPECS,
    COMPAS_DOMAIN,
    COUNT_COLUMN,
    CRIME_DERIVED_COLUMNS,
    DATA_HOME_ENV,
    DATASETS,
    Attribute,
    Domain,
    builtin_citation,
    counts_to_csv,
    crime_majority_white,
    dataset_path,
    load_adult,
    load_bank,
    load_builtin,
    load_compas,
    load_credit,
    load_crime,
    load_dataset,
    load_german,
    load_law,
    make_builtin_counts,
)
from fairopt.errors import DataNotFoundError, DataValidationError

ROOT = Path(__file__).resolve().parents[1]


def _toy() -> Domain:
    return Domain([("sex", ["F", "M"]), ("y", [0, 1]),
                   Attribute("age", ("young", "mid", "old"), bins=(-np.inf, 25, 45, np.inf))])


# ---------------------------------------------------------------------- Domain
def test_domain_basic_properties():
    d = _toy()
    assert d.names == ("sex", "y", "age")
    assert d.cardinalities == (2, 2, 3)
    assert d.size == 12 and isinstance(d.size, int)
    assert d.strides == (6, 3, 1)
    np.testing.assert_array_equal(d.one_hot_offsets, [0, 2, 4, 7])
    assert d.one_hot_names[4] == "age=young"
    assert Domain.from_dict(d.to_dict()) == d
    assert d.subdomain(["age", "sex"]).cardinalities == (3, 2)


def test_discretize_is_right_open_with_open_ends():
    d = _toy()
    df = pd.DataFrame({"sex": ["M"] * 6, "y": [1] * 6, "age": [-5.0, 24.9, 25, 44.99, 45, 1e9]})
    out = d.discretize(df)
    assert out["age"].tolist() == ["young", "young", "mid", "mid", "old", "old"]
    expected = pd.cut(df["age"], [-np.inf, 25, 45, np.inf], right=False, labels=["young", "mid", "old"])
    assert out["age"].tolist() == expected.astype(str).tolist()
    closed = Domain([Attribute("a", ("lo", "hi"), bins=(0, 10, 20))])
    with pytest.raises(DataValidationError, match=r"'a' value 20 .*outside the bins \[0, 20\)"):
        closed.discretize(pd.DataFrame({"a": [5, 20]}))
    with pytest.raises(DataValidationError, match="missing"):
        closed.discretize(pd.DataFrame({"a": [5, np.nan]}))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=6), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_round_trips(cards, n, seed):
    rng = np.random.default_rng(seed)
    d = Domain([(f"a{j}", [f"v{i}" for i in range(k)] if j % 2 else list(range(10, 10 + k)))
                for j, k in enumerate(cards)])
    codes = rng.integers(0, cards, size=(n, len(cards)))
    frame = d.decode(codes)
    np.testing.assert_array_equal(d.encode(frame), codes)
    flat = d.ravel(codes)
    assert flat.dtype == np.int64
    np.testing.assert_array_equal(flat, np.ravel_multi_index(codes.T, cards) if n else flat)
    np.testing.assert_array_equal(d.unravel(flat), codes)
    oh = d.one_hot(codes)
    assert oh.shape == (n, sum(cards)) and oh.format == "csr"
    np.testing.assert_array_equal(np.asarray(oh.sum(axis=1)).ravel(), np.full(n, len(cards)))
    off = d.one_hot_offsets
    colsum = np.asarray(oh.sum(axis=0)).ravel()
    for j, k in enumerate(cards):
        np.testing.assert_array_equal(colsum[off[j]:off[j + 1]], np.bincount(codes[:, j], minlength=k))


def test_exact_size_and_flat_index_beyond_int64():
    d11 = Domain([(f"a{i}", range(10)) for i in range(11)])
    assert d11.size == 10**11 and type(d11.size) is int
    top = np.full((1, 11), 9)
    assert d11.ravel(top).tolist() == [10**11 - 1]
    d20 = Domain([(f"a{i}", range(10)) for i in range(20)])
    assert d20.size == 10**20
    codes = np.array([[9] * 20, [0] * 19 + [1], [3] * 20])
    flat = d20.ravel(codes)
    assert flat.dtype == object and flat.tolist() == [10**20 - 1, 1, int("3" * 20)]
    np.testing.assert_array_equal(d20.unravel(flat), codes)
    cells, n = d20.unique_codes(np.vstack([codes, codes[:1]]))  # row-wise path beyond int64
    np.testing.assert_array_equal(cells, codes[[1, 2, 0]])
    assert n.tolist() == [1, 1, 2]
    with pytest.raises(DataValidationError, match="out of range"):
        d20.unravel(np.array([10**20], dtype=object))
    # a large compas-like product keeps its exact size
    cards = [2, 3, 6, 9, 10, 10, 10, 6, 8, 3, 8, 3, 2, 2, 2, 2, 2, 2, 2]
    assert Domain([(f"f{i}", range(k)) for i, k in enumerate(cards)]).size == 143327232000


def test_unknown_level_and_nan_raise_naming_column_and_value():
    d = _toy()
    ok = {"sex": ["F"], "y": [1], "age": ["old"]}
    with pytest.raises(DataValidationError, match=r"'sex'.*'X'"):
        d.encode(pd.DataFrame({**ok, "sex": ["X"]}))
    with pytest.raises(DataValidationError, match=r"'y'.*missing"):
        d.encode(pd.DataFrame({**ok, "y": [np.nan]}))
    with pytest.raises(DataValidationError, match=r"'sex'.*missing"):
        d.encode(pd.DataFrame({**ok, "sex": [None]}))
    with pytest.raises(DataValidationError, match="lacks domain column"):
        d.encode(pd.DataFrame({"sex": ["F"]}))
    with pytest.raises(DataValidationError, match="out of range for attribute 'age'"):
        d.decode(np.array([[0, 0, 3]]))
    with pytest.raises(DataValidationError, match="duplicate levels"):
        Domain([("a", [1, 1])])


def test_counts_collapse_to_sufficient_statistics(rng):
    d = _toy()
    codes = rng.integers(0, d.cardinalities, size=(500, 3))
    table = d.counts(codes)
    assert table[COUNT_COLUMN].sum() == 500 and table[COUNT_COLUMN].dtype == np.int64
    ref = d.decode(codes).value_counts().sort_index()
    assert len(table) == len(ref)
    merged = table.merge(ref.rename("ref").reset_index(), on=list(d.names))
    np.testing.assert_array_equal(merged[COUNT_COLUMN], merged["ref"])
    flat = d.ravel(d.encode(table))
    assert np.all(np.diff(flat) > 0)  # sorted by flat index, no duplicates
    w = rng.random(500)
    cells, wsum = d.unique_codes(codes, sample_weight=w)
    assert wsum.sum() == pytest.approx(w.sum())
    np.testing.assert_array_equal(cells, d.encode(table))
    assert d.counts(d.decode(codes))[COUNT_COLUMN].tolist() == table[COUNT_COLUMN].tolist()


def test_unique_codes_names_the_bad_weight(rng):
    d = _toy()
    codes = rng.integers(0, d.cardinalities, size=(200, 3))
    cases = {"NaN": np.where(np.arange(200) == 17, np.nan, 1.0),
             "infinite": np.where(np.arange(200) == 17, -np.inf, 1.0),
             r"negative \(-2\)": np.where(np.arange(200) == 17, -2.0, 1.0)}
    for why, w in cases.items():
        with pytest.raises(DataValidationError, match=rf"sample_weight\[17\] is {why}"):
            d.unique_codes(codes, sample_weight=w)
    with pytest.raises(DataValidationError, match=r"shape \(200,\); got shape \(199,\)"):
        d.unique_codes(codes, sample_weight=np.ones(199))
    cells, wsum = d.unique_codes(codes, sample_weight=np.zeros(200))      # zeros are allowed
    assert wsum.shape == (len(cells),) and wsum.sum() == 0


def test_from_frame_levels_and_bins():
    df = pd.DataFrame({"b": ["y", "x", "y"],
                       "c": pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True),
                       "n": [1.5, 7.0, 30.0]})
    d = Domain.from_frame(df, bins={"n": [0, 10, np.inf]}, levels={"b": ["y", "x"]})
    assert d.levels == {"b": ("y", "x"), "c": ("lo", "hi"), "n": ("[0, 10)", "[10, inf)")}
    np.testing.assert_array_equal(d.encode(df, discretize=True), [[0, 0, 0], [1, 1, 0], [0, 0, 1]])
    assert Domain.from_frame(df[["b"]]).levels["b"] == ("x", "y")
    # an unordered categorical's declared order is no order: its levels are sorted, as strings are
    unordered = df.assign(c=df["c"].cat.as_unordered())
    assert Domain.from_frame(unordered).levels["c"] == ("hi", "lo")
    with pytest.raises(DataValidationError, match="missing values"):
        Domain.from_frame(pd.DataFrame({"a": ["x", None]}))


# ---------------------------------------------------------------------- loaders
def test_missing_file_error_names_env_var_path_and_source(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_HOME_ENV, str(tmp_path))
    with pytest.raises(DataNotFoundError) as err:
        load_compas()
    msg = str(err.value)
    assert DATA_HOME_ENV in msg and str(tmp_path / "compas.csv.gz") in msg and "ProPublica" in msg
    with pytest.raises(DataNotFoundError, match=r"LSAC.*|.*LSAC"):
        load_law(tmp_path / "nowhere")
    monkeypatch.delenv(DATA_HOME_ENV)
    with pytest.raises(DataNotFoundError) as err:
        load_adult()
    assert DATA_HOME_ENV in str(err.value) and "UCI" in str(err.value)
    assert isinstance(err.value, FileNotFoundError)


def test_loader_path_forms_and_schema_validation(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_HOME_ENV, raising=False)
    law = pd.DataFrame({"lsat": [30.0, 40.0], "ugpa": [3.0, 3.5], "zfya": [0.1, -0.2],
                        "race": ["White", "Black"], "sex": ["Male", "Female"], "pass_bar": [1, 0]})
    with gzip.open(tmp_path / "law.csv.gz", "wt") as fh:
        law.to_csv(fh, index=False)
    for where in (tmp_path, tmp_path / "law.csv.gz"):
        out = load_law(where)
        assert out.shape == (2, 6) and out["pass_bar"].dtype == np.int64 and out["ugpa"].dtype == np.float64
    monkeypatch.setenv(DATA_HOME_ENV, str(tmp_path))
    assert load_dataset("law")["race"].tolist() == ["White", "Black"]
    law.drop(columns="zfya").to_csv(tmp_path / "plain.csv", index=False)
    with pytest.raises(DataValidationError, match="zfya"):
        load_law(tmp_path / "plain.csv")
    law.assign(pass_bar=[1, None]).to_csv(tmp_path / "nan.csv", index=False)
    with pytest.raises(DataValidationError, match=r"'pass_bar'.*missing"):
        load_law(tmp_path / "nan.csv")
    with pytest.raises(DataValidationError, match="unknown data set"):
        dataset_path("mnist", tmp_path)


def test_credit_sex_repair_on_synthetic_file(tmp_path):
    cols = {c: [1, 2, 3] for c in ["ID", "AGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6",
                                   "default", "EDUCATION", "MARRIAGE"]}
    cols.update({c: [1.0, 2.0, 3.0] for c in ["LIMIT_BAL"] + [f"BILL_AMT{i}" for i in range(1, 7)]
                 + [f"PAY_AMT{i}" for i in range(1, 7)]})
    pd.DataFrame({**cols, "SEX": ["Male", None, "Male"]}).to_csv(tmp_path / "credit.csv", index=False)
    with pytest.warns(UserWarning, match="recoding"):
        out = load_credit(tmp_path)
    assert out["SEX"].tolist() == ["Female", "Male", "Female"]
    assert load_credit(tmp_path, repair_sex=False)["SEX"].isna().sum() == 1
    pd.DataFrame({**cols, "SEX": ["Male", None, "Female"]}).to_csv(tmp_path / "credit.csv", index=False)
    with pytest.raises(DataValidationError, match="SEX"):
        load_credit(tmp_path)


@requires_data
def test_real_loaders_shapes_and_documented_fixes():
    assert load_adult().shape == (45222, 15)
    compas = load_compas()
    assert compas.shape == (6167, 13) and set(compas["race"]) == {"Caucasian", "Not-Caucasian"}
    assert load_law().shape == (21791, 6)
    crime = load_crime()
    assert crime.shape == (1993, 150)
    assert not set(CRIME_DERIVED_COLUMNS) & set(load_crime(drop_derived=True).columns)
    assert crime_majority_white(crime).sum() == 1572
    with pytest.warns(UserWarning):
        credit = load_credit()
    assert credit["SEX"].value_counts().to_dict() == {"Female": 18112, "Male": 11888}
    bank = load_bank()
    assert len(bank) == 45211 and not bank.duplicated().any() and bank["job"].nunique() == 12
    assert len(load_bank(drop_duplicates=False)) == 45212
    assert load_german().shape == (1000, 60)


# ---------------------------------------------------------------------- built-in data
def _rates(counts: pd.DataFrame, group: str, label: str, value) -> tuple[float, float]:
    size = counts.groupby(group)[COUNT_COLUMN].sum()
    pos = counts[counts[label] == value].groupby(group)[COUNT_COLUMN].sum() / size
    return pos.min() / pos.max(), size.min() / size.max()


def test_builtin_without_data_home(monkeypatch):
    monkeypatch.delenv(DATA_HOME_ENV, raising=False)
    compas, adult = load_builtin("compas"), load_builtin("builtin:adult")
    assert compas.domain == COMPAS_DOMAIN and compas.domain.size == 144
    assert adult.domain == ADULT_DOMAIN and adult.domain.size == 504
    assert ADULT_DOMAIN.levels["education_years"] == tuple(range(5, 14))
    assert ADULT_DOMAIN.levels["age_decade"] == tuple(range(10, 80, 10))
    assert (compas.n_records, compas.n_cells) == (6167, 143)
    assert (adult.n_records, adult.n_cells) == (45222, 403)
    # raw rates quoted in the max-ent implementation notes (label value 1)
    assert _rates(compas.counts, "sex", "two_year_recid", 1) == pytest.approx((0.734, 0.235), abs=5e-4)
    assert _rates(adult.counts, "sex", "income", 1) == pytest.approx((0.363, 0.481), abs=5e-4)
    rows = compas.expand(shuffle=True, random_state=0)
    assert len(rows) == 6167 and list(rows.columns) == list(COMPAS_DOMAIN.names)
    assert rows.equals(compas.expand(shuffle=True, random_state=0))
    np.testing.assert_array_equal(compas.domain.counts(rows)[COUNT_COLUMN], compas.counts[COUNT_COLUMN])
    cells, n = adult.codes()
    assert cells.shape == (403, 5) and n.sum() == 45222
    assert compas.label == "two_year_recid" and compas.favourable_label == 0 and compas.protected == "race"
    assert adult.label == "income" and adult.favourable_label == 1 and adult.privileged["sex"] == "Male"
    for spec in BUILTIN_SPECS.values():
        assert spec.label in spec.domain.names and set(spec.protected_attributes) <= set(spec.domain.names)
    text = builtin_citation()
    assert "ProPublica" in text and "UCI" in text and "make_builtin_data.py" in text
    with pytest.raises(DataValidationError, match="unknown built-in"):
        load_builtin("german")


@requires_data
def test_builtin_totals_and_regeneration_are_exact(tmp_path):
    for name, loader in (("compas", load_compas), ("adult", load_adult)):
        raw = loader()
        shipped = ROOT / "fairopt" / "data" / "builtin" / f"{name}.csv"
        assert load_builtin(name).n_records == len(raw)
        assert counts_to_csv(make_builtin_counts(name, raw)) == shipped.read_bytes()
        levels = BUILTIN_SPECS[name].to_levels(raw)
        assert list(levels.columns) == list(BUILTIN_SPECS[name].domain.names) and len(levels) == len(raw)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(DATA_HOME_ENV)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_builtin_data.py"), "--data-home",
                           os.environ[DATA_HOME_ENV], "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, check=True)
    assert "compas" in proc.stdout
    for name in BUILTIN_SPECS:
        assert (tmp_path / f"{name}.csv").read_bytes() == \
            (ROOT / "fairopt" / "data" / "builtin" / f"{name}.csv").read_bytes()


# ---- issue 22: loaders refuse bad files by name (file, column, first bad row) --------------------
def _law_frame(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame({"lsat": np.linspace(20.0, 45.0, n), "ugpa": np.linspace(2.0, 4.0, n),
                         "zfya": np.linspace(-1.0, 1.0, n), "race": ["White", "Black"] * (n // 2),
                         "sex": ["Male", "Female", "Female"] * (n // 3), "pass_bar": [1, 0, 1] * (n // 3)})


def test_truncated_gzip_names_file_row_and_column(tmp_path):
    law = _law_frame(600)
    with gzip.open(tmp_path / "law.csv.gz", "wt") as fh:
        law.to_csv(fh, index=False)
    raw = (tmp_path / "law.csv.gz").read_bytes()
    (tmp_path / "law.csv.gz").write_bytes(raw[: len(raw) // 2])
    # what the cut leaves: complete lines, and the column of the partial last line
    text = zlib.decompressobj(31).decompress(raw[: len(raw) // 2])
    lines = text.count(b"\n")
    col = law.columns[text.rsplit(b"\n", 1)[-1].count(b",")]
    with pytest.raises(DataValidationError) as err:
        load_law(tmp_path)
    msg = str(err.value)
    assert str(tmp_path / "law.csv.gz") in msg and "truncated or corrupt gzip" in msg
    assert f"inside row {lines - 1} (line {lines + 1} of the file), in column {col!r}" in msg


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("column", ["pass_bar", "lsat"])
def test_non_finite_numbers_are_refused_with_column_and_row(tmp_path, bad, column):
    law = _law_frame().astype({column: float})
    law.loc[4, column] = bad
    law.to_csv(tmp_path / "law.csv", index=False)
    with pytest.raises(DataValidationError) as err:
        out = load_law(tmp_path)
        # today an inf in an integer column comes back as -9223372036854775808
        pytest.fail(f"loaded {out[column].tolist()}")
    msg = str(err.value)
    assert f"column {column!r}" in msg and str(tmp_path / "law.csv") in msg
    assert "first at row 4 (line 6 of the file)" in msg


def test_header_only_and_empty_files_are_refused(tmp_path):
    _law_frame().iloc[:0].to_csv(tmp_path / "law.csv", index=False)
    with pytest.raises(DataValidationError, match=r"law\.csv has a header but no data rows"):
        load_law(tmp_path)
    (tmp_path / "law.csv").write_text("")
    with pytest.raises(DataValidationError, match=r"law\.csv is empty"):
        load_law(tmp_path)


@pytest.mark.parametrize("column", ["race", "sex"])
def test_single_group_protected_attribute_is_refused(tmp_path, column):
    _law_frame().assign(**{column: "Female" if column == "sex" else "White"}).to_csv(tmp_path / "law.csv",
                                                                                  index=False)
    with pytest.raises(DataValidationError) as err:
        load_law(tmp_path)
    msg = str(err.value)
    assert f"column {column!r}" in msg and "single group" in msg and str(tmp_path / "law.csv") in msg


def test_every_loader_declares_protected_columns_of_its_schema():
    for info in DATASETS.values():
        assert info.protected and set(info.protected) <= set(info.schema), info.name


@requires_data
def test_shared_benchmark_files_still_load():
    for name in DATASETS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            df = load_dataset(name)
        for col in DATASETS[name].protected:
            assert df[col].nunique() >= 2


def test_misnamed_non_utf8_duplicate_header_and_fractional_files_are_refused(tmp_path):
    law = _law_frame()
    (tmp_path / "law.csv.gz").write_text(law.to_csv(index=False))      # a plain CSV named .gz
    with pytest.raises(DataValidationError, match=r"law\.csv\.gz is not a gzip file.*named law\.csv"):
        load_law(tmp_path)
    (tmp_path / "law.csv.gz").unlink()
    (tmp_path / "law.csv").write_bytes(law.assign(race="Wh\xefte").to_csv(index=False).encode("latin-1"))
    with pytest.raises(DataValidationError, match="not UTF-8 text"):
        load_law(tmp_path)
    header = ",".join(["lsat", *law.columns])
    rows = "\n".join(",".join(map(str, [1.0, *r])) for r in law.itertuples(index=False))
    (tmp_path / "law.csv").write_text(f"{header}\n{rows}\n")
    # pandas renames the second copy "lsat.1": the loader would read one of them silently
    with pytest.raises(DataValidationError, match=r"names column\(s\) \['lsat'\] more than once"):
        load_law(tmp_path)
    law.assign(pass_bar=[1, 0, 0.5, 1, 0, 1]).to_csv(tmp_path / "law.csv", index=False)
    with pytest.raises(DataValidationError, match=r"'pass_bar'.*integers, first at row 2 \(line 4 of the file\): 0\.5"):
        load_law(tmp_path)
