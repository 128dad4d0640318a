"""The worked example of docs/pqc.md ("pqm4's assembly through your own checkout"): the recipe in
docs/examples/pqm4 loads without pqm4, names pqm4's layout only (every source and include dir under
the --library-source tree), and its folder holds cryptobench's files only. Building it needs a pqm4
checkout, which is never in this repository; the docs' commands use one."""
from pathlib import Path

import pytest

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "pqm4"
RECIPE = EXAMPLE / "pqm4-m4fspeed.toml"

# pqm4's layout as the recipe expects it (file names from pqm4 cc2c1b99; empty files, no pqm4 code)
PQM4_FILES = ["mupq/common/fips202.c", "mupq/common/fips202.h", "common/keccakf1600.S",
              "crypto_kem/ml-kem-768/m4fspeed/kem.c", "crypto_kem/ml-kem-768/m4fspeed/fastntt.S",
              "crypto_sign/ml-dsa-65/m4f/sign.c", "crypto_sign/ml-dsa-65/m4f/ntt.S",
              "crypto_sign/ml-dsa-65/m4f/vector.s"]


def _fake_pqm4(root: Path) -> Path:
    for rel in PQM4_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def test_the_pqm4_example_recipe_loads_without_pqm4():
    recipe = load_recipe(str(RECIPE))
    assert recipe.name == "pqm4-m4fspeed"
    assert "m4f" in recipe.name                 # compare --reference pqm4 sets it beside pqm4's assembly rows
    assert recipe.glue == EXAMPLE / "glue.c"
    assert set(recipe.ops) == {"ml-kem-keygen", "ml-kem-encaps", "ml-kem-decaps",
                               "ml-dsa-keygen", "ml-dsa-sign", "ml-dsa-verify"}
    assert {v.name: v.when for v in recipe.variants} == {"ml-kem-768": {"level": 768}, "ml-dsa-65": {"level": 65}}
    assert recipe.heap is False and recipe.stack_bytes == "rest"


def test_the_pqm4_example_names_only_files_under_the_library_source(tmp_path):
    root = _fake_pqm4(tmp_path / "pqm4")
    recipe = resolve(load_recipe(str(RECIPE)), root)
    names = set()
    for variant in [None, *recipe.variants]:
        for f in recipe.files(variant):
            assert f.resolve().is_relative_to(root.resolve())
            names.add(f.relative_to(root).as_posix())
    assert names == set(PQM4_FILES) - {"mupq/common/fips202.h"}     # each pattern found its file
    kem = recipe.files(recipe.variants[0])
    assert [f.name for f in kem] == ["fips202.c", "keccakf1600.S", "kem.c", "fastntt.S"]   # no ML-DSA code
    assert all((root / d).is_dir() for d in recipe.include_dirs)


def test_the_pqm4_example_refuses_a_tree_that_is_not_pqm4(tmp_path):
    (tmp_path / "other").mkdir()
    with pytest.raises(UsageError, match=r"pqm4-m4fspeed\.toml:\d+: key 'sources': .* matches no file"):
        resolve(load_recipe(str(RECIPE)), tmp_path / "other")


def test_the_pqm4_example_folder_holds_only_cryptobench_files():
    """No pqm4, mupq or PQClean source is committed with the example: the two files are ours."""
    files = sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*") if p.is_file())
    assert files == ["glue.c", "pqm4-m4fspeed.toml"]
    glue = (EXAMPLE / "glue.c").read_text()
    assert "SPDX-License-Identifier" not in glue and "Name:        crypto_kem" not in glue
