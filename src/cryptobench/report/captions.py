"""Plain-text captions for the report's figures: a run's conditions in one sentence (what
tables.conditions_lines shows, compacted), and the pieces every figure caption shares."""
from __future__ import annotations

from ..core.records import Conditions, Run, place_of
from ..targets.mcu import sim as sim_face


def _join(items) -> str:
    return ", ".join(i for i in items if i)


def _engine_bits(name: str, info: dict) -> str:
    version = str(info.get("version") or info.get("library") or info.get("description") or "").strip()
    extra = []
    if info.get("extensions_enabled"):
        extra.append("extensions on: " + ", ".join(info["extensions_enabled"]))
    elif info.get("extensions_masked"):
        extra.append("extensions masked" + (" (verified)" if info.get("mask_verified") else ""))
    elif info.get("extensions_enabled") == [] and info.get("mask"):
        extra.append("extensions masked")
    for fact in ("pkcs11_provision", "tpm"):
        if isinstance(info.get(fact), str):
            extra.append(info[fact])
    if info.get("round_trip_ns"):
        extra.append(f"round trip {float(info['round_trip_ns']) / 1e3:.3g} µs")
    if info.get("unusable"):
        extra.append("UNUSABLE: " + str(info["unusable"]))
    return f"{name} {version}".strip() + (f" ({'; '.join(extra)})" if extra else "")


def _host_parts(run: Run) -> list[str]:
    cond = run.conditions
    host, harness = cond.host, cond.harness
    cpu = host.get("cpu") or {}
    parts = []
    if cpu or host.get("os"):
        flags = " ".join(cpu.get("crypto_flags") or []) or "none"
        parts.append(f"measured on {cpu.get('model', '?')} ({cpu.get('arch', '?')}, {cpu.get('logical_cpus', '?')} "
                     f"logical CPUs, crypto flags: {flags})" + (f" under {host['os']}" if host.get("os") else ""))
    if harness:
        parts.append(f"harness {harness.get('harness', '?')} {harness.get('version', '')}".rstrip()
                     + f" built with {harness.get('compiler', '?')} {harness.get('cflags', '')}".rstrip()
                     + f", clock {harness.get('clock', '?')}")
    engines = cond.engines
    used = {c.engine for c in run.cells}
    shown = [n for n in engines if not used or n in used]
    if shown:
        parts.append("engines: " + "; ".join(_engine_bits(n, engines[n]) for n in shown))
    noise = cond.noise_floor
    if noise.get("rsd_pct") is not None:
        parts.append(f"machine noise floor RSD {noise['rsd_pct']:.1f} %")
    meter = cond.get("energy_meter")
    if meter:
        parts.append(f"energy: {meter.get('meter', '?')} meter, domain {meter.get('main_domain', '?')}, "
                     "per operation over the idle baseline (measured)")
    opts = run.plan.options
    if opts.parallel:
        cpus = opts.parallel_cpus or []
        parts.append(f"scaling over N = {', '.join(map(str, opts.parallel))} pinned processes on "
                     f"{len(cpus)} available CPU(s) ({','.join(map(str, cpus))})")
    return parts


def _builds_parts(cond: Conditions) -> list[str]:
    builds = cond.get("builds") or {}
    if not builds:
        return []
    flags = {(b.get("compiler", "?"), b.get("cflags", ""), b.get("ldflags", "")) for b in builds.values()}
    libs = "libraries: " + ", ".join(f"{n} {b.get('library_version', '')}".strip() for n, b in builds.items())
    if len(flags) == 1:
        compiler, cflags, ldflags = next(iter(flags))
        return [f"built with {compiler} {cflags} {ldflags}".rstrip(), libs]
    return [libs] + [f"{n} built with {b.get('compiler', '?')} {b.get('cflags', '')} {b.get('ldflags', '')}".rstrip()
                     for n, b in builds.items()]


def _target_parts(run: Run) -> list[str]:
    cond = run.conditions
    t = cond.target
    parts = []
    clock = t.get("clock_hz") or (t.get("simulator") or {}).get("clock_hz")
    mhz = f"{clock / 1e6:g} MHz" if clock else "clock unknown"
    if t.simulated:
        sim = t.get("simulator") or {}
        parts.append(f"simulated {t.get('core', t.get('cpu', '?'))} on device profile {t.get('device', '?')} at {mhz} "
                     f"({sim.get('model', 'simulator')} v{sim.get('model_version', '?')}, "
                     f"{sim.get('flash_ws', '?')} flash wait state(s); {sim.get('source', '')})".replace("; )", ")"))
        if sim.get("condition"):
            parts.append("condition: " + sim_face.describe_condition(sim["condition"]))
        if t.get("error_band"):
            parts.append("error band: " + sim_face.band_text(t["error_band"]))
        parts.append(f"image for {t.get('board', '?')}, cpu {t.get('cpu', '?')}, -{t.get('opt', '?')}")
    else:
        what = f"{t.get('kind', '?')}:{t.get('board', '?')}" + (f" ({t['board_title']})" if t.get("board_title") else "")
        how = t.get("qemu") or ("QEMU machines, no timings" if t.get("emulated") else mhz)
        parts.append(f"target {what}, cpu {t.get('cpu', '?')}, {how}, -{t.get('opt', '?')}")
        if t.on_places:
            parts.append(_places_part(run))
    parts += _builds_parts(cond)
    if cond.get("energy_trace"):
        et = cond["energy_trace"]
        parts.append(f"energy from a {et.get('format', '?')} trace ({et.get('path', '?')}, measured)")
    cpu = (cond.host.get("cpu") or {}).get("model")
    if cpu:
        parts.append(f"built on {cpu}")
    return parts


def _places_part(run: Run) -> str:
    """Which labgrid places measured the run's cells, and how many each (cells say it one by one)."""
    t = run.conditions.target
    counts: dict[str, int] = {}
    for c in run.cells:
        place = place_of(c.target)[1]
        counts[place] = counts.get(place, 0) + 1
    shown = ", ".join(f"{p} ({counts.get(p, 0)} cells)" for p in t.get("places") or sorted(counts))
    return f"labgrid places {shown} via coordinator {t.get('coordinator', '?')}"


def _trace_parts(run: Run) -> list[str]:
    t = run.conditions["trace"]
    parts = [f"energy from a {t.get('format', '?')} trace ({t.get('path', '?')}), sample period "
             f"{t.get('sample_period_s', '?')} s, channels {', '.join(t.get('channels', [])) or '?'}, windows cut at "
             "the marker's edges (measured)"]
    cap = t.get("capture") or {}
    if cap:
        inst = cap.get("instrument") or {}
        parts.append(f"captured live from {inst.get('idn') or inst.get('kind', 'an instrument')}")
    return parts


def conditions_caption(run: Run) -> str:
    """One compact sentence of a run's conditions: run id, suite and label; the host (CPU, crypto flags,
    OS, harness compiler and flags, clock source, engine versions) or the MCU target (core, device
    profile, clock, compiler and flags, library versions, simulated or measured)."""
    label = run.plan.label
    bits = [f"suite {run.suite}" if run.suite else "ad hoc", f"label: {label}" if label else ""]
    head = f"Run {run.id} ({_join(bits)})"
    cond = run.conditions
    if "trace" in cond:
        parts = _trace_parts(run)
    elif "target" in cond:
        parts = _target_parts(run)
    else:
        parts = _host_parts(run)
    return head + (": " + "; ".join(parts) if parts else "") + "."


def runs_caption(runs: list[Run], ids) -> str:
    """The conditions of the runs a figure draws on, one sentence each."""
    ids = list(ids)
    return " ".join(conditions_caption(r) for r in runs if r.id in ids)


def n_text(ns: list, ks: list | None = None, what: str = "samples") -> str:
    """'n = 10 samples per point' or 'n = 3–15 samples per point' (+ what a sample is)."""
    ns = sorted({int(n) for n in ns if n is not None})
    if not ns:
        return ""
    text = f"n = {ns[0]} {what} per point" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]} {what} per point"
    ks = sorted({int(k) for k in (ks or []) if k is not None})
    if ks == [1]:
        text += " (each one operation)"
    elif ks:
        text += " (each the mean of a batch of " + (f"{ks[0]}" if len(ks) == 1 else f"{ks[0]}–{ks[-1]}") + " operations)"
    return text


def provenance_text(provs) -> str:
    provs = sorted(set(provs))
    return "provenance: " + (", ".join(provs) if provs else "measured")


ESTIMATOR_WORDS = {"p1": "1st percentile (p1)", "median": "median"}


def estimator_words(run: Run) -> str:
    """The estimator(s) the run's printed times are (Result.reported_time), in words: a caption
    names the number it shows, never "median" over p1 values."""
    names = sorted({t[2] for t in (c.reported_time() for c in run.cells if c.ok and c.result) if t})
    return " / ".join(ESTIMATOR_WORDS.get(n, n) for n in names) or "median"
