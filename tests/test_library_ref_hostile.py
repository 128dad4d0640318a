"""A library's repository is someone else's data (issue 43; docs/promises.md, "A library's repository").

Commits made here by hand, as a hostile contributor would (tree objects written with
`hash-object --literally`, which skips the checks `git fsck` makes): no export writes outside its
folder, whatever the tree holds (a symlink and a folder of one name, '.', '..', '.git' spelt in
other ways, ten million paths from 200 bytes, deep nesting, large blobs); a full disk or a killed
export costs one line and leaves nothing behind; a ref naming two things is refused; a cached
export changed after the fact is exported again before it is used; and reading a copied
repository (a plain DIR, DIR@REF) starts none of the programs its configuration names."""
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

from cryptobench.core.errors import UsageError
from cryptobench.devtools.crafted_git import arm_canaries, blob, bomb, commit, git, nested, tree
from cryptobench.targets.mcu.firmware.library_ref import (LibraryRef, commits_dir, export_tree, plain_dir_state,
                                                           resolve_ref)

# every test makes or reads a repository with git (devtools/crafted_git.py, the code under test)
pytestmark = pytest.mark.subprocess


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "lib"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "a.c").write_text("int a;\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "one")
    return r


def export(repo: Path, commit_id: str, cache: Path, log=None) -> Path:
    return export_tree(LibraryRef(repo=str(repo), ref=commit_id, commit=commit_id), cache,
                       log or (lambda line: None))


def host_folder(tmp_path: Path) -> Path:
    """A host folder a crafted commit aims at: a read-only file it must never overwrite."""
    victim = tmp_path / "host"
    victim.mkdir()
    (victim / "keep.txt").write_text("host file\n")
    (victim / "keep.txt").chmod(0o444)
    return victim


def assert_untouched(victim: Path) -> None:
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "host file\n"


# ------------------------------------------------------------------------------------ writing outside
@pytest.mark.parametrize("order", ["symlink-first", "tree-first"])
def test_a_symlink_and_a_folder_of_one_name_are_refused_and_nothing_is_written_through(repo, tmp_path, order):
    victim = host_folder(tmp_path)
    link = ("120000", b"v", blob(repo, str(victim).encode()))
    inner = ("40000", b"v", tree(repo, [("100644", b"keep.txt", blob(repo, b"pwned\n")),
                                        ("100755", b"evil.sh", blob(repo, b"#!/bin/sh\nid\n"))]))
    crafted = commit(repo, tree(repo, [link, inner] if order == "symlink-first" else [inner, link]))
    with pytest.raises(UsageError, match="two entries named 'v'"):
        export(repo, crafted, tmp_path / "cache")
    assert_untouched(victim)
    assert not (commits_dir(tmp_path / "cache") / crafted).exists()
    assert not list(commits_dir(tmp_path / "cache").iterdir())        # its temporary folder went too


def test_two_blobs_of_one_name_are_refused(repo, tmp_path):
    one, two = blob(repo, b"1\n"), blob(repo, b"2\n")
    crafted = commit(repo, tree(repo, [("100644", b"x.c", one), ("100644", b"x.c", two)]))
    with pytest.raises(UsageError, match="two entries named 'x.c'"):
        export(repo, crafted, tmp_path / "cache")


def test_a_name_holding_a_slash_cannot_stand_for_a_folder(repo, tmp_path):
    victim = host_folder(tmp_path)
    crafted = commit(repo, tree(repo, [("120000", b"v", blob(repo, str(victim).encode())),
                                       ("100644", b"v/keep.txt", blob(repo, b"pwned\n"))]))
    with pytest.raises(UsageError, match="two entries named 'v'"):
        export(repo, crafted, tmp_path / "cache")
    assert_untouched(victim)


@pytest.mark.parametrize("name", [b".", b"..", b".git", b".GIT", b".Git.", b".git ", b"git~1",
                                  ".g\u200cit".encode(), b"\x1b[31mred", b"tab\there", b""])
def test_names_git_would_refuse_are_refused(repo, tmp_path, name):
    crafted = commit(repo, tree(repo, [("100644", name, blob(repo, b"x\n"))]))
    with pytest.raises(UsageError, match="a path git itself would refuse|empty filename in tree entry"):
        export(repo, crafted, tmp_path / "cache")
    assert not list(commits_dir(tmp_path / "cache").iterdir())


def test_a_name_inside_a_folder_named_dot_git_is_refused(repo, tmp_path):
    hooks = tree(repo, [("100755", b"post-checkout", blob(repo, b"#!/bin/sh\nid\n"))])
    crafted = commit(repo, tree(repo, [("40000", b".GIT", tree(repo, [("40000", b"hooks", hooks)]))]))
    with pytest.raises(UsageError, match="a path git itself would refuse: '.GIT/hooks/post-checkout'"):
        export(repo, crafted, tmp_path / "cache")


def test_a_symlink_leading_out_is_written_as_a_symlink_and_never_followed(repo, tmp_path):
    victim = host_folder(tmp_path)
    crafted = commit(repo, tree(repo, [("120000", b"out", blob(repo, str(victim / "keep.txt").encode())),
                                       ("100644", b"src.c", blob(repo, b"int x;\n"))]))
    out = export(repo, crafted, tmp_path / "cache")
    assert os.readlink(out / "out") == str(victim / "keep.txt")
    assert_untouched(victim)


# ------------------------------------------------------------------------------------ caps
def test_a_git_bomb_stops_at_the_file_cap_with_its_name(repo, tmp_path):
    """Ten entries of one tree, seven levels deep: 10^7 paths from a few hundred bytes of objects."""
    crafted = commit(repo, bomb(repo))
    with pytest.raises(UsageError, match=r"more than 100,000 files, the export's cap \(CRYPTOBENCH_EXPORT_MAX_FILES"):
        export(repo, crafted, tmp_path / "cache")
    assert not list(commits_dir(tmp_path / "cache").iterdir())


def test_deep_nesting_and_long_paths_stop_at_their_caps(repo, tmp_path):
    with pytest.raises(UsageError, match="nests folders 70 deep, past the export's cap of 64"):
        export(repo, commit(repo, nested(repo, 70)), tmp_path / "cache")
    with pytest.raises(UsageError, match="a path over 1024 bytes, the export's cap"):
        export(repo, commit(repo, nested(repo, 6, b"n" * 200)), tmp_path / "cache")
    with pytest.raises(UsageError, match="a name over 255 bytes"):
        export(repo, commit(repo, tree(repo, [("100644", b"n" * 300, blob(repo, b"x"))])), tmp_path / "cache")


def test_the_byte_cap_is_checked_before_a_byte_is_written(repo, tmp_path, monkeypatch):
    crafted = commit(repo, tree(repo, [("100644", b"big.bin", blob(repo, b"\0" * 5000))]))
    monkeypatch.setenv("CRYPTOBENCH_EXPORT_MAX_BYTES", "4096")
    with pytest.raises(UsageError, match="more than 0 MiB, the export's cap .CRYPTOBENCH_EXPORT_MAX_BYTES"):
        export(repo, crafted, tmp_path / "cache")
    monkeypatch.setenv("CRYPTOBENCH_EXPORT_MAX_BYTES", "lots")
    with pytest.raises(UsageError, match="CRYPTOBENCH_EXPORT_MAX_BYTES='lots': expected a whole number"):
        export(repo, crafted, tmp_path / "cache")


def export_in_child(repo: Path, crafted: str, cache: Path, limits: str) -> subprocess.CompletedProcess:
    """export_tree in a child process under resource `limits` (Python statements run first); a
    UsageError is printed and exit 2, the tree's big.bin size printed otherwise."""
    code = ("import resource, signal, sys; from pathlib import Path\n" + limits + "\n"
            "from cryptobench.core.errors import UsageError\n"
            "from cryptobench.targets.mcu.firmware.library_ref import LibraryRef, export_tree\n"
            f"try: t = export_tree(LibraryRef(repo={str(repo)!r}, ref='x', commit={crafted!r}), Path({str(cache)!r}))\n"
            "except UsageError as e: print(e); sys.exit(2)\n"
            "print((t / 'big.bin').stat().st_size)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_a_large_blob_is_streamed_not_held(repo, tmp_path):
    """64 MiB of one blob, exported by a child whose address space could not hold it twice."""
    crafted = commit(repo, tree(repo, [("100644", b"big.bin", blob(repo, b"\0" * (64 << 20)))]))
    proc = export_in_child(repo, crafted, tmp_path, "resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(64 << 20)


def test_a_full_disk_is_one_line_and_leaves_no_folder(repo, tmp_path):
    """RLIMIT_FSIZE makes a write fail as a full disk does (EFBIG rather than ENOSPC: both OSErrors)."""
    crafted = commit(repo, tree(repo, [("100644", b"big.bin", blob(repo, b"\1" * 200_000))]))
    proc = export_in_child(repo, crafted, tmp_path, "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
                           "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))")
    assert proc.returncode == 2, proc.stderr
    assert "could not write the commit's tree into" in proc.stdout and "File too large" in proc.stdout
    assert len(proc.stdout.strip().splitlines()) == 1
    assert not list(commits_dir(tmp_path).iterdir())


# ------------------------------------------------------------------------------------ killed exports
def test_an_export_a_killed_process_left_is_removed_and_a_living_ones_kept(repo, tmp_path):
    cache = tmp_path / "cache"
    folder = commits_dir(cache)
    folder.mkdir(parents=True)
    dead = folder / ".0123456789ab-dead"
    (dead / "src").mkdir(parents=True)
    (dead / "src" / "half.c").write_text("int half")
    (dead / "src" / "half.c").chmod(0o444)
    (dead / "src").chmod(0o555)
    living = folder / ".ba9876543210-live"
    living.mkdir()
    old = time.time() - 3600
    os.utime(dead, (old, old))
    os.utime(living, (old, old))
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], "
                               "os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); "
                               "time.sleep(600)", str(living)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        export(repo, git(repo, "rev-parse", "HEAD"), cache)
        assert not dead.exists()
        assert living.is_dir()
    finally:
        holder.kill()
        holder.wait()


def test_a_kill_during_an_export_leaves_what_the_next_run_removes(repo, tmp_path):
    big = commit(repo, tree(repo, [("100644", b"f%d.c" % i, blob(repo, b"x" * 100_000 + b"%d" % i))
                                   for i in range(300)]))
    code = ("from pathlib import Path; from cryptobench.targets.mcu.firmware.library_ref import LibraryRef, "
            f"export_tree; export_tree(LibraryRef(repo={str(repo)!r}, ref='x', commit={big!r}), Path({str(tmp_path)!r}))")
    child = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    folder = commits_dir(tmp_path)
    while child.poll() is None and not (folder.is_dir() and any(p.name.startswith(".") for p in folder.iterdir())):
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    for left in folder.iterdir():          # as if the kill was long ago
        os.utime(left, (time.time() - 3600,) * 2)
    out = export(repo, git(repo, "rev-parse", "HEAD"), tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == [out.name]


# ------------------------------------------------------------------------------------ refs
def test_a_tag_and_a_branch_of_one_name_are_refused_naming_both(repo):
    first = git(repo, "rev-parse", "HEAD")
    (repo / "a.c").write_text("int a = 2;\n")
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "tag", "release", first)
    git(repo, "branch", "release")
    with pytest.raises(UsageError, match="'release' names 2 things in lib: refs/heads/release, refs/tags/release"):
        resolve_ref(f"{repo}@release")
    assert resolve_ref(f"{repo}@refs/heads/release").commit == git(repo, "rev-parse", "HEAD")
    assert resolve_ref(f"{repo}@refs/tags/release").commit == first


def test_a_branch_named_like_a_commits_hash_is_refused(repo):
    first = git(repo, "rev-parse", "HEAD")
    (repo / "a.c").write_text("int a = 2;\n")
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "branch", first[:8])           # a branch spelt as the first commit's short hash, at the second
    with pytest.raises(UsageError, match=f"'{first[:8]}' names 2 things in lib: refs/heads/{first[:8]}, commit"):
        resolve_ref(f"{repo}@{first[:8]}")
    assert resolve_ref(f"{repo}@{first}").commit == first


# ------------------------------------------------------------------------------------ the cache
def test_a_cached_tree_changed_afterwards_is_exported_again(repo, tmp_path):
    head = git(repo, "rev-parse", "HEAD")
    out = export(repo, head, tmp_path)
    lines = []
    assert export(repo, head, tmp_path, lines.append) == out and lines == []       # unchanged: used as it is
    for tamper in ("content", "extra", "mode", "symlink", "missing"):
        target = out / "a.c"
        out.chmod(0o755)
        if tamper == "content":
            target.chmod(0o644)
            target.write_text("int a; void loop(void) { for (;;); }\n")
            target.chmod(0o444)
        elif tamper == "extra":
            (out / "b.c").write_text("int b;\n")
        elif tamper == "mode":
            target.chmod(0o555)
        elif tamper == "symlink":
            target.unlink()
            os.symlink("/etc/hostname", target)
        else:
            target.unlink()
        lines.clear()
        assert export(repo, head, tmp_path, lines.append) == out
        assert len(lines) == 1 and "differs from the commit" in lines[0] and "exported again" in lines[0], tamper
        assert sorted(p.name for p in out.iterdir()) == ["a.c"] and (out / "a.c").read_text() == "int a;\n"
        assert stat.S_IMODE((out / "a.c").lstat().st_mode) == 0o444


# ------------------------------------------------------------------------------------ programs
@pytest.fixture
def copied(tmp_path, repo):
    """A repository as copied from someone else: its own .git/config (and a file it includes) names
    a canary program for every setting that can start one, its attributes route every file through
    the filter and diff driver, and every hook is the canary; a file is changed (so a `status`
    would run the clean filter) and one is new."""
    marker = tmp_path / "RAN"
    canary = tmp_path / "canary.sh"
    canary.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\ncat\n")
    canary.chmod(0o755)
    arm_canaries(repo, canary, marker)
    (repo / "a.c").write_text("int a = 3;\n")
    (repo / "new.c").write_text("int n;\n")
    os.utime(repo / ".git" / "index", (0, 0))         # an old index: status would refresh it (and hash with filters)
    return repo, marker


def test_reading_a_copied_repository_starts_none_of_its_programs(copied, tmp_path):
    repo, marker = copied
    state = plain_dir_state(repo)
    assert state["library_dirty"] is True
    lib = resolve_ref(f"{repo}@main")
    export(repo, lib.commit, tmp_path / "cache")
    export(repo, lib.commit, tmp_path / "cache")                     # the check before reuse
    missing = blob(repo, b"never stored\n")
    os.remove(repo / ".git" / "objects" / missing[:2] / missing[2:])   # a partial clone's missing object
    crafted = commit(repo, tree(repo, [("100644", b"m.c", missing)]))
    with pytest.raises(UsageError):
        export(repo, crafted, tmp_path / "cache")                    # a lazy fetch would start the remote's ext::
    from cryptobench.analysis.history import commit_order
    commit_order([lib.commit], str(repo))
    assert not marker.exists(), marker.read_text()


def test_a_plain_dir_is_clean_only_when_its_bytes_are_the_commits(repo, tmp_path):
    head = git(repo, "rev-parse", "HEAD")
    assert plain_dir_state(repo) == {"library_commit": head, "library_dirty": False}
    (repo / ".gitignore").write_text("build/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "build").mkdir()
    (repo / "build" / "a.o").write_bytes(b"\x7fELF")
    assert plain_dir_state(repo)["library_dirty"] is False           # an ignored build folder is not a change
    (repo / "a.c").chmod(0o755)
    assert plain_dir_state(repo)["library_dirty"] is True            # a mode git records
    (repo / "a.c").chmod(0o644)
    (repo / "sub").mkdir()
    (repo / "sub" / "x.c").write_text("int x;\n")
    assert plain_dir_state(repo)["library_dirty"] is True            # a file the commit lacks
    assert plain_dir_state(repo / "sub")["library_dirty"] is True
