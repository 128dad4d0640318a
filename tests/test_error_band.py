"""Error bands of simulated numbers (targets/mcu/sim/error_band.py): the condition class of each
kind of device condition, the bands file's validation, a simulated cell's band in its JSON, its
table and its export, and "unvalidated" for a class without silicon rows."""
import json

import pytest
from conftest import cli
from storeutil import stored_run

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim import error_band
from cryptobench.targets.mcu.sim.devices import get_device
from cryptobench.targets.mcu.sim.error_band import (band_for, band_pct, band_short, band_text, bands_text,
                                                    condition_class, load_bands, merge_rows)

MODEL = "cbsim-trm v3"


@pytest.mark.parametrize("spec, core, name", [
    ("ideal-m0", "cortex-m0", "cortex-m0, 0 WS"),
    ("stm32f030:clock=8MHz", "cortex-m0", "cortex-m0, 0 WS"),                 # the table gives 0 WS at 8 MHz
    ("stm32f091", "cortex-m0", "cortex-m0, wait states + prefetch"),
    ("stm32f030:prefetch=off", "cortex-m0", "cortex-m0, wait states, prefetch off"),
    ("nrf52840", "cortex-m4", "cortex-m4, 0 WS"),                             # its cache modelled as 0 WS
    ("stm32f407:clock=24MHz", "cortex-m4", "cortex-m4, 0 WS"),                # ART present, but 0 WS
    ("stm32f411", "cortex-m4", "cortex-m4, wait states + ART"),
    ("stm32f207", "cortex-m3", "cortex-m3, wait states + ART"),
    ("stm32f411:cache=off", "cortex-m4", "cortex-m4, wait states, caches off, prefetch on"),
    ("stm32f411:cache=off,prefetch=off", "cortex-m4", "cortex-m4, wait states, caches off, prefetch off"),
    ("stm32f746", "cortex-m7", "cortex-m7"),
    ("imxrt1060", "cortex-m7", "cortex-m7"),
    ("ideal-m33", "cortex-m33", "cortex-m33"),
])
def test_condition_class_of_each_kind_of_condition(spec, core, name):
    assert condition_class(get_device(spec, core)) == name


def _rows(*errs, klass="cortex-m4, wait states + ART", lib="p256-m", device="stm32f411"):
    return [{"class": klass, "library": lib, "device": device, "label": f"op{i}", "commit": "abc123",
             "date": "2025-01-02", "error_pct": e} for i, e in enumerate(errs)]


def test_bands_written_by_the_bench_load_back(tmp_path):
    path = tmp_path / "error_bands.toml"
    path.write_text(bands_text(_rows(1.2, -2.3, 0.4) + _rows(0.5, klass="cortex-m0, 0 WS", lib="x"), MODEL))
    bands = load_bands(path)
    art = bands.classes["cortex-m4, wait states + ART"]
    assert (art.rows, art.median_abs_pct, art.max_abs_pct, art.band_pct) == (3, 1.2, 2.3, 3.0)
    assert art.libraries == ("p256-m",) and art.commits == ("abc123",) and bands.model == MODEL
    assert len(bands.rows) == 4 and bands.classes["cortex-m0, 0 WS"].band_pct == 1.0
    assert band_pct(3.0) == 3.0 and band_pct(3.01) == 4.0 and band_pct(0.0) == 0.0


def test_merge_keeps_other_libraries_rows_and_replaces_rerun_ones(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text(bands_text(_rows(1.0, 2.0) + _rows(4.0, lib="other"), MODEL))
    merged = merge_rows(load_bands(path), _rows(0.5, 0.6), MODEL)
    assert sorted((r["library"], r["error_pct"]) for r in merged) == [("other", 4.0), ("p256-m", 0.5),
                                                                       ("p256-m", 0.6)]
    with pytest.raises(UsageError, match="measured on cbsim-trm v3, this run on cbsim-trm v4"):
        merge_rows(load_bands(path), _rows(0.5), "cbsim-trm v4")


@pytest.mark.parametrize("edit, expect", [
    (lambda t: t.replace("band_pct = 3", "band_pct = 2"), r"b\.toml:\d+: class 'cortex-m4, wait states \+ ART': "
                                                          r"band_pct 2 is below its max_abs_pct 2\.3"),
    (lambda t: t.replace("rows = 3", 'rows = "three"'), r"b\.toml:\d+: class .*: rows must be a whole number"),
    (lambda t: t.replace('model = "cbsim-trm v3"\n', ""), r"b\.toml:1: top-level 'model' missing"),
    (lambda t: t.replace("libraries = [\"p256-m\"]", "libraries = []"), r"libraries must be a non-empty list"),
    (lambda t: t + "\n[[class\n", r"b\.toml: not TOML \(.*line \d+"),
    (lambda t: t.replace('error_pct = 1.2', 'error_pct = "x"'), r"b\.toml:\d+: \[\[row\]\] needs"),
])
def test_a_bad_bands_file_is_one_line_naming_file_and_line(tmp_path, edit, expect):
    path = tmp_path / "b.toml"
    path.write_text(edit(bands_text(_rows(1.2, -2.3, 0.4), MODEL)))
    with pytest.raises(UsageError, match=expect) as exc:
        load_bands(path)
    assert "\n" not in str(exc.value)


def test_the_class_line_is_the_line_of_the_bad_class(tmp_path):
    path = tmp_path / "b.toml"
    text = bands_text(_rows(1.0) + _rows(2.0, klass="cortex-m0, 0 WS"), MODEL).replace("max_abs_pct = 2.0",
                                                                                       "max_abs_pct = -1")
    path.write_text(text)
    line = text.splitlines().index("[[class]]") + 1                 # cortex-m0 sorts first
    with pytest.raises(UsageError, match=rf"b\.toml:{line}: class 'cortex-m0, 0 WS': max_abs_pct"):
        load_bands(path)


def test_a_class_without_rows_is_unvalidated(tmp_path):
    path = tmp_path / "b.toml"
    path.write_text(bands_text(_rows(1.2, 2.3), MODEL))
    bands = load_bands(path)
    art = band_for(get_device("stm32f411", "cortex-m4"), MODEL, bands)
    assert art["pct"] == 3.0 and art["rows"] == 2 and art["source"].startswith("bench/sim_vs_silicon at abc123")
    assert band_text(art) == "simulated, ±3 % (cortex-m4, wait states + ART, 2 rows)" and band_short(art) == "±3 %"
    m33 = band_for(get_device("ideal-m33", "cortex-m33"), MODEL, bands)
    assert m33["unvalidated"] and m33["class"] == "cortex-m33" and "pct" not in m33
    assert band_text(m33).startswith("simulated, unvalidated (cortex-m33: no published silicon rows")
    # rows measured on another cycle model validate nothing about this one
    other = band_for(get_device("stm32f411", "cortex-m4"), "cbsim-trm v9", bands)
    assert other["unvalidated"] and "rerun bench/sim_vs_silicon --write-bands" in other["why"]


def test_the_shipped_bands_file_loads_and_names_classes_the_rule_makes():
    bands = load_bands(error_band.BANDS_FILE)
    assert bands.classes, "error_bands.toml is empty: run bench/sim_vs_silicon --write-bands"
    for row in bands.rows:          # every row's class is what the rule says of its device today
        assert row["class"] in bands.classes


SIM = {"kind": "sim", "board": "nucleo-f411re", "cpu": "m4", "opt": "Os", "core": "cortex-m4", "device": "stm32f411",
       "clock_hz": 100_000_000, "libraries": ["mbedtls"], "timing": "simulated: cbsim-trm v3"}
BAND = {"class": "cortex-m4, wait states + ART", "pct": 3.0, "rows": 4, "median_pct": 1.1,
        "source": "bench/sim_vs_silicon at abc123 (2025-01-02; p256-m)"}
UNVALIDATED = {"class": "cortex-m33", "unvalidated": True, "why": "no published silicon rows of this class"}


@pytest.mark.parametrize("band, short, pct", [(BAND, "±3 %", 3.0), (UNVALIDATED, "unvalidated", None)])
def test_a_simulated_cells_band_in_json_table_and_export(tmp_path, band, short, pct):
    db = tmp_path / "s.sqlite"
    stored_run(db, [("sha256", "mbedtls", {"bytes": 64}, 1e-4)], target={**SIM, "error_band": band},
               extra=lambda *a: {"error_band": band})
    doc = json.loads(cli("show", "latest", "--db", str(db), "--format", "json").stdout)
    cells = [c for c in doc["results"] if c["op"] == "sha256"]
    assert cells[0]["error_band"] == band and doc["conditions"]["target"]["error_band"] == band
    out = cli("show", "latest", "--db", str(db)).stdout
    assert "band" in out and short in out
    assert "error band: " + band_text(band) in out
    rows = json.loads(cli("export", "latest", "--db", str(db), "--format", "json").stdout)
    assert rows[0]["sim_error_band_class"] == band["class"] and rows[0]["sim_error_band_pct"] == pct
    assert rows[0]["sim_error_band_validated"] is (pct is not None)
    assert rows[0]["sim_error_band_rows"] == (4 if pct else 0)
    report = tmp_path / "report"
    assert cli("report", "latest", "--db", str(db), "--out", str(report)).returncode == 0
    md = (report / "tables.md").read_text() if (report / "tables.md").exists() else \
        "\n".join(f.read_text() for f in report.rglob("*.md"))
    assert "error band: " + band_text(band) in md          # the run's caption in the report


def test_a_run_stored_before_bands_prints_and_exports_without_one(tmp_path):
    db = tmp_path / "old.sqlite"
    stored_run(db, [("sha256", "mbedtls", {"bytes": 64}, 1e-4)], target=SIM)
    out = cli("show", "latest", "--db", str(db)).stdout
    assert "error band" not in out and "±" not in out
    rows = json.loads(cli("export", "latest", "--db", str(db), "--format", "json").stdout)
    assert rows[0]["sim_error_band_class"] is None and rows[0]["sim_error_band_pct"] is None
