"""Live capture: the N6705 over SCPI (pyvisa-sim instrument, and a loopback fake for binary blocks)
and the Otii over its TCP JSON server (a fake server on localhost). Every capture is fed through
the trace pipeline (segmenter, generic-csv / n6705-dlog readers) and must give the analytic energy.
"""
import json
import socketserver
import threading
from pathlib import Path

import numpy as np
import pytest

from cryptobench.targets.trace.live_n6705 import (BlockError, ChannelSpec, InstrumentError, N6705, parse_block,
                                           read_block, write_capture_csv)
from cryptobench.targets.trace.live_otii import (OtiiCapture, OtiiClient, OtiiConnectionError, OtiiError,
                                          parse_resource)
from cryptobench.targets.trace.segment import segment
from cryptobench.targets.trace.trace import MARKER_X, Chunk

from conftest import cli

pytest.importorskip("pyvisa")

FIXTURES = Path(__file__).parent / "fixtures"
SIM = f"{FIXTURES / 'n6705-sim.yaml'}@sim"
SIM_RESOURCE = "TCPIP::n6705-sim::INSTR"
IDN = "Keysight Technologies,N6705C,MY56001234,D.03.10.2158"

# the simulated FETC:ELOG? answer (tests/fixtures/n6705-sim.yaml): 100 records at 1 ms, one window
# of 40 records at 11 mA and 3.0 V per answer
ELOG_PERIOD, ELOG_WINDOW_J = 1e-3, 40 * 1e-3 * 0.011 * 3.0

MAIN_AND_MARKER = [ChannelSpec(1, current=True, voltage=True, role="main", current_range=0.1),
                   ChannelSpec(2, current=False, voltage=True, role="marker")]


def no_sleep(_s):
    pass


# ---------------------------------------------------------------------------------- blocks

def block(payload: bytes) -> bytes:
    n = str(len(payload)).encode()
    return b"#" + str(len(n)).encode() + n + payload


def test_parse_definite_and_indefinite_blocks():
    assert parse_block(b"#15hello") == b"hello"
    assert parse_block(b"#15hello\n") == b"hello"
    assert parse_block(b"#15hello\r\n") == b"hello"
    assert parse_block(b"#210" + bytes(range(10))) == bytes(range(10))
    assert parse_block(b"#10") == b""
    assert parse_block(b"#0abc\ndef\n") == b"abc\ndef"          # indefinite: up to the end, one LF dropped
    data = bytes(range(256)) * 10
    assert parse_block(block(data)) == data


@pytest.mark.parametrize("raw, words", [
    (b"", "empty"),
    (b"hello", "expected '#'"),
    (b"#x5hello", "digit"),
    (b"#3a5hello", "3 length digits"),           # wrong length digits
    (b"#35hello", "3 length digits"),            # fewer digits than announced
    (b"#210hello", "announces 10 data bytes, only 5 arrived"),   # short data
    (b"#15helloXYZ", "unexpected bytes after"),
])
def test_parse_malformed_blocks(raw, words):
    with pytest.raises(BlockError, match=words):
        parse_block(raw)


class LoopbackN6705:
    """A pyvisa MessageBasedResource stand-in (write / query / read_bytes / read_raw / close): a
    little SCPI state machine with the N6705's file commands. `files` maps instrument paths to the
    bytes MMEM:DATA? returns as a definite block; `raw` maps paths to a raw (possibly malformed)
    response instead. `fetch` is a list of FETC:ELOG? answers, served in order."""

    def __init__(self, files=None, raw=None, idn=IDN, fetch=None, chunk_limit=None):
        self.files, self.raw = dict(files or {}), dict(raw or {})
        self.idn, self.fetch = idn, list(fetch or [])
        self.state, self.errors, self.sent = {}, [], []
        self.out = bytearray()
        self.chunk_limit = chunk_limit          # largest read_bytes answer (a slow link)
        self.reads = []
        self.timeout = 1000
        self.closed = False

    # the value part of "HEADER value[,(@n)]"
    def write(self, cmd):
        self.sent.append(cmd)
        head, _, arg = cmd.partition(" ")
        if head == "MMEM:DATA?":
            name = arg.strip('"')
            if name in self.raw:
                self.out += self.raw[name]
            elif name in self.files:
                self.out += block(self.files[name]) + b"\n"
            else:
                self.errors.append('-256,"File name not found"')
            return
        if head == "MMEM:EXP:DLOG":
            self.files[arg.strip('"')] = b"Sample interval,0.001\nSample,Curr avg 1\n0,0.001\n"
            return
        if arg:
            value, _, ch = arg.partition(",")
            if head == "SENS:ELOG:PER":     # the N6700 manuals: rounded to a multiple of 20.48 µs
                value = "%+.6E" % (round(float(value) / 20.48e-6) * 20.48e-6)
            self.state[(head, ch)] = value

    def query(self, cmd):
        self.sent.append(cmd)
        if cmd == "*IDN?":
            return self.idn
        if cmd == "*OPC?":
            return "1"
        if cmd == "SYST:ERR?":
            return self.errors.pop(0) if self.errors else '+0,"No error"'
        if cmd.startswith("FETC:ELOG?"):
            return self.fetch.pop(0) if self.fetch else ""
        head, _, ch = cmd.partition(" ")
        return self.state.get((head[:-1], ch), "0")

    def read_bytes(self, count, chunk_size=None, break_on_termchar=False):
        if not self.out:
            raise TimeoutError("VI_ERROR_TMO")
        if break_on_termchar and b"\n" in self.out[:count]:
            count = self.out.index(b"\n") + 1
        if self.chunk_limit:
            count = min(count, self.chunk_limit)
        got = bytes(self.out[:count])
        del self.out[:count]
        self.reads.append(len(got))
        return got

    def read_raw(self):
        got, self.out = bytes(self.out), bytearray()
        return got

    def close(self):
        self.closed = True


def test_read_block_streams_in_bounded_pieces(tmp_path):
    data = np.random.default_rng(1).bytes(3_500_000)
    fake = LoopbackN6705()
    fake.out += block(data) + b"\n"
    with open(tmp_path / "x.bin", "wb") as f:
        assert read_block(fake, f, piece=1 << 20) == len(data)
    assert (tmp_path / "x.bin").read_bytes() == data
    assert max(fake.reads) <= 1 << 20          # never more than one piece in memory
    assert not fake.out                        # the terminating LF was consumed too
    fake.out += b"#0indefinite\n"
    assert read_block(fake) == b"indefinite"


def test_read_block_short_transfer_is_a_clear_error():
    fake = LoopbackN6705()
    fake.out += b"#3100" + b"x" * 50                 # announces 100 bytes, 50 arrive
    with pytest.raises(BlockError, match="announces 100 data bytes, only 50 arrived"):
        read_block(fake)
    fake.out = bytearray(b"#2x9abc")
    with pytest.raises(BlockError, match="2 length digits"):
        read_block(fake)


# ---------------------------------------------------------------------------------- N6705: ELOG (pyvisa-sim)

def test_elog_capture_on_simulated_n6705(tmp_path):
    with N6705(SIM_RESOURCE, SIM) as a:
        settings = a.configure_elog(MAIN_AND_MARKER, ELOG_PERIOD, trigger="bus")
        assert settings["period_s"] == pytest.approx(ELOG_PERIOD)
        assert settings["channels"][0]["current_range_a"] == pytest.approx(0.1)     # set, then read back
        assert settings["channels"][1]["voltage"] and not settings["channels"][1]["current"]
        chunks = list(a.stream_elog(0.5, records_per_fetch=100))
        cond = a.conditions()
    assert [len(c) for c in chunks] == [100] * 5
    assert [c.t0 for c in chunks] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert chunks[0].voltage[0] == 3.0 and chunks[0].marker_analog[35] == 3.3
    result = segment(chunks, threshold=1.65)
    assert len(result.windows) == 5
    for w in result.windows:
        assert w.energy_j == pytest.approx(ELOG_WINDOW_J, rel=1e-12)
        assert w.duration_s == pytest.approx(40 * ELOG_PERIOD)
        assert w.avg_current_a == pytest.approx(0.011)
    assert cond["provenance"] == "measured"
    assert cond["instrument"]["idn"] == IDN and cond["instrument"]["model"] == "N6705C"
    assert cond["settings"]["records_fetched"] == 500
    assert "SENS:ELOG:PER 1.000000E-03,(@1)" in cond["commands"]
    assert cond["commands"][-1] == "ABOR:ELOG (@1,2)"
    assert cond["commands"].count("FETC:ELOG? 100,(@1,2)") == 5


def test_elog_capture_to_generic_csv_reads_back(tmp_path):
    from cryptobench.targets.trace.formats import open_trace
    with N6705(SIM_RESOURCE, SIM) as a:
        a.configure_elog(MAIN_AND_MARKER, ELOG_PERIOD)
        out = write_capture_csv(a.stream_elog(0.3, records_per_fetch=100), tmp_path / "elog.csv")
    assert out["samples"] == 300 and out["options"]["marker_kind"] == "analog"
    info, chunks = open_trace(tmp_path / "elog.csv", out["format"], **out["options"])
    result = segment(chunks, threshold=1.65)
    assert info.sample_period_s == pytest.approx(ELOG_PERIOD)
    assert [w.energy_j for w in result.windows] == pytest.approx([ELOG_WINDOW_J] * 3, rel=1e-9)


def test_instrument_error_is_raised_with_its_message():
    with N6705(SIM_RESOURCE, SIM) as a:
        with pytest.raises(InstrumentError) as e:
            a.configure_elog(MAIN_AND_MARKER, 1e-6)          # below the 102.4 µs minimum
        msg = str(e.value)
        assert '-222,"Data out of range"' in msg
        assert "SENS:ELOG:PER 1.000000E-06" in msg and "configuring the external data log" in msg
        a.configure_elog(MAIN_AND_MARKER, ELOG_PERIOD)      # the queue was drained: usable again


def test_dlog_configure_and_run_on_simulated_n6705():
    slept = []
    with N6705(SIM_RESOURCE, SIM, sleep=slept.append) as a:
        s = a.configure_dlog(MAIN_AND_MARKER, 1e-3, 2.0, trigger="bus")
        assert (s["period_s"], s["duration_s"], s["trigger_source"]) == (pytest.approx(1e-3), 2.0, "BUS")
        assert a.run_dlog() == "internal:\\cbench.dlog"
        assert slept == [2.0]
        cmds = a.conditions()["commands"]
    assert 'INIT:DLOG "internal:\\cbench.dlog"' in cmds and "TRIG:DLOG" in cmds
    assert cmds.index("TRIG:DLOG") < cmds.index("*OPC?")


def test_not_an_n6705_is_refused():
    with pytest.raises(InstrumentError, match="not a Keysight N6705"):
        N6705(instrument=LoopbackN6705(idn="Rigol Technologies,DP832,DP8C0000,00.01.14")).open()


def test_channel_specs():
    assert ChannelSpec.parse("2:v:marker") == ChannelSpec(2, current=False, voltage=True, role="marker")
    assert ChannelSpec.parse("1") == ChannelSpec(1)
    assert ChannelSpec.parse("3:i:se").role == "se"
    for bad in ("x", "1:q", "1:iv:main:extra"):
        with pytest.raises(ValueError):
            ChannelSpec.parse(bad)
    a = N6705(instrument=LoopbackN6705(), sleep=no_sleep).open()
    with pytest.raises(ValueError, match="exactly one channel with role 'main'"):
        a.configure_elog([ChannelSpec(1, role="marker")], 1e-3)
    with pytest.raises(ValueError, match="outputs 1 to 4"):
        a.configure_elog([ChannelSpec(5)], 1e-3)


# ---------------------------------------------------------------------------------- N6705: loopback fake

def _records(n, width, value=1.0):
    return ",".join(["%+.6E" % value] * (n * width))


def test_elog_extra_supply_and_protocol_errors():
    fake = LoopbackN6705(fetch=[_records(10, 4)])
    chans = [ChannelSpec(1, role="main"), ChannelSpec(3, role="se")]
    a = N6705(instrument=fake, sleep=no_sleep).open()
    # the period read back (the instrument rounds 100 µs to 102.4 µs) is the sample period
    assert a.configure_elog(chans, 1e-4)["period_s"] == pytest.approx(1.024e-4)
    assert a.conditions()["requested"]["period_s"] == 1e-4
    (chunk,) = list(a.stream_elog(10 * 1.024e-4, records_per_fetch=100))
    assert chunk.dt == pytest.approx(1.024e-4) and len(chunk) == 10
    assert set(chunk.extra) == {"current.se", "voltage.se"}

    fake.fetch = [_records(3, 4) + ",+1.0E+00"]               # 13 values: not whole records
    with pytest.raises(InstrumentError, match="13 values, not a multiple of the 4 per record"):
        list(a.stream_elog(1e-3))
    assert fake.sent[-1] == "ABOR:ELOG (@1,3)"               # aborted even on error

    clock = iter(range(0, 1000, 1))
    b = N6705(instrument=LoopbackN6705(), sleep=no_sleep, clock=lambda: float(next(clock))).open()
    b.configure_elog(chans, 1e-3)
    b.settings["period_s"] = 1e-3
    with pytest.raises(InstrumentError, match="no ELOG records for 5 s after 0 of 10"):
        list(b.stream_elog(1e-2))


def _dlog_bytes(tmp_path, plan):
    from cryptobench.targets.trace.synth import write_n6705_dlog
    opts = write_n6705_dlog(tmp_path / "src.dlog", plan)
    return (tmp_path / "src.dlog").read_bytes(), opts


def test_dlog_file_fetched_by_mmem_data_reads_back(tmp_path):
    from cryptobench.targets.trace.formats import open_trace
    from cryptobench.targets.trace.synth import PulsePlan, expected
    plan = PulsePlan(n=8, width_s=2e-3, gap_s=3e-3, high_a=0.02, low_a=0.001, dt=1e-4, v=3.3)
    data, opts = _dlog_bytes(tmp_path, plan)
    fake = LoopbackN6705(files={"internal:\\cbench.dlog": data}, chunk_limit=4096)
    with N6705(instrument=fake, sleep=no_sleep) as a:
        size = a.capture_dlog(MAIN_AND_MARKER, 1e-4, 0.05, tmp_path / "live.dlog", trigger="imm")
        cond = a.conditions()
    assert size == len(data) and (tmp_path / "live.dlog").read_bytes() == data
    assert cond["settings"]["files"] == [{"remote": "internal:\\cbench.dlog", "local": str(tmp_path / "live.dlog"),
                                          "bytes": len(data)}]
    assert "TRIG:DLOG" not in fake.sent                         # immediate trigger: none sent
    info, chunks = open_trace(tmp_path / "live.dlog", "n6705-dlog", **opts)
    result = segment(chunks, threshold=1.65)
    assert [w.energy_j for w in result.windows] == pytest.approx(expected(plan)["energy_j"], rel=1e-6)


def test_dlog_exported_csv_is_fetched(tmp_path):
    fake = LoopbackN6705()
    with N6705(instrument=fake, sleep=no_sleep) as a:
        a.capture_dlog(MAIN_AND_MARKER, 1e-3, 1.0, tmp_path / "x.csv", as_csv=True)
    assert 'MMEM:EXP:DLOG "internal:\\cbench.csv"' in fake.sent
    assert (tmp_path / "x.csv").read_bytes().startswith(b"Sample interval,0.001")


@pytest.mark.parametrize("raw, words", [
    (b"#3ab5hello\n", "3 length digits"),                      # wrong length digits
    (b"#3100" + b"x" * 50, "only 50 arrived"),                   # short data
    (b"hello\n", "expected '#'"),
])
def test_malformed_mmem_data_block(tmp_path, raw, words):
    fake = LoopbackN6705(raw={"internal:\\x.dlog": raw})
    with N6705(instrument=fake, sleep=no_sleep) as a:
        with pytest.raises(InstrumentError, match=words) as e:
            a.fetch_file("internal:\\x.dlog", tmp_path / "x.dlog")
    assert 'MMEM:DATA? "internal:\\x.dlog"' in str(e.value)


def test_missing_instrument_file_reports_the_instrument_error(tmp_path):
    fake = LoopbackN6705()
    with N6705(instrument=fake, sleep=no_sleep) as a:
        with pytest.raises(InstrumentError, match="File name not found|transfer failed"):
            a.fetch_file("internal:\\none.dlog", tmp_path / "n.dlog")


# ---------------------------------------------------------------------------------- Otii (fake TCP server)

DT = 0.00025                     # the Arc's 4 kS/s
N, LEAD, WIDTH, GAP, WINDOWS = 4000, 200, 300, 300, 6
I_LOW, I_HIGH, V_MAIN = 0.001, 0.021, 3.3
OTII_WINDOW_J = WIDTH * DT * I_HIGH * V_MAIN


def otii_trace():
    high = np.zeros(N, dtype=bool)
    edges = [{"timestamp": 0.0, "value": False}]
    for k in range(WINDOWS):
        a = LEAD + k * (WIDTH + GAP)
        high[a:a + WIDTH] = True
        # GPI edges are asynchronous to the samples: half a period before the first / after the last
        edges += [{"timestamp": (a - 0.5) * DT, "value": True}, {"timestamp": (a + WIDTH - 0.5) * DT, "value": False}]
    return np.where(high, I_HIGH, I_LOW), edges


class FakeOtiiServer(socketserver.ThreadingTCPServer):
    """Answers the documented Otii TCP server messages for one Arc and one recording; CR LF framing."""
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, fail=None, drop=None):
        super().__init__(("127.0.0.1", 0), FakeOtiiHandler)
        self.fail, self.drop = fail or {}, drop
        self.current, self.edges = otii_trace()
        self.enabled, self.recording, self.requests = set(), False, []
        self.main_voltage = 3.3

    def answer(self, req):
        cmd, data = req["cmd"], req.get("data", {})
        self.requests.append(req)
        ok = lambda d=None: {"type": "response", "cmd": cmd, "trans_id": req["trans_id"], "data": d or {}}
        if cmd in self.fail:
            return {"type": "error", "cmd": cmd, "trans_id": req["trans_id"], **self.fail[cmd]}
        dev = "ARC-0001"
        if cmd == "otii_get_devices":
            return ok({"devices": [{"type": "Arc", "device_id": dev, "name": "Arc"}]})
        if cmd == "arc_get_version":
            return ok({"hw_version": "Arc A", "fw_version": "1.2.3"})
        if cmd == "otii_get_active_project":
            return ok({"project_id": -1})
        if cmd == "otii_create_project":
            return ok({"project_id": 7})
        if cmd.startswith("arc_"):
            if data.get("device_id") != dev:
                return {"type": "error", "cmd": cmd, "trans_id": req["trans_id"], "errorcode": "Device not connected",
                        "data": {"device_id": data.get("device_id")}}
            if cmd == "arc_set_main_voltage":
                self.main_voltage = data["value"]
            if cmd == "arc_enable_channel":
                self.enabled.add(data["channel"])
            if cmd == "arc_get_main_voltage":
                return ok({"value": self.main_voltage})
            return ok()
        if cmd in ("project_start_recording", "project_stop_recording"):
            assert data["project_id"] == 7
            self.recording = cmd == "project_start_recording"
            return ok()
        if cmd == "project_get_last_recording":
            return ok({"recording_id": 3, "name": "Recording 1"})
        if cmd.startswith("recording_"):
            missing = [k for k in ("recording_id", "device_id", "channel") if k not in data]
            if cmd == "recording_get_channel_data":
                missing += [k for k in ("index", "count") if k not in data]
            if missing:
                return {"type": "error", "cmd": cmd, "trans_id": req["trans_id"],
                        "errorcode": "Missing key in request", "data": {"key": missing[0]}}
            ch = data["channel"]
            assert ch in self.enabled, f"channel {ch} was not enabled"
            if cmd == "recording_get_channel_data_count":
                return ok({"count": len(self.edges) if ch == "i1" else N})
            a, n = data["index"], data["count"]
            if ch == "i1":
                return ok({"data_type": "digital", "values": self.edges[a:a + n]})
            values = self.current[a:a + n] if ch == "mc" else np.full(len(self.current[a:a + n]), V_MAIN)
            return ok({"data_type": "analog", "timestamp": a * DT, "interval": DT, "values": values.tolist()})
        return {"type": "error", "cmd": cmd, "trans_id": req["trans_id"], "errorcode": "Invalid command", "data": {}}


class FakeOtiiHandler(socketserver.StreamRequestHandler):
    disable_nagle_algorithm = True

    def handle(self):
        self.wfile.write(b'{"type": "information", "data": {"message": "connected to fake Otii"}}\r\n')
        for line in self.rfile:
            assert line.endswith(b"\r\n"), line
            req = json.loads(line)
            if req["cmd"] == self.server.drop:
                self.wfile.write(b'{"type": "response", "tr')          # half a message, then gone
                return
            reply = self.server.answer(req)
            self.wfile.write(b'{"type": "progress", "data": {"percent": 50}}\r\n')
            self.wfile.write(json.dumps(reply).encode() + b"\r\n")


@pytest.fixture
def otii_server():
    servers = []

    def start(**kw):
        srv = FakeOtiiServer(**kw)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_otii_capture_pages_into_chunks(otii_server, tmp_path):
    from cryptobench.targets.trace.formats import open_trace
    srv = otii_server()
    host, port = srv.server_address
    with OtiiClient(host, port, timeout_s=5) as c:
        cap = OtiiCapture(c, main_voltage=3.3, marker="gpi1", page=1000, sleep=no_sleep)
        chunks = list(cap.capture(1.0))
        cond = cap.conditions()
    assert [len(ch) for ch in chunks] == [1000] * 4
    assert srv.enabled == {"mc", "mv", "i1"}
    assert np.all(np.concatenate([ch.marker for ch in chunks]) == (otii_trace()[0] == I_HIGH))
    result = segment(chunks)
    assert len(result.windows) == WINDOWS
    assert [w.energy_j for w in result.windows] == pytest.approx([OTII_WINDOW_J] * WINDOWS, rel=1e-12)
    assert [w.start_s for w in result.windows] == pytest.approx([(LEAD + k * 600) * DT for k in range(WINDOWS)])
    assert cond["provenance"] == "measured" and cond["instrument"]["device"]["name"] == "Arc"
    assert cond["instrument"]["version"]["fw_version"] == "1.2.3"
    assert cond["settings"]["sample_interval_s"] == DT and cond["settings"]["recording_id"] == 3
    assert "arc_set_main" not in cond["commands"]                  # the DUT's supply is not switched
    cmds = [r["cmd"] for r in srv.requests]
    assert cmds.index("project_start_recording") < cmds.index("project_stop_recording")

    # the same recording as a generic CSV that `energy import` reads
    c2 = OtiiClient(host, port)
    out = write_capture_csv(OtiiCapture(c2, page=1000, sleep=no_sleep).capture(1.0), tmp_path / "otii.csv")
    c2.close()
    info, chunks = open_trace(tmp_path / "otii.csv", out["format"], **out["options"])
    assert [w.energy_j for w in segment(chunks).windows] == pytest.approx([OTII_WINDOW_J] * WINDOWS, rel=1e-9)


def test_otii_error_reply_is_a_clear_error(otii_server):
    srv = otii_server(fail={"arc_set_main_voltage": {"errorcode": "Invalid key value",
                                                     "data": {"key": "value", "value": 9.0}},
                            "project_start_recording": {"errorcode": "Command failure",
                                                        "data": {"message": "No license"}}})
    host, port = srv.server_address
    with OtiiClient(host, port) as c:
        with pytest.raises(OtiiError, match="arc_set_main_voltage failed: Invalid key value: key=value, value=9.0"):
            OtiiCapture(c, main_voltage=9.0, sleep=no_sleep).record(0.1)
        with pytest.raises(OtiiError, match="project_start_recording failed: Command failure: No license"):
            OtiiCapture(c, sleep=no_sleep).record(0.1)


def test_otii_dropped_connection_is_a_clear_error(otii_server):
    srv = otii_server(drop="recording_get_channel_data")
    host, port = srv.server_address
    with OtiiClient(host, port, timeout_s=5) as c:
        with pytest.raises(OtiiConnectionError, match="connection closed by the server while waiting for the "
                                                      "reply to recording_get_channel_data"):
            list(OtiiCapture(c, sleep=no_sleep).capture(0.1))


def test_otii_refused_and_resource_parsing(otii_server):
    srv = otii_server()
    host, port = srv.server_address
    srv.shutdown()
    srv.server_close()
    with pytest.raises(OtiiConnectionError, match="cannot connect"):
        OtiiClient(host, port, timeout_s=2).connect()
    assert parse_resource("10.0.0.5") == ("10.0.0.5", 1905)
    assert parse_resource("otii.lab:2000") == ("otii.lab", 2000)
    with pytest.raises(ValueError):
        parse_resource("host:port")
    with pytest.raises(ValueError, match="marker"):
        OtiiCapture(OtiiClient(), marker="d7")


def test_generic_csv_writer_marks_unknown_states(tmp_path):
    m = np.array([0, 1, MARKER_X, 0], dtype=np.uint8)
    out = write_capture_csv([Chunk(current=np.ones(4), t0=0.0, dt=1e-3, marker=m)], tmp_path / "m.csv")
    assert (tmp_path / "m.csv").read_text().splitlines()[1:] == ["0,1,0", "0.001,1,1", "0.002,1,X", "0.003,1,0"]
    assert out["options"] == {"time_col": "time_s", "current_col": "current_a", "marker_col": "marker"}


# ---------------------------------------------------------------------------------- command line

def _import_line(stdout: str) -> list[str]:
    import shlex
    line = next(l for l in stdout.splitlines() if l.startswith("import: "))
    return shlex.split(line[len("import: cryptobench "):])


@pytest.mark.e2e
def test_cli_capture_n6705_elog_then_import(tmp_path):
    out = tmp_path / "live.csv"
    r = cli("energy", "capture", "--instrument", "n6705", "--resource", SIM_RESOURCE, "--backend", SIM,
            "--period", "0.001", "--duration", "0.5", "--records", "100",
            "--channel", "1:iv", "--channel", "2:v:marker", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "500 samples" in r.stdout and "--format generic-csv" in r.stdout
    side = json.loads((tmp_path / "live.csv.json").read_text())
    assert side["conditions"]["instrument"]["idn"] == IDN and side["conditions"]["provenance"] == "measured"
    r = cli(*_import_line(r.stdout), "--threshold", "1.65", "--expect", "5")
    assert r.returncode == 0, r.stderr
    assert "5 windows" in r.stdout and f"median {ELOG_WINDOW_J:.6e} J" in r.stdout


@pytest.mark.e2e
def test_cli_capture_n6705_instrument_error(tmp_path):
    r = cli("energy", "capture", "--instrument", "n6705", "--resource", SIM_RESOURCE, "--backend", SIM,
            "--period", "1e-6", "--duration", "0.5", "--channel", "1:iv", "--channel", "2:v:marker",
            "--out", str(tmp_path / "x.csv"))
    assert r.returncode == 2 and 'Data out of range' in r.stderr and r.stderr.count("\n") == 1


def test_cli_capture_n6705_dlog(tmp_path, monkeypatch, capsys):
    import pyvisa
    from cryptobench.cli import main
    from cryptobench.targets.trace.synth import PulsePlan, expected
    plan = PulsePlan(n=5, width_s=2e-3, gap_s=3e-3, dt=1e-4)
    data, _ = _dlog_bytes(tmp_path, plan)
    fake = LoopbackN6705(files={"internal:\\cbench.dlog": data})

    class RM:
        def __init__(self, backend):
            assert backend == "@py"

        def open_resource(self, name):
            assert name == "TCPIP0::10.0.0.9::inst0::INSTR"
            return fake

        def close(self):
            pass

    monkeypatch.setattr(pyvisa, "ResourceManager", RM)
    out = tmp_path / "live.dlog"
    assert main(["energy", "capture", "--instrument", "n6705", "--resource", "TCPIP0::10.0.0.9::inst0::INSTR",
                 "--mode", "dlog", "--period", "1e-4", "--duration", "0.03", "--channel", "1:iv",
                 "--channel", "2:v:marker", "--out", str(out)]) == 0
    assert out.read_bytes() == data and fake.closed
    stdout = capsys.readouterr().out
    assert "--format n6705-dlog" in stdout and "marker_column=volt2" in stdout
    assert main(_import_line(stdout) + ["--threshold", "1.65", "--expect", str(plan.n)]) == 0
    assert f"median {expected(plan)['energy_j'][0]:.6e} J" in capsys.readouterr().out


@pytest.mark.e2e
def test_cli_capture_otii(otii_server, tmp_path):
    srv = otii_server()
    host, port = srv.server_address
    out = tmp_path / "otii.csv"
    r = cli("energy", "capture", "--instrument", "otii", "--resource", f"{host}:{port}", "--duration", "0.05",
            "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"{N:,} samples" in r.stdout
    r = cli(*_import_line(r.stdout), "--expect", str(WINDOWS))
    assert r.returncode == 0, r.stderr
    assert f"median {OTII_WINDOW_J:.6e} J" in r.stdout
