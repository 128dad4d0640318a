"""The report's folder (`cryptobench report --out DIR`): like every other output, a folder that
holds a report already is replaced only with --force; and then whole: the new report is built in
a staging folder inside DIR and swapped in when it is complete, so DIR never mixes an old report's
figures with a new one's, and a report that fails half-way leaves the old one as it was."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ..errors import UsageError

REPORT_ENTRIES = ("report.html", "figures", "tables")      # what a report writes in its folder


def check_folder(out_dir: Path, force: bool) -> None:
    """Before any run is read: DIR is a folder (or can be made), it takes new files, and a report
    already in it is replaced only with --force."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: exists and is not a directory")
    found = [n for n in REPORT_ENTRIES if os.path.lexists(out_dir / n)]
    if found and not force:
        raise UsageError(f"--out {out_dir}: holds a report already ({', '.join(found)}); give --force to "
                         "replace it, or another folder")
    existing = out_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out_dir}: cannot write in {existing}")


@contextlib.contextmanager
def staged(out_dir: Path):
    """A fresh folder to build the report in (inside out_dir, so the swap is a rename); when the
    block ends, its report.html, figures/ and tables/ replace out_dir's. When it raises, the staging
    folder is removed and out_dir is left as it was."""
    made = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=out_dir, prefix=".report-", suffix=".tmp"))
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot create ({exc.strerror or exc})") from None
    try:
        yield stage
        _swap(stage, out_dir)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if made:
            with contextlib.suppress(OSError):
                out_dir.rmdir()                  # only if still empty: it was ours
        raise


def _swap(stage: Path, out_dir: Path) -> None:
    """The staged report's entries into out_dir, the old report's moved aside and then removed."""
    old = Path(tempfile.mkdtemp(dir=out_dir, prefix=".report-old-", suffix=".tmp"))
    try:
        for name in REPORT_ENTRIES:
            if os.path.lexists(out_dir / name):
                os.rename(out_dir / name, old / name)
            if os.path.lexists(stage / name):
                os.rename(stage / name, out_dir / name)
    finally:
        shutil.rmtree(old, ignore_errors=True)
    stage.rmdir()
