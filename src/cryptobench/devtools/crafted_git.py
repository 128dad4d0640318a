"""Git objects written by hand, as a hostile contributor writes them: trees of exactly the entries
given, in the order given, unchecked (`hash-object --literally` skips what `git fsck` would flag:
duplicate names, '.', '..', '.git', modes git never writes). What tests/test_library_ref_hostile.py
and bench/untrusted_cases_repo.py build their crafted commits with."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

# an identity and no system or global configuration: the same objects on every machine
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "h",
       "GIT_AUTHOR_EMAIL": "h@h", "GIT_COMMITTER_NAME": "h", "GIT_COMMITTER_EMAIL": "h@h"}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, env=ENV,
                          input=input).stdout.decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data)


def zero_blob(repo: Path, size: int) -> str:
    """A blob of `size` zero bytes (a whole number of MiB), streamed into git: compressed, a few
    hundred KB in the repository, however large its export would be."""
    proc = subprocess.Popen(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=ENV)
    chunk = b"\0" * (1 << 20)
    for _ in range(size >> 20):
        proc.stdin.write(chunk)
    out, _ = proc.communicate()
    return out.decode().strip()


def tree(repo: Path, entries: list[tuple[str, bytes, str]]) -> str:
    """A tree object of exactly these (mode, name, object) entries, in this order, unchecked."""
    raw = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", input=raw)


def commit(repo: Path, tree_id: str) -> str:
    return git(repo, "commit-tree", tree_id, "-m", "crafted")


def bomb(repo: Path, fan_out: int = 10, levels: int = 7) -> str:
    """A "git bomb": `fan_out` entries naming one tree, `levels` deep: fan_out**levels paths."""
    level = tree(repo, [("100644", b"f", blob(repo, b"x"))])
    for _ in range(levels):
        level = tree(repo, [("40000", bytes([ord("a") + i]), level) for i in range(fan_out)])
    return level


def nested(repo: Path, depth: int, name: bytes = b"d") -> str:
    """A file `depth` folders of `name` deep."""
    level = tree(repo, [("100644", b"f.c", blob(repo, b"x"))])
    for _ in range(depth):
        level = tree(repo, [("40000", name, level)])
    return level


# every setting of a repository's configuration that can make git start a program, each naming the
# canary ({canary}: a program that records that it ran; {hooks}: a folder of canary hooks), and the
# transport settings a partial clone's lazy fetch of a missing object would use
CANARY_CONFIG = {
    "filter.evil.clean": "{canary} clean", "filter.evil.smudge": "{canary} smudge",
    "filter.evil.process": "{canary} process", "filter.evil.required": "true",
    "diff.evil.textconv": "{canary} textconv", "diff.evil.command": "{canary} diff", "diff.external": "{canary} ext",
    "core.fsmonitor": "{canary} fsmonitor", "core.hooksPath": "{hooks}", "core.pager": "{canary} pager",
    "pager.status": "{canary} pager", "credential.helper": "!{canary} credential", "core.sshCommand": "{canary} ssh",
    "gpg.program": "{canary} gpg", "log.showSignature": "true", "core.askPass": "{canary} askpass",
    "core.editor": "{canary} editor", "core.alternateRefsCommand": "{canary} alternate",
    "protocol.ext.allow": "always", "protocol.file.allow": "always", "remote.origin.url": "ext::{canary} %S",
    "remote.origin.promisor": "true", "extensions.partialClone": "origin", "core.untrackedCache": "true",
}
HOOKS = ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "post-merge", "pre-auto-gc",
         "fsmonitor-watchman", "post-rewrite", "push-to-checkout")


def arm_canaries(repo: Path, canary: Path, marker: Path) -> None:
    """Make `repo` a copied repository that names `canary` wherever its configuration can: every key
    of CANARY_CONFIG in .git/config and in a file it includes, attributes that route every file
    through the filter and diff driver (committed), and every hook (in .git/hooks and in the
    hooksPath folder) a script that writes `marker`. `canary` must write `marker` when it runs."""
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")        # before the hooks and filters are armed
    hooks = repo.parent / f"{repo.name}-hooks"
    hooks.mkdir(exist_ok=True)
    for folder in (hooks, repo / ".git" / "hooks"):
        for name in HOOKS:
            (folder / name).write_text(f"#!/bin/sh\necho hook {name} >> '{marker}'\n")
            (folder / name).chmod(0o755)
    included = repo.parent / f"{repo.name}-include.config"
    for key, value in CANARY_CONFIG.items():
        value = value.format(canary=canary, hooks=hooks)
        git(repo, "config", "--local", key, value)
        git(repo, "config", "--file", str(included), key, value)
    git(repo, "config", "--local", "include.path", str(included))
