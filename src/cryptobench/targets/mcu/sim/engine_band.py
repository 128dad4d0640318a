"""The band a modelled engine's number carries: how far the engine model's cells read from the
published hardware figures they were checked against, per engine model and operation class
(engine_bands.toml, written by `bench/accel_vs_published --write-bands`, never by hand).

A cell served by a peripheral model (`served_by` "peripheral: TITLE") looks its band up by the
model's kind, its `model_version` and the cell's operation class (`op_class`); the bench groups its
rows by the same rule, so a cell and the rows that checked its engine are classed alike. A band
holds for the driver the bench ran (its firmware library name, `driver`): a cell another driver
made (TI's own, an interrupt build) is "unvalidated" with that reason, as are bands of another
model version and classes no published row checked: the modelled number stands without a measured
error. A band is the largest |modelled / published - 1| of its rows,
rounded up to a whole percent; the median ratio says which way the model errs (0.16: the model reads
about a sixth of the published time)."""
from __future__ import annotations

import fnmatch
import math
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError
from .error_band import _line_of, _quote     # the bands files' shared helpers: a table's line, a TOML string

BANDS_FILE = Path(__file__).with_name("engine_bands.toml")
WRITER = "bench/accel_vs_published --write-bands"
# operation -> class, first match: an engine's ops of one kind share its datapath and its driver's shape
OP_CLASSES = (("aes-*", "aes"), ("sha1", "sha-1"), ("sha224", "sha-2"), ("sha256", "sha-2"), ("sha384", "sha-2"),
              ("sha512", "sha-2"), ("ecdh-*", "ecc"), ("ecdsa-*", "ecc"), ("ecjpake-*", "ecc"),
              ("x25519*", "ecc"), ("ed25519*", "ecc"), ("random", "random"), ("ctr-drbg-*", "drbg"),
              ("crc32", "crc"))
NUMBERS = ("median_ratio", "min_ratio", "max_ratio", "band_pct")
ROW_TEXTS = ("engine", "driver", "op", "against", "table", "label", "date")     # a [[row]]'s text fields
TEXTS = ("engine", "op_class", "driver", "against", "date")


def op_class(op: str) -> str:
    """The operation class of `op` ('aes', 'sha-2', 'ecc', 'random', ...); the op itself when none fits."""
    return next((cls for pattern, cls in OP_CLASSES if fnmatch.fnmatchcase(op, pattern)), op)


@dataclass(frozen=True)
class EngineBand:
    """One [[band]] of engine_bands.toml."""
    engine: str               # the peripheral model's kind ("cc26x2-pka")
    model_version: int
    op_class: str
    driver: str               # the firmware library (fw_lib_name) the bench's rows ran: the band is that driver's
    rows: int
    median_ratio: float       # modelled / published, the rows' median
    min_ratio: float
    max_ratio: float
    band_pct: float           # the largest |ratio - 1| in percent, rounded up
    against: str              # the published source and its tables
    date: str


def band_pct(ratios: list[float]) -> float:
    """The largest |ratio - 1| of the rows, in percent, rounded up to a whole percent."""
    return float(math.ceil(round(max(abs(r - 1) for r in ratios) * 100, 9)))


def load_bands(path: Path = BANDS_FILE) -> dict[tuple[str, str, str], EngineBand]:
    """engine_bands.toml, checked: any mistake is one line naming the file, the line and what was expected."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the engine bands ({exc.strerror}); regenerate with {WRITER}") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not TOML ({exc}); regenerate with {WRITER}") from None
    entries = doc.get("band", [])
    if not isinstance(entries, list):
        raise UsageError(f"{path}:1: 'band' must be an array of tables ([[band]])")
    out: dict[tuple[str, str], EngineBand] = {}
    for i, b in enumerate(entries):
        where = f"{path}:{_line_of(text, i, '[[band]]')}"
        if not isinstance(b, dict):
            raise UsageError(f"{where}: [[band]] must be a table")
        for k in TEXTS:
            if not isinstance(b.get(k), str) or not b[k]:
                raise UsageError(f"{where}: [[band]] needs {k} = \"...\" (a non-empty string)")
        name = f"{b['engine']} {b['op_class']} ({b['driver']})"
        for k in ("model_version", "rows"):
            if not isinstance(b.get(k), int) or isinstance(b.get(k), bool) or b[k] < 1:
                raise UsageError(f"{where}: band '{name}': {k} must be a whole number of at least 1")
        for k in NUMBERS:
            v = b.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise UsageError(f"{where}: band '{name}': {k} must be a number, 0 or more")
        if not b["min_ratio"] <= b["median_ratio"] <= b["max_ratio"]:
            raise UsageError(f"{where}: band '{name}': expected min_ratio <= median_ratio <= max_ratio")
        if b["band_pct"] < band_pct([b["min_ratio"], b["max_ratio"]]) - 1e-9:
            raise UsageError(f"{where}: band '{name}': band_pct {b['band_pct']} does not cover its rows "
                             f"(ratios {b['min_ratio']}-{b['max_ratio']})")
        key = (b["engine"], b["op_class"], b["driver"])
        if key in out:
            raise UsageError(f"{where}: band '{name}' given twice")
        out[key] = EngineBand(b["engine"], b["model_version"], b["op_class"], b["driver"], b["rows"],
                              float(b["median_ratio"]),
                              float(b["min_ratio"]), float(b["max_ratio"]), float(b["band_pct"]), b["against"],
                              b["date"])
    return out


_loaded: dict[Path, dict] = {}


def band_for(engine: str, model_version: int, op: str, driver: str, bands: dict | None = None) -> dict:
    """The band a cell of `op` that the firmware library `driver` ran on the engine model `engine` (its
    kind) at `model_version` carries, as stored in its result (docs/schema.md, engine_band): {"engine", "class",
    "model", "driver", "pct", "rows", "median_ratio", "against", "source"}, or {"engine", "class", "model",
    "driver", "unvalidated": true, "why"}."""
    if bands is None:
        if BANDS_FILE not in _loaded:
            _loaded[BANDS_FILE] = load_bands(BANDS_FILE)
        bands = _loaded[BANDS_FILE]
    cls = op_class(op)
    head = {"engine": engine, "class": cls, "model": f"{engine} v{model_version}", "driver": driver}
    got = bands.get((engine, cls, driver))
    if got is None:
        others = sorted(d for e, c, d in bands if (e, c) == (engine, cls))
        if others:
            return {**head, "unvalidated": True,
                    "why": f"the band was measured with the {', '.join(others)} driver(s), this cell ran {driver}"}
        return {**head, "unvalidated": True, "why": "no published hardware row checks this engine's "
                                                    f"{cls} operations ({WRITER})"}
    if got.model_version != model_version:
        return {**head, "unvalidated": True,
                "why": f"the band was measured on {engine} v{got.model_version}; rerun {WRITER}"}
    return {**head, "pct": got.band_pct, "rows": got.rows, "median_ratio": got.median_ratio,
            "against": got.against, "source": f"{WRITER}, {got.date}"}


def band_text(band: dict | None) -> str:
    """'modeled, ±85 % against TI SWRA667 Tables 14, 15 (6 rows of cc26x2-pka v1 ecc, SOURCE): the
    model reads 0.16x the published time' or 'modeled, unvalidated (...)'; '' for a cell no engine
    model served."""
    if not band:
        return ""
    if band.get("unvalidated"):
        return f"modeled, unvalidated ({band['model']} {band['class']}: {band.get('why', 'no published rows')})"
    return (f"modeled, ±{band['pct']:g} % against {band['against']} ({band['rows']} rows of {band['model']} "
            f"{band['class']}, {band.get('source', WRITER)}): the model reads {band['median_ratio']:.2f}x the "
            "published time")


def band_short(band: dict | None) -> str:
    """A table cell: '±85 % (0.16x)', 'unvalidated', or '' (no engine model served the cell)."""
    if not band:
        return ""
    return "unvalidated" if band.get("unvalidated") else f"±{band['pct']:g} % ({band['median_ratio']:.2f}x)"


def load_rows(path: Path = BANDS_FILE) -> list[dict]:
    """The file's [[row]]s (the bench keeps those of drivers it did not run when it writes the file
    again); [] when there is no file yet. A malformed row is one line naming the file and the line."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    try:
        rows = tomllib.loads(text).get("row", [])
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not TOML ({exc}); regenerate with {WRITER}") from None
    for i, r in enumerate(rows if isinstance(rows, list) else [None]):
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) and r[k] for k in ROW_TEXTS) \
                or not isinstance(r.get("ratio"), (int, float)) or isinstance(r.get("ratio"), bool) \
                or not isinstance(r.get("model_version"), int):
            raise UsageError(f"{path}:{_line_of(text, i, '[[row]]')}: [[row]] needs {', '.join(ROW_TEXTS)} (strings), "
                             "model_version (a whole number) and ratio (a number)")
    return rows


def tables_text(tables: set[str]) -> str:
    """The published tables of a band, as a reader cites them: "Tables 6, 7, 8" where every name is a
    numbered table ("Table 6"), else the names as the reference gives them ("Section 3.2 table ...")."""
    if all(t.startswith("Table ") for t in tables):
        numbers = sorted((t.removeprefix("Table ") for t in tables), key=lambda t: (len(t), t))
        return f"Table{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}"
    return ", ".join(sorted(tables))


def bands_text(rows: list[dict]) -> str:
    """engine_bands.toml from the bench's rows ({"engine", "model_version", "driver", "op", "ratio",
    "against", "table", "label", "date"} each): per engine, class and driver its row count, median and range of the ratios, the
    band and the published tables; then the rows. Written only by bench/accel_vs_published.
    Each row also names its `driver` (the firmware library that ran it)."""
    by: dict[tuple[str, str, str], list[dict]] = {}
    for r in rows:
        by.setdefault((r["engine"], op_class(r["op"]), r["driver"]), []).append(r)
    out = ["# Bands of the modelled crypto engines per engine model, operation class and driver",
           "# (targets/mcu/sim/engine_band.py). WRITTEN BY `bench/accel_vs_published --write-bands` FROM THE",
           "# ROWS IT RAN; never edit by hand: regenerate after any change to a peripheral model (bump its",
           "# model_version), a driver or the published rows. ratio = modelled / published duration;",
           "# band_pct = the largest |ratio - 1| in percent, rounded up. A class not listed is 'unvalidated'.", ""]
    for (engine, cls, driver), group in sorted(by.items()):
        versions = {r["model_version"] for r in group}
        if len(versions) != 1:
            raise ValueError(f"{engine} {cls} ({driver}): rows of model versions {sorted(versions)} in one band")
        ratios = [r["ratio"] for r in group]
        against = f"{group[0]['against']} {tables_text({r['table'] for r in group})}"
        out += ["[[band]]", f"engine = {_quote(engine)}", f"model_version = {versions.pop()}",
                f"op_class = {_quote(cls)}", f"driver = {_quote(driver)}", f"rows = {len(ratios)}",
                f"median_ratio = {round(statistics.median(ratios), 4)}", f"min_ratio = {round(min(ratios), 4)}",
                f"max_ratio = {round(max(ratios), 4)}", f"band_pct = {band_pct(ratios):g}",
                f"against = {_quote(against)}", f"date = {_quote(max(r['date'] for r in group))}", ""]
    out.append("# the rows, as the bench ran them")
    for r in sorted(rows, key=lambda r: (r["engine"], op_class(r["op"]), r["driver"], r["table"], r["label"])):
        out += ["[[row]]", *(f"{k} = {_quote(r[k])}" for k in ROW_TEXTS), f"model_version = {r['model_version']}",
                f"ratio = {round(r['ratio'], 4)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"
