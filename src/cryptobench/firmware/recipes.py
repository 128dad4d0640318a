"""Library recipes: which sources of a crypto library to build for a microcontroller, and which
catalog ops its glue provides. Recipes are data (src/cryptobench/recipes/*.toml); a user may point
`--recipe FILE --library-source DIR` at their own tree. Every error names the file, the key and
what was expected."""
from __future__ import annotations

import glob
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import OPS
from ..errors import UsageError
from ..files import read_toml, read_utf8, toml_line
from ..harness import REPO_ROOT

RECIPES_DIR = Path(__file__).resolve().parents[1] / "recipes"
FIRMWARE_DIR = REPO_ROOT / "harness" / "firmware"
LIBRARY_KEYS = {"name", "version", "crate", "crate_version", "root", "license", "glue", "config_dir",
                "include_dirs", "sources", "defines", "heap",
                "alt_sources", "alt_include_dirs", "alt_defines"}     # Mbed TLS _ALT: see docs/firmware.md
REQUIRED = ("name", "version", "glue", "sources")


def cache_dir() -> Path:
    return Path(os.environ.get("CRYPTOBENCH_CACHE", REPO_ROOT / ".cache"))


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
    root: str = ""
    license: str = ""
    heap: bool = False
    ops: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    source_dir: Path | None = None        # set by resolve()
    # Mbed TLS-style _ALT replacements (docs/firmware.md, "Mbed TLS _ALT"): sources and include
    # dirs of the user's own folder (beside the recipe), built into the library archive, and the
    # defines (MBEDTLS_SHA256_ALT, ...) that switch the library's own code off
    alt_sources: list[Path] = field(default_factory=list)
    alt_include_dirs: list[Path] = field(default_factory=list)
    alt_defines: list[str] = field(default_factory=list)

    def files(self) -> list[Path]:
        """The source files, globs expanded, in a stable order."""
        out = []
        for pattern in self.sources:
            hits = sorted(glob.glob(str(self.source_dir / pattern)))
            out += [Path(h) for h in hits]
        return out + list(self.alt_sources)


def builtin_recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES_DIR.glob("*.toml"))


def load_recipe(name_or_path: str) -> Recipe:
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.exists()):
        path = RECIPES_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise UsageError(f"unknown library recipe '{name_or_path}'; valid: {', '.join(builtin_recipes())} "
                             "(or a path to a recipe .toml file)")
    text, doc = read_toml(path)
    lines = text.splitlines()
    for table in doc:
        if table not in ("library", "ops", "unavailable"):
            raise UsageError(f"{path}:{toml_line(lines, table)}: unknown table or key '{table}'; a recipe has "
                             "[library], [ops] and [unavailable]")
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
    ops, unavailable = doc.get("ops", {}), doc.get("unavailable", {})
    for table, entries in (("ops", ops), ("unavailable", unavailable)):
        if not isinstance(entries, dict):
            raise UsageError(f"{path}:{toml_line(lines, table)}: '{table}' must be a table of op id = \"text\"")
        for op, text in entries.items():
            if op not in OPS:
                raise UsageError(f"{path}:{toml_line(lines, op)}: unknown op '{op}' in [{table}]; valid: {', '.join(OPS)}")
            if not isinstance(text, str):
                raise UsageError(f"{path}:{toml_line(lines, op)}: [{table}] '{op}' must be a string (what implements "
                                 f"it, or why not), got {text!r}")
    glue = _inside(FIRMWARE_DIR, lib["glue"], path, lines, "glue")
    if not glue.is_file():
        raise UsageError(f"{path}:{toml_line(lines, 'glue')}: glue file '{lib['glue']}' not found "
                         f"(expected under {FIRMWARE_DIR})")
    config = _inside(FIRMWARE_DIR, lib["config_dir"], path, lines, "config_dir") if lib.get("config_dir") else None
    if config is not None and not config.is_dir():
        raise UsageError(f"{path}:{toml_line(lines, 'config_dir')}: config_dir '{lib['config_dir']}' is not a directory")
    for key in ("sources", "include_dirs"):
        for rel in lib.get(key, []):
            _relative_inside(rel, path, lines, key)
    alt_sources, alt_include_dirs = _alt_paths(path, lines, lib)
    return Recipe(path=path, name=lib["name"], version=str(lib["version"]), glue=glue,
                  sources=lib["sources"], include_dirs=lib.get("include_dirs", []),
                  defines=lib.get("defines", []), config_dir=config, crate=lib.get("crate", ""),
                  crate_version=str(lib.get("crate_version", "")), root=lib.get("root", ""),
                  license=lib.get("license", ""), heap=lib.get("heap", False), ops=dict(ops),
                  unavailable=dict(unavailable), alt_sources=alt_sources, alt_include_dirs=alt_include_dirs,
                  alt_defines=lib.get("alt_defines", []))


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
            out += [h.resolve() for h in hits]
    if (sources or dirs) and not lib.get("alt_defines"):
        raise UsageError(f"{path}:{toml_line(lines, 'alt_sources' if sources else 'alt_include_dirs')}: alt sources "
                         "without 'alt_defines': name the library's switches, e.g. alt_defines = "
                         "[\"MBEDTLS_SHA256_ALT\"], or the library's own code is built and measured instead")
    return sources, dirs


# [library] keys and what each must hold
_TYPES = {"name": (str, "a string"), "version": ((str, int, float), "a version string"),
          "crate": (str, "a string"), "crate_version": ((str, int, float), "a version string"),
          "root": (str, "a string"), "license": (str, "a string"), "glue": (str, "a path (string)"),
          "config_dir": (str, "a path (string)"), "heap": (bool, "true or false")}


def _check_types(path: Path, lines: list[str], lib: dict) -> None:
    for key, (typ, what) in _TYPES.items():
        if key in lib and (not isinstance(lib[key], typ) or (typ is not bool and isinstance(lib[key], bool))):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' must be {what}, got {lib[key]!r}")
    for key in ("sources", "include_dirs", "defines", "alt_sources", "alt_include_dirs", "alt_defines"):
        if key in lib and not (isinstance(lib[key], list) and all(isinstance(x, str) for x in lib[key])):
            raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' must be a list of strings")
    if not lib["sources"]:
        raise UsageError(f"{path}:{toml_line(lines, 'sources')}: 'sources' is empty; name at least one source file")


def _inside(base: Path, rel: str, path: Path, lines: list[str], key: str) -> Path:
    """base/rel, or rel beside the recipe (a user's recipe keeps its glue next to it); refused when
    it leads out of both (an absolute path elsewhere, '..' past the top): a recipe names files of
    cryptobench's firmware tree or of its own folder, nothing else."""
    roots = (base.resolve(), path.parent.resolve())
    candidates = [(root / rel).resolve() for root in roots]
    inside = [c for c in candidates if any(c.is_relative_to(r) for r in roots)]
    if not inside:
        raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' = '{rel}' leads outside {base} and the recipe's "
                         "folder; give a path inside one of them")
    return next((c for c in inside if c.exists()), inside[0])


def _relative_inside(rel: str, path: Path, lines: list[str], key: str) -> None:
    """A path (or glob) relative to the library's tree must stay inside it: no absolute path and
    no '..' that climbs above the tree's top."""
    depth = 0
    for part in Path(rel).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            break
    if Path(rel).is_absolute() or depth < 0:
        raise UsageError(f"{path}:{toml_line(lines, key)}: '{key}' entry '{rel}' leads outside the library's tree; "
                         "give a path relative to it")


def resolve(recipe: Recipe, library_source: Path | None = None, log=lambda s: None) -> Recipe:
    """Find the library's tree: the user's --library-source, or the recipe's crate, fetched into the
    cache on first use. Then check that every source and include dir is there."""
    if library_source is not None:
        root = Path(library_source)
        if not root.is_dir():
            raise UsageError(f"--library-source: '{root}' is not a directory")
    elif recipe.crate:
        crates = cache_dir() / "crates"
        unpacked = crates / f"{recipe.crate}-{recipe.crate_version}"
        if not unpacked.is_dir():
            log(f"fetching {recipe.crate} {recipe.crate_version} (the {recipe.name} sources) into {crates}")
            proc = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "fetch_crate.sh"), recipe.crate,
                                   recipe.crate_version, str(crates)], capture_output=True, text=True)
            if proc.returncode != 0 or not unpacked.is_dir():
                raise UsageError(f"{recipe.path}: could not fetch crate {recipe.crate} {recipe.crate_version}: "
                                 + (proc.stderr.strip().splitlines() or ["no output"])[-1])
        root = unpacked / recipe.root
    else:
        raise UsageError(f"{recipe.path}: the recipe names no crate; give --library-source DIR")
    recipe.source_dir = root
    lines = read_utf8(recipe.path).splitlines()
    for pattern in recipe.sources:
        if not glob.glob(str(root / pattern)):
            raise UsageError(f"{recipe.path}:{toml_line(lines, 'sources')}: key 'sources': '{pattern}' matches no "
                             f"file under {root}")
    for inc in recipe.include_dirs:
        if not (root / inc).is_dir():
            raise UsageError(f"{recipe.path}:{toml_line(lines, 'include_dirs')}: key 'include_dirs': '{inc}' is not a "
                             f"directory under {root}")
    return recipe
