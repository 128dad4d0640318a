"""Where the package and its checkout are: one place, so that moving a module moves no path."""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]     # src/cryptobench
REPO_ROOT = PACKAGE_DIR.parents[1]                    # the checkout: harness/, build/, .cache/
