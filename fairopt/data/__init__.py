"""Data layer: benchmark loaders, product domains, built-in small data sets, and the download and
preprocessing of the benchmark files.

Names load on first use (PEP 562), so ``fairopt --help`` and ``import fairopt.data.<module>`` stay free of
pandas until a loader is called.
"""
from __future__ import annotations

import importlib
from typing import Any

#: submodule -> the public names it defines
_MODULES = {
    "builtin": ("ADULT_DOMAIN", "ADULT_SPEC", "BUILTIN_SPECS", "COMPAS_DOMAIN", "COMPAS_SPEC", "COUNT_COLUMN",
                "BuiltinData", "BuiltinSpec", "builtin_citation", "counts_to_csv", "load_builtin",
                "make_builtin_counts"),
    "domain": ("Attribute", "Domain"),
    "loaders": ("CRIME_DERIVED_COLUMNS", "CRIME_RACE_COLUMNS", "DATA_HOME_ENV", "DATASETS", "DatasetInfo",
                "crime_majority_white", "data_home", "dataset_path", "load_adult", "load_bank", "load_compas",
                "load_credit", "load_crime", "load_dataset", "load_german", "load_law"),
    "fetch": ("SOURCES", "DataChecksumError", "DataDownloadError", "RawFile", "build_dataset", "fetch_adult",
              "fetch_bank", "fetch_compas", "fetch_credit", "fetch_crime", "fetch_dataset", "fetch_german",
              "fetch_law"),
    "preprocess": ("preprocess_adult", "preprocess_bank", "preprocess_compas", "preprocess_credit",
                   "preprocess_crime", "preprocess_german", "preprocess_law"),
}
_SOURCES_OF = {name: f"fairopt.data.{module}" for module, names in _MODULES.items() for name in names}
__all__ = [name for names in _MODULES.values() for name in names]


def __getattr__(name: str) -> Any:
    if name in _MODULES or name in ("attribute",):
        return importlib.import_module(f"fairopt.data.{name}")
    module = _SOURCES_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'fairopt.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
