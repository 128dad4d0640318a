"""A commit's tree written into a folder from git's objects, as data (docs/promises.md, "A library's
repository"; used by library_ref.export_tree).

The commit is someone else's, so its tree is checked before a byte is written and written so that
no entry can reach outside the folder:
* every path is one git itself would accept on checkout: no empty, '.', '..' or '.git' component
  (in any case, with the trailing dots, spaces or invisible characters other file systems drop),
  no control character, no component over 255 bytes;
* no two entries claim one name: a symlink `v` and a tree `v/` (git accepts such a commit; only
  `git fsck` flags duplicate entries) are refused, so nothing is ever written under a symlink;
* and, whatever the checks missed, every component is opened with O_NOFOLLOW relative to its
  parent's descriptor and every file is created with O_EXCL: no symlink is followed, no existing
  file is overwritten;
* caps on the number of entries, the bytes, the depth and a path's length, each named in its
  one-line error (a 200 KB "git bomb" lists ten million paths); the listing and the blobs are
  streamed, so memory holds one 1 MiB chunk, never a blob;
* one time limit bounds the whole export (git's calls and the writing).

`verify` compares an export with its commit (every blob's hash, mode and symlink target, and no
entry more), so a tree changed in the cache is never measured under the commit's name."""
from __future__ import annotations

import hashlib
import os
import stat
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from .git_run import GIT_TIMEOUT_S, GitStream

FILE_MODES = {"100644": 0o444, "100664": 0o444, "100755": 0o555}     # 100664: git's old group-writable mode
SYMLINK, SUBMODULE = "120000", "160000"
MAX_SYMLINK = 4096                 # PATH_MAX: a longer target cannot be a symlink on Linux
NAME_MAX = 255
# what other file systems leave out of a name (git's is_ntfs_dotgit / is_hfs_dotgit): a '.git'
# spelt with them is '.git' on a Mac or Windows checkout, and refused there as here
IGNORABLE = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c"
                                   "\u206d\u206e\u206f\ufeff"))


@dataclass(frozen=True)
class Caps:
    """How large a commit's tree may be before its export is refused; each can be raised by the
    environment variable its error names."""
    files: int = 100_000
    bytes: int = 512 << 20
    depth: int = 64
    path_bytes: int = 1024

    @classmethod
    def from_environment(cls) -> "Caps":
        values = {}
        for name, default in (("files", cls.files), ("bytes", cls.bytes), ("depth", cls.depth),
                              ("path_bytes", cls.path_bytes)):
            var = CAP_VARIABLES[name]
            text = os.environ.get(var, "").strip()
            if not text:
                values[name] = default
                continue
            if not text.isdigit() or int(text) <= 0:
                raise UsageError(f"{var}={text[:40]!r}: expected a whole number above 0")
            values[name] = int(text)
        return cls(**values)


CAP_VARIABLES = {"files": "CRYPTOBENCH_EXPORT_MAX_FILES", "bytes": "CRYPTOBENCH_EXPORT_MAX_BYTES",
                 "depth": "CRYPTOBENCH_EXPORT_MAX_DEPTH", "path_bytes": "CRYPTOBENCH_EXPORT_MAX_PATH"}


@dataclass(frozen=True)
class Entry:
    mode: str
    oid: str
    size: int            # -1 for a submodule (its commit is in another repository)
    parts: tuple[str, ...]

    @property
    def path(self) -> str:
        return "/".join(self.parts)


def deadline() -> float:
    return time.monotonic() + GIT_TIMEOUT_S


def list_tree(repo: Path, commit: str, where: str, caps: Caps, until: float) -> list[Entry]:
    """The commit's entries (blobs, symlinks, submodules), every path checked, within the caps."""
    entries: list[Entry] = []
    files: set[tuple[str, ...]] = set()
    folders: set[tuple[str, ...]] = set()
    total = 0
    with GitStream(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, deadline=until) as listing:
        for record in listing.records():
            entry = _parse(record, where)
            _claim(entry.parts, files, folders, where)
            entries.append(entry)
            total += max(entry.size, 0)
            if len(entries) > caps.files:
                raise UsageError(f"{where}: the commit holds more than {caps.files:,} files, the export's cap "
                                 f"({CAP_VARIABLES['files']} raises it)")
            if total > caps.bytes:
                raise UsageError(f"{where}: the commit's files hold more than {caps.bytes >> 20:,} MiB, the export's "
                                 f"cap ({CAP_VARIABLES['bytes']}, in bytes, raises it)")
            _check_shape(entry, where, caps)
    return entries


def _parse(record: bytes, where: str) -> Entry:
    meta, tab, name = record.partition(b"\t")
    fields = meta.split()
    if not tab or len(fields) != 4:
        raise UsageError(f"{where}: git ls-tree answered {record[:80]!r}; expected 'MODE TYPE OBJECT SIZE\\tPATH'")
    mode, kind, oid, size = (f.decode("ascii", "replace") for f in fields)
    if kind not in ("blob", "commit") or (kind == "blob") != (mode in FILE_MODES or mode == SYMLINK) or \
            (kind == "commit" and mode != SUBMODULE):
        raise UsageError(f"{where}: the commit holds an entry git cannot check out: {kind} {mode} "
                         f"{os.fsdecode(name)[:100]!r}")
    return Entry(mode, oid, int(size) if size.isdigit() else -1, _checked_parts(name, where))


def _checked_parts(name: bytes, where: str) -> tuple[str, ...]:
    """The path's components, or a UsageError where git's own checkout would refuse the path."""
    text = os.fsdecode(name)
    parts = tuple(text.split("/"))
    for part in parts:
        folded = unicodedata.normalize("NFC", part.translate(IGNORABLE)).rstrip(". ").casefold()
        if part in ("", ".", "..") or folded in (".git", "git~1") or any(ord(c) < 0x20 or ord(c) == 0x7f
                                                                          for c in part):
            raise UsageError(f"{where}: the commit holds a path git itself would refuse: {text[:200]!r}")
        if len(os.fsencode(part)) > NAME_MAX:
            raise UsageError(f"{where}: the commit holds a name over {NAME_MAX} bytes, more than a file system "
                             f"takes: {text[:80]!r}…")
    return parts


def _claim(parts: tuple[str, ...], files: set, folders: set, where: str) -> None:
    """Record `parts` as a leaf; two entries of one name (a leaf and a folder, or two leaves) are
    a tree git fsck refuses (duplicateEntries), and one that would be written through the other."""
    for i in range(1, len(parts)):
        if parts[:i] in files:
            raise UsageError(f"{where}: the commit holds two entries named {'/'.join(parts[:i])!r} (a file or "
                             "symlink and a folder): a tree git fsck refuses")
        folders.add(parts[:i])
    if parts in files or parts in folders:
        raise UsageError(f"{where}: the commit holds two entries named {'/'.join(parts)!r}: a tree git fsck refuses")
    files.add(parts)


def _check_shape(entry: Entry, where: str, caps: Caps) -> None:
    if len(entry.parts) > caps.depth:
        raise UsageError(f"{where}: the commit nests folders {len(entry.parts) - 1} deep, past the export's cap of "
                         f"{caps.depth} ({CAP_VARIABLES['depth']} raises it): {entry.path[:80]!r}…")
    if len(os.fsencode(entry.path)) > caps.path_bytes:
        raise UsageError(f"{where}: the commit holds a path over {caps.path_bytes} bytes, the export's cap "
                         f"({CAP_VARIABLES['path_bytes']} raises it): {entry.path[:80]!r}…")
    if entry.mode == SYMLINK and entry.size > MAX_SYMLINK:
        raise UsageError(f"{where}: the symlink {entry.path[:80]!r} holds {entry.size} bytes; a symlink's target "
                         f"is at most {MAX_SYMLINK}")


# ------------------------------------------------------------------------------------ writing
class _Folders:
    """Descriptors of the export's folders, each opened with O_NOFOLLOW from its parent's, so a
    symlink can never stand for a folder; created where missing."""

    FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

    def __init__(self, root: Path):
        self.fds = {(): os.open(root, self.FLAGS)}

    def fd(self, parts: tuple[str, ...]) -> int:
        if parts not in self.fds:
            if len(self.fds) > 256:           # siblings come together in ls-tree's order: the rest can go
                self.close(keep_root=True)
            parent = self.fd(parts[:-1])
            try:
                os.mkdir(parts[-1], 0o755, dir_fd=parent)
            except FileExistsError:
                pass
            self.fds[parts] = os.open(parts[-1], self.FLAGS, dir_fd=parent)
        return self.fds[parts]

    def close(self, keep_root: bool = False) -> None:
        for key, fd in list(self.fds.items()):
            if key or not keep_root:
                os.close(fd)
                del self.fds[key]


def write_tree(repo: Path, entries: list[Entry], out: Path, where: str, until: float) -> None:
    """Every entry of the listing written under `out` from git's objects (no filter, no attribute):
    blobs streamed in chunks, read-only; submodules as empty folders (their commits are another
    repository's). Any failure of the file system (a full disk, a file size limit) is one line."""
    folders = _Folders(out)
    try:
        blobs = [e for e in entries if e.mode != SUBMODULE]
        if blobs:
            with GitStream(repo, "cat-file", "--batch", deadline=until, stdin=True) as cat:
                for entry in blobs:
                    _write_blob(cat, entry, folders, where)
                cat.finish()
        for entry in entries:
            if entry.mode == SUBMODULE:
                folders.fd(entry.parts)
    except OSError as e:
        raise UsageError(f"{where}: could not write the commit's tree into {out}: {e.strerror or e}")
    finally:
        folders.close()


def _write_blob(cat: GitStream, entry: Entry, folders: _Folders, where: str) -> None:
    cat.request(entry.oid.encode() + b"\n")
    header = cat.read_line().split()
    if len(header) != 3 or header[0].decode("ascii", "replace") != entry.oid or header[1] != b"blob" or \
            not header[2].isdigit() or int(header[2]) != entry.size:
        raise UsageError(f"{where}: git cat-file answered {b' '.join(header)[:80]!r} for {entry.path[:80]!r}; "
                         f"expected a blob of {entry.size} bytes")
    parent, name = folders.fd(entry.parts[:-1]), entry.parts[-1]
    if entry.mode == SYMLINK:
        os.symlink(b"".join(cat.read_exact(entry.size)), name, dir_fd=parent)
    else:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
        try:
            for chunk in cat.read_exact(entry.size):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
            os.fchmod(fd, FILE_MODES[entry.mode])          # read-only data
        finally:
            os.close(fd)
    if b"".join(cat.read_exact(1)) != b"\n":
        raise UsageError(f"{where}: git cat-file's answer for {entry.path[:80]!r} does not end where its size says")


# ------------------------------------------------------------------------------------ checking
def blob_id(data_chunks, size: int, sha256: bool) -> str:
    h = hashlib.sha256() if sha256 else hashlib.sha1()
    h.update(b"blob %d\0" % size)
    for chunk in data_chunks:
        h.update(chunk)
    return h.hexdigest()


def _file_chunks(fd: int):
    while chunk := os.read(fd, 1 << 20):
        yield chunk


def path_blob_id(path: Path, st: os.stat_result, sha256: bool) -> str:
    """The object id git gives what `path` holds (`st` its lstat): a symlink's target, or a file's
    bytes, read in chunks without following a symlink. The export's check and a plain DIR's
    dirtiness both compare it with the commit's."""
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(path))
        return blob_id([target], len(target), sha256)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return blob_id(_file_chunks(fd), st.st_size, sha256)
    finally:
        os.close(fd)


def verify(repo: Path, commit: str, tree: Path, where: str, caps: Caps) -> str:
    """'' when `tree` holds exactly the commit's entries (every blob's hash, each file's mode, each
    symlink's target, each submodule's empty folder, nothing more); else the first difference."""
    until = deadline()
    entries = list_tree(repo, commit, where, caps, until)
    expected = {e.parts: e for e in entries}
    sha256 = len(commit) == 64
    found = 0
    for folder, dirs, names in os.walk(tree, followlinks=False):
        if time.monotonic() > until:
            return f"checking it took over {GIT_TIMEOUT_S:.0f} s"
        rel = Path(folder).relative_to(tree).parts
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            entry = expected.get(rel + (name,))
            if entry is None or entry.mode == SUBMODULE:
                return f"{'/'.join(rel + (name,))!r} is not in the commit"
            why = _differs(Path(folder) / name, entry, sha256)
            if why:
                return why
            found += 1
        for d in list(dirs):
            parts = rel + (d,)
            if os.path.islink(os.path.join(folder, d)):
                dirs.remove(d)
            elif parts in expected and expected[parts].mode == SUBMODULE:
                found += 1
                dirs.remove(d)
                if os.listdir(os.path.join(folder, d)):
                    return f"the submodule folder {'/'.join(parts)!r} is not empty"
    if found != len(entries):
        missing = next(e.path for e in entries if not os.path.lexists(tree.joinpath(*e.parts)))
        return f"{missing!r} is missing"
    return ""


def _differs(path: Path, entry: Entry, sha256: bool) -> str:
    st = path.lstat()
    name = entry.path[:120]
    if entry.mode == SYMLINK:
        if not stat.S_ISLNK(st.st_mode):
            return f"{name!r} is no longer a symlink"
        return "" if path_blob_id(path, st, sha256) == entry.oid else f"{name!r} points elsewhere"
    if not stat.S_ISREG(st.st_mode):
        return f"{name!r} is no longer a file"
    if stat.S_IMODE(st.st_mode) != FILE_MODES[entry.mode]:
        return f"{name!r} has mode {stat.S_IMODE(st.st_mode):o}, not {FILE_MODES[entry.mode]:o}"
    if st.st_size != entry.size:
        return f"{name!r} holds {st.st_size} bytes, not {entry.size}"
    return "" if path_blob_id(path, st, sha256) == entry.oid else f"{name!r} is not the commit's blob {entry.oid[:12]}"
