"""Secure elements and TPMs: the token or TPM an external engine talks to.

An engine with `provision` (targets/host/engines.py) opens a `Provision` before its harness starts: either the
real device the user configured (environment variables, documented per engine), or a throw-away
software stand-in the run starts itself (SoftHSM2 token, swtpm) and stops at the end. The
Provision gives the harness its environment (`env`, merged into the engine's `runtime_env`) and the
run its conditions (`facts`: what device, module, version; never a PIN).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Provision:
    env: dict = field(default_factory=dict)      # for the harness process (may hold secrets: never logged)
    facts: dict = field(default_factory=dict)    # for the run's conditions (no secrets)
    stop: Callable[[], None] = lambda: None      # stops what was started (idempotent)

    def close(self) -> None:
        self.stop()
        self.stop = lambda: None


def open_provision(engine) -> Provision | None:
    """The engine's Provision, its env installed on the engine (None for engines without one).
    Raises UsageError / HarnessError with the exact flag or variable to set when nothing is usable."""
    if not engine.provision:
        return None
    module, _, func = engine.provision.partition(":")
    prov: Provision = getattr(importlib.import_module(module), func)()
    engine.runtime_env = dict(prov.env)
    return prov


def close_provision(engine, prov: Provision | None) -> None:
    engine.runtime_env = {}
    if prov is not None:
        prov.close()
