"""``fairopt data fetch``: the sub-command's parser, kept free of pandas so ``fairopt --help`` stays fast;
the work is :func:`fairopt.data.fetch.fetch_command`."""
from __future__ import annotations

import argparse

#: the data sets ``fairopt data fetch`` can build (the keys of :data:`fairopt.data.fetch.SOURCES`)
FETCHABLE = ("adult", "bank", "compas", "credit", "crime", "german", "law")


def _run_fetch(args: argparse.Namespace) -> int:
    from fairopt.data.fetch import fetch_command
    return fetch_command(args)


def add_data_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Register ``fairopt data fetch NAME... [--dest DIR] [--cache DIR] [--force]`` on a CLI.

    Parameters
    ----------
    subparsers
        The object returned by ``ArgumentParser.add_subparsers``.

    Returns
    -------
    ArgumentParser
        The ``data`` sub-parser.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="fairopt")
    >>> _ = add_data_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["data", "fetch", "adult", "--dest", "d"]).dest
    'd'
    """
    data = subparsers.add_parser("data", help="get the benchmark data sets (download and preprocess)")
    sub = data.add_subparsers(dest="data_command", required=True)
    fetch = sub.add_parser(
        "fetch", help="download a public source (pinned SHA-256, cached) and write <dest>/<name>.csv.gz")
    fetch.add_argument("names", nargs="+", metavar="NAME", choices=[*FETCHABLE, "all"],
                       help=f"data set(s): {', '.join(FETCHABLE)}, or all")
    fetch.add_argument("--dest", help="output folder (default $FAIROPT_DATA_HOME, else the user cache folder)")
    fetch.add_argument("--cache", help="folder for the raw downloads (default <data home>/raw)")
    fetch.add_argument("--force", action="store_true", help="rebuild files that already exist")
    fetch.set_defaults(func=_run_fetch)
    return data
