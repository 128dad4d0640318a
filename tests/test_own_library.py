"""Your own library, from your own folder (docs/own-library.md): a recipe and a glue outside the
repository, paths confined to the recipe's folder and the library tree, cflags, build variants,
the harness's newlib stubs, --vectors DIR, the AES-EAX host reference, and --cpu m4f on the
simulator. The end-to-end runs start the real cross compiler, QEMU and the simulator."""
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.build import COMMON_CFLAGS, library_cflags
from cryptobench.targets.mcu.firmware.recipes import FIRMWARE_DIR, load_recipe, resolve
from cryptobench.targets.verify import NO_REFERENCE, load_vectors, python_reference

FIXTURE = ROOT / "tests" / "fixtures" / "own-library"
MONOCYPHER = Path(os.environ.get("CRYPTOBENCH_CACHE", ROOT / ".cache")) / "crates" / "monocypher-sys-4.0.2" / "Monocypher"


@pytest.fixture
def user_dir(tmp_path):
    """The fixture copied outside the repository, as a user would keep it."""
    home = tmp_path / "my-library"
    shutil.copytree(FIXTURE, home)
    assert not home.resolve().is_relative_to(ROOT)
    return home


def _run(tmp_path, *args, name="run", exit_code=0):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out), "--quiet")
    assert proc.returncode == exit_code, proc.stderr
    return proc, json.loads(out.read_text())


def _chacha_vector(tmp_path) -> Path:
    """A user's vector file: one ChaCha20-Poly1305 vector (64-byte message, 12-byte AAD)
    computed with pycryptodome, in the bundled vectors' format."""
    from Crypto.Cipher import ChaCha20_Poly1305
    key, nonce, aad, msg = bytes(range(32)), bytes(range(12)), bytes(range(100, 112)), bytes(range(64))
    c = ChaCha20_Poly1305.new(key=key, nonce=nonce)
    c.update(aad)
    ct, tag = c.encrypt_and_digest(msg)
    folder = tmp_path / "my-vectors"
    folder.mkdir()
    (folder / "mine.json").write_text(json.dumps({"family": "aead", "vectors": [{
        "id": "user-chapoly-64", "op": "chacha20-poly1305-encrypt", "params": {"bytes": 64, "aad_bytes": 12},
        "in": {"key": key.hex(), "nonce": nonce.hex(), "aad": aad.hex(), "msg": msg.hex()},
        "out": {"ct": (ct + tag).hex()}, "source": "computed with pycryptodome for this test"}]}, indent=1))
    return folder


# --- end to end: a library from a folder outside the repository ------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("target", [["--target", "qemu:mps2-an385"],
                                    ["--target", "sim:cortex-m0", "--device", "stm32f030"]],
                         ids=["qemu", "sim"])
def test_a_library_from_a_folder_outside_the_repository(tmp_path, user_dir, target):
    assert MONOCYPHER.is_dir(), "./setup.sh fetches monocypher-sys into .cache/crates"
    vectors = _chacha_vector(tmp_path)
    proc, doc = _run(tmp_path, *target, "--recipe", str(user_dir / "recipe.toml"), "--library-source", str(MONOCYPHER),
                     "--op", "chacha20-poly1305-encrypt", "--param", "bytes=64", "--param", "aad_bytes=0,12",
                     "--vectors", str(vectors))
    cells = {r["params"]["aad_bytes"]: r for r in doc["results"]}
    for aad, r in cells.items():
        assert r["engine"] == "mono-user" and r["status"] == "ok" and r["kat"] == "pass", (aad, r["detail"])
        assert "output matches the host's OpenSSL" in r["detail"]
    # with AAD: the two RFC 8439 vectors and the user's own one (--vectors) pass on the target
    assert "3 known-answer vectors on the target" in cells[12]["detail"]
    # without AAD: the recipe's variant 'noaad', a build of its own (its KATs: those with aad_bytes=0 only)
    assert "built as variant 'noaad'" in cells[0]["detail"] and "GLUE_NO_AAD" in cells[0]["detail"]
    build = doc["conditions"]["builds"]["mono-user"]
    assert build["recipe"] == str(user_dir / "recipe.toml") and build["library_cflags"] == "-std=gnu11"
    assert "noaad" in build["variants"]
    if target[1].startswith("sim:"):
        assert all(r["provenance"] == "simulated" and r["cycles"]["per_op_median"] > 0 for r in cells.values())
    else:
        assert all("time_s" not in r for r in cells.values())


@pytest.mark.qemu
def test_a_library_that_calls_abort_links_and_its_abort_is_reported(tmp_path, user_dir):
    proc, doc = _run(tmp_path, "--target", "qemu:mps2-an385", "--recipe", str(user_dir / "abort-library" / "recipe.toml"),
                     "--op", "sha256", "--param", "bytes=64", exit_code=3)
    (r,) = doc["results"]
    assert r["status"] == "failed" and "the target faulted (abort at pc=" in r["detail"], r["detail"]


@pytest.mark.e2e
def test_sim_cortex_m4_takes_the_m4f_build_its_board_lists(tmp_path):
    proc, doc = _run(tmp_path, "--target", "sim:cortex-m4", "--cpu", "m4f", "--device", "cc2652",
                     "--engine", "monocypher", "--op", "sha512", "--param", "bytes=64")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert doc["conditions"]["target"]["cpu"] == "m4f" and "-mfloat-abi=hard" in doc["conditions"]["builds"]["monocypher"]["cflags"]
    bad = cli("run", "--target", "sim:cortex-m4", "--cpu", "m7", "--device", "cc2652", "--op", "sha512")
    assert bad.returncode == 2 and "valid here: m4, m4f" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_library_cc_compiles_the_librarys_sources_only_and_is_recorded(tmp_path, user_dir):
    """--library-cc: another compiler (here a wrapper around the system one that logs what it
    compiles and names itself) for the library's own sources; the harness and glue keep
    arm-none-eabi-gcc. The conditions and the run's header say which compiler built the library."""
    log = tmp_path / "cc.log"
    cc = tmp_path / "old-gcc"
    cc.write_text("#!/bin/sh\n"
                  'if [ "$1" = "--version" ]; then echo "old-gcc 8.3.1 (a test wrapper)"; exit 0; fi\n'
                  f'echo "$@" >> "{log}"\n'
                  'exec arm-none-eabi-gcc "$@"\n')
    cc.chmod(0o755)
    proc, doc = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "ideal-m0", "--recipe", str(user_dir / "recipe.toml"),
                     "--library-source", str(MONOCYPHER), "--library-cc", str(cc), "--op", "chacha20-poly1305-encrypt",
                     "--param", "bytes=64", "--param", "aad_bytes=12")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    build = doc["conditions"]["builds"]["mono-user"]
    assert build["library_compiler"] == "old-gcc 8.3.1 (a test wrapper)" and build["library_cc"] == str(cc)
    assert build["compiler"].startswith("arm-none-eabi-gcc")
    compiled = log.read_text()
    assert "monocypher.c" in compiled and "glue.c" not in compiled and "main.c" not in compiled
    assert "the library's sources by old-gcc 8.3.1" in proc.stdout
    bad = cli("run", "--target", "sim:cortex-m0", "--recipe", str(user_dir / "recipe.toml"), "--library-source",
              str(MONOCYPHER), "--library-cc", str(tmp_path / "no-such-gcc"), "--db", str(tmp_path / "db2.sqlite"))
    assert bad.returncode == 2 and "--library-cc" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# --- paths ---------------------------------------------------------------------------------------

def _recipe(folder: Path, body: str, name="r.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(body)
    return p


BASE = '[library]\nname = "x"\nversion = "1"\n'


def test_paths_resolve_in_the_recipes_folder_and_the_library_tree(tmp_path):
    home, tree = tmp_path / "home", tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.c").write_text("int a;\n")
    _recipe(home / "cfg", "", "config.h")
    (home / "glue.c").write_text("\n")
    r = resolve(load_recipe(str(_recipe(home, BASE + 'glue = "glue.c"\nconfig_dir = "cfg"\ninclude_dirs = ["src"]\n'
                                                   'sources = ["src/*.c"]\n'))), tree)
    assert r.glue == (home / "glue.c").resolve() and r.config_dir == (home / "cfg").resolve()
    assert r.files() == [tree / "src" / "a.c"]
    # no crate and no --library-source: `root` inside the recipe's folder is the tree
    (home / "lib").mkdir()
    (home / "lib" / "b.c").write_text("int b;\n")
    r = resolve(load_recipe(str(_recipe(home, BASE + 'root = "lib"\nglue = "glue.c"\nsources = ["b.c"]\n', "own.toml"))))
    assert r.files() == [home / "lib" / "b.c"]
    # a bundled glue from a recipe of one's own
    r = load_recipe(str(_recipe(home, BASE + 'glue = "harness:glue/mbedtls.c"\nsources = ["a.c"]\n', "h.toml")))
    assert r.glue == FIRMWARE_DIR.resolve() / "glue" / "mbedtls.c"
    # bundled recipes keep their rule: glue and config_dir under harness/firmware
    assert load_recipe("mbedtls").config_dir == FIRMWARE_DIR.resolve() / "config"


@pytest.mark.parametrize("case", ["dotdot", "absolute", "symlink-glue", "symlink-source", "harness-escape",
                                  "root-escape"])
def test_a_path_out_of_the_recipes_folder_and_the_tree_is_refused(tmp_path, case):
    home, tree, outside = tmp_path / "home", tmp_path / "tree", tmp_path / "elsewhere"
    for d in (home, tree, outside):
        d.mkdir()
    (outside / "evil.c").write_text("int evil;\n")
    (home / "glue.c").write_text("\n")
    (tree / "a.c").write_text("int a;\n")
    glue, sources, line = "glue.c", '["a.c"]', 4
    if case == "dotdot":
        glue = "../elsewhere/evil.c"
    elif case == "absolute":
        glue = str(outside / "evil.c")
    elif case == "symlink-glue":
        (home / "link.c").symlink_to(outside / "evil.c")
        glue = "link.c"
    elif case == "symlink-source":
        (tree / "link.c").symlink_to(outside / "evil.c")
        sources, line = '["a.c", "link.c"]', 5
    elif case == "harness-escape":
        glue = "harness:../../README.md"
    elif case == "root-escape":
        path = _recipe(home, BASE + 'root = "../elsewhere"\nglue = "glue.c"\nsources = ["evil.c"]\n')
        with pytest.raises(UsageError) as exc:
            resolve(load_recipe(str(path)))
        assert f"{path}:4:" in str(exc.value) and "'root'" in str(exc.value) and "\n" not in str(exc.value)
        return
    path = _recipe(home, BASE + f'glue = "{glue}"\nsources = {sources}\n')
    with pytest.raises(UsageError) as exc:
        resolve(load_recipe(str(path)), tree)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:{line}:") and "\n" not in msg, msg
    assert "outside" in msg and "expected" in msg, msg


def test_the_monocypher_fixture_keeps_to_its_own_folder():
    r = load_recipe(str(FIXTURE / "recipe.toml"))
    assert r.home == FIXTURE.resolve() and r.glue == FIXTURE.resolve() / "glue.c" and not r.crate


# --- cflags and variants ------------------------------------------------------------------------

def test_cflags_come_after_the_defaults_and_their_std_replaces_c11():
    flags = ["-mcpu=cortex-m3", "-Os", *COMMON_CFLAGS]
    assert library_cflags(flags, []) == flags
    got = library_cflags(flags, ["-std=gnu11", "-Wno-unused"])
    assert "-std=c11" not in got and got[-2:] == ["-std=gnu11", "-Wno-unused"]
    assert library_cflags(flags, ["-Wno-unused"])[-1] == "-Wno-unused" and "-std=c11" in got + flags


@pytest.mark.parametrize("line,want", [
    ('cflags = ["-O3"]', "set by cryptobench itself"),
    ('cflags = ["-mcpu=cortex-m7"]', "set by cryptobench itself"),
    ('cflags = ["gnu11"]', "is not a compiler option"),
    ('cflags = "-std=gnu11"', "must be a list of strings"),
])
def test_bad_cflags_are_one_line_errors(tmp_path, line, want):
    path = _recipe(tmp_path, BASE + f'glue = "harness:glue/mbedtls.c"\nsources = ["a.c"]\n{line}\n')
    with pytest.raises(UsageError) as exc:
        load_recipe(str(path))
    assert str(exc.value).startswith(f"{path}:6:") and want in str(exc.value)


VARIANTS = BASE + '''glue = "harness:glue/mbedtls.c"
sources = ["a.c"]

[ops]
"aes-gcm-encrypt" = "x"
"sha256" = "y"

[[variant]]
name = "k128"
when = { key_bits = 128 }
ops = ["aes-gcm-encrypt"]
defines = ["KEY_BITS=128"]

[[variant]]
name = "k256"
when = { key_bits = 256 }
defines = ["KEY_BITS=256"]
cflags = ["-funroll-loops"]
'''


def test_variants_are_chosen_by_the_ops_parameters(tmp_path):
    r = load_recipe(str(_recipe(tmp_path, VARIANTS)))
    assert [v.name for v in r.variants] == ["k128", "k256"]
    assert r.variant_for("aes-gcm-encrypt", {"key_bits": 128}).defines == ["KEY_BITS=128"]
    assert r.variant_for("aes-gcm-encrypt", {"key_bits": 256}).cflags == ["-funroll-loops"]
    assert r.variant_for("aes-gcm-encrypt", {"key_bits": 192}) is None      # the [library] build
    assert r.variant_for("sha256", {"bytes": 64}) is None


@pytest.mark.parametrize("old,new,line,want", [
    ('when = { key_bits = 128 }', 'when = { key_size = 128 }', 13, "not a catalog parameter"),
    ('ops = ["aes-gcm-encrypt"]', 'ops = ["aes-ccm-encrypt"]', 14, "which [ops] does not list"),
    ('name = "k256"', 'name = "k128"', 18, "used twice"),
    ('cflags = ["-funroll-loops"]', 'cflags = ["-O0"]', 21, "set by cryptobench itself"),
    ('defines = ["KEY_BITS=256"]', 'define = ["KEY_BITS=256"]', 20, "unknown key 'define' in [[variant]]"),
])
def test_bad_variants_are_one_line_errors(tmp_path, old, new, line, want):
    path = _recipe(tmp_path, VARIANTS.replace(old, new))
    with pytest.raises(UsageError) as exc:
        load_recipe(str(path))
    assert str(exc.value).startswith(f"{path}:{line}:") and want in str(exc.value), str(exc.value)


# --- vectors and host references ------------------------------------------------------------------

def test_user_vectors_add_to_the_base_set_and_the_env_var_still_replaces_it(tmp_path, monkeypatch):
    base = load_vectors()
    mine = _chacha_vector(tmp_path)
    both = load_vectors(extra=[mine])
    assert len(both) == len(base) + 1 and both[-1]["id"] == "user-chapoly-64"
    other = tmp_path / "replacement"
    other.mkdir()
    shutil.copy(mine / "mine.json", other / "only.json")
    monkeypatch.setenv("CRYPTOBENCH_VECTORS", str(other))
    assert [v["id"] for v in load_vectors(extra=[mine])] == ["user-chapoly-64", "user-chapoly-64"]


@pytest.mark.qemu
@pytest.mark.parametrize("edit,want", [
    (lambda v: v.update(op="chacha99"), "unknown op 'chacha99'"),
    (lambda v: v["in"].update(key="zz"), "in.key is not hex"),
    (lambda v: v["params"].update(key_bits=128), "'key_bits' is not a parameter of chacha20-poly1305-encrypt"),
    (lambda v: v.pop("out"), "lacks out"),
])
def test_bad_user_vectors_are_one_line_errors_before_the_run(tmp_path, edit, want):
    folder = _chacha_vector(tmp_path)
    doc = json.loads((folder / "mine.json").read_text())
    edit(doc["vectors"][0])
    (folder / "mine.json").write_text(json.dumps(doc, indent=1))
    proc = cli("run", "--target", "qemu:mps2-an385", "--engine", "monocypher", "--op", "sha512",
               "--vectors", str(folder), "--db", str(tmp_path / "db.sqlite"))
    assert proc.returncode == 2 and want in proc.stderr, proc.stderr
    op_line = (folder / "mine.json").read_text().splitlines().index('   "op": "%s",' % doc["vectors"][0]["op"]) + 1
    assert len(proc.stderr.strip().splitlines()) == 1 and f"{folder / 'mine.json'}:{op_line}:" in proc.stderr
    assert not (tmp_path / "db.sqlite").exists()


def test_aes_eax_has_a_host_reference_and_norx_says_why_not():
    # EAX paper (Bellare, Rogaway, Wagner), test vector 1 (empty message) and 2 (2 bytes)
    ref = python_reference("aes-eax-encrypt", {}, {"key": bytes.fromhex("233952DEE4D5ED5F9B9C6D6FF80FF478"),
                                                    "iv": bytes.fromhex("62EC67F9C3A4A407FCB2A8C49031A8B3"),
                                                    "aad": bytes.fromhex("6BFB914FD07EAE6B"), "msg": b""})
    assert ref[0].hex() == "e037830e8389f27b025a2d6527e79d01" and "pycryptodome" in ref[1]
    ref = python_reference("aes-eax-encrypt", {}, {"key": bytes.fromhex("91945D3F4DCBEE0BF45EF52255F095A4"),
                                                    "iv": bytes.fromhex("BECAF043B0A23D843194BA972C66DEBD"),
                                                    "aad": bytes.fromhex("FA3BFD4806EB53FA"), "msg": bytes.fromhex("F7FB")})
    assert ref[0].hex() == "19dd5c4c9331049d0bdab0277408f67967e5"
    assert python_reference("norx32-4-1-encrypt", {}, {}) is None
    assert "no maintained Python package" in NO_REFERENCE["norx32-4-1-encrypt"]


def test_an_eax_cell_on_a_target_is_cross_checked_against_the_reference():
    from cryptobench.targets.mcu.firmware.plan import Inputs
    from cryptobench.targets.mcu.target import McuTarget
    vals = {"key": bytes(16), "iv": bytes(16), "aad": b"", "msg": bytes(16)}
    check = McuTarget._python_expect("aes-eax-encrypt", {"key_bits": 128}, Inputs("aes-eax-encrypt", {}, vals))
    assert check["expect"] == python_reference("aes-eax-encrypt", {}, vals)[0] and "pycryptodome" in check["by"]
    check = McuTarget._python_expect("norx32-4-1-encrypt", {}, Inputs("norx32-4-1-encrypt", {}, {}))
    assert "no maintained Python package" in check["why"]


def test_sources_are_expanded_once_to_files_the_build_compiles(tmp_path):
    """`**` spans folders; folders, headers and what a build writes into the tree later (objects,
    temporary files) are never sources: the list is fixed when the recipe is resolved."""
    home, tree = tmp_path / "home", tmp_path / "tree"
    (tree / "src" / "deep").mkdir(parents=True)
    for name in ("src/a.c", "src/deep/b.c", "src/deep/c.S", "src/a.h", "README"):
        (tree / name).write_text("int x;\n")
    (home / "glue.c").parent.mkdir(parents=True)
    (home / "glue.c").write_text("\n")
    r = resolve(load_recipe(str(_recipe(home, BASE + 'glue = "glue.c"\nsources = ["**/*"]\n'))), tree)
    expected = [tree / "src" / "a.c", tree / "src" / "deep" / "b.c", tree / "src" / "deep" / "c.S"]
    assert r.files() == expected
    (tree / "src" / "tmp.1234.c").write_text("vanishes\n")        # what a glob at build time would pick up
    assert r.files() == expected
    with pytest.raises(UsageError, match=r"r2.toml:5: key 'sources': '\*\*/\*.h' matches no file under"):
        resolve(load_recipe(str(_recipe(home, BASE + 'glue = "glue.c"\nsources = ["**/*.h"]\n', "r2.toml"))), tree)


def test_a_bad_variant_source_is_reported_at_the_variants_line(tmp_path):
    home, tree = tmp_path / "home", tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.c").write_text("int a;\n")
    (home / "glue.c").parent.mkdir(parents=True)
    (home / "glue.c").write_text("\n")
    body = (BASE + 'glue = "glue.c"\nsources = ["src/a.c"]\n[[variant]]\nname = "v"\nwhen = { bytes = 64 }\n'
            'sources = ["src/missing.c"]\n[ops]\n"sha256" = "x"\n')
    with pytest.raises(UsageError, match=r"r.toml:9: key 'sources': 'src/missing.c' matches no file under"):
        resolve(load_recipe(str(_recipe(home, body))), tree)
    outside = body.replace('"src/missing.c"', '"../../etc/*.c"')
    with pytest.raises(UsageError, match=r"r.toml:9: 'sources' entry '../../etc/\*.c' leads outside"):
        load_recipe(str(_recipe(home, outside)))
    same = body.replace('"src/missing.c"', '"src/a.c"')       # the same text as [library]'s: still its own line
    (tree / "src" / "a.c").unlink()
    with pytest.raises(UsageError, match=r"r.toml:5: key 'sources'"):
        resolve(load_recipe(str(_recipe(home, same))), tree)


@pytest.mark.subprocess
def test_a_recipes_crate_download_is_said_before_it_starts(tmp_path, monkeypatch, capsys):
    from cryptobench.targets.mcu.firmware.recipes import crate_tree
    monkeypatch.setenv("CRYPTOBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "cargo"))       # an empty cargo, offline: the fetch fails at once
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    with pytest.raises(UsageError, match="r.toml: could not fetch crate no-such-crate-cb 9.9.9"):
        crate_tree("no-such-crate-cb", "9.9.9", "r.toml")
    said = capsys.readouterr().err
    assert said.startswith("cryptobench: r.toml: downloading crate no-such-crate-cb 9.9.9 from the Rust crate registry")
    assert "as its 'crate' key asks" in said


# --- a recipe that extends another ----------------------------------------------------------------

def test_a_recipe_extends_another_beside_it_key_by_key(tmp_path):
    """One build in several modes: the extending recipe's [library] keys and [ops] entries replace
    the other's one by one, the rest is the other's; an error in a key it took names the other file."""
    home, tree = tmp_path / "home", tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.c").write_text("int a;\n")
    (home / "glue.c").parent.mkdir(parents=True)
    (home / "glue.c").write_text("\n")
    base = _recipe(home, BASE + 'glue = "glue.c"\nsources = ["src/a.c"]\ndefines = ["MODE=0"]\n'
                               'completion = "polling"\n[ops]\n"sha256" = "one"\n"sha224" = "two"\n', "base.toml")
    child = _recipe(home, 'extends = "base.toml"\n[library]\nname = "x-irq"\ndefines = ["MODE=1"]\n'
                          'completion = "interrupt"\n[ops]\n"sha224" = "two, by interrupt"\n', "irq.toml")
    r = resolve(load_recipe(str(child)), tree)
    assert (r.name, r.version, r.defines, r.completion) == ("x-irq", "1", ["MODE=1"], "interrupt")
    assert r.ops == {"sha256": "one", "sha224": "two, by interrupt"}
    assert r.files() == [tree / "src" / "a.c"] and r.glue == (home / "glue.c").resolve()
    assert r.base == base and r.file_of("sources") == base and r.file_of("defines") == child
    (tree / "src" / "a.c").unlink()                  # an inherited key's error names the file that sets it
    with pytest.raises(UsageError, match=r"base.toml:5: key 'sources': 'src/a.c' matches no file under"):
        resolve(load_recipe(str(child)), tree)


@pytest.mark.parametrize("target, want", [
    ('"../elsewhere/base.toml"', "expected the file name of a recipe in this recipe's folder"),
    ('"/etc/passwd.toml"', "expected the file name of a recipe in this recipe's folder"),
    ('3', "expected the file name of a recipe in this recipe's folder"),
    ('"missing.toml"', "no recipe file"),
    ('"irq.toml"', "names this recipe itself"),
    ('"chain.toml"', "that recipe extends another itself"),
    ('"link.toml"', "no recipe file"),                      # a symlink out of the folder
])
def test_a_bad_extends_is_a_one_line_error(tmp_path, target, want):
    home, outside = tmp_path / "home", tmp_path / "elsewhere"
    outside.mkdir()
    _recipe(outside, BASE + 'glue = "glue.c"\nsources = ["a.c"]\n', "base.toml")
    _recipe(home, 'extends = "irq.toml"\n' + BASE, "chain.toml")
    (home / "link.toml").symlink_to(outside / "base.toml")
    child = _recipe(home, f'# a comment\nextends = {target}\n[library]\nname = "y"\n', "irq.toml")
    with pytest.raises(UsageError) as exc:
        load_recipe(str(child))
    msg = str(exc.value)
    assert msg.startswith(f"{child}:2:") and want in msg and "\n" not in msg, msg


def test_an_error_in_the_extended_recipe_names_its_own_file(tmp_path):
    home = tmp_path / "home"
    base = _recipe(home, BASE + 'glue = "glue.c"\nsources = ["a.c"]\nheap = "lots"\n', "base.toml")
    (home / "glue.c").write_text("\n")
    child = _recipe(home, 'extends = "base.toml"\n[library]\nname = "z"\n', "z.toml")
    with pytest.raises(UsageError, match=rf"^{base}:6: 'heap' must be"):
        load_recipe(str(child))
