"""The TI Drivers example of docs/accelerators.md ("TI's drivers against the models"): the recipes in
docs/examples/ti-drivers load without TI's SDK, which is never in this repository, and hold only
cryptobench's files. With the SDK tree given ($CRYPTOBENCH_TI_SDK: a SimpleLink CC13xx/CC26xx SDK, or
any tree with source/ti/drivers and source/ti/devices/cc13x2_cc26x2), TI's TRNG driver runs on the
simulated CC2652 in both return modes."""
import json
import os
from pathlib import Path

import pytest

from conftest import cli
from cryptobench.targets.mcu.firmware.recipes import load_recipe

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "ti-drivers"
SDK = os.environ.get("CRYPTOBENCH_TI_SDK")


@pytest.mark.parametrize("name,completion,blocking", [("ti-drivers", "polling", 0), ("ti-drivers-blocking", "interrupt", 1)])
def test_the_ti_drivers_example_recipes_load_without_the_sdk(name, completion, blocking):
    recipe = load_recipe(str(EXAMPLE / f"{name}.toml"))
    assert recipe.name == name and recipe.glue == EXAMPLE / "glue.c"
    assert set(recipe.ops) == {"random", "sha256"} and recipe.requires == ["cc26x2-trng", "cc26x2-crypto"]
    assert recipe.completion == completion
    assert {"source/ti/drivers/trng/TRNGCC26XX.c", "source/ti/drivers/sha2/SHA2CC26X2.c"} <= set(recipe.sources)
    assert f"CB_TI_BLOCKING={blocking}" in recipe.defines


def test_the_example_folder_holds_only_cryptobench_files():
    files = sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == ["glue.c", "ti-drivers-blocking.toml", "ti-drivers.toml"]
    for name in files:
        text = (EXAMPLE / name).read_text()
        assert "Texas Instruments Incorporated" not in text and "Redistribution and use" not in text


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not SDK, reason="TI's SDK is not in this repository: set CRYPTOBENCH_TI_SDK to a SimpleLink "
                                    "CC13xx/CC26xx SDK tree to run TI's TRNG driver on the model")
@pytest.mark.parametrize("name", ["ti-drivers", "ti-drivers-blocking"])
def test_tis_trng_driver_on_the_model_takes_its_own_sampling_time(tmp_path, name):
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m4", "--device", "cc2652", "--recipe", str(EXAMPLE / f"{name}.toml"),
               "--library-source", SDK, "--op", "random", "--param", "bytes=16", "--db", str(tmp_path / "db.sqlite"),
               "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    (r,) = json.loads(out.read_text())["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert r["served_by"].startswith("peripheral: TI CC26x2 TRNG")
    # TRNGCC26XX_SAMPLES_PER_CYCLE_DEFAULT: 240,000 samples (one a clock at 48 MHz) per 64-bit number;
    # 16 bytes are two numbers, at most one of them already in the driver's entropy pool
    assert 240_000 <= r["cycles"]["per_op_median"] <= 2 * 240_000 + 50_000
    assert ("sleep" in r) == (name == "ti-drivers-blocking")
    # the band bench/accel_vs_published --ti-sdk measured for this driver build, or why there is none
    band = r["engine_band"]
    assert band.get("unvalidated") or band["pct"] >= abs(band["median_ratio"] - 1) * 100, band


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not SDK, reason="TI's SDK is not in this repository: set CRYPTOBENCH_TI_SDK to a SimpleLink "
                                    "CC13xx/CC26xx SDK tree to run TI's SHA2 driver on the model")
def test_tis_sha2_driver_on_the_model_hashes_and_costs_more_than_the_bare_driver(tmp_path):
    def cell(*how):
        out = tmp_path / f"run-{len(list(tmp_path.glob('run-*.json')))}.json"
        proc = cli("run", "--target", "sim:cortex-m4", "--device", "cc2652", *how, "--op", "sha256", "--param",
                   "bytes=64", "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
        assert proc.returncode == 0, proc.stderr
        (r,) = json.loads(out.read_text())["results"]
        assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
        return r

    ti = cell("--recipe", str(EXAMPLE / "ti-drivers.toml"), "--library-source", SDK)
    ours = cell("--engine", "cc26x2-crypto")
    assert ti["served_by"].startswith("peripheral: TI CC26x2 CRYPTO")
    # the same engine model under both: TI's driver adds its set-up (the shared-resource semaphore, power
    # dependency, hardware interrupt wiring) to what cryptobench's bare register driver does
    assert ti["cycles"]["per_op_median"] > ours["cycles"]["per_op_median"]
