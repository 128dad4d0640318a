"""How many timed executions a microcontroller cell asks its image for (each one sample, k = 1:
the firmware times every execution on its own and sends every count, harness/firmware/core/main.c).

Where the count comes from, first that applies:
  QEMU, or a place of QEMU boards   1: no cycle model, one run gives output, stack and heap
  the simulator                     2 (SIM_REPEAT): deterministic, a second repetition shows it;
                                    except an op whose cost varies by design (catalog Op.executions:
                                    ML-DSA signing's rejection loop draws fresh randomness each
                                    execution, so the simulator's cycles differ too)
  --repeat on the command line      for such an op (the command line overrides a bench's own)
  the bench's own `repeat`
  the op's executions               Op.executions (ML-DSA signing: pqm4's 1000)
  the plan's repeat                 the suite's, else 20
and never more than the image keeps (FW_MAX_REPEAT of the board's RAM budget, firmware/build.py):
the firmware would drop the rest without saying so."""
from __future__ import annotations

from dataclasses import dataclass

from ...catalog.ops import OPS
from ...core.records import Options
from .firmware.build import ram_budget


@dataclass(frozen=True)
class Executions:
    repeat: int                  # timed executions the image runs and reports
    asked: int                   # what the rules above asked for, before the image's limit
    source: str                  # where `asked` came from: transport | option | bench | op | plan


def kept_repetitions(ram_bytes: int) -> int:
    """The timed repetitions an image for a board with `ram_bytes` of RAM keeps per cell."""
    return int(ram_budget(ram_bytes)["FW_MAX_REPEAT"])


def cell_executions(op_id: str, bench_repeat: int | None, options: Options, transport_repeat: int | None,
                    functional_only: bool, kept: int) -> Executions:
    """A cell's timed executions by the rules in the module's docstring."""
    varies = OPS[op_id].executions > 0
    if transport_repeat and (functional_only or not varies):
        asked, source = int(transport_repeat), "transport"
    elif varies and "repeat" in (options.overrides or []) and options.repeat:
        asked, source = int(options.repeat), "option"
    elif bench_repeat:
        asked, source = int(bench_repeat), "bench"
    elif varies:
        asked, source = OPS[op_id].executions, "op"
    else:
        asked, source = int(options.repeat or 1), "plan"
    return Executions(max(1, min(asked, kept)), asked, source)
