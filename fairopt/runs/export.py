"""``fairopt inspect --export``: an MPS or LP file written atomically and read back before it is
kept, with the solver's banner kept off standard output."""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairopt.modeling.program import Program, ProgramSummary


def _check_export_path(path: Path) -> None:
    from fairopt.errors import ConfigError, OutputError
    if path.suffix.lower() not in (".mps", ".lp"):
        raise ConfigError(f"--export {path}: use a file name ending in .mps or .lp.")
    if path.is_dir():
        raise OutputError(f"--export {path} is a folder; give a file name ending in .mps or .lp.")


@contextlib.contextmanager
def _stdout_to_devnull() -> Iterator[None]:
    """Silence what C code writes to standard output (HiGHS prints its banner when created)."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def export_program(prog: Program, path: str | os.PathLike[str], summary: ProgramSummary | None = None) -> Path:
    """Write ``prog`` to an MPS or LP file atomically, after checking the file HiGHS wrote.

    The file is written to a temporary name in the target's folder, read back (it must end with
    the format's end marker and hold the program's numbers of columns and rows) and only then
    renamed: a folder, a short write or a failed export is an :class:`~fairopt.errors.OutputError`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fairopt.runs.export import export_program
    >>> from fairopt.modeling import Program
    >>> prog = Program("tiny")
    >>> _ = prog.add_variables("x", (2,), lb=0)
    >>> prog.set_objective(linear={"x": [1.0, 2.0]})
    >>> _ = prog.add_constraints("total", {"x": [[1.0, 1.0]]}, lb=1.0)
    >>> export_program(prog, pathlib.Path(tempfile.mkdtemp()) / "tiny.lp").suffix
    '.lp'
    """
    from fairopt.runs.files import atomic_path
    path = Path(path)
    _check_export_path(path)
    summary = summary if summary is not None else prog.summary()

    def verify(tmp: Path) -> None:
        _verify_export(tmp, path, summary)

    with atomic_path(path, verify=verify) as tmp, _stdout_to_devnull():
        prog.write(tmp)
    return path


def _verify_export(tmp: Path, path: Path, summary: ProgramSummary) -> None:
    from fairopt.errors import OutputError
    marker = b"ENDATA" if path.suffix.lower() == ".mps" else b"end"
    with open(tmp, "rb") as fh:
        fh.seek(max(0, tmp.stat().st_size - 64))
        tail = fh.read().rstrip()
    if not tail.endswith(marker):
        raise OutputError(f"could not write {path}: the exported file is cut short ({tmp.stat().st_size} bytes, "
                          f"no {marker.decode()} line; disk full or a file-size limit?); nothing was written.")
    import highspy
    with _stdout_to_devnull():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        status = h.readModel(str(tmp))
    lp = h.getLp()
    if status == highspy.HighsStatus.kError or (lp.num_col_, lp.num_row_) != (summary.n_variables,
                                                                              summary.n_constraints):
        raise OutputError(f"could not write {path}: reading the exported file back gives {lp.num_col_} columns "
                          f"and {lp.num_row_} rows, not {summary.n_variables} and {summary.n_constraints}; "
                          "nothing was written.")
