"""The worked example of docs/accelerators.md ("ST's HAL against the models"): the recipe in
docs/examples/stm32cube-hal loads (its glue and config folder exist, its keys, ops and defines are
valid) without ST's SDK, which is never in this repository. Building it needs the SDK tree
(--library-source), which the docs' commands use."""
from pathlib import Path

from cryptobench.targets.mcu.firmware.recipes import load_recipe

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "stm32cube-hal"


def test_the_stm32cube_hal_example_recipe_loads_without_the_sdk():
    recipe = load_recipe(str(EXAMPLE / "stm32cube-hal.toml"))
    assert recipe.name == "stm32cube-hal"
    assert recipe.glue == EXAMPLE / "glue.c"
    assert (recipe.config_dir / "stm32f4xx_hal_conf.h").is_file()
    assert set(recipe.ops) == {"sha1", "sha224", "sha256", "aes-ecb-encrypt", "aes-cbc-encrypt"}
    assert recipe.requires == ["stm32f4-hash", "stm32f4-cryp"]        # runs where the models (or the part) are
    assert all(s.startswith("Drivers/STM32F4xx_HAL_Driver/Src/") for s in recipe.sources)


def test_the_example_folder_holds_only_cryptobench_files():
    """No ST source or header is committed with the example: the three files are ours."""
    files = sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == ["config/stm32f4xx_hal_conf.h", "glue.c", "stm32cube-hal.toml"]
    for name in files:
        assert "COPYRIGHT(c)" not in (EXAMPLE / name).read_text() and "STMicroelectronics. All rights" not in \
            (EXAMPLE / name).read_text()
