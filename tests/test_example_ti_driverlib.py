"""The worked example of docs/accelerators.md ("TI's driverlib against the models"): the recipe in
docs/examples/ti-driverlib loads (its glue exists, its keys, ops and defines are valid) without
TI's SDK, which is never in this repository. Building it needs the SDK tree (--library-source),
which the docs' commands use."""
from pathlib import Path

from cryptobench.targets.mcu.firmware.recipes import load_recipe

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "ti-driverlib"
DRIVERLIB = "source/ti/devices/cc13x2_cc26x2/driverlib/"


def test_the_ti_driverlib_example_recipe_loads_without_the_sdk():
    recipe = load_recipe(str(EXAMPLE / "ti-driverlib.toml"))
    assert recipe.name == "ti-driverlib"
    assert recipe.glue == EXAMPLE / "glue.c"
    assert set(recipe.ops) == {"sha256", "aes-ecb-encrypt", "aes-cbc-encrypt", "ecdh-keygen", "ecdh-shared-secret"}
    assert recipe.requires == ["cc26x2-crypto", "cc26x2-pka"]         # runs where the models (or the part) are
    assert recipe.completion == "polling"
    assert sorted(recipe.sources) == sorted(DRIVERLIB + f for f in ("aes.c", "sha2.c", "pka.c", "interrupt.c", "cpu.c"))
    # driverlib's flash functions, not calls into the part's ROM (rom.h), which the image lacks
    assert set(recipe.defines) == {"DeviceFamily_CC26X2", "DRIVERLIB_NOROM"}


def test_the_example_folder_holds_only_cryptobench_files():
    """No TI source or header is committed with the example: the two files are ours."""
    files = sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == ["glue.c", "ti-driverlib.toml"]
    for name in files:
        text = (EXAMPLE / name).read_text()
        assert "Texas Instruments Incorporated" not in text and "Redistribution and use" not in text
