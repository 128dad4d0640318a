"""A library at a commit: `--library-source DIR@REF` (docs/own-library.md, "A library at a commit").

DIR is a git repository (or a folder inside one), REF a branch, tag or commit of it. The ref is
resolved to its full commit hash once, when the run is planned, and the commit's tree is exported
into the cache (`.cache/library-commits/<hash>`), keyed by that hash: two refs, measured in one
run after the other, get two trees and never overwrite each other; the same commit is exported
once. A plain DIR that is a git repository is measured as it is, and its HEAD commit and whether
its tree was dirty are recorded.

The repository is someone else's data (project rule: inputs from others are data):
* the ref is checked before git sees it (no option: a ref starting with '-' is refused, and
  `rev-parse --verify --end-of-options REF^{commit}` never reads it as one);
* a ref that names two things (a tag and a branch of one name, a name that is also the start of a
  commit's hash) is refused, naming both: git would silently take one;
* git runs so that no program the repository's configuration names can start (git_run.py);
* the export reads objects only (ls-tree, cat-file): no checkout, so no filter, no hook, no
  attribute (export-subst) runs, and nothing is written into the user's repository; the commit's
  tree is checked and written so that nothing lands outside its folder, within caps on size
  (tree_export.py); the exported files are read-only;
* a cached export is checked against its commit before each use and written again where it
  differs, so a tree changed in the cache is never measured under the commit's name; an export a
  killed process left half-written is removed by the next one;
* every failure is one line naming --library-source, the argument and what was expected."""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from .git_run import FLAG, HASH_RX, git  # noqa: F401  (history reads git and HASH_RX through here)
from .tree_export import Caps, deadline, list_tree, verify, write_tree
from .worktree_state import plain_dir_state  # noqa: F401  (the plain DIR's state: target.py)

# a ref as a user types it: printable, no whitespace, no option, at most 200 characters
REF_RX = re.compile(r"[^\x00-\x20\x7f-][^\x00-\x20\x7f]{0,199}")
HEX_PREFIX_RX = re.compile(r"[0-9a-fA-F]{4,63}")
TEMP_RX = re.compile(r"\.[0-9a-f]{12}-.+")        # an export being written (mkdtemp's name below)
ABANDONED_AFTER_S = 10.0     # an unlocked temporary export this long untouched is a dead process's, not one starting


@dataclass(frozen=True)
class LibraryRef:
    """What `--library-source DIR@REF` named, resolved: the repository folder as given (absolute),
    the ref as given, its full commit hash, and the folder inside the repository DIR is ('' at its top)."""
    repo: str
    ref: str
    commit: str
    prefix: str = ""


def split_source(given: str) -> tuple[str, str | None]:
    """(DIR, REF or None) of --library-source's value: an existing folder is a plain DIR (its name
    may hold '@'); otherwise DIR@REF split at the last '@'."""
    if Path(given).is_dir() or "@" not in given:
        return given, None
    folder, _, ref = given.rpartition("@")
    return folder, ref


def resolve_ref(given: str) -> LibraryRef | None:
    """--library-source's value resolved: None for a plain DIR, else the LibraryRef of DIR@REF.
    Refused in one line: an empty or option-like ref, a DIR that is no folder or no git
    repository, a ref that names no commit."""
    folder, ref = split_source(given)
    if ref is None:
        return None
    if not ref or not REF_RX.fullmatch(ref):
        raise UsageError(f"{FLAG}: {given}: expected DIR@REF with REF a branch, tag or commit (no leading '-', "
                         f"no spaces or control characters); got {ref!r}")
    root = Path(folder).resolve() if folder else None
    if root is None or not root.is_dir():
        raise UsageError(f"{FLAG}: {given}: '{folder}' is not a directory; expected DIR@REF with DIR a git repository")
    if git(root, "rev-parse", "--is-inside-work-tree", check=False) is None and \
            git(root, "rev-parse", "--git-dir", check=False) is None:
        raise UsageError(f"{FLAG}: {given}: {folder} is not a git repository; expected DIR@REF with DIR a git "
                         "repository (or a plain DIR without @REF)")
    _refuse_ambiguous(root, given, ref)
    out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    commit = (out or "").strip()
    if not HASH_RX.fullmatch(commit):
        raise UsageError(f"{FLAG}: {given}: no commit '{ref}' in {folder}")
    prefix = (git(root, "rev-parse", "--show-prefix", check=False) or "").strip().rstrip("/")
    return LibraryRef(repo=str(root), ref=ref, commit=commit, prefix=prefix)


def _refuse_ambiguous(root: Path, given: str, ref: str) -> None:
    """A ref that git would resolve by its own precedence among several things is refused, naming
    them: a tag and a branch of one name (git takes the tag), a ref that is also the start of a
    commit's hash (git takes the ref). A full hash, or a full ref name (refs/heads/x), is never
    ambiguous."""
    if HASH_RX.fullmatch(ref) or ref.startswith("refs/") or not re.fullmatch(r"[^~^:@{}\\?*\[]+", ref):
        return
    candidates = [f"refs/{ref}", f"refs/tags/{ref}", f"refs/heads/{ref}", f"refs/remotes/{ref}",
                  f"refs/remotes/{ref}/HEAD"]
    listed = git(root, "for-each-ref", "--format=%(refname)", "--", *candidates, check=False) or ""
    named = [name for name in listed.splitlines() if name in candidates]
    if HEX_PREFIX_RX.fullmatch(ref) and named:
        objects = git(root, "rev-parse", "--disambiguate=" + ref.lower(), check=False) or ""
        named += [f"commit {o[:12]}…" for o in objects.split() if HASH_RX.fullmatch(o)
                  and (git(root, "cat-file", "-t", o, check=False) or "").strip() == "commit"]
    if len(named) > 1:
        raise UsageError(f"{FLAG}: {given}: '{ref}' names {len(named)} things in {root.name}: {', '.join(named)}; "
                         f"give the full name (e.g. {named[0] if named[0].startswith('refs/') else named[1]}) or a "
                         "commit hash")


def commits_dir(cache: Path) -> Path:
    return cache / "library-commits"


def export_tree(lib: LibraryRef, cache: Path, log=lambda line: None) -> Path:
    """The commit's tree in the cache, and the folder in it that DIR was: the library tree the
    recipe's sources are found in. Exported on first use; on every later use checked against the
    commit first, and exported again where it differs (`log` says so)."""
    dest = commits_dir(cache) / lib.commit
    where = f"{FLAG}: {Path(lib.repo).name}@{lib.ref}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(dest.parent)
    caps = Caps.from_environment()
    if dest.is_dir() and not dest.is_symlink():
        why = verify(Path(lib.repo), lib.commit, dest, where, caps)
        if why:
            log(f"the cached tree of commit {lib.commit[:12]} differs from the commit ({why}): exported again")
            _set_aside(dest)
    elif os.path.lexists(dest):
        log(f"the cache's {dest.name[:12]}… is not a folder: exported again")
        _set_aside(dest)
    if not dest.is_dir():
        _export(lib, dest, where, caps)
    tree = dest / lib.prefix if lib.prefix else dest
    if not tree.is_dir():
        raise UsageError(f"{FLAG}: {lib.repo}@{lib.ref}: the folder '{lib.prefix}' does not exist at commit "
                         f"{lib.commit[:12]}")
    return tree


def _export(lib: LibraryRef, dest: Path, where: str, caps: Caps) -> None:
    """The commit's tree written into a temporary folder held under a lock while it is written (so
    `_remove_abandoned` of another run leaves it alone), then renamed into place in one step."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{lib.commit[:12]}-", dir=dest.parent))
    held = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        until = deadline()
        write_tree(Path(lib.repo), list_tree(Path(lib.repo), lib.commit, where, caps, until), tmp, where, until)
        try:
            tmp.rename(dest)
        except OSError:
            if not dest.is_dir():        # another run exported the same commit first: theirs is the same tree
                raise UsageError(f"{where}: could not move the export into {dest.parent}")
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, onerror=_writable_and_retry)
        os.close(held)


def _set_aside(dest: Path) -> None:
    """Move a cached tree out of the commit's name in one step (a run reading it keeps its files),
    then remove it."""
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name[:12]}-stale-", dir=dest.parent))
    os.rename(dest, aside / "tree")
    shutil.rmtree(aside, onerror=_writable_and_retry)


def _remove_abandoned(folder: Path) -> None:
    """Remove the temporary folders of exports whose process died (kill -9, a power cut): no
    process holds their lock any more (and none is about to take it: the folder is not new)."""
    for tmp in folder.iterdir():
        if not TEMP_RX.fullmatch(tmp.name) or tmp.is_symlink() or not tmp.is_dir() or \
                time.time() - tmp.stat().st_mtime < ABANDONED_AFTER_S:
            continue
        try:
            fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)              # an export being written by a living process
            continue
        try:
            shutil.rmtree(tmp, onerror=_writable_and_retry)
        except OSError:
            pass
        finally:
            os.close(fd)


def _writable_and_retry(func, path, _exc) -> None:
    os.chmod(os.path.dirname(path), stat.S_IRWXU)
    func(path)


def checkout(repo: str, ref: str, commit: str, cache: Path, log=lambda line: None) -> tuple[Path, dict]:
    """(the library tree, its build conditions) of a run planned with DIR@REF: the stored commit
    (a resumed run measures the same one, wherever the ref moved since), exported into the cache."""
    folder = Path(repo)
    if not folder.is_dir() or not HASH_RX.fullmatch(commit or ""):
        raise UsageError(f"{FLAG}: {repo}@{ref}: expected the git repository the run was planned with; "
                         f"'{repo}' is not a directory")
    found = (git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}",
                 check=False) or "").strip()
    if found != commit:
        raise UsageError(f"{FLAG}: {repo}@{ref}: no commit {commit} in {repo} any more")
    prefix = (git(folder, "rev-parse", "--show-prefix", check=False) or "").strip().rstrip("/")
    lib = LibraryRef(repo=repo, ref=ref, commit=commit, prefix=prefix)
    return export_tree(lib, cache, log), conditions_of(lib)


def conditions_of(lib: LibraryRef) -> dict:
    """The build conditions' keys for a library measured at a commit (docs/schema.md)."""
    return {"library_commit": lib.commit, "library_ref": lib.ref, "library_repo": lib.repo,
            **({"library_repo_folder": lib.prefix} if lib.prefix else {})}
