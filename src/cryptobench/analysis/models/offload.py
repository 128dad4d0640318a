"""Energy of an offloaded operation with polling vs blocking/callback return behaviour (the TI
CC13x2/CC26x2 report, TI SWRA667 §4.2–4.3, Table 3).

An accelerator needs `setup` (CPU active, configuring it) and then `per_block` per input block.
With W = blocks(n) · per_block the peripheral's working time for an n-byte payload:

* polling: the CPU stays active, polling a flag, for the whole operation
      t_poll = setup + W
      E_poll = V · [I_active · (setup + W) + I_peripheral · W]
* blocking / callback: the CPU idles while the peripheral works, at the price of `overhead`
  (context switch, semaphore, going into and out of idle) spent active
      t_block = setup + overhead + W
      E_block = V · [I_active · (setup + overhead) + (I_idle + I_peripheral) · W]

E_poll − E_block = V · [(I_active − I_idle) · W − I_active · overhead], so blocking uses less
energy once W ≥ W* = I_active · overhead / (I_active − I_idle), i.e. from
n* = W* / per_block · block_bytes (rounded up to a whole block: the first payload length where
blocking is the cheaper): the peripheral's own current cancels out. Blocking is always slower.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class OffloadModel:
    setup_s: float
    per_block_s: float
    block_bytes: int
    overhead_s: float
    active_a: float
    idle_a: float
    peripheral_a: float = 0.0
    voltage: float = 3.3

    def __post_init__(self):
        for name in ("setup_s", "per_block_s", "overhead_s", "active_a", "idle_a", "peripheral_a"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must not be negative")
        if self.block_bytes <= 0 or self.voltage <= 0:
            raise ValueError("block bytes and voltage must be positive")

    def blocks(self, nbytes: float) -> int:
        return math.ceil(nbytes / self.block_bytes)

    def work_s(self, nbytes: float) -> float:
        return self.blocks(nbytes) * self.per_block_s

    def polling(self, nbytes: float) -> dict:
        w = self.work_s(nbytes)
        t = self.setup_s + w
        e = self.voltage * (self.active_a * t + self.peripheral_a * w)
        return {"time_s": t, "energy_j": e}

    def blocking(self, nbytes: float) -> dict:
        w = self.work_s(nbytes)
        t = self.setup_s + self.overhead_s + w
        e = self.voltage * (self.active_a * (self.setup_s + self.overhead_s) + (self.idle_a + self.peripheral_a) * w)
        return {"time_s": t, "energy_j": e}

    def crossover(self) -> dict:
        """The payload length from which blocking uses less (or equal) energy than polling."""
        gain = self.active_a - self.idle_a
        if gain <= 0:
            return {"work_s": None, "bytes_exact": None, "bytes": None,
                    "why": "idle current is not below the active current: blocking never saves energy"}
        w_star = self.active_a * self.overhead_s / gain
        if self.per_block_s == 0:
            return {"work_s": w_star, "bytes_exact": None, "bytes": None if w_star > 0 else 0,
                    "why": "per-block time is 0: the peripheral's work never grows with the payload"}
        blocks_exact = w_star / self.per_block_s
        return {"work_s": w_star, "blocks_exact": blocks_exact, "bytes_exact": blocks_exact * self.block_bytes,
                "bytes": math.ceil(blocks_exact - 1e-12) * self.block_bytes}

    def table(self, lengths) -> list[dict]:
        rows = []
        for n in lengths:
            p, b = self.polling(n), self.blocking(n)
            rows.append({"bytes": n, "poll_time_s": p["time_s"], "poll_energy_j": p["energy_j"],
                         "block_time_s": b["time_s"], "block_energy_j": b["energy_j"],
                         "cheaper": "blocking" if b["energy_j"] <= p["energy_j"] else "polling"})
        return rows

    def describe(self) -> dict:
        return {"provenance": "modeled", "source": "the TI CC13x2/CC26x2 report (TI SWRA667) §4.2-4.3, Table 3",
                **asdict(self)}
