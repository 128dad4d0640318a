"""Mbed TLS _ALT: a user's replacement for part of Mbed TLS (here MBEDTLS_SHA256_ALT, as NXP's
DCP/CAAM ports replace SHA-256 and AES) is built from a folder outside the repository with only a
copy of the mbedtls recipe plus alt_* keys, and the cells prove that the replacement is the code
measured: the harness reports the replacement's own call counter per cell (fw_alt_calls), and the
known-answer tests and the host cross-check pass on it. Real QEMU and the real simulator."""
import json
import shutil

import pytest

from conftest import ROOT, cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.recipes import RECIPES_DIR, load_recipe

ALT = ROOT / "tests" / "fixtures" / "alt"
ALT_KEYS = ('alt_sources = ["alt/sha256_alt.c"]\n'
            'alt_include_dirs = ["alt"]\n'
            'alt_defines = ["MBEDTLS_SHA256_ALT"]\n')


def user_folder(tmp_path, extra=ALT_KEYS):
    """What a user writes: their alt files, and a copy of the mbedtls recipe with a new name and
    the alt keys, in a folder of their own."""
    folder = tmp_path / "my-port"
    (folder / "alt").mkdir(parents=True)
    for f in ("sha256_alt.h", "sha256_alt.c"):
        shutil.copy(ALT / f, folder / "alt" / f)
    text = (RECIPES_DIR / "mbedtls.toml").read_text()
    assert '\nname = "mbedtls"\n' in text and "\nheap = true" in text
    text = text.replace('\nname = "mbedtls"\n', '\nname = "mbedtls-sha256-alt"\n')
    # a recipe of one's own names cryptobench's glue and config with the harness: prefix
    text = text.replace('glue = "glue/mbedtls.c"', 'glue = "harness:glue/mbedtls.c"')
    text = text.replace('config_dir = "config"', 'config_dir = "harness:config"')
    head, sep, rest = text.partition("\nheap = true")
    line_end = rest.index("\n")
    recipe = folder / "mbedtls-sha256-alt.toml"
    recipe.write_text(head + sep + rest[:line_end + 1] + extra + rest[line_end + 1:])
    return recipe


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _check_alt_cells(doc, recipe):
    cells = {(r["op"], r["params"]["bytes"]): r for r in doc["results"]}
    assert set(cells) == {(op, n) for op in ("sha256", "sha224") for n in (0, 64)}
    for key, r in cells.items():
        assert r["engine"] == "mbedtls-sha256-alt"
        assert r["status"] == "ok" and r["kat"] == "pass", (key, r["detail"])
        assert "known-answer vectors on the target" in r["detail"] and "matches the host" in r["detail"]
        # init, starts, update, finish, free of mbedtls_sha256_ret: at least once per run
        assert r["alt_calls"] >= 5, (key, r.get("alt_calls"))
    build = doc["conditions"]["builds"]["mbedtls-sha256-alt"]
    assert build["alt"]["defines"] == ["MBEDTLS_SHA256_ALT"]
    assert build["alt"]["sources"] == [str((recipe.parent / "alt" / "sha256_alt.c").resolve())]
    assert build["recipe"] == str(recipe)


@pytest.mark.qemu
def test_the_alt_sha256_is_measured_on_qemu(tmp_path):
    recipe = user_folder(tmp_path)
    doc = _run(tmp_path, "--target", "qemu:mps2-an385", "--recipe", str(recipe), "--op", "sha256", "--op", "sha224",
               "--param", "bytes=0,64")
    _check_alt_cells(doc, recipe)
    # the library's own SHA-256 cell on the same machine has no replacement to count
    plain = _run(tmp_path, "--target", "qemu:mps2-an385", "--engine", "mbedtls", "--op", "sha256",
                 "--param", "bytes=64", name="plain")
    (r,) = plain["results"]
    assert r["status"] == "ok" and "alt_calls" not in r
    assert "alt" not in plain["conditions"]["builds"]["mbedtls"]


@pytest.mark.e2e
def test_the_alt_sha256_is_measured_on_the_simulator(tmp_path):
    recipe = user_folder(tmp_path)
    doc = _run(tmp_path, "--target", "sim:cortex-m4", "--recipe", str(recipe), "--op", "sha256", "--op", "sha224",
               "--param", "bytes=0,64")
    _check_alt_cells(doc, recipe)
    for r in doc["results"]:
        assert r["provenance"] == "simulated" and r["cycles"]["per_op_median"] > 0
    plain = _run(tmp_path, "--target", "sim:cortex-m4", "--engine", "mbedtls", "--op", "sha256",
                 "--param", "bytes=64", name="plain")
    alt = {r["params"]["bytes"]: r for r in doc["results"] if r["op"] == "sha256"}[64]
    (own,) = plain["results"]
    assert "alt_calls" not in own
    # different code, different cycle counts (the stand-in is plain C without mbedTLS's unrolling)
    assert alt["cycles"]["per_op_median"] != own["cycles"]["per_op_median"]


@pytest.mark.parametrize("extra, expect", [
    ('alt_sources = ["../elsewhere/sha256_alt.c"]\nalt_defines = ["MBEDTLS_SHA256_ALT"]\n',
     "key 'alt_sources': '../elsewhere/sha256_alt.c' leads outside the recipe's folder"),
    ('alt_sources = ["alt/missing.c"]\nalt_defines = ["MBEDTLS_SHA256_ALT"]\n',
     "key 'alt_sources': 'alt/missing.c' matches no file under"),
    ('alt_include_dirs = ["nope"]\nalt_defines = ["MBEDTLS_SHA256_ALT"]\n',
     "key 'alt_include_dirs': 'nope' is not a directory under"),
    ('alt_sources = ["alt/sha256_alt.c"]\n', "alt sources without 'alt_defines'"),
    ('alt_defines = "MBEDTLS_SHA256_ALT"\n', "'alt_defines' must be a list of strings"),
])
def test_bad_alt_keys_are_one_line_errors_naming_file_and_line(tmp_path, extra, expect):
    recipe = user_folder(tmp_path, extra)
    line = next(i for i, l in enumerate(recipe.read_text().splitlines(), 1) if l.startswith(extra.split()[0]))
    with pytest.raises(UsageError) as exc:
        load_recipe(str(recipe))
    msg = str(exc.value)
    assert msg.startswith(f"{recipe}:{line}: ") and expect in msg and "\n" not in msg, msg
