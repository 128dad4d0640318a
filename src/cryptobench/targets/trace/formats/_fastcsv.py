"""The fast path of the CSV readers: data rows parsed by pyarrow's C++ CSV parser, in blocks of
exactly the rows the line-by-line reader (_common.CsvTable) would take, so that both see the same
blocks and every error names the same line.

The file is read as bytes, cut at line ends into blocks of `block_rows` lines, and a block goes to
pyarrow only when cheap byte checks say it is plain: no quotes, blanks (spaces, tabs), lone CR line
ends or a byte-order mark at its start. pyarrow parses the wanted columns with explicit types and no
null spellings (an empty line or cell, a row of other than len(columns) fields, is an error to it);
a block it rejects, or one with a value that is not finite, or text cells that are not plain ASCII
of one length, is handed to the line-by-line reader (CsvTable.block), which accepts what it always
accepted and raises the TraceError it always raised. A lone CR (old Mac line ends, which text mode
reads as line breaks) switches the rest of the file to the line-by-line reader, as the byte cut
would count its lines wrong.

Speed (issue 31: >= 10 M rows/s; bench/trace_speed --only csv): pyarrow's parse is most of the
work, so it runs in a worker thread on the next block while the caller works on this one; reads
go into fresh buffers (one copy of the file's bytes), line ends are counted by numpy, and text
columns come as bytes (no UTF-8 check: what is not plain ASCII goes to the line reader anyway).

Without pyarrow (an optional extra), `open_table` gives the line-by-line reader alone: same
results, slower.
"""
from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from ._common import CsvBlock, CsvTable, digital_cells, open_text

try:                                    # the 'parquet' extra
    import pyarrow as pa
    import pyarrow.csv as pacsv
except ImportError:                     # pragma: no cover - exercised where pyarrow is absent
    pa = pacsv = None

READ_BYTES = 16 << 20                   # bytes read at a time: memory stays bounded by a few of these
BLOCK_BYTES = 1 << 20                   # pyarrow's unit of work within a block (its threads split on these)
_NL, _CR, _QUOTE = b"\n", b"\r", b'"'


@contextmanager
def open_table(path, header_line: int, columns: list[str], delimiter: str, block_rows: int,
               numeric: list[int], text: list[int] = ()):
    """A table of the data rows below line `header_line`, whose blocks offer floats(cols in numeric)
    and strings(col in text): the fast reader when pyarrow is there, else CsvTable."""
    if pa is None or delimiter in " \r\n\"" or not delimiter.isascii():     # pyarrow splits on one byte
        with open_text(path) as fh:
            for _ in range(header_line):
                fh.readline()
            yield CsvTable(path, fh, header_line, columns, delimiter, block_rows)
        return
    with open(path, "rb") as raw:
        yield FastCsvTable(path, raw, header_line, columns, delimiter, block_rows, numeric, text)


class FastCsvTable(CsvTable):
    """CsvTable's blocks, read as bytes and parsed by pyarrow where plain (see the module's doc)."""

    def __init__(self, path, raw, header_line, columns, delimiter, block_rows, numeric, text):
        super().__init__(path, None, header_line, columns, delimiter, block_rows)
        self.raw, self.numeric, self.text = raw, sorted(set(numeric)), sorted(set(text))

    def blocks(self):
        """The blocks in order; pyarrow parses the next plain block in a worker thread while the
        caller works on this one (pyarrow lets go of the GIL: on two cores the parse and the
        caller's numpy work overlap). At most two blocks' bytes are held: memory stays bounded."""
        if not self._skip_header():
            yield from self._slow_from(0, self.header_line + 1)
            return
        next_line, pending = self.header_line + 1, None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="cryptobench-csv") as pool:
            for data, n_lines, offset, unterminated in self._byte_blocks():
                if data.has(_CR) and data.count(_CR) != data.count(b"\r\n"):
                    if pending is not None:
                        yield from self._finish(*pending)
                    yield from self._slow_from(offset, next_line)
                    return
                parsed = pool.submit(self._parse, data, n_lines) if self._plain(data) else None
                if pending is not None:
                    yield from self._finish(*pending)
                pending = (data, n_lines, next_line, unterminated, parsed)
                next_line += n_lines
            if pending is not None:
                yield from self._finish(*pending)

    def _finish(self, data: "Span", n_lines: int, first: int, unterminated: bool, parsed):
        """The block of lines `first`.. once its parse is done: a FastBlock of pyarrow's table, or
        the line reader's block where pyarrow refused it (which raises the line reader's error)."""
        table = parsed.result() if parsed is not None else None
        if unterminated:                # known now, not when the bytes were read: the warning's chunk
            self.ended_without_newline = True
        if table is None:
            block = self.block(_text_lines(data), first)
        else:
            block = FastBlock(self, data, first, n_lines, {c: table.column(f"c{c}") for c in types_of(self)})
        if block is not None:
            yield block

    def _skip_header(self) -> bool:
        """Past the header lines in bytes; False when they do not end in LF (CR-only line ends)."""
        for _ in range(self.header_line):
            line = self.raw.readline((1 << 17) + 2)
            if not line.endswith(_NL) or line.count(_CR) != line.count(b"\r\n"):
                return False
        return True

    def _slow_from(self, offset: int, first_line: int):
        """The line-by-line reader from byte `offset` (a line start) to the end."""
        self.raw.seek(offset)
        fh = io.TextIOWrapper(self.raw, encoding="utf-8-sig" if offset == 0 else "utf-8",
                              errors="replace", newline=None)
        if offset == 0:
            for _ in range(self.header_line):
                fh.readline()
        self.fh = fh
        self.header_line = first_line - 1
        yield from CsvTable.blocks(self)

    def _byte_blocks(self):
        """(Span, lines, byte offset, ends without a line terminator) of consecutive blocks of
        block_rows lines (the last may be shorter, and may end without a line terminator). Reads
        grow with what is held, so a file with very long lines is read in linear time."""
        rows, offset, left, avg = self.block_rows, self.raw.tell(), b"", 32.0
        while True:
            buf = self._read_after(left, max(READ_BYTES, len(left), int(rows * avg * 1.5)))
            eof = len(buf) == len(left)
            start = 0
            while True:
                end = _after_lines(buf, start, rows, avg)
                if end < 0:
                    break
                avg = (end - start) / rows
                yield Span(buf, start, end), rows, offset + start, False
                start = end
            if eof:
                if start < len(buf):
                    unterminated = not buf.endswith(_NL)
                    yield Span(buf, start, len(buf)), buf.count(_NL, start) + unterminated, offset + start, unterminated
                return
            left, offset = memoryview(buf)[start:], offset + start

    def _read_after(self, left, size: int) -> bytearray:
        """A new buffer: the unfinished block's bytes `left`, then up to `size` bytes of the file,
        read into place (no second copy of what was read; blocks yielded before keep their own
        buffer, which is never written again)."""
        buf = bytearray(len(left) + size)
        buf[:len(left)] = left
        filled = len(left)
        with memoryview(buf) as view:
            while filled < len(buf):
                got = self.raw.readinto(view[filled:])
                if not got:
                    break
                filled += got
        del buf[filled:]
        return buf

    def _plain(self, data: "Span") -> bool:
        """Whether the block may go to pyarrow: no quotes, no blanks (spaces; tabs unless the
        delimiter), no byte-order mark at its start (pyarrow would skip it, where the line reader
        finds a bad cell). The field count of every line pyarrow checks itself (a row of other than
        len(columns) fields, an empty line among them, is an error to it)."""
        return not (data.has(_QUOTE) or data.has(b" ") or (self.delimiter != "\t" and data.has(b"\t"))
                    or data.startswith(b"\xef\xbb\xbf"))

    def _parse(self, data: "Span", n_lines: int):
        """pyarrow's table of the block's wanted columns (named c0, c1, ...), or None where it
        refuses the block or reads other than n_lines rows or a null. Runs in the worker thread."""
        names = [f"c{i}" for i in range(len(self.columns))]
        types = {names[c]: pa.float64() for c in self.numeric}
        # text as bytes: no UTF-8 check (cells that are not plain ASCII go to the line reader anyway)
        types.update({names[c]: pa.binary() for c in self.text})
        try:
            table = pacsv.read_csv(
                pa.py_buffer(data.view()),
                read_options=pacsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter, quote_char=False, escape_char=False,
                                                 newlines_in_values=False, ignore_empty_lines=False),
                convert_options=pacsv.ConvertOptions(column_types=types, include_columns=list(types),
                                                     null_values=[], true_values=[], false_values=[],
                                                     strings_can_be_null=False, quoted_strings_can_be_null=False))
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return None                     # whatever pyarrow refuses, the line reader judges
        if table.num_rows != n_lines or any(col.null_count for col in table.columns):
            return None
        return table


def types_of(table: FastCsvTable) -> list[int]:
    return sorted(set(table.numeric) | set(table.text))


class Span:
    """Bytes start:end of a read buffer, without copying them."""

    def __init__(self, buf: bytes, start: int, end: int):
        self.buf, self.start, self.end = buf, start, end

    def count(self, sub: bytes) -> int:
        return self.buf.count(sub, self.start, self.end)

    def has(self, sub: bytes) -> bool:
        return self.buf.find(sub, self.start, self.end) >= 0

    def startswith(self, sub: bytes) -> bool:
        return self.buf.startswith(sub, self.start, self.end)

    def view(self) -> memoryview:
        return memoryview(self.buf)[self.start:self.end]


def _after_lines(buf: bytes, start: int, n: int, avg: float) -> int:
    """The offset just after the n-th line end from `start`, or -1 when buf holds fewer: counted up
    to a guess (n lines of `avg` bytes), then corrected line by line, or by numpy when far off."""
    guess = min(len(buf), start + int(n * avg))
    c = _count_nl(buf, start, guess)
    if c >= n and c - n <= 64:
        p = guess
        for _ in range(c - n + 1):
            p = buf.rfind(_NL, start, p)
        return p + 1
    if c < n and n - c <= 64:
        p = guess
        for _ in range(n - c):
            p = buf.find(_NL, p)
            if p < 0:
                return -1
            p += 1
        return p
    lo, hi = (start, guess) if c >= n else (guess, len(buf))
    ends = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8, count=hi - lo, offset=lo) == 10)
    k = n - 1 if c >= n else n - c - 1
    return lo + int(ends[k]) + 1 if k < len(ends) else -1


def _count_nl(buf, lo: int, hi: int) -> int:
    """Line ends in buf[lo:hi]: numpy's byte compare runs twice as fast as bytes.count."""
    return int(np.count_nonzero(np.frombuffer(buf, dtype=np.uint8, count=hi - lo, offset=lo) == 10)) if hi > lo else 0


def _text_lines(data: Span) -> list[str]:
    """The block's lines as text mode reads them (UTF-8, bad bytes replaced, universal line ends)."""
    text = data.buf[data.start:data.end].decode("utf-8", errors="replace")
    return list(io.StringIO(text, newline=None))


class FastBlock:
    """A block parsed by pyarrow: consecutive lines from `first_line`, the CsvBlock interface; anything
    it does not accept at once goes to the CsvBlock of the same lines (the same answer or error)."""

    def __init__(self, table: FastCsvTable, data: Span, first_line: int, n: int, columns: dict):
        self.table, self.data, self.first_line, self.n, self.columns = table, data, first_line, n, columns
        self._slow = None

    def __len__(self):
        return self.n

    def line_of(self, i: int) -> int:
        return self.first_line + i

    def chunk_lines(self):
        return self.first_line, None

    def slow(self) -> CsvBlock:
        if self._slow is None:
            self._slow = self.table.block(_text_lines(self.data), self.first_line)
        return self._slow

    def floats(self, cols: list[int]) -> np.ndarray:
        # column-major, returned as its (rows, cols) transpose: each column is copied in one
        # contiguous run, and values[:, j] is a contiguous array for the caller
        by_col = np.empty((len(cols), self.n), dtype=np.float64)
        for j, c in enumerate(cols):
            row = 0
            for part in self.columns[c].chunks:     # the value buffers themselves: to_numpy imports pandas
                by_col[j, row:row + len(part)] = np.frombuffer(part.buffers()[1], dtype=np.float64,
                                                               count=len(part), offset=part.offset * 8)
                row += len(part)
        values = by_col.T
        with np.errstate(invalid="ignore", over="ignore"):
            finite = np.isfinite(np.add.reduce(values, axis=None))
        if not finite and not np.isfinite(values).all():
            return self.slow().floats(cols)          # raises, naming the line, column and cell
        return values

    def strings(self, col: int, width: int = 16) -> np.ndarray:
        """As CsvBlock.strings, built from the bytes when every cell is ASCII of one length <= width."""
        body = self.ascii_cells(col, width)
        if body is None:
            return self.slow().strings(col, width)
        # widen the ASCII bytes to UCS-4 in place of a U array: no per-cell conversion
        cells = np.zeros((self.n, width), dtype=np.uint32)
        cells[:, :body.shape[1]] = body
        return cells.view(f"U{width}").reshape(self.n)

    def digital(self, col: int) -> np.ndarray:
        """As CsvBlock.digital; one-character cells (the usual 0 and 1) by table look-up."""
        body = self.ascii_cells(col, 1)
        return self.slow().digital(col) if body is None else _DIGITAL[body[:, 0]]

    def ascii_cells(self, col: int, width: int):
        """The cells of text column `col` as uint8 (rows, size) when all are ASCII of one length
        1..width, else None."""
        column = self.columns[col]
        arr = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1, offset=arr.offset * 4)
        lengths = np.diff(offsets)
        size = int(lengths[0]) if len(lengths) else 0
        if not len(lengths) or size == 0 or size > width or np.any(lengths != size):
            return None
        body = np.frombuffer(arr.buffers()[2], dtype=np.uint8, count=int(offsets[-1] - offsets[0]),
                             offset=int(offsets[0]))
        return None if np.any(body >= 128) else body.reshape(self.n, size)


# the marker state of every one-character cell, as digital_cells reads it (built by it: the same answer)
_DIGITAL = digital_cells(np.array([chr(i) for i in range(128)], dtype="U16"))
