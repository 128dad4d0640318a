"""A microcontroller run's target (Plan.target): one frozen record per transport, QemuSpec,
BoardSpec, SimSpec and LabSpec, on McuTargetSpec's shared fields (board, cpu, optimisation level,
libraries, watchdog), each validating its own fields where it is made. This is the one module that
reads a target's kind: `McuTargetSpec.from_json` picks the record from a stored "kind",
`target_class` from --target, and `TargetView` says what a stored target is (the conditions' or a
listed plan's), so no other module tests the kind's text.

The stored form is the flat dict every version has written, key for key and in STORED_KEYS'
order: a record built in code writes every key (another transport's at its stored default, a qemu
target's "port": null) but the OPTIONAL ones left at None; one read back writes the keys it was
read with, in their order. What the plan resolved (a sim target's device profile, the libraries'
recipes) rides along typed and is never stored: a stored target keeps the names, and the layer
that needs the typed form (targets/mcu, above this one) resolves it once from them."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import UsageError
from .stored import GIVEN, JsonView, Stored

DEFAULT_TIMEOUT_S = 300.0        # a QEMU, board or labgrid image's watchdog when the plan names none
SIM_DEFAULT_TIMEOUT_S = 600.0    # the simulator's (it runs the image instruction by instruction)
DEFAULT_SILENCE_S = 30.0         # silence that ends an image when the plan names none
DEFAULT_BAUD = 115200

# the stored form's keys in the order every version has written them, each with the value a target
# without it writes (a target of another transport: its stored default)
STORED_KEYS: tuple[tuple[str, Any], ...] = (
    ("kind", "qemu"), ("board", ""), ("cpu", None), ("opt", None), ("libraries", []), ("core", None),
    ("device", None), ("device_options", None), ("library_source", None), ("library_ref", None),
    ("library_commit", None), ("library_cc", None), ("port", None), ("baud", DEFAULT_BAUD), ("no_flash", False),
    ("timeout_s", None), ("silence_s", None), ("places", None), ("coordinator", None), ("emulated", None),
    ("lease_s", None), ("place", None), ("profile", None))
STORED_NAMES = tuple(k for k, _ in STORED_KEYS)


class TargetSpecError(ValueError):
    """A target record that is not one: unknown kind, no board, libraries not a list of names."""


def _seconds(name: str, value: Any) -> None:
    if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0):
        raise TargetSpecError(f"target {name}: expected seconds > 0, got {value!r}")


def device_options_text(options: Mapping | None) -> str:
    """'clock=8MHz,ws=1': a sim target's device options as --device writes them after the name."""
    return ",".join(f"{k}={v}" for k, v in (options or {}).items())


@dataclass(frozen=True, eq=False)
class McuTargetSpec(Stored):
    """What every microcontroller target has: the board the image is linked for, the core it is
    built for and the optimisation level, the libraries (recipe names or recipe .toml paths) and
    their sources, and how long the watchdog waits. A base: a target is one of its subclasses."""
    KIND: ClassVar[str] = ""
    FORM: ClassVar[str] = ""                     # how --target names one ("qemu:BOARD")
    DEFAULT_WATCHDOG_S: ClassVar[float] = DEFAULT_TIMEOUT_S
    OPTIONAL = ("device_options", "library_cc", "library_ref", "library_commit", "places", "coordinator",
                "emulated", "lease_s", "place", "profile")
    NOT_STORED = ("extra", "given", "recipes", "resolved_device")
    board: str = ""
    cpu: str | None = None
    opt: str | None = None
    libraries: list[str] = field(default_factory=list)   # recipe names or recipe .toml paths
    library_source: str | None = None      # --library-source, resolved (DIR@REF: the repository's DIR)
    library_ref: str | None = None         # --library-source DIR@REF: the ref as given
    library_commit: str | None = None      # ... and the full commit hash it named when the run was planned
    library_cc: str | None = None          # --library-cc
    timeout_s: float | None = None         # the watchdog per image; None: the kind's default
    silence_s: float | None = None         # silence that ends an image; None: DEFAULT_SILENCE_S
    extra: dict = field(default_factory=dict)
    given: tuple | None = GIVEN
    # the libraries' recipes (targets/mcu/firmware/recipes.Recipe), one per library in order, as
    # the plan loaded them; () for a stored target, whose recipes are loaded by name when it runs
    recipes: tuple = field(default=(), repr=False, compare=False)

    def __post_init__(self):
        if not self.KIND:
            raise TargetSpecError("target kind: a target is a QemuSpec, BoardSpec, SimSpec or LabSpec")
        if not isinstance(self.board, str):
            raise TargetSpecError(f"target board: expected a board name, got {self.board!r}")
        if not isinstance(self.libraries, list) or not all(isinstance(x, str) for x in self.libraries):
            raise TargetSpecError(f"target libraries: expected a list of recipe names, got {self.libraries!r}")
        if not isinstance(self.recipes, tuple) or len(self.recipes) not in (0, len(self.libraries)):
            raise TargetSpecError(f"target recipes: expected one loaded recipe per library ({len(self.libraries)}), "
                                  f"got {len(self.recipes) if isinstance(self.recipes, tuple) else self.recipes!r}")
        for name in ("timeout_s", "silence_s"):
            _seconds(name, getattr(self, name))
        # a run stored before the records were split may hold another transport's keys (a qemu run
        # given --port stored it, meaning nothing): they are kept, in `extra`, as they were read. A
        # profile was refused on any target but sim from the start, and still is
        if "profile" in self.extra and self.extra["profile"] is not None:
            raise TargetSpecError(f"target profile: expected true on a sim target (or no key), got "
                                  f"{self.extra['profile']!r} on a {self.KIND} target")
        self._check()

    def _check(self) -> None:
        """The transport's own fields, checked (a subclass's)."""

    @property
    def kind(self) -> str:
        return self.KIND

    @classmethod
    def stores(cls, name: str) -> bool:
        """Whether this kind of target has the stored field `name` (--port: a board's)."""
        return name in cls._stored_names()

    # --- the stored form --------------------------------------------------------------------------
    def _stored_items(self) -> Iterator[tuple[str, Any, Any]]:
        own = self._stored_names()
        for key, default in STORED_KEYS:
            if key == "kind":
                yield key, self.KIND, default
            elif key in own:
                yield key, getattr(self, key), default
            elif key not in self.extra:              # another transport's key: at its stored default
                yield key, default, default

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "McuTargetSpec":
        """The record of a stored target's kind (no "kind": qemu, as the first versions stored it)."""
        kind = d.get("kind", "qemu")
        spec = SPECS.get(kind) if isinstance(kind, str) else None
        if spec is None:
            raise TargetSpecError(f"target kind: expected one of {', '.join(SPECS)}, got {kind!r}")
        if cls is not McuTargetSpec and spec is not cls:
            raise TargetSpecError(f"target kind: expected {cls.KIND}, got {kind!r}")
        split = spec._split(d)
        split["extra"].pop("kind", None)
        return spec(**split)

    # --- what the kind means ----------------------------------------------------------------------
    @property
    def watchdog_s(self) -> float:
        """Seconds an image may run in all: the plan's --timeout, else the kind's default."""
        return self.timeout_s if self.timeout_s is not None else self.DEFAULT_WATCHDOG_S

    @property
    def silence_limit_s(self) -> float:
        return self.silence_s if self.silence_s is not None else DEFAULT_SILENCE_S

    @property
    def functional_only(self) -> bool:
        """No cycle model: cells carry output, stack, heap and code size, never cycles or seconds."""
        return False

    @property
    def label(self) -> str:
        """The target a cell names: qemu:BOARD, board:NAME, sim:CORE:DEVICE, labgrid:PLACE."""
        return f"{self.KIND}:{self.board}"


@dataclass(frozen=True, eq=False)
class QemuSpec(McuTargetSpec):
    """A QEMU Cortex-M machine."""
    KIND = "qemu"
    FORM = "qemu:BOARD"

    @property
    def functional_only(self) -> bool:
        return True                       # QEMU has no cycle model


@dataclass(frozen=True, eq=False)
class BoardSpec(McuTargetSpec):
    """A board on this machine's serial port, flashed with pyOCD unless no_flash."""
    KIND = "board"
    FORM = "board:NAME"
    port: str | None = None                # its serial port
    baud: int = DEFAULT_BAUD
    no_flash: bool = False

    def _check(self) -> None:
        if self.port is not None and not (isinstance(self.port, str) and self.port):
            raise TargetSpecError(f"target port: expected a serial port's path, got {self.port!r}")
        if not (isinstance(self.baud, int) and not isinstance(self.baud, bool) and self.baud > 0):
            raise TargetSpecError(f"target baud: expected a baud rate > 0, got {self.baud!r}")
        if not isinstance(self.no_flash, bool):
            raise TargetSpecError(f"target no_flash: expected true or false, got {self.no_flash!r}")


@dataclass(frozen=True, eq=False)
class SimSpec(McuTargetSpec):
    """The cycle-approximate simulator: the simulated core, and the device profile at the condition
    its options ask for (stored as the name and the options; `resolved_device` is the profile the
    plan resolved, targets/mcu/sim/devices.Device, None in a stored target until it is resolved)."""
    KIND = "sim"
    FORM = "sim:CORE"
    DEFAULT_WATCHDOG_S = SIM_DEFAULT_TIMEOUT_S
    core: str | None = None                # the simulated core (sim:CORE)
    device: str | None = None              # the device profile's name
    device_options: dict | None = None     # the profile's options (clock, ws, prefetch, cache)
    profile: bool | None = None            # --profile, a per-function profile per cell (None: off)
    resolved_device: Any = field(default=None, repr=False, compare=False)

    def _check(self) -> None:
        if not (isinstance(self.core, str) and self.core):
            raise TargetSpecError(f"target core: expected the simulated core (sim:CORE), got {self.core!r}")
        if self.device is not None and not isinstance(self.device, str):
            raise TargetSpecError(f"target device: expected a device profile's name, got {self.device!r}")
        options = self.device_options
        if options is not None and not (isinstance(options, dict)
                                        and all(isinstance(k, str) and isinstance(v, str) for k, v in options.items())):
            raise TargetSpecError(f"target device_options: expected key=value texts (clock, ws, prefetch, cache), "
                                  f"got {options!r}")
        if self.profile is not None and self.profile is not True:
            raise TargetSpecError(f"target profile: expected true on a sim target (or no key), got {self.profile!r} "
                                  "on a sim target")
        dev = self.resolved_device
        if dev is not None and (dev.core != self.core or (self.device is not None and dev.name != self.device)
                                or dict(dev.options or {}) != dict(options or {})):
            raise TargetSpecError(f"target device: resolved as {dev.name}:{device_options_text(dev.options)} on a "
                                  f"{dev.core}, stored as {self.device}:{device_options_text(options)} on a {self.core}")

    @property
    def device_text(self) -> str:
        """'stm32f030:clock=8MHz': the device as --device names it."""
        name = self.device or (self.resolved_device.name if self.resolved_device is not None else "?")
        opts = device_options_text(self.device_options)
        return name + (":" + opts if opts else "")

    @property
    def label(self) -> str:
        return f"sim:{self.core}:{self.device_text}"


@dataclass(frozen=True, eq=False)
class LabSpec(McuTargetSpec):
    """labgrid places: the run spreads its units over `places` (one board kind, from their tags);
    a worker measures on its one `place`."""
    KIND = "labgrid"
    FORM = "labgrid:PLACE"
    no_flash: bool = False
    places: list[str] | None = None        # the places the run spreads over
    coordinator: str | None = None         # the coordinator's address
    emulated: bool | None = None           # the places' boards are QEMU machines
    lease_s: float | None = None           # a silent worker loses its unit after this long
    place: str | None = None               # the one place a worker measures on

    def _check(self) -> None:
        if not self.places:
            raise TargetSpecError("target places: a labgrid target names at least one place")
        if not isinstance(self.places, list) or not all(isinstance(p, str) and p for p in self.places):
            raise TargetSpecError(f"target places: expected a list of place names, got {self.places!r}")
        _seconds("lease_s", self.lease_s)
        if not isinstance(self.no_flash, bool):
            raise TargetSpecError(f"target no_flash: expected true or false, got {self.no_flash!r}")

    @property
    def functional_only(self) -> bool:
        return bool(self.emulated)        # the places' boards are QEMU machines: no cycle model

    @property
    def label(self) -> str:
        """labgrid:PLACE, the place that measured the cell (a worker's), else the run's places."""
        return f"labgrid:{self.place or ','.join(self.places)}"


SPECS: dict[str, type[McuTargetSpec]] = {s.KIND: s for s in (QemuSpec, BoardSpec, SimSpec, LabSpec)}
MCU_KINDS = tuple(SPECS)                 # where a microcontroller run's firmware runs
HOST = "host"


def target_class(text: str) -> tuple[type[McuTargetSpec], str]:
    """The record and the name of --target KIND:NAME, or one line naming the forms it takes."""
    kind, _, name = text.partition(":")
    spec = SPECS.get(kind)
    if spec is None or not name:
        forms = [s.FORM for s in SPECS.values()]
        raise UsageError(f"--target: expected {HOST}, {', '.join(forms[:-1])} or {forms[-1]}; got '{text}'")
    return spec, name


def target_class_of(text: str) -> type[McuTargetSpec] | None:
    """The record --target names, None for the host or a --target of no kind (planning says why)."""
    return SPECS.get(text.partition(":")[0])


def forms_storing(name: str) -> str:
    """'board:NAME and labgrid:PLACE': the targets that have the stored field `name`."""
    forms = [s.FORM for s in SPECS.values() if s.stores(name)]
    return " and ".join([", ".join(forms[:-1]), forms[-1]] if len(forms) > 1 else forms)


def place_of(target: str) -> tuple[str, str | None]:
    """("labgrid", PLACE) for a cell a labgrid place measured (its target "labgrid:PLACE");
    (target, None) otherwise."""
    kind, _, place = (target or "").partition(":")
    return (kind, place) if kind == LabSpec.KIND else (target, None)


class TargetView(JsonView):
    """A target as stored, read leniently (a run's conditions' target: the plan's with what its
    transport added, clock_hz, timing, simulator, …; or a listed plan's): what kind of target it
    is. A kind this version does not know is none of them."""

    @property
    def kind(self) -> str | None:
        return self._data.get("kind")

    @property
    def spec_class(self) -> type[McuTargetSpec] | None:
        return SPECS.get(self.kind) if isinstance(self.kind, str) else None

    @property
    def simulated(self) -> bool:
        return self.spec_class is SimSpec

    @property
    def qemu(self) -> bool:
        return self.spec_class is QemuSpec

    @property
    def on_board(self) -> bool:
        return self.spec_class is BoardSpec

    @property
    def on_places(self) -> bool:
        return self.spec_class is LabSpec

    @property
    def counts_core_cycles(self) -> bool:
        """Its cycles count the core clock its conditions record: the simulator's, a board's."""
        return self.simulated or self.on_board

    @property
    def device_options_text(self) -> str:
        """A sim target's device options, 'clock=8MHz,ws=1' ('' for none)."""
        return device_options_text(self._data.get("device_options"))
