"""WFI, WFE, SEV and YIELD on either executor, for the one machine (machine.py): what the core
does at a sleep hint.

* WFI (ARMv7-M ARM B1.5.19, "Wait For Interrupt"): the core sleeps until an interrupt it has
  enabled becomes pending; the wake-up happens even with PRIMASK set (the interrupt is then taken
  once unmasked). With no interrupt coming the core would sleep for ever: the run stops, in one line.
* WFE (B1.5.18, "Wait For Event"): a set event register is cleared and execution goes on;
  otherwise the core sleeps until a WFE wake-up event: an interrupt that would preempt (here:
  PRIMASK clear, in thread mode: the model has one priority and no nesting) or SEV. With neither
  coming, the run stops in one line. SCR.SEVONPEND (a pending interrupt as an event) is not
  modelled.
* SEV sets the event register; an exception return sets it too (B1.5.18: "set by ... the
  execution of an exception return"). The native executor keeps it (CBCPU_EVENT) and consumes
  it at a WFE itself; on Unicorn, UnicornExecutor keeps it, set at the SEV sites codescan.py finds
  and at the runs' exception returns.
* YIELD is a NOP on a core without multithreading.

Unicorn halts after WFI (QEMU's EXCP_HLT) and raises UC_ERR_INSN_INVALID after WFE and YIELD
(QEMU's EXCP_YIELD, which Unicorn does not serve): UnicornExecutor turns those into what the
native executor does (a stop after WFI and after a WFE without an event; YIELD goes on)."""
from __future__ import annotations

# (the T1 halfword, the T2 second halfword after 0xF3AF) of each hint
HINTS = {"yield": (0xBF10, 0x8001), "wfe": (0xBF20, 0x8002), "wfi": (0xBF30, 0x8003), "sev": (0xBF40, 0x8004)}
T2_FIRST = 0xF3AF
SOURCE = {"wfi": "ARMv7-M ARM B1.5.19", "wfe": "ARMv7-M ARM B1.5.18"}


def hint_before(read, pc: int) -> tuple[str, int] | None:
    """(the hint "wfi", "wfe", "yield" or "sev", its address) for the one that ends right before
    `pc`, or None; read(addr, n) gives the code's bytes (and raises where there are none)."""
    try:
        short = int.from_bytes(read(pc - 2, 2), "little")
    except Exception:
        return None
    for name, (t1, t2) in HINTS.items():
        if short == t1:
            return name, pc - 2
    try:
        first = int.from_bytes(read(pc - 4, 2), "little")
    except Exception:
        return None
    for name, (t1, t2) in HINTS.items():
        if first == T2_FIRST and short == t2:
            return name, pc - 4
    return None


def wake_at(hint: str, now: int, coming: list, masked: bool) -> int | None:
    """The cycle a core that executed `hint` ("wfi" or "wfe") at `now` wakes at: the first of the
    interrupts `coming` (cycles, None for one that never comes); a WFE wakes only for one that
    would be taken (not `masked`: PRIMASK set or a handler running). None: it would sleep for ever."""
    if hint == "wfe" and masked:
        return None
    times = [t for t in coming if t is not None]
    return max(now, min(times)) if times else None


def never_wakes(hint: str, at: int, masked: bool) -> str:
    """The run's one-line problem for a sleep nothing ends (the hint at `at`)."""
    if hint == "wfe":
        why = "no event (SEV, exception return) and no interrupt that would be taken" + \
              (" (PRIMASK is set or a handler runs)" if masked else "") + " coming"
    else:
        why = "no enabled interrupt coming (no enabled peripheral line will rise, no SysTick interrupt)"
    return f"{hint.upper()} at pc=0x{at:08x} with {why}: the core would sleep for ever ({SOURCE[hint]})"
