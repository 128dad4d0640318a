"""The error band a simulated number carries: the condition class of the device it ran on (core and
resolved flash condition), and what bench/sim_vs_silicon measured for that class against published
silicon cycles (error_bands.toml, written by `bench/sim_vs_silicon --write-bands`, never by hand).

One function names the class (`condition_class`); the bench groups its rows with it and a
simulated cell looks its band up with it, so a cell and the rows that validate it are classed by
the same rule. A class with no silicon rows is "unvalidated": the simulator's number stands
without a measured error."""
from __future__ import annotations

import math
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import UsageError

BANDS_FILE = Path(__file__).with_name("error_bands.toml")
# Cores whose every condition is one class: their timing tables are rough (timing.ROUGH) whatever
# the flash does, so a finer split would claim a precision the model does not have.
WHOLE_CORE = ("cortex-m7", "cortex-m33")
STEP_PCT = 1.0
ROW_TEXT = ("class", "library", "device", "label", "commit", "date")   # a [[row]]'s text fields   # a band is the class's largest |error| rounded up to a whole percent


def condition_class(dev) -> str:
    """The class of a resolved Device (sim/devices.py): 'cortex-m4, 0 WS', 'cortex-m0, wait states
    + prefetch', 'cortex-m4, wait states + ART', 'cortex-m4, wait states, caches off', 'cortex-m7'.
    What decides it is what the model charges: the wait states (0: flash is as fast as the core,
    whatever accelerator is in front), then what hides them (caches, prefetch buffer, neither)."""
    core = dev.core
    if core in WHOLE_CORE:
        return core
    if dev.flash_ws == 0 or not dev.code_in_flash:
        return f"{core}, 0 WS"
    cache = dev.flash_cache or {}
    if cache and (cache.get("icache_lines") or cache.get("dcache_lines")):
        what = "ART" if (dev.accelerator or "").startswith("ART") else "caches"
        return f"{core}, wait states + {what}"
    off = "caches off, " if cache else ""
    if dev.prefetch:
        return f"{core}, wait states, {off}prefetch on" if off else f"{core}, wait states + prefetch"
    return f"{core}, wait states, {off}prefetch off"


@dataclass(frozen=True)
class BandClass:
    """One class's line of error_bands.toml."""
    name: str
    rows: int
    median_abs_pct: float
    max_abs_pct: float
    band_pct: float
    libraries: tuple[str, ...]
    commits: tuple[str, ...]
    dates: tuple[str, ...]


@dataclass(frozen=True)
class Bands:
    model: str                 # the cycle model the rows ran on ("cbsim-trm v3")
    step_pct: float
    classes: dict[str, BandClass]
    rows: tuple[dict, ...]     # the bench's rows the classes were computed from (merged by --only runs)
    path: Path


def band_pct(max_abs_pct: float, step: float = STEP_PCT) -> float:
    """The largest |error| rounded up to the step (1.2 -> 2.0; an exact step stays: 3.0 -> 3.0)."""
    return math.ceil(round(max_abs_pct / step, 9)) * step


def _line_of(text: str, index: int, header: str = "[[class]]") -> int:
    """The line of the index-th `header` table in the file's text (1-based)."""
    found = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == header]
    return found[index] if index < len(found) else 1


# long: one check per field of the file, each with its own one-line message, in the file's order
def load_bands(path: Path = BANDS_FILE) -> Bands:
    """error_bands.toml, checked: any mistake is one line naming the file, the line and what was expected."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the error bands ({exc.strerror}); regenerate with "
                         "bench/sim_vs_silicon --write-bands") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not TOML ({exc}); regenerate with bench/sim_vs_silicon --write-bands") from None
    for key, kind in (("model", str), ("step_pct", (int, float))):
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
            raise UsageError(f"{path}:1: top-level '{key}' missing or not a "
                             f"{'string' if kind is str else 'number'}")
    classes: dict[str, BandClass] = {}
    entries = doc.get("class", [])
    if not isinstance(entries, list):
        raise UsageError(f"{path}:1: 'class' must be an array of tables ([[class]])")
    for i, c in enumerate(entries):
        where = f"{path}:{_line_of(text, i)}"
        numbers = ("median_abs_pct", "max_abs_pct", "band_pct")
        if not isinstance(c.get("name"), str) or not c["name"]:
            raise UsageError(f"{where}: [[class]] needs name = \"CORE, CONDITION\"")
        if not isinstance(c.get("rows"), int) or isinstance(c.get("rows"), bool) or c["rows"] < 1:
            raise UsageError(f"{where}: class '{c['name']}': rows must be a whole number of at least 1")
        for k in numbers:
            v = c.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise UsageError(f"{where}: class '{c['name']}': {k} must be a number of percent, 0 or more")
        if c["band_pct"] < c["max_abs_pct"]:
            raise UsageError(f"{where}: class '{c['name']}': band_pct {c['band_pct']} is below its max_abs_pct "
                             f"{c['max_abs_pct']} (the band covers every row)")
        for k in ("libraries", "commits", "dates"):
            if not isinstance(c.get(k), list) or not c[k] or not all(isinstance(x, str) and x for x in c[k]):
                raise UsageError(f"{where}: class '{c['name']}': {k} must be a non-empty list of strings")
        if c["name"] in classes:
            raise UsageError(f"{where}: class '{c['name']}' given twice")
        classes[c["name"]] = BandClass(c["name"], c["rows"], float(c["median_abs_pct"]), float(c["max_abs_pct"]),
                                       float(c["band_pct"]), tuple(c["libraries"]), tuple(c["commits"]),
                                       tuple(c["dates"]))
    rows = doc.get("row", [])
    for i, r in enumerate(rows if isinstance(rows, list) else [None]):
        if not isinstance(r, dict) or not all(isinstance(r.get(k), str) for k in ROW_TEXT) \
                or not isinstance(r.get("error_pct"), (int, float)) or isinstance(r.get("error_pct"), bool):
            raise UsageError(f"{path}:{_line_of(text, i, '[[row]]')}: [[row]] needs {', '.join(ROW_TEXT)} (strings) "
                             "and error_pct (a number)")
    return Bands(doc["model"], float(doc["step_pct"]), classes, tuple(rows), path)


_loaded: dict[Path, Bands] = {}


def band_for(dev, model: str, bands: Bands | None = None) -> dict:
    """The band a cell simulated on the resolved Device `dev` with the cycle model `model`
    ("cbsim-trm v3") carries, as stored in its result (docs/schema.md, error_band):
    {"class", "pct", "rows", "median_pct", "source"}, or {"class", "unvalidated": true, "why"}."""
    if bands is None:
        if BANDS_FILE not in _loaded:
            _loaded[BANDS_FILE] = load_bands(BANDS_FILE)
        bands = _loaded[BANDS_FILE]
    name = condition_class(dev)
    got = bands.classes.get(name)
    if got is None:
        return {"class": name, "unvalidated": True,
                "why": f"no published silicon rows of this class in bench/silicon/rows.toml ({bands.model})"}
    if bands.model != model:
        # the rows measured another model: its errors say nothing about this one until the bench reruns
        return {"class": name, "unvalidated": True,
                "why": f"the bands were measured on {bands.model}, this cell on {model}; rerun "
                       "bench/sim_vs_silicon --write-bands"}
    return {"class": name, "pct": got.band_pct, "rows": got.rows, "median_pct": got.median_abs_pct,
            "source": f"bench/sim_vs_silicon at {', '.join(got.commits)} ({', '.join(got.dates)}; "
                      f"{', '.join(got.libraries)})"}


def band_text(band: dict | None) -> str:
    """'simulated, ±3 % (cortex-m4, wait states + ART, 40 rows)' or 'simulated, unvalidated
    (cortex-m33: no silicon rows)'; '' for a cell stored before bands existed."""
    if not band:
        return ""
    if band.get("unvalidated"):
        return f"simulated, unvalidated ({band['class']}: {band.get('why', 'no silicon rows')})"
    return f"simulated, ±{band['pct']:g} % ({band['class']}, {band['rows']} rows)"


def band_short(band: dict | None) -> str:
    """A table cell: '±3 %', 'unvalidated', or '' (stored before bands existed)."""
    if not band:
        return ""
    return "unvalidated" if band.get("unvalidated") else f"±{band['pct']:g} %"


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bands_text(rows: list[dict], model: str, step: float = STEP_PCT) -> str:
    """error_bands.toml from the bench's rows ({"class", "library", "error_pct", "commit", "date"}
    each): per class its row count, median and largest |error|, the band, and where they came from.
    Written only by bench/sim_vs_silicon --write-bands."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["class"], []).append(r)
    out = ["# Error bands of the simulator per condition class (targets/mcu/sim/error_band.py).",
           "# WRITTEN BY `bench/sim_vs_silicon --write-bands` FROM THE ROWS IT RAN; never edit by hand:",
           "# regenerate after any change to the timing model, the device profiles or bench/silicon/rows.toml.",
           "# band_pct = max_abs_pct rounded up to step_pct; a class not listed here is 'unvalidated'.",
           f"model = {_quote(model)}", f"step_pct = {step:g}", ""]
    for name in sorted(by):
        errs = [abs(r["error_pct"]) for r in by[name]]
        worst = round(max(errs), 2)
        out += ["[[class]]", f"name = {_quote(name)}", f"rows = {len(errs)}",
                f"median_abs_pct = {round(statistics.median(errs), 2)}", f"max_abs_pct = {worst}",
                f"band_pct = {band_pct(worst, step):g}",
                "libraries = [" + ", ".join(_quote(x) for x in sorted({r['library'] for r in by[name]})) + "]",
                "commits = [" + ", ".join(_quote(x) for x in sorted({r['commit'] for r in by[name]})) + "]",
                "dates = [" + ", ".join(_quote(x) for x in sorted({r['date'] for r in by[name]})) + "]", ""]
    out.append("# the rows, as the bench ran them (error = sim / silicon - 1, with the compiler the row names)")
    for r in sorted(rows, key=lambda r: (r["class"], *rows_key(r))):
        out += ["[[row]]", *(f"{k} = {_quote(r[k])}" for k in ROW_TEXT), f"error_pct = {round(r['error_pct'], 3)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def merge_rows(old: Bands | None, new: list[dict], model: str) -> list[dict]:
    """The rows of a partial bench run (--only LIBRARY, --core CORE) with the file's other rows:
    a row the run measured again replaces the stored one. Rows of another model never mix."""
    if old is None:
        return new
    if old.model != model:
        raise UsageError(f"{old.path}: its rows were measured on {old.model}, this run on {model}; rerun the whole "
                         "bench (bench/sim_vs_silicon --write-bands, no --only/--core)")
    fresh = {rows_key(r) for r in new}
    return [r for r in old.rows if rows_key(r) not in fresh] + new


def rows_key(row: dict) -> tuple:
    """What identifies one bench row across merged runs (--only LIBRARY)."""
    return (row["library"], row["device"], row["label"])

