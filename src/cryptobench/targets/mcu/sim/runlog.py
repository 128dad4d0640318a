"""An opt-in log of every simulated run's outcome ($CRYPTOBENCH_SIM_RUN_LOG=FILE): one JSON line per
run, keyed by the digest of the bytes loaded, the device condition, the executor and the client,
with the cycles, instructions and a digest of every counter read. bench/sim_same_cycles compares
two such logs cell for cell (a restructuring must leave every run's cycles as they were)."""
from __future__ import annotations

import hashlib
import json
import os

ENV = "CRYPTOBENCH_SIM_RUN_LOG"


def digest_segments(segments) -> str:
    """(address, bytes) pairs, in order: what the run loaded."""
    h = hashlib.sha256()
    for addr, data in segments:
        h.update(addr.to_bytes(4, "little") + len(data).to_bytes(4, "little") + bytes(data))
    return h.hexdigest()[:16]


def digest(values) -> str:
    return hashlib.sha256(json.dumps(list(values)).encode()).hexdigest()[:16]


def wanted() -> bool:
    return bool(os.environ.get(ENV))


def record(entry: dict) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
