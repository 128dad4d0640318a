"""What the readers share: option parsing, opening files, and a block-wise CSV reader that keeps
physical line numbers right for error messages.

CSV data rows are read in blocks of `chunk_samples` lines. A block is parsed with numpy's C
tokenizer (`np.loadtxt`); only when that fails (or the field count of the block is off) are the
block's lines scanned one by one, to name the exact line, column and cell in the TraceError.
Every number read must be finite: `nan`, `inf` and numbers too large for a float64 (`1e400`) are
errors naming their line, column and cell.
"""
from __future__ import annotations

import csv
import math
import re
from itertools import islice
from pathlib import Path

import numpy as np

from ..trace import MARKER_X, TraceError

DEFAULT_CSV_CHUNK = 1 << 18
MAX_LINE = 1 << 16          # a header line longer than this is not one
_NUMBER = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|infinity)\Z", re.IGNORECASE)


# ---------------------------------------------------------------------------------------- options

def opt_int(options: dict, name: str, default=None, *, lo=None, hi=None):
    value = options.get(name, default)
    if value is None:
        return None
    try:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError
        value = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"option {name}: expected an integer, got {value!r}") from None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"option {name}: expected an integer in [{lo}, {hi}], got {value}")
    return value


def opt_float(options: dict, name: str, default=None, *, positive=False):
    value = options.get(name, default)
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"option {name}: expected a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"option {name}: expected a finite number, got {value}")
    if positive and not value > 0:
        raise ValueError(f"option {name}: expected a number > 0, got {value}")
    return value


def opt_str(options: dict, name: str, default=None):
    value = options.get(name, default)
    return None if value is None else str(value)


def opt_supplies(options: dict, name: str) -> list[tuple[str, str]]:
    """`extra_current=NAME:COLUMN` (several separated by ';' or ',', or a list) -> [(NAME, COLUMN)]."""
    value = options.get(name)
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in items:
        for spec in str(item).replace(";", ",").split(","):
            spec = spec.strip()
            if not spec:
                continue
            supply, sep, column = spec.partition(":")
            if not sep or not supply.strip() or not column.strip():
                raise ValueError(f"option {name}: expected NAME:COLUMN, got {spec!r}")
            out.append((supply.strip(), column.strip()))
    return out


def chunk_size(options: dict, default: int) -> int:
    return opt_int(options, "chunk_samples", default, lo=1)


def check_file(path) -> Path:
    path = Path(path)
    if not path.exists():
        raise TraceError(path, None, "expected an existing trace file, found no such file")
    if not path.is_file():
        raise TraceError(path, None, "expected a regular file, found a directory or special file")
    return path


def check_text(path: Path) -> None:
    """A TraceError unless the file looks like text in UTF-8 (or ASCII): a UTF-16/32 byte-order mark,
    a NUL byte or bytes that are not UTF-8 in the first 64 KiB mean another encoding or a binary file."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                      (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16")):
        if head.startswith(bom):
            raise TraceError(path, "byte 0", f"expected a text file in UTF-8, found {name} (byte-order mark "
                                             f"{bom.hex(' ').upper()}): save or convert it as UTF-8")
    nul = head.find(b"\x00")
    if nul >= 0:
        raise TraceError(path, f"byte {nul}", "expected a text file, found a NUL byte (a binary file, or text "
                                              "in UTF-16 without a byte-order mark)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:           # not just a character cut by the 64 KiB read
            raise TraceError(path, f"byte {exc.start}", f"expected a text file in UTF-8, found byte "
                                                        f"0x{head[exc.start]:02X} (another encoding, e.g. Latin-1: "
                                                        "convert it to UTF-8, or a binary file)") from None


def read_header(path, fh, line_no: int = 1) -> str:
    """The next line of fh, at most MAX_LINE characters (a longer one is no header: binary data?)."""
    line = fh.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise TraceError(path, f"line {line_no}", f"expected a header line, found a line of more than "
                                                  f"{MAX_LINE:,} characters")
    return line


def open_text(path: Path):
    # utf-8-sig drops a byte-order mark; undecodable bytes (past the 64 KiB check_text reads) become
    # U+FFFD and surface as bad cells
    return open(path, "r", encoding="utf-8-sig", errors="replace", newline=None)


def clean(cell: str) -> str:
    return cell.strip().strip('"').strip()


def show(text: str, limit: int = 60) -> str:
    text = text.rstrip("\r\n")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def show_names(names: list[str], limit: int = 16) -> str:
    """Column or trace names for a message: each cut to 40 characters, at most `limit` of them."""
    shown = ", ".join(show(n, 40) for n in names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


# ------------------------------------------------------------------------------------ CSV blocks

class CsvBlock:
    """A block of data lines of one CSV table, with the physical line number of every row."""

    def __init__(self, table: "CsvTable", lines: list[str], first_line: int, line_numbers=None):
        self.table, self.lines, self.first_line = table, lines, first_line
        self.line_numbers = line_numbers          # None: consecutive from first_line

    def __len__(self):
        return len(self.lines)

    def line_of(self, i: int) -> int:
        return self.first_line + i if self.line_numbers is None else int(self.line_numbers[i])

    def chunk_lines(self):
        """(line0, lines) as Chunk expects them."""
        if self.line_numbers is None:
            return self.first_line, None
        return int(self.line_numbers[0]) if len(self.line_numbers) else self.first_line, \
            np.asarray(self.line_numbers, dtype=np.int64)

    def floats(self, cols: list[int]) -> np.ndarray:
        """The columns `cols` as float64, shape (rows, len(cols)); every value finite."""
        values = self._parse(cols)
        finite = np.isfinite(values)
        if not finite.all():
            i, j = np.argwhere(~finite)[0]
            cells = self.lines[i].rstrip("\r\n").split(self.table.delimiter)
            raise TraceError(self.table.path, f"line {self.line_of(int(i))}",
                             f"expected a finite number in column {self.table.columns[cols[j]]!r}, "
                             f"found {clean(cells[cols[j]])!r}")
        return values

    def _parse(self, cols: list[int]) -> np.ndarray:
        t = self.table
        try:
            return np.loadtxt(self.lines, delimiter=t.delimiter, usecols=cols, dtype=np.float64,
                              comments=None, ndmin=2)
        except ValueError:
            pass
        try:                                # quoted numbers ("1.5") are fine too, only slower
            return np.loadtxt(self.lines, delimiter=t.delimiter, usecols=cols, dtype=np.float64,
                              comments=None, ndmin=2, quotechar='"')
        except ValueError as exc:
            self._locate_bad_number(cols)
            raise TraceError(t.path, f"line {self.first_line}",
                             f"expected numbers in columns {', '.join(repr(t.columns[c]) for c in cols)} "
                             f"(lines {self.first_line}-{self.line_of(len(self) - 1)}): "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None

    def strings(self, col: int, width: int = 16) -> np.ndarray:
        """Column `col` as a fixed-width string array (dtype U{width}: longer cells are cut)."""
        t = self.table
        try:
            return np.loadtxt(self.lines, delimiter=t.delimiter, usecols=(col,), dtype=f"U{width}",
                              comments=None, ndmin=1)
        except ValueError as exc:
            raise TraceError(t.path, f"line {self.first_line}",
                             f"expected text cells in column {t.columns[col]!r} (lines {self.first_line}-"
                             f"{self.line_of(len(self) - 1)}), found cells numpy cannot read: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None

    def digital(self, col: int) -> np.ndarray:
        """Column `col` as digital marker states (digital_cells)."""
        return digital_cells(self.strings(col))

    def _locate_bad_number(self, cols):
        t = self.table
        for i, line in enumerate(self.lines):
            cells = line.rstrip("\r\n").split(t.delimiter)
            for c in cols:
                cell = clean(cells[c]) if c < len(cells) else ""
                if not _NUMBER.match(cell):
                    raise TraceError(t.path, f"line {self.line_of(i)}",
                                     f"expected a number in column {t.columns[c]!r}, found {cell!r}")


class CsvTable:
    """The data rows below a header line, read in blocks.

    `fh` is positioned just after the header line (line number `header_line`); every data line must
    have exactly len(columns) fields. Empty lines are skipped (their line numbers are kept right).
    """

    def __init__(self, path, fh, header_line: int, columns: list[str], delimiter: str, block_rows: int):
        self.path, self.fh, self.header_line = str(path), fh, header_line
        self.columns, self.delimiter, self.block_rows = columns, delimiter, block_rows
        self.ended_without_newline = False

    def mark_truncated(self, chunk, path) -> None:
        """The warning of a file whose last line has no terminator (known once the last block
        was read), on the chunk read from it."""
        if self.ended_without_newline:
            chunk.warnings.append(f"{path}: the last line has no line terminator: the file may be truncated")

    def blocks(self):
        next_line = self.header_line + 1
        while True:
            lines = list(islice(self.fh, self.block_rows))
            if not lines:
                return
            block = self.block(lines, next_line)
            next_line += len(lines)
            if block is not None:
                yield block

    def block(self, lines: list[str], first: int) -> "CsvBlock | None":
        """The CsvBlock of `lines` (the first is line `first`), None when all are empty; a TraceError
        at the first line with the wrong number of fields."""
        want = len(self.columns) - 1
        if not lines[-1].endswith("\n"):
            self.ended_without_newline = True
        if "".join(lines).count(self.delimiter) == want * len(lines):
            return CsvBlock(self, lines, first)
        # slow path: find the bad line, or drop empty lines keeping the line numbers
        kept, numbers = [], []
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            n = line.count(self.delimiter)
            if n != want:
                self.bad_fields(first + i, line, n + 1, is_last=(i == len(lines) - 1))
            kept.append(line)
            numbers.append(first + i)
        return CsvBlock(self, kept, first, np.asarray(numbers, dtype=np.int64)) if kept else None

    def bad_fields(self, line_no: int, line: str, found: int, is_last: bool):
        hint = ""
        if is_last and not line.endswith("\n"):
            hint = " (the file ends inside this row: truncated?)"
        raise TraceError(self.path, f"line {line_no}",
                         f"expected {len(self.columns)} fields ({self.delimiter.join(self.columns)}), "
                         f"found {found}: {show(line)}{hint}")


def split_header(path, line: str, delimiter: str, line_no: int = 1) -> list[str]:
    try:
        return [c.strip() for c in next(csv.reader([line.rstrip("\r\n")], delimiter=delimiter))]
    except (csv.Error, StopIteration) as exc:
        raise TraceError(path, f"line {line_no}", f"expected a header row of column names, found {show(line)} "
                                                  f"({exc or 'no cells'})") from None


def find_column(path, line_no: int, columns: list[str], name, what: str) -> int:
    """Index of column `name` (exact, then case-insensitive; else an int is a 0-based column number),
    or a TraceError naming the columns found."""
    text = str(name).strip()
    if text in columns:
        return columns.index(text)
    low = [c.lower() for c in columns]
    if text.lower() in low:
        return low.index(text.lower())
    if isinstance(name, int) and not isinstance(name, bool) and 0 <= name < len(columns):
        return name
    name = text
    raise TraceError(path, f"line {line_no}", f"expected a column {name!r} ({what}) in the header, "
                                               f"found columns: {show_names(columns)}")


_LOW = ("0", "0.0", "L", "l", "low", "LOW", "false", "False")
_HIGH = ("1", "1.0", "H", "h", "high", "HIGH", "true", "True")


def digital_cells(cells: np.ndarray) -> np.ndarray:
    """'0'/'1' (also '0.0'/'1.0', 'L'/'H', quoted or padded) -> 0/1; anything else ('X', '-', '') -> MARKER_X."""
    n = len(cells)
    out = np.full(n, MARKER_X, dtype=np.uint8)
    if n == 0:
        return out
    codes = np.ascontiguousarray(cells).view(np.uint32).reshape(n, -1)
    single = codes[:, 1] == 0 if codes.shape[1] > 1 else np.ones(n, dtype=bool)
    out[single & (codes[:, 0] == ord("0"))] = 0
    out[single & (codes[:, 0] == ord("1"))] = 1
    rest = np.flatnonzero(out == MARKER_X)          # the rare other spellings: compare as text
    if len(rest):
        other = np.char.strip(np.char.strip(cells[rest]), '"')
        out[rest[np.isin(other, _LOW)]] = 0
        out[rest[np.isin(other, _HIGH)]] = 1
    return out


def uniform_or_times(t: np.ndarray, dt: float | None):
    """(t0, dt, None) when the times t are t[0] + i*dt within 0.1 % of dt, else (t[0], None, t)."""
    if dt and len(t):
        ideal = t[0] + dt * np.arange(len(t), dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.max(np.abs(t - ideal)) <= 1e-3 * dt:
                return float(t[0]), dt, None
    return (float(t[0]) if len(t) else 0.0), None, t


def estimate_period(t: np.ndarray) -> float | None:
    """The sample period when the times t are uniform (within 0.1 %), else None."""
    if len(t) < 2:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.diff(t)
        dt = float((t[-1] - t[0]) / (len(t) - 1))
        if math.isfinite(dt) and dt > 0 and np.max(np.abs(d - dt)) <= 1e-3 * dt:
            return dt
    return None


def peek_times(path, fh_factory, skip_lines: int, time_col: int, delimiter: str, scale: float,
               rows: int = 1000) -> np.ndarray:
    """The first `rows` time stamps (seconds), for the trace's nominal sample period; the first bad
    row ends them (the streaming pass reports it with its line)."""
    out = []
    with fh_factory() as fh:
        for line in islice(fh, skip_lines, skip_lines + rows):
            cells = line.rstrip("\r\n").split(delimiter)
            try:
                value = float(clean(cells[time_col])) * scale
            except (ValueError, IndexError):
                break
            if not math.isfinite(value):
                break
            out.append(value)
    return np.asarray(out, dtype=np.float64)


class TimeOrder:
    """Checks that time stamps strictly increase, across chunks; names the line where one does not
    (a repeated time stamp is a duplicated row, or a clock too coarse for the sample rate)."""

    def __init__(self, path):
        self.path, self.last = path, None

    def check(self, t: np.ndarray, block: "CsvBlock", unit_scale: float = 1.0):
        if not len(t):
            return
        prev = np.concatenate([[t[0] if self.last is None else self.last], t[:-1]])
        back = np.flatnonzero(t <= prev)
        back = back[back > 0] if self.last is None else back
        if len(back):
            i = int(back[0])
            now, before = float(t[i] / unit_scale), float(prev[i] / unit_scale)
            found = (f"found {now:.9g} twice in a row (a repeated row?)" if t[i] == prev[i] else
                     f"found {now:.9g} after {before:.9g}")
            raise TraceError(self.path, f"line {block.line_of(i)}",
                             f"expected time stamps in increasing order, {found}")
        self.last = t[-1]
