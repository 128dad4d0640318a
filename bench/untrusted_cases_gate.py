"""The cases of bench/hostile_probe_untrusted.py for gate documents (`gate --json`), figures that are not figures, the Markdown comment and gate.sh (issue 43).
Each function takes the World and returns its Cases."""
from __future__ import annotations

from untrusted_core import Case, World  # noqa: F401

CLASSES: dict = {}
