"""Where benchmark files live: the user cache folder that ``fairopt data fetch`` writes to when
``$FAIROPT_DATA_HOME`` is unset, and which the loaders read after ``$FAIROPT_DATA_HOME``."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from fairopt.errors import OutputError


def user_cache_home() -> Path:
    """The user cache folder of fairopt: ``$XDG_CACHE_HOME/fairopt`` (default ``~/.cache/fairopt``)
    on Linux, ``~/Library/Caches/fairopt`` on macOS, ``%LOCALAPPDATA%\\fairopt\\Cache`` on Windows.

    Examples
    --------
    >>> user_cache_home().name in ("fairopt", "Cache")
    True
    """
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "fairopt" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "fairopt"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "fairopt"


def ensure_folder(folder: Path, what: str) -> Path:
    """Create ``folder`` (and its parents) or raise :class:`~fairopt.errors.OutputError` saying why
    (a file in the way, no permission) and what to pass instead.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> ensure_folder(Path(tempfile.mkdtemp()) / "raw", "the raw-file cache").name
    'raw'
    """
    blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise OutputError(f"{what} {folder} cannot be created: {blocker} is a file, not a folder. Remove or rename "
                          "that file, or choose another folder (--dest / --cache, or FAIROPT_DATA_HOME).")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{what} {folder} cannot be created ({type(exc).__name__}: {exc.strerror or exc}); "
                          "choose a folder you can write to (--dest / --cache, or FAIROPT_DATA_HOME).") from exc
    return folder
