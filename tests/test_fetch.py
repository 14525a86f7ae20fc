"""Offline tests of fairopt.data.preprocess and fairopt.data.fetch.

The fixtures in tests/data/raw are a few records of each public source in its raw format. Their
preprocessed rows are compared with the same records of the shared benchmark files when
FAIROPT_DATA_HOME is set; downloads go through pooch with file:// URLs, so nothing leaves the machine.
"""
from __future__ import annotations

import hashlib
import io
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_HOME, requires_data

from fairopt import cli
from fairopt.data import fetch as F
from fairopt.data import preprocess as pp
from fairopt.data.loaders import DATASETS, load_dataset
from fairopt.errors import DataNotFoundError, DataValidationError

pytest.importorskip("pooch")
RAW = Path(__file__).parent / "data" / "raw"


def _sheet():
    pytest.importorskip("python_calamine")
    return pd.read_excel(RAW / "credit.xls", header=1, engine="calamine")


FIXTURES = {
    "adult": lambda: pp.preprocess_adult(RAW / "adult.data", RAW / "adult.test"),
    "compas": lambda: pp.preprocess_compas(RAW / "compas-scores-two-years.csv"),
    "law": lambda: pp.preprocess_law(RAW / "law_data.csv"),
    "crime": lambda: pp.preprocess_crime(RAW / "communities.data"),
    "credit": lambda: pp.preprocess_credit(_sheet()),
    "bank": lambda: pp.preprocess_bank(RAW / "bank.zip", duplicate_row=False),
    "german": lambda: pp.preprocess_german(RAW / "german.data"),
}
N_ROWS = {"adult": 10, "compas": 9, "law": 6, "crime": 5, "credit": 6, "bank": 6, "german": 7}
# positions in the shared file of the order-preserving fixtures' rows (german: record 18 is aged 25)
SHARED_ROWS = {"german": [0, 1, 2, 3, 4, 5, 17]}


def _load(name, folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # the shared credit copy's SEX repair
        return load_dataset(name, folder)


def _roundtrip(name, df, tmp_path):
    """Write as the loaders' file and read back through the loader (its schema checks)."""
    pp.write_benchmark(df, tmp_path / f"{name}.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)      # a fetched file needs no repair
        return load_dataset(name, tmp_path)


# ---------------------------------------------------------------------- preprocessing
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_passes_loader_schema(name, tmp_path):
    df = FIXTURES[name]()
    assert len(df) == N_ROWS[name]
    loaded = _roundtrip(name, df, tmp_path)
    assert set(DATASETS[name].schema) <= set(loaded.columns)
    assert list(loaded.columns) == list(df.columns)
    assert not loaded.isna().any().any()


def _shared_rows_for(name, loaded):
    """The shared file's rows restricted to the fixture's columns; indicator columns the fixture lacks
    (states, German codes absent from a few records) must be 0 on the matched rows."""
    shared = _load(name, DATA_HOME) if name != "bank" else (
        # the shared bank file repeats record 27,349 as row 1; the fixture is built without it
        load_dataset("bank", DATA_HOME, drop_duplicates=False).drop(index=1).reset_index(drop=True))
    assert set(loaded.columns) <= set(shared.columns)
    return shared.copy(), [c for c in shared.columns if c not in loaded.columns]


@requires_data
@pytest.mark.parametrize("name", ["compas", "credit", "bank", "german"])
def test_order_preserving_fixtures_equal_leading_shared_rows(name, tmp_path):
    """These sources keep the raw order, so the fixture's rows are the shared file's leading rows."""
    loaded = _roundtrip(name, FIXTURES[name](), tmp_path)
    shared, extra = _shared_rows_for(name, loaded)
    head = shared.iloc[SHARED_ROWS.get(name, range(len(loaded)))]
    pd.testing.assert_frame_equal(loaded, head[list(loaded.columns)].reset_index(drop=True))
    assert (head[extra].to_numpy() == 0).all()


@requires_data
@pytest.mark.parametrize("name", ["adult", "law", "crime"])
def test_shuffled_fixtures_rows_are_in_shared_file(name, tmp_path):
    """Adult, law and crime are shuffled: every fixture row must occur in the shared file."""
    loaded = _roundtrip(name, FIXTURES[name](), tmp_path)
    shared, extra = _shared_rows_for(name, loaded)
    # a tiny fixture can read a [0, 1] attribute as integers; the values are what is compared
    loaded = loaded.astype(shared.dtypes[list(loaded.columns)].to_dict())
    cols = list(loaded.columns)
    mine, theirs = (pd.util.hash_pandas_object(f[cols], index=False) for f in (loaded, shared))
    assert mine.isin(theirs).all()
    assert (shared.loc[theirs.isin(mine).to_numpy(), extra].to_numpy() == 0).all()


def test_adult_drops_missing_and_cleans_test_labels():
    df = FIXTURES["adult"]()
    assert df["income"].tolist().count(1) == 2                  # one ">50K" in each fixture file
    assert "?" not in set(df.select_dtypes(exclude="number").stack())
    assert list(df.columns) == list(DATASETS["adult"].schema)


def test_compas_filter_and_binary_race():
    df = FIXTURES["compas"]()
    raw = pd.read_csv(RAW / "compas-scores-two-years.csv")
    assert raw["c_charge_desc"].isna().sum() == 1 and len(raw) == 13
    assert set(df["race"]) <= {"Caucasian", "Not-Caucasian"}
    assert df["age"].tolist()[:3] == raw["age"].tolist()[:3]     # source order is kept


def test_crime_first_record_and_missing_columns():
    full = pp.preprocess_crime(RAW / "communities.data", drop_first_record=False)
    quirk = FIXTURES["crime"]()
    assert "Lakewoodcity" in set(full["communityname"]) and "Lakewoodcity" not in set(quirk["communityname"])
    for col in ("county", "community", "OtherPerCap", "LemasSwornFT", "state"):
        assert col not in quirk.columns
    np.testing.assert_array_equal(quirk[">0.06black"], (quirk["racepctblack"] > 0.06).astype(int))
    np.testing.assert_array_equal(quirk["high_crime"], (quirk["ViolentCrimesPerPop"] > 0.25).astype(int))
    states = quirk.filter(like="state_")
    assert (states.sum(axis=1) == 1).all() and quirk.columns[-2:].tolist() == [">0.06black", "high_crime"]


def test_credit_sex_follows_uci_coding():
    df = FIXTURES["credit"]()
    sheet = _sheet()
    np.testing.assert_array_equal(df["SEX"].to_numpy(), np.where(sheet["SEX"] == 1, "Male", "Female"))
    assert df["LIMIT_BAL"].dtype == np.float64 and df["default"].tolist() == sheet.iloc[:, -1].tolist()


def test_credit_rejects_unknown_sex_code_and_missing_target():
    sheet = _sheet()
    with pytest.raises(DataValidationError, match="SEX"):
        pp.preprocess_credit(sheet.assign(SEX=3))
    with pytest.raises(DataValidationError, match="header=1"):
        pp.preprocess_credit(sheet.drop(columns=sheet.columns[-1]))


def _bank_csv(n):
    """A bank-full.csv of n distinct records (ages 0..n-1), in UCI's ';'-separated format."""
    head = ('"age";"job";"marital";"education";"default";"balance";"housing";"loan";"contact";"day";"month";'
            '"duration";"campaign";"pdays";"previous";"poutcome";"y"\n')
    rest = ';"admin.";"single";"secondary";"no";10;"yes";"no";"cellular";5;"may";100;1;-1;0;"unknown";"no"\n'
    return (head + "".join(pd.Series(np.arange(n)).astype(str) + rest)).encode()


def test_bank_duplicate_row_reproduces_shared_layout():
    df = pp.preprocess_bank(_bank_csv(27350))
    assert len(df) == 27351
    assert df["age"].iloc[:3].tolist() == [0, 27348, 1] and df["age"].iloc[27349] == 27348
    assert df.duplicated().sum() == 1
    with pytest.raises(DataValidationError, match="duplicate_row"):
        pp.preprocess_bank(RAW / "bank.zip")             # 6 records: the shared layout needs UCI's 45,211


def test_bank_reads_zip_and_csv_alike():
    csv = zipfile.ZipFile(RAW / "bank.zip").read("bank-full.csv")
    pd.testing.assert_frame_equal(pp.preprocess_bank(csv, duplicate_row=False), FIXTURES["bank"]())


def test_german_codes():
    df = FIXTURES["german"]()
    raw = pd.read_csv(RAW / "german.data", sep=" ", header=None)
    np.testing.assert_array_equal(df["sex"], raw[8].isin(["A91", "A93", "A94"]).astype(int))
    np.testing.assert_array_equal(df["age"], (raw[12] >= 25).astype(int))
    np.testing.assert_array_equal(df["credit-label"], (raw[20] == 2).astype(int))
    np.testing.assert_array_equal(df["sex-age"], df["sex"] * df["age"])
    assert (df.filter(like="status_").sum(axis=1) == 1).all()
    assert df["age"].iloc[-1] == 1 and raw[12].iloc[-1] == 25     # the boundary: 25 counts as older


@pytest.mark.parametrize("fn, bad", [
    (pp.preprocess_german, b"A11 6 A34\n"),
    (pp.preprocess_crime, b"1,2,3\n"),
    (lambda b: pp.preprocess_adult(b, b"|1x3\n1, 2\n"), b"1, 2, 3\n"),
])
def test_wrong_raw_format_is_a_typed_error(fn, bad):
    with pytest.raises(DataValidationError, match="right raw file"):
        fn(bad)


# ---------------------------------------------------------------------- download path
def _local_sources(monkeypatch, name, files, sha=None):
    raws = tuple(F.RawFile(f.name, sha or hashlib.sha256(f.read_bytes()).hexdigest(), (f.as_uri(),))
                 for f in files)
    monkeypatch.setitem(F.SOURCES, name, raws)
    return raws


def test_every_loader_file_has_a_pinned_source():
    assert set(F.SOURCES) == set(DATASETS)
    for raws in F.SOURCES.values():
        for r in raws:
            assert len(r.sha256) == 64 and int(r.sha256, 16) >= 0 and r.urls


def test_fetch_builds_the_loader_file_and_uses_the_cache(monkeypatch, tmp_path):
    src = tmp_path / "mirror" / "german.data"
    src.parent.mkdir()
    src.write_bytes((RAW / "german.data").read_bytes())
    _local_sources(monkeypatch, "german", [src])
    out = F.fetch_dataset("german", tmp_path / "home", cache_dir=tmp_path / "cache")
    assert out == tmp_path / "home" / "german.csv.gz"
    pd.testing.assert_frame_equal(load_dataset("german", out), FIXTURES["german"]())
    assert (tmp_path / "cache" / "german.data").is_file()
    src.unlink()                                            # now offline: the cached raw file is enough
    again = F.fetch_german(tmp_path / "home", cache_dir=tmp_path / "cache", force=True)
    assert again == out


def test_fetch_defaults_to_data_home(monkeypatch, tmp_path):
    _local_sources(monkeypatch, "law", [RAW / "law_data.csv"])
    monkeypatch.setenv("FAIROPT_DATA_HOME", str(tmp_path))
    out = F.fetch_law()
    assert out == tmp_path / "law.csv.gz" and (tmp_path / "raw" / "law_data.csv").is_file()


def test_hash_mismatch_is_a_checksum_error(monkeypatch, tmp_path):
    _local_sources(monkeypatch, "german", [RAW / "german.data"], sha="0" * 64)
    with pytest.raises(F.DataChecksumError, match=r"0{64}") as info:
        F.fetch_dataset("german", tmp_path, cache_dir=tmp_path / "cache")
    assert "by hand" in str(info.value) and isinstance(info.value, DataValidationError)
    assert not (tmp_path / "cache" / "german.data").exists()   # the bad download is not kept
    assert not (tmp_path / "german.csv.gz").exists()


def test_offline_is_a_download_error_with_instructions(monkeypatch, tmp_path):
    requests = pytest.importorskip("requests")

    def offline(url, output_file, pooch_obj=None):
        raise requests.exceptions.ConnectionError(f"Failed to resolve host for {url}")

    monkeypatch.setattr(F, "_downloader_for", lambda url: offline)
    with pytest.raises(F.DataDownloadError) as info:
        F.fetch_adult(tmp_path, cache_dir=tmp_path / "cache")
    msg = str(info.value)
    assert isinstance(info.value, DataNotFoundError)
    assert "adult.data" in msg and F.SOURCES["adult"][0].urls[0] in msg and F.SOURCES["adult"][0].urls[1] in msg
    assert str(tmp_path / "cache" / "adult.data") in msg and F.SOURCES["adult"][0].sha256 in msg


def test_missing_local_mirror_is_a_download_error(monkeypatch, tmp_path):
    monkeypatch.setitem(F.SOURCES, "german", (F.RawFile("german.data", "0" * 64, ((tmp_path / "nope").as_uri(),)),))
    with pytest.raises(F.DataDownloadError, match="by hand"):
        F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")


def test_unknown_name_and_wrong_file_count():
    with pytest.raises(DataValidationError, match="fetchable"):
        F.fetch_dataset("iris")
    with pytest.raises(DataValidationError, match="2 raw file"):
        F.build_dataset("adult", [RAW / "adult.data"])


def test_cli_data_fetch(monkeypatch, tmp_path, capsys):
    _local_sources(monkeypatch, "compas", [RAW / "compas-scores-two-years.csv"])
    monkeypatch.delenv("FAIROPT_DATA_HOME", raising=False)
    assert cli.main(["data", "fetch", "compas", "--dest", str(tmp_path), "--cache", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert f"compas: {tmp_path / 'compas.csv.gz'}" in out and "export FAIROPT_DATA_HOME=" in out
    assert len(load_dataset("compas", tmp_path)) == N_ROWS["compas"]

    monkeypatch.setattr(F, "_downloader_for", lambda url: _raise_offline)
    assert cli.main(["data", "fetch", "compas", "--dest", str(tmp_path / "x"), "--cache", str(tmp_path / "c2")]) == 2
    err = capsys.readouterr().err
    assert "DataDownloadError" in err and "by hand" in err


def _raise_offline(url, output_file, pooch_obj=None):
    raise OSError("Network is unreachable")


def test_cli_rejects_unknown_name(capsys):
    with pytest.raises(SystemExit):
        cli.main(["data", "fetch", "iris"])
    assert "invalid choice" in capsys.readouterr().err


def test_write_benchmark_is_atomic(tmp_path):
    df = pd.DataFrame({"a": [1, 2]})
    p = pp.write_benchmark(df, tmp_path / "sub" / "x.csv.gz")
    assert list(p.parent.iterdir()) == [p]
    assert pd.read_csv(io.BytesIO(p.read_bytes()), compression="gzip")["a"].tolist() == [1, 2]


@pytest.fixture
def loopback_http(monkeypatch):
    """Serve tests/data/raw over HTTP on 127.0.0.1 (pooch's real HTTP downloader, no outside traffic)."""
    import functools
    import http.server
    import threading

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(RAW))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_download_with_pinned_hash(monkeypatch, tmp_path, loopback_http):
    sha = hashlib.sha256((RAW / "german.data").read_bytes()).hexdigest()
    monkeypatch.setitem(F.SOURCES, "german", (F.RawFile("german.data", sha, (f"{loopback_http}/german.data",)),))
    out = F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")
    pd.testing.assert_frame_equal(load_dataset("german", out), FIXTURES["german"]())


def test_http_mirror_fallback_and_refused_connection(monkeypatch, tmp_path, loopback_http):
    import socket

    with socket.socket() as s:                              # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/german.data"
    sha = hashlib.sha256((RAW / "german.data").read_bytes()).hexdigest()
    monkeypatch.setitem(F.SOURCES, "german", (F.RawFile("german.data", sha, (dead, f"{loopback_http}/german.data")),))
    assert F.fetch_german(tmp_path, cache_dir=tmp_path / "cache").is_file()     # the second URL served it
    monkeypatch.setitem(F.SOURCES, "german", (F.RawFile("german.data", sha, (dead,)),))
    with pytest.raises(F.DataDownloadError, match="ConnectionError") as info:
        F.fetch_german(tmp_path / "x", cache_dir=tmp_path / "cache2")
    assert dead in str(info.value) and str(tmp_path / "cache2" / "german.data") in str(info.value)


def test_offline_with_a_wrong_cached_file_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(F, "_downloader_for", lambda url: _raise_offline)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "german.data").write_bytes(b"not the file\n")
    with pytest.raises(F.DataDownloadError, match="not the pinned file") as info:
        F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")
    assert hashlib.sha256(b"not the file\n").hexdigest() in str(info.value)


def test_credit_fetch_reads_the_xls(monkeypatch, tmp_path):
    pytest.importorskip("python_calamine")
    src = tmp_path / "default of credit card clients.xls"
    src.write_bytes((RAW / "credit.xls").read_bytes())
    _local_sources(monkeypatch, "credit", [src])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)         # SEX is written correctly: no loader repair
        df = load_dataset("credit", F.fetch_credit(tmp_path, cache_dir=tmp_path / "cache"))
    pd.testing.assert_frame_equal(df, FIXTURES["credit"]())


def test_cli_names_are_the_fetchable_sources():
    from fairopt.data._cli import FETCHABLE
    assert tuple(sorted(F.SOURCES)) == FETCHABLE


# ---------------------------------------------------------------------- paths, damaged files, many failures
@pytest.mark.parametrize("where", ["cache_is_file", "cache_under_file", "home_is_file", "dest_is_file"])
def test_unusable_folders_are_a_typed_error_and_a_clean_cli_exit(monkeypatch, tmp_path, capsys, where):
    from fairopt.errors import OutputError
    _local_sources(monkeypatch, "german", [RAW / "german.data"])
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    kwargs, argv = {"dest": tmp_path / "home", "cache_dir": tmp_path / "cache"}, []
    if where == "cache_is_file":
        kwargs["cache_dir"] = blocker
    elif where == "cache_under_file":
        kwargs["cache_dir"] = blocker / "raw"
    elif where == "dest_is_file":
        kwargs["dest"] = blocker
    else:
        monkeypatch.setenv("FAIROPT_DATA_HOME", str(blocker))
        kwargs = {}
    with pytest.raises(OutputError, match=r"is a file, not a folder"):
        F.fetch_dataset("german", kwargs.get("dest"), cache_dir=kwargs.get("cache_dir"))
    for flag, key in (("--dest", "dest"), ("--cache", "cache_dir")):
        if key in kwargs:
            argv += [flag, str(kwargs[key])]
    assert cli.main(["data", "fetch", "german", *argv]) == 2
    err = capsys.readouterr().err
    assert "OutputError" in err and "Traceback" not in err and str(blocker) in err


def test_a_folder_that_cannot_be_created_is_an_output_error(monkeypatch, tmp_path, capsys):
    from fairopt.errors import OutputError

    def refuse(self, *args, **kwargs):     # what a read-only or full file system answers (root ignores modes)
        raise PermissionError(13, "Permission denied", str(self))

    _local_sources(monkeypatch, "german", [RAW / "german.data"])
    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(OutputError, match=r"cannot be created \(PermissionError: Permission denied\)"):
        F.fetch_dataset("german", tmp_path, cache_dir=tmp_path / "raw")
    assert cli.main(["data", "fetch", "german", "--dest", str(tmp_path), "--cache", str(tmp_path / "raw")]) == 2
    assert "OutputError" in capsys.readouterr().err


def test_a_damaged_existing_file_is_rebuilt_not_reported_as_fetched(monkeypatch, tmp_path):
    src = tmp_path / "mirror" / "german.data"
    src.parent.mkdir()
    src.write_bytes((RAW / "german.data").read_bytes())
    _local_sources(monkeypatch, "german", [src])
    out = F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")
    record = out.with_name(out.name + ".sha256")
    assert record.read_text().split()[0] == hashlib.sha256(out.read_bytes()).hexdigest()
    good = out.read_bytes()
    assert F.fetch_german(tmp_path, cache_dir=tmp_path / "cache") == out and out.read_bytes() == good
    out.write_bytes(good[: len(good) // 2])                # truncated by a full disk
    assert F.fetch_german(tmp_path, cache_dir=tmp_path / "cache") == out
    # rebuilt from the cached raw file (gzip stamps the time, so the frames are compared) and re-recorded
    pd.testing.assert_frame_equal(load_dataset("german", out), FIXTURES["german"]())
    assert record.read_text().split()[0] == hashlib.sha256(out.read_bytes()).hexdigest()
    # offline with a damaged file: the error says why the existing file was not used
    out.write_bytes(b"garbage")
    (tmp_path / "cache" / "german.data").unlink()
    src.unlink()
    with pytest.raises(F.DataDownloadError, match=r"the existing .*german\.csv\.gz was not used: its SHA-256"):
        F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")
    # a hand-placed file without a record is checked by the loader instead
    record.unlink()
    with pytest.raises(F.DataDownloadError, match="fails the loader's checks"):
        F.fetch_german(tmp_path, cache_dir=tmp_path / "cache")


def test_fetch_all_offline_names_every_failed_file(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(F, "_downloader_for", lambda url: _raise_offline)
    assert cli.main(["data", "fetch", "all", "--dest", str(tmp_path), "--cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert f"{len(F.SOURCES)} of {len(F.SOURCES)} data set(s) failed" in err
    for name, raws in F.SOURCES.items():
        assert f"for {name}:" in err
        for r in raws:
            assert r.filename in err


def test_loaders_read_the_user_cache_that_fetch_writes_to(monkeypatch, tmp_path):
    from fairopt.data import load_german
    from fairopt.data._homes import user_cache_home
    monkeypatch.delenv("FAIROPT_DATA_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("sys.platform", "linux")
    assert user_cache_home() == tmp_path / "xdg" / "fairopt"
    with pytest.raises(DataNotFoundError, match=r"fairopt data fetch german"):
        load_german()
    _local_sources(monkeypatch, "german", [RAW / "german.data"])
    out = F.fetch_german(cache_dir=tmp_path / "c")
    assert out == tmp_path / "xdg" / "fairopt" / "german.csv.gz"
    pd.testing.assert_frame_equal(load_german(), FIXTURES["german"]())
    # an explicit data home comes first
    other = tmp_path / "home"
    other.mkdir()
    monkeypatch.setenv("FAIROPT_DATA_HOME", str(other))
    with pytest.raises(DataNotFoundError):
        load_german()
