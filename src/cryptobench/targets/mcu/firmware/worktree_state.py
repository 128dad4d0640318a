"""What a plain `--library-source DIR` is, in git's terms: its HEAD commit, and whether the files under
DIR are that commit's (docs/own-library.md, "A plain folder").

`git status` would say it, but status runs what the repository's configuration names: a clean
filter (`filter.x.clean`, `filter.x.process`) on every file whose stat changed, an fsmonitor, a
hook when it refreshes the index, submodules' own configurations. A copied repository is someone
else's data, so cryptobench does not ask status: it reads the commit's listing (ls-tree) and
compares each file under DIR with it byte for byte, hashing the file as git hashes a blob, and asks
`git check-ignore` (which reads ignore patterns and runs nothing) which other files git ignores.

"Dirty" therefore means: the bytes under DIR, which are what the build compiles, are not the
commit's bytes (a changed, missing or mode-changed file, or a file the commit lacks that git does
not ignore). A file that a filter or an end-of-line attribute rewrites on checkout counts as
changed: the commit does not hold the bytes measured."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ....core.errors import UsageError
from .git_run import HASH_RX, git
from .tree_export import FILE_MODES, SUBMODULE, SYMLINK, Caps, deadline, list_tree, path_blob_id


def plain_dir_state(folder: Path) -> dict:
    """For a plain --library-source DIR inside a git work tree (and not ignored by it): the HEAD
    commit and whether DIR's files differ from it; else {} (also where git is not installed, or
    the tree is past the export's caps: a plain DIR needs no git)."""
    try:
        return _state(folder)
    except UsageError:
        return {}


def _state(folder: Path) -> dict:
    if git(folder, "rev-parse", "--is-inside-work-tree", check=False) != "true\n":
        return {}
    if git(folder, "check-ignore", "-q", ".", check=False) is not None:
        return {}            # an ignored folder of another repository (a crate in cryptobench's .cache)
    head = (git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False) or "").strip()
    if not HASH_RX.fullmatch(head):
        return {}
    prefix = (git(folder, "rev-parse", "--show-prefix", check=False) or "").strip().rstrip("/")
    return {"library_commit": head, "library_dirty": _dirty(folder, head, prefix)}


def _dirty(folder: Path, head: str, prefix: str) -> bool:
    """Whether the files under `folder` (the repository's `prefix`) are not exactly the commit's."""
    depth = len(prefix.split("/")) if prefix else 0
    tracked = {e.parts[depth:]: e for e in list_tree(folder, head, f"{folder}", Caps.from_environment(), deadline())
               if e.parts[:depth] == tuple(prefix.split("/")[:depth])}
    sha256 = len(head) == 64
    for parts, entry in tracked.items():
        if entry.mode != SUBMODULE and _changed(folder.joinpath(*parts), entry, sha256):
            return True
    others = [p for p in _files_under(folder, tracked) if p not in tracked]
    return bool(others) and bool(_not_ignored(folder, others))


def _changed(path: Path, entry, sha256: bool) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return True
    if entry.mode == SYMLINK:
        if not stat.S_ISLNK(st.st_mode):
            return True
    elif not stat.S_ISREG(st.st_mode) or bool(st.st_mode & stat.S_IXUSR) != (FILE_MODES[entry.mode] == 0o555) \
            or st.st_size != entry.size:
        return True
    return path_blob_id(path, st, sha256) != entry.oid


def _files_under(folder: Path, tracked: dict):
    """Every file and symlink under `folder` as path parts, not descending into .git, a nested
    repository or a submodule (git status shows those as one untracked entry: so do we)."""
    submodules = {parts for parts, e in tracked.items() if e.mode == SUBMODULE}
    for here, dirs, names in os.walk(folder, followlinks=False):
        rel = Path(here).relative_to(folder).parts
        for d in list(dirs):
            inner = Path(here) / d
            if d == ".git" or rel + (d,) in submodules:
                dirs.remove(d)
            elif (inner / ".git").exists() or inner.is_symlink():
                dirs.remove(d)
                yield rel + (d,)
        for name in names:
            yield rel + (name,)


def _not_ignored(folder: Path, candidates: list[tuple[str, ...]]) -> list[str]:
    """The candidates git does not ignore (`check-ignore --stdin`, which prints those it does)."""
    paths = ["/".join(p) for p in candidates]
    out = git(folder, "check-ignore", "--stdin", "-z", data=True, check=False,
              input=b"\0".join(os.fsencode(p) for p in paths) + b"\0") or b""
    ignored = {os.fsdecode(p) for p in out.split(b"\0") if p}
    return [p for p in paths if p not in ignored]
