"""Sweeps of model cards: the Cartesian product of settings, run on any executor, resumable.

``run_sweep("models/quickstart.toml", {"statistical_rate": ["0.8", "0.9", "1.0"]}, executor="dask")``
runs one task per combination (times ``folds``). A task is small: the card's tables, its
``--set`` overrides and a data *reference* (the card's ``[data]`` table), so workers load the data
themselves. Each task's record (the same keys as ``fairopt run``'s ``result.json``, plus
``task``) is written to ``OUT/tasks/<task id>/result.json`` the moment it arrives, atomically.
Rerunning the same sweep skips every task whose record is there, so an interrupted or crashed
sweep resumes where it stopped; a task that raised is stored with ``status = "error"`` and its
error, the others go on, and it is tried again on the next run.

:func:`map_points` is the generic inner sweep of a runner (fair regression's ``eps`` values): it
runs a function over points on the card's executor and keeps the progress bar moving.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fairopt.errors import ConfigError
from fairopt.runs.base import Progress, Runner, no_progress

if TYPE_CHECKING:
    from fairopt.runs.card import Card

_P = TypeVar("_P")  # a point of an inner sweep
_R = TypeVar("_R")  # what the runner's function returns for one point

#: statuses of a finished task that a rerun does not repeat (anything but a raised error)
RETRY_STATUSES = ("error",)


# ---- grid ------------------------------------------------------------------------------------------------------
def split_values(text: str) -> list[str]:
    """``"0.8,0.9,[1, 2],'a,b'"`` -> ``["0.8", "0.9", "[1, 2]", "'a,b'"]``: commas inside brackets,
    braces or quotes do not split."""
    out, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [v for v in out if v != ""]


def resolve_key(key: str, runner: Runner) -> str:
    """Full card key of a grid key: ``statistical_rate`` -> ``parameters.statistical_rate``.

    A key without a table is looked up in the formulation's ``[parameters]``, then ``[data]``,
    then ``[solver]``; an unknown key is an error that suggests the closest valid one.
    """
    import difflib

    from fairopt.runs.card import SolverTable
    key = key.strip()
    if "." in key:
        return key
    tables = {"parameters": list(runner.Parameters.model_fields), "data": list(runner.Data.model_fields),
              "solver": list(SolverTable.model_fields)}
    for table, keys in tables.items():
        if key in keys:
            return f"{table}.{key}"
    valid = [f"{t}.{k}" for t, keys in tables.items() for k in keys]
    close = difflib.get_close_matches(key, [v.split(".", 1)[1] for v in valid], n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else f". Valid keys: {', '.join(tables['parameters'])}."
    raise ConfigError(f"--grid {key}: not a key of this card's parameters, data or solver{hint}")


def parse_grid(texts: list[str] | dict[str, list[Any]], runner: Runner) -> dict[str, list[str]]:
    """``["statistical_rate=0.8,0.9"]`` (or a mapping) -> ``{"parameters.statistical_rate": ["0.8", "0.9"]}``.

    Values stay TOML text (``0.9``, ``"text"``, ``[1, 2]``) and are read like ``--set`` values.
    """
    items = texts.items() if isinstance(texts, dict) else [_split_grid_arg(t) for t in texts]
    grid: dict[str, list[str]] = {}
    for key, values in items:
        full = resolve_key(key, runner)
        values = split_values(values) if isinstance(values, str) else [_as_toml(v) for v in values]
        if not values:
            raise ConfigError(f"--grid {key}: give at least one value, e.g. {key}=0.8,0.9.")
        values = _distinct(full, values)
        if full in grid:
            raise ConfigError(f"--grid {key} is given twice; list all its values in one --grid.")
        grid[full] = values
    return grid


def _value_key(value: object) -> tuple[str, Any]:
    """Values equal as numbers (``0.9``, ``0.90``; ``1``, ``1.0``) share one key; others by their JSON."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ("number", float(value))
    if isinstance(value, list):
        return ("list", tuple(_value_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _value_key(v)) for k, v in value.items())))
    return ("other", json.dumps(value, sort_keys=True, default=str))


def _distinct(key: str, values: list[str]) -> list[str]:
    """Drop grid values equal to an earlier one once read as TOML: ``0.9,0.90`` is one task."""
    from fairopt.runs.card import parse_override
    seen, out = set(), []
    for text in values:
        k = _value_key(parse_override(f"{key}={text}")[1])
        if k not in seen:
            seen.add(k)
            out.append(text)
    return out


def _split_grid_arg(text: str) -> tuple[str, str]:
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--grid expects key=v1,v2,... (e.g. parameters.statistical_rate=0.8,0.9), got {text!r}.")
    return key, values


def _as_toml(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class Task:
    """One point of a sweep: the ``--set`` overrides that define it and its fold."""

    id: str
    values: dict[str, Any]
    overrides: list[str]
    fold: int | None = None


def _slug(values: dict[str, Any], fold: int | None) -> str:
    parts = [f"{k.split('.')[-1]}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in values.items()]
    if fold is not None:
        parts.append(f"fold={fold}")
    text = re.sub(r"[^A-Za-z0-9._=+-]+", "", "_".join(parts))[:60]
    digest = hashlib.sha1(json.dumps([values, fold], sort_keys=True).encode()).hexdigest()[:8]
    return f"{text}-{digest}" if text else digest


def expand(grid: dict[str, list[str]], folds: int | None = None) -> list[Task]:
    """The Cartesian product of the grid (times ``folds`` reseeded splits) as tasks with stable ids."""
    from fairopt.runs.card import parse_override
    keys = list(grid)
    tasks = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        overrides = [f"{k}={v}" for k, v in zip(keys, combo, strict=False)]
        values = {k: parse_override(o)[1] for k, o in zip(keys, overrides, strict=False)}
        for fold in (range(folds) if folds else [None]):
            extra = [f"data.random_state={fold}"] if fold is not None else []
            tasks.append(Task(_slug(values, fold), values, overrides + extra, fold))
    return tasks


# ---- tasks -----------------------------------------------------------------------------------------------------
def card_digest(raw: dict[str, Any], solver: str | None) -> str:
    """Identity of the swept card (tables after the sweep-wide overrides, plus ``--solver``)."""
    return hashlib.sha1(json.dumps([raw, solver], sort_keys=True, default=str).encode()).hexdigest()[:12]


def run_task(payload: dict[str, Any]) -> dict[str, Any]:
    """Worker side: validate the card with the task's overrides, run it, return its record.

    Any exception becomes a record with ``status = "error"``, the error and its traceback, so one
    failing task never stops a sweep.
    """
    from fairopt.runs.card import load_card
    from fairopt.runs.execute import execute, json_safe_record
    t0 = time.perf_counter()
    task = payload["task"]
    try:
        card = load_card(payload["card_path"], task["overrides"], payload.get("solver"), raw=payload["raw"])
        result = execute(card)
    except Exception as exc:
        result = {"card": payload["raw"].get("card", {}).get("name"), "card_path": payload["card_path"],
                  "formulation": payload["raw"].get("formulation", {}).get("name"), "status": "error",
                  "backend": None, "solver": None, "metrics": {}, "parameters": {},
                  "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                  "timings": {"build_seconds": None, "solve_seconds": None,
                              "total_seconds": time.perf_counter() - t0}}
    result["task"] = task
    result["card_digest"] = payload["digest"]
    result["worker_pid"] = os.getpid()
    return json_safe_record(result)


def write_atomic(path: Path, record: dict[str, Any]) -> None:
    """Write a JSON record so that a kill or a failed write leaves the old file or the new one,
    never half of one (:func:`fairopt.runs.files.write_json_atomic`)."""
    from fairopt.runs.files import write_json_atomic
    write_json_atomic(path, record)


def read_record(path: Path) -> dict[str, Any] | None:
    """A stored JSON object, or ``None`` if it is missing, unreadable or not an object."""
    from fairopt.runs.files import read_json
    rec = read_json(path)
    return rec if isinstance(rec, dict) else None


def record_problem(rec: Any, task_id: str | None = None, digest: str | None = None) -> str | None:
    """Why ``rec`` is not a usable task record (``None`` if it is one).

    A record is a JSON object with a text ``status``, a ``metrics`` object of numbers (or null),
    a ``task`` object whose ``id`` is ``task_id``, and, when ``digest`` is given, the sweep's
    ``card_digest`` (a record of another card or ``--set`` is never reused).

    Examples
    --------
    >>> from fairopt.runs.sweep import record_problem
    >>> record_problem([])
    'not a task record (a JSON list)'
    >>> record_problem({"status": "optimal", "metrics": {"tv": "0.1"}, "task": {"id": "a"}})
    "metric 'tv' is not a number"
    >>> record_problem({"status": "optimal", "metrics": {"tv": 0.1}, "task": {"id": "a"}}) is None
    True
    """
    if not isinstance(rec, dict):
        return f"not a task record (a JSON {type(rec).__name__ if rec is not None else 'null'})"
    if not isinstance(rec.get("status"), str):
        return "no text 'status'"
    metrics = rec.get("metrics")
    if not isinstance(metrics, dict):
        return "no 'metrics' object"
    bad = [k for k, v in metrics.items() if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))]
    if bad:
        return f"metric {bad[0]!r} is not a number"
    task = rec.get("task")
    if (not isinstance(task, dict) or not isinstance(task.get("id"), str)
            or not isinstance(task.get("values", {}), dict)):
        return "no 'task' object"
    if task_id is not None and task["id"] != task_id:
        return f"it belongs to task {task['id']!r}"
    if digest is not None and rec.get("card_digest") != digest:
        return "it was computed from another card or --set/--solver"
    return None


@dataclass
class SweepSummary:
    """What a sweep did: every task's record, and which were run now or found finished."""

    out: Path
    records: list[dict[str, Any]]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    executor: str = "serial"
    note: str = ""
    #: stored records that were not usable (``"path: why"``) and were computed again
    invalid: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") == "error"]

    @property
    def exit_code(self) -> int:
        """Worst exit code of the tasks: 1 (failed/infeasible) > 3 (a limit) > 0 (all optimal)."""
        from fairopt.runs.execute import exit_code
        codes = {exit_code(r.get("status")) for r in self.records}
        return 1 if 1 in codes else (3 if 3 in codes else 0)


def default_out(card_name: str) -> Path:
    return Path("fairopt-results") / f"{card_name}-sweep"


def plan_executor(executor: str, n_tasks: int, n_workers: int | None) -> tuple[str, str]:
    """Keep very small sweeps in this process: starting a local cluster costs more than it saves.

    Returns ``(executor, note)``; an explicit scheduler address is always honoured.
    """
    from fairopt.parallel import parse_executor
    kind, address = parse_executor(executor)
    if kind != "serial" and address is None and n_tasks <= 1:
        return "serial", f"{n_tasks} task to run: running it here instead of starting a {kind} pool"
    return executor, ""


def run_sweep(card_path: str | os.PathLike[str], grid: list[str] | dict[str, list[Any]], *, folds: int | None = None,
              executor: str = "serial", out: str | os.PathLike[str] | None = None,
              overrides: list[str] | None = None, solver: str | None = None, n_workers: int | None = None,
              progress: Progress = no_progress, processes: bool = True) -> SweepSummary:
    """Run (or resume) the sweep of ``card_path`` over ``grid``.

    Parameters
    ----------
    card_path : str or Path
        The model card.
    grid : list of str or dict
        ``["statistical_rate=0.8,0.9", ...]`` or ``{"statistical_rate": [0.8, 0.9]}``.
    folds : int, optional
        Run every combination on ``folds`` reseeded train/test splits (``data.random_state`` =
        0 … folds − 1); the card's data must have a ``random_state``.
    executor : str
        ``"local"``/``"serial"``, ``"processes"``, ``"dask"`` (a local cluster) or ``"dask://HOST:PORT"``.
    out : str or Path, optional
        Sweep folder (default ``fairopt-results/<card name>-sweep``).
    overrides, solver :
        ``--set`` overrides and ``--solver`` applied to every task.
    progress : callable
        ``progress(done, total, description)`` after each stored record.
    processes : bool
        For ``"dask"`` without an address: worker processes (default) or threads.

    Returns
    -------
    SweepSummary
    """
    from fairopt.runs.card import apply_overrides, load_card, read_card
    card_path = Path(card_path)
    raw = apply_overrides(read_card(card_path), list(overrides or []))
    # the base card must be valid; validated from the file so that errors say what came from --set
    card = load_card(card_path, list(overrides or []), solver)
    _absolute_data_path(raw)
    grid = parse_grid(grid, card.runner)
    if folds is not None:
        if folds < 1:
            raise ConfigError(f"--folds must be a positive integer, got {folds}.")
        if "random_state" not in type(card.data).model_fields:
            raise ConfigError(f"--folds: formulation {card.formulation!r} has no data.random_state to reseed "
                              "its split; sweep without --folds.")
    tasks = expand(grid, folds)
    for task in tasks:                                              # bad values stop the sweep before it starts
        load_card(card_path, task.overrides, solver, raw=raw)
    out = Path(out) if out else default_out(card.name)
    digest = card_digest(raw, solver)
    manifest = {"card": card.name, "card_path": str(card_path), "formulation": card.formulation,
                "card_digest": digest, "grid": grid, "folds": folds, "overrides": list(overrides or []),
                "solver": solver, "tasks": [t.id for t in tasks]}
    with sweep_lock(out):
        return _run_locked(out, manifest, tasks, raw, card, card_path, solver, digest, executor, n_workers,
                           processes, progress)


def _check_manifest(out: Path, digest: str) -> None:
    """Refuse a folder whose ``sweep.json`` is unreadable or belongs to another card or ``--set``."""
    from fairopt.runs.files import read_json
    path = out / "sweep.json"
    if not path.exists():
        return
    old = read_json(path)
    if not isinstance(old, dict) or not isinstance(old.get("card_digest"), str):
        raise ConfigError(f"{path} is not a valid sweep manifest (unreadable, cut short or edited), so this folder's "
                          "task records cannot be matched to a card. If the folder holds a sweep of this same card "
                          f"and --set, delete {path} and rerun: records of another card are recomputed, not reused. "
                          "Otherwise use another --out.")
    if old.get("card_digest") != digest:
        raise ConfigError(f"{out} holds a sweep of a different card or --set/--solver (card {old.get('card')!r}); "
                          "its results would mix with this one. Use another --out, or delete the folder.")


def _run_locked(out: Path, manifest: dict[str, Any], tasks: list[Task], raw: dict[str, Any], card: Card,
                card_path: Path, solver: str | None, digest: str, executor: str, n_workers: int | None, processes: bool,
                progress: Progress) -> SweepSummary:
    from fairopt.parallel import get_executor
    from fairopt.runs.files import read_json
    _check_manifest(out, digest)
    write_atomic(out / "sweep.json", manifest)

    records: dict[str, dict[str, Any]] = {}
    invalid: list[str] = []
    todo = []
    for task in tasks:
        path = out / "tasks" / task.id / "result.json"
        if not path.exists():
            todo.append(task)
            continue
        rec = read_json(path)
        problem = "not valid JSON" if rec is None else record_problem(rec, task.id, digest)
        if problem:
            invalid.append(f"{path}: {problem}")
            todo.append(task)
        elif rec.get("status") not in RETRY_STATUSES:
            records[task.id] = rec
        else:
            todo.append(task)
    summary = SweepSummary(out=out, records=[], skipped=list(records), executor=executor, invalid=invalid)
    executor, summary.note = plan_executor(executor, len(todo), n_workers)
    payloads = [{"task": {"id": t.id, "values": t.values, "overrides": t.overrides, "fold": t.fold},
                 "raw": raw, "card_path": str(card_path), "solver": solver, "digest": digest} for t in todo]
    done = len(records)
    progress(done, len(tasks), f"{done} finished before")
    if payloads:
        with get_executor(executor, n_workers=n_workers, processes=processes) as ex:
            summary.executor = ex.name
            for i, rec in ex.as_completed(run_task, payloads):
                task = todo[i]
                if isinstance(rec, BaseException):   # the worker itself died: record it, go on
                    rec = {"status": "error", "error": f"{type(rec).__name__}: {rec}", "metrics": {},
                           "task": payloads[i]["task"], "card_digest": digest, "card": card.name}
                write_atomic(out / "tasks" / task.id / "result.json", rec)
                records[task.id] = rec
                summary.ran.append(task.id)
                done += 1
                progress(done, len(tasks), f"{task.id}: {rec.get('status')}")
    summary.records = [records[t.id] for t in tasks]
    write_atomic(out / "summary.json", {
        **manifest, "executor": summary.executor, "ran": summary.ran, "skipped": summary.skipped,
        "results": [{"id": r["task"]["id"], "values": r["task"]["values"], "fold": r["task"]["fold"],
                     "status": r.get("status"), "error": r.get("error")} for r in summary.records],
        "invalid_records": summary.invalid})
    return summary


#: the lock file of a sweep folder (held while a sweep writes there)
LOCK_NAME = ".sweep.lock"


@contextmanager
def sweep_lock(out: Path) -> Iterator[Path]:
    """Hold ``OUT/.sweep.lock`` while a sweep writes into ``out``; a second sweep is refused.

    The lock is an exclusive ``flock`` on the file, which the system releases when its process
    ends, so a lock file left by a killed sweep (a dead pid) is taken over, not obeyed.

    Raises
    ------
    ConfigError
        Another running sweep (its pid is named) holds the folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.sweep import sweep_lock
    >>> with sweep_lock(pathlib.Path(tempfile.mkdtemp())) as lock:
    ...     lock.name
    '.sweep.lock'
    """
    import fcntl
    import socket

    from fairopt.runs.files import prepare_out_dir
    prepare_out_dir(out)
    path = out / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").split()
            who = f"pid {holder[0]} on {holder[1]}" if len(holder) >= 2 else "another process"
            raise ConfigError(f"another sweep ({who}) is writing to {out} now; wait for it to finish, or give this "
                              "one another --out.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()} {time.time():.0f}\n".encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _absolute_data_path(raw: dict[str, Any]) -> None:
    """A relative ``data.path`` means relative to where the sweep was started, not to the worker."""
    path = raw.get("data", {}).get("path")
    if isinstance(path, str) and path and not os.path.isabs(path):
        raw["data"]["path"] = os.path.abspath(path)


# ---- the inner sweep of a runner -------------------------------------------------------------------------------
#: estimated serial work (seconds) below which a runner's sweep does not start a local pool: worker
#: processes importing the numeric stack take seconds each (15 s on a loaded 2-core machine)
SMALL_SWEEP_SECONDS = 20.0


def map_points(fn: Callable[..., _R], points: list[_P], shared: Any, *, executor: str = "serial",
               n_workers: int | None = None, progress: Progress = no_progress, steps: int = 1,
               label: Callable[[_P], str] = str, notes: list[str] | None = None) -> list[_R]:
    """``[fn(point, shared, progress=...) for point in points]`` on the named executor, in order.

    Serially, each point reports its own progress (``steps`` units per point) through the card's
    progress bar. With a local pool (``"processes"``, ``"dask"``), the first point runs here and
    times the work: if the rest would take less than :data:`SMALL_SWEEP_SECONDS` serially, the
    sweep stays serial (a note saying so is appended to ``notes``); otherwise the other points go
    to the pool, which receives ``shared`` (the prepared data) once per worker.
    """
    from fairopt.parallel import get_executor, parse_executor
    total = len(points) * steps
    out: list[_R] = []

    def serial(i: int, point: _P) -> None:
        def inner(done: int, tot: int, desc: str) -> None:
            progress(i * steps + min(done, steps), total, f"{label(point)}: {desc}")
        out.append(fn(point, shared, progress=inner))
        progress((i + 1) * steps, total, f"{label(point)} done")

    kind, address = parse_executor(executor)
    start = 0
    if kind != "serial" and address is None and len(points) > 1:
        t0 = time.perf_counter()
        serial(0, points[0])
        start = 1
        estimate = (time.perf_counter() - t0) * (len(points) - 1)
        if estimate < SMALL_SWEEP_SECONDS:
            kind = "serial"
            if notes is not None:
                notes.append(f"executor {executor!r}: ran the {len(points)} points here; the remaining work "
                             f"(about {estimate:.1f} s) is less than starting a local {executor} pool costs")
    if kind == "serial" or len(points) - start <= 1:
        for i in range(start, len(points)):
            serial(i, points[i])
        return out
    with get_executor(executor, n_workers=n_workers) as ex:
        out += ex.map(fn, points[start:], shared=shared,
                      progress=lambda d, t, s: progress((start + d) * steps, total,
                                                        f"{start + d}/{len(points)} points"))
    return out
