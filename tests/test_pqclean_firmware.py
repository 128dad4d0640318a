"""The pqclean firmware recipe (PQClean's clean ML-KEM / ML-DSA on the MCU targets) and the recipe
format it needs: a variant's own `sources`, `[library] stack_bytes`, `heap` as the arena's size, a
variant's `stack_needs` (a board that links less stack is refused before the run), and a
config_dir with subfolders. The slow tests build the images with the real cross compiler and run
them on the simulator, with kyber-py / dilithium-py checking the outputs."""
import importlib.util
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT, cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware import build
from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve

CRATE = Path(os.environ.get("CRYPTOBENCH_CACHE", ROOT / ".cache")) / "crates" / "pqcrypto-mlkem-0.1.0" / "pqclean"
KEM_OPS = ["ml-kem-keygen", "ml-kem-encaps", "ml-kem-decaps"]
DSA_OPS = ["ml-dsa-keygen", "ml-dsa-sign", "ml-dsa-verify"]
needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="gcc-arm-none-eabi is installed by ./setup.sh")
needs_pqclean = pytest.mark.skipif(not CRATE.is_dir(), reason="the pqcrypto-mlkem crate is unpacked by ./setup.sh")
needs_pqc = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("kyber_py", "dilithium_py")),
                               reason="the pqc extra (kyber-py, dilithium-py) is installed by ./setup.sh")


# --- the recipe ------------------------------------------------------------------------------------

def test_the_pqclean_recipe_has_every_ml_kem_and_ml_dsa_op_with_one_variant_per_level():
    r = load_recipe("pqclean")
    assert sorted(r.ops) == sorted(KEM_OPS + DSA_OPS)
    assert r.stack_bytes == "rest" and type(r.heap) is int and r.heap >= 216   # one SHAKE state and its header
    by_level = {v.when["level"]: v for v in r.variants}
    assert sorted(by_level) == [44, 65, 87, 512, 768, 1024]
    for level, v in by_level.items():
        kem = level >= 512
        assert v.ops == (KEM_OPS if kem else DSA_OPS)
        tree = f"crypto_kem/ml-kem-{level}/clean/*.c" if kem else f"crypto_sign/ml-dsa-{level}/clean/*.c"
        assert v.sources == ["common/fips202.c", tree]
        assert any(d.startswith(("PQ_KEM_LEVEL=" if kem else "PQ_DSA_LEVEL=") + str(level)) for d in v.defines)
        assert any(d.startswith("PQ_IMPL=") for d in v.defines)
    # the sets whose clean signing needs more stack than a 96 KiB board has say how much
    assert by_level[87].stack_needs["ml-dsa-sign"] > 96 * 1024
    assert set(by_level[87].stack_needs) == set(DSA_OPS)


@needs_pqclean
def test_each_variant_builds_its_own_parameter_set_only():
    r = resolve(load_recipe("pqclean"), CRATE)
    by_name = {v.name: v for v in r.variants}
    files = [f.relative_to(CRATE).as_posix() for f in r.files(by_name["ml-kem-768"])]
    assert "common/fips202.c" in files and "crypto_kem/ml-kem-768/clean/kem.c" in files
    assert not any("ml-kem-512" in f or "ml-kem-1024" in f or "ml-dsa" in f for f in files)
    assert [f.relative_to(CRATE).as_posix() for f in r.files()] == ["common/fips202.c"]     # [library]'s


# --- the recipe format: variant sources, stack_bytes, heap, stack_needs ---------------------------

BASE = '[library]\nname = "x"\nversion = "1"\nglue = "harness:glue/mbedtls.c"\nsources = ["a.c"]\n'
OPS = '\n[ops]\n"ml-dsa-sign" = "x"\n"ml-dsa-verify" = "x"\n'


def _write(tmp_path, text: str) -> Path:
    p = tmp_path / "r.toml"
    p.write_text(text)
    return p


def test_a_variants_sources_replace_the_librarys(tmp_path):
    tree = tmp_path / "tree"
    for rel in ("a.c", "one/x.c", "one/y.c", "two/z.c"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("int v;\n")
    p = _write(tmp_path, BASE + OPS + '\n[[variant]]\nname = "one"\nwhen = { level = 44 }\nsources = ["a.c", "one/*.c"]\n'
                                      '\n[[variant]]\nname = "plain"\nwhen = { level = 65 }\n')
    r = resolve(load_recipe(str(p)), tree)
    one, plain = r.variants
    assert r.files(one) == [tree / "a.c", tree / "one" / "x.c", tree / "one" / "y.c"]
    assert r.files(plain) == r.files() == [tree / "a.c"]          # no sources of its own: [library]'s


def test_a_variant_source_that_matches_nothing_names_its_line(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.c").write_text("int a;\n")
    p = _write(tmp_path, BASE + OPS + '\n[[variant]]\nname = "one"\nwhen = { level = 44 }\nsources = ["gone/*.c"]\n')
    with pytest.raises(UsageError) as exc:
        resolve(load_recipe(str(p)), tree)
    msg = str(exc.value)
    assert msg.startswith(f"{p}:14: ") and "'gone/*.c' matches no file" in msg and "\n" not in msg


def test_a_variant_source_outside_the_tree_is_refused(tmp_path):
    p = _write(tmp_path, BASE + OPS + '\n[[variant]]\nname = "one"\nsources = ["../elsewhere/*.c"]\n')
    with pytest.raises(UsageError) as exc:
        load_recipe(str(p))
    assert str(exc.value).startswith(f"{p}:") and "\n" not in str(exc.value)


@pytest.mark.parametrize("value", ['"rest"', "4096", "100000"])
def test_stack_bytes_takes_bytes_or_rest(tmp_path, value):
    r = load_recipe(str(_write(tmp_path, BASE + f"stack_bytes = {value}\n" + OPS)))
    assert r.stack_bytes == json.loads(value)


@pytest.mark.parametrize("value", ['"all"', "12", "true", "1.5", "-4096", "99999999999"])
def test_bad_stack_bytes_is_one_line_naming_file_and_line(tmp_path, value):
    p = _write(tmp_path, BASE + f"stack_bytes = {value}\n" + OPS)
    with pytest.raises(UsageError) as exc:
        load_recipe(str(p))
    msg = str(exc.value)
    assert msg.startswith(f"{p}:6: ") and "'stack_bytes'" in msg and '"rest"' in msg and "\n" not in msg


@pytest.mark.parametrize("value,expect", [("true", True), ("false", False), ("1024", 1024)])
def test_heap_is_a_flag_or_the_arenas_size(tmp_path, value, expect):
    assert load_recipe(str(_write(tmp_path, BASE + f"heap = {value}\n" + OPS))).heap == expect


@pytest.mark.parametrize("value", ["8", '"big"', "1.5"])
def test_a_bad_heap_is_one_line_naming_file_and_line(tmp_path, value):
    p = _write(tmp_path, BASE + f"heap = {value}\n" + OPS)
    with pytest.raises(UsageError) as exc:
        load_recipe(str(p))
    msg = str(exc.value)
    assert msg.startswith(f"{p}:6: ") and "'heap'" in msg and "\n" not in msg


@pytest.mark.subprocess
def test_the_arena_takes_the_heaps_bytes_and_the_stack_the_rest(tmp_path):
    from cryptobench.targets.mcu.boards import BOARDS
    r = SimpleNamespace(name="x", version="1", source_dir=tmp_path, include_dirs=[], config_dir=None, defines=[],
                        sources=[], heap=1000, stack_bytes="rest")
    budget = build.FirmwareBuilder(r, BOARDS["nucleo-f401re"], "m4", "Os", jobs=1)._ram_budget()
    assert budget["FW_ARENA_BYTES"] == 1000 and budget["STACK_BYTES"] == "rest"
    r.heap = False
    assert build.FirmwareBuilder(r, BOARDS["nucleo-f401re"], "m4", "Os", jobs=1)._ram_budget()["FW_ARENA_BYTES"] == 64


@pytest.mark.parametrize("value,expect", [
    ('{ "ml-dsa-sign" = "lots" }', "expected a number of bytes"),
    ('{ "ml-dsa-keygen" = 1000 }', "names op 'ml-dsa-keygen', which [ops] does not list"),
    ('[1, 2]', "must be a table of op = bytes"),
])
def test_a_bad_stack_needs_is_one_line_naming_file_and_line(tmp_path, value, expect):
    p = _write(tmp_path, BASE + OPS + f'\n[[variant]]\nname = "one"\nstack_needs = {value}\n')
    with pytest.raises(UsageError) as exc:
        load_recipe(str(p))
    msg = str(exc.value)
    assert msg.startswith(f"{p}:13: ") and expect in msg and "\n" not in msg


# --- config_dir with a subfolder ---------------------------------------------------------------------

@pytest.mark.subprocess
def test_a_config_dir_with_a_subfolder_builds_and_its_files_key_the_build(tmp_path):
    from cryptobench.targets.mcu.boards import BOARDS
    cfg = tmp_path / "cfg"
    (cfg / "sub").mkdir(parents=True)
    (cfg / "config.h").write_text("#define A 1\n")
    (cfg / "sub" / "inner.h").write_text("#define B 1\n")
    assert build._config_files(cfg)[0][0] == "config.h"
    assert [name for name, _ in build._config_files(cfg)] == ["config.h", "sub/inner.h"]
    r = SimpleNamespace(name="x", version="1", source_dir=tmp_path, include_dirs=[], config_dir=cfg, defines=[],
                        sources=[])
    lib_dir = lambda: build.FirmwareBuilder(r, BOARDS["mps2-an385"], "m3", "Os", jobs=1).lib_dir   # noqa: E731
    before = lib_dir()                                 # the folder is no longer read as a file
    (cfg / "sub" / "inner.h").write_text("#define B 2\n")
    assert lib_dir() != before                         # a header in the subfolder changes the build


# --- on the simulator (slow) -------------------------------------------------------------------------

def _run(tmp_path, *args, name="run", repeat=2):
    out = tmp_path / f"{name}.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "stm32f407:clock=24MHz", "--engine", "pqclean",
               "--repeat", str(repeat), *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out), "--quiet")
    assert out.exists(), proc.stderr
    return proc, json.loads(out.read_text())["results"]


@pytest.mark.slow
@needs_arm
@needs_pqclean
@needs_pqc
@pytest.mark.parametrize("ops,level,by", [(KEM_OPS, 768, "kyber-py"), (DSA_OPS, 44, "dilithium-py")])
def test_ml_kem_768_and_ml_dsa_44_run_verified_on_the_simulated_m4(tmp_path, ops, level, by):
    proc, results = _run(tmp_path, *[a for op in ops for a in ("--op", op)], "--param", f"level={level}")
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["op"] for r in results) == sorted(ops)
    for r in results:
        assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
        assert "known-answer vectors on the target" in r["detail"] and f"matches {by}" in r["detail"]
        assert r["served_by"].startswith(f"PQClean ML-{'KEM' if level > 100 else 'DSA'}-{level} clean")
        assert r["stack_bytes"] > 1000 and r["code_size"]["flash_bytes"] > 1000
        assert r["heap_bytes"] > 0                     # fips202.c's SHAKE states, from the arena
        assert r["cycles"]["per_op_median"] > 100_000 and r["provenance"] == "simulated"
    # the rejection cases ran on the target as known-answer tests: decaps of a flipped c, verify of a
    # flipped signature and of another message (pqc_cells.py)
    last = {r["op"]: r for r in results}
    n = int(last[ops[-1]]["detail"].split()[0])
    assert n > int(last[ops[0]]["detail"].split()[0])


@pytest.mark.slow
@needs_arm
@needs_pqclean
@needs_pqc
def test_ml_dsa_signing_takes_the_asked_repetitions_on_the_simulator_and_shows_their_spread(tmp_path):
    # the simulator fixes 2 repetitions (it is deterministic); hedged signing is not: each timed
    # repetition draws its own rnd, so rejection sampling loops a different number of times
    proc, results = _run(tmp_path, "--op", "ml-dsa-sign", "--op", "ml-dsa-verify", "--param", "level=44", repeat=6)
    assert proc.returncode == 0, proc.stderr
    by_op = {r["op"]: r for r in results}
    sign = [s[2] for s in by_op["ml-dsa-sign"]["samples"]]
    assert len(sign) == 6 and len(set(sign)) > 1
    assert len({s[2] for s in by_op["ml-dsa-verify"]["samples"]}) == 1


@pytest.mark.slow
@needs_arm
@needs_pqclean
@needs_pqc
def test_ml_dsa_87_on_a_96_kib_board_is_refused_in_one_line_before_it_runs(tmp_path):
    proc, results = _run(tmp_path, "--op", "ml-dsa-verify", "--param", "level=87")
    (r,) = results
    assert r["status"] == "unsupported", r["detail"]
    assert "needs about 92,648 bytes of stack" in r["detail"] and "nucleo-f401re links" in r["detail"]
    assert "\n" not in r["detail"]


EXITS_GLUE = r'''/* a library that gives up as PQClean's fips202.c does when malloc fails: exit(111) */
#include <stdlib.h>
#include "fw.h"
const char fw_lib_name[] = "exits";
const char fw_lib_version[] = "0";
static int yes(const fw_params *p, const char **why) { (void)p; (void)why; return FW_OK; }
static int gives_up(const fw_params *p, fw_io *io) { (void)p; (void)io; exit(111); return FW_OK; }
const fw_op fw_lib_ops[] = {{"sha256", yes, gives_up}, {0, 0, 0}};
const int fw_lib_n_ops = 1;
'''


@pytest.mark.slow
@needs_arm
def test_a_library_that_calls_exit_is_a_failed_cell_at_once_not_a_watchdog(tmp_path):
    # what used to go wrong: exit(111) parked the core silently and the run waited for its watchdog
    home = tmp_path / "exits"
    (home / "src").mkdir(parents=True)
    (home / "src" / "empty.c").write_text("int exits_empty;\n")
    (home / "exits.c").write_text(EXITS_GLUE)
    (home / "exits.toml").write_text('[library]\nname = "exits"\nversion = "0"\nglue = "exits.c"\n'
                                     'sources = ["src/*.c"]\n\n[ops]\n"sha256" = "calls exit(111)"\n')
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "stm32f407", "--recipe", str(home / "exits.toml"),
               "--library-source", str(home), "--op", "sha256", "--param", "bytes=3", "--repeat", "2",
               "--timeout", "600", "--db", str(tmp_path / "db.sqlite"), "--json", str(out), "--quiet")
    assert out.exists(), proc.stderr
    (r,) = json.loads(out.read_text())["results"]
    assert r["status"] == "failed" and "the library called exit(111)" in r["detail"], r["detail"]
    assert "watchdog" not in r["detail"]
