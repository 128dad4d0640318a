"""What every subcommand shares: the parser class, the common options (--db, --format, run
references, --param), run references resolved one way for all commands, the console and progress
factories, and the one atomic file writer. Nothing here knows a subcommand."""
from __future__ import annotations

import argparse
import re

from ..core.errors import UsageError
from ..core.files import check_output, write_atomic
from ..report.terminal import console_for  # the one console every table is printed on
from ..store.database import store_location

__all__ = ["OneLineParser", "add_db", "add_format", "add_runs", "add_param", "split_params", "resolve_runs",
           "resolve_one_run", "console_for", "stderr_console", "is_tty", "write_atomic", "check_output",
           "add_output", "checked_output"]

RUN_REF_HELP = "run ids, 'latest', or ranges such as 3-7 (either end may be 'latest')"


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit code 2."""

    def error(self, message):
        raise UsageError(message)


# ------------------------------------------------------------------------------------- options
def add_db(parser) -> None:
    parser.add_argument("--db", help="result database: a SQLite file, or postgresql://USER@HOST/DB for a store shared "
                                     "by several machines (default: $CRYPTOBENCH_DB or the user data dir); a "
                                     "command that only reads never creates one")


def add_output(parser, flag: str = "--json", help: str = "also write the result as JSON to FILE",
               required: bool = False) -> None:
    """An output file option and --force, the permission to replace an existing file."""
    parser.add_argument(flag, metavar="FILE", help=help, required=required)
    parser.add_argument("--force", action="store_true", help=f"{flag} may replace an existing file")


def checked_output(args, flag: str = "--json", inputs: tuple = ()):
    """The path of output `flag`, checked before any work (files.check_output): never the results
    database or one of `inputs` ((path, what it is)), an existing file only with --force. None
    when the option is not given or is '-' (stdout)."""
    path = getattr(args, flag.lstrip("-").replace("-", "_"))
    if path in (None, "-"):
        return None
    db = store_location(args.db) if hasattr(args, "db") else None      # commands without --db have none
    local_db = () if db is None or db.kind != "sqlite" else ((db.path, "the results database"),)   # a server is no file
    protected = local_db + tuple(inputs)
    return check_output(path, flag, force=getattr(args, "force", False), protected=protected)


def add_format(parser, choices=("table", "md", "csv", "json"), default: str | None = "table",
               required: bool = False) -> None:
    parser.add_argument("--format", choices=list(choices), default=None if required else default, required=required,
                        help="output format: " + ", ".join(choices) + ("" if required or default is None
                                                                       else f" (default: {default})"))


def add_runs(parser, dest: str = "run_ids", one: bool = False, metavar: str = "RUN") -> None:
    """A positional run reference: one (`one`), or any number of ids, 'latest' and ranges."""
    if one:
        parser.add_argument(dest, metavar=f"{metavar}|latest", help="a run id or 'latest'")
    else:
        parser.add_argument(dest, nargs="+", metavar=metavar, help=RUN_REF_HELP)


def add_param(parser, help: str = "set or sweep an operation parameter, e.g. bytes=64,8000,16000") -> None:
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE[,VALUE…]", help=help)


def key_values(items: list[str], flag: str, *, lists: str | None = None, convert=None) -> dict:
    """KEY=VALUE command-line items as {key: value}, the one parser every such option uses.
    `lists` (a separator such as ","): VALUE is a list, and a repeated KEY adds to its values
    (`--param bytes=64 --param bytes=128` sweeps both); otherwise a repeated KEY is refused.
    `convert` turns each value's text into its value (e.g. a number)."""
    out: dict = {}
    shape = "KEY=VALUE" + (f"[{lists}VALUE…]" if lists else "")
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or (lists and not text.strip()):
            raise UsageError(f"{flag}: expected {shape}, got {item!r}")
        if lists:
            values = [convert(v.strip()) if convert else v.strip() for v in text.split(lists) if v.strip()]
            out.setdefault(key, [])
            out[key] += [v for v in values if v not in out[key]]
        elif key in out:
            raise UsageError(f"{flag}: {key} given twice ({out[key]!r} and {text!r}); give it once")
        else:
            out[key] = convert(text) if convert else text
    return out


def split_params(items: list[str]) -> dict[str, list]:
    """--param KEY=VALUE[,VALUE…] items as {key: [values]}; a repeated KEY adds its values."""
    return key_values(items, "--param", lists=",")


# -------------------------------------------------------------------------------- run references
def resolve_runs(store, refs: list[str] | str) -> list[int]:
    """Run ids from ids, 'latest' and ranges A-B (either end may be 'latest'), comma-separated or
    as separate words; order kept, duplicates dropped; every id must exist."""
    out: list[int] = []
    for ref in [refs] if isinstance(refs, str) else refs:
        for part in str(ref).split(","):
            for rid in _resolve_part(store, part.strip(), ref):
                if rid not in out:
                    out.append(rid)
    return out


def _resolve_part(store, part: str, ref) -> list[int]:
    if not part:
        raise UsageError(f"empty run reference in {ref!r}")
    m = re.fullmatch(r"(\d+|latest)-(\d+|latest)", part)
    if m:
        lo, hi = (store.resolve_run_id(x) if x == "latest" else int(x) for x in m.groups())
        if lo > hi:
            raise UsageError(f"run range {part!r} runs backwards; write {hi}-{lo}")
        return [store.resolve_run_id(i) for i in range(lo, hi + 1)]
    if part == "latest" or part.isdigit():
        return [store.resolve_run_id(part)]       # UsageError "no run N" for an unknown one
    raise UsageError(f"run must be an id, 'latest' or a range such as 3-7, got {part!r}")


def resolve_one_run(store, ref: str, what: str = "run") -> int:
    """A reference that must name exactly one run (diff's two sides, energy import --run)."""
    ids = resolve_runs(store, ref)
    if len(ids) != 1:
        raise UsageError(f"{what}: expected one run, but {ref!r} names {len(ids)} ({', '.join(map(str, ids))})")
    return ids[0]


# ------------------------------------------------------------------------------ console, output
def stderr_console():
    """The console progress bars and run logs go to: stderr, so the command's output stays clean."""
    from rich.console import Console
    return Console(stderr=True)


def is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
