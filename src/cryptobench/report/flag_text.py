"""What a cell's flag means, said once under the table that shows it (the `*` notes name the flags;
a reader who meets `near-timer-resolution` beside a 2 µs random-number call must learn what it
implies and what to do, docs/schema.md)."""
from __future__ import annotations

from ..stats.summary import RESOLUTION_FACTOR

FLAG_MEANING = {
    "near-timer-resolution": f"a sample lasts less than {RESOLUTION_FACTOR}× the timer's resolution or read cost, so "
                             "the timer's granularity is a visible share of each figure; batch more operations per "
                             "sample (run without --single) or time a longer message",
    "few-samples": "fewer than 6 blocks of samples: the interval rests on few blocks; give the run more time (--budget)",
    "layout": "the harness processes disagree by more than 5 % and more than chance would make them (memory or cache placement): the interval includes it",
}


def flag_legend(flags) -> list[str]:
    """One line per flag among `flags` that has a meaning to say, in a fixed order."""
    seen = set(flags)
    return [f"{f}: {text}" for f, text in FLAG_MEANING.items() if f in seen]
