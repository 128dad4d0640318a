"""`cryptobench export RUN… --format parquet|csv|json`: stored runs as one flat table (export.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..export import build_table, metadata, render_csv, render_json, render_parquet, require_parquet
from ..store import Store
from .common import add_db, add_format, add_output, add_runs, checked_output, is_tty, resolve_runs, write_atomic

NAME = "export"


def add_parser(sub) -> None:
    e = sub.add_parser("export", help="stored runs as a flat table for pandas or DuckDB: parquet, csv or json")
    add_runs(e)
    add_format(e, ("parquet", "csv", "json"), required=True)
    add_output(e, "--out", "output file (default: stdout for csv and json; required for parquet)")
    e.add_argument("--samples", action="store_true",
                   help="one row per timed sample (k operations) instead of one per cell")
    add_db(e)


def run(args, out) -> int:
    to_stdout = args.out in (None, "-")
    if args.format == "parquet":
        if args.out is None:
            raise UsageError("--format parquet needs --out FILE (or --out - to pipe it)")
        if to_stdout and is_tty(out):
            raise UsageError("refusing to write parquet (binary) to a terminal; use --out FILE")
        require_parquet()                 # before any run is read
    checked_output(args, "--out")
    store = Store(args.db, create=False)      # only reads: never creates a store
    try:
        ids = resolve_runs(store, args.run_ids)
        runs = [store.load_run(i) for i in ids]
    finally:
        store.close()
    columns, rows = build_table(runs, samples=args.samples)
    data = _encode(args.format, columns, rows, runs, args.samples)
    if to_stdout:
        _write_stream(out, data, args.format)
        where = "stdout"
    else:
        write_atomic(Path(args.out), data)
        where = args.out
    word = "run" if len(ids) == 1 else "runs"
    sys.stderr.write(f"exported {len(rows)} row{'' if len(rows) == 1 else 's'} from {word} {', '.join(map(str, ids))}"
                     f" to {where}{' (one per sample)' if args.samples else ''}\n")
    return 0


def _encode(fmt: str, columns, rows, runs, samples: bool) -> bytes:
    if fmt == "parquet":
        return render_parquet(columns, rows, metadata(runs, samples, columns))
    if fmt == "csv":
        return render_csv(columns, rows).encode("utf-8")
    return render_json(columns, rows).encode("utf-8")


def _write_stream(out, data: bytes, fmt: str) -> None:
    binary = getattr(out, "buffer", None)
    if binary is not None:
        out.flush()
        binary.write(data)
        binary.flush()
    elif fmt == "parquet":
        raise UsageError("this output stream takes no binary data; use --out FILE")
    else:
        out.write(data.decode("utf-8"))
