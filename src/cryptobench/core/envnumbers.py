"""Numbers read from the environment (CRYPTOBENCH_CHECKPOINT_S, CRYPTOBENCH_REPLY_TIMEOUT_S, …),
all through one parser.

A number is read when a command needs it, never at import: a bad value stops the commands that
use it with one line naming the variable and the range it takes, and every other command works.
`nan`, `inf`, 0 and negative values are refused rather than taken: each of these numbers is a
safeguard (how often a run's samples reach the store, how long a harness may stay silent), and
none may be switched off by a value that only looks like a number."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .errors import UsageError


@dataclass(frozen=True)
class EnvNumber:
    """One variable: its name, its value when unset or empty, and its range (above `low`, at
    most `high`)."""

    name: str
    default: float
    high: float
    low: float = 0.0
    unit: str = "seconds"

    def value(self) -> float:
        """The variable's value, or the default; UsageError when it is set to anything but a
        finite number in range."""
        text = os.environ.get(self.name, "").strip()
        if not text:
            return self.default
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and self.low < number <= self.high):
            raise UsageError(f"{self.name}={text!r} is not a number of {self.unit} above {self.low:g} and at "
                             f"most {self.high:g} (unset: {self.default:g})")
        return number


def check_all(*numbers: EnvNumber) -> None:
    """Read each of `numbers` once: a command calls this before its work starts, so that a bad
    value is the first thing it says, not something found halfway through."""
    for number in numbers:
        number.value()
