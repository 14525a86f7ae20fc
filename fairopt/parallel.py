"""Executors for parameter sweeps: serial, local processes, or a Dask distributed cluster.

All executors share two calls. :meth:`Executor.map` applies a picklable function to a list of
items and returns the results **in input order**; :meth:`Executor.as_completed` yields
``(index, outcome)`` pairs **as results arrive**, where ``outcome`` is the result or the exception
the item raised, so a sweep can store each result at once and keep going after a failure::

    from fairopt.parallel import get_executor
    with get_executor("dask", n_workers=2) as ex:
        results = ex.map(fit_one, eps_values, shared=data, progress=callback)

``shared`` is sent to each worker once (Dask ``scatter(broadcast=True)``, a process-pool
initializer) and passed as the second argument, ``fn(item, shared)``: large inputs travel once,
not once per item.

``"dask"`` needs the optional extra ``distributed`` (``pip install "fairopt[distributed]"``); it is
imported only when that executor is created. Without ``address`` a local cluster is started and
shut down with the executor.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as futures_completed
from typing import Any

from fairopt.errors import ConfigError

Progress = Callable[[int, int, str], None]
_Task = Callable[..., Any]  # fn(item) or fn(item, shared)
_Outcomes = Iterator[tuple[int, Any]]  # (input index, result or the exception it raised)

EXECUTORS = ("serial", "processes", "dask")
_ALIASES = {"local": "serial", "serial": "serial", "processes": "processes", "dask": "dask"}


def _default_workers(n_workers: int | None) -> int:
    if n_workers is None:
        return max(1, os.cpu_count() or 1)
    if int(n_workers) != n_workers or n_workers < 1:
        raise ConfigError(f"n_workers must be a positive integer, got {n_workers!r}.")
    return int(n_workers)


class Executor:
    """Base class: a context manager with :meth:`as_completed` and an order-preserving :meth:`map`."""

    name = "base"

    def as_completed(self, fn: _Task, items: Iterable[Any], shared: Any = None) -> _Outcomes:
        """Yield ``(index, result or exception)`` for every item, in completion order."""
        raise AttributeError("subclasses define as_completed")  # pragma: no cover

    def map(self, fn: _Task, items: Iterable[Any], progress: Progress | None = None,
            description: str = "sweep", shared: Any = None) -> list[Any]:
        """Results of ``fn(item)`` (or ``fn(item, shared)``) in input order; the first error is raised."""
        items = list(items)
        out: list[Any] = [None] * len(items)
        for done, (i, value) in enumerate(self.as_completed(fn, items, shared), start=1):
            if isinstance(value, BaseException):
                raise value
            out[i] = value
            if progress:
                progress(done, len(items), description)
        return out

    def close(self) -> None:
        """Release workers (no-op for the serial executor)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _call(fn: _Task, item: Any, shared: Any, with_shared: bool) -> Any:
    return fn(item, shared) if with_shared else fn(item)


class SerialExecutor(Executor):
    """Runs items one after the other in this process (the fallback; easiest to debug)."""

    name = "serial"

    def as_completed(self, fn: _Task, items: Iterable[Any], shared: Any = None) -> _Outcomes:
        for i, item in enumerate(items):
            try:
                value = _call(fn, item, shared, shared is not None)
            except Exception as exc:
                value = exc
            yield i, value


_WORKER_SHARED: dict[str, Any] = {}


def _set_worker_shared(shared: Any) -> None:
    _WORKER_SHARED["value"] = shared


def _call_with_worker_shared(fn: _Task, item: Any) -> Any:
    return fn(item, _WORKER_SHARED["value"])


class ProcessExecutor(Executor):
    """A local ``concurrent.futures`` process pool (``fn`` and items must be picklable).

    The pool starts on the first call, so that ``shared`` can be handed to every process once
    through the pool's initializer.
    """

    name = "processes"

    def __init__(self, n_workers: int | None = None):
        self.n_workers = _default_workers(n_workers)
        self._pool: ProcessPoolExecutor | None = None
        self._shared_id: int | None = None

    def _get_pool(self, shared: Any) -> ProcessPoolExecutor:
        if self._pool is not None and self._shared_id != id(shared):
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._pool is None:
            if shared is not None:
                self._pool = ProcessPoolExecutor(max_workers=self.n_workers, initializer=_set_worker_shared,
                                                 initargs=(shared,))
            else:
                self._pool = ProcessPoolExecutor(max_workers=self.n_workers)
            self._shared_id = id(shared)
        return self._pool

    def as_completed(self, fn: _Task, items: Iterable[Any], shared: Any = None) -> _Outcomes:
        pool = self._get_pool(shared)
        if shared is not None:
            futures = {pool.submit(_call_with_worker_shared, fn, item): i for i, item in enumerate(items)}
        else:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        try:
            for fut in futures_completed(futures):
                exc = fut.exception()
                yield futures[fut], exc if exc is not None else fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    """Dask distributed: connect to ``address`` or start a local cluster.

    Parameters
    ----------
    address : str, optional
        Scheduler address (``"tcp://host:8786"``); default: a ``LocalCluster`` with
        ``n_workers`` single-threaded workers, closed by :meth:`close`.
    n_workers : int, optional
        Local cluster size (default: the number of CPUs).
    processes : bool, default True
        Local cluster of worker processes (``False``: worker threads in this process, which
        starts faster but shares the GIL).
    """

    name = "dask"

    def __init__(self, address: str | None = None, n_workers: int | None = None, processes: bool = True):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigError("executor='dask' needs the optional dependency dask[distributed]: "
                              "pip install \"fairopt[distributed]\", or use executor='processes' "
                              "or 'serial'.") from exc
        self._cluster: LocalCluster | None = None
        self.address = address
        if address is None:
            self._cluster = LocalCluster(n_workers=_default_workers(n_workers), threads_per_worker=1,
                                         processes=processes, dashboard_address=":0")  # any free port
            self.client = Client(self._cluster)
        else:
            try:
                self.client = Client(address, timeout="10s")
            except OSError as exc:
                raise ConfigError(f"cannot reach the Dask scheduler at {address!r} ({exc}); start one with "
                                  "`dask scheduler` and `dask worker ADDRESS`, or omit the address to run a "
                                  "local cluster.") from exc

    @property
    def n_workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def as_completed(self, fn: _Task, items: Iterable[Any], shared: Any = None) -> _Outcomes:
        from dask.distributed import as_completed as dask_completed
        items = list(items)
        if shared is not None:
            # one copy per worker instead of one per task
            [shared_future] = self.client.scatter([shared], broadcast=True, hash=False)
            futures = self.client.map(fn, items, shared=shared_future, pure=False)
        else:
            futures = self.client.map(fn, items, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in dask_completed(futures):
                exc = fut.exception() if fut.status == "error" else None
                yield index[fut.key], exc if exc is not None else fut.result()
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def parse_executor(text: str) -> tuple[str, str | None]:
    """``"local"`` / ``"serial"`` / ``"processes"`` / ``"dask"`` / ``"dask://HOST:PORT"`` -> (kind, address).

    ``dask://HOST:PORT`` means the scheduler at ``tcp://HOST:PORT``; ``dask://tls://...`` keeps the
    given protocol.
    """
    name, sep, address = str(text).partition("://")
    kind = _ALIASES.get(name.strip().lower())
    if kind is None or (sep and kind != "dask") or (sep and not address):
        raise ConfigError(f"executor {text!r}: use local (= serial), processes, dask, or dask://HOST:PORT "
                          "for a running Dask scheduler.")
    if not sep:
        return kind, None
    return kind, address if "://" in address else f"tcp://{address}"


def get_executor(kind: str = "serial", n_workers: int | None = None,
                 address: str | None = None, processes: bool = True) -> Executor:
    """Return an executor by name: ``"serial"`` (alias ``"local"``), ``"processes"``, ``"dask"``
    or ``"dask://HOST:PORT"``."""
    parsed, parsed_address = parse_executor(kind)
    address = address or parsed_address
    if parsed == "serial":
        return SerialExecutor()
    if parsed == "processes":
        return ProcessExecutor(n_workers)
    return DaskExecutor(address=address, n_workers=n_workers, processes=processes)
