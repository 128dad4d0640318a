"""NVIDIA GPUs through NVML (package nvidia-ml-py, module `pynvml`):
nvmlDeviceGetTotalEnergyConsumption, the board's energy in millijoules since the driver was loaded
(Volta and newer). One domain per GPU (`gpu0`, `gpu1`, …); the main domain `gpu` is their sum.

The counter's update period is not documented; NVML's power readings are refreshed about every
20–100 ms depending on the board, so the nominal period is 0.1 s and the run measures the real one.
"""
from __future__ import annotations

from .base import ABSENT, NOT_READABLE, NOT_SUPPORTED, CounterReset, Meter, MeterUnavailable

REMEDY_MODULE = "pip install nvidia-ml-py (or: pip install 'cryptobench[nvml]')"
REMEDY_DRIVER = "install and load the NVIDIA driver (libnvidia-ml.so.1); there must be an NVIDIA GPU"


def _nvml():
    try:
        import pynvml
    except ImportError:
        raise MeterUnavailable("nvml", ABSENT, "Python module pynvml (nvidia-ml-py) is not installed", REMEDY_MODULE)
    return pynvml


class NvmlMeter(Meter):
    name = "nvml"
    resolution_j = 1e-3
    update_period_s = 0.1
    main_domain = "gpu"

    def __init__(self, nvml=None):
        self.nv = nvml if nvml is not None else _nvml()
        nv = self.nv
        self.handles: dict[str, object] = {}
        self.names: dict[str, str] = {}
        self._inited = False
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise self._unavailable(exc, "nvmlInit")
        self._inited = True
        try:
            count = nv.nvmlDeviceGetCount()
            if count == 0:
                raise MeterUnavailable(self.name, ABSENT, "NVML sees no GPU", REMEDY_DRIVER)
            refused = []
            for i in range(count):
                h = nv.nvmlDeviceGetHandleByIndex(i)
                name = nv.nvmlDeviceGetName(h)
                name = name.decode() if isinstance(name, bytes) else str(name)
                try:
                    nv.nvmlDeviceGetTotalEnergyConsumption(h)
                except nv.NVMLError as exc:
                    refused.append(f"gpu{i} ({name}): {exc}")
                    continue
                self.handles[f"gpu{i}"] = h
                self.names[f"gpu{i}"] = name
            if not self.handles:
                raise MeterUnavailable(self.name, NOT_SUPPORTED,
                                       "no GPU supports the total-energy counter (Volta or newer needed): "
                                       + "; ".join(refused))
        except nv.NVMLError as exc:
            self.close()
            raise self._unavailable(exc, "NVML")
        except MeterUnavailable:
            self.close()
            raise
        self.domains = list(self.handles)
        self.main_parts = list(self.handles)
        self.what = "the whole GPU board(s): " + ", ".join(f"{d} {n}" for d, n in self.names.items())

    def _unavailable(self, exc, where: str) -> MeterUnavailable:
        nv = self.nv
        value = getattr(exc, "value", None)
        if value == getattr(nv, "NVML_ERROR_LIBRARY_NOT_FOUND", -1):
            return MeterUnavailable(self.name, ABSENT, f"{where}: NVML library not found ({exc})", REMEDY_DRIVER)
        if value == getattr(nv, "NVML_ERROR_DRIVER_NOT_LOADED", -1):
            return MeterUnavailable(self.name, ABSENT, f"{where}: NVIDIA driver not loaded ({exc})", REMEDY_DRIVER)
        if value == getattr(nv, "NVML_ERROR_NO_PERMISSION", -1):
            return MeterUnavailable(self.name, NOT_READABLE, f"{where}: {exc}",
                                    "run as a user allowed to access /dev/nvidia*")
        if value in (getattr(nv, "NVML_ERROR_NOT_SUPPORTED", -1), getattr(nv, "NVML_ERROR_FUNCTION_NOT_FOUND", -1)):
            return MeterUnavailable(self.name, NOT_SUPPORTED, f"{where}: {exc}", "a newer driver / a Volta or newer GPU")
        return MeterUnavailable(self.name, NOT_SUPPORTED, f"{where}: {exc}")

    def _read_counters(self) -> tuple[dict, tuple]:
        counters, missing = {}, []
        for dom, h in self.handles.items():
            try:
                counters[dom] = int(self.nv.nvmlDeviceGetTotalEnergyConsumption(h))
            except self.nv.NVMLError:
                missing.append(dom)
        return counters, tuple(missing)

    def _delta_one(self, domain: str, old: int, new: int) -> float:
        if new < old:
            raise CounterReset(domain, f"NVML total energy went back from {old} to {new} mJ (driver reloaded?)")
        return (new - old) * 1e-3

    def describe(self) -> dict:
        d = super().describe()
        driver = None
        try:
            driver = self.nv.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else str(driver)
        except Exception:        # optional detail: any NVML failure just leaves it out
            pass
        d.update({"interface": "NVML nvmlDeviceGetTotalEnergyConsumption (mJ since driver load)",
                  "gpus": dict(self.names), "driver": driver})
        return d

    def close(self) -> None:
        if self._inited:
            try:
                self.nv.nvmlShutdown()
            except Exception:
                pass
            self._inited = False
