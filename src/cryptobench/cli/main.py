"""The `cryptobench` command: the parser, and the one place where errors become exit codes.

Only the module of the command being run is imported (commands.py names each one's module), so
`cryptobench show` does not load the simulator, the runner and the report builder; the other
commands appear in the parser with their help line alone, which is all `--help` shows of them."""
from __future__ import annotations

import importlib
import os
import sys

from .. import __version__
from ..core.errors import HarnessError, UsageError
from ..core.printable import printable
from .commands import COMMANDS
from .common import OneLineParser

EXIT_HARNESS = 3          # a harness could not be started or answered with an error
EXIT_BROKEN_PIPE = 141    # the reader went away, as a shell reports SIGPIPE


def command_module(name: str):
    """The module that implements a subcommand (commands.py)."""
    return importlib.import_module(f"{__package__}.{COMMANDS[name].module}")


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand argv names: its first word that is not an option (None: there is none, or it
    is not a command, which the parser then refuses with the list of commands)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(command: str | None) -> OneLineParser:
    """The parser with every command listed; the one `command` names (None: none) gets its full
    options from its module."""
    p = OneLineParser(prog="cryptobench", description="What a cryptographic operation costs, where it could run.")
    p.add_argument("--version", action="version", version=f"cryptobench {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=OneLineParser)
    for name, spec in COMMANDS.items():
        if name == command:
            command_module(name).add_parser(sub)
        else:
            sub.add_parser(name, help=spec.help)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = chosen_command(argv)
    try:
        parser = build_parser(command)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return command_module(args.command).run(args, sys.stdout)
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
