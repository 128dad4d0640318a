"""Power-analyzer trace readers: `open_trace(path, fmt, **options)` -> (TraceInfo, iterator of Chunks).

Every reader parses the file's header when opened (a bad header or an unknown column raises at once)
and streams the samples as Chunks of at most `chunk_samples` samples; a malformed row or frame
further in raises TraceError(path, "line N" / "byte N", what was expected) while iterating.
Option names are checked here: an unknown one is a ValueError naming the format's valid options.
Nothing else escapes a reader: a file that cannot be read is a TraceError, and no reader ever
writes to its input (the jls reader reads a private copy of a file that pyjls would repair).
See docs/trace-formats.md for each format, its options and its sources.
"""
from __future__ import annotations

from ..trace import TraceError
from . import generic_csv, jls, keysight, ppk2, saleae

_READERS = {
    "ppk2": (ppk2.open_trace, ppk2.DESCRIPTION, ppk2.OPTIONS),
    "n6705-csv": (keysight.open_csv, keysight.CSV_DESCRIPTION, keysight.CSV_OPTIONS),
    "n6705-dlog": (keysight.open_dlog, keysight.DLOG_DESCRIPTION, keysight.DLOG_OPTIONS),
    # the saleae reader joins its marker export with a current trace of another format: it gets the opener
    "saleae": (lambda path, **options: saleae.open_trace(path, open_trace, **options), saleae.DESCRIPTION,
               saleae.OPTIONS),
    "generic-csv": (generic_csv.open_trace, generic_csv.DESCRIPTION, generic_csv.OPTIONS),
    "jls": (jls.open_trace, jls.DESCRIPTION, jls.OPTIONS),
}

FORMATS: dict[str, str] = {name: desc for name, (_, desc, _) in _READERS.items()}
OPTIONS: dict[str, dict[str, str]] = {name: opts for name, (_, _, opts) in _READERS.items()}


def check_options(fmt: str, options: dict) -> None:
    valid = OPTIONS[fmt]
    prefixes = tuple(k[:-1] for k in valid if k.endswith(".*"))
    unknown = [k for k in options if k not in valid and not (prefixes and k.startswith(prefixes))]
    if unknown:
        raise ValueError(f"format {fmt}: unknown option{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; valid options: {', '.join(valid)}")


def open_trace(path, fmt: str, **options):
    """(TraceInfo, iterator of Chunk) for the trace file `path` in format `fmt` (a key of FORMATS).
    A file that cannot be read (permissions, an I/O error) is a TraceError too."""
    if fmt not in _READERS:
        raise ValueError(f"unknown trace format {fmt!r}; valid: {', '.join(_READERS)}")
    check_options(fmt, options)
    reader = _READERS[fmt][0]
    try:
        info, chunks = reader(path, **options)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return info, _guarded(path, chunks)


def _guarded(path, chunks):
    try:
        yield from chunks
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path, exc: OSError) -> TraceError:
    return TraceError(exc.filename or path, None, f"expected a readable file, found: {exc.strerror or exc}")


__all__ = ["FORMATS", "OPTIONS", "open_trace", "check_options"]
