"""What a recipe's `cflags` and `defines` may hold: a recipe is data, passed between people, and the
compiler is a program that runs others (-B, -wrapper, -fplugin), reads files (@file, -include,
-specs) and writes them (-o, -MF, -save-temps). So a flag is accepted only when it is on this
allow-list, which holds what changes the code a library compiles to and nothing that names a
program, a file or a plugin:

* warnings: -w, -W<name>, -Wno-<name>, -W<name>=<word or number>, -Werror, -pedantic (never -Wl,
  -Wa, -Wp: options passed on to the linker, assembler or preprocessor);
* code generation (-f<name>, -fno-<name>): the flags in CODEGEN, each a switch of how code is
  generated or optimised (a section per function for --gc-sections, unrolling, inlining, aliasing
  and overflow rules, char signedness, ...), some with a number (-finline-limit=N) or a word of
  their own (-fvisibility=hidden); -fno-builtin-<function>;
* ARM code generation: -munaligned-access, -mlong-calls, -mslow-flash-data, -mpure-code and their
  -mno- forms (-mcpu, -mfpu, -mfloat-abi, -mthumb are cryptobench's own, from --cpu);
* macros: -D<NAME>[=<value>], -U<NAME> (NAME a C identifier; the value printable, on one line,
  without shell syntax, and naming no header outside the library tree);
* -std=<a C standard>, -ansi, -g[0-3], -ggdb;
* include folders inside the library tree: -I<dir>, -iquote<dir>, -isystem<dir>, -idirafter<dir>
  with a relative <dir> that does not climb out ('..' past the top); build.py joins it
  to the tree and resolve() checks it, symlinks followed, once the tree is known.

-O is --opt's and -c/-o cryptobench's own: refused as set by cryptobench itself."""
from __future__ import annotations

import re
from pathlib import Path

# -f<name> / -fno-<name>: switches of how code is generated or optimised, nothing that names a file
CODEGEN = frozenset("""
    function-sections data-sections common omit-frame-pointer strict-aliasing strict-overflow wrapv trapv
    unroll-loops unroll-all-loops peel-loops builtin inline inline-functions inline-small-functions
    inline-functions-called-once tree-vectorize tree-loop-vectorize tree-slp-vectorize signed-char
    unsigned-char short-enums short-wchar freestanding hosted gnu89-inline ms-extensions plan9-extensions asm
    delete-null-pointer-checks optimize-sibling-calls schedule-insns schedule-insns2 reorder-blocks
    reorder-functions gcse tree-pre ipa-ra ipa-cp ipa-icf ipa-sra merge-constants merge-all-constants
    jump-tables single-precision-constant fast-math finite-math-only math-errno ident exceptions
    unwind-tables asynchronous-unwind-tables zero-initialized-in-bss toplevel-reorder tree-loop-distribute-patterns
    isolate-erroneous-paths-dereference lto-odr-type-merging strict-volatile-bitfields move-loop-invariants
    tree-switch-conversion caller-saves expensive-optimizations split-wide-types peephole2 if-conversion
    if-conversion2 rename-registers web loop-interchange version-loops-for-strides
""".split())
# -f<name>=<value>: a number, or one of a few words
CODEGEN_VALUE = {"inline-limit": r"\d{1,6}", "max-errors": r"\d{1,6}", "pack-struct": r"1|2|4|8|16",
                 "align-functions": r"\d{1,4}", "align-loops": r"\d{1,4}", "align-jumps": r"\d{1,4}",
                 "align-labels": r"\d{1,4}", "visibility": r"default|hidden|internal|protected",
                 "fp-contract": r"off|on|fast", "strict-overflow": r"[0-5]", "tls-model":
                 r"global-dynamic|local-dynamic|initial-exec|local-exec"}
ARM_SWITCHES = frozenset({"unaligned-access", "long-calls", "slow-flash-data", "pure-code"})
STANDARDS = frozenset({"c89", "c90", "c99", "c11", "c17", "c18", "c2x", "c23", "gnu89", "gnu90", "gnu99", "gnu11",
                       "gnu17", "gnu18", "gnu2x", "gnu23", "iso9899:1990", "iso9899:199409", "iso9899:1999",
                       "iso9899:2011", "iso9899:2017", "iso9899:2018"})
PLAIN = frozenset({"-w", "-Werror", "-pedantic", "-pedantic-errors", "-ansi", "-g", "-g0", "-g1", "-g2", "-g3", "-ggdb"})
INCLUDE_OPTIONS = ("-iquote", "-isystem", "-idirafter", "-I")    # longest first: -I would match -Iquote
# flags cryptobench sets itself (--cpu, --opt, the compile step)
RESERVED = ("-mcpu=", "-march=", "-mtune=", "-mfloat-abi=", "-mfpu=", "-mthumb", "-marm", "-O", "-c")
_WARNING = re.compile(r"-W(no-)?[a-z][a-z0-9+-]*(=[a-z0-9+-]{1,40})?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_LITERAL_PATH = re.compile(r'"([^"]*)"|<([^>]*)>')      # a header name in a macro: "x.h" or <x.h>
# why the classes a hostile recipe tries are refused (the first prefix that matches)
WHY = (("-B", "names a folder the compiler runs its programs from"),
       ("-wrapper", "runs a program of its own around the compiler's"),
       ("-specs", "reads a specs file that can run programs"), ("--specs", "reads a specs file that can run programs"),
       ("-fplugin", "loads a compiler plugin"), ("@", "reads more options from a file"),
       ("-M", "writes a dependency file"), ("-o", "names the output file"),
       ("-include", "includes a file in every source"), ("-imacros", "reads a file's macros into every source"),
       ("-Wl", "passes options to the linker"), ("-Wa", "passes options to the assembler"),
       ("-Wp", "passes options to the preprocessor"), ("-Xlinker", "passes options to the linker"),
       ("-Xassembler", "passes options to the assembler"), ("-Xpreprocessor", "passes options to the preprocessor"),
       ("--sysroot", "names another root for headers and libraries"), ("-isysroot", "names another root for headers"),
       ("-save-temps", "writes intermediate files"), ("-dump", "writes dump files"), ("-aux-info", "writes a file"),
       ("-fdump", "writes dump files"), ("-fprofile", "writes or reads profile files"),
       ("-fstack-usage", "writes a file per object"), ("-fcallgraph-info", "writes a file per object"),
       ("-L", "names a library folder"), ("-l", "links a library"), ("-T", "names a linker script"),
       ("-x", "changes the language of the sources"), ("-E", "stops after preprocessing"),
       ("-S", "stops before assembling"), ("-iprefix", "names a prefix for include folders"),
       ("-iwithprefix", "names an include folder"), ("-iplugindir", "names a plugin folder"),
       ("-print", "prints instead of compiling"), ("-v", "prints the commands the compiler runs"))


def flag_problem(flag: str) -> str | None:
    """Why `flag` may not be in a recipe's cflags; None when the allow-list holds it."""
    if any(flag.startswith(r) for r in RESERVED):
        return ("is set by cryptobench itself (--cpu chooses -mcpu/-mfpu/-mfloat-abi, --opt the -O level); "
                "leave it out")
    if not flag.startswith("-") and not flag.startswith("@"):
        return "is not a compiler option; expected flags such as \"-std=gnu11\" or \"-Wno-unused-parameter\""
    if flag in PLAIN or _allowed_form(flag):
        return None
    include = include_dir(flag)
    if include is not None:
        return path_problem(include[1])
    if flag.startswith(("-D", "-U")):
        return define_problem(flag[2:], flag[:2]) if flag[2:] else f"needs the macro in the same entry ({flag}NAME)"
    why = next((reason for prefix, reason in WHY if flag.startswith(prefix)), None)
    return (f"is refused: it {why}" if why else "is not on the list of flags a recipe may give") + (
        "; a recipe's cflags hold only warnings (-W...), the -f code generation flags of cryptobench's list, "
        "-D/-U macros, -std= and -I folders inside the library tree (docs/own-library.md)")


def _allowed_form(flag: str) -> bool:
    """Warnings, -f code generation flags, ARM switches, -std=, -gdwarf-N."""
    if flag.startswith(("-Wl", "-Wa", "-Wp")) and not _WARNING.fullmatch(flag):
        return False
    if flag.startswith(("-Wl,", "-Wa,", "-Wp,")):
        return False
    if _WARNING.fullmatch(flag):
        return True
    if flag.startswith("-std="):
        return flag[5:] in STANDARDS
    if re.fullmatch(r"-gdwarf(-[2-5])?", flag):
        return True
    if flag.startswith("-m"):
        return flag[2:].removeprefix("no-") in ARM_SWITCHES
    if flag.startswith("-fno-builtin-"):
        return bool(_IDENT.fullmatch(flag[len("-fno-builtin-"):]))
    if flag.startswith("-f"):
        name, eq, value = flag[2:].partition("=")
        if eq:
            return name in CODEGEN_VALUE and re.fullmatch(CODEGEN_VALUE[name], value) is not None
        return name.removeprefix("no-") in CODEGEN
    return False


def include_dir(flag: str) -> tuple[str, str] | None:
    """(option, folder) of an include-folder flag written in one entry (-Iinclude), else None."""
    for option in INCLUDE_OPTIONS:
        if flag.startswith(option):
            return option, flag[len(option):]
    return None


def path_problem(rel: str) -> str | None:
    """Why an include folder of a recipe's cflags does not stay inside the library tree."""
    if not rel:
        return "needs its folder in the same entry (-Iinclude, relative to the library tree)"
    if "\x00" in rel or any(ord(c) < 0x20 for c in rel):
        return "names a folder with control characters; expected a folder relative to the library tree"
    depth = 0
    for part in Path(rel).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            break
    if Path(rel).is_absolute() or depth < 0 or rel.startswith(("~", "=", "$")):   # =dir, $SYSROOT: the sysroot
        return ("leads outside the library's tree; an include folder is a path relative to the tree that does "
                "not climb out of it (-Iinclude)")
    return None


def define_problem(text: str, option: str = "-D") -> str | None:
    """Why NAME[=VALUE] may not be a macro of a recipe (`defines` entries, -D/-U in cflags)."""
    name, eq, value = text.partition("=")
    if not _IDENT.fullmatch(name):
        return f"names the macro {name[:40]!r}, not a C identifier (letters, digits and '_', not first a digit)"
    if option == "-U" and eq:
        return "undefines a macro: -UNAME takes no value"
    if any(not 0x20 <= ord(c) < 0x7f for c in value):
        return "has a value with a newline or another character that is not printable ASCII"
    if len(value) > 512:
        return "has a value longer than 512 characters"
    if "$" in value or "`" in value:
        return "has a value with shell syntax ($ or `); cryptobench runs no shell, and a value is C, not a command"
    for quoted, angled in _LITERAL_PATH.findall(value):
        header = quoted or angled
        if header.startswith(("/", "~")) or ".." in Path(header).parts or "\\" in header:
            return (f"names the header {header[:60]!r}, outside the library tree; a macro that names a header "
                    "names it relative to the include folders (\"mbedtls_config.h\")")
    return None
