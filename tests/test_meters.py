"""Host energy meters (RAPL powercap, perf power/energy-*, NVML) against fake sysfs trees and a
patched NVML, the energy windows of the host harness, and `cryptobench run --energy` end to end.

Behaviour only: no test depends on how fast this machine is."""
import errno
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, cli
from cryptobench.core.errors import HarnessError
from cryptobench.targets.host.meters import CounterReset, MeterUnavailable, get_meter
from cryptobench.targets.host.meters.base import ABSENT, NOT_READABLE, NOT_SUPPORTED, Meter, estimate_update_period
from cryptobench.targets.host.meters.nvml import NvmlMeter
from cryptobench.targets.host.meters.perf_energy import PerfEnergyMeter
from cryptobench.targets.host.meters.rapl import RaplMeter

SCHEMA = json.loads((ROOT / "docs" / "result.schema.json").read_text())


# ------------------------------------------------------------------------------------ RAPL
def zone(root: Path, entry: str, name: str, energy: int = 1000, max_range: int = 262143328850) -> Path:
    d = root / entry
    d.mkdir(parents=True)
    (d / "name").write_text(name + "\n")
    (d / "energy_uj").write_text(f"{energy}\n")
    (d / "max_energy_range_uj").write_text(f"{max_range}\n")
    return d


@pytest.fixture
def powercap(tmp_path):
    """A laptop-like powercap tree: a package with core, uncore and dram sub-zones, psys, and the
    MMIO duplicate of the package; plus the control-type directory that is not a zone."""
    root = tmp_path / "powercap"
    (root / "intel-rapl").mkdir(parents=True)
    (root / "intel-rapl" / "enabled").write_text("1\n")
    zone(root, "intel-rapl:0", "package-0", 5_000_000, max_range=10_000_000)
    zone(root, "intel-rapl:0:0", "core", 2_000_000, max_range=10_000_000)
    zone(root, "intel-rapl:0:1", "uncore", 100_000, max_range=10_000_000)
    zone(root, "intel-rapl:0:2", "dram", 300_000, max_range=10_000_000)
    zone(root, "intel-rapl:1", "psys", 9_000_000, max_range=10_000_000)
    zone(root, "intel-rapl-mmio:0", "package-0", 5_000_000, max_range=10_000_000)
    return root


def set_uj(root: Path, entry: str, value: int) -> None:
    (root / entry / "energy_uj").write_text(f"{value}\n")


def test_rapl_enumerates_zones_and_skips_the_mmio_duplicate(powercap):
    m = RaplMeter(powercap)
    assert m.domains == ["package-0", "package-0/core", "package-0/uncore", "package-0/dram", "psys"]
    assert m.main_domain == "package" and m.main_parts == ["package-0"]
    d = m.describe()
    assert any("intel-rapl-mmio:0" in s for s in d["skipped"])
    assert d["zones"]["package-0/dram"]["zone"] == "intel-rapl:0:2"
    assert d["provenance"] == "measured" and d["resolution_j"] == 1e-6
    assert "dram" in m.what.lower()


def test_rapl_delta_per_domain_and_main_sum_over_packages(tmp_path):
    root = tmp_path / "pc"
    zone(root, "intel-rapl:0", "package-0", 1_000_000)
    zone(root, "intel-rapl:1", "package-1", 2_000_000)
    zone(root, "intel-rapl:0:0", "core", 500_000)
    m = RaplMeter(root)
    a = m.read()
    set_uj(root, "intel-rapl:0", 1_250_000)
    set_uj(root, "intel-rapl:1", 2_500_000)
    set_uj(root, "intel-rapl:0:0", 600_000)
    b = m.read()
    assert b.t_ns >= a.t_ns
    d = m.delta(a, b)
    assert d["package-0"] == pytest.approx(0.25)
    assert d["package-1"] == pytest.approx(0.5)
    assert d["package-0/core"] == pytest.approx(0.1)
    assert d["package"] == pytest.approx(0.75)          # both sockets


def test_rapl_unwraps_across_max_energy_range(powercap):
    m = RaplMeter(powercap)
    set_uj(powercap, "intel-rapl:0", 9_900_000)         # 100 000 µJ below the wrap at 10 000 000
    a = m.read()
    set_uj(powercap, "intel-rapl:0", 50_000)            # wrapped: 100 000 + 50 000 µJ later
    b = m.read()
    assert m.delta(a, b)["package-0"] == pytest.approx(0.15)


def test_rapl_reset_is_refused_not_guessed(powercap):
    m = RaplMeter(powercap)
    a = m.read()                                         # package at 5 000 000 µJ
    set_uj(powercap, "intel-rapl:0", 4_000_000)          # back by 1 J of a 10 J range: no wrap does that
    b = m.read()
    with pytest.raises(CounterReset) as exc:
        m.delta(a, b)
    assert exc.value.domain == "package-0" and "reset" in str(exc.value)


def test_rapl_zone_that_disappears_invalidates_the_window(powercap):
    m = RaplMeter(powercap)
    a = m.read()
    shutil.rmtree(powercap / "intel-rapl:0:2")
    b = m.read()
    assert "package-0/dram" in b.missing
    with pytest.raises(CounterReset):
        m.delta(a, b)


def test_rapl_unreadable_energy_is_told_apart_from_absent(powercap):
    real = Path.read_text

    def read_text(path):
        if path.name == "energy_uj":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(powercap, read_text=read_text)
    assert exc.value.kind == NOT_READABLE
    assert "permission denied" in exc.value.reason
    assert "chmod o+r" in exc.value.remedy and "CVE-2020-8694" in exc.value.remedy
    assert "run as root" in exc.value.remedy


def test_rapl_unreadable_through_a_patched_open(powercap, monkeypatch):
    import builtins
    real_open = builtins.open

    def fake_open(path, *a, **kw):
        if str(path).endswith("energy_uj"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", fake_open)
    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(powercap)
    assert exc.value.kind == NOT_READABLE


def test_rapl_directory_in_place_of_energy_file_is_not_readable(powercap):
    f = powercap / "intel-rapl:0" / "energy_uj"
    f.unlink()
    f.mkdir()
    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(powercap)
    assert exc.value.kind == NOT_READABLE and "intel-rapl:0" in exc.value.reason


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway")
def test_rapl_mode_000_file_is_not_readable(powercap):
    (powercap / "intel-rapl:0" / "energy_uj").chmod(0)
    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(powercap)
    assert exc.value.kind == NOT_READABLE


def test_rapl_absent(tmp_path):
    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(tmp_path / "nowhere")
    assert exc.value.kind == ABSENT and "modprobe" in exc.value.remedy
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "intel-rapl-mmio:0").mkdir()   # only the MMIO duplicate: still no RAPL zones
    with pytest.raises(MeterUnavailable) as exc:
        RaplMeter(tmp_path / "empty")
    assert exc.value.kind == ABSENT


def test_rapl_root_from_the_environment(powercap, monkeypatch):
    monkeypatch.setenv("CRYPTOBENCH_POWERCAP_ROOT", str(powercap))
    m = get_meter("rapl")
    assert isinstance(m, RaplMeter) and m.root == powercap
    monkeypatch.setenv("CRYPTOBENCH_POWERCAP_ROOT", str(powercap / "gone"))
    with pytest.raises(MeterUnavailable):
        get_meter("rapl")


def test_frozen_counter_has_no_measured_update_period(powercap):
    assert estimate_update_period(RaplMeter(powercap), budget_s=0.02) is None


# ------------------------------------------------------------------------------------ perf
@pytest.fixture
def perf_tree(tmp_path):
    root = tmp_path / "event_source"
    pmu = root / "power"
    (pmu / "events").mkdir(parents=True)
    (pmu / "type").write_text("23\n")
    (pmu / "cpumask").write_text("0,28\n")
    (pmu / "format").mkdir()
    (pmu / "format" / "event").write_text("config:0-7\n")
    for ev, code in (("energy-pkg", "0x02"), ("energy-cores", "0x01"), ("energy-ram", "0x03")):
        (pmu / "events" / ev).write_text(f"event={code}\n")
        (pmu / "events" / f"{ev}.scale").write_text("2.3283064365386962890625e-10\n")
        (pmu / "events" / f"{ev}.unit").write_text("Joules\n")
    (root / "cpu").mkdir()
    return root


class FakePerf:
    def __init__(self):
        self.opened, self.counts, self.closed = [], {}, []

    def open(self, pmu_type, config, cpu):
        fd = 100 + len(self.opened)
        self.opened.append((pmu_type, config, cpu))
        self.counts[fd] = 0
        return fd

    def read(self, fd):
        return self.counts[fd]


def test_perf_discovers_events_and_opens_one_per_package(perf_tree):
    fake = FakePerf()
    m = PerfEnergyMeter(perf_tree, open_event=fake.open, read_fd=fake.read, close_fd=fake.closed.append)
    assert set(m.domains) == {"pkg", "cores", "ram"} and m.main_domain == "pkg"
    assert sorted(fake.opened) == sorted((23, c, cpu) for c in (1, 2, 3) for cpu in (0, 28))
    assert m.resolution_j == pytest.approx(2.3283064365386962890625e-10)
    a = m.read()
    for fd, (_, config, _) in zip(list(fake.counts), fake.opened):
        fake.counts[fd] += 2 ** 32 if config == 2 else 2 ** 30      # 1 J per package on pkg
    b = m.read()
    d = m.delta(a, b)
    assert d["pkg"] == pytest.approx(2.0)                 # two packages in the cpumask
    assert d["cores"] == pytest.approx(0.5)
    assert m.describe()["events"]["pkg"]["event"] == "power/energy-pkg/"
    m.close()
    assert len(fake.closed) == 6


def test_perf_count_going_back_is_a_reset(perf_tree):
    fake = FakePerf()
    m = PerfEnergyMeter(perf_tree, open_event=fake.open, read_fd=fake.read, close_fd=lambda fd: None)
    for fd in fake.counts:
        fake.counts[fd] = 1000
    a = m.read()
    for fd in fake.counts:
        fake.counts[fd] = 10
    with pytest.raises(CounterReset):
        m.delta(a, m.read())


def test_perf_permission_denied_names_the_paranoid_remedy(perf_tree):
    def denied(*_):
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))
    with pytest.raises(MeterUnavailable) as exc:
        PerfEnergyMeter(perf_tree, open_event=denied)
    assert exc.value.kind == NOT_READABLE
    assert "perf_event_paranoid" in exc.value.remedy and "CAP_PERFMON" in exc.value.remedy


def test_perf_real_syscall_refusal_is_not_supported(perf_tree):
    """The real perf_event_open, asked for a PMU type this kernel does not have, fails: the meter
    says the event is not supported here (or not permitted, where the caller lacks the right)."""
    (perf_tree / "power" / "type").write_text("4242\n")
    (perf_tree / "power" / "cpumask").write_text("0\n")
    with pytest.raises(MeterUnavailable) as exc:
        PerfEnergyMeter(perf_tree)
    assert exc.value.kind in (NOT_SUPPORTED, NOT_READABLE)
    assert "perf_event_open(power/energy-" in exc.value.reason
    if exc.value.kind == NOT_SUPPORTED:
        assert "not support" in exc.value.reason


def test_perf_absent(tmp_path, perf_tree):
    with pytest.raises(MeterUnavailable) as exc:
        PerfEnergyMeter(tmp_path / "nothing")
    assert exc.value.kind == ABSENT
    for f in (perf_tree / "power" / "events").iterdir():
        f.unlink()
    with pytest.raises(MeterUnavailable) as exc:
        PerfEnergyMeter(perf_tree, open_event=FakePerf().open)
    assert exc.value.kind == ABSENT and "energy-" in exc.value.reason


# ------------------------------------------------------------------------------------ NVML
@pytest.fixture
def fake_nvml(monkeypatch):
    pynvml = pytest.importorskip("pynvml")
    state = {"mj": {0: 1_000_000, 1: 5_000_000}, "unsupported": set(), "shutdown": 0}

    def energy(h):
        if h in state["unsupported"]:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return state["mj"][h]

    monkeypatch.setattr(pynvml, "nvmlInit", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: state.__setitem__("shutdown", state["shutdown"] + 1))
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 2)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByIndex", lambda i: i)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetName", lambda h: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(pynvml, "nvmlDeviceGetTotalEnergyConsumption", energy)
    monkeypatch.setattr(pynvml, "nvmlSystemGetDriverVersion", lambda: "550.54.15")
    return pynvml, state


def test_nvml_reads_the_total_energy_counter(fake_nvml):
    _, state = fake_nvml
    m = NvmlMeter()
    assert m.domains == ["gpu0", "gpu1"] and m.main_domain == "gpu"
    a = m.read()
    state["mj"][0] += 1500
    state["mj"][1] += 250
    d = m.delta(a, m.read())
    assert d["gpu0"] == pytest.approx(1.5) and d["gpu1"] == pytest.approx(0.25) and d["gpu"] == pytest.approx(1.75)
    desc = m.describe()
    assert desc["gpus"]["gpu0"].startswith("NVIDIA H100") and desc["driver"] == "550.54.15"
    assert desc["resolution_j"] == 1e-3
    m.close()
    assert state["shutdown"] == 1


def test_nvml_counter_going_back_is_a_reset(fake_nvml):
    _, state = fake_nvml
    m = NvmlMeter()
    a = m.read()
    state["mj"][1] = 10
    with pytest.raises(CounterReset) as exc:
        m.delta(a, m.read())
    assert exc.value.domain == "gpu1"


def test_nvml_not_supported(fake_nvml):
    _, state = fake_nvml
    state["unsupported"] = {1}
    assert NvmlMeter().domains == ["gpu0"]               # the GPU that has the counter is kept
    state["unsupported"] = {0, 1}
    with pytest.raises(MeterUnavailable) as exc:
        NvmlMeter()
    assert exc.value.kind == NOT_SUPPORTED and "Volta" in exc.value.reason
    assert state["shutdown"] >= 1                        # NVML released again


def test_nvml_missing_library_and_missing_module(monkeypatch):
    pynvml = pytest.importorskip("pynvml")

    def no_lib():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", no_lib)
    with pytest.raises(MeterUnavailable) as exc:
        NvmlMeter()
    assert exc.value.kind == ABSENT and "library" in exc.value.reason.lower()
    assert "driver" in exc.value.remedy

    monkeypatch.setitem(sys.modules, "pynvml", None)      # nvidia-ml-py not installed
    with pytest.raises(MeterUnavailable) as exc:
        NvmlMeter()
    assert exc.value.kind == ABSENT and "pip install nvidia-ml-py" in exc.value.remedy


def test_auto_takes_the_first_usable_meter(powercap, tmp_path, monkeypatch):
    monkeypatch.setenv("CRYPTOBENCH_POWERCAP_ROOT", str(tmp_path / "none"))
    monkeypatch.setenv("CRYPTOBENCH_PERF_EVENT_ROOT", str(tmp_path / "none"))
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(MeterUnavailable) as exc:
        get_meter("auto")
    assert all(n in exc.value.reason for n in ("rapl", "perf", "nvml"))
    monkeypatch.setenv("CRYPTOBENCH_POWERCAP_ROOT", str(powercap))
    assert get_meter("auto").name == "rapl"


# ------------------------------------------------------------------------- energy arithmetic
class Clock:
    def __init__(self):
        self.ns = 1_000_000_000

    def monotonic_ns(self):
        return self.ns


class CounterMeter(Meter):
    name = "rapl"
    domains = ["package-0"]
    main_domain = "package"
    main_parts = ["package-0"]
    resolution_j = 1e-6
    what = "test"

    def __init__(self):
        self.uj = 0

    def _read_counters(self):
        return {"package-0": self.uj}, ()

    def _delta_one(self, domain, old, new):
        if new < old:
            raise CounterReset(domain, "went back")
        return (new - old) * 1e-6


class ModelProc:
    """A harness whose windows cost idle power plus a fixed energy per operation."""

    def __init__(self, meter, clock, idle_w, op_j, ops_per_window, reset_on=()):
        self.meter, self.clock, self.idle_w, self.op_j, self.ops = meter, clock, idle_w, op_j, ops_per_window
        self.reset_on, self.windows = set(reset_on), 0

    def _spend(self, ns, extra_j=0.0):
        self.clock.ns += ns
        self.meter.uj += round((self.idle_w * ns / 1e9 + extra_j) * 1e6)

    def idle(self, ns):
        self._spend(ns)
        return ns

    def window(self, slot, k, min_ns):
        self.windows += 1
        self._spend(min_ns, self.op_j * self.ops)
        if self.windows in self.reset_on:
            self.meter.uj = 0
        return {"k": k, "ops": self.ops, "ns": min_ns, "cyc": 0}


@pytest.fixture
def model(monkeypatch):
    import cryptobench.targets.host.meters.base as base
    import cryptobench.targets.host.meters.session as session
    clock = Clock()
    monkeypatch.setattr(base, "time", clock)
    monkeypatch.setattr(session, "time", clock)
    monkeypatch.setattr(session, "estimate_update_period", lambda m: None)
    return clock


def test_idle_subtraction_gives_the_operations_own_energy(model):
    from cryptobench.targets.host.meters.session import EnergySession
    meter = CounterMeter()
    proc = ModelProc(meter, model, idle_w=7.0, op_j=2e-6, ops_per_window=50_000)
    s = EnergySession(meter, windows=5)
    s.start(proc)
    assert s.window_s == pytest.approx(0.1)
    assert s.idle_power()["package"] == pytest.approx(7.0)
    windows = [s.window(proc, 1, 1) for _ in range(5)]
    en, why = s.cell_energy("sha256", {"bytes": 64}, windows)
    assert why == "" and en["provenance"] == "measured"
    assert en["per_op_j"] == pytest.approx(2e-6, rel=1e-3)
    assert en["gross_per_op_j"] == pytest.approx(2e-6 + 7.0 * 0.1 / 50_000, rel=1e-3)
    assert en["idle_power_w"] == pytest.approx(7.0)
    assert en["stats"]["n"] == 5 and en["dropped_windows"] == 0 and en["flags"] == []
    assert en["domains"]["package-0"]["per_op_j"] == pytest.approx(2e-6, rel=1e-3)
    # per-unit figures of a payload op: 64 B in 2 µs
    assert en["time_per_op_s"] == pytest.approx(2e-6)
    assert en["avg_power_w"] == pytest.approx(1.0, rel=1e-3)
    assert en["energy_per_byte_j"] == pytest.approx(2e-6 / 64, rel=1e-3)
    assert en["mJ_per_Mb"] == pytest.approx(2e-6 * 1e3 / (512 / 1e6), rel=1e-3)
    summary = s.summary()
    assert summary["idle"]["n"] == 3 and summary["pipe_round_trip_s"] == 0
    assert summary["update_period_s"] == meter.update_period_s


def test_a_window_across_a_reset_is_dropped_and_counted(model):
    from cryptobench.targets.host.meters.session import EnergySession
    meter = CounterMeter()
    proc = ModelProc(meter, model, idle_w=5.0, op_j=1e-6, ops_per_window=10_000, reset_on={2})
    s = EnergySession(meter, windows=5)
    s.start(proc)
    windows = [s.window(proc, 1, 1) for _ in range(5)]
    en, _ = s.cell_energy("ecjpake-exchange", {}, windows)
    assert en["dropped_windows"] == 1 and "counter-reset" in en["flags"]
    assert en["stats"]["n"] == 4 and len(en["windows"]) == 5 and "reset" in en["windows"][1]
    assert en["per_op_j"] == pytest.approx(0.5e-6, rel=1e-3)     # whole exchange / 2
    assert s.summary()["dropped_windows"] == 1
    none, why = s.cell_energy("sha256", {"bytes": 64}, [w for w in windows if "reset" in w])
    assert none is None and "dropped" in why


def test_energy_within_idle_noise_is_flagged(model):
    from cryptobench.targets.host.meters.session import EnergySession
    meter = CounterMeter()
    proc = ModelProc(meter, model, idle_w=10.0, op_j=0.0, ops_per_window=1000)
    s = EnergySession(meter, windows=3)
    s.start(proc)
    en, _ = s.cell_energy("sha256", {"bytes": 64}, [s.window(proc, 1, 1) for _ in range(3)])
    assert en["per_op_j"] == pytest.approx(0.0, abs=1e-9)
    assert "not-above-idle" in en["flags"] and "avg_power_w" not in en


# -------------------------------------------------------------------- harness energy windows
def test_harness_window_and_idle(harness):
    from cryptobench.targets.host.harness import HarnessProcess
    with HarnessProcess() as h:
        h.setup(7, "openssl", "sha256", {"bytes": 64})
        w = h.window(7, 10, 2_000_000)
        assert w["ops"] >= 10 and w["ops"] % 10 == 0 and w["ns"] >= 2_000_000 and w["k"] == 10
        assert h.idle(1_000_000) >= 1_000_000
        assert h.idle(0) >= 0
        with pytest.raises(HarnessError, match="unknown slot"):
            h.window(8, 10, 1000)
        with pytest.raises(HarnessError, match="k must be"):
            h.window(7, 0, 1000)
        with pytest.raises(HarnessError, match="at most"):
            h.idle(10 ** 15)
        h.teardown(7)


# ------------------------------------------------------------------------------- end to end
class FakeRapl:
    """A powercap tree whose package counter a thread advances at a constant rate (and wraps at a
    small max_energy_range_uj, so that runs cross wraps), written atomically like sysfs reads."""

    def __init__(self, root: Path, watts: float, max_range_uj: int = 8_000_000):
        self.root, self.watts, self.max = root, watts, max_range_uj
        zone(root, "intel-rapl:0", "package-0", 0, max_range_uj)
        zone(root, "intel-rapl:0:0", "core", 0, max_range_uj)
        zone(root, "intel-rapl-mmio:0", "package-0", 0, max_range_uj)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _write(self, entry, value):
        tmp = self.root / entry / ".energy_uj.tmp"
        tmp.write_text(f"{value}\n")
        os.replace(tmp, self.root / entry / "energy_uj")

    def _run(self):
        t0 = time.monotonic()
        while not self.stop.is_set():
            uj = int(self.watts * (time.monotonic() - t0) * 1e6)
            self._write("intel-rapl:0", uj % self.max)
            self._write("intel-rapl:0:0", (uj // 2) % self.max)
            time.sleep(0.001)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


@pytest.mark.e2e
def test_run_with_rapl_energy_end_to_end(harness, tmp_path):
    with FakeRapl(tmp_path / "powercap", watts=10.0) as fake:
        out = tmp_path / "run.json"
        env = {"CRYPTOBENCH_POWERCAP_ROOT": str(fake.root)}
        proc = cli("run", "--op", "sha256", "--param", "bytes=64", "--engine", "openssl-hw", "--energy", "rapl",
                   "--repeat", "3", "--min-time", "0.001", "--db", str(tmp_path / "db.sqlite"), "--json", str(out),
                   env=env)
        assert proc.returncode == 0, proc.stderr
        csv = cli("show", "latest", "--db", str(tmp_path / "db.sqlite"), "--format", "csv")
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    cell = doc["results"][0]
    assert cell["status"] == "ok" and cell["kat"] == "pass"
    en = cell["energy"]
    assert en["provenance"] == "measured" and en["meter"]["name"] == "rapl" and en["meter"]["domain"] == "package"
    assert en["stats"]["n"] + en["dropped_windows"] == 5 == len(en["windows"])
    assert en["stats"]["n"] >= 3
    assert en["window_s"] >= 0.1
    assert en["idle_power_w"] == pytest.approx(10.0, rel=0.3)
    # a constant-rate counter: everything is idle, the operation's own energy is ~0 per window
    assert abs(sum(en["per_window_j"]) / len(en["per_window_j"])) < 0.3 * 10.0 * en["window_s"]
    cond = doc["conditions"]["energy_meter"]
    assert cond["meter"] == "rapl" and cond["provenance"] == "measured" and cond["main_domain"] == "package"
    assert cond["idle"]["power_w"]["package"] == pytest.approx(10.0, rel=0.3)
    assert cond["idle"]["power_w"]["package-0/core"] == pytest.approx(5.0, rel=0.3)
    assert cond["idle"]["n"] >= 4                         # 3 at the start, 1 after the group
    assert cond["pipe_round_trip_s"] > 0 and len(cond["pipe_round_trips_ns"]) >= 3
    assert any("intel-rapl-mmio:0" in s for s in cond["description"]["skipped"])
    assert "µJ" in proc.stdout and "energy: rapl meter" in proc.stdout
    assert "energy_per_op_j" in csv.stdout.splitlines()[0]


@pytest.mark.e2e
def test_run_without_energy_has_no_energy_columns(harness, tmp_path):
    out = tmp_path / "run.json"
    proc = cli("run", "--op", "sha256", "--param", "bytes=64", "--engine", "openssl-hw", "--repeat", "3",
               "--min-time", "0.001", "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert "µJ" not in proc.stdout and "energy" not in doc["results"][0]
    assert "energy_meter" not in doc["conditions"]
    csv = cli("show", "latest", "--db", str(tmp_path / "db.sqlite"), "--format", "csv")
    assert "energy" not in csv.stdout.splitlines()[0]


@pytest.mark.qemu
def test_unavailable_meter_is_a_usage_error_with_the_remedy(tmp_path):
    env = {"CRYPTOBENCH_POWERCAP_ROOT": str(tmp_path / "nothing"),
           "CRYPTOBENCH_PERF_EVENT_ROOT": str(tmp_path / "nothing")}
    base = ["run", "--op", "sha256", "--engine", "openssl-hw", "--db", str(tmp_path / "db.sqlite")]
    proc = cli(*base, "--energy", "rapl", env=env)
    assert proc.returncode == 2
    assert "absent" in proc.stderr and "modprobe intel_rapl_msr" in proc.stderr
    proc = cli(*base, "--energy", "perf", env=env)
    assert proc.returncode == 2 and "perf" in proc.stderr
    proc = cli(*base, "--energy", "rapl", "--target", "qemu:mps2-an385")
    assert proc.returncode == 2 and "host" in proc.stderr


@pytest.mark.e2e
def test_no_energy_for_a_cell_that_failed_its_kat(harness, tmp_path):
    from cryptobench.targets.verify import VECTORS_DIR
    corrupt = tmp_path / "vectors"
    shutil.copytree(VECTORS_DIR, corrupt)
    path = corrupt / "sha.json"
    vectors = json.loads(path.read_text())
    victim = next(v for v in vectors["vectors"] if v["op"] == "sha256")
    victim["out"]["digest"] = ("0" if victim["out"]["digest"][0] != "0" else "1") + victim["out"]["digest"][1:]
    path.write_text(json.dumps(vectors))
    with FakeRapl(tmp_path / "powercap", watts=4.0) as fake:
        out = tmp_path / "run.json"
        proc = cli("run", "--op", "sha256", "--op", "sha512", "--param", "bytes=64", "--engine", "openssl-hw",
                   "--energy", "rapl", "--repeat", "3", "--min-time", "0.001", "--db", str(tmp_path / "db.sqlite"),
                   "--json", str(out),
                   env={"CRYPTOBENCH_POWERCAP_ROOT": str(fake.root), "CRYPTOBENCH_VECTORS": str(corrupt)})
    assert proc.returncode == 1, proc.stderr            # the KAT-failed cell
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    sha256 = next(r for r in doc["results"] if r["op"] == "sha256")
    sha512 = next(r for r in doc["results"] if r["op"] == "sha512")
    assert sha256["kat"] == "fail" and "energy" not in sha256 and "time_s" not in sha256
    assert sha512["kat"] == "pass" and sha512["energy"]["provenance"] == "measured"
