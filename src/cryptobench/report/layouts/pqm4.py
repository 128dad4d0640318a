"""pqm4's benchmark tables (its benchmarks.md) from a run's ML-KEM and ML-DSA cells, so that pqm4's
users read the same four tables: Speed (cycles AVG / MIN / MAX over the executions), Memory (stack
bytes), Hashing (% of the cycles in the Keccak permutation) and Size (.text / .data / .bss / Total),
each for key-encapsulation and for signature schemes, a row per scheme and implementation (engine).

Where pqm4's figures and a run's differ in kind, the table says so: the hashing share comes from the
simulator's per-function profile (`--profile`), else "—"; code size is one operation's image beyond
the empty harness, not pqm4's whole scheme without hashing and libc."""
from __future__ import annotations

from ...analysis.pqc import KEM_OPS, SIGN_OPS, cycle_distribution, histogram, keccak_share, per_op_cycles, scheme
from ...core.quantity import fmt_hz
from ...core.records import Cell, Run
from ...core.table import Table, columns
from .common import core_clock_hz, cycles_word, provenance_word

DASH = "—"
HEADS = {"kem": ("Key Encapsulation Schemes", ("key generation", "encapsulation", "decapsulation"), KEM_OPS),
         "sign": ("Signature Schemes", ("key generation", "sign", "verify"), SIGN_OPS)}
SIZE_PARTS = (".text", ".data", ".bss", "Total")



def _int(v: float | None) -> str:
    """Cycles and bytes as pqm4 prints them: whole, thousands separated."""
    return "—" if v is None else f"{round(v):,}"

def _rows(run: Run, ops: tuple[str, ...]) -> dict[tuple[str, str], dict[str, Cell]]:
    """(scheme, implementation) -> op -> its ok cell, in pqm4's order (scheme name, then implementation)."""
    out: dict[tuple[str, str], dict[str, Cell]] = {}
    for c in run.cells:
        if c.op in ops and c.ok and c.result is not None:
            impl = c.engine + (f" ({c.result['implementation']})" if c.result.get("implementation") else "")
            out.setdefault((scheme(c.op, c.params.get("level")), impl), {}).setdefault(c.op, c)
    return dict(sorted(out.items()))


def _speed_cell(c: Cell | None) -> str:
    d = cycle_distribution(c) if c is not None else None
    return f"AVG: {_int(d.mean)} / MIN: {_int(d.min)} / MAX: {_int(d.max)}" if d else DASH


def _executions(cells: dict[str, Cell]) -> str:
    ns = sorted({d.n for d in (cycle_distribution(c) for c in cells.values()) if d})
    return "" if not ns else f" ({ns[0]} executions)" if len(ns) == 1 else f" ({ns[0]}–{ns[-1]} executions)"


def _conditions(run: Run) -> str:
    t = run.conditions.target
    clock = core_clock_hz(run)
    where = f"{t.get('device') or t.get('board') or t.get('core') or 'host'}" + (f" at {fmt_hz(clock)}" if clock else "")
    return (f"{provenance_word(run)} on {where}; pqm4's own tables are measured on the NUCLEO-L4R5ZI (STM32L4R5) "
            "at 20 MHz, 0 flash wait states (compare --reference pqm4 sets them side by side)")


def _speed(run: Run, kind: str) -> Table:
    sub, names, ops = HEADS[kind]
    t = Table(f"Speed Evaluation — {sub}", columns(["scheme", "implementation"] + [f"{n} [cycles]" for n in names],
                                                   left=2), key=f"pqm4-speed-{kind}")
    for (name, impl), cells in _rows(run, ops).items():
        t.add([name + _executions(cells), impl] + [_speed_cell(cells.get(op)) for op in ops])
    t.notes = [f"cycles per operation over the cell's repetitions (AVG = mean), {cycles_word(run)}: {_conditions(run)}",
               "executions: the cell's timed repetitions (pqm4: 10 for ML-KEM, 1000 for ML-DSA); ML-DSA signing's "
               "MIN and MAX widen with more executions (its rejection loop)"]
    return t


def _stack(run: Run, kind: str) -> Table:
    sub, names, ops = HEADS[kind]
    t = Table(f"Memory Evaluation — {sub}", columns(["scheme", "implementation"] + [f"{n} [bytes]" for n in names],
                                                    left=2), key=f"pqm4-stack-{kind}")
    for (name, impl), cells in _rows(run, ops).items():
        vals = [cells[op].result.stack_bytes if op in cells else None for op in ops]
        t.add([name, impl] + [_int(v) if v is not None else DASH for v in vals], [None, None] + vals)
    t.notes = [f"stack high-water mark by stack painting (as pqm4's stack benchmark): {_conditions(run)}"]
    return t


def _hashing(run: Run, kind: str) -> Table:
    sub, names, ops = HEADS[kind]
    t = Table(f"Hashing Evaluation — {sub}", columns(["scheme", "implementation"] + [f"{n} [%]" for n in names],
                                                     left=2), key=f"pqm4-hashing-{kind}")
    missing = False
    for (name, impl), cells in _rows(run, ops).items():
        shares = [keccak_share(cells[op]) if op in cells else None for op in ops]
        missing |= any(s is None for op, s in zip(ops, shares) if op in cells)
        t.add([name, impl] + [f"{s[0]:.1f}%" if s else DASH for s in shares], [None, None] + [s and s[0] for s in shares])
    t.notes = ["% of the profiled repetition's cycles in functions whose name contains KeccakF1600/keccak (the "
               f"simulator's per-function profile; pqm4 counts SHA-2, SHA-3 and AES, for ML-KEM/ML-DSA Keccak only): "
               f"{_conditions(run)}"]
    if missing:
        t.notes.append("—: the cell has no profile (run on the simulator with --profile to have one), or the run has "
                       "no cell of the operation")
    return t


def _size(run: Run, kind: str) -> Table:
    sub, _, ops = HEADS[kind]
    t = Table(f"Size Evaluation — {sub}", columns(["scheme", "implementation"] + [f"{p} [bytes]" for p in SIZE_PARTS]
                                                  + ["largest image"], left=2), key=f"pqm4-size-{kind}")
    for (name, impl), cells in _rows(run, ops).items():
        sized = [c for c in cells.values() if c.result.code_size.get("text") is not None]
        if not sized:
            t.add([name, impl] + [DASH] * (len(SIZE_PARTS) + 1))
            continue
        parts = lambda c: {".text": c["text"] + c.get("rodata", 0), ".data": c.get("data", 0), ".bss": c.get("bss", 0)}
        c = max(sized, key=lambda c: sum(parts(c.result.code_size).values()))
        p = parts(c.result.code_size)
        p["Total"] = sum(p.values())
        t.add([name, impl] + [_int(p[k]) for k in SIZE_PARTS] + [c.op], [None, None] + [p[k] for k in SIZE_PARTS] + [None])
    t.notes = ["bytes of the largest of the scheme's operation images beyond the empty harness (.text with .rodata; "
               "its hashing and C library included), by section from the ELF; pqm4's are the scheme's own code, all "
               "operations, hashing and libc excluded (arm-none-eabi-size): not the same scope"]
    return t


def _quantile(xs: list[float], q: float) -> float:
    """The q-quantile of sorted xs, linear between order statistics (numpy's default)."""
    h = (len(xs) - 1) * q
    i = int(h)
    return xs[i] + (h - i) * (xs[min(i + 1, len(xs) - 1)] - xs[i])


def _spread(run: Run) -> list[Table]:
    """ML-DSA signing's distribution: a summary row per cell, then a text histogram per cell. Its rejection
    loop repeats a random number of times, so AVG alone hides a tail (pqm4's MAX is 5-13 times its MIN)."""
    cells = [c for c in run.cells if c.op == "ml-dsa-sign" and per_op_cycles(c)]
    if not cells:
        return []
    t = Table("ML-DSA signing: the spread of its cycles", columns(
        ["scheme", "implementation", "n", "MIN", "P10", "median", "AVG", "P90", "MAX", "MAX / MIN"], left=2),
        key="pqm4-sign-spread")
    out = [t]
    for c in cells:
        xs = per_op_cycles(c)
        name, impl = scheme(c.op, c.params.get("level")), c.engine
        qs = [xs[0], _quantile(xs, 0.1), _quantile(xs, 0.5), sum(xs) / len(xs), _quantile(xs, 0.9), xs[-1]]
        t.add([name, impl, str(len(xs))] + [_int(q) for q in qs] + [f"{xs[-1] / xs[0]:.2f}"],
              [None, None, len(xs)] + qs + [xs[-1] / xs[0]])
        h = Table(f"ML-DSA signing: histogram of cycles per signature — {name}, {impl}",
                  columns(["cycles from", "to", "count"], left=0) + columns(["bar"], left=1), key="pqm4-sign-histogram")
        bins = histogram(xs)
        top = max(n for _, _, n in bins)
        for lo, hi, n in bins:
            h.add([_int(lo), _int(hi), str(n), "#" * round(40 * n / top)], [lo, hi, n, None])
        h.notes = [f"{len(xs)} timed repetitions, {cycles_word(run)}, equal-width bins from MIN to MAX (the last "
                   "closed); each # is a share of the fullest bin"]
        out.append(h)
    t.notes = [f"cycles per signature over the cell's timed repetitions, {cycles_word(run)}: {_conditions(run)}",
               "P10 / P90: linear between order statistics; with fewer executions than pqm4's 1000 the MIN and "
               "MAX are narrower by chance"]
    return out


def tables(run: Run) -> list[Table]:
    """pqm4's four tables, key-encapsulation then signature schemes, for the kinds the run has; then
    ML-DSA signing's spread and histogram where the run signed."""
    kinds = [k for k, (_, _, ops) in HEADS.items() if any(c.op in ops for c in run.cells)]
    return [build(run, k) for build in (_speed, _stack, _hashing, _size) for k in kinds] + _spread(run)
