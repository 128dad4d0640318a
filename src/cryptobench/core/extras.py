"""Optional dependencies. Each is an extra of the package (pyproject.toml [project.optional-dependencies];
./setup.sh installs them all), imported only inside the feature that needs it, which names the extra
to install when its module is missing:

    sim      unicorn, capstone, pyelftools    the cycle-approximate simulator (--target sim:CORE)
    lab      pyvisa, pyjls                    live N6705 capture (energy capture), Joulescope JLS traces
    serial   pyserial                         a board's console over a serial port (--target board:NAME)
    parquet  pyarrow                          export --format parquet
    figures  matplotlib                       the HTML report's figures (cryptobench report)
    nvml     nvidia-ml-py                     the nvml energy meter (targets/host/meters/nvml.py says so itself)
    reference pycryptodome                    the AES-EAX and ChaCha20 host references (verify.python_reference)
    pqc      kyber-py, dilithium-py           the ML-KEM / ML-DSA cross-check (targets/pqc_check.py)
    store    psycopg                          a shared PostgreSQL result store (--db postgresql://…)
    labgrid  labgrid                          boards in a labgrid lab (--target labgrid:PLACE; targets/mcu/lab/places.py)
"""
from __future__ import annotations

import importlib
from types import ModuleType

from .errors import UsageError


class MissingExtra(UsageError):
    """An optional module is not installed; the message names the extra that installs it."""


def missing_text(module: str, extra: str, feature: str) -> str:
    """One line: what needs the module, and the pip command that installs its extra."""
    return (f"{feature} needs the Python module '{module}', which is not installed: "
            f"pip install 'cryptobench[{extra}]'")


def require(module: str, extra: str, feature: str) -> ModuleType:
    """The module, imported; MissingExtra when it (or its package) is not installed. Any other
    import failure (a broken install) is raised as it is."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if not exc.name or not (module == exc.name or module.startswith(exc.name + ".")):
            raise
        raise MissingExtra(missing_text(module, extra, feature)) from None
