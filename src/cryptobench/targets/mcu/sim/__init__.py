"""The cycle-approximate Cortex-M simulator, and its face: what the rest of cryptobench uses of it.

Inside: device profiles (devices.py, devices.toml) and their conditions (condition.py), the
timing model (timing.py), the one machine an image meets (machine.py) with its two clients (the
firmware run, simulator.py, and `sim run`, imagerun.py), the executors it is given (executor.py:
the protocol and Unicorn; native.py: cryptobench's own), the binding of the native part
(binding.py), the peripheral models (peripherals/), semihosting, SysTick and exceptions.
docs/sim-model.md is the model's reference.

Outside this package a module imports `cryptobench.targets.mcu.sim` and nothing under it
(`python -m cryptobench.devtools.structure` enforces it). The names below are loaded on first
use, so importing the face loads none of the simulator's modules: a command that never simulates
(`cryptobench show`) pays nothing for it."""
from __future__ import annotations

import importlib

# name -> (module under this package, attribute): the whole face
FACE = {
    # the simulator and its runs
    "Simulator": ("simulator", "Simulator"),              # cryptobench's firmware, run into a report
    "SimReport": ("simulator", "SimReport"),
    "image_run": ("imagerun", "image_run"),               # `sim run`: an image of anyone's
    "load_image": ("image", "load_image"),
    "parse_addr": ("image", "parse_addr"),
    "parse_markers": ("markers", "parse_many"),
    "require_sim": ("binding", "require_sim"),
    "load_library": ("binding", "load_library"),
    "executor_choice": ("native", "executor_choice"),
    "Deadline": ("deadline", "Deadline"),
    "CommandTimeout": ("deadline", "CommandTimeout"),
    "limits": ("limits", None),                            # what a run of an untrusted image may take
    # the device and its description
    "Device": ("devices", "Device"),
    "DEVICES": ("devices", "DEVICES"),
    "CORE_CPU": ("devices", "CORE_CPU"),
    "get_device": ("devices", "get_device"),
    "device_at": ("devices", "device_at"),
    "device_spec": ("devices", "device_spec"),
    "split_spec": ("condition", "split_spec"),
    "describe_condition": ("condition", "describe"),
    "condition_sources": ("condition", "sources"),
    "band_for": ("error_band", "band_for"),
    "band_text": ("error_band", "band_text"),
    "band_short": ("error_band", "band_short"),
    # the modelled engines' bands against published hardware (bench/accel_vs_published)
    "engine_band_for": ("engine_band", "band_for"),
    "engine_band_text": ("engine_band", "band_text"),
    "engine_band_short": ("engine_band", "band_short"),
    # the model's name and version, its rough cores, the cores' interrupt latency
    "MODEL_NAME": ("timing", "MODEL_NAME"),
    "MODEL_VERSION": ("timing", "MODEL_VERSION"),
    "ROUGH": ("timing", "ROUGH"),
    "ENTRY_CYCLES": ("exceptions", "ENTRY_CYCLES"),
    # the peripheral models' kinds (devices.toml `peripheral_models`, a recipe's `requires`)
    "PERIPHERAL_KINDS": ("peripherals.registry", "KINDS"),
}

__all__ = sorted(FACE)


def __getattr__(name: str):
    try:
        module, attr = FACE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (its face: {', '.join(__all__)})") \
            from None
    loaded = importlib.import_module(f"{__name__}.{module}")
    value = loaded if attr is None else getattr(loaded, attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
