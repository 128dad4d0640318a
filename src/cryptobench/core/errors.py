"""Errors the command line turns into one clear line and an exit code."""


class UsageError(Exception):
    """Bad input from the user (flag, suite file, parameter): exit code 2, one line."""

    exit_code = 2


class HarnessError(Exception):
    """A native harness could not be started or broke the protocol."""
