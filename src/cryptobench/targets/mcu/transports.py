"""How a firmware image runs, one Transport per kind of target (pqm4's Platform.run(binary)
shape): `run(image) -> FirmwareReport`, whether its cells are functional only (no cycle model),
the clock their cycles are counted at, and what it adds to the run's conditions.

QEMU and a board read the image's console under the shared watchdog (watchdog.py); the simulator
runs the image itself and reads its cycles from its own log of counter reads (SimReading); a
labgrid place runs it through the place's drivers (targets/mcu/lab/places.py)."""
from __future__ import annotations

from pathlib import Path

from .firmware.protocol import FirmwareReport
from ...core.target_specs import BoardSpec, LabSpec, McuTargetSpec, QemuSpec, SimSpec
from .boards import Board
from .reading import Reading
from .sim_reading import PROFILE_CONDITION, SimReading
from .board_link import run_on_board
from .qemu import qemu_version, run_image
from . import sim

QEMU_REPEAT = 1                # QEMU has no cycle model: one run gives output, stack and heap
SIM_REPEAT = 2                 # the simulator is deterministic: a second repetition shows it


class Transport:
    """A console transport: cycles as the firmware reports them, at the board's clock."""
    provenance = "measured"    # what an ok cell's numbers are
    repeat: int | None = None  # repetitions per cell the transport fixes (None: the plan's)

    def __init__(self, spec: McuTargetSpec, board: Board):
        self.spec, self.board = spec, board

    @property
    def functional_only(self) -> bool:
        return self.spec.functional_only

    def run(self, image: Path) -> FirmwareReport:
        raise NotImplementedError

    def clock_hz(self) -> float:
        return self.spec.extra.get("clock_hz") or self.board.clock_hz

    def counter(self, report: FirmwareReport) -> str:
        return report.hello.get("counter", "none")

    def reading(self, report: FirmwareReport, op: str, log) -> Reading:
        return Reading()

    def served_by(self, served: str) -> str:
        """What served a cell, as the glue names it (a board's own peripheral, a PSA driver)."""
        return served

    def engine_band(self, served: str, op: str, driver: str) -> dict | None:
        """The band of the engine model that served a cell of `op` run by the firmware library
        `driver` (sim/engine_band.py); None where no model served it (a real engine's time is
        measured, not modelled)."""
        return None

    def conditions(self, t: dict) -> None:
        """Add to the conditions' target what this transport is and how it times."""
        if self.functional_only:
            t["timing"] = ("none: the places' boards are QEMU machines (no cycle model), so no cycles or seconds "
                           "are reported")


class QemuTransport(Transport):
    """A QEMU Cortex-M machine: functional only (output, stack, heap; no cycles)."""
    repeat = QEMU_REPEAT

    def run(self, image: Path) -> FirmwareReport:
        return run_image(image, self.board.qemu_machine, timeout_s=self.spec.watchdog_s,
                         silence_s=self.spec.silence_limit_s, uart_console=self.board.console != "semihosting")

    def conditions(self, t: dict) -> None:
        t["qemu"] = qemu_version()
        t["timing"] = "none: QEMU has no cycle model, so no cycles or seconds are reported"


class BoardTransport(Transport):
    """A board on this machine's serial port, flashed with pyOCD (unless --no-flash)."""

    def run(self, image: Path) -> FirmwareReport:
        return run_on_board(image, self.board, self.spec.port, flash=not self.spec.no_flash, baud=self.spec.baud,
                            timeout_s=self.spec.watchdog_s, silence_s=self.spec.silence_limit_s)


class PlaceTransport(Transport):
    """A labgrid place (its PlaceBoard): flash, power or reset, and its serial console. Before a
    worker has a place (`place` None), the run's conditions only."""

    def __init__(self, spec: McuTargetSpec, board: Board, place=None):
        super().__init__(spec, board)
        self.place = place

    @property
    def repeat(self) -> int | None:
        return QEMU_REPEAT if self.functional_only else None

    def run(self, image: Path) -> FirmwareReport:
        if self.place is None:
            raise RuntimeError("a labgrid target runs images on a place's worker (targets/mcu/lab/worker.py)")
        return self.place.run_image(image, timeout_s=self.spec.watchdog_s, silence_s=self.spec.silence_limit_s)


class SimTransport(Transport):
    """The cycle-approximate simulator (sim/): cycles from its model, deterministic. Its device
    profile is the one the target's record carries (resolved once, when the run was planned or its
    stored plan was read: McuTarget); the simulator starts with the first image, not before."""
    provenance = "simulated"
    repeat = SIM_REPEAT

    def __init__(self, spec: SimSpec, board: Board):
        if spec.resolved_device is None:
            raise ValueError("a SimTransport needs its target's device profile resolved (McuTarget resolves it)")
        super().__init__(spec, board)
        self._sim = None

    def simulator(self):
        if self._sim is None:
            self._sim = sim.Simulator(self.spec.resolved_device, self.board)
        return self._sim

    def run(self, image: Path) -> FirmwareReport:
        return self.simulator().run(image, timeout_s=self.spec.watchdog_s, profile=bool(self.spec.profile))

    def clock_hz(self) -> float:
        return self.simulator().device.clock_hz

    def counter(self, report: FirmwareReport) -> str:
        return "model"

    def reading(self, report, op: str, log) -> Reading:
        for line in report.stats.get("undeclared_registers", ()):
            log(f"simulator: peripheral register not modelled (read 0, stores ignored) in {op}: {line}")
        if report.stats.get("unknown_mnemonics"):
            log(f"simulator: no cost in the model for {', '.join(report.stats['unknown_mnemonics'])} "
                f"(charged 1 cycle each) in {op}")
        return SimReading(report, self.simulator().device)

    def served_by(self, served: str) -> str:
        """A peripheral the glue names, as the simulator serves it: the model and its source, and
        what the device's profile attaches to it (a bus controller's targets: `attached`)."""
        model, spec = self._model_serving(served)
        if model is None:
            return served
        attached = model.attached(spec)
        return f"peripheral: {model.title} (model of {model.source})" + (f"; {attached}" if attached else "")

    def engine_band(self, served: str, op: str, driver: str) -> dict | None:
        model, _ = self._model_serving(served)
        return sim.engine_band_for(model.kind, model.model_version, op, driver) if model else None

    def _model_serving(self, served: str):
        """The peripheral model class a glue's "peripheral: TITLE" names on this device, and its
        profile entry; else (None, None)."""
        if not served.startswith("peripheral: "):
            return None, None
        title = served[len("peripheral: "):].strip()
        for spec in self.simulator().device.peripheral_models:
            model = sim.PERIPHERAL_KINDS[spec["kind"]]
            if model.title == title:
                return model, spec
        return None, None

    def conditions(self, t: dict) -> None:
        s = t["simulator"] = self.simulator().describe()
        t["clock_hz"] = s["clock_hz"]
        t["timing"] = (f"simulated: {s['model']} v{s['model_version']} cycle model of the {s['core']}"
                       + (" (rough)" if s["rough"] else "")
                       + f" on {self.spec.device_text}, {s['flash_ws']} flash wait "
                       f"state(s) charged; time = cycles / {t['clock_hz'] / 1e6:g} MHz")
        if self.spec.profile:
            t["profile"] = PROFILE_CONDITION
        models = [sim.PERIPHERAL_KINDS[m["kind"]] for m in self.simulator().device.peripheral_models]
        if models:                   # the CPU's cycles are simulated, the engines' latencies modeled
            t["peripheral_models"] = [{"peripheral": m.title, "registers": m.source, "provenance": "modeled",
                                       "latency": m.latency_source} for m in models]
        # every cell of the run carries the same band (one device); the conditions say it once
        t["error_band"] = sim.band_for(self.simulator().device, f"{s['model']} v{s['model_version']}")


TRANSPORTS: dict[type[McuTargetSpec], type[Transport]] = {
    QemuSpec: QemuTransport, BoardSpec: BoardTransport, SimSpec: SimTransport, LabSpec: PlaceTransport}


def transport_for(spec: McuTargetSpec, board: Board) -> Transport:
    """The transport of a target's record; a labgrid target's gets its place from the worker."""
    return TRANSPORTS[type(spec)](spec, board)
