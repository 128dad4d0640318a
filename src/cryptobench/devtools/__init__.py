"""Checks for the people who work on cryptobench, not for its users (e.g. `python -m cryptobench.devtools.structure`)."""
