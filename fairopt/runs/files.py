"""Output files written atomically, and output folders checked before any work is done.

Every file the command line writes (``result.json``, sweep records, ``sweep.json``, the frontier's
CSV/JSON/PNG, ``inspect --export``) goes through :func:`atomic_path`: the writer fills a temporary
file in the same folder, which is flushed, synced and renamed over the target only when it is
complete. A failed or short write (disk full, a file-size limit, an interrupt) removes the
temporary file, keeps the previous file, and raises :class:`~fairopt.errors.OutputError`.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeAlias

from fairopt.errors import OutputError

#: a file-system path as the functions here accept it
_PathArg: TypeAlias = "str | os.PathLike[str]"

__all__ = ["atomic_path", "check_out_dir", "prepare_out_dir", "read_json", "remove_empty_dirs",
           "write_bytes_atomic", "write_json_atomic"]

_REASONS = {errno.ENOSPC: "the disk is full", errno.EFBIG: "the file-size limit was reached",
            errno.EDQUOT: "the disk quota is exceeded", errno.ENAMETOOLONG: "the path is too long for the file system",
            errno.EACCES: "permission denied", errno.EROFS: "the file system is read-only",
            errno.EISDIR: "it is a folder", errno.ENOTDIR: "a part of the path is a file, not a folder"}


def _reason(exc: OSError) -> str:
    known = _REASONS.get(exc.errno) if exc.errno is not None else None
    return known or exc.strerror or str(exc)


def _check_target(path: Path) -> None:
    try:
        _check_target_kind(path)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)[:80]}: {_reason(exc)}.") from None


def _check_target_kind(path: Path) -> None:
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder; give a file name.")
    if path.is_symlink() and not path.exists():
        raise OutputError(f"cannot write {path}: it is a symbolic link to a missing file "
                          f"({os.readlink(path)}); remove it or choose another path.")


@contextlib.contextmanager
def atomic_path(path: _PathArg, verify: Callable[[Path], None] | None = None,
                make_parents: bool = True) -> Iterator[Path]:
    """A temporary path in ``path``'s folder (same extension) to write; renamed over ``path`` on success.

    The writer inside the ``with`` block must fill the yielded path. On leaving it, the file is
    synced to disk, checked by ``verify`` (which raises :class:`OutputError` or ``OSError`` for a
    bad file) and renamed over ``path``; if anything fails (or the block raises, including on
    Ctrl-C) the temporary file is removed and ``path`` keeps its previous content.

    Yields
    ------
    pathlib.Path
        The temporary file to write, in ``path``'s folder.

    Raises
    ------
    OutputError
        The file could not be written, or ``verify`` refused it; the message names ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.files import atomic_path
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("hello")
    >>> target.read_text()
    'hello'
    """
    path = Path(path)
    _check_target(path)
    if make_parents:
        prepare_out_dir(path.parent)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp{path.suffix}")
    existed = path.exists()
    kept = "the previous file is kept" if existed else "nothing was written"
    try:
        yield tmp
        if not tmp.is_file():
            raise OutputError(f"could not write {path}: the writer produced no file; {kept}.")
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        if verify is not None:
            verify(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"could not write {path}: {_reason(exc)}; {kept}.") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_bytes_atomic(path: _PathArg, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`); checks the size written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.files import write_bytes_atomic
    >>> p = write_bytes_atomic(pathlib.Path(tempfile.mkdtemp()) / "x.txt", "abc")
    >>> p.read_text()
    'abc'
    """
    data = data.encode() if isinstance(data, str) else bytes(data)

    def size_ok(tmp: Path) -> None:
        if tmp.stat().st_size != len(data):
            raise OutputError(f"could not write {path}: only {tmp.stat().st_size} of {len(data)} bytes "
                              "reached the disk.")

    with atomic_path(path, verify=size_ok) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
    return Path(path)


def write_json_atomic(path: _PathArg, obj: Any) -> Path:
    """Write ``obj`` as indented JSON (NaN/inf as ``null``) to ``path`` atomically.

    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> from fairopt.runs.files import write_json_atomic
    >>> p = write_json_atomic(pathlib.Path(tempfile.mkdtemp()) / "r.json", {"a": float("nan")})
    >>> json.loads(p.read_text())
    {'a': None}
    """
    from fairopt.runs.execute import json_safe
    return write_bytes_atomic(path, json.dumps(json_safe(obj), indent=2, allow_nan=False) + "\n")


def read_json(path: _PathArg) -> Any:
    """The JSON value at ``path``, or ``None`` if the file is missing or not valid JSON.

    Examples
    --------
    >>> from fairopt.runs.files import read_json
    >>> read_json("/nonexistent/file.json") is None
    True
    """
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def check_out_dir(path: _PathArg) -> None:
    """Refuse an output folder that cannot be one, before any work is done.

    A regular file, a path under a regular file, a dangling symbolic link, a name too long for the
    file system or a folder that cannot be written is an :class:`OutputError` naming the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.files import check_out_dir
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "file"
    >>> _ = f.write_text("x")
    >>> try:
    ...     check_out_dir(f)
    ... except Exception as exc:
    ...     print(type(exc).__name__)
    OutputError
    """
    path = Path(path)
    try:
        _check_out_dir(path)
    except OutputError:
        raise
    except OSError as exc:              # e.g. a name too long to even look up
        raise OutputError(f"output folder {str(path)[:80]}...: {_reason(exc)}; give another --out.") from None


def _check_out_dir(path: Path) -> None:
    try:
        name_max = os.pathconf(next((p for p in path.parents if p.exists()), Path(".")), "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    too_long = [part for part in path.parts if len(os.fsencode(part)) > name_max]
    if too_long:
        raise OutputError(f"output folder {str(path)[:80]}...: the name {too_long[0][:40]}... is "
                          f"{len(os.fsencode(too_long[0]))} bytes, longer than the file system's "
                          f"{name_max}; give a shorter --out.")
    if path.is_symlink() and not path.exists():
        raise OutputError(f"output folder {path} is a symbolic link to a missing target ({os.readlink(path)}); "
                          "create the target or give another --out.")
    if path.exists() and not path.is_dir():
        raise OutputError(f"output folder {path} is a file, not a folder; give another --out.")
    for parent in path.parents:
        if parent.is_symlink() and not parent.exists():
            raise OutputError(f"output folder {path} lies under {parent}, a symbolic link to a missing target; "
                              "give another --out.")
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"output folder {path} lies under {parent}, which is a file; give another --out.")
            break


def prepare_out_dir(path: _PathArg) -> list[Path]:
    """:func:`check_out_dir`, then create the folder; returns the folders created (outermost first),
    so that a run interrupted before writing can remove them (:func:`remove_empty_dirs`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.files import prepare_out_dir
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in prepare_out_dir(root / "a" / "b")]
    ['a', 'b']
    """
    path = Path(path)
    check_out_dir(path)
    missing = [p for p in [path, *path.parents] if not p.exists()][::-1]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder {path}: {_reason(exc)}; give another --out.") from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write in the output folder {path}: permission denied; give another --out.")
    return missing


def remove_empty_dirs(created: list[Path]) -> None:
    """Remove the folders :func:`prepare_out_dir` created, innermost first, if still empty.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.files import prepare_out_dir, remove_empty_dirs
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> remove_empty_dirs(prepare_out_dir(root / "a"))
    >>> (root / "a").exists()
    False
    """
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()
