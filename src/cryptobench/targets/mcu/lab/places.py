"""labgrid places as boards: find places on the coordinator, acquire one, flash an image with the
place's flashing driver, read the firmware's JSON Lines from the place's serial port (a network
serial port the exporter serves with ser2net), power-cycle it, release it.

The coordinator's address comes from labgrid's own environment: LG_COORDINATOR (labgrid's
default 127.0.0.1:20408), or `coordinator_address` in the labgrid environment file LG_ENV names.
Drivers: with an environment file (LG_ENV), a place's target is the one whose RemotePlace names
it, with the drivers declared there (how a lab says "this place flashes with OpenOCD and this
config"); without one, drivers are bound from the place's resources: NetworkSerialPort ->
SerialDriver, NetworkPowerPort -> NetworkPowerDriver, QEMUFlashPort -> QEMUFlashDriver
(qemu_place.py). docs/lab.md has the exporter configurations.

Everything here talks to labgrid through its client session (labgrid.remote.client), the API its
own client command uses; this module and qemu_place.py are the only ones that import labgrid."""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import UsageError
from ..firmware.protocol import FirmwareReport
from ....core.extras import require
from ..board_link import read_lines
from .env_file import check_classes, check_env_file

DEFAULT_COORDINATOR = "127.0.0.1:20408"      # labgrid's own default
BOARD_TAG = "board"                            # the place tag that names the board (targets/boards.toml)
# a place's board is emulated when its flash is a QEMUFlashPort: functional results only, no timings
EMULATED_FLASH = "QEMUFlashPort"


def _labgrid():
    return require("labgrid", "labgrid", "labgrid places (--target labgrid:PLACE)")


def coordinator_address(env=None) -> str:
    """Where labgrid's client would look: LG_COORDINATOR, else LG_ENV's coordinator_address, else
    labgrid's default. `env`: the environment file already loaded."""
    if os.environ.get("LG_COORDINATOR"):
        return os.environ["LG_COORDINATOR"]
    env = env if env is not None else lab_environment()
    if env is not None:
        address = env.config.get_option("coordinator_address", DEFAULT_COORDINATOR)
        if not isinstance(address, str) or not address:
            raise UsageError(f"LG_ENV={os.environ['LG_ENV']}: options: coordinator_address: expected HOST:PORT, "
                             f"found {address!r}")
        return address
    return DEFAULT_COORDINATOR


def lab_environment():
    """The labgrid environment file LG_ENV names, loaded (None without one): checked as data
    first (env_file.py: size, aliases, layout), then loaded by labgrid, then every resource and
    driver class it names checked to be one labgrid knows. A refusal is one line naming the file."""
    path = os.environ.get("LG_ENV")
    if not path:
        return None
    _labgrid()                                # labgrid (and its PyYAML): the labgrid extra
    uses = check_env_file(path)
    from labgrid import Environment
    from . import qemu_place  # noqa: F401  (registers QEMUFlashPort/QEMUFlashDriver, which a file may name)
    try:
        env = Environment(path)
    except Exception as exc:                  # labgrid's own config errors: NoConfigFoundError, InvalidConfigError, YAML
        raise UsageError(f"LG_ENV={path}: {_one_line(exc)}") from None
    check_classes(path, uses)
    return env


@dataclass
class PlaceInfo:
    """What the coordinator says of a place: its tags, who holds it, its matched resources."""
    name: str
    tags: dict
    acquired: str | None                       # "host/user" of the holder, or None
    resources: list[dict] = field(default_factory=list)   # {"name", "cls", "params"} (exporter params)

    @property
    def board(self) -> str | None:
        return self.tags.get(BOARD_TAG)

    @property
    def emulated(self) -> bool:
        return any(r["cls"] == EMULATED_FLASH for r in self.resources)


class Lab:
    """A session with the labgrid coordinator (one per process)."""

    def __init__(self, address: str | None = None):
        _labgrid()
        from labgrid.remote.client import start_session
        env = lab_environment()                    # a bad LG_ENV is said before the coordinator is asked
        self.address = address or coordinator_address(env)
        try:
            with _quiet():
                self.session = start_session(self.address, extra={"args": argparse.Namespace(
                    place=None, allow_unmatched=False, kick=False)})
        except Exception as exc:                   # grpc errors, refused connections, timeouts
            raise UsageError(f"labgrid coordinator at {self.address}: cannot connect ({_one_line(exc)}); set "
                             "LG_COORDINATOR to HOST:PORT of your coordinator (docs/lab.md)")
        self.loop = self.session.loop

    def who(self) -> str:
        """host/user as the coordinator records a holder (LG_HOSTNAME, LG_USERNAME override)."""
        return f"{self.session.gethostname()}/{self.session.getuser()}"

    def place_names(self) -> list[str]:
        return sorted(self.session.places)

    def resolve(self, spec: str) -> list[str]:
        """PLACE, PLACE1,PLACE2,… or a pattern (shell-style: nucleo-*) to place names."""
        names, known = [], self.place_names()
        for item in (s.strip() for s in spec.split(",")):
            if not item:
                continue
            if any(c in item for c in "*?["):
                hits = fnmatch.filter(known, item)
                if not hits:
                    raise UsageError(f"labgrid: no place matches '{item}' on {self.address}; places: "
                                     + (", ".join(known) or "none"))
                names += [h for h in hits if h not in names]
            elif item in known:
                if item not in names:
                    names.append(item)
            else:
                raise UsageError(f"labgrid: no place '{item}' on {self.address}; places: " + (", ".join(known) or "none"))
        if not names:
            raise UsageError("--target labgrid: expected labgrid:PLACE, labgrid:PLACE1,PLACE2 or labgrid:PATTERN")
        return names

    def info(self, name: str) -> PlaceInfo:
        self._sync()
        place = self.session.places[name]
        resources = []
        for exporter, groups in self.session.resources.items():
            for group, by_name in groups.items():
                for res_name, entry in by_name.items():
                    if place.hasmatch((exporter, group, entry.cls, res_name)):
                        resources.append({"name": res_name, "cls": entry.cls, "exporter": exporter, "group": group,
                                          "params": {k: v for k, v in entry.args.items()}})
        return PlaceInfo(name, dict(place.tags), place.acquired, sorted(resources, key=lambda r: r["name"]))

    def acquire(self, name: str) -> None:
        self.session.args.place = name
        try:
            with _quiet():
                self.loop.run_until_complete(self.session.acquire())
        except Exception as exc:
            raise PlaceBusy(f"labgrid place {name}: {_one_line(exc)}")

    def release(self, name: str) -> None:
        self.session.args.place = name
        with _quiet():
            self.loop.run_until_complete(self.session.release())

    def _sync(self) -> None:
        with _quiet():
            self.loop.run_until_complete(self.session.sync_with_coordinator())

    def close(self) -> None:
        with contextlib.suppress(Exception), _quiet():
            self.loop.run_until_complete(self.session.stop())
            self.loop.run_until_complete(self.session.close())


class PlaceBusy(UsageError):
    """A place another holder has (or this host/user already holds)."""


class PlaceBoard:
    """An acquired place's drivers: flash, serial console, power. `run_image` is what the place's
    transport (targets/mcu/transports.PlaceTransport) calls per image."""

    def __init__(self, lab: Lab, name: str, flash: bool = True, baud: int | None = None):
        from labgrid import Target
        from labgrid.resource.remote import RemotePlace, RemotePlaceManager
        from . import qemu_place  # noqa: F401  (registers QEMUFlashPort/QEMUFlashDriver with labgrid)
        self.lab, self.name, self.flash = lab, name, flash
        manager = RemotePlaceManager.get()         # share our session with the resources' manager
        manager.session, manager.loop = lab.session, lab.loop
        env = lab_environment()
        self.target = None
        if env is not None:
            for role, config in env.config.get_targets().items():
                remote = ((config or {}).get("resources") or {})
                named = remote.get("RemotePlace", {}) if isinstance(remote, dict) else \
                    next((r["RemotePlace"] for r in remote if "RemotePlace" in r), {})
                if (named or {}).get("name") == name:
                    self.target = env.get_target(role)
                    break
        if self.target is None:
            self.target = Target(name)
            RemotePlace(self.target, name=name)
            self._bind_from_resources()
        self.serial = self._driver("ConsoleProtocol", required="a serial port (NetworkSerialPort)")
        self.power = self._driver("PowerProtocol")
        self.reset = self._driver("ResetProtocol")
        self.flasher = self._driver("BootstrapProtocol") if flash else None
        if flash and self.flasher is None:
            raise UsageError(f"labgrid place {name}: no flashing driver; export a QEMUFlashPort, or name the place's "
                             "flashing driver (OpenOCDDriver, …) in an LG_ENV environment file (docs/lab.md), or pass "
                             "--no-flash for a board flashed already")
        self.baud = baud

    def _bind_from_resources(self) -> None:
        from labgrid.driver import NetworkPowerDriver, SerialDriver
        from .qemu_place import QEMUFlashDriver
        t = self.target
        for res in list(t.resources):
            cls = type(res).__name__
            if cls == "NetworkSerialPort":
                SerialDriver(t, name=None)
            elif cls == "NetworkPowerPort":
                NetworkPowerDriver(t, name=None, delay=0.1)
            elif cls == "QEMUFlashPort":
                QEMUFlashDriver(t, name=None)

    def _driver(self, protocol: str, required: str | None = None):
        from labgrid import protocol as protocols
        from labgrid.exceptions import NoDriverFoundError
        try:
            return self.target.get_driver(getattr(protocols, protocol), activate=False)
        except NoDriverFoundError:
            if required:
                raise UsageError(f"labgrid place {self.name}: no {required} among its resources")
            return None

    def resources(self) -> list[dict]:
        """The place's resources as bound (class and the attributes that say where they are)."""
        import attr
        out = []
        for res in self.target.resources:
            cls = type(res).__name__
            if cls == "RemotePlace":
                continue
            fields = {k: v for k, v in attr.asdict(res, recurse=False).items()
                      if k not in ("target", "name", "avail", "parent") and isinstance(v, (str, int, float, bool))}
            out.append({"cls": cls, **fields})
        return out

    def run_image(self, elf: Path, timeout_s: float = 300.0, silence_s: float = 30.0) -> FirmwareReport:
        report = FirmwareReport(after_hello=True)   # the line may still hold the previous image's output
        t = self.target
        if self.power is not None:
            t.activate(self.power)
            self.power.off()
        if self.flasher is not None:
            t.activate(self.flasher)
            self.flasher.load(str(elf))
        t.activate(self.serial)
        port = self.serial.serial
        port.timeout = 0.5
        with contextlib.suppress(Exception):
            port.reset_input_buffer()
        if self.power is not None:
            self.power.on()
        elif self.reset is not None:
            t.activate(self.reset)
            self.reset.reset()
        read_lines(port, report, timeout_s, silence_s)
        return report

    def shut(self) -> None:
        """Leave the board off (where the place can switch it) and close its drivers."""
        if self.power is not None:
            with contextlib.suppress(Exception):
                self.target.activate(self.power)
                self.power.off()
        with contextlib.suppress(Exception):
            self.target.deactivate_all_drivers()


@contextlib.contextmanager
def _quiet():
    """labgrid's client prints what it does ("acquired place …") on stdout, which is ours, and
    logs a failed connection on the root logger; our own one-line error says it instead."""
    logging.disable(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logging.disable(logging.NOTSET)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__

