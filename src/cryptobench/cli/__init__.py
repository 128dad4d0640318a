"""The command line: one module per subcommand (NAME, add_parser, run), shared options and
output helpers in common.py, the parser and the exit codes in main.py. Arguments stop here: the
modules below the CLI take plain values, never an argparse namespace."""
from .main import main

__all__ = ["main"]
