"""The plan one firmware image runs, written as C (plan.c): its known-answer tests and its cells.

Input and output names follow the host protocol's `compute` table (docs/protocol.md); the firmware
has six input slots, filled from those names by IN_SLOTS."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ....catalog.ops import OPS, harness_default

# fw_inputs slot <- the compute input names that go there
# (ML-KEM / ML-DSA: docs/pqc.md, "Firmware (MCU targets)"; an op never has two names of one slot)
IN_SLOTS = {"key": ("key", "d", "dk", "sk", "seed"), "iv": ("iv", "nonce", "z", "rnd"), "aad": ("aad",),
            "msg": ("msg", "hash", "m"), "peer": ("peer", "q", "ek", "pk"), "sig": ("sig", "c")}
# the compute output a firmware op returns in `out`, per op
OUT_NAME = {"sha1": "digest", "sha224": "digest", "sha256": "digest", "sha384": "digest", "sha512": "digest",
            "ecdh-keygen": "q", "ecdh-shared-secret": "z", "ecdsa-sign": "sig", "ecdsa-verify": "ok",
            "ctr-drbg-instantiate": "bits", "ctr-drbg-reseed": "bits", "ctr-drbg-generate": "bits",
            "ml-kem-decaps": "k", "ml-dsa-sign": "sig", "ml-dsa-verify": "ok"}
# ops with more than one output return them concatenated in `out`, in this order
OUT_NAMES = {"ml-kem-keygen": ("ek", "dk"), "ml-kem-encaps": ("c", "k"), "ml-dsa-keygen": ("pk", "sk")}
# CTR_DRBG's CAVP flow has seven inputs; the firmware's slots take them like this (docs/firmware.md)
DRBG_SLOTS = {"key": ("entropy", "nonce"), "iv": ("entropy_reseed",), "aad": ("add_reseed",), "msg": ("perso",),
              "peer": ("add1",), "sig": ("add2",)}
# ops whose output is not a function of the inputs (randomised): checked by the host instead
RANDOMISED = {"ecdsa-sign"}
MASK64 = (1 << 64) - 1


def out_name(op: str) -> str:
    return OUT_NAME.get(op, "ct")


def out_names(op: str) -> tuple[str, ...]:
    """The compute outputs a firmware op returns in `out`, concatenated in this order."""
    return OUT_NAMES.get(op, (out_name(op),))


def expected_out(op: str, outputs: Mapping) -> bytes | None:
    """The firmware's `out` for a vector's or the host's outputs (hex), or None when one is missing."""
    if not all(n in outputs for n in out_names(op)):
        return None
    return b"".join(bytes.fromhex(outputs[n]) for n in out_names(op))


def fill(length: int, seed: int) -> bytes:
    """The harnesses' deterministic filler: xorshift64*, the Python twin of cb_fill in
    harness/common/cb_fill.h (the host harness and the firmware both use that one)."""
    x = (seed ^ 0x9E3779B97F4A7C15) & MASK64 or 1
    out = bytearray()
    while len(out) < length:
        x ^= x >> 12
        x = (x ^ (x << 25)) & MASK64
        x ^= x >> 27
        out += ((x * 0x2545F4914F6CDD1D) & MASK64).to_bytes(8, "little")
    return bytes(out[:length])


@dataclass
class Inputs:
    op: str
    params: Mapping                      # a cell's parameters (records.Params) or a vector's
    values: dict[str, bytes] = field(default_factory=dict)   # compute input name -> bytes


@dataclass
class Kat:
    id: str
    inputs: Inputs
    expect: bytes


@dataclass
class Cell:
    inputs: Inputs
    repeat: int
    seed: int = 1          # the cell's seed (seeded.cell_seed): where its fw_random stream starts


class _Pool:
    """Byte strings as C arrays, each stored once; a string that is a prefix of another reuses it."""

    def __init__(self):
        self.arrays: list[bytes] = []

    def ref(self, data: bytes | None) -> str:
        if not data:
            return "{0, 0}"
        for i, arr in enumerate(self.arrays):
            if arr.startswith(data):
                return f"{{b{i}, {len(data)}}}"
        for i, arr in enumerate(self.arrays):
            if data.startswith(arr):
                self.arrays[i] = data
                return f"{{b{i}, {len(data)}}}"
        self.arrays.append(data)
        return f"{{b{len(self.arrays) - 1}, {len(data)}}}"

    def c(self) -> str:
        out = []
        for i, arr in enumerate(self.arrays):
            body = ",".join(str(b) for b in arr)
            out.append(f"static const uint8_t b{i}[{len(arr)}] = {{{body}}};")
        return "\n".join(out)


def c_string(text: str) -> str:
    """`text` as one C string literal, quotes included: the one way a string reaches generated C.
    Every byte of its UTF-8 that is not printable ASCII, and the characters C would read as
    something else (quote, backslash, '?' of a trigraph such as ??/), is a three-digit octal
    escape, so no text can end the literal, start a line of its own (#include, .incbin) or run on
    into the next character."""
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        ch = chr(byte)
        out.append(ch if 0x20 <= byte < 0x7f and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


PARAM_NAMES = {p.name for op in OPS.values() for p in op.params}
CURVES = {c for op in OPS.values() for p in op.params if p.name == "curve" for c in p.choices}


def _params_c(params: Mapping, op: str = "") -> str:
    """An fw_params initializer; a parameter not in `params` reads as a harness reads a left-out one,
    except rekey: 0 only where the op has that parameter and `params` asks 0 (a cell measuring a
    kept key schedule), else 1 (every firmware operation sets its key, as KATs and keyless ops do).
    Numbers are written as integers and the curve must be a catalog curve (the vectors and the
    plan were checked; this is the last guard before C)."""
    def num(key):
        v = params.get(key)
        if v is None and key not in PARAM_NAMES:      # a parameter the catalog has not got (yet): absent
            return "-1"
        return str(int(v)) if v is not None else str(harness_default(key))
    curve = params.get("curve", harness_default("curve"))
    rekey = 0 if op in OPS and OPS[op].param("rekey") is not None and str(params.get("rekey", 1)) == "0" else 1
    if curve not in CURVES and curve != harness_default("curve"):
        raise ValueError(f"curve {curve!r} is not a catalog curve ({', '.join(sorted(CURVES))})")
    return (f"{{{num('key_bits')}, {num('bytes')}, {num('aad_bytes')}, {num('tag_bytes')}, "
            f"{num('nonce_bytes')}, {num('level')}, {c_string(curve)}, {rekey}}}")


def _inputs_c(pool: _Pool, inp: Inputs) -> str:
    refs = []
    for slot, names in IN_SLOTS.items():
        data = next((inp.values[n] for n in names if n in inp.values), None)
        refs.append(pool.ref(data))
    return f"{{{c_string(inp.op)}, {_params_c(inp.params, inp.op)}, {', '.join(refs)}}}"


def plan_c(kats: list[Kat], cells: list[Cell], board: str, cpu: str, build: str) -> str:
    pool = _Pool()
    kat_lines = [f"    {{{c_string(k.id)}, {_inputs_c(pool, k.inputs)}, {pool.ref(k.expect)}}},"
                 for k in kats]
    cell_lines = [f"    {{{_inputs_c(pool, c.inputs)}, {c.repeat}, {int(c.seed) & 0xFFFFFFFF}u}},"
                  for c in cells]
    return "\n".join([
        "/* Generated by cryptobench (src/cryptobench/targets/mcu/firmware/plan.py): do not edit. */",
        '#include "plan.h"',
        "",
        pool.c(),
        "",
        f"const char fw_board[] = {c_string(board)};",
        f"const char fw_cpu[] = {c_string(cpu)};",
        f"const char fw_build[] = {c_string(build)};",
        "const fw_kat fw_kats[] = {",
        *kat_lines,
        "    {0},",
        "};",
        "const fw_cell fw_cells[] = {",
        *cell_lines,
        "    {{0}, 0, 0},",
        "};",
        "",
    ])


def kat_from_vector(v: dict, op: str | None = None) -> Kat | None:
    """A stored vector as an on-target KAT of `op` (default: the vector's own op), or None when
    its op's output is randomised."""
    op = op or v["op"]
    if op in RANDOMISED:
        return None
    values = {k: bytes.fromhex(h) for k, h in v["in"].items() if h}
    if op.startswith("ctr-drbg-"):
        values = {slot: b"".join(values.get(n, b"") for n in names) for slot, names in DRBG_SLOTS.items()}
        values = {k: b for k, b in values.items() if b}
        # the slot names are the firmware's own: map them back through IN_SLOTS' first names
        values = {IN_SLOTS[k][0]: b for k, b in values.items()}
    expect = expected_out(op, v["out"])
    if expect is None:                       # the vector checks another output than the firmware returns
        return None
    return Kat(v["id"], Inputs(op, dict(v.get("params", {})), values), expect)
