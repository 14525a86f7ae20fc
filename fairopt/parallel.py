"""Executors for parameter sweeps: serial, local processes, or a Dask distributed cluster.

All executors share one call, :meth:`Executor.map`, which applies a picklable function to a list
of items, returns the results **in input order**, and reports progress as results arrive::

    from fairopt.parallel import get_executor
    with get_executor("dask", n_workers=2) as ex:
        results = ex.map(fit_one, eps_values, progress=callback)

``"dask"`` needs the optional extra ``distributed`` (``pip install "fairopt[distributed]"``); it is
imported only when that executor is created. Without ``address`` a local cluster of worker
processes is started and shut down with the executor.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Iterable

from fairopt.errors import ConfigError

Progress = Callable[[int, int, str], None]

EXECUTORS = ("serial", "processes", "dask")


def _default_workers(n_workers: int | None) -> int:
    if n_workers is None:
        return max(1, os.cpu_count() or 1)
    if int(n_workers) != n_workers or n_workers < 1:
        raise ConfigError(f"n_workers must be a positive integer, got {n_workers!r}.")
    return int(n_workers)


class Executor:
    """Base class: a context manager with an order-preserving :meth:`map`."""

    name = "base"

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any],
            progress: Progress | None = None, description: str = "sweep") -> list:
        raise AttributeError("subclasses define map")  # pragma: no cover

    def close(self) -> None:
        """Release workers (no-op for the serial executor)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialExecutor(Executor):
    """Runs items one after the other in this process (the fallback; easiest to debug)."""

    name = "serial"

    def map(self, fn, items, progress=None, description="sweep"):
        items = list(items)
        out = []
        for i, item in enumerate(items):
            out.append(fn(item))
            if progress:
                progress(i + 1, len(items), description)
        return out


class ProcessExecutor(Executor):
    """A local ``concurrent.futures`` process pool (``fn`` and items must be picklable)."""

    name = "processes"

    def __init__(self, n_workers: int | None = None):
        self.n_workers = _default_workers(n_workers)
        self._pool = ProcessPoolExecutor(max_workers=self.n_workers)

    def map(self, fn, items, progress=None, description="sweep"):
        items = list(items)
        futures = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        out: list = [None] * len(items)
        for done, fut in enumerate(as_completed(futures), start=1):
            out[futures[fut]] = fut.result()
            if progress:
                progress(done, len(items), description)
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class DaskExecutor(Executor):
    """Dask distributed: connect to ``address`` or start a local cluster of worker processes.

    Parameters
    ----------
    address : str, optional
        Scheduler address (``"tcp://host:8786"``); default: a ``LocalCluster`` with
        ``n_workers`` single-threaded worker processes, closed by :meth:`close`.
    n_workers : int, optional
        Local cluster size (default: the number of CPUs).
    """

    name = "dask"

    def __init__(self, address: str | None = None, n_workers: int | None = None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigError("executor='dask' needs the optional dependency dask[distributed]: "
                              "pip install \"fairopt[distributed]\", or use executor='processes' "
                              "or 'serial'.") from exc
        self._cluster = None
        if address is None:
            self._cluster = LocalCluster(n_workers=_default_workers(n_workers), threads_per_worker=1,
                                         processes=True, dashboard_address=None)
            self.client = Client(self._cluster)
        else:
            self.client = Client(address)

    def map(self, fn, items, progress=None, description="sweep"):
        from dask.distributed import as_completed as dask_completed
        items = list(items)
        futures = self.client.map(fn, items, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(items)
        for done, fut in enumerate(dask_completed(futures), start=1):
            out[index[fut.key]] = fut.result()
            if progress:
                progress(done, len(items), description)
        return out

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def get_executor(kind: str = "serial", n_workers: int | None = None,
                 address: str | None = None) -> Executor:
    """Return an executor by name: ``"serial"``, ``"processes"`` or ``"dask"``."""
    if kind == "serial":
        return SerialExecutor()
    if kind == "processes":
        return ProcessExecutor(n_workers)
    if kind == "dask":
        return DaskExecutor(address=address, n_workers=n_workers)
    raise ConfigError(f"executor={kind!r}; choose one of {EXECUTORS}.")
