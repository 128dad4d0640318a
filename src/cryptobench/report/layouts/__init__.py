"""The studies' own layouts: each study's tables from a stored run, in its columns, units and order
(docs/layouts.md). `LAYOUTS` maps a name to the function that builds them; "default" is the plain
per-operation tables of report/tables.py.

    ti     TI SWRA667 Tables 6-17: Duration (ms), Duration Improvement, Average Current, EEI
    nxp    the NXP blog's mbedtls_benchmark table: KB/s (KB = 1024 B) and cycles/byte per engine and -O
    cifra  the Cifra post's table at 256 B (cycles, cycles/byte, stack, code size, likely throughput)
           and its cycles-vs-length chart as tables
    zhaw   the ZHAW white paper's Tables 3-9: median time [s] and energy [J] to 3 significant digits,
           highest-RSD tables, repetitions
    pisa   the Pisa paper's Tables I-V: cores, Exec. time, D, TH, P, E; the hardware side; FoM
    pqm4   pqm4's benchmarks.md for ML-KEM / ML-DSA: speed (cycles AVG/MIN/MAX), stack, hashing %, size
    pqc-migration  what moving a party from ECDH / ECDSA to ML-KEM / ML-DSA costs: × time, stack,
           code size, energy and bytes sent (analysis/migration.py)

A suite names its layout in [suite] (`layout = "ti"`); `run` and `show` print it, or the one
`--layout` names (`--layout default`: the plain tables)."""
from __future__ import annotations

from typing import Callable

from ...core.records import Run
from ...core.table import Csv, Markdown, Table, to_json
from ..terminal import print_lines, print_table
from ...runner.suites import LAYOUT_NAMES
from . import cifra, migration, nxp, pisa, pqm4, ti, zhaw
from .common import is_qemu
from ...analysis.relative import direction_text, relative_tables
from ...core.printable import printable
from ..tables import ESTIMATOR_TEXT, build_tables, conditions_lines, summary_lines

LAYOUTS: dict[str, Callable[[Run], list[Table]]] = {
    "ti": ti.tables, "nxp": nxp.tables, "cifra": cifra.tables, "zhaw": zhaw.tables, "pisa": pisa.tables,
    "pqm4": pqm4.tables, "pqc-migration": migration.tables}
NAMES = LAYOUT_NAMES
assert set(LAYOUTS) == set(NAMES) - {"default"}, "suites.LAYOUT_NAMES and layouts.LAYOUTS name the same layouts"

TITLES = {"ti": "the TI CC13x2/CC26x2 report's Tables 6-17 (TI SWRA667)",
          "nxp": "the NXP i.MX RT blog's mbedtls_benchmark table",
          "cifra": "the Cifra AEAD post's results table and cycles-vs-length chart",
          "zhaw": "the ZHAW IoT white paper's Tables 3-9",
          "pisa": "the Pisa Cortex-A53 paper's Tables I-V",
          "pqm4": "pqm4's benchmark tables (speed, stack, hashing, size) for ML-KEM and ML-DSA",
          "pqc-migration": "what the post-quantum migration costs (ML-KEM / ML-DSA over ECDH / ECDSA)"}


def layout_for(run: Run, asked: str | None = None) -> str:
    """The layout to print: the one asked for, else the run's suite's, else "default"."""
    return asked or run.plan.layout or "default"


def layout_tables(run: Run, name: str) -> list[Table]:
    """The run's tables in layout `name` ("default": report/tables.py's)."""
    if name == "default":
        return build_tables(run)
    tables = LAYOUTS[name](run)
    timed = any(c.ok and c.result and c.reported_time() for c in run.cells)
    if tables and name in PRINTED_TIME and not is_qemu(run) and timed:      # QEMU runs print no time
        tables[0].notes.append(estimator_note(run))
    return tables


# the layouts whose times (and the rates and cycles from them) are the printed estimate
# (Result.reported_time); zhaw prints the median, as the paper does, and its titles say so
PRINTED_TIME = ("ti", "nxp", "cifra", "pisa")


def estimator_note(run: Run) -> str:
    """One line naming the estimator the layout's times are: "1st percentile (p1)" or "median"."""
    names = sorted({c.reported_time()[2] for c in run.cells if c.ok and c.result and c.reported_time()})
    what = " / ".join(ESTIMATOR_TEXT.get(e, e) for e in names) or "median"
    return (f"times (and the rates and cycles computed from them): the {what} of the repetitions, the number "
            "`show` prints and `export` gives as estimate_s (docs/statistics.md)")


def _preface(run: Run, name: str, relative_to: str | None) -> tuple[list[str], list[str], list[Table]]:
    """The run's conditions and the line naming the layout; the relative view's line and tables."""
    lines = conditions_lines(run, impr_legend=False) + [f"layout {name}: {TITLES[name]} (docs/layouts.md; "
                                                        "--layout default prints the plain tables)"]
    if not relative_to:
        return lines, [], []
    return lines, [f"Relative view: {direction_text(relative_to)}"], relative_tables(run, relative_to)


def render_rich(run: Run, console, name: str, relative_to: str | None = None) -> None:
    """The conditions and the layout's tables in the terminal, then the relative view if asked."""
    lines, rel_lines, rel_tables = _preface(run, name, relative_to)
    print_lines(console, lines)
    for t in layout_tables(run, name):
        print_table(console, t)
    print_lines(console, summary_lines(run), style="yellow")
    print_lines(console, rel_lines)
    for t in rel_tables:
        print_table(console, t)


def render_markdown(run: Run, name: str, relative_to: str | None = None) -> str:
    lines, rel_lines, rel_tables = _preface(run, name, relative_to)
    out = [f"# cryptobench run {run.id}", ""] + [f"- {printable(l.strip(), keep_newlines=False)}"
                                                 for l in lines + rel_lines] + [""]
    md = Markdown()
    for t in layout_tables(run, name) + rel_tables:
        out += md.render(t).rstrip("\n").split("\n") + [""]
    out += [f"- {printable(line, keep_newlines=False)}" for line in summary_lines(run)]
    return "\n".join(out)


def render_csv(run: Run, name: str) -> str:
    """Every table of the layout, each a header line and its rows, a first column naming the table."""
    csv = Csv(title_column="table")
    return "".join(csv.render(t) for t in layout_tables(run, name))


def render_json(run: Run, name: str) -> str:
    """The layout's tables as data (core/table.py as_dict: columns with units, cells and raw values, notes)."""
    return to_json(layout_tables(run, name))
