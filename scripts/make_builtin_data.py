#!/usr/bin/env python
"""Regenerate the built-in counts tables in ``fairopt/data/builtin/`` from the benchmark data.

Usage::

    python scripts/make_builtin_data.py [--data-home DIR] [--out DIR] [--check] [NAME ...]

``--data-home`` defaults to ``$FAIROPT_DATA_HOME``. With ``--check`` nothing is written: the script
exits with status 1 if a freshly counted table differs from the file in ``--out``. The output is
deterministic (cells sorted by flat index), so regeneration reproduces the shipped files byte for byte.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairopt.data import builtin
from fairopt.data.loaders import load_dataset

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "fairopt" / "data" / "builtin"


def render(name: str, data_home: str | None) -> bytes:
    """CSV bytes of built-in table ``name`` counted from the raw data in ``data_home``."""
    spec = builtin.BUILTIN_SPECS[name]
    counts = builtin.make_builtin_counts(name, load_dataset(spec.source_dataset, data_home))
    total = int(counts[builtin.COUNT_COLUMN].sum())
    if total != spec.n_records:
        raise SystemExit(f"{name}: counted {total} records, the spec expects {spec.n_records}")
    return builtin.counts_to_csv(counts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=sorted(builtin.BUILTIN_SPECS),
                        help="tables to build (default: all)")
    parser.add_argument("--data-home", default=None, help="folder with the benchmark files "
                        "(default: $FAIROPT_DATA_HOME)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    args = parser.parse_args(argv)
    status = 0
    for name in args.names:
        if name not in builtin.BUILTIN_SPECS:
            parser.error(f"unknown table {name!r}; choose from {sorted(builtin.BUILTIN_SPECS)}")
        text = render(name, args.data_home)
        target = args.out / builtin.BUILTIN_SPECS[name].filename
        if args.check:
            same = target.is_file() and target.read_bytes() == text
            print(f"{name}: {'up to date' if same else 'DIFFERS from'} {target}")
            status |= 0 if same else 1
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text)
            print(f"{name}: wrote {target} ({len(text.splitlines()) - 1} cells)")
    return status


if __name__ == "__main__":
    sys.exit(main())
