"""A labgrid resource and driver for places whose board is a QEMU machine (devtools/qemuboard.py):
QEMUFlashPort is the board's flash control (a URL an exporter exports like any network
resource) and QEMUFlashDriver loads an ELF image through it, as OpenOCDDriver loads one through
a debug probe. Both register with labgrid's factory when this module is imported, which
places.py does before it asks the coordinator for a place's resources."""
from __future__ import annotations

from pathlib import Path

import attr
from labgrid.driver.common import Driver
from labgrid.factory import target_factory
from labgrid.protocol import BootstrapProtocol
from labgrid.resource.common import Resource
from labgrid.step import step


@target_factory.reg_resource
@attr.s(eq=False)
class QEMUFlashPort(Resource):
    """The flash control of an emulated board: `PUT url` with an ELF image writes it to the
    board's flash (and restarts the board when it is powered)."""
    url = attr.ib(validator=attr.validators.instance_of(str))


@target_factory.reg_driver
@attr.s(eq=False)
class QEMUFlashDriver(Driver, BootstrapProtocol):
    bindings = {"port": "QEMUFlashPort"}
    timeout = attr.ib(default=30.0, validator=attr.validators.instance_of(float))

    @Driver.check_active
    @step(args=["filename"])
    def load(self, filename: str):
        import requests
        data = Path(filename).read_bytes()
        reply = requests.put(self.port.url, data=data, timeout=self.timeout)
        if reply.status_code != 200:
            raise RuntimeError(f"flashing {Path(filename).name} through {self.port.url}: HTTP {reply.status_code} "
                               f"{reply.text.strip()}")
