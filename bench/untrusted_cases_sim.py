"""The cases of bench/hostile_probe_untrusted.py for images that misuse the simulator: self-modifying DMA, SVC, WFI/WFE with nothing coming, engine DMA into flash (issue 43).
Each function takes the World and returns its Cases."""
from __future__ import annotations

from untrusted_core import Case, World  # noqa: F401

CLASSES: dict = {}
