"""Live capture from a Qoitech Otii Arc / Ace through the Otii TCP server (JSON over TCP).

The Otii desktop application (or otii_server) runs a TCP server, port 1905 by default. Each
request is one JSON object followed by CR LF:

    {"type": "request", "cmd": "otii_get_devices", "trans_id": "1", "data": {"timeout": 10}}

and each reply is one JSON object followed by CR LF, with the same trans_id and `"type":
"response"` (payload in `data`) or `"type": "error"` (`errorcode`, details in `data`, often
`data.message`). The server may also send unsolicited `"information"` and `"progress"` messages,
which are skipped.

`OtiiCapture.capture()` picks a device, enables the main current (`mc`), main voltage (`mv`) and a
digital input (`i1` = GPI1, or `i2`) channel, records for the requested duration, then pages the
recording out with `recording_get_channel_data` (`index` / `count`) and yields `Chunk`s: `mc` →
current, `mv` → voltage, the GPI's edges → a 0/1 marker per sample. Memory is bounded by the page
size plus the GPI's edge list.

The message set follows Qoitech's TCP server documentation and its Python client; see
docs/energy-live.md for what is tested against a fake server only.
"""
from __future__ import annotations

import json
import socket
import time
from typing import Callable, Iterator

import numpy as np

from .trace import Chunk

DEFAULT_PORT = 1905
GPI_ALIASES = {"gpi1": "i1", "gpi2": "i2", "i1": "i1", "i2": "i2"}


class OtiiError(Exception):
    """The Otii server answered a request with an error."""

    def __init__(self, cmd: str, errorcode: str, data=None):
        self.cmd, self.errorcode, self.data = cmd, errorcode, data
        detail = ""
        if isinstance(data, dict):
            detail = data.get("message") or ", ".join(f"{k}={v}" for k, v in data.items())
        elif data:
            detail = str(data)
        super().__init__(f"Otii server: {cmd} failed: {errorcode}" + (f": {detail}" if detail else ""))


class OtiiConnectionError(Exception):
    """No usable connection to the Otii server (refused, dropped, timed out, garbled)."""


def parse_resource(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` (port 1905 when left out)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        return text, DEFAULT_PORT
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise ValueError(f"Otii server {text!r}: expected HOST or HOST:PORT") from None


class OtiiClient:
    """One TCP connection to the Otii server; `request` sends a command and returns its `data`."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout_s: float = 10.0):
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.sock: socket.socket | None = None
        self._buf = b""
        self._next_id = 0
        self.log: list[str] = []          # commands sent, in order

    def connect(self) -> "OtiiClient":
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: cannot connect: {exc} "
                                      "(is Otii running with its TCP server enabled?)") from exc
        return self

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def __enter__(self) -> "OtiiClient":
        return self.connect() if self.sock is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    def _message(self, cmd: str, timeout_s: float | None) -> dict:
        """The next complete CR LF-terminated JSON message."""
        assert self.sock is not None
        self.sock.settimeout(timeout_s)
        while b"\r\n" not in self._buf:
            try:
                got = self.sock.recv(1 << 16)
            except socket.timeout:
                raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: no reply to {cmd} within "
                                          f"{timeout_s:g} s") from None
            except OSError as exc:
                raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: connection lost while "
                                          f"waiting for the reply to {cmd}: {exc}") from exc
            if not got:
                raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: connection closed by the "
                                          f"server while waiting for the reply to {cmd}"
                                          + (f" ({len(self._buf)} bytes of an unfinished message)" if self._buf else ""))
            self._buf += got
        line, self._buf = self._buf.split(b"\r\n", 1)
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: reply to {cmd} is not JSON: "
                                      f"{line[:80]!r} ({exc})") from None
        if not isinstance(msg, dict) or "type" not in msg:
            raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: reply to {cmd} has no 'type': {line[:80]!r}")
        return msg

    def request(self, cmd: str, data: dict | None = None, timeout_s: float | None = None) -> dict:
        if self.sock is None:
            self.connect()
        self._next_id += 1
        tid = str(self._next_id)
        req = {"type": "request", "cmd": cmd, "trans_id": tid}
        if data is not None:
            req["data"] = data
        self.log.append(cmd)
        try:
            self.sock.sendall(json.dumps(req).encode("utf-8") + b"\r\n")
        except OSError as exc:
            raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: cannot send {cmd}: {exc}") from exc
        timeout = self.timeout_s if timeout_s is None else timeout_s
        while True:
            msg = self._message(cmd, timeout)
            if msg["type"] in ("information", "progress"):
                continue
            if str(msg.get("trans_id")) != tid:
                raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: reply with trans_id "
                                          f"{msg.get('trans_id')!r} to request {tid} ({cmd})")
            if msg["type"] == "error":
                raise OtiiError(cmd, str(msg.get("errorcode", "error")), msg.get("data"))
            if msg["type"] != "response":
                raise OtiiConnectionError(f"Otii server {self.host}:{self.port}: reply to {cmd} of type "
                                          f"{msg['type']!r}, expected 'response' or 'error'")
            return msg.get("data") or {}


class OtiiCapture:
    """Record with one Arc/Ace and turn the recording into Chunks.

    device: a device name or id (default: the only / first Arc or Ace); main_voltage: set the
    main output to this many volts before recording (None: leave it); power_on: switch the main
    output on before recording (it powers the DUT; off by default so nothing is switched
    unexpectedly); marker: the GPI channel carrying the DUT's marker (`i1`/`gpi1`, `i2`/`gpi2`, or
    None for no marker).
    """

    def __init__(self, client: OtiiClient, *, device: str | None = None, main_voltage: float | None = None,
                 power_on: bool = False, marker: str | None = "i1", voltage: bool = True,
                 page: int = 40_000, sleep: Callable[[float], None] = time.sleep):
        if marker is not None and marker.lower() not in GPI_ALIASES:
            raise ValueError(f"marker: expected i1, i2, gpi1 or gpi2, got {marker!r}")
        if page <= 0:
            raise ValueError("page: must be > 0")
        self.c = client
        self.device_wanted, self.main_voltage, self.power_on = device, main_voltage, power_on
        self.marker = GPI_ALIASES[marker.lower()] if marker else None
        self.voltage = voltage
        self.page = page
        self.sleep = sleep
        self.device: dict | None = None
        self.settings: dict = {}

    def _pick_device(self) -> dict:
        data = self.c.request("otii_get_devices", {"timeout": 10}, timeout_s=self.c.timeout_s + 10)
        devs = [d for d in data.get("devices", []) if d.get("type") in ("Arc", "Ace", "Simulator")]
        if self.device_wanted:
            devs = [d for d in devs if self.device_wanted in (d.get("name"), d.get("device_id"))]
        if not devs:
            raise OtiiError("otii_get_devices", "no device",
                            {"message": f"no Arc/Ace{' named ' + repr(self.device_wanted) if self.device_wanted else ''} "
                                        f"connected (server lists {[d.get('name') for d in data.get('devices', [])]})"})
        return devs[0]

    def record(self, duration_s: float) -> dict:
        """Configure, record for `duration_s`, stop; returns the recording's ids."""
        if not duration_s > 0:
            raise ValueError(f"duration: must be > 0 s, got {duration_s}")
        self.device = dev = self._pick_device()
        did = dev["device_id"]
        try:
            self.settings["version"] = self.c.request("arc_get_version", {"device_id": did})
        except OtiiError:
            self.settings["version"] = None
        proj = self.c.request("otii_get_active_project").get("project_id", -1)
        if proj in (-1, None):
            proj = self.c.request("otii_create_project")["project_id"]
        if self.main_voltage is not None:
            self.c.request("arc_set_main_voltage", {"device_id": did, "value": float(self.main_voltage)})
        channels = ["mc"] + (["mv"] if self.voltage else []) + ([self.marker] if self.marker else [])
        for ch in channels:
            self.c.request("arc_enable_channel", {"device_id": did, "channel": ch, "enable": True})
        if self.power_on:
            self.c.request("arc_set_main", {"device_id": did, "enable": True})
        self.settings.update({"main_voltage_v": self.c.request("arc_get_main_voltage", {"device_id": did}).get("value"),
                              "channels": channels, "project_id": proj, "duration_s": duration_s,
                              "power_on": self.power_on})
        self.c.request("project_start_recording", {"project_id": proj})
        try:
            self.sleep(duration_s)
        finally:
            self.c.request("project_stop_recording", {"project_id": proj})
        rec = self.c.request("project_get_last_recording", {"project_id": proj})
        if rec.get("recording_id", -1) == -1:
            raise OtiiError("project_get_last_recording", "no recording", {"message": "the project has no recording"})
        self.settings["recording_id"] = rec["recording_id"]
        self.settings["recording_name"] = rec.get("name")
        return rec

    def _count(self, rid, ch) -> int:
        return int(self.c.request("recording_get_channel_data_count",
                                  {"recording_id": rid, "device_id": self.device["device_id"], "channel": ch})["count"])

    def _data(self, rid, ch, index, count) -> dict:
        return self.c.request("recording_get_channel_data",
                              {"recording_id": rid, "device_id": self.device["device_id"], "channel": ch,
                               "index": index, "count": count}, timeout_s=max(self.c.timeout_s, 60.0))

    def _edges(self, rid) -> tuple[np.ndarray, np.ndarray]:
        n = self._count(rid, self.marker)
        ts, vs = [], []
        for index in range(0, n, self.page):
            d = self._data(rid, self.marker, index, min(self.page, n - index))
            if d.get("data_type", "digital") != "digital":
                raise OtiiError("recording_get_channel_data", "unexpected data",
                                {"message": f"channel {self.marker} returned {d.get('data_type')!r} data, expected digital"})
            for e in d.get("values", []):
                ts.append(float(e["timestamp"]))
                vs.append(1 if e["value"] else 0)
        return np.array(ts, dtype=np.float64), np.array(vs, dtype=np.uint8)

    def chunks(self, rid) -> Iterator[Chunk]:
        """The recording `rid`, page by page."""
        n = self._count(rid, "mc")
        if self.voltage:
            nv = self._count(rid, "mv")
            if nv != n:
                raise OtiiError("recording_get_channel_data_count", "channel mismatch",
                                {"message": f"mc has {n} samples, mv {nv}: different sample rates are not supported "
                                            "(set both channels to the same rate)"})
        edge_t, edge_v = self._edges(rid) if self.marker else (None, None)
        self.settings["samples"] = n
        self.settings["marker_edges"] = int(len(edge_t)) if edge_t is not None else None
        for index in range(0, n, self.page):
            cnt = min(self.page, n - index)
            d = self._data(rid, "mc", index, cnt)
            cur = np.asarray(d.get("values", []), dtype=np.float64)
            if len(cur) != cnt or d.get("data_type", "analog") != "analog":
                raise OtiiError("recording_get_channel_data", "unexpected data",
                                {"message": f"mc index {index}: asked for {cnt} analog samples, got {len(cur)} "
                                            f"{d.get('data_type', 'analog')}"})
            t0, dt = float(d["timestamp"]), float(d["interval"])
            self.settings.setdefault("sample_interval_s", dt)
            volt = None
            if self.voltage:
                dv = self._data(rid, "mv", index, cnt)
                volt = np.asarray(dv.get("values", []), dtype=np.float64)
                if len(volt) != cnt or float(dv["interval"]) != dt or abs(float(dv["timestamp"]) - t0) > dt / 2:
                    raise OtiiError("recording_get_channel_data", "unexpected data",
                                    {"message": f"mv index {index}: {len(volt)} samples from {dv.get('timestamp')} s "
                                                f"every {dv.get('interval')} s, mc has {cnt} from {t0} s every {dt} s"})
            marker = None
            if self.marker:
                t = t0 + dt * np.arange(cnt, dtype=np.float64)
                k = np.searchsorted(edge_t, t, side="right") - 1
                # before the first logged state the input is taken as low
                marker = np.where(k >= 0, edge_v[np.clip(k, 0, None)] if len(edge_v) else 0, 0).astype(np.uint8)
            yield Chunk(current=cur, t0=t0, dt=dt, voltage=volt, marker=marker)

    def capture(self, duration_s: float) -> Iterator[Chunk]:
        rec = self.record(duration_s)
        return self.chunks(rec["recording_id"])

    def conditions(self) -> dict:
        return {"provenance": "measured", "instrument": {
                    "kind": "qoitech-otii", "server": f"{self.c.host}:{self.c.port}",
                    "device": self.device, "version": self.settings.get("version")},
                "settings": {k: v for k, v in self.settings.items() if k != "version"},
                "commands": list(self.c.log)}
