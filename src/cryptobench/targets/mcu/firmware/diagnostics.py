"""A compiler's or linker's failure, made fit to store in a cell's detail (which reaches show,
report, export and a shared store): it never quotes a file outside the places a build may read,
the library tree, the recipe's folder, cryptobench's harness and the build folder in the cache.

A diagnostic about such a file (`/etc/hostname:1:1: error: unknown type name 'myhost'`) and the
source lines the compiler shows under it are replaced by one line saying a diagnostic was hidden;
a toolchain program named by its path (`/usr/lib/.../bin/ld: region FLASH overflowed`) is named
by its file name; any other absolute path outside is shortened to its file name. The result is at
most MAX_LINES lines of at most MAX_LINE characters each, the last ones (the error that stopped
the build is last)."""
from __future__ import annotations

import os
import re
from pathlib import Path

MAX_LINES = 12
MAX_LINE = 300
HIDDEN = "[a diagnostic about a file outside the library tree and the build folder: not shown]"
# `FILE:rest` with an optional include-chain lead; FILE starts at the line's start (source lines
# the compiler quotes start with spaces)
_LINE = re.compile(r"(?P<lead>\s*(?:In file included from|from)\s+)?(?P<file>[^\s:][^:]*?):(?P<rest>.*)")
_LOCATION = re.compile(r"\d+|\(|\s+(?:In function|In member function|At top level|In macro)")
_PROGRAM = re.compile(r"(?:[\w.+-]*-)?(?:gcc|cc|cc1|cc1plus|collect2|lto1|lto-wrapper|ld|ld\.bfd|ld\.gold|as|ar|"
                      r"ranlib|cpp)(?:-[\d.]+)?")
_ABSOLUTE = re.compile(r"(?<![\w.~/-])/[^\s:'\"`()<>,;]+")


def confine(text: str, roots: list[Path] | tuple[Path, ...], cwd: Path | None = None) -> str:
    """`text` (a tool's stderr) with nothing quoted from outside `roots` (see the module's docstring)."""
    cwd = Path(cwd or os.getcwd())
    allowed = [Path(r).resolve() for r in roots]
    inside = lambda p: any((cwd / p).resolve().is_relative_to(r) for r in allowed)
    out: list[str] = []
    hiding = False
    for line in text.splitlines():
        m = _LINE.fullmatch(line)
        if m is None:                               # a quoted source line, or text with no file
            if not hiding:
                out.append(_shorten(line, inside))
            continue
        name = m.group("file")
        is_path = "/" in name or (cwd / name).is_file()
        if is_path and inside(name):
            hiding = False
            out.append(_shorten(line, inside))
        elif not is_path or (_PROGRAM.fullmatch(Path(name).name) and not _LOCATION.match(m.group("rest"))):
            hiding = False                          # a program's message (cc1: error: ..., .../ld: region ...)
            out.append(_shorten(f"{m.group('lead') or ''}{Path(name).name}:{m.group('rest')}", inside))
        else:
            hiding = True
            if not out or out[-1] != HIDDEN:
                out.append(HIDDEN)
    return "\n".join(line if len(line) <= MAX_LINE else line[:MAX_LINE - 1] + "…" for line in out[-MAX_LINES:])


def _shorten(line: str, inside) -> str:
    """Absolute paths outside the allowed places, shortened to their file name."""
    return _ABSOLUTE.sub(lambda m: m.group() if inside(m.group()) else "…/" + Path(m.group()).name, line)
