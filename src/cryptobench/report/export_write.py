"""The export's table written as it is made (`cryptobench export`, export.py): rows come in one at a
time (export_rows, straight from the store) and go out a batch at a time, so an export of 100 k
cells holds one batch, never the table. Each writer takes a binary file (files.atomic_file, or
stdout's buffer) and returns how many rows it wrote; `progress(rows)` is called after each batch."""
from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator

from .export import _arrow_schema, csv_cells, export_table, require_parquet
from ..core.printable import printable_json
from ..core.table import Csv

BATCH_ROWS = 2000               # rows turned into text (or Arrow) at once
ROW_GROUP_ROWS = 20_000         # rows per Parquet row group (a reader's unit of work)

Progress = Callable[[int], None]


def _batches(rows: Iterable[dict], size: int = BATCH_ROWS) -> Iterator[list[dict]]:
    it = iter(rows)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _no_progress(_rows: int) -> None:
    pass


def write_csv(f, columns, rows: Iterable[dict], progress: Progress = _no_progress) -> int:
    """A header line and a line per row, every cell spreadsheet-safe: the header as report.table.Csv
    writes it, the rows cell by cell the same way (export.csv_cells) without building a Table of
    each batch (a third of an export's time went to that)."""
    f.write(Csv(lineterminator="\n").render(export_table(columns, [])).encode("utf-8"))     # the header alone
    cells = csv_cells(columns)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    n = 0
    for batch in _batches(rows):
        writer.writerows(cells(row) for row in batch)
        f.write(buf.getvalue().encode("utf-8"))
        buf.seek(0)
        buf.truncate()
        n += len(batch)
        progress(n)
    return n


def write_json(f, columns, rows: Iterable[dict], progress: Progress = _no_progress) -> int:
    """A JSON array, one object per line."""
    names = [name for name, _ in columns]
    f.write(b"[\n")
    n = 0
    for batch in _batches(rows):
        text = ",\n".join(printable_json(json.dumps({k: row[k] for k in names}, ensure_ascii=False)) for row in batch)
        f.write(((",\n" if n else "") + text).encode("utf-8"))
        n += len(batch)
        progress(n)
    f.write(b"\n]\n" if n else b"]\n")
    return n


def write_parquet(f, columns, rows: Iterable[dict], metadata: dict, progress: Progress = _no_progress) -> int:
    """Parquet (zstd), a row group per ROW_GROUP_ROWS rows, the runs and units in its metadata."""
    require_parquet()
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = _arrow_schema(columns, metadata)
    n, pending = 0, []
    with pq.ParquetWriter(f, schema, compression="zstd") as writer:
        for batch in _batches(rows):
            pending.append(pa.Table.from_pylist(batch, schema=schema))     # Arrow: ~a tenth of the dicts
            n += len(batch)
            if sum(t.num_rows for t in pending) >= ROW_GROUP_ROWS:
                writer.write_table(pa.concat_tables(pending))
                pending = []
            progress(n)
        if pending:
            writer.write_table(pa.concat_tables(pending))
    return n


# --- the table held whole (show --format csv, tests) -----------------------------------------------
def render_csv(columns, rows) -> str:
    buf = io.BytesIO()
    write_csv(buf, columns, rows)
    return buf.getvalue().decode("utf-8")


def render_json(columns, rows) -> str:
    buf = io.BytesIO()
    write_json(buf, columns, rows)
    return buf.getvalue().decode("utf-8")


def render_parquet(columns, rows, metadata: dict) -> bytes:
    buf = io.BytesIO()
    write_parquet(buf, columns, rows, metadata)
    return buf.getvalue()
