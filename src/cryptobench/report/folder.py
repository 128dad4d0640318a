"""The report's folder (`cryptobench report --out DIR`): like every other output, a folder that
holds a report already is replaced only with --force; and then whole: the new report is built in
a staging folder inside DIR and swapped in when it is complete, so DIR never mixes an old report's
figures with a new one's, and a report that fails half-way leaves the old one as it was.

A staging folder is named by the process that made it (.report-PID@HOST-XXXX.tmp, and
.report-old-PID@HOST-XXXX.tmp while the swap moves the old report aside). A report killed with
kill -9 cannot remove its own; the next report into DIR removes those whose process, on this host,
is gone (stale_stages), and says so. Folders of a live process or of another host are left alone."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

from ..core.errors import UsageError
from ..core.processes import process_alive

REPORT_ENTRIES = ("report.html", "figures", "tables")      # what a report writes in its folder
_STAGE = re.compile(r"\.report-(?:old-)?(?P<pid>\d+)@(?P<host>[A-Za-z0-9._-]*)-[A-Za-z0-9_]+\.tmp")


def _host() -> str:
    """This host's name as a staging folder's name holds it (letters, digits, . _ - only)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:64]


def _stage_prefix(old: bool = False) -> str:
    return f".report-{'old-' if old else ''}{os.getpid()}@{_host()}-"


def stale_stages(out_dir: Path) -> list[tuple[Path, int]]:
    """The staging folders in out_dir that a report on this host left when it was killed: (folder,
    pid) for each whose process is gone. Ours and live ones are not stale."""
    if not out_dir.is_dir():
        return []
    host, out = _host(), []
    for entry in sorted(out_dir.iterdir(), key=lambda p: p.name):
        m = _STAGE.fullmatch(entry.name)
        if not m or m["host"] != host or entry.is_symlink() or not entry.is_dir():
            continue
        pid = int(m["pid"])
        if pid != os.getpid() and not process_alive(pid):
            out.append((entry, pid))
    return out


def remove_stale(out_dir: Path) -> str | None:
    """Removes the stale staging folders of out_dir (stale_stages); one line saying what was
    removed, or None when there was nothing to remove."""
    gone = []
    for path, pid in stale_stages(out_dir):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            gone.append(pid)
    if not gone:
        return None
    pids = ", ".join(str(p) for p in dict.fromkeys(gone))
    return (f"removed {len(gone)} staging folder{'s' if len(gone) != 1 else ''} that a killed report left in "
            f"{out_dir} (process {pids}, no longer running)")


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
        stage = Path(tempfile.mkdtemp(dir=out_dir, prefix=_stage_prefix(), suffix=".tmp"))
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
    old = Path(tempfile.mkdtemp(dir=out_dir, prefix=_stage_prefix(old=True), suffix=".tmp"))
    try:
        for name in REPORT_ENTRIES:
            if os.path.lexists(out_dir / name):
                os.rename(out_dir / name, old / name)
            if os.path.lexists(stage / name):
                os.rename(stage / name, out_dir / name)
    finally:
        shutil.rmtree(old, ignore_errors=True)
    stage.rmdir()
