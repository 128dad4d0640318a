"""The cases of bench/hostile_probe_untrusted.py for a library's git repository: `--library-source DIR@REF`
and a plain DIR (issue 43, classes 1-4). Each function takes the World and returns its Cases.

The repositories are made here as a hostile contributor would: commits whose trees are written
with `hash-object --literally` (which skips git fsck's checks) on top of Monocypher 4.0.2 (the
crate setup fetched), measured through `cryptobench run` on the simulator with the own-library
fixture's recipe. Every case has a cache of its own (CRYPTOBENCH_CACHE), and a host folder the
crafted commits aim at is watched."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from untrusted_core import Case, World, cli_argv  # noqa: E402  (untrusted_core puts src/ on the path)

from cryptobench.devtools.crafted_git import arm_canaries, blob, bomb, commit, git, nested, tree, zero_blob  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MONOCYPHER = ROOT / ".cache" / "crates" / "monocypher-sys-4.0.2" / "Monocypher"
RECIPE = ROOT / "tests" / "fixtures" / "own-library" / "recipe.toml"
CHILD = str(Path(__file__).resolve().parent / "untrusted_child.py")
def monocypher_repo(where: Path) -> Path:
    """Monocypher's src/ committed in a fresh repository (its `main`)."""
    repo = where
    if not repo.is_dir():
        shutil.copytree(MONOCYPHER / "src", repo / "src")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "monocypher 4.0.2")
    return repo


def run_argv(source: str, *extra: str) -> list[str]:
    return cli_argv("run", "--target", "sim:cortex-m0", "--device", "stm32f030", "--recipe", str(RECIPE),
                    "--library-source", source, "--op", "chacha20-poly1305-encrypt", "--param", "bytes=64",
                    "--param", "aad_bytes=0", "--quiet", *extra)


def _case(world: World, name: str, argv: list[str], fragment: str = "", *, rc=(2,), cache: str = "", **kw) -> Case:
    env = {"CRYPTOBENCH_CACHE": str(world.work / "caches" / (cache or name))}
    return Case("repository", name, argv, rc=rc, fragment=fragment, env={**env, **kw.pop("env", {})}, **kw)


def _figures(text: str) -> list:
    """Each result's simulated time and per-function code size: what a tampered tree would move."""
    return [(r["op"], r["params"], r.get("time_s", {}).get("median"), r.get("code_size", {}).get("functions"))
            for r in json.loads(text)["results"]]


# ------------------------------------------------------------------------------------------------
def repository(world: World) -> list[Case]:
    if not MONOCYPHER.is_dir():
        raise SystemExit(f"the repository cases need Monocypher's crate in {MONOCYPHER.parent}: run ./setup.sh")
    base = world.work / "repos"
    base.mkdir(exist_ok=True)
    mono = monocypher_repo(base / "monocypher")
    victim = world.work / "host-victim"
    victim.mkdir(exist_ok=True)
    (victim / "keep.txt").write_text("host file\n")
    (victim / "keep.txt").chmod(0o444)
    world.watched.append(victim)
    src_entry = ("40000", b"src", git(mono, "rev-parse", "HEAD:src"))
    cases: list[Case] = []

    def crafted(name: str, entries, fragment: str, **kw) -> None:
        cid = commit(mono, tree(mono, [src_entry, *entries]))
        cases.append(_case(world, name, run_argv(f"{mono}@{cid}"), fragment, **kw))

    # class 1: writing outside the export
    link = ("120000", b"v", blob(mono, str(victim).encode()))
    inside = ("40000", b"v", tree(mono, [("100644", b"keep.txt", blob(mono, b"overwritten\n")),
                                         ("100755", b"evil.sh", blob(mono, b"#!/bin/sh\nid\n"))]))
    crafted("symlink-then-folder", [link, inside], "two entries named 'v'")
    crafted("folder-then-symlink", [inside, link], "two entries named 'v'")
    crafted("slash-in-a-name", [link, ("100644", b"v/keep.txt", blob(mono, b"overwritten\n"))],
            "two entries named 'v'")
    crafted("two-blobs-one-name", [("100644", b"x.c", blob(mono, b"1")), ("100644", b"x.c", blob(mono, b"2"))],
            "two entries named 'x.c'")
    crafted("symlink-src-over-a-tree", [("120000", b"src", blob(mono, str(victim).encode()))],
            "two entries named 'src'")
    for label, name in (("dot", b"."), ("dotdot", b".."), ("dot-git", b".git"), ("dot-git-upper", b".GIT"),
                        ("dot-git-trailing-dot", b".git."), ("dot-git-space", b".git "), ("short-name", b"GIT~1"),
                        ("dot-git-zwnj", ".g\u200cit".encode()), ("escape-in-name", b"\x1b]0;pwned\x07x.c"),
                        ("newline-in-name", b"a\nb.c")):
        crafted(f"name-{label}", [("100644", name, blob(mono, b"int x;\n"))], "a path git itself would refuse")
    hooks = tree(mono, [("100755", b"post-checkout", blob(mono, b"#!/bin/sh\nid\n"))])
    crafted("hooks-under-dot-git-upper", [("40000", b".Git", tree(mono, [("40000", b"hooks", hooks)]))],
            "a path git itself would refuse")
    crafted("empty-name", [("100644", b"", blob(mono, b"x"))], "empty filename")
    crafted("long-name", [("100644", b"n" * 300, blob(mono, b"x"))], "a name over 255 bytes")
    crafted("nested-100-deep", [("40000", b"deep", nested(mono, 100))], "past the export's cap of 64 (CRYPTOBENCH_EXPORT_MAX_DEPTH")
    crafted("path-over-the-cap", [("40000", b"long", nested(mono, 8, b"p" * 250))], "a path over 1024 bytes, the export's cap")
    crafted("symlink-over-path-max", [("120000", b"l", blob(mono, b"x" * 5000))], "a symlink's target is at most 4096")
    crafted("mode-100600-read-as-gits-100644", [("100600", b"m.c", blob(mono, b"x"))], "", rc=(0,), one_line=False)
    # class 4: size
    crafted("git-bomb-10M-paths", [("40000", b"bomb", bomb(mono))], "more than 100,000 files, the export's cap")
    big = zero_blob(mono, 1536 << 20)
    crafted("blob-1.5GB", [("100644", b"big.bin", big)], "MiB, the export's cap (CRYPTOBENCH_EXPORT_MAX_BYTES")
    cid = commit(mono, tree(mono, [src_entry, ("100644", b"big.bin", zero_blob(mono, 300 << 20))]))
    cases.append(_case(world, "blob-300MB-streamed", [sys.executable, CHILD, "--rss", "--", *run_argv(f"{mono}@{cid}")],
                       rc=(0,), one_line=False, env={"CRYPTOBENCH_EXPORT_MAX_BYTES": str(1 << 30)},
                       check=lambda proc, scratch: _rss_below(proc, 250)))
    cid = commit(mono, tree(mono, [src_entry, ("100644", b"pad.bin", zero_blob(mono, 8 << 20))]))
    cases.append(_case(world, "full-disk", [sys.executable, CHILD, "--fsize", str(1 << 20), "--",
                                            *run_argv(f"{mono}@{cid}")],
                       fragment="could not write the commit's tree into"))
    # refs
    amb = monocypher_repo(base / "ambiguous")
    git(amb, "tag", "-f", "release")
    git(amb, "branch", "-f", "release")
    cases.append(_case(world, "tag-and-branch", run_argv(f"{amb}@release"), "'release' names 2 things"))
    cases.append(_case(world, "full-ref-name", run_argv(f"{amb}@refs/tags/release"), rc=(0,), one_line=False))
    head = git(amb, "rev-parse", "HEAD")
    git(amb, "branch", "-f", head[:7], "HEAD")
    cases.append(_case(world, "branch-spelt-as-a-hash", run_argv(f"{amb}@{head[:7]}"),
                       f"'{head[:7]}' names 2 things"))
    for label, ref in (("upload-pack", "--upload-pack=id"), ("range", "main..main"), ("message", ":/monocypher"),
                       ("tree-of", "main^{tree}")):
        cases.append(_case(world, f"ref-{label}", run_argv(f"{amb}@{ref}"), "--library-source"))
    # class 3: a cached export changed after the fact
    cases.append(_tampered_cache(world, mono))
    # a killed export's leftovers
    cases.append(_abandoned_export(world, mono))
    # class 2: a copied repository's configuration names programs
    cases += _copied_repository(world, base)
    return cases


def _rss_below(proc, mib: int) -> str:
    found = re.search(r"max-rss-mib (\d+)", proc.stdout)
    if not found:
        return "no max-rss line"
    return "" if int(found.group(1)) < mib else f"peak memory {found.group(1)} MiB for a 300 MB blob"


def _tampered_cache(world: World, mono: Path) -> Case:
    """A loop added to one function of the commit's tree in the cache after its first run: the
    second run must export the commit again and measure the commit's code (same cycles)."""
    cache = world.work / "caches" / "tampered"
    first = world.work / "tampered-first.json"

    def before() -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CRYPTOBENCH_CACHE": str(cache),
               "CRYPTOBENCH_DB": str(world.work / "tampered.sqlite")}
        subprocess.run(run_argv(f"{mono}@main", "--json", str(first)), check=True, env=env, capture_output=True)
        src = cache / "library-commits" / git(mono, "rev-parse", "main") / "src" / "monocypher.c"
        src.chmod(0o644)
        text = src.read_text()
        src.write_text(text.replace("\tu8 auth_key[64]; // the last 32 bytes are used for rekeying.\n",
                                    "\tu8 auth_key[64]; // the last 32 bytes are used for rekeying.\n"
                                    "\tfor (volatile int i = 0; i < 2000; i++) {}\n", 1))
        src.chmod(0o444)

    def check(proc, scratch: Path) -> str:
        if "exported again" not in proc.stdout + proc.stderr:
            return "the tampered tree was not noticed"
        want, got = _figures(first.read_text()), _figures((scratch / "second.json").read_text())
        return "" if want and want == got else f"figures {str(got)[:200]} after tampering, {str(want)[:200]} before"

    return _case(world, "cache-tampered", run_argv(f"{mono}@main", "--json", "second.json"), rc=(0,),
                 cache="tampered", one_line=False, before=before, check=check, allowed_outputs=("second.json",))


def _abandoned_export(world: World, mono: Path) -> Case:
    cache = world.work / "caches" / "abandoned"
    left = cache / "library-commits" / ".0123456789ab-killed"

    def before() -> None:
        (left / "src").mkdir(parents=True, exist_ok=True)
        (left / "src" / "half.c").write_text("int half")
        os.utime(left, (0, 0))

    return _case(world, "killed-export-removed", run_argv(f"{mono}@main"), rc=(0,), cache="abandoned",
                 one_line=False, before=before,
                 check=lambda proc, scratch: "the killed export's folder is still there" if left.exists() else "")


def _copied_repository(world: World, base: Path) -> list[Case]:
    """Monocypher as a copied repository whose .git/config (and a file it includes) names the canary
    for every setting that can start a program, with attributes routing every file through the
    filter and diff driver, every hook the canary, a changed file (a status would run the clean
    filter on it) and a missing object (a partial clone's lazy fetch would start the remote)."""
    repo = base / "copied"
    canary = world.canary_bin / "git-canary"
    canary.write_text(f"#!/bin/sh\necho \"git-canary $*\" > '{world.marker}'\ncat\n")
    canary.chmod(0o755)
    if not repo.is_dir():
        monocypher_repo(repo)
        arm_canaries(repo, canary, world.marker)
        with open(repo / "src" / "monocypher.c", "a") as f:
            f.write("\n/* changed here */\n")
        os.utime(repo / ".git" / "index", (0, 0))
        lost = blob(repo, b"int lost;\n")
        os.remove(repo / ".git" / "objects" / lost[:2] / lost[2:])
        git(repo, "branch", "lazy", commit(repo, tree(repo, [("40000", b"src", git(repo, "rev-parse", "HEAD:src")),
                                                              ("100644", b"lost.c", lost)])))

    def dirty(proc, scratch: Path) -> str:
        doc = json.loads((scratch / "plain.json").read_text())
        return "" if '"library_dirty": true' in json.dumps(doc) else "the changed work tree was not recorded as dirty"

    return [
        _case(world, "copied-plain-dir", run_argv(str(repo), "--json", "plain.json"), rc=(0,), one_line=False,
              check=dirty, allowed_outputs=("plain.json",)),
        _case(world, "copied-at-ref", run_argv(f"{repo}@main"), rc=(0,), one_line=False),
        _case(world, "copied-lazy-fetch", run_argv(f"{repo}@lazy"), "--library-source"),
    ]


CLASSES = {"repository": repository}
