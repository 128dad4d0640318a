"""A DMA-fed hardware accelerator (the Pisa Cortex-A53 paper, eq. 1):

    TH = Q / (L · Tclk + AL)

Q: the work one pass of the module handles (bits: 128 for an AES block, 512 for a SHA-256 block;
or 1 operation for an ECDSA signature), L: the module's latency in clock cycles, Tclk = 1 / f,
AL: the additional latency of moving the pass's data over the AXI4-DMA, in seconds:

    AL = in_bits / BW_MM2S + out_bits / BW_S2MM

(MM2S: memory to the peripheral, S2MM: the peripheral back to memory; the Pisa paper's §III: 9.6 and
3.6 Gbps at 300 MHz, giving its 48.89 ns for AES-ECB, 124.44 ns for SHA-256 (512 in, 256 out)
and 316.11 ns for ECDSA P-521 (256 in, 1042 out)).

Energy per bit with the module's dynamic power P: `E_total = P / TH` (the power held over the
whole pass, DMA included) and `E_core = P · L · Tclk / Q` (the power only while the module
computes): the Pisa paper's Table IV E column is E_core (AES: 18 mW · 14 · 3.33 ns / 128 b =
0.00656 mJ/Mb), and its Table V FoM = TH / E takes Table IV's TH (with AL) over that E.
"""
from __future__ import annotations

import math


def additional_latency(in_bits: float, out_bits: float, mm2s_bps: float, s2mm_bps: float) -> float:
    """AL (s): the pass's input over the MM2S bandwidth plus its output over the S2MM bandwidth."""
    if mm2s_bps <= 0 or s2mm_bps <= 0:
        raise ValueError("DMA bandwidths must be positive")
    return in_bits / mm2s_bps + out_bits / s2mm_bps


def throughput(q: float, latency_cycles: float, clock_hz: float, al_s: float = 0.0) -> float:
    """Eq. (1): TH = Q / (L / f + AL), in Q's unit per second."""
    if clock_hz <= 0:
        raise ValueError("clock must be positive")
    denom = latency_cycles / clock_hz + al_s
    if denom <= 0:
        raise ValueError("L · Tclk + AL must be positive")
    return q / denom


def solve_latency(q: float, th: float, clock_hz: float, al_s: float = 0.0) -> float:
    """Eq. (1) solved for L (cycles): L = (Q / TH - AL) · f."""
    if th <= 0:
        raise ValueError("throughput must be positive")
    return (q / th - al_s) * clock_hz


def accelerator_model(latency_cycles: float, clock_hz: float, q: float, in_bits: float, out_bits: float,
                      mm2s_bps: float, s2mm_bps: float, power_w: float | None = None,
                      per_op: bool = False, al_s: float | None = None) -> dict:
    """Throughput, AL (from the DMA, or `al_s` given), and (with a power) energy per bit (mJ/Mb) or per op (mJ/op) and FoM = TH / E
    (Mbps / (mJ/Mb), or (op/s) / (mJ/op)), the Pisa Cortex-A53 paper's units. `per_op`: Q counts one operation."""
    al = al_s if al_s is not None else additional_latency(in_bits, out_bits, mm2s_bps, s2mm_bps)
    work = 1.0 if per_op else q
    th = throughput(work, latency_cycles, clock_hz, al)          # bit/s or op/s
    th_core = throughput(work, latency_cycles, clock_hz, 0.0) if latency_cycles > 0 else math.inf
    scale = 1.0 if per_op else 1e-6                               # bit/s -> Mbps; op/s stays
    out = {"provenance": "modeled", "formula": "TH = Q / (L·Tclk + AL); AL = in/BW_MM2S + out/BW_S2MM",
           "source": "the Pisa Cortex-A53 paper, eq. 1", "q": work, "unit": "op" if per_op else "bit",
           "latency_cycles": latency_cycles, "clock_hz": clock_hz, "tclk_s": 1 / clock_hz, "al_s": al,
           "pass_time_s": latency_cycles / clock_hz + al, "throughput": th * scale,
           "throughput_unit": "op/s" if per_op else "Mbps", "throughput_core": th_core * scale}
    if power_w is not None:
        # J per bit -> mJ/Mb: x 1e3 x 1e6; J per op -> mJ/op: x 1e3
        k = 1e3 if per_op else 1e9
        e_total = power_w / th * k
        e_core = power_w * (latency_cycles / clock_hz) / work * k
        out.update({"power_w": power_w, "energy_unit": "mJ/op" if per_op else "mJ/Mb",
                    "energy_total": e_total, "energy_core": e_core,
                    "fom_total": out["throughput"] / e_total,
                    "fom_core": out["throughput"] / e_core if e_core > 0 else math.inf})
    return out


def fit_setup_per_block(points, block_bytes: int | None = 16) -> dict:
    """Least squares t = setup + per_block · blocks(bytes), blocks = ceil(bytes / block_bytes) (or
    the byte count itself when block_bytes is None or 0). `points`: (bytes, seconds). Returns the
    two coefficients, each point's residual, the RMS residual and R²."""
    pts = [(float(b), float(t)) for b, t in points]
    if len(pts) < 2:
        raise ValueError(f"a fit of setup + per-block cost needs at least 2 payload lengths, got {len(pts)}")
    xs = [math.ceil(b / block_bytes) if block_bytes else b for b, _ in pts]
    if len(set(xs)) < 2:
        raise ValueError("a fit of setup + per-block cost needs at least 2 different block counts")
    n = len(pts)
    mx = sum(xs) / n
    my = sum(t for _, t in pts) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (t - my) for x, (_, t) in zip(xs, pts))
    slope = sxy / sxx
    setup = my - slope * mx
    rows, ss_res = [], 0.0
    for x, (b, t) in zip(xs, pts):
        pred = setup + slope * x
        ss_res += (t - pred) ** 2
        rows.append({"bytes": b, "blocks": x, "time_s": t, "fit_s": pred, "residual_s": t - pred,
                     "residual_pct": (t - pred) / t * 100 if t else None})
    ss_tot = sum((t - my) ** 2 for _, t in pts)
    return {"provenance": "modeled", "setup_s": setup, "per_block_s": slope, "block_bytes": block_bytes or 1,
            "points": rows, "rms_residual_s": math.sqrt(ss_res / n),
            "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}
