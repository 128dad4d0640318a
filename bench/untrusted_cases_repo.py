"""The cases of bench/hostile_probe_untrusted.py for a library's git repository: `--library-source DIR@REF` and a plain DIR (issue 43).
Each function takes the World and returns its Cases."""
from __future__ import annotations

from untrusted_core import Case, World  # noqa: F401

CLASSES: dict = {}
