"""A library at a commit: `--library-source DIR@REF` (docs/own-library.md, "A library at a commit";
targets/mcu/firmware/library_ref.py). A git repository made here, with two commits of a tiny
library: each ref is exported into the cache as its own tree, its full commit recorded; bad refs,
option-like refs and a folder that is no repository are refused in one line; the user's
repository is left exactly as it was. The slow test builds and runs the library at two commits
on the simulator and finds each commit in its run's build conditions."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.library_ref import (checkout, export_tree, plain_dir_state, resolve_ref,
                                                           split_source)

FIXTURE = ROOT / "tests" / "fixtures" / "own-library"
MONOCYPHER = Path(os.environ.get("CRYPTOBENCH_CACHE", ROOT / ".cache")) / "crates" / "monocypher-sys-4.0.2" / "Monocypher"
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t",
       "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=ENV).stdout.strip()


def snapshot(repo: Path) -> dict:
    """Every file under .git with its content (what 'not modified' means), and the status."""
    files = {str(p.relative_to(repo)): p.read_bytes() for p in sorted((repo / ".git").rglob("*")) if p.is_file()}
    return {"files": files, "status": git(repo, "status", "--porcelain", "--untracked-files=all")}


@pytest.fixture
def repo(tmp_path):
    """A user's library repository: v1 (tiny.c says 1), then v2 (tiny.c says 2, a new file), a tag
    on each and a branch; the hook the repository carries must never run."""
    r = tmp_path / "tiny"
    (r / "src").mkdir(parents=True)
    git(r, "init", "-q", "-b", "main")
    (r / "src" / "tiny.c").write_text("int tiny(void) { return 1; }\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "v1")
    git(r, "tag", "v1")
    (r / "src" / "tiny.c").write_text("int tiny(void) { return 2; }\n")
    (r / "src" / "extra.h").write_text("#define EXTRA 1\n")
    os.symlink("tiny.c", r / "src" / "link.c")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "v2")
    git(r, "tag", "v2")
    hook = r / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path / 'HOOK-RAN'}\n")
    hook.chmod(0o755)
    return r


def test_split_source_keeps_a_folder_with_at_in_its_name(tmp_path):
    odd = tmp_path / "lib@2"
    odd.mkdir()
    assert split_source(str(odd)) == (str(odd), None)
    assert split_source(str(tmp_path / "lib@v1")) == (str(tmp_path / "lib"), "v1")
    assert split_source("plain") == ("plain", None)


def test_two_refs_give_two_trees_with_their_commits(repo, tmp_path):
    before = snapshot(repo)
    cache = tmp_path / "cache"
    v1, v2 = resolve_ref(f"{repo}@v1"), resolve_ref(f"{repo}@main")
    assert v1.commit == git(repo, "rev-parse", "v1") and len(v1.commit) == 40
    assert v2.commit == git(repo, "rev-parse", "v2") and v2.ref == "main" and v2.repo == str(repo.resolve())
    short = resolve_ref(f"{repo}@{v1.commit[:10]}")          # an abbreviated commit resolves to the full hash
    assert short.commit == v1.commit
    t1, t2 = export_tree(v1, cache), export_tree(v2, cache)
    assert t1 == cache / "library-commits" / v1.commit and t2 == cache / "library-commits" / v2.commit
    assert (t1 / "src" / "tiny.c").read_text() == "int tiny(void) { return 1; }\n"
    assert not (t1 / "src" / "extra.h").exists()
    assert (t2 / "src" / "tiny.c").read_text() == "int tiny(void) { return 2; }\n"
    assert os.readlink(t2 / "src" / "link.c") == "tiny.c"
    assert not os.access(t2 / "src" / "tiny.c", os.W_OK) or os.geteuid() == 0    # read-only data
    assert export_tree(v1, cache) == t1                      # the same commit: the same tree, not exported again
    assert not (tmp_path / "HOOK-RAN").exists()
    assert snapshot(repo) == before                          # no worktree entry, no index write, no new ref
    assert not (repo / ".git" / "worktrees").exists()


def test_checkout_records_the_commit_and_the_ref(repo, tmp_path):
    at = resolve_ref(f"{repo}@v2")
    tree, cond = checkout(at.repo, at.ref, at.commit, tmp_path / "cache")
    assert cond == {"library_commit": at.commit, "library_ref": "v2", "library_repo": str(repo.resolve())}
    assert (tree / "src" / "tiny.c").exists()


def test_a_folder_inside_the_repository_is_the_library_tree(repo, tmp_path):
    at = resolve_ref(f"{repo / 'src'}@v1")
    assert at.prefix == "src"
    tree = export_tree(at, tmp_path / "cache")
    assert (tree / "tiny.c").read_text().endswith("return 1; }\n")


@pytest.mark.parametrize("ref, expected", [
    ("v9", "no commit 'v9' in"),
    ("-rf", "no leading '-'"),
    ("--output=/tmp/x", "no leading '-'"),
    ("", "expected DIR@REF"),
    ("a b", "no spaces"),
])
def test_bad_refs_are_refused_in_one_line(repo, ref, expected):
    with pytest.raises(UsageError) as e:
        resolve_ref(f"{repo}@{ref}")
    msg = str(e.value)
    assert msg.startswith(f"--library-source: {repo}@") and expected in msg and "\n" not in msg


@pytest.mark.subprocess
def test_not_a_repository_and_no_folder_are_refused(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError, match=r"^--library-source: .*plain@v1: .*plain is not a git repository"):
        resolve_ref(f"{plain}@v1")
    with pytest.raises(UsageError, match=r"^--library-source: .*nothing@v1: .*is not a directory"):
        resolve_ref(f"{tmp_path / 'nothing'}@v1")


def test_the_environment_cannot_point_git_elsewhere(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))       # would make git read another repository
    assert resolve_ref(f"{repo}@v1").commit == git(repo, "--git-dir", str(repo / ".git"), "rev-parse", "v1")


def test_plain_dir_records_head_and_dirtiness(repo, tmp_path):
    assert plain_dir_state(repo) == {"library_commit": git(repo, "rev-parse", "HEAD"), "library_dirty": False}
    (repo / "src" / "tiny.c").write_text("int tiny(void) { return 3; }\n")
    assert plain_dir_state(repo)["library_dirty"] is True
    plain = tmp_path / "plain"
    plain.mkdir()
    assert plain_dir_state(plain) == {}
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("vendor/\n")
    (repo / "vendor").mkdir()
    (repo / "vendor" / "x.c").write_text("int x;\n")
    assert plain_dir_state(repo / "vendor") == {}          # an ignored folder (a crate in a cache) is no commit of it


def test_the_command_line_refuses_a_bad_ref_in_one_line(repo, tmp_path):
    proc = cli("run", "--target", "sim:cortex-m0", "--device", "stm32f030", "--recipe",
               str(FIXTURE / "recipe.toml"), "--library-source", f"{repo}@nope", "--op", "chacha20-poly1305-encrypt",
               "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"cryptobench: error: --library-source: {repo}@nope: no commit 'nope' in {repo}"


@pytest.mark.e2e
@pytest.mark.skipif(not MONOCYPHER.is_dir(), reason="needs ./setup.sh's Monocypher crate in .cache/crates")
def test_a_library_at_two_commits_on_the_simulator(tmp_path):
    """Monocypher committed twice (the second commit changes the code: a define that unrolls
    nothing, but a different tree); each ref builds from its own exported tree, and each run's
    build conditions name its commit and ref."""
    lib = tmp_path / "mono"
    shutil.copytree(MONOCYPHER, lib)
    git(lib, "init", "-q", "-b", "main")
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "as released")
    src = lib / "src" / "monocypher.c"
    src.write_text(src.read_text() + "\n/* a second commit */\nint mono_second_commit(void) { return 2; }\n")
    git(lib, "commit", "-q", "-am", "second")
    home = tmp_path / "my-library"
    shutil.copytree(FIXTURE, home)
    before = snapshot(lib)
    builds = {}
    for ref in ("HEAD~1", "main"):
        out = tmp_path / f"{ref.replace('~', '-')}.json"
        proc = cli("run", "--target", "sim:cortex-m0", "--device", "stm32f030", "--recipe", str(home / "recipe.toml"),
                   "--library-source", f"{lib}@{ref}", "--op", "chacha20-poly1305-encrypt", "--param", "bytes=64",
                   "--param", "aad_bytes=0", "--repeat", "3", "--db", str(tmp_path / "db.sqlite"), "--json", str(out),
                   "--quiet", env={"CRYPTOBENCH_CACHE": str(tmp_path / "cache")})
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(out.read_text())
        assert [c["status"] for c in doc["results"]] == ["ok"]
        builds[ref] = doc["conditions"]["builds"]["mono-user"]
    first, second = git(lib, "rev-parse", "HEAD~1"), git(lib, "rev-parse", "main")
    assert builds["HEAD~1"]["library_commit"] == first and builds["HEAD~1"]["library_ref"] == "HEAD~1"
    assert builds["main"]["library_commit"] == second and builds["main"]["library_repo"] == str(lib.resolve())
    assert builds["HEAD~1"]["library_source"] == str(tmp_path / "cache" / "library-commits" / first)
    assert builds["main"]["library_source"] == str(tmp_path / "cache" / "library-commits" / second)
    assert snapshot(lib) == before
