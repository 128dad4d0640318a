"""Suites: TOML files that turn a study into a list of (op, params) benchmarks.

    [suite]
    title = "…"            source = "…"         baseline = "mbedtls"
    repeat = 20            warmup = 2           min_time = 0.001       engines = [ … ]
    budget = 90            precision = 1        # host runs: seconds at most, and the target ±% (docs/statistics.md)
    relative = true        # also print every engine relative to the baseline (the ZHAW IoT study's figure 2)
    layout = "ti"          # print the study's own tables (docs/layouts.md): ti, nxp, cifra, zhaw, pisa

    [[bench]]
    op = "aes-cbc-encrypt"
    key_bits = 128
    bytes = [64, 8000, 16000]      # a list sweeps the parameter
    table = "Table 6"              # where the study prints it (optional)
    engines = ["system"]           # optional: restrict this bench to some engines
    repeat = 5                     # optional per-bench overrides: repeat, warmup, min_time, single

Errors name the file, the line and what was expected.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.ops import get_op, resolve_params
from ..targets.host.engines import ENGINES
from ..core.errors import UsageError
from ..core.files import read_toml, toml_line
from ..core.quantity import is_amount
from ..core.records import params_key

SUITES_DIR = Path(__file__).resolve().parent / "suites"
SUITE_KEYS = {"title", "source", "baseline", "repeat", "warmup", "min_time", "engines", "description", "single",
              "relative", "budget", "precision", "layout"}
# the studies' own layouts (layouts/, docs/layouts.md); "default" is the plain per-operation tables
LAYOUT_NAMES = ("default", "ti", "nxp", "cifra", "zhaw", "pisa", "pqm4", "pqc-migration")
# which way a study's ratios read: "improvement" t_baseline / t_engine (TI, NXP), "over-baseline"
# t_engine / t_baseline (ZHAW's figure 2: ×2.7 = 2.7 times as long); the same names as a
# reference's `ratio` (references/data/*.toml), so a run of the study and its comparison agree
LAYOUT_RATIO = {"zhaw": "over-baseline"}
BENCH_KEYS = {"op", "table", "engines", "repeat", "warmup", "min_time", "single", "label"}


@dataclass
class Bench:
    op: str
    params: dict
    table: str = ""
    engines: list[str] | None = None
    repeat: int | None = None
    warmup: int | None = None
    min_time: float | None = None
    single: bool = False
    given: tuple[str, ...] = ()       # the parameters the [[bench]] set itself (the rest are the op's defaults)


@dataclass
class Suite:
    name: str
    path: Path
    title: str = ""
    source: str = ""
    baseline: str | None = None
    repeat: int = 20
    warmup: int = 2
    min_time: float = 0.001
    repeat_set: bool = False        # the suite gives `repeat` (with no budget or precision: exactly that n, as its study)
    budget: float | None = None     # host runs: seconds the whole run may take (sampling stops in time)
    precision: float | None = None  # host runs: target half-width of every repeat interval, in percent
    engines: list[str] | None = None
    single: bool = False
    relative: bool = False          # print the relative view (engine / baseline, the ZHAW IoT study's fig. 2)
                                    # after the tables
    layout: str | None = None       # the study's own tables (LAYOUT_NAMES) that run and show print by default
    benches: list[Bench] = field(default_factory=list)


def available_suites() -> list[str]:
    return sorted(p.stem for p in SUITES_DIR.glob("*.toml"))


def find_suite(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".toml" and path.exists():
        return path
    builtin = SUITES_DIR / f"{name}.toml"
    if builtin.exists():
        return builtin
    raise UsageError(f"--suite: unknown suite '{name}'; valid: {', '.join(available_suites())} "
                     f"(or a path to a .toml file)")


def _expect(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise UsageError(f"{where}: {msg}")


# the typed settings of [suite] and [[bench]]: (check, what the error says is expected)
_WHOLE = lambda lo: (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= lo)
SETTINGS = {
    "repeat": (_WHOLE(1), "a whole number >= 1 (samples per cell)"),
    "warmup": (_WHOLE(0), "a whole number >= 0 (warm-up batches)"),
    "min_time": (is_amount, "a finite number of seconds >= 0"),
    "budget": (lambda v: is_amount(v, positive=True), "a finite number of seconds > 0"),
    "precision": (lambda v: is_amount(v, positive=True), "a finite percentage > 0"),
    "single": (lambda v: isinstance(v, bool), "true or false"),
    "relative": (lambda v: isinstance(v, bool), "true or false"),
    "layout": (lambda v: v in LAYOUT_NAMES, "one of " + ", ".join(f"'{n}'" for n in LAYOUT_NAMES)),
    "title": (lambda v: isinstance(v, str), "a string"),
    "source": (lambda v: isinstance(v, str), "a string"),
    "description": (lambda v: isinstance(v, str), "a string"),
    "table": (lambda v: isinstance(v, str), "a string"),
    "label": (lambda v: isinstance(v, str), "a string"),
}


def _setting(table: dict, key: str, where: str):
    """A [suite] or [[bench]] setting, checked against its type (`single = "false"` is not true)."""
    value = table[key]
    check, expected = SETTINGS[key]
    _expect(check(value), where, f"'{key}' must be {expected}, got {value!r}")
    return value


def _check_engines(value, where: str) -> list[str]:
    _expect(isinstance(value, list) and all(isinstance(v, str) for v in value), where,
            "'engines' must be a list of engine names")
    for e in value:
        _expect(e in ENGINES, where, f"unknown engine '{e}'; valid: {', '.join(ENGINES)}")
    return value


# benches a suite may plan before it is expanded at all: a sweep of 10^6 combinations would take
# gigabytes to plan and months to run; past this, the user confirms with --yes (max_benches=None)
MAX_BENCHES = 20_000


def load_suite(name: str, max_benches: int | None = MAX_BENCHES) -> Suite:
    path = find_suite(name)
    text, doc = read_toml(path)
    lines = text.splitlines()
    unknown = [k for k in doc if k not in ("suite", "bench")]
    if unknown:
        line = toml_line(lines, unknown[0])
        raise UsageError(f"{path}:{line}: unknown table or key '{unknown[0]}'; a suite has [suite] and [[bench]] tables")
    _expect(isinstance(doc.get("suite", {}), dict), f"{path}:{toml_line(lines, 'suite')}",
            "'suite' must be a table ([suite])")
    suite = _suite_head(path, lines, doc.get("suite", {}))
    bench_lines = [i for i, l in enumerate(lines) if re.match(r"^\s*\[\[bench\]\]", l)]
    benches = doc.get("bench", [])
    _expect(isinstance(benches, list) and benches and all(isinstance(b, dict) for b in benches), f"{path}:1",
            "expected at least one [[bench]] table")
    _check_size(path, benches, max_benches)
    first_line: dict[str, int] = {}        # (op, params) -> the line of the [[bench]] that planned it
    for idx, entry in enumerate(benches):
        start = bench_lines[idx] if idx < len(bench_lines) else 0
        end = bench_lines[idx + 1] if idx + 1 < len(bench_lines) else len(lines)
        for bench in _benches(path, lines, start, end, entry, suite.single):
            key = bench.op + "|" + params_key(bench.params)
            if key in first_line:
                raise UsageError(f"{path}:{start + 1}: duplicate bench {bench.op} {bench.params} (also planned at "
                                 f"line {first_line[key]}); give each (op, parameters) once")
            first_line[key] = start + 1
            suite.benches.append(bench)
    return suite


def _check_size(path: Path, benches: list[dict], limit: int | None) -> None:
    """Count the benches the sweeps would make, before making any."""
    if limit is None:
        return
    total = 0
    for entry in benches:
        n = 1
        for key, value in entry.items():
            if key not in BENCH_KEYS and isinstance(value, list):
                n *= max(1, len(value))
        total += n
    if total > limit:
        raise UsageError(f"{path}: the sweeps plan {total:,} benches (more than {limit:,}), each on every engine; "
                         "narrow them, or give --yes to plan and run them anyway")


def _suite_head(path: Path, lines: list[str], head: dict) -> Suite:
    """The suite's [suite] table checked: a Suite with its settings and no benches yet."""
    head_line = toml_line(lines, "suite")
    unknown = set(head) - SUITE_KEYS
    if unknown:
        raise UsageError(f"{path}:{head_line}: unknown key '{sorted(unknown)[0]}' in [suite]; "
                         f"expected one of {', '.join(sorted(SUITE_KEYS))}")
    for key in set(head) & set(SETTINGS) & SUITE_KEYS:
        _setting(head, key, f"{path}:{toml_line(lines, key)}")
    suite = Suite(name=path.stem, path=path, title=head.get("title", ""), source=head.get("source", ""))
    for key in ("repeat", "warmup", "min_time"):
        if key in head:
            setattr(suite, key, head[key])
    suite.repeat_set = "repeat" in head
    for key in ("budget", "precision"):
        if key in head:
            setattr(suite, key, float(head[key]))
    suite.single = head.get("single", False)
    suite.relative = head.get("relative", False)
    suite.layout = head.get("layout")
    if "engines" in head:
        suite.engines = _check_engines(head["engines"], f"{path}:{toml_line(lines, 'engines')}")
    if "baseline" in head:
        where = f"{path}:{toml_line(lines, 'baseline')}"
        _expect(isinstance(head["baseline"], str) and head["baseline"] in ENGINES, where,
                f"unknown baseline engine '{head['baseline']}'; valid: {', '.join(ENGINES)}")
        suite.baseline = head["baseline"]
    return suite


def _benches(path: Path, lines: list[str], start: int, end: int, entry: dict, single: bool) -> list[Bench]:
    """One [[bench]] table (lines start..end of the file): a Bench per combination of its swept
    parameters, each with the table's engines and overrides."""
    where = f"{path}:{start + 1}"
    _expect("op" in entry, where, "[[bench]] needs an 'op' key")
    _expect(isinstance(entry["op"], str), f"{path}:{toml_line(lines, 'op', start, end)}",
            f"'op' must be an operation name, got {entry['op']!r}")
    op = get_op(entry["op"], where=f"{path}:{toml_line(lines, 'op', start, end)}")
    for key in set(entry) & set(SETTINGS) & BENCH_KEYS:
        _setting(entry, key, f"{path}:{toml_line(lines, key, start, end)}")
    sweep = _sweep(path, lines, start, end, entry, op)
    names = list(sweep)
    out = []
    for combo in itertools.product(*(sweep[n] for n in names)) if names else [()]:
        given = dict(zip(names, combo))
        params = resolve_params(op, given, where)
        bench = Bench(op=op.id, params=params, table=str(entry.get("table", "")), given=tuple(names))
        if "engines" in entry:
            bench.engines = _check_engines(entry["engines"], where)
        for key in ("repeat", "warmup", "min_time"):
            if key in entry:
                setattr(bench, key, entry[key])
        bench.single = entry.get("single", single)
        out.append(bench)
    return out


def _sweep(path: Path, lines: list[str], start: int, end: int, entry: dict, op) -> dict[str, list]:
    """The op's parameters a [[bench]] table gives, each as a list of values (one value: a list of one)."""
    sweep = {}
    for key, value in entry.items():
        if key in BENCH_KEYS:
            continue
        kwhere = f"{path}:{toml_line(lines, key, start, end)}"
        if op.param(key) is None:
            raise UsageError(f"{kwhere}: operation '{op.id}' has no parameter '{key}'; valid: "
                             f"{', '.join(op.param_names) or '(none)'} (or bench keys: "
                             f"{', '.join(sorted(BENCH_KEYS))})")
        sweep[key] = value if isinstance(value, list) else [value]
        _expect(sweep[key], kwhere, f"'{key}' is an empty list; give at least one value")
        for v in sweep[key]:
            op.param(key).coerce(v, kwhere)       # a bad value is named on its own line
        twice = [v for i, v in enumerate(sweep[key]) if v in sweep[key][:i]]
        if twice:
            raise UsageError(f"{kwhere}: '{key}' lists {twice[0]!r} twice")
    return sweep
