"""Exception entry and return on an M-profile core (ARMv7-M ARM B1.5.6 and B1.5.8; ARMv6-M ARM
B1.5.6 and B1.5.8), on any executor: `cpu` reads and writes registers by name ("r0", "xpsr",
"control", "msp", "psp", "pc", "primask") and 32-bit words of memory.

Entry pushes the basic 8-word frame (r0-r3, r12, lr, return address, xPSR) on the stack in use,
aligned to 8 bytes (xPSR bit 9 says so), puts EXC_RETURN in LR and enters handler mode at the
vector VTOR + 4 * number. Return, on a branch to an EXC_RETURN value, pops it again. The
extended (floating-point) frame is not modelled: with CONTROL.FPCA set, entry is refused."""
from __future__ import annotations

FRAME = ("r0", "r1", "r2", "r3", "r12", "lr", "pc", "xpsr")
EXC_RETURN_HANDLER, EXC_RETURN_MSP, EXC_RETURN_PSP = 0xFFFFFFF1, 0xFFFFFFF9, 0xFFFFFFFD
CONTROL_SPSEL, CONTROL_FPCA = 1 << 1, 1 << 2
XPSR_ALIGN = 1 << 9

# cycles from the exception's arrival to the handler's first instruction, zero wait states
ENTRY_CYCLES = {"cortex-m0": 16,       # ARM DDI 0432C 5.1 (Cortex-M0 TRM): 16 cycles interrupt latency
                "cortex-m0plus": 15,   # ARM DDI 0484C 5.1 (Cortex-M0+ TRM): 15 cycles
                "cortex-m3": 12,       # ARM DDI 0337I 5.5.1 (Cortex-M3 TRM): 12 cycles
                "cortex-m4": 12,       # ARM DDI 0439B 5.5.1 (Cortex-M4 TRM): 12 cycles
                "cortex-m7": 12,       # rough: the M4's figure
                "cortex-m33": 12}      # rough: the M4's figure


class ExceptionError(Exception):
    """An exception the model cannot take or return from (said in one line)."""


def handler_mode(cpu) -> bool:
    return bool(cpu.reg("xpsr") & 0x1FF)


def refuse_fp_context(cpu) -> None:
    """ExceptionError when an entry now would need the extended (floating-point) frame."""
    if cpu.reg("control") & CONTROL_FPCA:
        raise ExceptionError("exception entry with an active floating-point context (CONTROL.FPCA): the extended "
                             "frame is not modelled")


def enter(cpu, number: int, vtor: int) -> int:
    """Take exception `number` at the current PC (the next instruction to run); returns the handler's address."""
    refuse_fp_context(cpu)
    control = cpu.reg("control")
    handler = handler_mode(cpu)
    use_psp = not handler and bool(control & CONTROL_SPSEL)
    sp_name = "psp" if use_psp else "msp"
    values = {name: cpu.reg(name) for name in FRAME}
    sp = cpu.reg(sp_name) - 32
    xpsr = values["xpsr"] & ~XPSR_ALIGN
    if sp & 4:
        sp -= 4
        xpsr |= XPSR_ALIGN
    values["xpsr"] = xpsr
    values["pc"] &= ~1
    for i, name in enumerate(FRAME):
        cpu.write32(sp + 4 * i, values[name])
    cpu.set_reg(sp_name, sp)
    target = cpu.read32(vtor + 4 * number)
    cpu.set_reg("lr", EXC_RETURN_HANDLER if handler else EXC_RETURN_PSP if use_psp else EXC_RETURN_MSP)
    cpu.set_reg("control", control & ~CONTROL_SPSEL if not handler else control)
    cpu.set_reg("xpsr", (xpsr & ~0x1FF & ~(1 << 24)) | (1 << 24) | number)
    cpu.set_reg("pc", target | 1)
    return target & ~1


def leave(cpu, exc_return: int) -> int:
    """Return from an exception on a branch to `exc_return`; returns the address execution resumes at."""
    kind = exc_return & 0xF
    if exc_return & 0x10 == 0 or kind not in (0x1, 0x9, 0xD):
        raise ExceptionError(f"exception return to 0x{exc_return:08x}: not a basic-frame EXC_RETURN value "
                             "(0xfffffff1, 0xfffffff9, 0xfffffffd)")
    sp_name = "psp" if kind == 0xD else "msp"
    sp = cpu.reg(sp_name)
    values = {name: cpu.read32(sp + 4 * i) for i, name in enumerate(FRAME)}
    sp += 32 + (4 if values["xpsr"] & XPSR_ALIGN else 0)
    control = cpu.reg("control")
    cpu.set_reg(sp_name, sp)
    for name in ("r0", "r1", "r2", "r3", "r12", "lr"):
        cpu.set_reg(name, values[name])
    cpu.set_reg("xpsr", values["xpsr"] & ~XPSR_ALIGN)
    if kind == 0xD:                  # back in thread mode first: SPSEL is written there
        cpu.set_reg("control", control | CONTROL_SPSEL)
    cpu.set_reg("pc", values["pc"] | 1)
    return values["pc"] & ~1
