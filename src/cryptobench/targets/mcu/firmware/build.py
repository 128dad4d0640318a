"""Cross-compiling the benchmark firmware: one library archive per (library, cpu, opt), then one
image per operation group, plus an empty image with the same flags for code size (the Cifra way:
size = text + rodata + data of the op's image minus the empty image's).

Everything lands in the cache (.cache/firmware, or $CRYPTOBENCH_CACHE/firmware) under a key made
of the compiler, the flags and the recipe, and an object is rebuilt only when that key, its flags,
or the content of its source or of any header the compilation includes changes."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from ....core.files import write_atomic
from ..boards import CPUS, Board
from .cflags import include_dir
from .diagnostics import confine
from .recipes import FIRMWARE_DIR, STACK_REST, Recipe, Variant, cache_dir
from ....core.processes import child_environment

CC = "arm-none-eabi-gcc"
CORE = FIRMWARE_DIR / "core"
COMMON_DIR = FIRMWARE_DIR.parent / "common"     # headers shared with the host harness: cb_ops.h, cb_fill.h
COMMON_CFLAGS = ["-std=c11", "-ffunction-sections", "-fdata-sections", "-fno-common", "-g"]
LDFLAGS = ["-nostartfiles", "-Wl,--gc-sections", "--specs=nano.specs"]
CORE_SOURCES = ("startup.c", "hal_cortexm.c", "main.c", "newlib_stubs.c")   # newlib_stubs: weak abort/_exit/_sbrk/…


def library_cflags(flags: list[str], extra: list[str]) -> list[str]:
    """The common flags with a recipe's (and its variant's) cflags appended after them; a recipe
    that gives its own -std= replaces the default -std=c11 (e.g. -std=gnu11 for GNU typeof)."""
    if any(f.startswith("-std=") for f in extra):
        flags = [f for f in flags if not f.startswith("-std=")]
    return [*flags, *extra]


def ram_budget(ram: int) -> dict:
    """How a board's RAM is shared: stack, heap arena, output buffer, kept repetitions."""
    if ram <= 32 * 1024:                       # e.g. STM32F030 (8 KiB), micro:bit (16 KiB)
        return {"STACK_BYTES": ram * 3 // 8 // 8 * 8, "FW_ARENA_BYTES": ram * 3 // 8 // 8 * 8,
                "FW_OUT_BYTES": 512, "FW_MAX_REPEAT": 64}
    return {"STACK_BYTES": 16384, "FW_ARENA_BYTES": min(16384, ram // 4), "FW_OUT_BYTES": min(16448, ram // 8),
            "FW_MAX_REPEAT": 256}


class BuildError(Exception):
    """A compile or link step failed; `tail` holds the compiler's last lines, confined to the
    places a build may read (diagnostics.confine): a cell's detail stores it."""

    def __init__(self, what: str, tail: str):
        super().__init__(f"{what}: {tail}")
        self.what, self.tail = what, tail


@dataclass
class Image:
    elf: Path
    sizes: dict            # section kind -> bytes: text, rodata, data, bss, stack


def toolchain(cc: str = CC) -> dict:
    """The cross compiler's identity, or a UsageError saying how to get it."""
    if shutil.which(cc) is None:
        if cc != CC:
            raise UsageError(f"--library-cc: {cc} is not an executable compiler")
        raise UsageError(f"{CC} not found: run ./setup.sh (it installs gcc-arm-none-eabi and "
                         "libnewlib-arm-none-eabi with apt-get)")
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, env=child_environment()).stdout.splitlines()
    if not out:
        raise UsageError(f"--library-cc: {cc} --version printed nothing; give a GCC-compatible cross compiler")
    return {"compiler": out[0], "cc": cc}


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
    return h.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def make_dependencies(text: str) -> list[Path]:
    """The prerequisites of the one rule in a compiler's `-M -MT x` output, in its order (make's
    escapes undone: `\\ ` and `\\#` in names, `$$`, line continuations)."""
    _, _, rest = text.replace("\\\n", " ").partition(":")
    names = re.findall(r"(?:\\.|[^\s\\])+", rest)
    return [Path(re.sub(r"\\([ #])", r"\1", n).replace("$$", "$")) for n in names]


def build_roots() -> list[Path]:
    """The places every build may read and write: cryptobench's harness and the cache."""
    return [FIRMWARE_DIR, COMMON_DIR, cache_dir() / "firmware"]


def dependency_files(cc: str, flags: list[str], src: Path, roots: list[Path] = ()) -> list[Path]:
    """Every file compiling `src` with `flags` reads: the source and each header it includes,
    directly or not, system headers too, as the compiler itself resolves them (`-M`)."""
    proc = subprocess.run([cc, *flags, "-M", "-MT", "x", str(src)], capture_output=True, text=True,
                          errors="replace", env=child_environment())
    if proc.returncode != 0:
        raise BuildError(f"listing the headers of {src.name}", confine(proc.stderr or proc.stdout,
                                                                       [*build_roots(), *roots]))
    return make_dependencies(proc.stdout)


def object_key(cc: str, flags: list[str], src: Path, file_digest=_file_digest, roots: list[Path] = ()) -> str:
    """The cache key of one object: its flags and the content of every file its compilation reads.

    The compiler's own dependency listing is used rather than a hash of the include directories:
    it resolves each #include exactly as the compilation will (the -I order, the source's own
    directory, relative paths, computed includes such as MBEDTLS_CONFIG_FILE, newlib's headers),
    so a header outside the -I directories counts, a new header that shadows another changes the
    listing, and an edit to a header no source includes rebuilds nothing."""
    return _digest(flags, [(str(f), file_digest(f)) for f in dependency_files(cc, flags, src, roots)])


def cpu_flags(cpu: str, opt: str) -> list[str]:
    return list(CPUS[cpu]["flags"]) + [f"-{opt}"]


def _run(cmd: list[str], what: str, roots: list[Path] = ()) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=child_environment())
    if proc.returncode != 0:
        raise BuildError(what, confine(proc.stderr or proc.stdout, [*build_roots(), *roots]))


def _produce(cmd: list[str], tmp: Path, target: Path, what: str, roots: list[Path] = ()) -> None:
    """Run a tool that writes `tmp` (a private name, _private) and rename it over `target`; on
    any failure (the tool's, an interrupt) the private file is removed, never left in the cache."""
    try:
        _run(cmd, what, roots)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def in_tree(flags: list[str], root: Path) -> list[str]:
    """A recipe's cflags with each include folder (-Iinclude) joined to the library tree, where
    recipes.resolve() checked it (a relative -I would otherwise be relative to the working folder)."""
    out = []
    for flag in flags:
        found = include_dir(flag)
        out.append(f"{found[0]}{root / found[1]}" if found else flag)
    return out


class FirmwareBuilder:
    """Builds images for one (recipe, board, cpu, opt)."""

    def __init__(self, recipe: Recipe, board: Board, cpu: str, opt: str, jobs: int | None = None,
                 log=lambda s: None, variant: Variant | None = None, library_cc: str | None = None):
        self.recipe, self.board, self.cpu, self.opt = recipe, board, cpu, opt
        self.variant = variant
        # --library-cc: another compiler for the library's own sources (e.g. the version a
        # published figure was built with); the harness, the glue and the link keep CC
        self.library_cc = library_cc
        self.jobs = jobs or os.cpu_count() or 1
        self.log = log
        self.tool = toolchain()
        self.lib_tool = toolchain(library_cc) if library_cc else self.tool
        self.flags = cpu_flags(cpu, opt) + COMMON_CFLAGS
        defines = recipe.defines + (variant.defines if variant else [])
        self.extra_cflags = getattr(recipe, "cflags", []) + (variant.cflags if variant else [])
        alt = getattr(recipe, "alt_include_dirs", []), getattr(recipe, "alt_defines", [])
        # an _ALT header (sha256_alt.h) is found before the library's own include dirs
        self.lib_cflags = (library_cflags(self.flags, in_tree(self.extra_cflags, Path(recipe.source_dir or ".")))
                           + [f"-I{d}" for d in alt[0]] + [f"-D{d}" for d in alt[1]]
                           + [f"-I{recipe.source_dir / d}" for d in recipe.include_dirs]
                           + ([f"-I{recipe.config_dir}"] if recipe.config_dir else [])
                           + [f"-D{d}" for d in defines] + [f"-I{CORE}", f"-I{COMMON_DIR}"])
        config = _config_files(recipe.config_dir) if recipe.config_dir else []
        key = _digest(self.lib_tool["compiler"], self.lib_cflags, str(recipe.source_dir),
                      variant.sources if variant and variant.sources else recipe.sources, config,
                      *([[str(f) for f in recipe.alt_sources]] if getattr(recipe, "alt_sources", None) else []))
        tag = f"-{variant.name}" if variant else ""
        self.lib_dir = cache_dir() / "firmware" / f"{recipe.name}{tag}-{recipe.version}-{cpu}-{opt}-{key}"
        # what a failure's diagnostics may quote: the library tree, the recipe's folder, the build folder
        self.roots = [p for p in (recipe.source_dir, getattr(recipe, "home", None), self.lib_dir,
                                  *getattr(recipe, "alt_include_dirs", []),
                                  *(f.parent for f in getattr(recipe, "alt_sources", []))) if p is not None]
        self.compiled = 0
        self._digests: dict[Path, str] = {}    # file -> content digest: headers do not change during a build
        self._keys: dict[tuple, str] = {}      # (source, its digest, flags) -> object_key

    # --- conditions ------------------------------------------------------------------------
    def conditions(self) -> dict:
        return {"compiler": self.tool["compiler"], "cflags": " ".join(self.flags), "ldflags": " ".join(LDFLAGS),
                **({"library_compiler": self.lib_tool["compiler"], "library_cc": self.lib_tool["cc"]}
                   if self.library_cc else {}),
                "library": self.recipe.name, "library_version": self.recipe.version,
                "library_source": str(self.recipe.source_dir), "recipe": str(self.recipe.path),
                **({"crate": f"{self.recipe.crate} {self.recipe.crate_version}"} if self.recipe.crate else {}),
                **({"sdist": f"{self.recipe.sdist} {self.recipe.sdist_version}"} if self.recipe.sdist else {}),
                **getattr(self.recipe, "source_git", {}),      # DIR@REF's commit, a plain DIR's HEAD (library_ref.py)
                "board": self.board.name, "cpu": self.cpu, "opt": self.opt,
                "counter": CPUS[self.cpu]["counter"], "console": self.board.console,
                **({"library_cflags": " ".join(self.extra_cflags)} if self.extra_cflags else {}),
                **({"driver_completion": self.recipe.completion} if getattr(self.recipe, "completion", "") else {}),
                **({"variants": {v.name: v.describe() for v in self.recipe.variants}}
                   if getattr(self.recipe, "variants", None) else {}),
                **({"alt": {"defines": list(self.recipe.alt_defines),
                            "sources": [str(f) for f in self.recipe.alt_sources]}}
                   if getattr(self.recipe, "alt_defines", None) else {})}

    def for_variant(self, variant: Variant | None) -> "FirmwareBuilder":
        """The builder of one of the recipe's variants (None: the [library] build itself)."""
        if variant is self.variant:
            return self
        return FirmwareBuilder(self.recipe, self.board, self.cpu, self.opt, self.jobs, self.log, variant,
                               self.library_cc)

    # --- compiling ---------------------------------------------------------------------------
    def _file_digest(self, path: Path) -> str:
        if path not in self._digests:
            self._digests[path] = _file_digest(path)
        return self._digests[path]

    def _object_key(self, src: Path, flags: list[str], cc: str = CC) -> str:
        """object_key, listed once per source content and flags (library() runs for every image;
        a generated source such as the plan changes between images)."""
        memo = (src, _file_digest(src), tuple(flags), cc)
        if memo not in self._keys:
            self._keys[memo] = object_key(cc, flags, src, self._file_digest, self.roots)
        return self._keys[memo]

    def _object(self, src: Path, out_dir: Path, extra: list[str], cflags: list[str], cc: str = CC) -> Path:
        flags = [*cflags, *extra]
        obj = out_dir / f"{src.stem}.{self._object_key(src, flags, cc)}.o"
        if not obj.exists():
            out_dir.mkdir(parents=True, exist_ok=True)
            tmp = _private(obj)
            _produce([cc, *flags, "-c", str(src), "-o", str(tmp)], tmp, obj, f"compiling {src.name}", self.roots)
            self.compiled += 1
        return obj

    def library(self) -> Path:
        """The library's archive (objects rebuilt only when their source or the flags change)."""
        files = self.recipe.files(self.variant)
        objs_dir = self.lib_dir / "obj"
        with ThreadPoolExecutor(self.jobs) as pool:
            objs = list(pool.map(lambda f: self._object(f, objs_dir, [], self.lib_cflags, self.lib_tool["cc"]), files))
        archive = self.lib_dir / "lib.a"
        stamp = self.lib_dir / "lib.stamp"
        want = "\n".join(sorted(o.name for o in objs))
        if not archive.exists() or not stamp.exists() or stamp.read_text() != want:
            tmp = _private(archive)
            _produce(["arm-none-eabi-ar", "rcs", str(tmp), *map(str, objs)], tmp, archive, "archiving the library",
                     self.roots)
            write_atomic(stamp, want, "the firmware cache")
        return archive

    def _ram_budget(self) -> dict:
        """ram_budget, with a recipe's stack_bytes: a size of its own, or "rest" (then a library
        without heap keeps a token arena, so its stack gets that RAM too), and its heap: a number
        is the arena's size (a library with a few small allocations leaves the rest to the stack)."""
        budget = ram_budget(self.board.ram[1])
        stack = getattr(self.recipe, "stack_bytes", None)
        heap = getattr(self.recipe, "heap", False)
        if type(heap) is int:
            budget["FW_ARENA_BYTES"] = (heap + 7) // 8 * 8
        elif stack == STACK_REST and not heap:
            budget["FW_ARENA_BYTES"] = 64
        if stack is not None:
            budget["STACK_BYTES"] = stack
        return budget

    def _core_objects(self) -> list[Path]:
        console = self.board.console
        defines = [f"-D{k}={v}" for k, v in self._ram_budget().items() if k != "STACK_BYTES"] + [
            f"-DFW_COUNTER_{CPUS[self.cpu]['counter'].upper()}", "-DFW_EXIT_SEMIHOSTING"
                   if self.board.qemu_machine or console == "semihosting" else "-DFW_EXIT_PARK"]
        if self.board.external_irqs != 32:          # the vector table's length (core/startup.c)
            defines.append(f"-DFW_EXTERNAL_IRQS={self.board.external_irqs}")
        if console == "semihosting":
            defines.append("-DFW_CONSOLE_SEMIHOSTING")
        else:
            kind, addr = console.split(":")
            defines.append(f"-DFW_CONSOLE_{kind.upper().replace('-', '_')}={addr}")
            uart = self.board.console_uart          # a UART the HAL sets up: divisor and board steps
            if uart:
                steps = ",".join("{%s,%s,%s,%d}" % (hex(a), hex(c), hex(v), w) for a, c, v, w in uart["init"])
                defines += [f"-DFW_CONSOLE_DIV={hex(uart['div'])}", f"-DFW_CONSOLE_INIT_N={len(uart['init'])}",
                            f"-DFW_CONSOLE_INIT={{{steps or '{0,0,0,0}'}}}"]
        m = self.board.marker
        if m:
            init = ",".join("{%s,%s,%s}" % tuple(hex(v) for v in op) for op in m["init"])
            defines += [f"-DFW_MARKER_SET_ADDR={hex(m['set'][0])}", f"-DFW_MARKER_SET_VAL={hex(m['set'][1])}",
                        f"-DFW_MARKER_CLR_ADDR={hex(m['clear'][0])}", f"-DFW_MARKER_CLR_VAL={hex(m['clear'][1])}",
                        f"-DFW_MARKER_INIT={{{init}}}" if init else "-DFW_MARKER_INIT={{0,0,0}}",
                        f"-DFW_MARKER_INIT_N={len(m['init'])}"]
        out = self.lib_dir / "core" / self.board.name
        cflags = self.flags + ["-Wall", "-Wextra", f"-I{CORE}", f"-I{COMMON_DIR}"]
        return [self._object(CORE / n, out, defines, cflags) for n in CORE_SOURCES]

    def _glue(self, ops: list[str]) -> Path:
        defines = [f"-DFW_OP_{op.upper().replace('-', '_')}" for op in ops]
        out = self.lib_dir / "glue"
        return self._object(self.recipe.glue, out, defines, self.lib_cflags + ["-Wall", "-Wextra"])

    def _linker_script(self) -> Path:
        b = self.board
        text = (CORE / "link.ld.in").read_text()
        stack = self._ram_budget()["STACK_BYTES"]
        if stack == STACK_REST:            # up to the end of RAM, less 8 bytes, from the aligned start
            stack = "(ORIGIN(RAM) + LENGTH(RAM) - ABSOLUTE(.) - 8)"
        for k, v in {"FLASH_ORIGIN": b.flash[0], "FLASH_LENGTH": b.flash[1], "RAM_ORIGIN": b.ram[0],
                     "RAM_LENGTH": b.ram[1], "STACK_BYTES": stack}.items():
            text = text.replace(f"@{k}@", v if isinstance(v, str) else hex(v))
        path = self.lib_dir / f"link-{b.name}.ld"
        if not path.exists() or path.read_text() != text:
            write_atomic(path, text, "the firmware cache")
        return path

    def image(self, name: str, ops: list[str], plan_source: str) -> Image:
        """Link one image: the harness, the glue with `ops`, the plan, the library archive."""
        archive = self.library()
        core = self._core_objects()
        glue = self._glue(ops)
        img_dir = self.lib_dir / "images" / self.board.name
        img_dir.mkdir(parents=True, exist_ok=True)
        plan = img_dir / f"{name}.plan.c"
        if not plan.exists() or plan.read_text() != plan_source:
            write_atomic(plan, plan_source, "the firmware cache")
        plan_obj = self._object(plan, img_dir / "plan-obj", [], self.flags + [f"-I{CORE}", f"-I{COMMON_DIR}"])
        elf = img_dir / f"{name}.elf"
        tmp = _private(elf)
        _produce([CC, *self.flags, *LDFLAGS, f"-T{self._linker_script()}", *map(str, core), str(glue), str(plan_obj),
                  str(archive), "-lc", "-lgcc", "-o", str(tmp)], tmp, elf, f"linking {name} for {self.board.name}",
                 self.roots)
        return Image(elf, section_sizes(elf))


def _config_files(config_dir: Path) -> list[tuple[str, str]]:
    """(path inside config_dir, digest) of every file in a recipe's config_dir, subfolders too (a
    header included as "sub/x.h" changes the build as much as one at the top); folders themselves
    are not files and have no digest."""
    return sorted((f.relative_to(config_dir).as_posix(), _file_digest(f))
                  for f in config_dir.rglob("*") if f.is_file())


def _private(path: Path) -> Path:
    """A name only this process writes, renamed over `path` once whole: lab workers (one process
    per place) build into the same cache at the same time, and a reader never sees half a file
    (what the tools write; the text files go through files.write_atomic)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def section_sizes(elf: Path) -> dict:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True,
                         env=child_environment()).stdout
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0, "heap_arena": 0, "stack": 0}
    kind = {".isr_vector": "text", ".text": "text", ".ARM.exidx": "rodata", ".rodata": "rodata",
            ".data": "data", ".bss": "bss", ".fw_arena": "heap_arena", ".stack": "stack"}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in kind and parts[1].isdigit():
            sizes[kind[parts[0]]] += int(parts[1])
    return sizes


MAX_FUNCTIONS = 400      # per-function sizes kept per cell: the largest; the rest counted (functions_omitted)


def function_sizes(elf: Path) -> dict[str, int]:
    """name -> bytes of every sized FUNC symbol in the ELF's symbol table (readelf -s: st_size; the
    first symbol of a name, as the simulator's profile names functions)."""
    out = subprocess.run(["arm-none-eabi-readelf", "-sW", str(elf)], capture_output=True, text=True, check=True,
                         env=child_environment()).stdout
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        # "Num: Value Size Type Bind Vis Ndx Name"; a size may be written in hex (0x…) when large
        if len(parts) >= 8 and parts[0].endswith(":") and parts[3] == "FUNC":
            size = int(parts[2], 0)
            if size:
                sizes.setdefault(parts[7], size)
    return sizes


def op_functions(image: Path, empty: Path) -> tuple[dict[str, int], int]:
    """The functions the op's image adds or changes over the empty harness (the library's, the
    glue's, and what of libc only they pull in): name -> bytes, the MAX_FUNCTIONS largest (ties by
    name), and how many more there were. The gate names the functions whose size changed."""
    base = function_sizes(empty)
    mine = [(n, b) for n, b in function_sizes(image).items() if base.get(n) != b]
    mine.sort(key=lambda nb: (-nb[1], nb[0]))
    return dict(mine[:MAX_FUNCTIONS]), max(0, len(mine) - MAX_FUNCTIONS)


def code_size(image: Image, empty: Image) -> dict:
    """Flash (text + rodata + data) and RAM (data + bss) of an op's image beyond the empty harness,
    and the sizes of the functions it adds (op_functions)."""
    flash = lambda s: s["text"] + s["rodata"] + s["data"]
    ram = lambda s: s["data"] + s["bss"]
    functions, omitted = op_functions(image.elf, empty.elf)
    return {"flash_bytes": flash(image.sizes) - flash(empty.sizes), "ram_bytes": ram(image.sizes) - ram(empty.sizes),
            "text": image.sizes["text"] - empty.sizes["text"], "rodata": image.sizes["rodata"] - empty.sizes["rodata"],
            "data": image.sizes["data"] - empty.sizes["data"], "bss": image.sizes["bss"] - empty.sizes["bss"],
            "empty_flash_bytes": flash(empty.sizes), "functions": functions,
            **({"functions_omitted": omitted} if omitted else {})}
