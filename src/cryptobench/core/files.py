"""Files: the one atomic writer every command and the report use, and the one reader of the text
files users write (suites, recipes, references)."""
from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from .errors import UsageError


def write_atomic(path: Path, data: bytes | str, label: str = "--out") -> None:
    """Write `path` whole or not at all: a temporary file in the same directory, renamed over it,
    so an interrupted write never leaves half a file where a complete one was (or was expected).
    Errors name the option the path came from (`label`)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_file(path, label) as f:
        f.write(raw)


@contextlib.contextmanager
def atomic_file(path: Path, label: str = "--out"):
    """A binary file to write `path` through piece by piece (an export streamed batch by batch),
    with write_atomic's promise: renamed over `path` when the block ends, removed when it raises."""
    path = Path(path).expanduser()
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{label} {path}: directory {parent} does not exist")
    if path.is_dir():
        raise UsageError(f"{label} {path}: is a directory")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise UsageError(f"{label} {path}: {exc.strerror or exc}") from None
        raise


def check_output(path: Path | str, label: str, *, force: bool = False,
                 protected: tuple[tuple[Path | str | None, str], ...] = ()) -> Path:
    """An output path checked before any work starts, so a run never ends in "cannot write": it
    is not one of the command's own inputs or its database (`protected`: (path, what it is)), it
    is not a directory, its directory exists and takes a new file, and an existing file is
    replaced only with `force`. Returns the path (write it with write_atomic)."""
    path = Path(path).expanduser()
    for other, what in protected:
        if other is not None and _same_file(path, Path(other)):
            raise UsageError(f"{label} {path}: is {what}; an output never replaces {what}, give another path")
    if path.is_dir():
        raise UsageError(f"{label} {path}: is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{label} {path}: directory {parent} does not exist")
    if path.exists() and not force:
        raise UsageError(f"{label} {path}: exists; give --force to replace it")
    try:                                  # the real test (permissions, read-only mounts, quotas)
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{label} {path}: cannot write in {parent} ({exc.strerror or exc})")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_utf8(path: Path, error: type[Exception] = UsageError, regular: str | None = None) -> str:
    """A text file a user wrote, as UTF-8 (opened read-only); another encoding is an `error` naming
    the line of the first bad byte. With `regular` (what is expected, e.g. "a recipe .toml file"),
    a FIFO, a device or a folder is refused before a byte is read (opened non-blocking, so a FIFO
    without a writer never holds the command)."""
    path = Path(path)
    try:
        if regular is None:
            data = path.read_bytes()
        else:
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise error(f"{path}: not a regular file (a FIFO, a device or a folder); expected {regular}")
                data = f.read()
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8") from None


def read_toml(path: Path, error: type[Exception] = UsageError, regular: str | None = None) -> tuple[str, dict]:
    """A TOML file a user wrote (a suite, a recipe, a reference, a power profile): its text (for
    line numbers) and its document; missing, not UTF-8 or not TOML is a one-line `error` naming the
    file (`regular`: as read_utf8's)."""
    import tomllib
    text = read_utf8(path, error, regular)
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: malformed TOML ({exc})") from None


def toml_line(lines: list[str], name: str, start: int = 0, end: int | None = None) -> int:
    """The 1-based line (within lines[start:end]) where a TOML file sets or opens `name`: `name =`,
    `"name" =`, `[name]` or `[[name]]`; start + 1 when there is none. Errors name this line."""
    rx = re.compile(r'^\s*(?:\[\[?\s*)?"?' + re.escape(name) + r'"?\s*[=\]]')
    return next((i + 1 for i in range(start, len(lines) if end is None else end) if rx.match(lines[i])), start + 1)
