"""The `cryptobench` command: one parser built from every subcommand module, and the one place
where errors become exit codes."""
from __future__ import annotations

import os
import sys

from .. import __version__
from ..core.errors import HarnessError, UsageError
from ..core.printable import printable
from . import compare, db, diff, energy, export, list_cmd, model, report, run, show, sim
from .common import OneLineParser

# in the order `cryptobench --help` lists them
COMMANDS = [list_cmd, run, show, compare, diff, export, report, energy, model, sim, db]

EXIT_HARNESS = 3          # a harness could not be started or answered with an error
EXIT_BROKEN_PIPE = 141    # the reader went away, as a shell reports SIGPIPE


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="cryptobench", description="What a cryptographic operation costs, where it could run.")
    p.add_argument("--version", action="version", version=f"cryptobench {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=OneLineParser)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    handlers = {command.NAME: command.run for command in COMMANDS}
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return handlers[args.command](args, sys.stdout)
    except UsageError as exc:
        sys.stderr.write(f"cryptobench: error: {printable(str(exc), keep_newlines=False)}\n")
        return exc.exit_code
    except HarnessError as exc:
        sys.stderr.write(f"cryptobench: harness error: {printable(str(exc), keep_newlines=False)}\n")
        return EXIT_HARNESS
    except BrokenPipeError:
        # the reader went away (`cryptobench show 1 | head`): not an error of ours, and nothing more to say
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_BROKEN_PIPE
