"""The accelerator's share of an operation, from stored cells: a hardware engine's and a software
engine's time over a payload sweep (simulated or measured cells), each fitted to
t = setup + per_block · blocks, the hardware's completion cost added (polling: nothing beyond the
cells; interrupt completion: the core's exception entry and return), and from which payload length
the engine wins (issue 34 item 5).

    blocks(n)   = n / block_bytes                              (the lines are continuous in n)
    t_sw(n)     = a_sw + b_sw · blocks(n)
    t_hw(n)     = a_hw + L + b_hw · blocks(n)                  L = 0 (polling) or the interrupt's latency
    n*          = (a_hw + L − a_sw) / (b_sw − b_hw) · block_bytes

The engine wins above n* when its per-block cost is the smaller (below n* when it is the larger).
Every fitted figure is provenance `modeled`; the cells keep their own (`simulated` on sim: targets).
"""
from __future__ import annotations

import math

from .accelerator import fit_setup_per_block
from ...targets.mcu import sim

# Exception return (unstacking the basic 8-word frame and refilling the pipeline). The Cortex-M TRMs
# give the entry latency (ENTRY_CYCLES, exceptions.py: M3/M4 12 cycles, ARM DDI 0337I / DDI 0439B
# 5.5.1) but no figure for the return; the simulator charges none (docs/sim-model.md). Estimated here
# from the same TRMs' instruction timing (ARM DDI 0439B 3.3.1, Table 3-1: a POP of N registers
# including the PC takes 1 + N + P cycles, P a pipeline refill of 1 to 3): the frame's 8 words and
# the return address's refill, 1 + 8 + 3 = 12 at the refill's upper end. Rough: said in the output.
RETURN_CYCLES = 12
RETURN_SOURCE = ("exception return estimated as the basic frame's POP by the TRM instruction timing "
                 "(1 + N + P, N = 8, P = 3; ARM DDI 0439B 3.3.1; rough: the TRMs give no return figure)")
ENTRY_SOURCES = {"cortex-m0": "ARM DDI 0432C 5.1", "cortex-m0plus": "ARM DDI 0484C 5.1",
                 "cortex-m3": "ARM DDI 0337I 5.5.1", "cortex-m4": "ARM DDI 0439B 5.5.1",
                 "cortex-m7": "the Cortex-M4's figure, rough", "cortex-m33": "the Cortex-M4's figure, rough"}
COMPLETIONS = ("polling", "interrupt")


def interrupt_latency(core: str, clock_hz: float) -> dict:
    """The cycles and seconds interrupt completion adds to a polled operation on `core` at `clock_hz`:
    the exception's entry (the TRM's interrupt latency, as the simulator charges it) and its return."""
    if core not in sim.ENTRY_CYCLES:
        raise ValueError(f"interrupt completion: no exception entry latency for core '{core}' (known: "
                         f"{', '.join(sorted(sim.ENTRY_CYCLES))}): the run is not on a simulated Cortex-M core")
    if not clock_hz or clock_hz <= 0:
        raise ValueError("interrupt completion: the run records no core clock to turn cycles into time")
    entry = sim.ENTRY_CYCLES[core]
    cycles = entry + RETURN_CYCLES
    return {"provenance": "modeled", "core": core, "clock_hz": clock_hz, "entry_cycles": entry,
            "return_cycles": RETURN_CYCLES, "cycles": cycles, "seconds": cycles / clock_hz,
            "source": f"entry {entry} cycles ({ENTRY_SOURCES.get(core, 'exceptions.py')}, as the simulator "
                      f"charges it); return {RETURN_CYCLES} cycles ({RETURN_SOURCE})"}


def crossing(sw: dict, hw: dict, extra_s: float, block_bytes: int) -> dict:
    """Where the fitted lines cross, in bytes: {status, bytes_exact, first_payload, text}. status:
    'always' (the engine wins at every payload length > 0), 'from' (above bytes_exact), 'below' (only
    below it), 'never'. first_payload: the first whole-block payload where the engine wins."""
    a_sw, b_sw = sw["setup_s"], sw["per_block_s"]
    a_hw, b_hw = hw["setup_s"] + extra_s, hw["per_block_s"]
    if math.isclose(b_sw, b_hw, rel_tol=1e-12, abs_tol=0.0):
        status = "always" if a_hw < a_sw else "never"
        return {"status": status, "bytes_exact": None, "first_payload": block_bytes if status == "always" else None,
                "text": "parallel lines: " + ("the engine wins at every length" if status == "always"
                                              else "the engine never wins")}
    x = (a_hw - a_sw) / (b_sw - b_hw) * block_bytes
    if b_hw < b_sw:
        first = max(block_bytes, (math.floor(x / block_bytes) + 1) * block_bytes)
        if x < 0:
            return {"status": "always", "bytes_exact": x, "first_payload": block_bytes,
                    "text": f"the engine wins at every length (the lines cross at {x:.5g} B, below any payload)"}
        return {"status": "from", "bytes_exact": x, "first_payload": first,
                "text": f"the engine wins from {x:.5g} B (first whole-block payload {first} B)"}
    if x <= 0:
        return {"status": "never", "bytes_exact": x, "first_payload": None,
                "text": "the engine never wins (slower per block, and no faster to set up)"}
    return {"status": "below", "bytes_exact": x, "first_payload": block_bytes if x > block_bytes else None,
            "text": f"the engine wins only below {x:.5g} B (slower per block)"}


def first_swept_win(rows: list[dict]) -> float | None:
    """The smallest swept length from which the engine wins at every longer swept length, or None."""
    first = None
    for r in reversed(rows):
        if not r["hw_wins"]:
            break
        first = r["bytes"]
    return first


def offload_view(sw_points: list[dict], hw_points: list[dict], block_bytes: int, latency: dict | None,
                 completion: str, sw_energy: list[dict] = (), hw_energy: list[dict] = ()) -> dict:
    """sw_points, hw_points: [{"x": bytes, "y": seconds}] (cells' medians). latency: interrupt_latency()
    or None when it cannot be known (then only polling). Energies: the same shape in joules, or empty.
    Returns the two fits, a row per shared length, the crossing of the chosen completion and the first
    swept length from which the engine wins."""
    if completion not in COMPLETIONS:
        raise ValueError(f"--completion: expected polling or interrupt, got '{completion}'")
    if completion == "interrupt" and latency is None:
        raise ValueError("--completion interrupt needs the run's core and clock (a simulated Cortex-M run)")
    fits = {name: fit_setup_per_block([(p["x"], p["y"]) for p in pts], block_bytes)
            for name, pts in (("sw", sw_points), ("hw", hw_points))}
    lat_s = latency["seconds"] if latency else None
    extra = lat_s if completion == "interrupt" else 0.0
    sw_t, hw_t = {p["x"]: p["y"] for p in sw_points}, {p["x"]: p["y"] for p in hw_points}
    sw_e, hw_e = {p["x"]: p["y"] for p in sw_energy}, {p["x"]: p["y"] for p in hw_energy}
    rows = []
    for n in sorted(set(sw_t) & set(hw_t)):
        poll = hw_t[n]
        intr = poll + lat_s if lat_s is not None else None
        hw = intr if completion == "interrupt" else poll
        row = {"bytes": n, "sw_s": sw_t[n], "hw_polling_s": poll, "hw_interrupt_s": intr, "hw_s": hw,
               "ratio": hw / sw_t[n], "hw_wins": hw < sw_t[n]}
        if n in sw_e and n in hw_e:
            # the latency's cycles are CPU-active: charged at the HW cell's own average power E / t
            e_hw = hw_e[n] + (extra * hw_e[n] / poll if poll > 0 else 0.0)
            row.update({"sw_j": sw_e[n], "hw_j": e_hw, "energy_ratio": e_hw / sw_e[n] if sw_e[n] else None})
        rows.append(row)
    if not rows:
        raise ValueError("the two sweeps share no payload length")
    return {"provenance": "modeled", "completion": completion, "block_bytes": block_bytes,
            "interrupt_latency": latency, "added_s": extra, "fits": fits,
            "crossover": crossing(fits["sw"], fits["hw"], extra, block_bytes),
            "first_swept_win_bytes": first_swept_win(rows), "rows": rows}
