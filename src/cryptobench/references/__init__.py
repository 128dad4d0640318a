"""Published results as data: every numeric table of the five studies, one TOML file per study in
`references/data/`, each value with its unit, catalog operation and parameters, the engine and
conditions it was measured on, and the document, table and row it came from (`provenance:
published`). Format: docs/references.md. Loading validates every row; a malformed file is rejected
with the file, the row and the field."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.ops import OPS, resolve_params
from ..core.errors import UsageError
from ..core.files import read_toml
from ..core.quantity import fmt_hz, is_amount

DATA_DIR = Path(__file__).with_name("data")

# metric -> units it may be printed in, and the factor to the canonical unit (first listed)
UNITS = {
    "time": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
    "current": {"A": 1.0, "mA": 1e-3, "uA": 1e-6},
    "energy": {"J": 1.0, "mJ": 1e-3, "uJ": 1e-6, "nJ": 1e-9},
    "power": {"W": 1.0, "mW": 1e-3, "uW": 1e-6},
    "throughput": {"B/s": 1.0, "KB/s": 1e3, "MB/s": 1e6, "KiB/s": 1024.0, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
                   "op/s": None},
    "ops_per_s": {"op/s": 1.0},
    "cycles": {"cycles": 1.0},
    "cycles_per_byte": {"cycles/B": 1.0},
    "energy_per_bit": {"mJ/Mb": 1.0, "J/bit": 1e9},
    "fom": {"Mbps/(mJ/Mb)": 1.0, "(op/s)/(mJ/op)": 1.0},
    "bytes": {"B": 1.0, "Mb": 125000.0, "op": None},
    "ratio": {"x": 1.0},
    "percent": {"%": 1.0},
    "latency_cycles": {"cycles": 1.0},
    "frequency": {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9},
}
# what a row measures -> its kind of unit
METRICS = {
    "duration": "time", "average_current": "current", "energy": "energy", "power": "power",
    "dynamic_power": "power", "throughput": "throughput", "ops_per_s": "ops_per_s", "cycles": "cycles",
    "cycles_per_byte": "cycles_per_byte", "energy_per_bit": "energy_per_bit", "fom": "fom",
    "stack": "bytes", "code_size": "bytes", "ram": "bytes", "rsd": "percent",
    "duration_improvement": "ratio", "energy_efficiency_improvement": "ratio", "ratio": "ratio",
    "latency": "latency_cycles", "execution_time": "time", "data": "bytes", "clock": "frequency",
    "hashing_share": "percent",     # pqm4: the share of an operation's cycles spent hashing (Keccak for ML-KEM/DSA)
}
# a row that is one statistic of a published distribution (pqm4's AVG / MIN / MAX over N executions)
STATS = ("avg", "min", "max")
ENGINE_KINDS = ("sw library", "cpu extensions", "on-chip accelerator", "secure element", "model")
# what kind of machine a source ran on, as a run's target is one: "mcu" (a microcontroller: a board, or
# what the simulator models), "host" (an application processor running an OS: x86-64, Cortex-A), "model"
# (synthesis results or a formula, nothing ran); compare sets absolute values side by side only within a kind
TARGET_KINDS = ("mcu", "host", "model")
SOURCE_FIELDS = ("id", "engine_kind", "engine", "device", "clock_hz", "compiler", "library", "notes",
                 "target_kind", "cpu", "cores", "improvement_over")


RATIO_CONVENTIONS = ("improvement", "over-baseline")


class ReferenceError(UsageError):
    """A malformed reference file: names the file, the row and the field."""


@dataclass
class Source:
    id: str
    engine_kind: str
    engine: str
    device: str
    clock_hz: float | None = None
    compiler: str = ""
    library: str = ""
    notes: str = ""
    target_kind: str = ""      # TARGET_KINDS; "" where the file does not say
    cpu: str = ""              # the core as the reader knows it ("Arm Cortex-M4F"), for compare's messages
    cores: int | None = None   # the cores (processes) it ran on at once, where the study varies them (Pisa)
    improvement_over: str = ""  # the source this one's Improvement divides by (TI's hw over sw: t_sw / t_hw)

    def where(self) -> str:
        """The machine in a few words: "48 MHz Arm Cortex-M4F (CC26x2R …)"."""
        clock = f"{fmt_hz(self.clock_hz)} " if self.clock_hz else ""
        return f"{clock}{self.cpu or self.device}" + (f" ({self.device})" if self.cpu else "")


@dataclass
class Row:
    index: int                 # 1-based position among the file's [[row]] entries
    table: str                 # e.g. "Table 6"
    label: str                 # the row as printed, e.g. "AES-128 CBC 64 B"
    op: str | None             # catalog op id (None for rows outside the catalog, e.g. a model latency)
    params: dict               # complete: the catalog's defaults filled in
    source: Source
    metric: str
    value: float               # as printed, in `unit`
    unit: str
    printed: str = ""          # the cell's text as printed, when it is not a plain number
    note: str = ""             # typos kept as printed, derived columns, …
    derived: str = ""          # how the source computed this value from other rows, if it did
    given: dict = field(default_factory=dict)   # the parameters the document states (what a match needs)
    # the clock a time or rate was taken or computed at where it is not the source's: the Cifra post counts
    # cycles at the part's reset clock but computes its likely throughput at 48 MHz
    clock_hz: float | None = None
    # the implementation the row measured, as the study names it (pqm4's `clean`, `m4fstack`): compare
    # sets such rows one published row per line beside the run (analysis/compare_rows.py)
    implementation: str = ""
    stat: str = ""                 # STATS: which statistic of `executions` runs the value is ("": one value)
    executions: int | None = None

    @property
    def at_hz(self) -> float | None:
        """The clock this row's time or rate belongs to: its own, else its source's; None where unstated."""
        return self.clock_hz or self.source.clock_hz

    @property
    def canonical(self) -> float | None:
        """The value in the metric's first unit (s, A, J, W, B/s, …); None when it cannot convert."""
        factor = UNITS[METRICS[self.metric]].get(self.unit)
        return None if factor is None else self.value * factor


@dataclass
class Reference:
    name: str
    title: str
    document: str
    seed: str
    path: Path
    sources: dict[str, Source]
    rows: list[Row]
    # how the study states a source against the one it names (improvement_over): "improvement"
    # (t_over / t_source, TI's eq. 1: above 1 faster) or "over-baseline" (t_source / t_over, the
    # ZHAW study's figure 2: above 1 slower); compare prints both sides the study's way
    ratio: str = "improvement"


class _Where:
    """The file and the line each table starts on, so every error names both."""

    def __init__(self, path: Path, text: str):
        self.path, self.lines = path, text.splitlines()
        self._hits: dict[str, list[int]] = {}      # header -> its lines, found once (a file has 500+ rows)

    def line(self, header: str, n: int = 1) -> int:
        """The line of the n-th `[[header]]` (or `[header]`) of the file; 1 when not found."""
        if header not in self._hits:
            rx = re.compile(r"^\s*\[\[?\s*" + re.escape(header) + r"\s*\]")
            self._hits[header] = [i + 1 for i, text in enumerate(self.lines) if rx.match(text)]
        hits = self._hits[header]
        return hits[n - 1] if len(hits) >= n else 1


def _fail(path, where, msg, line: int | None = None):
    raise ReferenceError(f"{path}:{line}: {where}: {msg}" if line else f"{path}: {where}: {msg}")


def load_reference(ref: str | Path) -> Reference:
    """A reference by name (references/data/NAME.toml) or by path; validated row by row."""
    path, doc, at = _read_reference(ref)
    unknown = [k for k in doc if k not in ("reference", "source", "row")]
    if unknown:
        _fail(path, f"'{unknown[0]}'", "unknown table or key; a reference has [reference], [[source]] and [[row]]",
              at.line(unknown[0]))
    head = _header(path, doc, at.line("reference"))
    sources = {}
    for i, s in enumerate(_entries(path, doc, "source"), 1):
        source = _source(path, i, s, at.line("source", i))
        if source.id in sources:
            _fail(path, f"source {i}", f"id '{source.id}' is used twice", at.line("source", i))
        sources[source.id] = source
    for i, source in enumerate(sources.values(), 1):
        if source.improvement_over and source.improvement_over not in sources:
            _fail(path, f"source {i}", f"field 'improvement_over': no [[source]] with id '{source.improvement_over}'; "
                  f"ids: {', '.join(sources)}", at.line("source", i))
    rows, seen = [], {}
    for i, r in enumerate(_entries(path, doc, "row"), 1):
        row = _row(path, i, r, sources, at.line("row", i))
        key = (row.table, row.label, row.metric, row.source.id, row.unit)
        if key in seen:
            _fail(path, f"row {i} ({row.table} '{row.label}')", f"duplicate of row {seen[key]} (same table, label, "
                  "metric, source and unit); give each published value once", at.line("row", i))
        seen[key] = i
        rows.append(row)
    if not rows:
        _fail(path, "[[row]]", "no rows")
    return Reference(head["name"], head["title"], head["document"], head["seed"], path, sources, rows,
                     head.get("ratio", "improvement"))


def _entries(path: Path, doc: dict, name: str) -> list[dict]:
    entries = doc.get(name, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        _fail(path, f"[[{name}]]", "expected an array of tables ([[" + name + "]] entries)")
    return entries


def _read_reference(ref: str | Path) -> tuple[Path, dict, _Where]:
    """The reference file's path (a bare name is looked up in references/data/) and its TOML."""
    path = Path(ref)
    if not path.suffix:
        path = DATA_DIR / f"{ref}.toml"
        if not path.exists():
            raise ReferenceError(f"--reference: unknown reference '{ref}'; valid: {', '.join(available_references())}")
    if not path.exists():
        raise ReferenceError(f"{path}: no such reference file")
    text, doc = read_toml(path, ReferenceError)
    return path, doc, _Where(path, text)


def _header(path: Path, doc: dict, line: int) -> dict:
    """The [reference] table, checked."""
    head = doc.get("reference")
    if not isinstance(head, dict):
        _fail(path, "[reference]", "missing table (name, title, document, seed)", line)
    for key in ("name", "title", "document", "seed"):
        if not isinstance(head.get(key), str) or not head[key]:
            _fail(path, "[reference]", f"field '{key}': expected a non-empty string", line)
    if head.get("ratio", "improvement") not in RATIO_CONVENTIONS:
        _fail(path, "[reference]", f"field 'ratio': expected one of {', '.join(RATIO_CONVENTIONS)}, "
              f"got {head['ratio']!r}", line)
    return head


def _source(path: Path, i: int, s: dict, line: int) -> Source:
    """The i-th [[source]] entry, checked."""
    where = f"source {i}"
    for key in ("id", "engine_kind", "engine", "device"):
        if not isinstance(s.get(key), str) or not s[key]:
            _fail(path, where, f"field '{key}': expected a non-empty string", line)
    if s["engine_kind"] not in ENGINE_KINDS:
        _fail(path, where, f"field 'engine_kind': expected one of {', '.join(ENGINE_KINDS)}, got '{s['engine_kind']}'",
              line)
    unknown = set(s) - set(SOURCE_FIELDS)
    if unknown:
        _fail(path, where, f"unknown field '{sorted(unknown)[0]}'", line)
    if "clock_hz" in s and not is_amount(s["clock_hz"], positive=True):
        _fail(path, where, f"field 'clock_hz': expected a finite number > 0, got {s['clock_hz']!r}", line)
    for key in ("compiler", "library", "notes", "cpu", "improvement_over"):
        if key in s and not isinstance(s[key], str):
            _fail(path, where, f"field '{key}': expected a string, got {s[key]!r}", line)
    if "target_kind" in s and s["target_kind"] not in TARGET_KINDS:
        _fail(path, where, f"field 'target_kind': expected one of {', '.join(TARGET_KINDS)}, got {s['target_kind']!r}",
              line)
    if "cores" in s and not (isinstance(s["cores"], int) and not isinstance(s["cores"], bool) and s["cores"] >= 1):
        _fail(path, where, f"field 'cores': expected a whole number >= 1, got {s['cores']!r}", line)
    return Source(**s)


def _row(path: Path, i: int, r: dict, sources: dict[str, Source], line: int) -> Row:
    """The i-th [[row]] entry, checked, its parameters completed with the catalog's defaults."""
    where = f"row {i}" + (f" ({r.get('table')} '{r.get('label')}')" if isinstance(r, dict) and r.get("label") else "")
    known = {"table", "label", "op", "params", "source", "metric", "value", "unit", "printed", "note", "derived",
             "clock_hz", "implementation", "stat", "executions"}
    unknown = set(r) - known
    if unknown:
        _fail(path, where, f"unknown field '{sorted(unknown)[0]}'", line)
    for key in ("table", "label", "source", "metric", "unit"):
        if not isinstance(r.get(key), str) or not r[key]:
            _fail(path, where, f"field '{key}': expected a non-empty string", line)
    if r["source"] not in sources:
        _fail(path, where, f"field 'source': no [[source]] with id '{r['source']}'; ids: {', '.join(sources)}", line)
    if r["metric"] not in METRICS:
        _fail(path, where, f"field 'metric': expected one of {', '.join(METRICS)}, got '{r['metric']}'", line)
    units = UNITS[METRICS[r["metric"]]]
    if r["unit"] not in units:
        _fail(path, where, f"field 'unit': expected one of {', '.join(units)} for {r['metric']}, got '{r['unit']}'",
              line)
    v = r.get("value")
    if not is_amount(v):
        # a published time, energy, rate or ratio is a finite number >= 0: -279 % RSDs come from accepting others
        _fail(path, where, f"field 'value': expected a finite number >= 0, got {v!r}", line)
    for key in ("printed", "note", "derived"):
        if key in r and not isinstance(r[key], str):
            _fail(path, where, f"field '{key}': expected a string, got {r[key]!r}", line)
    if "clock_hz" in r and not is_amount(r["clock_hz"], positive=True):
        _fail(path, where, f"field 'clock_hz': expected a finite number > 0, got {r['clock_hz']!r}", line)
    _check_distribution(path, where, r, line)
    return Row(i, r["table"], r["label"], r.get("op"), _row_params(path, where, r, line), sources[r["source"]],
               r["metric"], float(v), r["unit"], str(r.get("printed", "")), str(r.get("note", "")), str(r.get("derived", "")),
               dict(r.get("params", {})), float(r["clock_hz"]) if "clock_hz" in r else None,
               str(r.get("implementation", "")), str(r.get("stat", "")), r.get("executions"))


def _check_distribution(path: Path, where: str, r: dict, line: int) -> None:
    """The optional implementation, stat and executions of a row (pqm4's AVG / MIN / MAX rows)."""
    if "implementation" in r and (not isinstance(r["implementation"], str) or not r["implementation"]):
        _fail(path, where, f"field 'implementation': expected a non-empty string, got {r['implementation']!r}", line)
    if "stat" in r and r["stat"] not in STATS:
        _fail(path, where, f"field 'stat': expected one of {', '.join(STATS)}, got {r['stat']!r}", line)
    n = r.get("executions")
    if "executions" in r and not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
        _fail(path, where, f"field 'executions': expected a whole number >= 1, got {n!r}", line)


def _row_params(path: Path, where: str, r: dict, line: int) -> dict:
    """A row's parameters, completed with the catalog's defaults when the row names a catalog op."""
    op, params = r.get("op"), r.get("params", {})
    if op is None:
        return params
    if not isinstance(op, str) or op not in OPS:
        _fail(path, where, f"field 'op': unknown operation {op!r}", line)
    if not isinstance(params, dict):
        _fail(path, where, "field 'params': expected a table of parameters", line)
    try:
        return resolve_params(OPS[op], {k: v for k, v in params.items()}, "params")
    except UsageError as exc:
        _fail(path, where, f"field 'params': {exc}", line)


ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def roman_value(text: str) -> int | None:
    """The value of a Roman numeral (IV -> 4); None when `text` is not one."""
    if not text or any(ch not in ROMAN for ch in text):
        return None
    total = 0
    for ch, nxt in zip(text, text[1:] + " "):
        v = ROMAN[ch]
        total += -v if nxt in ROMAN and ROMAN[nxt] > v else v
    return total


def table_order(label: str) -> tuple:
    """A sort key that puts a study's tables in its own order: "Table 9" before "Table 13" (the
    numbers' natural order), "Table IV" before "Table V" (Roman numerals); then the tables it does
    not number, and unnamed ones last. Equal keys ("Table 3 (random)", "Table 3 (hash)", two unnumbered
    tables) tie: a stable sort keeps them in the order they came (the suite's, the reference file's)."""
    if not label:
        return (2, 0)
    m = re.match(r"^\s*table\s+(\d+|[IVXLC]+)\b", label, re.I)
    if m:
        num = int(m.group(1)) if m.group(1).isdigit() else roman_value(m.group(1).upper())
        if num is not None:
            return (0, num)
    return (1, 0)


def available_references() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob("*.toml"))
