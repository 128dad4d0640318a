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
* git runs with the system and global configuration off, hooks and fsmonitor off, no prompt, no
  inherited GIT_* variable (GIT_DIR, GIT_WORK_TREE, …) and no secret variable (child_environment);
* the export reads objects only (ls-tree, cat-file): no checkout, so no filter, no hook, no
  attribute (export-subst) runs, and nothing is written into the user's repository (no worktree
  entry, no index refresh: GIT_OPTIONAL_LOCKS=0 for `status`); the exported files are read-only;
* every failure is one line naming --library-source, the argument and what was expected."""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from ....core.processes import child_environment

FLAG = "--library-source"
HASH_RX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")      # SHA-1 or SHA-256 repositories
# a ref as a user types it: printable, no whitespace, no option, at most 200 characters
REF_RX = re.compile(r"[^\x00-\x20\x7f-][^\x00-\x20\x7f]{0,199}")
GIT_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never",
              "-c", "core.untrackedCache=false")
GIT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class LibraryRef:
    """What `--library-source DIR@REF` named, resolved: the repository folder as given (absolute),
    the ref as given, its full commit hash, and the folder inside the repository DIR is ('' at its top)."""
    repo: str
    ref: str
    commit: str
    prefix: str = ""


def git_environment() -> dict[str, str]:
    """The environment git runs with: no system or global configuration, no prompt, no inherited
    GIT_* variable (which could point git at another repository or work tree), no secret."""
    drop = {k: None for k in os.environ if k.startswith("GIT_")}
    return child_environment({**drop, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                              "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_ASKPASS": None,
                              "SSH_ASKPASS": None, "LC_ALL": "C"})


def git(folder: Path, *args: str, data: bool = False, check: bool = True, input: bytes | None = None):
    """Run git in `folder` with the sanitized environment; stdout as text (bytes with `data`).
    None when git fails and `check` is False; a UsageError naming --library-source otherwise."""
    try:
        proc = subprocess.run(["git", *GIT_CONFIG, "-C", str(folder), *args], capture_output=True,
                              env=git_environment(), timeout=GIT_TIMEOUT_S, input=input, stdin=None if input else
                              subprocess.DEVNULL)
    except FileNotFoundError:
        raise UsageError(f"{FLAG}: DIR@REF needs git, which is not installed")
    except subprocess.TimeoutExpired:
        raise UsageError(f"{FLAG}: git {args[0]} in {folder} took over {GIT_TIMEOUT_S:.0f} s")
    if proc.returncode != 0:
        if not check:
            return None
        why = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"{FLAG}: git {args[0]} failed in {folder}: {why}")
    return proc.stdout if data else proc.stdout.decode("utf-8", "replace")


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
    out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    commit = (out or "").strip()
    if not HASH_RX.fullmatch(commit):
        raise UsageError(f"{FLAG}: {given}: no commit '{ref}' in {folder}")
    prefix = (git(root, "rev-parse", "--show-prefix", check=False) or "").strip().rstrip("/")
    return LibraryRef(repo=str(root), ref=ref, commit=commit, prefix=prefix)


def commits_dir(cache: Path) -> Path:
    return cache / "library-commits"


def export_tree(lib: LibraryRef, cache: Path) -> Path:
    """The commit's tree in the cache (exported on first use), and the folder in it that DIR was:
    the library tree the recipe's sources are found in."""
    dest = commits_dir(cache) / lib.commit
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{lib.commit[:12]}-", dir=dest.parent))
        try:
            _write_tree(Path(lib.repo), lib.commit, tmp)
            try:
                tmp.rename(dest)
            except OSError:
                if not dest.is_dir():        # another run exported the same commit first: theirs is the same tree
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, onerror=_writable_and_retry)
    tree = dest / lib.prefix if lib.prefix else dest
    if not tree.is_dir():
        raise UsageError(f"{FLAG}: {lib.repo}@{lib.ref}: the folder '{lib.prefix}' does not exist at commit "
                         f"{lib.commit[:12]}")
    return tree


def _write_tree(repo: Path, commit: str, out: Path) -> None:
    """Every blob and symlink of `commit`, written from the object store as it is (no filter, no
    attribute); submodules are left out (an empty folder), as their commits are not in this repository."""
    listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, data=True)
    entries = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, kind, obj = meta.split(b" ")
        path = os.fsdecode(name)
        if path.startswith("/") or ".." in Path(path).parts or ".git" in Path(path).parts:
            raise UsageError(f"{FLAG}: {repo}@{commit[:12]}: the commit holds a path git itself would refuse: "
                             f"{path!r}")
        entries.append((mode.decode(), kind.decode(), obj.decode(), path))
    blobs = [e for e in entries if e[1] == "blob"]
    contents = _cat_blobs(repo, [e[2] for e in blobs]) if blobs else []
    for (mode, _, _, path), data in zip(blobs, contents):
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(os.fsdecode(data), target)    # resolve() refuses one that leads out of the tree
        else:
            target.write_bytes(data)
            target.chmod(0o555 if mode == "100755" else 0o444)     # read-only data
    for mode, kind, _, path in entries:
        if kind == "commit":
            (out / path).mkdir(parents=True, exist_ok=True)


def _cat_blobs(repo: Path, objects: list[str]) -> list[bytes]:
    """The blobs' contents, read in one `git cat-file --batch`."""
    raw = git(repo, "cat-file", "--batch", data=True, input=("\n".join(objects) + "\n").encode())
    out, at = [], 0
    for obj in objects:
        end = raw.index(b"\n", at)
        header = raw[at:end].split(b" ")
        if len(header) != 3 or header[0].decode() != obj:
            raise UsageError(f"{FLAG}: {repo}: git cat-file answered {raw[at:end][:80]!r} for object {obj}")
        size = int(header[2])
        out.append(raw[end + 1:end + 1 + size])
        at = end + 1 + size + 1
    return out


def _writable_and_retry(func, path, _exc) -> None:
    os.chmod(os.path.dirname(path), stat.S_IRWXU)
    func(path)


def plain_dir_state(folder: Path) -> dict:
    """For a plain --library-source DIR inside a git work tree (and not ignored by it): the HEAD
    commit and whether the tree was dirty (changes or untracked files under DIR), else {} (also
    where git is not installed: a plain DIR needs no git)."""
    try:
        return _plain_dir_state(folder)
    except UsageError:
        return {}


def _plain_dir_state(folder: Path) -> dict:
    if git(folder, "rev-parse", "--is-inside-work-tree", check=False) != "true\n":
        return {}
    if git(folder, "check-ignore", "-q", ".", check=False) is not None:
        return {}            # an ignored folder of another repository (a crate in cryptobench's .cache)
    head = (git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False) or "").strip()
    if not HASH_RX.fullmatch(head):
        return {}
    status = git(folder, "status", "--porcelain", "--untracked-files=normal", "--", ".", check=False)
    return {"library_commit": head, "library_dirty": bool(status and status.strip())}


def checkout(repo: str, ref: str, commit: str, cache: Path) -> tuple[Path, dict]:
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
    return export_tree(lib, cache), conditions_of(lib)


def conditions_of(lib: LibraryRef) -> dict:
    """The build conditions' keys for a library measured at a commit (docs/schema.md)."""
    return {"library_commit": lib.commit, "library_ref": lib.ref, "library_repo": lib.repo,
            **({"library_repo_folder": lib.prefix} if lib.prefix else {})}
