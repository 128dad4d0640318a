"""What every study's layout reads from a run: the study's table each cell belongs to, in the
study's order, the engines shown, the words for a cell that has no number, the run's kind of target
and the notes that explain a left-out column."""
from __future__ import annotations

from ...catalog.ops import OPS
from ...core.records import FAILED, UNSUPPORTED, Cell, Run, outcome_text
from ...references import table_order  # noqa: F401  (the layouts sort by it)
from ..failure_text import failure_note
from ..flag_text import flag_legend
from ..tables import noted_flags

def plan_tables(run: Run) -> dict[tuple[str, str], str]:
    """(op, params key) -> the study's table the suite's [[bench]] names for it ("" where none)."""
    return {(g.op, g.params.key): g.table or "" for g in run.plan.groups}


def table_of(run: Run, cell: Cell, by_op: dict[str, str] | None = None, labels: dict | None = None) -> str:
    """The study table a cell belongs to: the suite's label for it, else the layout's own table for
    its operation (`by_op`), else ""."""
    labels = plan_tables(run) if labels is None else labels
    return labels.get((cell.op, cell.params.key)) or (by_op or {}).get(cell.op, "")


def grouped(run: Run, by_op: dict[str, str] | None = None) -> list[tuple[str, list[Cell]]]:
    """The run's cells by study table, the tables in the study's order (unnamed last), the cells
    of each in the order the plan listed them."""
    labels = plan_tables(run)
    groups: dict[str, list[Cell]] = {}
    for c in sorted(run.cells, key=lambda c: c.seq):
        groups.setdefault(table_of(run, c, by_op, labels), []).append(c)
    return sorted(groups.items(), key=lambda kv: table_order(kv[0]))


def rows_of(cells: list[Cell]) -> list[tuple[str, str, dict]]:
    """The distinct (op, params key, params) of some cells, in their order."""
    seen: dict[tuple[str, str], dict] = {}
    for c in cells:
        seen.setdefault((c.op, c.params.key), dict(c.params))
    return [(op, pk, p) for (op, pk), p in seen.items()]


def engine_order(run: Run, cells: list[Cell]) -> list[str]:
    """The engines of these cells: the run's baseline first, then in the plan's order."""
    names = list(run.plan.options.engines or [])
    names += [e for e in dict.fromkeys(c.engine for c in cells) if e not in names]
    present = {c.engine for c in cells}
    base = run.plan.baseline
    order = [e for e in names if e in present]
    return ([base] if base in order else []) + [e for e in order if e != base]


def shown_engines(run: Run, cells: list[Cell]) -> tuple[list[str], list[str]]:
    """(engines with a cell that is not unsupported, notes for those whose every cell here is)."""
    shown, notes = [], []
    for e in engine_order(run, cells):
        mine = [c for c in cells if c.engine == e]
        if all(c.status == UNSUPPORTED for c in mine):
            notes.append(f"{e}: unsupported — {mine[0].detail}")
        else:
            shown.append(e)
    return shown, notes


def find(cells: list[Cell], op: str, pk: str, engine: str) -> Cell | None:
    return next((c for c in cells if c.op == op and c.params.key == pk and c.engine == engine), None)


def word(cell: Cell | None) -> str | None:
    """What a cell that has no number shows: — (not run), unsupported, KAT FAIL, failed; None when ok."""
    return outcome_text(cell)


def mark(cell: Cell | None) -> str:
    """The * of a cell whose flags a note lists."""
    return "*" if cell is not None and cell.ok and cell.result is not None and noted_flags(cell.result.flags) else ""


def cell_notes(cells: list[Cell], who) -> list[str]:
    """A note per cell that failed, or carries flags (its *); `who(cell)` names it."""
    out = []
    for c in cells:
        if c.status == FAILED:
            out.append(f"{who(c)}: {outcome_text(c)} — {failure_note(c.detail)}")
        elif c.ok and c.result is not None and noted_flags(c.result.flags):
            out.append(f"{who(c)}: * {', '.join(noted_flags(c.result.flags))}")
    return out + flag_legend(f for c in cells if c.ok and c.result is not None for f in noted_flags(c.result.flags))


def target_kind(run: Run) -> str:
    """"mcu" (a board, QEMU or the simulator), "trace" (an imported energy trace) or "host"."""
    t = run.conditions.target
    if t:
        return "mcu"
    if run.plan.kind == "trace" or "trace" in run.conditions:
        return "trace"
    return "host"


def is_qemu(run: Run) -> bool:
    return run.conditions.target.qemu


def core_clock_hz(run: Run) -> float | None:
    """The core clock the run's cycles count (a simulator's or a board's); None on the host (TSC)
    and under QEMU (no cycles)."""
    t = run.conditions.target
    if t.counts_core_cycles:
        return float(t.get("clock_hz") or 0) or None
    return None


def cycles_word(run: Run) -> str:
    """What the run's cycles are, for a header or a note."""
    t = run.conditions.target
    if t.simulated:
        return "simulated core cycles"
    if t.on_board:
        return "core cycles (the board's counter)"
    harness = run.conditions.harness
    if harness.get("counter") == "tsc":
        return f"TSC reference cycles at {harness.get('counter_hz', 0) / 1e6:.0f} MHz, not core cycles"
    return f"cycles ({harness.get('counter', 'none')})"


def op_label(op_id: str, params: dict, names: dict[str, str] | None = None) -> str:
    """An operation as a study names it (`names`), else the catalog's title."""
    return (names or {}).get(op_id) or OPS[op_id].title


def provenance_word(run: Run) -> str:
    """measured or simulated: what the run's times are."""
    provs = sorted({c.provenance for c in run.cells if c.ok})
    return "/".join(provs) or "measured"
