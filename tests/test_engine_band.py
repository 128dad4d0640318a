"""The modelled engines' bands (targets/mcu/sim/engine_band.py, engine_bands.toml): classes, the
file's checks, what a cell carries and says."""
import pytest

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu import sim
from cryptobench.targets.mcu.sim import engine_band as eb

ROWS = [{"engine": "cc26x2-pka", "model_version": 1, "driver": "cc26x2-crypto", "op": op, "ratio": ratio, "against": "TI SWRA667",
         "table": table, "label": f"{op} {table}", "date": "2026-12-02"}
        for op, ratio, table in (("ecdh-keygen", 0.158, "Table 14"), ("ecdsa-sign", 0.16, "Table 15"),
                                 ("ecdsa-verify", 0.1577, "Table 15"))] + \
       [{"engine": "cc26x2-crypto", "model_version": 1, "driver": "cc26x2-crypto", "op": "aes-cbc-encrypt", "ratio": 1.1, "against": "TI SWRA667",
         "table": "Table 6", "label": "AES-CBC 64 B", "date": "2026-12-01"}]


def _bands(tmp_path, text=None):
    path = tmp_path / "engine_bands.toml"
    path.write_text(text if text is not None else eb.bands_text(ROWS))
    return eb.load_bands(path)


def test_operations_fall_into_the_classes_an_engine_serves_alike():
    assert [eb.op_class(op) for op in ("aes-gcm-encrypt", "sha256", "sha224", "ecdsa-verify", "ecdh-shared-secret",
                                       "random", "ctr-drbg-generate", "ml-kem-768-keygen")] == \
        ["aes", "sha-2", "sha-2", "ecc", "ecc", "random", "drbg", "ml-kem-768-keygen"]


def test_the_written_bands_cover_every_row_and_read_back(tmp_path):
    bands = _bands(tmp_path)
    pka = bands[("cc26x2-pka", "ecc", "cc26x2-crypto")]
    assert (pka.rows, pka.min_ratio, pka.max_ratio, pka.band_pct) == (3, 0.1577, 0.16, 85.0)
    assert pka.against == "TI SWRA667 Tables 14, 15"
    aes = bands[("cc26x2-crypto", "aes", "cc26x2-crypto")]
    assert (aes.band_pct, aes.against, aes.date) == (10.0, "TI SWRA667 Table 6", "2026-12-01")
    assert eb.load_rows(tmp_path / "engine_bands.toml") == [
        {**r, "ratio": round(r["ratio"], 4)} for r in sorted(ROWS, key=lambda r: (r["engine"], r["table"], r["label"]))]
    assert eb.load_rows(tmp_path / "none.toml") == []


def test_a_cell_carries_its_engines_band_or_why_it_has_none(tmp_path):
    bands = _bands(tmp_path)
    got = eb.band_for("cc26x2-pka", 1, "ecdsa-sign", "cc26x2-crypto", bands)
    assert (got["pct"], got["rows"], got["median_ratio"], got["model"]) == (85.0, 3, 0.158, "cc26x2-pka v1")
    text = eb.band_text(got)
    assert text.startswith("modeled, ±85 % against TI SWRA667 Tables 14, 15 (3 rows of cc26x2-pka v1 ecc")
    assert text.endswith("the model reads 0.16x the published time")
    assert eb.band_short(got) == "±85 % (0.16x)"
    newer = eb.band_for("cc26x2-pka", 2, "ecdsa-sign", "cc26x2-crypto", bands)            # the model changed since the bench ran
    assert newer["unvalidated"] and "measured on cc26x2-pka v1" in newer["why"]
    other = eb.band_for("cc26x2-pka", 1, "ecdsa-sign", "ti-drivers", bands)   # TI's driver, not the bench's
    assert other["unvalidated"] and "measured with the cc26x2-crypto driver(s), this cell ran ti-drivers" in other["why"]
    unchecked = eb.band_for("cc26x2-crypto", 1, "sha256", "cc26x2-crypto", bands)        # no published row of that class
    assert unchecked["unvalidated"] and eb.band_short(unchecked) == "unvalidated"
    assert eb.band_text(unchecked).startswith("modeled, unvalidated (cc26x2-crypto v1 sha-2:")
    assert eb.band_text(None) == "" and eb.band_short(None) == ""


@pytest.mark.parametrize("edit,expected", [
    (lambda t: t.replace('op_class = "ecc"\n', ''), "needs op_class"),
    (lambda t: t.replace("rows = 3", "rows = 0"), "rows must be a whole number of at least 1"),
    (lambda t: t.replace("band_pct = 85", "band_pct = 12"), "does not cover its rows"),
    (lambda t: t.replace("min_ratio = 0.1577", "min_ratio = 0.9"), "min_ratio <= median_ratio <= max_ratio"),
    (lambda t: t.replace("median_ratio = 0.158", 'median_ratio = "x"'), "median_ratio must be a number"),
    (lambda t: t + t[t.index("[[band]]"):t.index("# the rows")], "given twice"),
    (lambda t: t.replace('driver = "cc26x2-crypto"\n', '', 1), "needs driver"),
    (lambda t: t.replace("[[band]]", "[[band", 1), "not TOML"),
])
def test_a_bad_bands_file_is_one_line_naming_the_file_and_line(tmp_path, edit, expected):
    text = edit(eb.bands_text(ROWS))
    with pytest.raises(UsageError) as err:
        _bands(tmp_path, text)
    msg = str(err.value)
    assert expected in msg and "engine_bands.toml" in msg and "\n" not in msg, msg


def test_the_shipped_bands_name_models_that_exist():
    bands = eb.load_bands()
    for (engine, cls, driver), band in bands.items():
        assert engine in sim.PERIPHERAL_KINDS, engine
        assert band.model_version <= sim.PERIPHERAL_KINDS[engine].model_version
        assert band.rows >= 1 and cls and driver
    assert {d for _, _, d in bands} >= {"cc26x2-crypto"}          # cryptobench's own drivers, at least
    # the file's rows are what its bands were made of (the bench writes both)
    assert len(eb.load_rows()) == sum(b.rows for b in bands.values())


def test_the_run_header_lists_each_drivers_band_of_one_engine_class_once(tmp_path):
    """Two drivers on one engine model and class (cryptobench's and TI's) are two bands in the header."""
    from types import SimpleNamespace
    from cryptobench.report.tables import _engine_bands
    bands = _bands(tmp_path)
    ours = eb.band_for("cc26x2-pka", 1, "ecdsa-sign", "cc26x2-crypto", bands)
    theirs = eb.band_for("cc26x2-pka", 1, "ecdsa-sign", "ti-drivers", bands)
    assert (ours["driver"], theirs["driver"]) == ("cc26x2-crypto", "ti-drivers")
    cells = [SimpleNamespace(ok=True, engine=b["driver"], result={"engine_band": b}) for b in (ours, theirs, ours)]
    assert _engine_bands(cells) == [ours, theirs]
