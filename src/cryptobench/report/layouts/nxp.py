"""The NXP i.MX RT blog's table (its Sections 3.2 and 3.3, the MCUXpresso SDK's mbedtls_benchmark):
a row per algorithm (SHA-1, SHA-256, SHA-512, AES-CBC-128/192/256 on a 1 KB buffer) and per engine
and optimisation level KB/s and cycles/byte. The blog's KB is 1024 bytes (mbedtls_benchmark divides
the bytes by 1024; the published numbers bear it out, references/data/nxp-imxrt.toml), and so is
this layout's, said in every KB/s header."""
from __future__ import annotations

import re

from ...core.quantity import fmt_num
from ...core.records import Cell, Run
from ...core.table import LEFT, Column, Table
from .common import (cell_notes, core_clock_hz, cycles_word, find, is_qemu, mark, op_label,
                     provenance_word, rows_of, shown_engines, word)

KB = 1024                    # the blog's (mbedtls_benchmark's) kilobyte
NAMES = {"sha1": "SHA-1", "sha256": "SHA-256", "sha512": "SHA-512", "sha224": "SHA-224", "sha384": "SHA-384"}


def algorithm(op: str, params: dict) -> str:
    """The blog's name for a row: SHA-256, AES-CBC-128."""
    if op.startswith("aes-cbc"):
        return f"AES-CBC-{params.get('key_bits', 128)}" + ("" if op.endswith("encrypt") else " decrypt")
    return op_label(op, params, NAMES)


def opt_level(run: Run, engine: str) -> str:
    """The optimisation level the engine's crypto code was compiled at: the firmware's -O (MCU
    targets), the library flags cryptobench built it with, or "-distro" (a distribution's library,
    built at whatever level it chose)."""
    t = run.conditions.target
    if t:
        return f"-{t.get('opt', '?')}"
    info = run.conditions.engines.get(engine, {})
    m = re.search(r"(?<!\S)-O\w*", str(info.get("library_cflags") or ""))
    return m.group(0) if m else "-distro"


def buffer_text(params: dict) -> str:
    """The Buffer column's cell: the message length, or "n/a" for an operation that takes none."""
    n = params.get("bytes")
    return str(n) if n is not None else "n/a"


def _throughput(cell: Cell) -> tuple[float | None, float | None]:
    """(bytes per second, cycles per byte) of an ok cell, where it has them."""
    r = cell.result
    nbytes = cell.params.get("bytes")
    t = cell.reported_time()
    bps = r.get("throughput_Bps") or (nbytes / t[0] if nbytes and t and t[0] > 0 else None)
    cpb = r.get("cycles_per_byte")
    if cpb is None and nbytes and r.cycles.get("per_op_median"):
        cpb = r.cycles["per_op_median"] / nbytes
    return bps, cpb


def _table(run: Run, label: str, cells: list[Cell]) -> Table:
    rows = rows_of(cells)
    engines, notes = shown_engines(run, cells)
    sizes = sorted({p.get("bytes") for _, _, p in rows if p.get("bytes")})
    timed = not is_qemu(run)
    cycles = timed and any(c.ok and c.result is not None and c.result.cycles.get("counter") not in (None, "none")
                           for c in cells)
    cyc_head = "cycles/byte" if core_clock_hz(run) else "cycles/byte (TSC)"
    cols = [Column("Test algorithm item", LEFT)] + ([Column("Buffer (bytes)", LEFT)] if len(sizes) > 1 else [])
    for e in engines:
        opt = opt_level(run, e)
        if timed:
            cols.append(Column(f"Opt{opt} {e} KB/s (KB = {KB} B)", unit="KB/s", group=e))
        if cycles:
            cols.append(Column(f"Opt{opt} {e} {cyc_head}", unit="cycles/B", group=e))
    size = f"{sizes[0]} B buffer" if len(sizes) == 1 else "buffers of " + ", ".join(map(str, sizes)) + " B"
    table = Table(f"{label} (the blog's mbedtls_benchmark table): KB/s and cycles/byte, {size}", cols, key="nxp")
    for op, pk, p in rows:
        # an operation without a buffer (a signature, an RNG call of its own size) has no length: "n/a"
        text = [algorithm(op, p)] + ([buffer_text(p)] if len(sizes) > 1 else [])
        values: list = [None] * len(text)
        for e in engines:
            cell = find(cells, op, pk, e)
            w = word(cell)
            bps, cpb = _throughput(cell) if w is None else (None, None)
            if timed:
                text.append(w or (fmt_num(bps / KB) + mark(cell) if bps else "—"))
                values.append(bps / KB if bps else None)
            if cycles:
                text.append("" if w else (fmt_num(cpb) if cpb else "—"))
                values.append(cpb)
        table.add(text, values)
    table.notes = [f"KB/s = bytes per second / {KB}, as the blog's mbedtls_benchmark counts a KB; "
                   "to about three significant figures (no decimals from 1,000 up); "
                   f"{provenance_word(run)}, from the printed time per operation"
                   + (f"; cycles/byte: {cycles_word(run)}" if cycles else "")]
    if len(sizes) > 1 and any(p.get("bytes") is None for _, _, p in rows):
        table.notes.append("Buffer n/a: the operation takes no message (a signature, a key exchange, a fixed-size call)")
    if not timed:
        table.notes.append("QEMU runs are functional: no time, so no KB/s or cycles/byte (use sim:CORE or a board)")
    elif not cycles:
        table.notes.append("cycles/byte is left out: the run's counter counts no cycles")
    if not run.conditions.target:
        table.notes.append("one optimisation level per engine and run (the blog compares None and High-speed): "
                           "Opt-distro is a distribution's library, built at whatever level it chose")
    else:
        table.notes.append("one optimisation level per run (the blog compares None and High-speed): run the suite "
                           "again with another --opt and show both runs")
    table.notes += notes + cell_notes([c for c in cells if c.engine in engines],
                                      lambda c: f"{c.engine} {algorithm(c.op, c.params)}")
    return table


def tables(run: Run) -> list[Table]:
    """The blog's table from a run: one per run (the blog's one per device), rows in the run's order
    (the suite's is the blog's: SHA-1, SHA-256, SHA-512, AES-CBC-128/192/256)."""
    cells = sorted(run.cells, key=lambda c: c.seq)
    return [_table(run, "Test results", cells)] if cells else []
