"""`compare --reference pqm4`: published rows that name the implementation they measured (pqm4's
`clean`, `m4fstack`, `m4f`), each set beside the run's matching cells one published row per line,
with that implementation named and a ratio per line (yours / published).

* Speed: pqm4 prints AVG / MIN / MAX over N executions (rows with `stat`); they are set beside the
  cell's distribution over its repetitions (mean, median, min, max, n), never beside one sample:
  ML-DSA signing loops on rejection sampling, so its min and max spread by a factor of ten. The
  ratio is mean / AVG (pqm4's AVG is a mean); the median is shown beside it.
* Stack (bytes), the hashing share (% of cycles: yours from the simulator's profile, Keccak functions)
  and code size (pqm4's per scheme, hashing and libc excluded; yours per operation's image beyond the
  empty harness, the largest of the scheme's cells: another scope, said so).
* Matched on op, level (and bytes: mupq's speed and hashing benchmarks sign a 59-byte message) and the
  implementation class (analysis/pqc.py): pqm4's `clean` beside portable-C cells (cryptobench's pqclean
  engine), its `m4f` / `m4fstack` / `m4fspeed` beside cells of Armv7E-M assembly, an implementation a cell
  names beside that one only. Stack rows: mupq's stack benchmark signs 32 bytes; they are matched on
  level alone and the table says which length each side used. Only on an MCU run (a host's TSC counts no
  core cycles); rows with no cell are listed, never hidden."""
from __future__ import annotations

from ..core.quantity import fmt_hz, fmt_sig
from ..core.records import Cell, Run
from ..core.table import Table, columns
from ..references import Row
from ..catalog.ops import OPS
from .pqc import cycle_distribution, keccak_share, same_implementation

KINDS = ("speed", "stack", "hashing", "size")
PQM4_HZ = 20_000_000      # pqm4's clock: 0 flash wait states on the NUCLEO-L4R5ZI (common/hal-opencm3.c; pqm4.toml)



def _int(v: float | None) -> str:
    """Cycles and bytes as pqm4 prints them: whole, thousands separated."""
    return "—" if v is None else f"{round(v):,}"

def _cells(run: Run, row: Row, ignore: tuple[str, ...] = ()) -> list[Cell]:
    """The run's ok cells of the row's op, stated parameters (but `ignore`) and implementation class
    (size rows: any op of the scheme)."""
    mine = [c for c in run.cells if c.ok and c.result is not None and same_implementation(c, row.implementation)]
    if row.op is not None:
        return [c for c in mine if c.op == row.op
                and all(str(c.params.get(k)) == str(v) for k, v in row.given.items() if k not in ignore)]
    family = row.label.split(" ")[0].rsplit("-", 1)[0]          # "ml-kem-768 | clean | .text" -> ml-kem
    return [c for c in mine if OPS[c.op].family == family and str(c.params.get("level")) == str(row.given.get("level"))]


def _ratio(yours: float | None, published: float) -> float | None:
    return yours / published if yours is not None and published else None


def _speed(run: Run, rows: list[Row]) -> tuple[list[dict], list[Row]]:
    """One entry per (published AVG/MIN/MAX triple, engine)."""
    triples: dict[tuple, dict[str, Row]] = {}
    for r in rows:
        triples.setdefault((r.op, r.params.get("level"), r.params.get("bytes"), r.source.id), {})[r.stat] = r
    out, unmatched = [], []
    for (op, level, nbytes, impl), t in triples.items():
        avg = t.get("avg")
        cells = _cells(run, avg) if avg else []
        got = False
        for c in cells:
            d = cycle_distribution(c)
            if d is None:
                continue
            got = True
            out.append({"op": op, "level": level, "bytes": nbytes, "implementation": impl, "engine": c.engine,
                        "executions": avg.executions, "avg": avg.value, "min": t["min"].value if "min" in t else None,
                        "max": t["max"].value if "max" in t else None, "yours": vars(d),
                        "ratio": _ratio(d.mean, avg.value), "median_ratio": _ratio(d.median, avg.value),
                        "provenance": c.provenance})
        if not got:
            unmatched += list(t.values())
    return out, unmatched


def _single(run: Run, rows: list[Row], read, ignore: tuple[str, ...] = ()) -> tuple[list[dict], list[Row]]:
    """One entry per (published row, engine) of a one-value metric; `read(cell)` gives yours or None."""
    out, unmatched = [], []
    for r in rows:
        hits = [(c, read(c)) for c in _cells(run, r, ignore)]
        hits = [(c, v) for c, v in hits if v is not None]
        for c, v in hits:
            out.append({"op": r.op, "level": r.params.get("level"), "bytes": r.params.get("bytes"),
                        "your_bytes": c.params.get("bytes"), "implementation": r.source.id, "engine": c.engine,
                        "published": r.value, "yours": v, "ratio": _ratio(v, r.value), "provenance": c.provenance})
        if not hits:
            unmatched.append(r)
    return out, unmatched


def _hashing(cell: Cell):
    got = keccak_share(cell)
    return got[0] if got else None


def _size(run: Run, rows: list[Row]) -> tuple[list[dict], list[Row]]:
    """Per (scheme, implementation, engine): pqm4's .text/.data/.bss/Total beside the largest image of
    the run's cells of the scheme (text + data + bss beyond the empty harness)."""
    by: dict[tuple, dict[str, Row]] = {}
    for r in rows:
        by.setdefault((r.label.split(" ")[0], r.source.id), {})[r.label.split(" | ")[2].split(" ")[0]] = r
    out, unmatched = [], []
    for (name, impl), parts in by.items():
        cells = _cells(run, parts["Total"]) if "Total" in parts else []
        best: dict[str, tuple[int, Cell]] = {}
        for c in cells:
            cs = c.result.code_size
            if cs.get("text") is None:
                continue
            total = int(cs.get("text", 0)) + int(cs.get("rodata", 0)) + int(cs.get("data", 0)) + int(cs.get("bss", 0))
            if c.engine not in best or total > best[c.engine][0]:
                best[c.engine] = (total, c)
        for engine, (total, c) in best.items():
            cs = c.result.code_size
            out.append({"scheme": name, "implementation": impl, "engine": engine, "op": c.op,
                        "published": {k: parts[k].value for k in parts},
                        "yours": {".text": int(cs["text"]) + int(cs.get("rodata", 0)), ".data": int(cs.get("data", 0)),
                                  ".bss": int(cs.get("bss", 0)), "Total": total},
                        "ratio": _ratio(total, parts["Total"].value) if "Total" in parts else None})
        if not best:
            unmatched += list(parts.values())
    return out, unmatched


def view(run: Run, rows: list[Row], comparable: bool) -> dict:
    """The per-row comparison of `rows` (all naming an implementation); `comparable` False (a host
    run beside a microcontroller's rows) compares nothing and lists them as of another kind."""
    if not rows or not comparable:
        return {"speed": [], "stack": [], "hashing": [], "size": [], "unmatched": [], "other_kind": len(rows)}
    speed, u1 = _speed(run, [r for r in rows if r.metric == "cycles" and r.stat])
    stack, u2 = _single(run, [r for r in rows if r.metric == "stack"], lambda c: c.result.stack_bytes,
                       ignore=("bytes",))
    hashing, u3 = _single(run, [r for r in rows if r.metric == "hashing_share"], _hashing)
    size, u4 = _size(run, [r for r in rows if r.metric == "code_size"])
    t = run.conditions.target
    return {"speed": speed, "stack": stack, "hashing": hashing, "size": size, "other_kind": 0,
            "clock_hz": t.get("clock_hz"), "device": t.get("device") or t.get("board"),
            "unmatched": [{"table": r.table, "label": r.label, "op": r.op, "metric": r.metric,
                           "implementation": r.implementation} for r in u1 + u2 + u3 + u4]}


def _where(v: dict) -> str:
    clock = v.get("clock_hz")
    if clock and float(clock) == PQM4_HZ:
        return f"yours at {fmt_hz(clock)} as pqm4's"
    return (f"yours at {fmt_hz(clock)}" if clock else "your run's clock is not recorded") + \
        f", pqm4's at {fmt_hz(PQM4_HZ)} with 0 flash wait states: cycles differ by the wait states where the clocks do"


def _level(e: dict) -> str:
    return str(e["level"]) + (f", {e['bytes']} B" if e.get("bytes") is not None else "")


def _lengths(e: dict) -> str:
    """The level, and the message lengths where pqm4's and yours differ (its stack benchmark signs 32 bytes)."""
    if e.get("bytes") is None or str(e.get("your_bytes")) == str(e["bytes"]):
        return _level(e)
    return f"{e['level']}, pqm4 {e['bytes']} B / yours {e['your_bytes']} B"


def tables(v: dict) -> list[Table]:
    """pqm4's four tables, each published row beside yours; only those with an entry."""
    out = []
    if v["speed"]:
        t = Table("pqm4 Speed Evaluation — cycles, published AVG/MIN/MAX beside your distribution",
                  columns(["operation", "level", "pqm4 impl.", "pqm4 AVG", "pqm4 MIN", "pqm4 MAX", "pqm4 N", "engine",
                           "yours mean", "yours median", "yours min", "yours max", "yours n", "mean / AVG",
                           "median / AVG"], left=3), key="pqm4-speed")
        for e in v["speed"]:
            y = e["yours"]
            t.add([e["op"], _level(e), e["implementation"], _int(e["avg"]), _int(e["min"]), _int(e["max"]),
                   str(e["executions"] or "—"), e["engine"], _int(y["mean"]), _int(y["median"]), _int(y["min"]),
                   _int(y["max"]), str(y["n"]), fmt_sig(e["ratio"]) if e["ratio"] else "—",
                   fmt_sig(e["median_ratio"]) if e["median_ratio"] else "—"])
        t.notes = ["published: pqm4 benchmarks.md, NUCLEO-L4R5ZI at 20 MHz, cycles over N executions; yours: cycles per "
                   "operation over the cell's repetitions (" + ", ".join(sorted({e["provenance"] for e in v["speed"]}))
                   + "), each line one published row", _where(v),
                   "a min and max over fewer executions than pqm4's N are narrower by chance (ML-DSA signing's "
                   "rejection loop): compare the mean and the spread, with n beside N",
                   "matched by implementation class: pqm4's clean (PQClean's portable C) beside portable-C engines, "
                   "its m4f / m4fstack / m4fspeed beside Armv7E-M assembly",
                   "ratio: yours / published below 1: yours takes fewer cycles"]
        out.append(t)
    for key, title, unit, what in (("stack", "Memory Evaluation — stack", "B", "bytes by stack painting"),
                                   ("hashing", "Hashing Evaluation — share of cycles in hashing", "%",
                                    "percent of the operation's cycles")):
        if not v[key]:
            continue
        # a share is set against a share by its difference in percentage points; bytes by their ratio
        last = "yours − pqm4 (points)" if key == "hashing" else "yours / pqm4"
        t = Table(f"pqm4 {title}", columns(["operation", "level", "pqm4 impl.", f"pqm4 ({unit})", "engine",
                                            f"yours ({unit})", last], left=3), key=f"pqm4-{key}")
        for e in v[key]:
            fmt = (lambda x: f"{x:.1f}") if key == "hashing" else _int
            diff = f"{e['yours'] - e['published']:+.1f}" if key == "hashing" else None
            t.add([e["op"], _lengths(e), e["implementation"], fmt(e["published"]), e["engine"], fmt(e["yours"]),
                   diff or (fmt_sig(e["ratio"]) if e["ratio"] else "—")])
        t.notes = [f"published: pqm4 benchmarks.md, {what}; yours: "
                   + ("the cell's stack high-water mark (painted)" if key == "stack" else
                      "the profiled repetition's cycles in functions named *keccak* (the simulator's --profile); "
                      "pqm4 counts SHA-2, SHA-3 and AES, which for ML-KEM and ML-DSA is SHAKE/SHA-3 (Keccak) only")]
        out.append(t)
    if v["size"]:
        t = Table("pqm4 Size Evaluation — code size (bytes)",
                  columns(["scheme", "pqm4 impl.", "pqm4 .text", "pqm4 .data", "pqm4 .bss", "pqm4 Total", "engine",
                           "your largest op", "yours .text", "yours .data", "yours .bss", "yours Total",
                           "Total yours / pqm4"], left=2), key="pqm4-size")
        for e in v["size"]:
            p, y = e["published"], e["yours"]
            t.add([e["scheme"], e["implementation"], *(_int(p[k]) if k in p else "—" for k in (".text", ".data", ".bss",
                                                                                                 "Total")),
                   e["engine"], e["op"], *(_int(y[k]) for k in (".text", ".data", ".bss", "Total")),
                   fmt_sig(e["ratio"]) if e["ratio"] else "—"])
        t.notes = ["not the same scope: pqm4's is the scheme's own code (all its operations, hashing and the C library "
                   "excluded); yours is one operation's image beyond the empty harness (its hashing and library "
                   "included), the largest of the scheme's cells; yours .text counts .rodata"]
        out.append(t)
    return out


def unmatched_lines(v: dict) -> list[str]:
    out = []
    if v.get("other_kind"):
        out.append(f"pqm4's rows ({v['other_kind']}) are cycles, stack and size on a Cortex-M4 board: not set beside "
                   "a host run (its counter is the TSC)")
    groups: dict[tuple, int] = {}
    for u in v["unmatched"]:
        k = (u["op"] or u["label"].split(" ")[0], u["metric"])
        groups[k] = groups.get(k, 0) + 1
    if groups:
        out.append(f"pqm4 rows with no matching cell ({len(v['unmatched'])}; each in --format json):")
        out += [f"  {op} ({metric}): {n} rows" for (op, metric), n in groups.items()]
    return out
