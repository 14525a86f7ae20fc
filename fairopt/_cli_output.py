"""Console output of the command line: tables whose numbers keep differences visible, and output
that survives a closed pipe (``fairopt run CARD | head -1``) without stopping the command."""
from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def escape(text: str) -> str:
    """Show ``[...]`` in messages (constraint names such as ``rows[group]``) as text, not markup."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)


#: set once standard output is found closed (`| head -1`, `| true`) or unwritable (a full device):
#: later output is discarded, the command goes on; ``failed`` holds the reason for the latter
_PIPE: dict[str, Any] = {"closed": False, "failed": None}


def _silence(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null: the reader left, the command goes on."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    if fd == 1:
        _PIPE["closed"] = True


def _lost(stream: TextIO, exc: OSError) -> None:
    """``stream`` cannot take output: a closed pipe is normal, anything else (a full device) is
    remembered so the command can report it once it has finished its work."""
    if not isinstance(exc, BrokenPipeError) and stream is sys.stdout and _PIPE["failed"] is None:
        _PIPE["failed"] = exc.strerror or str(exc)
    _silence(stream)


class _SafeStream:
    """A text stream whose write failures silence it instead of raising (see :func:`_lost`)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is sys.stdout and _PIPE["closed"]:
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as exc:
            _lost(self._stream, exc)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            _lost(self._stream, exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout

    class _Console(Console):
        # rich's default exits with status 1 on a closed pipe, before anything is computed
        def on_broken_pipe(self) -> None:
            self.quiet = True
            _silence(stream)

    safe = cast(IO[str], _SafeStream(stream))   # a text stream by delegation
    console = _Console(file=safe, highlight=False)
    if not console.is_terminal:  # files and pipes: do not squeeze tables into 80 columns
        console = _Console(file=safe, highlight=False, width=140)
    return console


def _echo(text: str) -> None:
    """Plain text on standard output; a closed pipe silences it instead of stopping the command."""
    stream = _SafeStream(sys.stdout)
    stream.write(text + "\n")
    stream.flush()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None
    if isinstance(value, (int, float)) or hasattr(value, "dtype"):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    return None


def _fmt(value: object, digits: int = 4) -> str:
    """A number to at least ``digits`` significant digits, in plain notation from 1e-4 to 1e9 (the
    integer part is never rounded away; never ``-0``); ``None`` (an undefined value) as ``n/a``."""
    if value is None:
        return "n/a"
    x = _number(value)
    if x is None:
        return str(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e9:
        return str(int(x))
    if 1e-4 <= abs(x) < 1e9:
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
        text = f"{x:.{decimals}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
    else:
        text = f"{x:.{digits}g}"
    return "0" if text in ("-0", "0") else text


#: most significant digits a table shows
MAX_TABLE_DIGITS = 10
#: relative difference below which two values in a column are the same number (float noise)
NOISE = 1e-9


def _pair_digits(a: float, b: float) -> int:
    """Significant digits that show the difference between ``a`` and ``b`` to two digits."""
    scale, diff = max(abs(a), abs(b)), abs(b - a)
    if diff == 0 or scale == 0:
        return 4
    return math.floor(math.log10(scale)) - math.floor(math.log10(diff)) + 2


def _value_digits(values: Iterable[object]) -> dict[float, int]:
    """Significant digits of each number of one table column: at least 4, and enough that its
    difference from the nearest other value shows to two digits (57,730 and 57,606 never print
    alike), up to :data:`MAX_TABLE_DIGITS`. Values within float noise of each other (relative
    :data:`NOISE`) are one value to a reader: ``0.99999999999999967`` and ``1`` print alike."""
    xs = sorted({x for x in (_number(v) for v in values) if x is not None and math.isfinite(x)})
    reps = [x for i, x in enumerate(xs) if i == 0 or x - xs[i - 1] > NOISE * max(abs(x), abs(xs[i - 1]))]
    need = {x: 4 for x in reps}
    for a, b in itertools.pairwise(reps):
        d = min(max(4, _pair_digits(a, b)), MAX_TABLE_DIGITS)
        need[a], need[b] = max(need[a], d), max(need[b], d)
    for a, b in itertools.pairwise(reps):    # rounding can still meet: add digits until it does not
        while _fmt(a, need[a]) == _fmt(b, need[b]) and max(need[a], need[b]) < MAX_TABLE_DIGITS:
            need[a] = need[b] = max(need[a], need[b]) + 1
    digits, j = {}, 0
    for x in xs:                              # each value takes the digits of its noise cluster
        while j + 1 < len(reps) and reps[j + 1] <= x:
            j += 1
        digits[x] = need[reps[j]]
    return digits


def format_column(values: Sequence[object]) -> list[str]:
    """Cells of one table column as printed (numbers with the digits :func:`_value_digits` picks).

    Examples
    --------
    >>> from fairopt.cli import format_column
    >>> format_column([57730.4, 57606.2, None, "x"])
    ['57730', '57606', 'n/a', 'x']
    >>> format_column([0.123456, 0.123457, 0.5])
    ['0.123456', '0.123457', '0.5']
    """
    digits = _value_digits(values)
    out = []
    for v in values:
        x = _number(v)
        out.append(_fmt(v, digits.get(x, 4)) if x is not None and math.isfinite(x) else _fmt(v))
    return out


def _rich_table(title: str, columns: Sequence[object], rows: Iterable[Sequence[object]]) -> Table:
    """A compact table whose cells wrap instead of being cut (no ellipsis at any width)."""
    from rich import box
    from rich.table import Table as RichTable
    # cells and titles are data, not rich markup ("lambda[demographic_parity]" must print as is)
    table = RichTable(title=escape(str(title)), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    # a printed summary (a few rows of a report, not data rows): read it column by column
    cells = [(list(r) + [""] * len(columns))[:len(columns)] for r in rows]   # short rows padded
    by_column = list(zip(*cells, strict=True)) if cells else [() for _ in columns]
    for i, (col, column) in enumerate(zip(columns, by_column, strict=True)):
        values = [v for v in column if v is not None and v != ""]
        numeric = bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        table.add_column(escape(str(col)), justify="right" if numeric and i > 0 else "left", overflow="fold")
    shown = [[escape(text) for text in format_column(list(column))] for column in by_column]
    for row in zip(*shown, strict=True):   # rich adds rows one at a time (no bulk call)
        table.add_row(*row)
    return table


def _print_table(console: Console, title: str, columns: Sequence[object],
                 rows: Iterable[Sequence[object]]) -> None:
    console.print(_rich_table(title, columns, rows))
