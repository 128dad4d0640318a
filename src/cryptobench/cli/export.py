"""`cryptobench export RUN… --format parquet|csv|json`: stored runs as one flat table (export.py);
`--format bencher|github-action-benchmark`: the same cells for a continuous-benchmarking dashboard
(report/export_ci.py, docs/gate.md "CI").

The cells are streamed: read from the store a batch at a time (Store.iter_cells), each turned into
its row and written (report/export_write.py), so memory stays the same for 10 k cells or 100 k. A first
pass over the cells' parameters alone fixes the param_<name> columns and their types."""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from ..core.errors import UsageError
from ..report.export import ParamColumns, export_rows, metadata, require_parquet
from ..report.export_ci import bencher_doc, ci_cells, github_action_benchmark_doc
from ..report.export_write import write_csv, write_json, write_parquet
from ..core.printable import printable_json
from ..core.files import atomic_file
from ..store.database import Store
from .commands import COMMANDS
from .common import add_db, add_format, add_output, add_runs, checked_output, is_tty, resolve_runs, stderr_console

NAME = "export"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    e = sub.add_parser("export", help=HELP)
    add_runs(e)
    add_format(e, ("parquet", "csv", "json") + CI_FORMATS, required=True)
    add_output(e, "--out", "output file (default: stdout for csv, json and the CI formats; required for parquet)")
    e.add_argument("--samples", action="store_true",
                   help="one row per timed sample (k operations) instead of one per cell")
    add_db(e)


CI_FORMATS = ("bencher", "github-action-benchmark")


def run(args, out) -> int:
    if args.format in CI_FORMATS:
        return _run_ci(args, out)
    to_stdout = args.out in (None, "-")
    if args.format == "parquet":
        if args.out is None:
            raise UsageError("--format parquet needs --out FILE (or --out - to pipe it)")
        if to_stdout and (is_tty(out) or getattr(out, "buffer", None) is None):
            raise UsageError("refusing to write parquet (binary) to a terminal; use --out FILE" if is_tty(out)
                             else "this output stream takes no binary data; use --out FILE")
        require_parquet()                 # before any run is read
    checked_output(args, "--out")
    store = Store(args.db, create=False)      # only reads: never creates a store
    try:
        ids = resolve_runs(store, args.run_ids)
        runs = [store.load_run(i, cells=False) for i in ids]
        columns, counts = _columns(store, runs, args.samples)
        with _progress(sum(counts.values())) as advance:
            cells = ((r, _counted(store.iter_cells(r.id, samples=args.samples), advance)) for r in runs)
            rows = export_rows(cells, columns, args.samples)
            with _destination(args.out, out) as f:
                n = _write(args.format, f, columns, rows, metadata(runs, args.samples, columns, counts))
    finally:
        store.close()
    word = "run" if len(ids) == 1 else "runs"
    sys.stderr.write(f"exported {n} row{'' if n == 1 else 's'} from {word} {', '.join(map(str, ids))}"
                     f" to {'stdout' if to_stdout else args.out}{' (one per sample)' if args.samples else ''}\n")
    return 0


def _run_ci(args, out) -> int:
    """A dashboard's JSON (bencher, github-action-benchmark): built whole (one entry per ok cell and
    measure: small), then written; the cells left out are named on stderr, one line each, so that
    stdout stays the JSON a pipe expects."""
    if args.samples:
        raise UsageError(f"--format {args.format} takes one figure per cell; --samples is for the flat table")
    checked_output(args, "--out")
    store = Store(args.db, create=False)
    try:
        ids = resolve_runs(store, args.run_ids)
        runs = [store.load_run(i) for i in ids]
    finally:
        store.close()
    cells, left_out = ci_cells(runs)
    doc = bencher_doc(cells) if args.format == "bencher" else github_action_benchmark_doc(cells)
    data = (printable_json(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n").encode("utf-8")
    with _destination(args.out, out) as f:
        f.write(data)
    for line in left_out:
        sys.stderr.write(line + "\n")
    word = "run" if len(ids) == 1 else "runs"
    sys.stderr.write(f"exported {len(cells)} cell{'' if len(cells) == 1 else 's'} ({args.format}) from {word} "
                     f"{', '.join(map(str, ids))} to {'stdout' if args.out in (None, '-') else args.out}"
                     f"{f'; {len(left_out)} left out' if left_out else ''}\n")
    return 0


def _columns(store: Store, runs, samples: bool) -> tuple[list[tuple[str, str]], dict[int, int]]:
    """The table's columns (a pass over the cells' parameters only) and each run's cell count."""
    params, counts = ParamColumns(samples), {}
    for r in runs:
        counts[r.id] = 0
        for p in store.iter_params(r.id):
            params.add(p)
            counts[r.id] += 1
    return params.columns(), counts


def _write(fmt: str, f, columns, rows, meta: dict) -> int:
    if fmt == "parquet":
        return write_parquet(f, columns, rows, meta)
    return (write_csv if fmt == "csv" else write_json)(f, columns, rows)


@contextlib.contextmanager
def _destination(path: str | None, out):
    """A binary file the table goes to: --out FILE whole or not at all (files.atomic_file), or
    stdout (its byte buffer; a text stream that has none gets the text)."""
    if path not in (None, "-"):
        with atomic_file(Path(path), "--out") as f:
            yield f
        return
    binary = getattr(out, "buffer", None)
    out.flush()
    yield binary if binary is not None else _TextSink(out)
    (binary or out).flush()


class _TextSink:
    """Bytes written to a text stream (a test's StringIO stands for stdout): each piece the
    writers give is whole UTF-8 text."""

    def __init__(self, out):
        self.out = out

    def write(self, data: bytes) -> int:
        return self.out.write(data.decode("utf-8"))

    def flush(self) -> None:
        self.out.flush()


def _counted(cells, advance):
    for cell in cells:
        yield cell
        advance()


@contextlib.contextmanager
def _progress(total: int):
    """advance() per cell read: a bar on stderr while it is a terminal (nothing otherwise)."""
    if not is_tty(sys.stderr) or total < 1:
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    with Progress(TextColumn("export"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr_console(), transient=True) as bar:
        task = bar.add_task("export", total=total)
        yield lambda: bar.advance(task)
