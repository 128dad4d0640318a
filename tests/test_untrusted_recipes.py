"""A recipe is data (docs/promises.md, "Recipes and vectors are data"): its cflags and defines are
on an allow-list (targets/mcu/firmware/cflags.py), an include folder stays inside the library tree, a failed
build's diagnostics stored in a cell never quote a file from elsewhere (targets/mcu/firmware/diagnostics.py),
and a failed build leaves no private temporary in the cache. The refused flag classes, one file
each, are in tests/hostile/recipes/ (test_hostile.py)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import cli
from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.cflags import define_problem, flag_problem
from cryptobench.targets.mcu.firmware.diagnostics import HIDDEN, MAX_LINE, MAX_LINES, confine
from cryptobench.targets.mcu.firmware.recipes import builtin_recipes, load_recipe, resolve

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "hostile" / "recipes"
RECIPE = '''[library]
name = "mine"
version = "1"
glue = "harness:glue/monocypher.c"
sources = ["*.c"]
{extra}
[ops]
"sha512" = "crypto_sha512"
'''


@pytest.mark.parametrize("flag", [
    "-std=gnu11", "-std=c99", "-ansi", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wformat=2",
    "-Werror=implicit-function-declaration", "-Wframe-larger-than=512", "-Wlogical-op", "-w", "-pedantic",
    "-ffunction-sections", "-fdata-sections", "-fno-common", "-fomit-frame-pointer", "-fno-strict-aliasing",
    "-funroll-loops", "-fno-builtin", "-fno-builtin-memcpy", "-finline-limit=100", "-fvisibility=hidden",
    "-fno-tree-vectorize", "-fshort-enums", "-mno-unaligned-access", "-mslow-flash-data", "-g3", "-gdwarf-4",
    "-DX", "-DX=1", '-DMBEDTLS_CONFIG_FILE="mbedtls_config.h"', "-DCFG=<cfg/config.h>", "-UNDEBUG",
    "-Iinclude", "-Isrc/../include", "-isystemvendor/include", "-iquote.", "-idirafterextra",
])
def test_what_a_library_build_needs_is_on_the_list(flag):
    assert flag_problem(flag) is None, flag


@pytest.mark.parametrize("flag", [
    "-B/tmp", "-B", "-wrapper", "-specs=x", "--specs=nano.specs", "-fplugin=x.so", "-fplugin-arg-a-b=c", "@args",
    "-M", "-MM", "-MD", "-MMD", "-MF/tmp/x", "-MT", "-o/tmp/x", "-o", "-include", "-include/etc/hostname",
    "-imacros/etc/x", "-Wl,-T,x.ld", "-Wl,--wrap=main", "-Wa,-a=x", "-Wp,-MD,x", "-Xlinker", "-Xassembler",
    "-Xpreprocessor", "--sysroot=/", "-isysroot/", "-save-temps", "-save-temps=obj", "-dumpdir", "-dumpbase",
    "-aux-info", "-fdump-tree-all", "-fdump-rtl-expand=/tmp/x", "-fprofile-generate=/tmp/p", "-fprofile-use",
    "-fstack-usage", "-fcallgraph-info", "-flto", "-fpic", "-fdiagnostics-format=json", "-L/tmp", "-lc", "-T",
    "-x", "-E", "-S", "-v", "-print-prog-name=cc1", "-I/etc", "-I../..", "-I=/etc", "-I$SYSROOT/usr", "-I~/x",
    "-isystem/usr/include", "-iquote../../x", "-idirafter/etc", "-iprefix/x", "-O3", "-O", "-Os", "-c",
    "-mcpu=cortex-m7", "-mfloat-abi=hard", "-mthumb", "-march=armv7-m", "-mabi=aapcs", "-std=/etc/passwd",
    "-finline-limit=/tmp/x", "-fvisibility=/tmp", "-D", "-D1X", "-DX=$(id)", "-DX=`id`", "-DX=1\n#include <x>",
    '-DX="/etc/passwd"', "-DX=<../../etc/passwd>", "-UX=1", "gnu11", "",
])
def test_what_names_a_program_a_file_or_a_plugin_is_refused(flag):
    assert flag_problem(flag), flag


def test_a_define_is_a_c_identifier_and_a_printable_value():
    assert define_problem('MBEDTLS_CONFIG_FILE="mbedtls_config.h"') is None and define_problem("AES_KEY_BITS=128") is None
    for bad in ("1X", "X Y", "X-Y", "X=a\nb", "X=\x1b[2J", "X=$(id)", 'X="/etc/passwd"', 'X="a/../../b.h"',
                "X=" + "1" * 600):
        assert define_problem(bad), bad


def test_every_recipe_cryptobench_ships_or_uses_still_loads():
    for name in builtin_recipes():
        load_recipe(name)
    for path in [*REPO.glob("bench/silicon/*/recipe.toml"), REPO / "tests/fixtures/own-library/recipe.toml"]:
        load_recipe(str(path))


def _tree(tmp_path: Path, cflags: list[str]) -> tuple[Path, Path]:
    """A recipe (in its own folder) and a library tree with include/ and a symlink out of the tree."""
    tree = tmp_path / "tree"
    (tree / "include").mkdir(parents=True)
    (tree / "lib.c").write_text("int f(void) { return 1; }\n")
    (tree / "out").symlink_to("/etc", target_is_directory=True)
    folder = tmp_path / "recipe"
    folder.mkdir()
    path = folder / "recipe.toml"
    path.write_text(RECIPE.format(extra=f"cflags = {json.dumps(cflags)}\n"))
    return path, tree


def test_an_include_folder_of_the_cflags_is_joined_to_the_library_tree(tmp_path):
    from cryptobench.targets.mcu.firmware.build import in_tree
    path, tree = _tree(tmp_path, ["-Iinclude", "-Wall"])
    recipe = resolve(load_recipe(str(path)), tree)
    assert in_tree(recipe.cflags, tree) == [f"-I{tree / 'include'}", "-Wall"]


@pytest.mark.parametrize("flag,want", [("-Iout", "outside the library tree"), ("-Iout/ssl", "outside the library tree"),
                                       ("-Inowhere", "is not a directory")])
def test_an_include_folder_that_leads_out_by_a_symlink_or_is_missing_is_refused(tmp_path, flag, want):
    path, tree = _tree(tmp_path, ["-Wall", flag])
    with pytest.raises(UsageError) as exc:
        resolve(load_recipe(str(path)), tree)
    assert str(exc.value).startswith(f"{path}:6:") and want in str(exc.value), str(exc.value)


def test_a_diagnostic_about_a_file_outside_is_hidden_with_the_lines_it_quotes(tmp_path):
    tree = tmp_path / "tree"
    text = "\n".join([
        f"In file included from {tree}/src/a.c:1:",
        "/etc/hostname:1:1: error: unknown type name 'myhost'",
        "    1 | myhost",
        "      | ^~~~~~",
        f"{tree}/src/a.c:3:5: error: expected ';' before 'int'",
        "    3 | int x",
        "/usr/lib/gcc/arm-none-eabi/12.2.1/../../../arm-none-eabi/bin/ld: region `FLASH' overflowed by 12 bytes",
        "arm-none-eabi-gcc: error: /root/secret/x.c: No such file or directory",
        "compilation terminated.",
    ])
    got = confine(text, [tree], cwd=tmp_path)
    assert "myhost" not in got and "/etc/hostname" not in got and HIDDEN in got
    assert f"{tree}/src/a.c:3:5: error: expected ';'" in got and "    3 | int x" in got
    assert "\nld: region `FLASH' overflowed by 12 bytes" in got           # what mcu.py reads "does not fit" from
    assert "arm-none-eabi-gcc: error: …/x.c: No such file" in got and "/root" not in got


def test_a_relative_or_symlinked_path_is_judged_where_it_leads(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "link.h").symlink_to("/etc/hostname")
    got = confine("tree/../secret.h:1:1: error: 'SECRET'\ntree/link.h:2:1: error: 'HOST'\n", [tmp_path / "tree"],
                  cwd=tmp_path)
    assert "SECRET" not in got and "HOST" not in got and got == HIDDEN


def test_the_stored_tail_is_bounded():
    got = confine("\n".join(f"cc1: error: {'x' * 1000} {i}" for i in range(100)), [])
    assert len(got.splitlines()) == MAX_LINES and all(len(line) <= MAX_LINE for line in got.splitlines())


@pytest.mark.subprocess
def test_a_failed_tool_leaves_no_private_file(tmp_path):
    from cryptobench.targets.mcu.firmware.build import BuildError, _private, _produce
    target = tmp_path / "x.o"
    tmp = _private(target)
    with pytest.raises(BuildError):
        _produce(["sh", "-c", f"echo half > '{tmp}'; echo 'cc1: error: broken' >&2; exit 1"], tmp, target, "compiling x")
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.qemu
def test_a_library_that_includes_a_file_from_outside_its_tree_fails_without_quoting_it(tmp_path):
    """The cell says the build failed; the secret's text is in no cell, and the cache holds no
    .tmp file afterwards."""
    (tmp_path / "secret.h").write_text("SECRET_TOKEN_XYZ and more secret words;\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "bad.c").write_text('#include "../secret.h"\nint f(void) { return 1; }\n')
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "recipe.toml").write_text(RECIPE.format(extra=""))
    db, cache = tmp_path / "db.sqlite", tmp_path / "cache"
    proc = cli("run", "--target", "qemu:mps2-an385", "--recipe", str(tmp_path / "rec" / "recipe.toml"),
               "--library-source", str(tree), "--op", "sha512", "--db", str(db),
               env={**os.environ, "CRYPTOBENCH_CACHE": str(cache)})
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(cli("show", "latest", "--format", "json", "--db", str(db)).stdout)
    (cell,) = doc["results"]
    assert cell["status"] == "failed" and cell["detail"].startswith("build failed:") and HIDDEN in cell["detail"]
    assert "SECRET_TOKEN" not in json.dumps(doc) and "SECRET_TOKEN" not in proc.stdout + proc.stderr
    assert not list(cache.rglob("*.tmp"))


@pytest.mark.parametrize("case", ["cflags-B.toml", "cflags-include.toml", "cflags-MF.toml", "variant-cflags-Wl.toml",
                                  "cflags-D-newline.toml"])
def test_the_command_line_refuses_a_hostile_recipe_before_any_work(tmp_path, case):
    path = CORPUS / case
    line, fragment = path.read_text().splitlines()[0].split("expect:", 1)[1].strip().split(": ", 1)
    db = tmp_path / "db.sqlite"
    proc = cli("run", "--target", "qemu:mps2-an385", "--recipe", str(path), "--op", "sha256", "--db", str(db))
    assert proc.returncode == 2 and f"{path}:{line}:" in proc.stderr and fragment in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not db.exists()


def test_a_program_named_by_b_never_runs(tmp_path):
    """-B DIR would make the compiler run DIR/as and DIR/cc1 (as the user running cryptobench)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "ran"
    for name in ("as", "cc1", "collect2", "ld"):
        (bin_dir / name).write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
        (bin_dir / name).chmod(0o755)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "lib.c").write_text("int f(void) { return 1; }\n")
    (tmp_path / "recipe.toml").write_text(RECIPE.format(extra=f'cflags = ["-B{bin_dir}/"]\n'))
    proc = cli("run", "--target", "qemu:mps2-an385", "--recipe", str(tmp_path / "recipe.toml"),
               "--library-source", str(tmp_path / "tree"), "--op", "sha512", "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 2 and "names a folder the compiler runs its programs from" in proc.stderr
    assert not marker.exists()


def test_a_source_that_links_out_of_the_tree_is_refused(tmp_path):
    path, tree = _tree(tmp_path, [])
    (tree / "leak.c").symlink_to("/etc/hostname")
    with pytest.raises(UsageError, match=f"{path}:5: 'sources' entry .* leads to /etc/hostname, outside"):
        resolve(load_recipe(str(path)), tree)


def test_an_alt_source_that_links_out_of_the_recipes_folder_is_refused(tmp_path):
    path, _ = _tree(tmp_path, [])
    (path.parent / "sha512_alt.c").symlink_to("/etc/hostname")
    path.write_text(RECIPE.format(extra='alt_sources = ["*.c"]\nalt_defines = ["X_ALT"]\n'))
    with pytest.raises(UsageError, match=f"{path}:6: .*sha512_alt.c.*leads outside the recipe's folder"):
        load_recipe(str(path))
