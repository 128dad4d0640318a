"""Library recipes: which sources of a crypto library to build for a microcontroller, and which
catalog ops its glue provides. Recipes are data (src/cryptobench/targets/mcu/firmware/recipes/*.toml); a user may point
`--recipe FILE --library-source DIR` at their own tree (docs/own-library.md). Every error names the
file, the line, the key and what was expected.

Where paths lead (docs/own-library.md, "Paths"):
* `glue` and `config_dir` are relative to the recipe's home: the folder of the recipe file, except
  for the bundled recipes (src/cryptobench/targets/mcu/firmware/recipes/), whose home is harness/firmware; a path that
  starts with 'harness:' names a file of harness/firmware from any recipe (a bundled glue);
* `sources` and `include_dirs` are relative to the library tree: --library-source DIR, else the
  crate's `root` inside the unpacked crate, else (no crate) `root` inside the recipe's home;
* glue and config_dir, once symlinks are followed, must stay inside the recipe's home; sources
  and include_dirs inside the library tree (or the recipe's home).

A recipe may extend one other recipe beside it (`extends = "FILE.toml"`, docs/own-library.md,
"One build in several modes"): that recipe's document with this one's [library] keys and [ops] /
[unavailable] entries in their place; an error in a key it did not set names the other file."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ....catalog.ops import OPS
from ....catalog.vector_check import DRBG_CONSTRUCTIONS
from ....core.errors import UsageError
from ....core.files import read_toml, read_utf8, toml_line
from ....core.paths import REPO_ROOT
from ....core.printable import printable, quoted
from ....core.processes import child_environment
from .. import sim
from .cflags import define_problem, flag_problem, include_dir

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
FIRMWARE_DIR = REPO_ROOT / "harness" / "firmware"
LIBRARY_KEYS = {"name", "version", "crate", "crate_version", "sdist", "sdist_version", "root", "license", "glue",
                "config_dir",
                "include_dirs", "sources", "defines", "heap", "cflags",
                "alt_sources", "alt_include_dirs", "alt_defines",     # Mbed TLS _ALT: see docs/firmware.md
                "requires",     # the peripheral models (sim/peripherals/registry.py kinds) a driver recipe needs
                "completion",   # a driver recipe's completion mode: "polling" or "interrupt" (in the conditions)
                "stack_bytes",  # the images' stack: bytes, or "rest" (the RAM after data, bss and the arena)
                "ctr_drbg",     # its CTR_DRBG's construction: "df" (the default) or "no-df" (the vectors it meets)
                "keys"}         # "device": a secure element signs with keys it makes and keeps (target.make_inputs)
COMPLETIONS = ("polling", "interrupt")
VARIANT_KEYS = {"name", "when", "ops", "defines", "cflags", "sources",   # sources: replace the library's
                "stack_needs"}  # op -> bytes of stack it needs: a board that links less is refused before the run
STACK_REST = "rest"
REQUIRED = ("name", "version", "glue", "sources")
# a recipe's name and version become part of a folder name in the cache: one name, no '/'
NAME_RX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
CRATE_RX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")       # a crate and its version: a folder too
VERSION_RX = re.compile(r"[^\x00-\x1f\x7f/\\]{1,120}")
HARNESS_PREFIX = "harness:"      # glue = "harness:glue/mbedtls.c": a bundled glue, from a recipe of your own
PARAM_NAMES = sorted({p.name for op in OPS.values() for p in op.params})
EXTENDS = "extends"              # top-level key: the recipe (a file beside this one) whose keys it changes
EXTENDS_RX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\.toml")   # a file name, no folder


def cache_dir() -> Path:
    return Path(os.environ.get("CRYPTOBENCH_CACHE", REPO_ROOT / ".cache"))


def crate_tree(crate: str, version: str, where: str) -> Path:
    """The crate's unpacked tree in the cache, fetched (scripts/fetch_crate.sh) on first use; a
    fetch that fails is a UsageError that starts with `where` (the file that asked for the crate).
    A download is a side effect the recipe chose: it is said on stderr before it starts, with the
    file that asked for it, whatever --quiet or the progress bar do with the run's log."""
    crates = cache_dir() / "crates"
    unpacked = crates / f"{crate}-{version}"
    if not unpacked.is_dir():
        sys.stderr.write(printable(f"cryptobench: {where}: downloading crate {crate} {version} from the Rust crate "
                                   f"registry (cargo's configuration) into {crates}, as its 'crate' key asks; "
                                   "--library-source DIR builds a tree of your own instead") + "\n")
        sys.stderr.flush()
        proc = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "fetch_crate.sh"), crate, version, str(crates)],
                              capture_output=True, text=True, env=child_environment())
        if proc.returncode != 0 or not unpacked.is_dir():
            raise UsageError(f"{where}: could not fetch crate {crate} {version}: "
                             + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return unpacked


def sdist_tree(name: str, version: str, where: str) -> Path:
    """A Python package's source distribution unpacked in the cache (pip download --no-binary, on
    first use), for a library whose C source only such a package carries (Microchip's CryptoAuthLib
    in `cryptoauthlib`). Its archive is data: extracted with tarfile's "data" filter (no link or
    path out of the folder, no device files). A failed fetch is a UsageError starting with `where`."""
    sdists = cache_dir() / "sdists"
    unpacked = sdists / f"{name}-{version}"
    if unpacked.is_dir():
        return unpacked
    import tarfile
    import tempfile
    sys.stderr.write(printable(f"cryptobench: {where}: downloading the source distribution of {name} {version} from "
                               f"the Python package index (pip's configuration) into {sdists}, as its 'sdist' key "
                               "asks; --library-source DIR builds a tree of your own instead") + "\n")
    sys.stderr.flush()
    sdists.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=sdists) as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                               "--disable-pip-version-check", "-d", tmp, f"{name}=={version}"],
                              capture_output=True, text=True, env=child_environment())
        archives = sorted(Path(tmp).glob("*.tar.gz"))
        if proc.returncode != 0 or len(archives) != 1:
            raise UsageError(f"{where}: could not fetch the source distribution of {name} {version}: "
                             + ((proc.stderr.strip().splitlines() or ["no .tar.gz archive"])[-1]))
        staging = Path(tmp) / "tree"
        try:
            with tarfile.open(archives[0]) as tar:
                tar.extractall(staging, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise UsageError(f"{where}: the source distribution of {name} {version} does not unpack: {exc}") from exc
        staging.rename(unpacked)
    return unpacked


@dataclass
class Variant:
    """One build of the library with its own defines and flags, chosen by a cell's op and params."""
    name: str
    when: dict = field(default_factory=dict)      # catalog parameter -> value; all must match
    ops: list[str] = field(default_factory=list)  # empty: every op
    defines: list[str] = field(default_factory=list)
    cflags: list[str] = field(default_factory=list)
    # the variant's own sources (globs, relative to the library tree) in place of [library]'s: one
    # parameter set of a library whose sets are separate trees (PQClean's ml-kem-512/768/1024)
    sources: list[str] = field(default_factory=list)
    # op -> the stack it needs (bytes, as measured on a board with room): an image that links less
    # stack is refused before it runs, with one line, instead of overflowing into data and bss
    stack_needs: dict[str, int] = field(default_factory=dict)
    sources_line: int = 0         # where the recipe sets this variant's sources (errors name it)

    def matches(self, op: str, params) -> bool:
        if self.ops and op not in self.ops:
            return False
        return all(params.get(k) == v for k, v in self.when.items())

    def describe(self) -> str:
        sel = ", ".join(f"{k}={v}" for k, v in self.when.items()) or "any parameters"
        return f"variant '{self.name}' ({sel}: " + " ".join([*(f"-D{d}" for d in self.defines), *self.cflags]) + ")"


@dataclass
class Recipe:
    path: Path
    name: str
    version: str
    glue: Path
    sources: list[str]
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    config_dir: Path | None = None
    crate: str = ""
    crate_version: str = ""
    sdist: str = ""                       # a Python package whose source distribution carries the library
    sdist_version: str = ""
    root: str = ""
    license: str = ""
    heap: bool | int = False              # allocates from fw_calloc; a number: the arena's bytes
    ops: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    cflags: list[str] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    home: Path = FIRMWARE_DIR                  # where glue and config_dir are found
    source_dir: Path | None = None        # set by resolve()
    # the source files, globs expanded once by resolve() (variant name, '' for [library]'s): the
    # build compiles exactly these, never what a glob finds later in a tree a build writes into
    source_files: dict[str, list[Path]] = field(default_factory=dict)
    source_git: dict = field(default_factory=dict)   # --library-source: commit, ref, dirtiness (library_ref.py)
    # Mbed TLS-style _ALT replacements (docs/firmware.md, "Mbed TLS _ALT"): sources and include
    # dirs of the user's own folder (beside the recipe), built into the library archive, and the
    # defines (MBEDTLS_SHA256_ALT, ...) that switch the library's own code off
    alt_sources: list[Path] = field(default_factory=list)
    alt_include_dirs: list[Path] = field(default_factory=list)
    alt_defines: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)   # peripheral kinds the target's device must have
    completion: str = ""                  # a driver's completion mode (COMPLETIONS); "" for a library
    ctr_drbg: str = "df"                  # its CTR_DRBG's construction (vector_check.DRBG_CONSTRUCTIONS)
    keys: str = "given"                   # "device": ecdsa-sign / ecc-keygen use the device's own keys
    stack_bytes: int | str | None = None  # the images' stack (bytes, or STACK_REST); None: the board's budget
    base: Path | None = None              # the recipe this one extends ('extends'), None when none
    inherited: frozenset = frozenset()    # the [library] keys (and "variant") it takes from `base` unchanged

    def file_of(self, key: str) -> Path:
        """The recipe file that sets [library] `key` (or "variant"): this one, or the one it extends."""
        return self.base if self.base is not None and key in self.inherited else self.path

    def files(self, variant: Variant | None = None) -> list[Path]:
        """The source files, globs expanded, in a stable order: the variant's own where it has them."""
        own = variant is not None and variant.sources
        key = variant.name if own else ""
        if key not in self.source_files:
            self.source_files[key] = [f for pattern in (variant.sources if own else self.sources)
                                      for f in source_files(self.source_dir, pattern)]
        return self.source_files[key] + list(self.alt_sources)

    def variant_for(self, op: str, params) -> Variant | None:
        """The first variant whose `ops` and `when` match the cell; None: the [library] build."""
        return next((v for v in self.variants if v.matches(op, params)), None)


def builtin_recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES_DIR.glob("*.toml"))


def recipe_home(path: Path) -> Path:
    """The folder a recipe's glue and config_dir are relative to: the recipe file's own folder, or
    harness/firmware for the bundled recipes (their glue lives in cryptobench's harness tree)."""
    folder = path.resolve().parent
    return FIRMWARE_DIR.resolve() if folder == RECIPES_DIR.resolve() else folder


def load_recipe(name_or_path: str) -> Recipe:
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.exists()):
        path = RECIPES_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise UsageError(f"unknown library recipe '{name_or_path}'; valid: {', '.join(builtin_recipes())} "
                             "(or a path to a recipe .toml file)")
    text, doc = read_toml(path, regular="a recipe .toml file")
    lines = text.splitlines()
    base, base_lines, inherited = None, lines, frozenset()
    if EXTENDS in doc:
        base, base_lines, doc, inherited = _extended(path, lines, doc)
    for table in doc:
        if table not in ("library", "ops", "unavailable", "variant"):
            raise UsageError(f"{path}:{toml_line(lines, table)}: unknown table or key '{table}'; a recipe has "
                             "[library], [ops], [unavailable] and [[variant]] tables")
    lib = doc.get("library")
    if not isinstance(lib, dict):
        raise UsageError(f"{path}:1: expected a [library] table")
    for key in lib:
        if key not in LIBRARY_KEYS:
            raise UsageError(f"{path}:{toml_line(lines, key)}: unknown key '{key}' in [library]; valid: "
                             + ", ".join(sorted(LIBRARY_KEYS)))
    for key in REQUIRED:
        if key not in lib:
            raise UsageError(f"{path}:1: [library] needs '{key}'")
    _check_types(path, lines, lib)
    ops, unavailable = _op_tables(path, lines, doc)
    home = recipe_home(path)
    glue = _in_home(home, lib["glue"], path, lines, "glue")
    if not glue.is_file():
        raise UsageError(f"{path}:{toml_line(lines, 'glue')}: glue file '{lib['glue']}' not found "
                         f"(expected {glue})")
    config = _in_home(home, lib["config_dir"], path, lines, "config_dir") if lib.get("config_dir") else None
    if config is not None and not config.is_dir():
        raise UsageError(f"{path}:{toml_line(lines, 'config_dir')}: config_dir '{lib['config_dir']}' is not a "
                         f"directory (expected {config})")
    for key in ("sources", "include_dirs"):
        for rel in lib.get(key, []):
            _relative_inside(rel, path, lines, key)
    _relative_inside(lib.get("root", ""), path, lines, "root")    # inside the crate, or the recipe's folder
    cflags = lib.get("cflags", [])
    _check_cflags(cflags, path, lines, toml_line(lines, "cflags"))
    for key in ("defines", "alt_defines"):
        _check_defines(lib.get(key, []), path, lines, toml_line(lines, key), key)
    variants = (_variants(doc.get("variant", []), base, base_lines, ops) if "variant" in inherited
                else _variants(doc.get("variant", []), path, lines, ops))
    alt_sources, alt_include_dirs = _alt_paths(path, lines, lib)
    return Recipe(path=path, name=lib["name"], version=str(lib["version"]), glue=glue,
                  sources=lib["sources"], include_dirs=lib.get("include_dirs", []),
                  defines=lib.get("defines", []), config_dir=config, crate=lib.get("crate", ""),
                  crate_version=str(lib.get("crate_version", "")), root=lib.get("root", ""),
                  sdist=lib.get("sdist", ""), sdist_version=str(lib.get("sdist_version", "")),
                  license=lib.get("license", ""), heap=lib.get("heap", False), ops=dict(ops),
                  unavailable=dict(unavailable), cflags=cflags, variants=variants, home=home,
                  alt_sources=alt_sources, alt_include_dirs=alt_include_dirs, alt_defines=lib.get("alt_defines", []),
                  requires=list(lib.get("requires", [])), completion=lib.get("completion", ""),
                  ctr_drbg=lib.get("ctr_drbg", "df"), keys=lib.get("keys", "given"),
                  stack_bytes=lib.get("stack_bytes"), base=base, inherited=inherited)


def _extended(path: Path, lines: list[str], doc: dict) -> tuple[Path, list[str], dict, frozenset]:
    """A recipe that extends another: (the other's file, its lines, the merged document, the keys
    taken from the other unchanged). The other is a file beside this one, loaded and checked first
    (its own errors name its own file and lines); it extends none itself (one level: no chain, no
    cycle). This recipe's [library] keys and [ops] / [unavailable] entries replace the other's one
    by one; its [[variant]] tables, where it has any, replace all of the other's."""
    rel, line = doc.pop(EXTENDS), toml_line(lines, EXTENDS)
    if not isinstance(rel, str) or not EXTENDS_RX.fullmatch(rel):
        raise UsageError(f"{path}:{line}: '{EXTENDS}' = {quoted(rel)}: expected the file name of a recipe in this "
                         "recipe's folder, e.g. \"ti-drivers.toml\"")
    folder = path.parent.resolve()
    base = path.parent / rel
    if base.resolve() == path.resolve():
        raise UsageError(f"{path}:{line}: '{EXTENDS}' = {quoted(rel)} names this recipe itself; expected another")
    if not base.resolve().is_relative_to(folder) or not base.is_file():
        raise UsageError(f"{path}:{line}: '{EXTENDS}' = {quoted(rel)}: no recipe file {base} in this recipe's folder")
    base_text, base_doc = read_toml(base, regular="a recipe .toml file")
    if EXTENDS in base_doc:
        raise UsageError(f"{path}:{line}: '{EXTENDS}' = {quoted(rel)}: that recipe extends another itself; a recipe "
                         "may extend only one that extends none")
    load_recipe(str(base))
    merged = dict(base_doc)
    for table, entries in doc.items():
        if table in ("library", "ops", "unavailable") and isinstance(entries, dict):
            merged[table] = {**base_doc.get(table, {}), **entries}
        else:
            merged[table] = entries            # [[variant]] wholesale; anything else as written (checked below)
    own = doc.get("library") if isinstance(doc.get("library"), dict) else {}
    inherited = frozenset(k for k in base_doc.get("library", {}) if k not in own) | (
        {"variant"} if "variant" in base_doc and "variant" not in doc else set())
    return base, base_text.splitlines(), merged, inherited


def _op_tables(path: Path, lines: list[str], doc: dict) -> tuple[dict, dict]:
    """[ops] and [unavailable]: catalog op -> what implements it, or why not."""
    ops, unavailable = doc.get("ops", {}), doc.get("unavailable", {})
    for table, entries in (("ops", ops), ("unavailable", unavailable)):
        if not isinstance(entries, dict):
            raise UsageError(f"{path}:{toml_line(lines, table)}: '{table}' must be a table of op id = \"text\"")
        for op, text in entries.items():
            if op not in OPS:
                raise UsageError(f"{path}:{toml_line(lines, op)}: unknown op {quoted(op)} in [{table}]; valid: "
                                 + ", ".join(OPS))
            if not isinstance(text, str):
                raise UsageError(f"{path}:{toml_line(lines, op)}: [{table}] '{op}' must be a string (what implements "
                                 f"it, or why not), got {text!r}")
    return ops, unavailable


def _alt_paths(path: Path, lines: list[str], lib: dict) -> tuple[list[Path], list[Path]]:
    """alt_sources (files or globs) and alt_include_dirs, relative to the recipe's folder and
    confined to it: the user's replacement code lives beside their recipe, never in cryptobench."""
    folder = path.parent.resolve()
    sources, dirs = [], []
    for key, out in (("alt_sources", sources), ("alt_include_dirs", dirs)):
        for rel in lib.get(key, []):
            where = f"{path}:{toml_line(lines, key)}: key '{key}'"
            target = (folder / rel).resolve()
            if Path(rel).is_absolute() or not target.is_relative_to(folder):
                raise UsageError(f"{where}: '{rel}' leads outside the recipe's folder {folder}; give a path "
                                 "relative to the recipe file, inside its folder")
            if key == "alt_include_dirs":
                if not target.is_dir():
                    raise UsageError(f"{where}: '{rel}' is not a directory under {folder}")
                out.append(target)
                continue
            hits = sorted(Path(h) for h in glob.glob(str(folder / rel)))
            if not hits:
                raise UsageError(f"{where}: '{rel}' matches no file under {folder}")
            outside = [h for h in hits if not h.resolve().is_relative_to(folder)]
            if outside:                 # a symlink beside the recipe that leads to a file elsewhere
                raise UsageError(f"{where}: '{outside[0].name}' (from '{rel}') is a link that leads outside the "
                                 f"recipe's folder {folder}; expected files inside it")
            out += [h.resolve() for h in hits]
    if (sources or dirs) and not lib.get("alt_defines"):
        raise UsageError(f"{path}:{toml_line(lines, 'alt_sources' if sources else 'alt_include_dirs')}: alt sources "
                         "without 'alt_defines': name the library's switches, e.g. alt_defines = "
                         "[\"MBEDTLS_SHA256_ALT\"], or the library's own code is built and measured instead")
    return sources, dirs


# [library] keys and what each must hold
_TYPES = {"name": (str, "a string"), "version": ((str, int, float), "a version string"),
          "crate": (str, "a string"), "crate_version": ((str, int, float), "a version string"),
          "sdist": (str, "a string"), "sdist_version": ((str, int, float), "a version string"),
          "root": (str, "a string"), "license": (str, "a string"), "glue": (str, "a path (string)"),
          "config_dir": (str, "a path (string)"),
          "heap": ((bool, int), "true, false or the arena's size in bytes (64 to 16 MiB)")}


def _check_types(path: Path, lines: list[str], lib: dict) -> None:
    for key, (typ, what) in _TYPES.items():
        bool_ok = typ is bool or (isinstance(typ, tuple) and bool in typ)
        if key in lib and (not isinstance(lib[key], typ) or (not bool_ok and isinstance(lib[key], bool))):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' must be {what}, got {lib[key]!r}")
    heap = lib.get("heap")
    if type(heap) is int and not 64 <= heap <= 1 << 24:
        raise UsageError(f"{path}:{toml_line(lines, 'heap')}: 'heap' = {heap}: expected true, false or the arena's "
                         "size in bytes (64 to 16 MiB)")
    if not NAME_RX.fullmatch(lib["name"]):
        raise UsageError(f"{path}:{toml_line(lines, 'name')}: 'name' = {quoted(lib['name'])}: expected letters, digits, "
                         "'.', '_', '+' or '-' (at most 64, not first a '.' or '-'): the name is an engine's and a "
                         "folder's in the cache")
    for key, rx in (("crate", CRATE_RX), ("crate_version", CRATE_RX)):
        if key in lib and not rx.fullmatch(str(lib[key])):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' = {quoted(lib[key])}: expected a crates.io "
                             "name or version (letters, digits, '.', '_', '+', '-')")
    for key in ("sdist", "sdist_version"):
        if key in lib and not CRATE_RX.fullmatch(str(lib[key])):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' = {quoted(lib[key])}: expected a Python package "
                             "name or version (letters, digits, '.', '_', '+', '-')")
    if ("sdist" in lib) != ("sdist_version" in lib) or ("sdist" in lib and "crate" in lib):
        raise UsageError(f"{path}:{toml_line(lines, 'sdist' if 'sdist' in lib else 'sdist_version')}: 'sdist' and "
                         "'sdist_version' go together, and a library comes from a crate or a source distribution, "
                         "not both")
    if not VERSION_RX.fullmatch(str(lib["version"])):
        raise UsageError(f"{path}:{toml_line(lines, 'version')}: 'version' = {quoted(lib['version'])}: expected at "
                         "most 120 printable characters without '/' or '\\' (it is part of a folder name)")
    for key in ("sources", "include_dirs", "defines", "cflags", "alt_sources", "alt_include_dirs", "alt_defines",
                "requires"):
        if key in lib and not (isinstance(lib[key], list) and all(isinstance(x, str) for x in lib[key])):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' must be a list of strings")
    for kind in lib.get("requires", []):
        if kind not in sim.PERIPHERAL_KINDS:
            raise UsageError(f"{path}:{toml_line(lines, 'requires')}: 'requires' names {quoted(kind)}; expected "
                             "peripheral model kinds: " + ", ".join(sorted(sim.PERIPHERAL_KINDS)))
    if "completion" in lib and lib["completion"] not in COMPLETIONS:
        raise UsageError(f"{path}:{toml_line(lines, 'completion')}: 'completion' = {quoted(lib['completion'])}: "
                         "expected \"polling\" or \"interrupt\" (how the driver waits for its engine)")
    if "keys" in lib and lib["keys"] not in ("given", "device"):
        raise UsageError(f"{path}:{toml_line(lines, 'keys')}: 'keys' = {quoted(lib['keys'])}: expected \"given\" (the "
                         "cells' keys) or \"device\" (a secure element's own keys: it signs with a key it keeps)")
    if "ctr_drbg" in lib and lib["ctr_drbg"] not in DRBG_CONSTRUCTIONS:
        raise UsageError(f"{path}:{toml_line(lines, 'ctr_drbg')}: 'ctr_drbg' = {quoted(lib['ctr_drbg'])}: expected "
                         + " or ".join(f'"{c}" ({why})' for c, why in DRBG_CONSTRUCTIONS.items()))
    stack = lib.get("stack_bytes")
    if stack is not None and not (stack == STACK_REST or (type(stack) is int and 1024 <= stack <= 1 << 24)):
        raise UsageError(f"{path}:{toml_line(lines, 'stack_bytes')}: 'stack_bytes' = {stack!r}: expected a number "
                         f"of bytes (1024 to 16 MiB) or \"{STACK_REST}\" (all RAM after data, bss and the heap arena)")
    if not lib["sources"]:
        raise UsageError(f"{path}:{toml_line(lines, 'sources')}: 'sources' is empty; name at least one source file")


def _check_cflags(cflags: list[str], path: Path, lines: list[str], line: int, key: str = "cflags") -> None:
    """Each flag on the allow-list of cflags.py; the error names the line of the entry."""
    for flag in cflags:
        problem = flag_problem(flag)
        if problem:
            raise UsageError(f"{path}:{_entry_line(lines, line, flag)}: '{key}' entry {quoted(flag)} {problem}")


def _check_defines(defines: list[str], path: Path, lines: list[str], line: int, key: str) -> None:
    """Each entry NAME or NAME=VALUE, as -D takes it (cflags.py, define_problem)."""
    for entry in defines:
        problem = define_problem(entry)
        if problem:
            raise UsageError(f"{path}:{_entry_line(lines, line, entry)}: '{key}' entry {quoted(entry)} {problem}")


def _entry_line(lines: list[str], key_line: int, entry: str) -> int:
    """The line of a list entry: the first line from its key's on that holds it as written
    (a list may span lines), else the key's own line."""
    written = json.dumps(entry)
    for n in range(key_line - 1, min(len(lines), key_line + 200)):
        if n > key_line - 1 and re.match(r"\s*(\[|[A-Za-z0-9_-]+\s*=|\"[^\"]*\"\s*=)", lines[n]):
            break                                     # the next key or table: the entry was not found
        if written in lines[n] or f"'{entry}'" in lines[n]:
            return n + 1
    return key_line


SOURCE_SUFFIXES = (".c", ".s", ".S")        # what the firmware build compiles (C, assembler, preprocessed assembler)


def source_files(root: Path, pattern: str) -> list[Path]:
    """The files a `sources` glob names under `root`, sorted: `**` spans folders; folders and files
    the build does not compile (headers, objects, a build's temporary files) are left out."""
    hits = sorted(glob.glob(str(root / pattern), recursive=True))
    return [Path(h) for h in hits if Path(h).suffix in SOURCE_SUFFIXES and os.path.isfile(h)]


def _variants(tables, path: Path, lines: list[str], ops: dict) -> list[Variant]:
    """The [[variant]] tables: each a build of its own (defines, cflags) chosen by op and params."""
    if not isinstance(tables, list):
        raise UsageError(f"{path}:{toml_line(lines, 'variant')}: 'variant' must be [[variant]] tables")
    starts = [i for i, l in enumerate(lines) if l.strip().replace(" ", "").startswith("[[variant]]")]
    out, names = [], set()
    for n, t in enumerate(tables):
        begin = starts[n] if n < len(starts) else 0
        end = starts[n + 1] if n + 1 < len(starts) else None
        at = lambda key: toml_line(lines, key, begin, end)
        for key in t:
            if key not in VARIANT_KEYS:
                raise UsageError(f"{path}:{at(key)}: unknown key '{key}' in [[variant]]; valid: "
                                 + ", ".join(sorted(VARIANT_KEYS)))
        name = t.get("name")
        if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
            raise UsageError(f"{path}:{at('name') if 'name' in t else begin + 1}: a [[variant]] needs a 'name' of "
                             f"letters, digits, '-' or '_', got {name!r}")
        if name in names:
            raise UsageError(f"{path}:{at('name')}: variant name '{name}' is used twice; each variant needs its own")
        names.add(name)
        when = t.get("when", {})
        if not isinstance(when, dict):
            raise UsageError(f"{path}:{at('when')}: 'when' must be a table of catalog parameters, e.g. "
                             "{ key_bits = 128 }")
        for k, v in when.items():
            if k not in PARAM_NAMES:
                raise UsageError(f"{path}:{at('when')}: 'when' names '{k}', not a catalog parameter; valid: "
                                 + ", ".join(PARAM_NAMES))
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise UsageError(f"{path}:{at('when')}: 'when' {k} = {v!r}: expected a number or a string")
        for key in ("ops", "defines", "cflags", "sources"):
            if key in t and not (isinstance(t[key], list) and all(isinstance(x, str) for x in t[key])):
                raise UsageError(f"{path}:{at(key)}: '{key}' in [[variant]] must be a list of strings")
        for op in t.get("ops", []):
            if op not in ops:
                raise UsageError(f"{path}:{at('ops')}: variant '{name}' names op '{op}', which [ops] does not list")
        for rel in t.get("sources", []):
            _relative_inside(rel, path, lines, "sources", at("sources"))
        _check_cflags(t.get("cflags", []), path, lines, at("cflags"))
        _check_defines(t.get("defines", []), path, lines, at("defines"), "defines")
        needs = _stack_needs(t.get("stack_needs", {}), path, at("stack_needs"), name, ops)
        out.append(Variant(name, dict(when), list(t.get("ops", [])), list(t.get("defines", [])),
                           list(t.get("cflags", [])), list(t.get("sources", [])), needs,
                           sources_line=at("sources")))
    return out


def _stack_needs(table, path: Path, line: int, name: str, ops: dict) -> dict[str, int]:
    """A variant's stack_needs: { "op" = bytes, ... } for ops of [ops], each 1 to 16 MiB."""
    if not isinstance(table, dict):
        raise UsageError(f"{path}:{line}: 'stack_needs' in variant '{name}' must be a table of op = bytes, e.g. "
                         '{ "ml-dsa-sign" = 122448 }')
    for op, n in table.items():
        if op not in ops:
            raise UsageError(f"{path}:{line}: 'stack_needs' in variant '{name}' names op '{op}', which [ops] does "
                             "not list")
        if type(n) is not int or not 1 <= n <= 1 << 24:
            raise UsageError(f"{path}:{line}: 'stack_needs' \"{op}\" = {n!r} in variant '{name}': expected a "
                             "number of bytes (1 to 16 MiB)")
    return dict(table)


def _in_home(home: Path, rel: str, path: Path, lines: list[str], key: str) -> Path:
    """home/rel, symlinks followed; refused when it leads out of the recipe's home (an absolute
    path elsewhere, '..' past the top, a symlink out). A 'harness:' path names a file of
    cryptobench's harness/firmware instead. (Headers of the library tree are include_dirs.)"""
    if rel.startswith(HARNESS_PREFIX):           # a file of cryptobench's own harness (a bundled glue)
        target = (FIRMWARE_DIR / rel[len(HARNESS_PREFIX):]).resolve()
        if not target.is_relative_to(FIRMWARE_DIR.resolve()):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' = '{rel}' leads outside {FIRMWARE_DIR}; "
                             f"expected '{HARNESS_PREFIX}' and a path inside it, e.g. '{HARNESS_PREFIX}glue/mbedtls.c'")
        return target
    target = (home / rel).resolve()
    if not target.is_relative_to(home):
        raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' = '{rel}' leads outside the recipe's folder "
                         f"{home} (to {target}); expected a path inside it")
    return target


def _relative_inside(rel: str, path: Path, lines: list[str], key: str, line: int | None = None) -> None:
    """A path (or glob) relative to the library's tree must stay inside it: no absolute path and
    no '..' that climbs above the tree's top."""
    depth = 0
    for part in Path(rel).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            break
    if Path(rel).is_absolute() or depth < 0:
        raise UsageError(f"{path}:{line or toml_line(lines, key)}: '{key}' entry '{rel}' leads outside the library's tree; "
                         "expected a path relative to it")


def _confined(target: Path, recipe: Recipe, root: Path, lines: list[str], key: str, shown: str,
              line: int | None = None, where: Path | None = None) -> None:
    """`target` (symlinks followed) must lie inside the recipe's home or the library tree; `where`:
    the recipe file that names it (default: the one that sets `key`)."""
    real = target.resolve()
    if not (real.is_relative_to(recipe.home) or real.is_relative_to(root.resolve())):
        raise UsageError(f"{where or recipe.file_of(key)}:{line or toml_line(lines, key)}: '{key}' entry '{shown}' leads to {real}, outside "
                         f"the recipe's folder {recipe.home} and the library tree {root}; expected a path inside "
                         "one of them")


def resolve(recipe: Recipe, library_source: Path | None = None) -> Recipe:
    """Find the library's tree: the user's --library-source, or the recipe's crate or Python source
    distribution, fetched into the cache on first use, or (neither) `root` in the recipe's folder. Then check that every source
    and include dir is there and that no path leads out of the recipe's folder and the tree."""
    if library_source is not None:
        root = Path(library_source)
        if not root.is_dir():
            raise UsageError(f"--library-source: '{root}' is not a directory")
    elif recipe.crate:
        root = crate_tree(recipe.crate, recipe.crate_version, str(recipe.path)) / recipe.root
    elif recipe.sdist:
        root = sdist_tree(recipe.sdist, recipe.sdist_version, str(recipe.path)) / recipe.root
    else:
        root = recipe.home / recipe.root
        if not root.is_dir():
            raise UsageError(f"{recipe.path}: the recipe names no crate and '{root}' is not a directory; give "
                             "--library-source DIR (or 'root', the library's folder relative to the recipe)")
    recipe.source_dir = root
    lines_of = {f: read_utf8(f).splitlines() for f in {recipe.path, recipe.base} if f is not None}

    def lines(key: str) -> list[str]:             # the lines of the file that sets `key`
        return lines_of[recipe.file_of(key)]
    builds = [("", recipe.sources, "sources", toml_line(lines("sources"), "sources"))] + [
        (v.name, v.sources, "variant", v.sources_line) for v in recipe.variants if v.sources]
    recipe.source_files = {}
    for name, patterns, key, line in builds:
        files = recipe.source_files.setdefault(name, [])
        for pattern in patterns:
            hits = source_files(root, pattern)
            if not hits:
                raise UsageError(f"{recipe.file_of(key)}:{line}: key 'sources': '{pattern}' matches no file "
                                 f"under {root} that the build compiles ({', '.join(SOURCE_SUFFIXES)})")
            for hit in hits:
                _confined(hit, recipe, root, lines(key), "sources", pattern, line, recipe.file_of(key))
            files += hits
    for inc in recipe.include_dirs:
        if not (root / inc).is_dir():
            raise UsageError(f"{recipe.file_of('include_dirs')}:{toml_line(lines('include_dirs'), 'include_dirs')}: key "
                             f"'include_dirs': '{inc}' is not a directory under {root}")
        _confined(root / inc, recipe, root, lines("include_dirs"), "include_dirs", inc)
    _check_include_flags(recipe, root, lines)
    return recipe


def _check_include_flags(recipe: Recipe, root: Path, lines_of_key) -> None:
    """The include folders of the cflags ([library] and every variant's), now that the tree is
    known: each a folder inside it, symlinks followed (build.py gives it as root/DIR).
    lines_of_key(key): the lines of the recipe file that sets the key."""
    for key, flags, at in [("cflags", recipe.cflags, toml_line(lines_of_key("cflags"), "cflags"))] + [
            ("variant", v.cflags, 0) for v in recipe.variants]:
        lines, where = lines_of_key(key), recipe.file_of(key)
        for flag in flags:
            option, rel = include_dir(flag) or (None, None)
            if option is None:
                continue
            line = _entry_line(lines, at or 1, flag) if at else next(
                (n + 1 for n, text in enumerate(lines) if json.dumps(flag) in text), 1)
            if not (root / rel).is_dir():
                raise UsageError(f"{where}:{line}: 'cflags' entry {quoted(flag)}: '{rel}' is not a directory "
                                 f"under the library tree {root}")
            if not (root / rel).resolve().is_relative_to(root.resolve()):
                raise UsageError(f"{where}:{line}: 'cflags' entry {quoted(flag)} leads to "
                                 f"{(root / rel).resolve()}, outside the library tree {root}; expected a folder "
                                 "inside it")
