"""The figures pqm4 reports, read from a stored cell: the cycles per operation over the cell's
repetitions (pqm4's AVG / MIN / MAX over N executions; ML-DSA signing varies with its rejection
sampling, so one number is not its cost), and the share of the cycles spent in the Keccak-f[1600]
permutation (pqm4's "hashing" table) from the simulator's per-function profile.

Both come from what the run stored: the samples ([k, ns, cycles] each) and result["profile"]
(`--profile`: per function, the cycles of the cell's median timed repetition); nothing is estimated."""
from __future__ import annotations

from dataclasses import dataclass

from ..catalog.ops import OPS
from ..core.records import Cell

# pqm4's ML-KEM and ML-DSA operations, in its tables' column order
KEM_OPS = ("ml-kem-keygen", "ml-kem-encaps", "ml-kem-decaps")
SIGN_OPS = ("ml-dsa-keygen", "ml-dsa-sign", "ml-dsa-verify")
PQC_OPS = KEM_OPS + SIGN_OPS
# a profile's function names that are the Keccak permutation: PQClean's KeccakF1600_StatePermute,
# XKCP's KeccakP1600_Permute_24rounds / KeccakF1600_StatePermute, mupq's keccakf1600 assembly
KECCAK_WORDS = ("keccakf1600", "keccak")


@dataclass(frozen=True)
class Distribution:
    """Cycles per operation over a cell's repetitions (each sample's cycles / k)."""
    n: int
    mean: float
    median: float
    min: float
    max: float


def cycle_distribution(cell: Cell) -> Distribution | None:
    """The cell's cycles per operation over its samples; None where it counted no cycles (a host
    without a cycle counter, QEMU) or is not ok."""
    if not cell.ok or cell.result is None or not cell.result.cycles.get("per_op_median"):
        return None
    div = 2.0 if OPS[cell.op].halve else 1.0
    per_op = sorted(c / k / div for k, _, c in cell.samples if k)
    if not per_op:
        return None
    n = len(per_op)
    median = per_op[n // 2] if n % 2 else (per_op[n // 2 - 1] + per_op[n // 2]) / 2
    return Distribution(n, sum(per_op) / n, median, per_op[0], per_op[-1])


def is_keccak(function: str) -> bool:
    return any(w in function.lower() for w in KECCAK_WORDS)


def keccak_share(cell: Cell) -> tuple[float, list[str]] | None:
    """(percent of the profiled window's cycles in Keccak functions, the functions counted); None
    where the cell has no profile (run without `--profile`, or not on the simulator)."""
    prof = cell.result.get("profile") if cell.ok and cell.result is not None else None
    total = (prof or {}).get("cycles") or 0
    if not prof or not total:
        return None
    hits = [r for r in prof.get("rows", []) if is_keccak(str(r.get("function", "")))]
    return 100.0 * sum(r["cycles"] for r in hits) / total, [r["function"] for r in hits]


def scheme(op: str, level: object) -> str:
    """pqm4's scheme name: ml-kem-768, ml-dsa-65."""
    return f"{op.rsplit('-', 1)[0]}-{level}"


# pqm4's implementations by class: PQClean's portable C, and pqm4's own Armv7E-M assembly
PORTABLE_C, ARMV7EM_ASM = "portable C", "Armv7E-M assembly"
IMPLEMENTATION_CLASS = {"clean": PORTABLE_C, "m4f": ARMV7EM_ASM, "m4fstack": ARMV7EM_ASM, "m4fspeed": ARMV7EM_ASM}


def implementation_of(cell: Cell) -> tuple[str, str | None]:
    """(class, the pqm4 implementation it is, where the cell names one) of a cell: result["implementation"]
    when it is one of pqm4's names; else an engine whose name says m4f is Armv7E-M assembly, and any other
    engine portable C (cryptobench's engines build ML-KEM / ML-DSA from C sources: PQClean's clean)."""
    named = str(cell.result.get("implementation") or "") if cell.result is not None else ""
    if named in IMPLEMENTATION_CLASS:
        return IMPLEMENTATION_CLASS[named], named
    return (ARMV7EM_ASM if "m4f" in cell.engine.lower() else PORTABLE_C), None


def same_implementation(cell: Cell, implementation: str) -> bool:
    """Whether a published row of pqm4's `implementation` compares with the cell: the same class, and
    the same implementation where the cell names one."""
    cls, exact = implementation_of(cell)
    return IMPLEMENTATION_CLASS.get(implementation) == cls and exact in (None, implementation)


def histogram(values: list[float], bins: int = 10) -> list[tuple[float, float, int]]:
    """(low, high, count) of `bins` equal-width bins from min to max (the last bin closed)."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi == lo:
        return [(lo, hi, len(values))]
    w = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / w), bins - 1)] += 1
    return [(lo + i * w, lo + (i + 1) * w, n) for i, n in enumerate(counts)]


def per_op_cycles(cell: Cell) -> list[float]:
    """The cell's cycles per operation, each timed repetition (sorted); [] where none were counted."""
    if cycle_distribution(cell) is None:
        return []
    div = 2.0 if OPS[cell.op].halve else 1.0
    return sorted(c / k / div for k, _, c in cell.samples if k)
