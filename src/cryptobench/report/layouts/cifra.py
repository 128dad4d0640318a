"""The Cifra AEAD post's tables: its results table for a 256-byte message (Algorithm, Cycles, Stack,
Code size, Likely throughput; here with cycles/byte and a row per library), and its cycles-vs-length
chart as a table per library (a row per message length, a column per algorithm).

"Likely throughput" is the post's footnote 3: "for one, long message; it therefore discounts set-up
costs". It is computed from the run's sweep of lengths (the marginal cost of a byte) or from one
message of at least 1 KiB (analysis/long_message.py), at the device's clock, never from the 256-byte row."""
from __future__ import annotations

from ...analysis.long_message import likely_throughput
from ...core.quantity import fmt_num
from ...core.records import Cell, Run
from ...core.table import LEFT, Column, Table
from .common import core_clock_hz, cycles_word, is_qemu, mark, provenance_word, word
from ...catalog.ops import OPS

AT_BYTES = 256                # the post's table: encrypting a 256-byte message
KB = 1000                     # the post does not say; a kilobyte of 1000 bytes here, said in the header
# the clock the post's likely throughput is computed at (the part's maximum); its cycles were counted at
# the 8 MHz reset clock (its firmware sets none): references/data/cifra-aead.toml, docs/layouts.md
POST_RATE_HZ = 48_000_000
AEADS = {"aes-ccm-encrypt": "CCM", "aes-eax-encrypt": "EAX", "aes-gcm-encrypt": "GCM"}
ORDER = ["AES-128-CCM", "AES-128-EAX", "AES-128-GCM", "AES-256-CCM", "AES-256-EAX", "AES-256-GCM",
         "ChaCha20-Poly1305", "NORX32-4-1"]


def algorithm(op: str, params: dict) -> str:
    """The post's name: AES-128-CCM, ChaCha20-Poly1305, NORX32-4-1."""
    if op in AEADS:
        return f"AES-{params.get('key_bits', 128)}-{AEADS[op]}"
    if op.startswith("chacha20-poly1305"):
        return "ChaCha20-Poly1305"
    if op.startswith("norx32"):
        return "NORX32-4-1"
    return OPS[op].title


def _order(name: str) -> tuple:
    return (ORDER.index(name), "") if name in ORDER else (len(ORDER), name)


def _series(run: Run) -> dict[tuple[str, str], list[Cell]]:
    """(algorithm, library) -> its cells over the lengths, in the post's order of algorithms."""
    out: dict[tuple[str, str], list[Cell]] = {}
    for c in sorted(run.cells, key=lambda c: c.seq):
        out.setdefault((algorithm(c.op, c.params), c.engine), []).append(c)
    return dict(sorted(out.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1])))


def _cycles(cell: Cell) -> float | None:
    r = cell.result
    return (r.cycles.get("per_op_estimate") or r.cycles.get("per_op_median")) if r is not None else None


def _cost_points(run: Run, cells: list[Cell], clock: float | None) -> list[tuple[int, float]]:
    """(length, cost) of the ok cells: cycles at a core clock, else seconds."""
    pts = []
    for c in cells:
        if word(c) is None and c.params.get("bytes") is not None:
            t = c.reported_time()
            cost = _cycles(c) if clock else (t[0] if t else None)
            if cost:
                pts.append((int(c.params["bytes"]), cost))
    return pts


def _results_table(run: Run, series: dict, at: int) -> Table:
    clock = core_clock_hz(run)
    timed = not is_qemu(run)
    oks = [c for cells in series.values() for c in cells if word(c) is None]
    stack = any(c.result.stack_bytes is not None for c in oks)
    code = any(c.result.code_size.get("flash_bytes") is not None for c in oks)
    cyc = "Cycles" if clock else "Cycles (TSC)"
    likely = f"Likely throughput (KB/s, KB = {KB} B)"
    labels = ["Algorithm", "Library"] + ([cyc, "Cycles/byte"] if timed else []) + (["Stack (B)"] if stack else []) \
        + (["Code size (B)"] if code else []) + ([likely] if timed else [])
    units = {cyc: "cycles", "Cycles/byte": "cycles/B", "Stack (B)": "B", "Code size (B)": "B"}
    cols = [Column(l, LEFT if i < 2 else "right", units.get(l, "KB/s" if l.startswith("Likely") else "")) for i, l in
            enumerate(labels)]
    table = Table(f"Results: encrypting a {at}-byte message (the post's table)", cols, key="cifra-results")
    hows, whys, unsupported = set(), set(), {}
    for (alg, lib), cells in series.items():
        cell = next((c for c in cells if c.params.get("bytes") == at), None)
        w = word(cell)
        if w == "unsupported":
            unsupported.setdefault((lib, cell.detail), []).append(alg)
            continue
        row = {"Algorithm": (alg, None), "Library": (lib, None)}
        if w is None:
            r = cell.result
            cy = _cycles(cell)
            row[cyc] = (fmt_num(cy) + mark(cell), cy) if cy else ("—", None)
            row["Cycles/byte"] = (f"{cy / at:.1f}", cy / at) if cy and at else ("—", None)
            row["Stack (B)"] = (str(r.stack_bytes), r.stack_bytes) if r.stack_bytes is not None else ("—", None)
            flash = r.code_size.get("flash_bytes")
            row["Code size (B)"] = (str(flash), flash) if flash is not None else ("—", None)
        else:           # a failed cell's word in its first number column (a QEMU run has no Cycles)
            row[labels[2] if len(labels) > 2 else cyc] = (w, None)
        if timed:       # (a QEMU run has no such column: its last column is the code size, kept as stored)
            bps, how = likely_throughput(_cost_points(run, cells, clock), clock)
            (hows if bps else whys).add(how)
            row[likely] = (fmt_num(bps / KB), bps / KB) if bps else ("—", None)
        table.add([row.get(l, ("", None))[0] for l in labels], [row.get(l, ("", None))[1] for l in labels])
    table.notes = _results_notes(run, clock, timed, stack, code, hows, whys, unsupported, at)
    return table


def _results_notes(run, clock, timed, stack, code, hows, whys, unsupported, at) -> list[str]:
    notes = []
    if timed:
        notes.append(f"Cycles: {cycles_word(run)} ({provenance_word(run)}); Cycles/byte = Cycles / {at}")
        where = f"at the core clock ({clock / 1e6:g} MHz)" if clock else "from the time per operation"
        for how in sorted(hows):
            notes.append(f"Likely throughput (the post's footnote 3: one long message, set-up discounted) {where}: {how}")
        if hows and clock and clock != POST_RATE_HZ:
            notes.append(f"the post's likely throughput is at {POST_RATE_HZ / 1e6:g} MHz (its cycles at the 8 MHz reset "
                         f"clock): x {POST_RATE_HZ / clock:g} sets this run's at the post's clock (compare --reference "
                         "cifra-aead does so)")
        for why in sorted(whys):
            notes.append(f"Likely throughput not computed: {why}")
    else:
        notes.append("QEMU runs are functional: no cycles and no likely throughput (use sim:CORE or a board)")
    if not stack:
        notes.append("Stack is left out: only microcontroller targets paint the stack")
    if not code:
        notes.append("Code size is left out: only microcontroller targets measure their image")
    else:
        notes.append("Code size = the op's firmware image (text + rodata + data) minus the empty harness's, the post's "
                     "'text section minus an empty program'; Stack = high-water mark by stack painting, as the post")
    for (lib, why), algs in unsupported.items():
        notes.append(f"{lib}: unsupported — {why}: {', '.join(algs)}")
    return notes


def _chart_tables(run: Run, series: dict) -> list[Table]:
    """The post's chart as data: per library, cycles against message length, a column per algorithm."""
    clock = core_clock_hz(run)
    out = []
    for lib in dict.fromkeys(lib for _, lib in series):
        algs = [(alg, cells) for (alg, l), cells in series.items() if l == lib
                and any(word(c) is None for c in cells)]
        if not algs:
            continue
        lengths = sorted({c.params.get("bytes") for _, cells in algs for c in cells if c.params.get("bytes") is not None})
        cols = [Column("Message size (bytes)", LEFT)] + [Column(alg, unit="cycles") for alg, _ in algs]
        table = Table(f"Cycles vs message length (the post's chart) — {lib}"
                      + ("" if clock else ", TSC reference cycles"), cols, key=f"cifra-chart-{lib}")
        for n in lengths:
            text, values = [str(n)], [n]
            for _, cells in algs:
                cell = next((c for c in cells if c.params.get("bytes") == n), None)
                cy = _cycles(cell) if word(cell) is None else None
                text.append(fmt_num(cy) if cy else (word(cell) or "—"))
                values.append(cy)
            table.add(text, values)
        out.append(table)
    return out


def tables(run: Run) -> list[Table]:
    """The post's results table at 256 B (or the run's longest message up to it), then its chart."""
    series = _series(run)
    if not series:
        return []
    lengths = sorted({c.params.get("bytes") for c in run.cells if c.params.get("bytes") is not None})
    at = AT_BYTES if AT_BYTES in lengths else max([n for n in lengths if n <= AT_BYTES] or lengths or [0])
    out = [_results_table(run, series, at)]
    if at != AT_BYTES:
        out[0].notes.insert(0, f"the run has no {AT_BYTES}-byte message: the table is at {at} B")
    if not is_qemu(run):
        out += _chart_tables(run, series)
    return out
