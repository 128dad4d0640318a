"""Live capture from a Keysight N6705B/C DC power analyzer over SCPI (pyvisa).

Two ways to get samples off the instrument, both driven by `N6705`:

* **ELOG** (external data log, `capture_elog`): the instrument integrates each period and puts one
  record per period into a FIFO of about 20 s; the host empties it with repeated
  `FETC:ELOG? N,(@chans)` (comma-separated ASCII floats) and turns every answer into a `Chunk` as
  it arrives, so memory stays bounded however long the capture is.
* **DLOG** (the front-panel data logger, `capture_dlog`): the instrument logs into a file in its
  own memory (`INIT:DLOG "internal:\\name.dlog"`); afterwards the file (or a CSV exported from it
  with `MMEM:EXP:DLOG`) is read back with `MMEM:DATA?` as an IEEE 488.2 definite-length block and
  written, byte for byte, to a local file that the `n6705-dlog` / `n6705-csv` readers parse.

Every configuration step is followed by `SYST:ERR?` (read until `+0`); an instrument error raises
`InstrumentError` with the instrument's own message and the commands that preceded it. Settings
are read back after they are set (the instrument rounds periods to its time base), and the
read-back values, `*IDN?` and every command sent go into `conditions()` (provenance measured).

The command set follows Keysight's N6705 / N6700 manuals (see docs/energy-live.md for which parts
are tested against simulated instruments only). The resource manager backend is injectable:
`"@py"` (pyvisa-py), `""` (the system VISA), or `"path/to/instrument.yaml@sim"` (pyvisa-sim).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import numpy as np

from .formats.generic_csv import write_rows
from .trace import MARKER_X, Chunk
from ...core.extras import MissingExtra, require

TRIGGERS = {"imm": "IMM", "immediate": "IMM", "bus": "BUS", "ext": "EXT", "external": "EXT"}
MAX_ERRORS = 32          # SYST:ERR? reads before giving up on an error queue that never empties


class InstrumentError(Exception):
    """The instrument reported an error (SYST:ERR?) or broke the expected protocol."""


class BlockError(ValueError):
    """A malformed IEEE 488.2 arbitrary block."""


# -- IEEE 488.2 arbitrary blocks ----------------------------------------------------------------

def parse_block(data: bytes, *, strict_end: bool = True) -> bytes:
    """The payload of an IEEE 488.2 arbitrary block response.

    Definite length: `#<n><n digits: length><length bytes>`, e.g. `#15hello`, then an optional
    message terminator (LF, or CR LF). Indefinite length: `#0<bytes>` up to the end of the message;
    one trailing LF (the terminator) is removed. With strict_end, bytes after a definite block other
    than the terminator are an error.
    """
    data = bytes(data)
    if not data:
        raise BlockError("IEEE 488.2 block: expected '#', got an empty response")
    if data[:1] != b"#":
        raise BlockError(f"IEEE 488.2 block: expected '#' at byte 0, found {data[:16]!r}")
    if len(data) < 2 or not data[1:2].isdigit():
        raise BlockError(f"IEEE 488.2 block: expected a digit (number of length digits) at byte 1, "
                         f"found {data[1:2]!r}")
    n = int(data[1:2])
    if n == 0:
        payload = data[2:]
        return payload[:-1] if payload.endswith(b"\n") else payload
    digits = data[2:2 + n]
    if len(digits) < n or not digits.isdigit():
        raise BlockError(f"IEEE 488.2 block: header announces {n} length digits, found {digits!r}")
    length = int(digits)
    start = 2 + n
    payload = data[start:start + length]
    if len(payload) < length:
        raise BlockError(f"IEEE 488.2 block: header announces {length} data bytes, only {len(payload)} "
                         f"arrived (short read or truncated transfer)")
    rest = data[start + length:]
    if strict_end and rest not in (b"", b"\n", b"\r\n"):
        raise BlockError(f"IEEE 488.2 block: {len(rest)} unexpected bytes after the {length} data bytes: "
                         f"{rest[:16]!r}")
    return payload


def read_block(resource, sink=None, *, piece: int = 1 << 20) -> int | bytes:
    """Read one arbitrary block response from `resource` (after the query was written).

    With `sink` (a binary file object) the payload is written there in pieces of at most `piece`
    bytes, so a file of any size passes through bounded memory; the number of bytes is returned.
    Without `sink` the payload is returned. Uses `read_bytes` (pyvisa MessageBasedResource) for the
    definite form; the indefinite form (`#0`) and resources without `read_bytes` use `read_raw`.
    """
    if not hasattr(resource, "read_bytes"):
        payload = parse_block(resource.read_raw())
        if sink is None:
            return payload
        sink.write(payload)
        return len(payload)
    head = bytes(resource.read_bytes(2))
    if head[:1] != b"#" or len(head) < 2 or not head[1:2].isdigit():
        parse_block(head)          # raises with the right message
        raise BlockError(f"IEEE 488.2 block: malformed header {head!r}")
    n = int(head[1:2])
    if n == 0:
        payload = parse_block(head + bytes(resource.read_raw()))
        if sink is None:
            return payload
        sink.write(payload)
        return len(payload)
    digits = bytes(resource.read_bytes(n))
    if len(digits) < n or not digits.isdigit():
        raise BlockError(f"IEEE 488.2 block: header announces {n} length digits, found {digits!r}")
    length = int(digits)
    parts, got = [], 0
    while got < length:
        want = min(piece, length - got)
        try:
            part = bytes(resource.read_bytes(want))
        except Exception as exc:      # pyvisa raises VisaIOError (timeout) when the data stop
            raise BlockError(f"IEEE 488.2 block: header announces {length} data bytes, only {got} arrived "
                             f"before the read failed ({exc})") from exc
        if not part:
            break
        got += len(part)
        if sink is None:
            parts.append(part)
        else:
            sink.write(part)
    if got < length:
        raise BlockError(f"IEEE 488.2 block: header announces {length} data bytes, only {got} arrived "
                         f"(short read or truncated transfer)")
    _drain_terminator(resource)
    return b"".join(parts) if sink is None else got


def _drain_terminator(resource) -> None:
    """Consume the LF that ends a block message, when the resource has one pending."""
    reader = getattr(resource, "read_terminator", None)     # test doubles may offer this
    if callable(reader):
        reader()
        return
    try:
        resource.read_bytes(1, break_on_termchar=True)
    except TypeError:
        resource.read_bytes(1)
    except Exception:      # nothing pending (END came with the last data byte): fine
        pass


# -- configuration ------------------------------------------------------------------------------

@dataclass
class ChannelSpec:
    """One analyzer output to log and what it stands for in the trace.

    role: "main" (the trace's `current` / `voltage`), "marker" (its voltage, or current when only
    current is logged, becomes `marker_analog`: threshold it with the segmenter), or any other name
    (an extra supply: `current.NAME` / `voltage.NAME`).
    """
    channel: int
    current: bool = True
    voltage: bool = True
    role: str = "main"
    current_range: float | str | None = None     # amperes, "auto", or None to leave as is
    voltage_range: float | None = None           # volts, or None to leave as is

    @classmethod
    def parse(cls, text: str) -> "ChannelSpec":
        """`N[:FUNCS[:ROLE]]`: FUNCS is i, v or iv (default iv); ROLE main (default), marker or a name.
        e.g. `1`, `1:iv`, `2:v:marker`, `3:i:se`."""
        parts = text.split(":")
        try:
            ch = int(parts[0])
        except ValueError:
            raise ValueError(f"channel {text!r}: expected N[:i|v|iv[:ROLE]], e.g. 1:iv or 2:v:marker") from None
        funcs = parts[1].lower() if len(parts) > 1 and parts[1] else "iv"
        if not funcs or set(funcs) - {"i", "v"}:
            raise ValueError(f"channel {text!r}: functions must be i, v or iv, got {funcs!r}")
        role = parts[2] if len(parts) > 2 and parts[2] else "main"
        if len(parts) > 3:
            raise ValueError(f"channel {text!r}: expected N[:i|v|iv[:ROLE]]")
        return cls(ch, current="i" in funcs, voltage="v" in funcs, role=role)


def _check_channels(channels: list[ChannelSpec]) -> list[ChannelSpec]:
    if not channels:
        raise ValueError("channels: at least one analyzer output to log")
    seen = set()
    for c in channels:
        if not 1 <= c.channel <= 4:
            raise ValueError(f"channel {c.channel}: the N6705 has outputs 1 to 4")
        if c.channel in seen:
            raise ValueError(f"channel {c.channel} given twice")
        seen.add(c.channel)
        if not (c.current or c.voltage):
            raise ValueError(f"channel {c.channel}: log current, voltage or both")
    mains = [c for c in channels if c.role == "main"]
    if len(mains) != 1:
        raise ValueError(f"channels: exactly one channel with role 'main' (the supply whose energy is "
                         f"measured), found {len(mains)}")
    if not mains[0].current:
        raise ValueError(f"channel {mains[0].channel}: the main channel must log current")
    if sum(c.role == "marker" for c in channels) > 1:
        raise ValueError("channels: at most one marker channel")
    return sorted(channels, key=lambda c: c.channel)


def _nr3(x: float) -> str:
    """A number as SCPI NR3 (always with mantissa digits and an exponent)."""
    return f"{float(x):.6E}"


def _chanlist(channels) -> str:
    return "(@" + ",".join(str(c.channel) for c in channels) + ")"


# -- the instrument -----------------------------------------------------------------------------

class N6705:
    """A Keysight N6705B/C over pyvisa. Use as a context manager, or call open() / close().

    resource: a VISA resource name (`TCPIP0::192.168.1.5::inst0::INSTR`, `USB0::…::INSTR`,
    `GPIB0::5::INSTR`); backend: the pyvisa backend (`"@py"`, `""`, `"file.yaml@sim"`).
    instrument: an already open resource-like object (tests, or a session you manage yourself).
    """

    def __init__(self, resource: str | None = None, backend: str = "@py", *, instrument=None,
                 timeout_ms: int = 10_000, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        if resource is None and instrument is None:
            raise ValueError("N6705: give a VISA resource name or an open instrument")
        self.resource_name, self.backend = resource, backend
        self.timeout_ms = timeout_ms
        self.sleep, self.clock = sleep, clock
        self.inst = instrument
        self._rm = None
        self._owns = instrument is None
        self.idn: str | None = None
        self.log: list[str] = []          # every command and query sent, in order
        self.settings: dict = {}          # read-back settings of the last configuration
        self.requested: dict = {}         # what was asked for

    # -- session --------------------------------------------------------------------------------
    def open(self) -> "N6705":
        if self.inst is None:
            try:
                pyvisa = require("pyvisa", "lab", "the N6705 (energy capture --instrument n6705)")
            except MissingExtra as exc:
                raise InstrumentError(str(exc)) from None
            try:
                self._rm = pyvisa.ResourceManager(self.backend)
                self.inst = self._rm.open_resource(self.resource_name)
            except Exception as exc:
                raise InstrumentError(f"{self.resource_name}: cannot open the VISA resource with backend "
                                      f"{self.backend!r}: {exc}") from exc
        for attr, value in (("read_termination", "\n"), ("write_termination", "\n"),
                            ("timeout", self.timeout_ms)):
            try:
                setattr(self.inst, attr, value)
            except Exception:
                pass
        self.idn = self.query("*IDN?").strip()
        fields = [f.strip() for f in self.idn.split(",")]
        if len(fields) < 2 or not fields[1].upper().startswith("N67"):
            raise InstrumentError(f"{self._where()}: *IDN? answered {self.idn!r}, not a Keysight N6705 "
                                  "DC power analyzer (or N670x mainframe)")
        self.write("*CLS")
        return self

    def close(self) -> None:
        if self._owns and self.inst is not None:
            try:
                self.inst.close()
            finally:
                self.inst = None
                if self._rm is not None:
                    try:
                        self._rm.close()
                    except Exception:
                        pass
                    self._rm = None

    def __enter__(self) -> "N6705":
        return self.open() if self.idn is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    def _where(self) -> str:
        return self.resource_name or type(self.inst).__name__

    # -- primitives -----------------------------------------------------------------------------
    def write(self, cmd: str) -> None:
        self.log.append(cmd)
        try:
            self.inst.write(cmd)
        except Exception as exc:
            raise InstrumentError(f"{self._where()}: writing {cmd!r} failed: {exc}") from exc

    def query(self, cmd: str, timeout_ms: int | None = None) -> str:
        self.log.append(cmd)
        old = None
        if timeout_ms is not None:
            old = getattr(self.inst, "timeout", None)
            try:
                self.inst.timeout = timeout_ms
            except Exception:
                old = None
        try:
            return str(self.inst.query(cmd))
        except Exception as exc:
            raise InstrumentError(f"{self._where()}: query {cmd!r} got no valid answer: {exc}") from exc
        finally:
            if old is not None:
                self.inst.timeout = old

    def errors(self) -> list[str]:
        """Drain the error queue: every SYST:ERR? answer before `+0,"No error"`."""
        out = []
        for _ in range(MAX_ERRORS):
            ans = self.query("SYST:ERR?").strip()
            code = ans.split(",", 1)[0].strip()
            try:
                if int(code) == 0:
                    return out
            except ValueError:
                raise InstrumentError(f"{self._where()}: SYST:ERR? answered {ans!r}, expected "
                                      "<code>,\"<message>\"") from None
            out.append(ans)
        out.append(f"(error queue still not empty after {MAX_ERRORS} reads)")
        return out

    def check(self, context: str, since: int = 0) -> None:
        """Raise InstrumentError when the instrument has queued errors."""
        errs = self.errors()
        if errs:
            sent = [c for c in self.log[since:] if c != "SYST:ERR?"]
            raise InstrumentError(f"{self._where()}: the instrument reported "
                                  f"{'an error' if len(errs) == 1 else f'{len(errs)} errors'} {context}: "
                                  + "; ".join(errs) + f" (after: {' / '.join(sent[-8:])})")

    def _query_float(self, cmd: str) -> float:
        ans = self.query(cmd).strip()
        try:
            return float(ans)
        except ValueError:
            raise InstrumentError(f"{self._where()}: {cmd} answered {ans!r}, expected a number") from None

    def _query_bool(self, cmd: str) -> bool:
        ans = self.query(cmd).strip().upper()
        if ans in ("1", "ON", "+1"):
            return True
        if ans in ("0", "OFF", "+0"):
            return False
        raise InstrumentError(f"{self._where()}: {cmd} answered {ans!r}, expected 0 or 1")

    def _ranges(self, sub: str, c: ChannelSpec) -> None:
        ch = f"(@{c.channel})"
        if c.current and c.current_range is not None:
            if str(c.current_range).lower() == "auto":
                self.write(f"SENS:{sub}:CURR:RANG:AUTO 1,{ch}")
            else:
                self.write(f"SENS:{sub}:CURR:RANG {_nr3(float(c.current_range))},{ch}")
        if c.voltage and c.voltage_range is not None:
            self.write(f"SENS:{sub}:VOLT:RANG {_nr3(float(c.voltage_range))},{ch}")

    def _read_ranges(self, sub: str, c: ChannelSpec, out: dict) -> None:
        ch = f"(@{c.channel})"
        if c.current and c.current_range is not None:
            if str(c.current_range).lower() == "auto":
                out["current_range"] = "auto" if self._query_bool(f"SENS:{sub}:CURR:RANG:AUTO? {ch}") else "fixed"
            else:
                out["current_range_a"] = self._query_float(f"SENS:{sub}:CURR:RANG? {ch}")
        if c.voltage and c.voltage_range is not None:
            out["voltage_range_v"] = self._query_float(f"SENS:{sub}:VOLT:RANG? {ch}")

    # -- ELOG: streaming ------------------------------------------------------------------------
    def configure_elog(self, channels: list[ChannelSpec], period_s: float, trigger: str = "bus") -> dict:
        """Functions, ranges, integration period and trigger source of the external data log."""
        channels = _check_channels(list(channels))
        src = TRIGGERS.get(str(trigger).lower())
        if src is None:
            raise ValueError(f"trigger: expected one of {', '.join(sorted(set(TRIGGERS)))}, got {trigger!r}")
        if not period_s > 0:
            raise ValueError(f"period: must be > 0 s, got {period_s}")
        mark = len(self.log)
        self.write("FORM ASC")          # FETC:ELOG? answers comma-separated ASCII numbers
        for c in channels:
            ch = f"(@{c.channel})"
            self.write(f"SENS:ELOG:FUNC:CURR {int(c.current)},{ch}")
            self.write(f"SENS:ELOG:FUNC:VOLT {int(c.voltage)},{ch}")
            # min/max off: one average per function and period, so the record layout is known
            self.write(f"SENS:ELOG:FUNC:CURR:MINM 0,{ch}")
            self.write(f"SENS:ELOG:FUNC:VOLT:MINM 0,{ch}")
            self._ranges("ELOG", c)
            self.write(f"SENS:ELOG:PER {_nr3(period_s)},{ch}")
            self.write(f"TRIG:ELOG:SOUR {src},{ch}")
        self.check("while configuring the external data log (ELOG)", mark)
        per_channel, periods = [], set()
        for c in channels:
            ch = f"(@{c.channel})"
            got = {"channel": c.channel, "role": c.role,
                   "current": self._query_bool(f"SENS:ELOG:FUNC:CURR? {ch}"),
                   "voltage": self._query_bool(f"SENS:ELOG:FUNC:VOLT? {ch}"),
                   "current_minmax": self._query_bool(f"SENS:ELOG:FUNC:CURR:MINM? {ch}"),
                   "voltage_minmax": self._query_bool(f"SENS:ELOG:FUNC:VOLT:MINM? {ch}"),
                   "period_s": self._query_float(f"SENS:ELOG:PER? {ch}"),
                   "trigger_source": self.query(f"TRIG:ELOG:SOUR? {ch}").strip()}
            self._read_ranges("ELOG", c, got)
            if (got["current"], got["voltage"]) != (c.current, c.voltage) or got["current_minmax"] or got["voltage_minmax"]:
                raise InstrumentError(f"{self._where()}: channel {c.channel} reads back current={got['current']}, "
                                      f"voltage={got['voltage']}, min/max={got['current_minmax']}/"
                                      f"{got['voltage_minmax']} after it was set to current={c.current}, "
                                      f"voltage={c.voltage}, min/max off")
            periods.add(got["period_s"])
            per_channel.append(got)
        if len(periods) != 1:
            raise InstrumentError(f"{self._where()}: the channels read back different ELOG periods {sorted(periods)}")
        period = periods.pop()
        if not period > 0:
            raise InstrumentError(f"{self._where()}: SENS:ELOG:PER? read back {period}")
        self._channels = channels
        self.requested = {"mode": "elog", "period_s": period_s, "trigger": src,
                          "channels": [asdict(c) for c in channels]}
        self.settings = {"mode": "elog", "period_s": period, "trigger_source": src, "channels": per_channel}
        return self.settings

    def stream_elog(self, duration_s: float, *, records_per_fetch: int = 1000,
                    poll_s: float = 0.05, stall_s: float = 5.0) -> Iterator[Chunk]:
        """Start the configured ELOG, fetch records until `duration_s` of samples, abort; yield a
        Chunk per fetch. Times start at 0 s at the first record."""
        channels = self._channels
        period = self.settings["period_s"]
        total = int(round(duration_s / period))
        if total <= 0:
            raise ValueError(f"duration {duration_s} s is shorter than one period ({period} s)")
        if records_per_fetch <= 0:
            raise ValueError("records_per_fetch: must be > 0")
        layout = [(c, f) for c in channels for f, on in (("current", c.current), ("voltage", c.voltage)) if on]
        width = len(layout)
        cl = _chanlist(channels)
        mark = len(self.log)
        self.write(f"INIT:ELOG {cl}")
        if self.settings["trigger_source"] in ("BUS", "IMM"):
            self.write(f"TRIG:ELOG {cl}")
        self.check("while starting the external data log", mark)
        self.settings["records_requested"] = total
        got, last_data = 0, self.clock()
        try:
            while got < total:
                n = min(records_per_fetch, total - got)
                cmd = f"FETC:ELOG? {n},{cl}"
                ans = self.query(cmd).strip()
                values = _parse_floats(ans, cmd, self._where())
                if len(values) % width:
                    raise InstrumentError(f"{self._where()}: {cmd} returned {len(values)} values, not a multiple of "
                                          f"the {width} per record ({', '.join(f'{f} {c.channel}' for c, f in layout)})")
                rec = values.reshape(-1, width) if len(values) else values.reshape(0, width)
                if len(rec) > n:
                    raise InstrumentError(f"{self._where()}: {cmd} returned {len(rec)} records, more than the {n} asked for")
                if len(rec) == 0:
                    # an external trigger may come late: the first record gets a minute
                    limit = stall_s if got or self.settings["trigger_source"] != "EXT" else max(stall_s, 60.0)
                    if self.clock() - last_data > limit:
                        raise InstrumentError(f"{self._where()}: no ELOG records for {limit:g} s after {got} of "
                                              f"{total}; is the trigger ({self.settings['trigger_source']}) arriving?")
                    self.sleep(poll_s)
                    continue
                last_data = self.clock()
                yield _chunk(rec, layout, channels, got, period)
                got += len(rec)
        finally:
            self.settings["records_fetched"] = got
            try:
                self.write(f"ABOR:ELOG {cl}")
            except InstrumentError:
                pass

    def capture_elog(self, channels, period_s: float, duration_s: float, trigger: str = "bus",
                     records_per_fetch: int = 1000) -> Iterator[Chunk]:
        self.configure_elog(channels, period_s, trigger)
        return self.stream_elog(duration_s, records_per_fetch=records_per_fetch)

    # -- DLOG: the instrument's own data logger and file ---------------------------------------
    def configure_dlog(self, channels: list[ChannelSpec], period_s: float, duration_s: float,
                       trigger: str = "imm", offset_pct: float = 0.0) -> dict:
        channels = _check_channels(list(channels))
        src = TRIGGERS.get(str(trigger).lower())
        if src is None:
            raise ValueError(f"trigger: expected one of {', '.join(sorted(set(TRIGGERS)))}, got {trigger!r}")
        if not period_s > 0 or not duration_s > 0:
            raise ValueError(f"period and duration must be > 0 s, got {period_s}, {duration_s}")
        mark = len(self.log)
        for c in channels:
            ch = f"(@{c.channel})"
            self.write(f"SENS:DLOG:FUNC:CURR {int(c.current)},{ch}")
            self.write(f"SENS:DLOG:FUNC:VOLT {int(c.voltage)},{ch}")
            self._ranges("DLOG", c)
        self.write(f"SENS:DLOG:PER {_nr3(period_s)}")
        self.write(f"SENS:DLOG:TIME {_nr3(duration_s)}")
        self.write(f"SENS:DLOG:OFFS {_nr3(offset_pct)}")
        self.write(f"TRIG:DLOG:SOUR {src}")
        self.check("while configuring the data logger (DLOG)", mark)
        per_channel = []
        for c in channels:
            ch = f"(@{c.channel})"
            got = {"channel": c.channel, "role": c.role,
                   "current": self._query_bool(f"SENS:DLOG:FUNC:CURR? {ch}"),
                   "voltage": self._query_bool(f"SENS:DLOG:FUNC:VOLT? {ch}")}
            self._read_ranges("DLOG", c, got)
            per_channel.append(got)
        self._channels = channels
        self.requested = {"mode": "dlog", "period_s": period_s, "duration_s": duration_s, "trigger": src,
                          "offset_pct": offset_pct, "channels": [asdict(c) for c in channels]}
        self.settings = {"mode": "dlog", "period_s": self._query_float("SENS:DLOG:PER?"),
                         "duration_s": self._query_float("SENS:DLOG:TIME?"),
                         "offset_pct": self._query_float("SENS:DLOG:OFFS?"),
                         "trigger_source": self.query("TRIG:DLOG:SOUR?").strip(), "channels": per_channel}
        return self.settings

    def run_dlog(self, remote: str = "internal:\\cbench.dlog", *, margin_s: float = 5.0) -> str:
        """Start the configured data log into `remote`, trigger it (bus / immediate), wait for the
        duration, then *OPC? (with a timeout of the margin) before the file is read."""
        mark = len(self.log)
        self.write(f'INIT:DLOG "{remote}"')
        if self.settings.get("trigger_source") == "BUS":
            self.write("TRIG:DLOG")
        self.check(f"while starting the data log into {remote}", mark)
        self.sleep(float(self.settings["duration_s"]))
        ans = self.query("*OPC?", timeout_ms=int(max(margin_s, 1.0) * 1000) + self.timeout_ms).strip()
        if ans not in ("1", "+1"):
            raise InstrumentError(f"{self._where()}: *OPC? after the data log answered {ans!r}, expected 1")
        self.check("after the data log")
        self.settings["remote_file"] = remote
        return remote

    def export_csv(self, remote_csv: str = "internal:\\cbench.csv") -> str:
        """Export the last data log as CSV into the instrument's memory (MMEM:EXP:DLOG)."""
        mark = len(self.log)
        self.write(f'MMEM:EXP:DLOG "{remote_csv}"')
        ans = self.query("*OPC?").strip()
        if ans not in ("1", "+1"):
            raise InstrumentError(f"{self._where()}: *OPC? after MMEM:EXP:DLOG answered {ans!r}")
        self.check(f"while exporting the data log to {remote_csv}", mark)
        self.settings["remote_csv"] = remote_csv
        return remote_csv

    def fetch_file(self, remote: str, local) -> int:
        """Copy a file from the instrument's memory (MMEM:DATA?, a definite-length block) to `local`,
        byte for byte; returns its size."""
        mark = len(self.log)
        cmd = f'MMEM:DATA? "{remote}"'
        self.write(cmd)
        with open(local, "wb") as f:
            try:
                size = read_block(self.inst, f)
            except Exception as exc:      # BlockError, pyvisa's VisaIOError (timeout, lost link), …
                try:
                    errs = self.errors()
                except Exception:
                    errs = []
                what = str(exc) if isinstance(exc, BlockError) else f"the transfer failed: {exc!r}"
                raise InstrumentError(f"{self._where()}: {cmd}: {what}"
                                      + (f"; the instrument reported: {'; '.join(errs)}" if errs else "")) from exc
        self.check(f"while reading {remote}", mark)
        self.settings.setdefault("files", []).append({"remote": remote, "local": str(local), "bytes": size})
        return size

    def capture_dlog(self, channels, period_s: float, duration_s: float, local, *, trigger: str = "imm",
                     remote: str = "internal:\\cbench.dlog", as_csv: bool = False) -> int:
        """Configure, run, and copy the data log to `local`: the .dlog itself, or (as_csv) the CSV
        the instrument exports from it. Returns the file size."""
        self.configure_dlog(channels, period_s, duration_s, trigger)
        self.run_dlog(remote)
        if as_csv:
            remote = self.export_csv(remote.rsplit(".", 1)[0] + ".csv")
        return self.fetch_file(remote, local)

    # -- provenance -----------------------------------------------------------------------------
    def conditions(self) -> dict:
        """The run's conditions: instrument identity, requested and read-back settings, commands."""
        idn = [f.strip() for f in (self.idn or "").split(",")]
        return {"provenance": "measured", "instrument": {
                    "kind": "keysight-n6705", "idn": self.idn, "vendor": idn[0] if idn else None,
                    "model": idn[1] if len(idn) > 1 else None, "serial": idn[2] if len(idn) > 2 else None,
                    "firmware": idn[3] if len(idn) > 3 else None,
                    "resource": self.resource_name, "backend": self.backend},
                "requested": self.requested, "settings": self.settings, "commands": list(self.log)}


# -- writing a live capture so that `cryptobench energy import` reads it -------------------------

def write_capture_csv(chunks, path) -> dict:
    """Stream Chunks (from either live instrument) into a `generic-csv` trace: `time_s,current_a`
    [`,voltage_v`][`,marker` (0/1/X) or `,marker_v` (analog)][`,current_NAME_a,voltage_NAME_v`…].
    Returns {"samples": n, "format": "generic-csv", "options": {…}} — the import options."""
    cols = None
    n = 0
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for c in chunks:
            names = ["time_s", "current_a"] + (["voltage_v"] if c.voltage is not None else [])
            if c.marker is not None:
                names.append("marker")
            elif c.marker_analog is not None:
                names.append("marker_v")
            extra = sorted(c.extra)
            names += [f"{k.split('.', 1)[0]}_{k.split('.', 1)[1]}_{'a' if k.startswith('current.') else 'v'}"
                      for k in extra]
            if cols is None:
                cols = names
                f.write(",".join(cols) + "\n")
            elif names != cols:
                raise ValueError(f"capture: a chunk has columns {names}, the first had {cols}")
            if not len(c):
                continue
            fields = [np.char.mod("%.12g", c.times()), np.char.mod("%.9g", c.current)]
            if c.voltage is not None:
                fields.append(np.char.mod("%.9g", c.voltage))
            if c.marker is not None:
                m = np.asarray(c.marker)
                fields.append(np.where(m == MARKER_X, "X", m.astype(np.int64).astype(str)))
            elif c.marker_analog is not None:
                fields.append(np.char.mod("%.9g", c.marker_analog))
            fields += [np.char.mod("%.9g", c.extra[k]) for k in extra]
            write_rows(f, fields)
            n += len(c)
    if cols is None:
        raise ValueError("capture: no samples")
    opts = {"time_col": "time_s", "current_col": "current_a"}
    if "voltage_v" in cols:
        opts["voltage_col"] = "voltage_v"
    if "marker" in cols:
        opts["marker_col"] = "marker"
    elif "marker_v" in cols:
        opts.update(marker_col="marker_v", marker_kind="analog")
    ex_i = [(c[len("current_"):-2], c) for c in cols if c.startswith("current_") and c != "current_a"]
    ex_v = [(c[len("voltage_"):-2], c) for c in cols if c.startswith("voltage_") and c != "voltage_v"]
    if ex_i:
        opts["extra_current"] = ",".join(f"{n_}:{c}" for n_, c in ex_i)
    if ex_v:
        opts["extra_voltage"] = ",".join(f"{n_}:{c}" for n_, c in ex_v)
    return {"samples": n, "format": "generic-csv", "options": opts}


def _parse_floats(text: str, cmd: str, where: str) -> np.ndarray:
    if not text:
        return np.empty(0, dtype=np.float64)
    try:
        return np.array([float(v) for v in text.split(",")], dtype=np.float64)
    except ValueError:
        bad = next(v for v in text.split(",") if not _is_float(v))
        raise InstrumentError(f"{where}: {cmd} returned {bad!r} among its values, expected comma-separated "
                              "numbers (FORM ASCII)") from None


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def _chunk(rec: np.ndarray, layout, channels, first: int, period: float) -> Chunk:
    col = {(c.channel, f): j for j, (c, f) in enumerate(layout)}
    main = next(c for c in channels if c.role == "main")
    current = np.ascontiguousarray(rec[:, col[(main.channel, "current")]])
    voltage = rec[:, col[(main.channel, "voltage")]].copy() if main.voltage else None
    marker_analog, extra = None, {}
    for c in channels:
        if c.role == "main":
            continue
        if c.role == "marker":
            f = "voltage" if c.voltage else "current"
            marker_analog = rec[:, col[(c.channel, f)]].copy()
            continue
        if c.current:
            extra[f"current.{c.role}"] = rec[:, col[(c.channel, "current")]].copy()
        if c.voltage:
            extra[f"voltage.{c.role}"] = rec[:, col[(c.channel, "voltage")]].copy()
    return Chunk(current=current, t0=first * period, dt=period, voltage=voltage,
                 marker_analog=marker_analog, extra=extra)
