"""The subcommands, in the order `cryptobench --help` lists them: the module that implements each
and its one-line help. main.py imports only the module of the command being run (a command
loads what it needs, not the whole package); the modules take their help line from here."""
from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    module: str          # cryptobench.cli.<module>: NAME, add_parser(sub), run(args, out)
    help: str


COMMANDS: dict[str, Command] = {
    "list": Command("list_cmd", "list stored runs, suites, engines, operations, published references or microcontroller "
                      "targets"),
    "run": Command("run", "verify, time, store and print a suite or a set of operations"),
    "show": Command("show", "print stored runs"),
    "compare": Command("compare", "a stored run beside a study's published results (references/)"),
    "diff": Command("diff", "per cell, the change from RUN_A to RUN_B of the printed time, with a significance test; "
                      "exit 1 on a significant regression beyond --threshold"),
    "gate": Command("gate", "a regression gate BASE → HEAD: deterministic cycles, instructions, stack and code size "
                      "compared exactly and named by function, measured times as diff; exit 1 on a regression, "
                      "4 when the runs' conditions differ"),
    "history": Command("history", "one operation's value over the stored runs, ordered by the library's commit (else "
                        "time), with change points marked"),
    "export": Command("export", "stored runs as a flat table for pandas or DuckDB (parquet, csv, json) or for a "
                      "benchmark dashboard (bencher, github-action-benchmark)"),
    "report": Command("report", "a self-contained HTML report with figures (PNG, SVG) and tables (Markdown, CSV, LaTeX) "
                      "from stored runs"),
    "energy": Command("energy", "energy: trace formats, import a trace, capture live, power models"),
    "model": Command("model", "analytic models (provenance modeled): accelerator throughput, polling vs blocking "
                      "offload, crossover lengths, battery share"),
    "sim": Command("sim", "the cycle-approximate simulator on an image of your own"),
    "db": Command("db", "the result store itself"),
}
