"""What the post-quantum migration costs: each party's work in a key exchange and a signature with
ML-KEM / ML-DSA (FIPS 203 / 204) against the same party's work with ECDH and ECDSA, from one run's
cells, as ratios of time, stack, code size, energy and the bytes the party sends.

A *role* is what one side of a protocol computes (the sums below); a *cost* is that role's total for
one scheme on one engine (library); a *pair* is a post-quantum cost beside a classical one for the
same role, on the same run's target, so both were timed under the same conditions:

    key exchange, initiator   ML-KEM keygen + decaps         ECDH keygen + shared secret
    key exchange, responder   ML-KEM encaps                  ECDH keygen + shared secret
    signature, key pair       ML-DSA keygen                  EC key-pair generation (P-256; ECDH keygen
                                                             stands in where an engine lacks it)
    signature, sign           ML-DSA sign                    ECDSA sign (of a SHA-256 digest)
    signature, verify         ML-DSA verify                  ECDSA verify

Time adds up over a role's operations, as energy does; stack is the largest of them (they run one
after the other); code size is the largest op image's (a lower bound for an image holding all of a
role's operations: the images are measured one operation each). The bytes on the wire are the
standards' sizes, not measurements: FIPS 203 Table 3 (ek, c), FIPS 204 Table 2 (pk, signature),
SEC 1 2.3.3 (an uncompressed P-256 point, 65 B), RFC 7748 (an X25519 public value, 32 B) and a raw
r || s ECDSA P-256 signature (64 B; DER adds up to 8)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.records import Cell, Run

# FIPS 203 Table 3: (ek, c) bytes; FIPS 204 Table 2: (pk, signature) bytes
MLKEM_WIRE = {512: (800, 768), 768: (1184, 1088), 1024: (1568, 1568)}
MLDSA_WIRE = {44: (1312, 2420), 65: (1952, 3309), 87: (2592, 4627)}
# SEC 1 2.3.3 uncompressed point; RFC 7748 section 5 (u-coordinate); raw r || s
ECDH_WIRE = {"p256": 65, "x25519": 32, "p521": 133}
ECDSA_SIG = {"p256": 64, "p521": 132}
ECDSA_PK = {"p256": 65, "p521": 133}

WIRE_SOURCES = ("bytes on the wire are the standards' sizes (FIPS 203 Table 3, FIPS 204 Table 2, SEC 1 "
                "2.3.3 uncompressed points, RFC 7748 X25519 values, raw r || s ECDSA signatures), not measured")


@dataclass(frozen=True)
class Role:
    name: str                                   # "key exchange, initiator"
    kind: str                                   # "kem" or "signature": which classical scheme pairs with it
    pq_ops: tuple[str, ...]                     # the post-quantum operations one party runs
    classical_ops: tuple[str, ...]              # the classical ones
    pq_sends: str                               # what the party sends (wire-size key)
    classical_sends: str
    # where an engine lacks the classical ops, these stand in for them (the same computation)
    classical_stand_in: tuple[str, ...] = ()


ROLES = (
    Role("key exchange, initiator", "kem", ("ml-kem-keygen", "ml-kem-decaps"),
         ("ecdh-keygen", "ecdh-shared-secret"), "ek", "point"),
    Role("key exchange, responder", "kem", ("ml-kem-encaps",), ("ecdh-keygen", "ecdh-shared-secret"), "c", "point"),
    # an ECDSA key pair is a random scalar d and its point [d]G: ECDH key generation on the same curve
    # computes exactly that, so it stands in on engines without ecc-keygen (the MCU recipes)
    Role("signature, key pair", "signature", ("ml-dsa-keygen",), ("ecc-keygen",), "pk", "pk", ("ecdh-keygen",)),
    Role("signature, sign", "signature", ("ml-dsa-sign",), ("ecdsa-sign",), "sig", "sig"),
    Role("signature, verify", "signature", ("ml-dsa-verify",), ("ecdsa-verify",), "", ""),
)
PQ_OPS = {op for r in ROLES for op in r.pq_ops}
CLASSICAL_OPS = {op for r in ROLES for op in r.classical_ops + r.classical_stand_in}


@dataclass
class Cost:
    """One role's total for one scheme on one engine."""
    role: str
    scheme: str                     # "ML-KEM-768", "ECDH P-256", "ECDSA P-256"
    engine: str
    post_quantum: bool
    seconds: float | None = None    # the reported time per operation, summed over the role's ops
    cycles: float | None = None     # core cycles (MCU targets with a clock), summed
    stack_bytes: int | None = None  # the largest of the role's ops' painted stacks
    code_bytes: int | None = None   # the largest of the role's ops' images
    energy_j: float | None = None   # summed where every op has a usable figure
    wire_bytes: int | None = None   # what the party sends (the standards' sizes)
    cells: list[Cell] = field(default_factory=list)
    stand_in: tuple[str, ...] = ()  # the ops that stood in for the role's own (ROLES' classical_stand_in)


@dataclass
class Pair:
    role: str
    pq: Cost
    classical: Cost

    def ratio(self, what: str) -> float | None:
        """post-quantum / classical for `what` (a Cost field), None where either is missing."""
        a, b = getattr(self.pq, what), getattr(self.classical, what)
        return a / b if a is not None and b else None


def _cycles(cell: Cell) -> float | None:
    r = cell.result
    return (r.cycles.get("per_op_estimate") or r.cycles.get("per_op_median")) if r is not None else None


def _sum(values: list) -> float | None:
    return sum(values) if values and all(v is not None for v in values) else None


def _max(values: list) -> int | None:
    return max(values) if values and all(v is not None for v in values) else None


def _scheme(op: str, params: dict) -> tuple[str, object]:
    """(the scheme's name, the parameter that tells its size) of a role's cell."""
    if op.startswith("ml-kem-"):
        return f"ML-KEM-{params.get('level')}", int(params.get("level") or 0)
    if op.startswith("ml-dsa-"):
        return f"ML-DSA-{params.get('level')}", int(params.get("level") or 0)
    curve = str(params.get("curve") or "p256")
    name = {"p256": "P-256", "p521": "P-521", "x25519": "X25519"}.get(curve, curve)
    return (f"ECDSA {name}" if op in ("ecdsa-sign", "ecdsa-verify", "ecc-keygen") else f"ECDH {name}"), curve


def _wire(role: Role, pq: bool, size) -> int | None:
    sends = role.pq_sends if pq else role.classical_sends
    if not sends:
        return 0
    if pq:
        table = MLKEM_WIRE if role.kind == "kem" else MLDSA_WIRE
        pair = table.get(size)
        return None if pair is None else pair[0 if sends in ("ek", "pk") else 1]
    if role.kind == "kem":
        return ECDH_WIRE.get(size)
    return (ECDSA_PK if sends == "pk" else ECDSA_SIG).get(size)


def _role_cells(ok: list[Cell], role: Role, pq: bool, ops: tuple[str, ...]) -> dict:
    """(scheme, engine) -> ({op: its first ok cell}, the scheme's size) for the cells of `ops`."""
    found: dict[tuple[str, str], dict[str, Cell]] = {}
    sizes: dict[tuple[str, str], object] = {}
    for c in ok:
        if c.op not in ops:
            continue
        scheme, size = _scheme(c.op, c.params)
        if role.kind == "signature" and not pq:
            if size not in ECDSA_SIG:
                continue            # EC key pairs on curves with no ECDSA here
            scheme = f"ECDSA {scheme.split(' ', 1)[1]}"
        found.setdefault((scheme, c.engine), {}).setdefault(c.op, c)
        sizes[(scheme, c.engine)] = size
    return {k: (v, sizes[k]) for k, v in found.items() if set(v) == set(ops)}


def costs(run: Run) -> list[Cost]:
    """Every complete role cost of the run: each (scheme, engine) with an ok cell for every one of
    the role's operations (the first such cell each, in plan order); a classical stand-in only for
    an engine that lacks the role's own operations."""
    ok = [c for c in sorted(run.cells, key=lambda c: c.seq) if c.ok and c.result is not None]
    out = []
    for role in ROLES:
        sides = [(True, role.pq_ops, role.pq_ops), (False, role.classical_ops, role.classical_ops)]
        if role.classical_stand_in:
            sides.append((False, role.classical_stand_in, role.classical_ops))
        have: set[tuple[str, str]] = set()
        for pq, ops, own in sides:
            for (scheme, engine), (by_op, size) in _role_cells(ok, role, pq, ops).items():
                if ops != own and (scheme, engine) in have:
                    continue
                have.add((scheme, engine))
                cells = [by_op[o] for o in ops]
                times = [c.reported_time()[0] if c.reported_time() else None for c in cells]
                energies = [c.energy.per_op_j if c.energy is not None and c.energy.usable else None for c in cells]
                out.append(Cost(role.name, scheme, engine, pq, seconds=_sum(times), cycles=_sum([_cycles(c) for c in cells]),
                                stack_bytes=_max([c.result.stack_bytes for c in cells]),
                                code_bytes=_max([c.result.code_size.get("flash_bytes") for c in cells]),
                                energy_j=_sum(energies), wire_bytes=_wire(role, pq, size), cells=cells,
                                stand_in=ops if ops != own else ()))
    return out


def pairs(all_costs: list[Cost]) -> list[Pair]:
    """Each post-quantum cost beside each classical cost of the same role, in role order."""
    out = []
    for role in ROLES:
        mine = [c for c in all_costs if c.role == role.name]
        for pq in (c for c in mine if c.post_quantum):
            for cl in (c for c in mine if not c.post_quantum):
                out.append(Pair(role.name, pq, cl))
    return out
