"""`cryptobench sim run` on cryptobench's own executor (harness/sim/cbcpu.c) instead of Unicorn.

The run is imagerun.py's ImageRun on native.py's NativeExecutor (the counters,
semihosting, markers, SysTick, the run loop and the result are written once, against
executor.py's Executor); what differs is the executor under it:

* memory: the board's flash and RAM are the executor's flat arrays; every other address reaches
  the mmio callbacks here: the private peripheral bus (SysTick, DWT, VTOR), the peripheral region
  and a marker register's page (plainmemory.py's bounded plain memory, as on Unicorn), and
  anything else faults, as it does on Unicorn. An image that needs memory beyond the board's
  flash and RAM (a load or run address, or its initial stack, outside them) cannot run here: `fits` says
  why and `cryptobench sim run` takes Unicorn for it;
* flash data reads are charged by the executor as it makes them (no read hook: Unicorn's can
  leave the IT state set, scripts/unicorn_it_state_repro.py);
* the alarm (SysTick's next wrap) and the watched function are cbsim_enter's, called by the
  executor at each block; the executor stops before the block the alarm takes back, and, with
  cbcpu_set_wake, after an instruction that may unmask interrupts and after an exception return,
  where a pending SysTick is looked at again;
* exceptions are the executor's own: a SysTick is pended (cbcpu_pend) when it may be taken and
  the executor enters it before the next block; its return is the executor's too. SVC is taken
  through the vector table as on silicon (Unicorn's run stops at it)."""
from __future__ import annotations

from .image import Image
from .imagerun import ImageRun
from .native import executor_choice


def fits(image: Image, board) -> str | None:
    """None when the image runs within the board's flash and RAM (and the peripheral region),
    else what does not fit there."""
    inside = [(board.flash[0], board.flash[1]), (board.ram[0], board.ram[1])]

    def covered(lo: int, hi: int) -> bool:
        return any(base <= lo and hi <= base + size for base, size in inside)

    for seg in image.segments:
        for kind, at in (("load", seg.load), ("run", seg.run)):
            if seg.data and not covered(at, at + len(seg.data)):
                where = next((r.name for r in getattr(board, "regions", ())
                              if r.base <= at and at + len(seg.data) <= r.base + r.size), None)
                span = f"0x{at:08x}-0x{at + len(seg.data) - 1:08x}"
                if where:
                    return (f"its {kind} range {span} is in the part's {where}, which the native executor does not "
                            "map (it maps the board entry's flash and RAM)")
                return f"its {kind} range {span} is outside the board's flash and RAM"
    sp = image.read_word(image.vector_table)
    if not covered(sp - 4, sp):
        return f"its initial stack pointer 0x{sp:08x} is outside the board's RAM"
    return None


def image_run(image: Image, device, board, marker, executor: str | None = None, profile: bool = False) -> ImageRun:
    """The run of `image`: on the native executor unless `executor` (or $CRYPTOBENCH_SIM_EXECUTOR)
    says unicorn or the image needs memory beyond the board's flash and RAM (then on Unicorn, with
    a note that says why)."""
    choice = executor_choice(executor)
    if choice == "native":
        why = fits(image, board)
        if why is None:
            return ImageRun(image, device, board, marker, executor="native", profile=profile)
        run = ImageRun(image, device, board, marker, profile=profile)
        run.result.notes.append(f"run on Unicorn, not on the native executor: {why}")
        return run
    return ImageRun(image, device, board, marker, profile=profile)
