"""Data layer: benchmark loaders, product domains and built-in small data sets."""
from fairopt.data.builtin import (
    ADULT_DOMAIN, ADULT_SPEC, BUILTIN_SPECS, COMPAS_DOMAIN, COMPAS_SPEC, COUNT_COLUMN, BuiltinData,
    BuiltinSpec, builtin_citation, counts_to_csv, load_builtin, make_builtin_counts,
)
from fairopt.data.domain import Attribute, Domain
from fairopt.data.loaders import (
    CRIME_DERIVED_COLUMNS, CRIME_RACE_COLUMNS, DATA_HOME_ENV, DATASETS, DatasetInfo, crime_majority_white,
    data_home, dataset_path, load_adult, load_bank, load_compas, load_credit, load_crime, load_dataset,
    load_german, load_law,
)
from fairopt.data.fetch import (
    SOURCES, DataChecksumError, DataDownloadError, RawFile, build_dataset, fetch_adult, fetch_bank, fetch_compas,
    fetch_credit, fetch_crime, fetch_dataset, fetch_german, fetch_law,
)
from fairopt.data.preprocess import (
    preprocess_adult, preprocess_bank, preprocess_compas, preprocess_credit, preprocess_crime, preprocess_german,
    preprocess_law,
)

__all__ = [
    "Attribute", "Domain",
    "ADULT_DOMAIN", "ADULT_SPEC", "BUILTIN_SPECS", "COMPAS_DOMAIN", "COMPAS_SPEC", "COUNT_COLUMN",
    "BuiltinData", "BuiltinSpec", "builtin_citation", "counts_to_csv", "load_builtin", "make_builtin_counts",
    "CRIME_DERIVED_COLUMNS", "CRIME_RACE_COLUMNS", "DATA_HOME_ENV", "DATASETS", "DatasetInfo",
    "crime_majority_white", "data_home", "dataset_path", "load_adult", "load_bank", "load_compas",
    "load_credit", "load_crime", "load_dataset", "load_german", "load_law",
]

# Download and preprocessing of the benchmark files (fairopt.data.fetch, fairopt.data.preprocess).
__all__ += [
    "SOURCES", "DataChecksumError", "DataDownloadError", "RawFile", "build_dataset", "fetch_adult", "fetch_bank",
    "fetch_compas", "fetch_credit", "fetch_crime", "fetch_dataset", "fetch_german", "fetch_law",
    "preprocess_adult", "preprocess_bank", "preprocess_compas", "preprocess_credit", "preprocess_crime",
    "preprocess_german", "preprocess_law",
]
