"""Microcontroller targets: recipes, the firmware protocol over a pseudo-terminal, and real QEMU
runs of the real libraries (a small subset, to stay fast)."""
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import ROOT, cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.plan import fill
from cryptobench.targets.mcu.firmware.protocol import FirmwareReport
from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve

FIXTURES = ROOT / "tests" / "fixtures" / "firmware"
needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
                               reason="gcc-arm-none-eabi and qemu-system-arm are installed by ./setup.sh")


# --- recipes -------------------------------------------------------------------------------------

def test_builtin_recipes_load_and_name_catalog_ops():
    for name in ("mbedtls", "bearssl", "monocypher"):
        r = load_recipe(name)
        assert r.ops and r.glue.exists() and r.crate


def test_recipe_with_unknown_op_names_file_line_and_valid_ops(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[library]\nname = "x"\nversion = "1"\nglue = "harness:glue/mbedtls.c"\nsources = ["a.c"]\n\n'
                   '[ops]\n"aes-gcm-encrypt" = "ok"\n"sha3-256" = "not in the catalog"\n')
    with pytest.raises(UsageError) as exc:
        load_recipe(str(bad))
    msg = str(exc.value)
    assert f"{bad}:9:" in msg and "unknown op 'sha3-256'" in msg and "aes-gcm-encrypt" in msg


def test_recipe_with_missing_source_names_key_and_pattern(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[library]\nname = "x"\nversion = "1"\nglue = "harness:glue/mbedtls.c"\n'
                   'sources = ["library/nonexistent.c"]\n')
    with pytest.raises(UsageError) as exc:
        resolve(load_recipe(str(bad)), tmp_path)
    msg = str(exc.value)
    assert f"{bad}:5:" in msg and "key 'sources'" in msg and "library/nonexistent.c" in msg


@pytest.mark.qemu
def test_bad_target_options_are_one_line_errors():
    for args, want in ((["--target", "qemu:nosuch"], "valid: qemu:mps2-an385"),
                       (["--target", "qemu:microbit", "--cpu", "m7"], "cannot run m7 code"),
                       (["--target", "qemu:mps2-an385", "--opt", "O9"], "valid: O0, Os, O2, O3"),
                       (["--target", "board:nucleo-f030r8"], "needs --port"),
                       (["--target", "qemu:mps2-an385", "--engine", "openssl-hw"], "no library recipe 'openssl-hw'")):
        proc = cli("run", "--op", "sha256", *args)
        assert proc.returncode == 2, proc.stderr
        assert want in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_fill_matches_the_host_harness(harness):
    from cryptobench.targets.host.harness import HarnessProcess
    # sha256 of the filler's bytes, computed by the host harness, equals hashlib's of fill()
    import hashlib
    p = HarnessProcess()
    try:
        data = fill(37, 1)
        out = p.compute("openssl", "sha256", {"bytes": 37}, {"msg": data.hex()})
        assert out["digest"] == hashlib.sha256(data).hexdigest()
    finally:
        p.close()


# --- the protocol over a serial line (pseudo-terminal pair) --------------------------------------

RECORDED = [
    '{"t":"hello","harness":"cbh-fw","version":"0.1.0","board":"nucleo-f030r8","cpu":"m0","lib":"mbedtls","counter":"systick"}',
    "boot noise that is not JSON",
    '{"t":"kat","id":"sha256-abc","op":"sha256","ok":1}',
    '{"t":"cell","i":0,"op":"sha256","status":"ok","out":"00","stack":412,"heap":0,"overhead":4,"cyc":[10480,10476]}',
    '{"t":"cell",garbled',
    '{"t":"end","cells":1,"kat_fail":0}',
]


def test_serial_reader_over_a_pty_pair():
    serial = pytest.importorskip("serial")
    from cryptobench.targets.mcu.board_link import read_lines
    master, slave = os.openpty()
    port = serial.Serial(os.ttyname(slave), 115200, timeout=0.2)

    def board():
        for line in RECORDED:
            os.write(master, (line + "\r\n").encode())
    writer = threading.Thread(target=board)
    writer.start()
    report = FirmwareReport()
    read_lines(port, report, timeout_s=20, silence_s=10)
    writer.join()
    port.close()
    os.close(master)
    os.close(slave)
    assert report.complete and not report.problem
    assert report.hello["board"] == "nucleo-f030r8"
    assert report.kats[0]["ok"] == 1
    assert report.cells[0]["cyc"] == [10480, 10476] and report.cells[0]["stack"] == 412
    assert any("garbled" in t for t in report.tail)


@pytest.mark.slow
def test_serial_reader_watchdog_on_silence():
    serial = pytest.importorskip("serial")
    from cryptobench.targets.mcu.board_link import read_lines
    master, slave = os.openpty()
    port = serial.Serial(os.ttyname(slave), 115200, timeout=0.1)
    os.write(master, (RECORDED[0] + "\n").encode())
    report = FirmwareReport()
    read_lines(port, report, timeout_s=20, silence_s=1)
    port.close()
    os.close(master)
    os.close(slave)
    assert not report.complete and "no output" in report.problem and report.hello


# --- the build cache key ---------------------------------------------------------------------------

def _any_cc():
    cc = shutil.which("arm-none-eabi-gcc") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to list dependencies with")
    return cc


def _tree(tmp_path):
    """A source including a header that includes another, and a header nothing includes."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text('#include "top.h"\nint f(void) { return TOP; }\n')
    (tmp_path / "src" / "local.h").write_text("#define LOCAL 1\n")
    (tmp_path / "inc" / "top.h").write_text('#include "deep.h"\n#define TOP DEEP\n')
    (tmp_path / "inc" / "deep.h").write_text("#define DEEP 1\n")
    (tmp_path / "inc" / "unused.h").write_text("#define UNUSED 1\n")
    return tmp_path / "src" / "a.c", [f"-I{tmp_path / 'inc'}"]


@pytest.mark.subprocess
def test_the_object_key_covers_every_header_the_compilation_includes(tmp_path):
    from cryptobench.targets.mcu.firmware.build import object_key
    cc = _any_cc()
    src, flags = _tree(tmp_path)
    key = object_key(cc, flags, src)
    assert object_key(cc, flags, src) == key                 # stable
    deep = tmp_path / "inc" / "deep.h"
    deep.write_text("#define DEEP 2\n")                     # a header included through another
    assert object_key(cc, flags, src) != key
    deep.write_text("#define DEEP 1\n")
    assert object_key(cc, flags, src) == key
    (tmp_path / "inc" / "unused.h").write_text("#define UNUSED 2\n")
    assert object_key(cc, flags, src) == key                 # nothing includes it: no rebuild
    # a header in the source's own directory, found before the -I ones, takes over
    (tmp_path / "src" / "top.h").write_text("#define TOP 3\n")
    assert object_key(cc, flags, src) != key
    (tmp_path / "src" / "top.h").unlink()
    assert object_key(cc, flags, src) == key
    assert object_key(cc, flags + ["-DEXTRA=1"], src) != key
    src.write_text(src.read_text() + "int g(void) { return 0; }\n")
    assert object_key(cc, flags, src) != key


@pytest.mark.subprocess
def test_a_missing_header_is_a_build_error_naming_the_source(tmp_path):
    from cryptobench.targets.mcu.firmware.build import BuildError, object_key
    src, flags = _tree(tmp_path)
    (tmp_path / "inc" / "deep.h").unlink()
    with pytest.raises(BuildError) as exc:
        object_key(_any_cc(), flags, src, roots=[tmp_path])
    assert exc.value.what == "listing the headers of a.c" and "deep.h" in exc.value.tail
    # outside the places the build was given, the diagnostic is not quoted (targets/mcu/firmware/diagnostics.py)
    with pytest.raises(BuildError) as exc:
        object_key(_any_cc(), flags, src)
    assert "deep.h" not in exc.value.tail and "not shown" in exc.value.tail


def test_make_dependency_listings_are_read_with_their_escapes():
    from cryptobench.targets.mcu.firmware.build import make_dependencies
    text = "x: /s/a.c /lib/my\\ dir/h.h \\\n /inc/c\\#1.h /inc/$$d.h\\\n  /inc/last.h\n"
    assert make_dependencies(text) == [Path("/s/a.c"), Path("/lib/my dir/h.h"), Path("/inc/c#1.h"),
                                       Path("/inc/$d.h"), Path("/inc/last.h")]


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="gcc-arm-none-eabi is installed by ./setup.sh")
def test_editing_a_firmware_header_rebuilds_the_objects_that_include_it(tmp_path, monkeypatch):
    # what used to go wrong: edit harness/firmware/core/fw.h and the cached objects linked stale
    from types import SimpleNamespace
    from cryptobench.targets.mcu.firmware import build
    from cryptobench.targets.mcu.boards import BOARDS
    core = tmp_path / "core"
    shutil.copytree(build.CORE, core)
    monkeypatch.setattr(build, "CORE", core)
    monkeypatch.setenv("CRYPTOBENCH_CACHE", str(tmp_path / "cache"))
    recipe = SimpleNamespace(name="none", version="0", source_dir=tmp_path, include_dirs=[], config_dir=None,
                             defines=[], sources=[])

    def core_objects():
        builder = build.FirmwareBuilder(recipe, BOARDS["mps2-an385"], "m3", "Os", jobs=1)
        return builder._core_objects(), builder.compiled

    first, compiled = core_objects()
    assert compiled == 4                                       # startup, hal_cortexm, main, newlib_stubs
    assert core_objects() == (first, 0)                        # cached
    fw_h = core / "fw.h"
    fw_h.write_text(fw_h.read_text() + "\n#define FW_EDITED_IN_A_TEST 1\n")
    again, compiled = core_objects()
    # main.c includes fw.h; startup.c, hal_cortexm.c and newlib_stubs.c do not
    rebuilt = [a.name for a, b in zip(again, first) if a != b]
    assert compiled == 1 and rebuilt and all(n.startswith("main.") for n in rebuilt)


# --- real QEMU runs --------------------------------------------------------------------------------

def _mcu_run(tmp_path, *args, name="run", exit_code=0):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == exit_code, proc.stderr
    return proc, json.loads(out.read_text())


@pytest.mark.qemu
@needs_arm
def test_qemu_subset_passes_kats_on_target_with_stack_and_code_size(tmp_path):
    args = ("--target", "qemu:mps2-an385", "--op", "sha256", "--op", "aes-gcm-encrypt", "--op", "aes-eax-encrypt",
            "--param", "bytes=0,64", "--param", "aad_bytes=16", "--engine", "mbedtls", "--engine", "bearssl",
            "--engine", "monocypher")
    proc, doc = _mcu_run(tmp_path, *args)
    cells = {(r["op"], r["params"].get("bytes"), r["engine"]): r for r in doc["results"]}
    for key in [("sha256", 0, "mbedtls"), ("sha256", 64, "bearssl"), ("aes-gcm-encrypt", 64, "mbedtls"),
                ("aes-gcm-encrypt", 0, "bearssl")]:
        r = cells[key]
        assert r["status"] == "ok" and r["kat"] == "pass", (key, r["detail"])
        assert "known-answer vectors on the target" in r["detail"]
        assert r["target"] == "qemu:mps2-an385"
        assert 0 < r["stack_bytes"] < 16384
        assert 0 < r["code_size"]["flash_bytes"] < 200_000
        assert "time_s" not in r, "QEMU timings must never be reported"
    assert cells[("aes-gcm-encrypt", 64, "mbedtls")]["params"]["rekey"] == 1
    assert cells[("sha256", 64, "monocypher")]["status"] == "unsupported"
    assert cells[("aes-eax-encrypt", 64, "bearssl")]["status"] == "unsupported"
    assert doc["conditions"]["target"]["timing"].startswith("none")
    assert "arm-none-eabi-gcc" in doc["conditions"]["builds"]["mbedtls"]["compiler"]
    assert "stack B" in proc.stdout and "flash B" in proc.stdout
    import jsonschema
    jsonschema.validate(doc, json.loads((ROOT / "docs" / "result.schema.json").read_text()))
    # a second run reuses the cached build: the same image, the same sizes and stack
    _, again = _mcu_run(tmp_path, *args, name="again")
    for r in again["results"]:
        if r["status"] == "ok":
            first = cells[(r["op"], r["params"].get("bytes"), r["engine"])]
            assert r["code_size"] == first["code_size"] and r["stack_bytes"] == first["stack_bytes"]


@pytest.mark.qemu
@needs_arm
def test_cortex_m0_build_on_the_microbit(tmp_path):
    _, doc = _mcu_run(tmp_path, "--target", "qemu:microbit", "--cpu", "m0", "--op", "chacha20-poly1305-encrypt",
                      "--param", "bytes=16", "--engine", "bearssl", "--engine", "monocypher")
    for r in doc["results"]:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["engine"], r["detail"])
        assert "-mcpu=cortex-m0" in doc["conditions"]["builds"][r["engine"]]["cflags"]


@pytest.mark.qemu
@needs_arm
def test_fault_hang_and_wrong_output_are_failed_cells_and_the_run_goes_on(tmp_path):
    proc, doc = _mcu_run(tmp_path, "--target", "qemu:mps2-an385", "--recipe", str(FIXTURES / "misbehave.toml"),
                         "--library-source", str(FIXTURES), "--op", "sha1", "--op", "sha224", "--op", "sha256",
                         "--op", "sha512", "--param", "bytes=3", "--timeout", "4", exit_code=3)   # nothing measured
    cells = {r["op"]: r for r in doc["results"]}
    assert cells["sha1"]["status"] == "failed" and "faulted (hardfault" in cells["sha1"]["detail"]
    assert cells["sha224"]["status"] == "failed" and "watchdog" in cells["sha224"]["detail"]
    assert "cbh-fw" in cells["sha224"]["detail"]            # the last console lines are kept
    assert cells["sha256"]["status"] == "failed" and cells["sha256"]["kat"] == "fail"
    assert cells["sha512"]["status"] == "unsupported"
