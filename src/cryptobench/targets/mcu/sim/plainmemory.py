"""Memory outside flash and RAM that reads back what was written (the peripheral region, a marker
register's page), kept sparsely by 4 KiB page, the same on both executors: the native executor's
mmio callbacks and Unicorn's mmio_map read and write it here.

An image may write to at most PERIPHERAL_PAGES distinct pages (limits.py): one store per page
over the 512 MiB peripheral region must not make the host allocate 512 MiB. Past that, the write
raises PlainMemoryFull and the run stops with its message."""
from __future__ import annotations

from . import limits

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS


class PlainMemoryFull(Exception):
    """The image wrote to more distinct pages than the plain memory keeps."""


class PlainMemory:
    def __init__(self, max_pages: int = limits.PERIPHERAL_PAGES):
        self.pages: dict[int, bytearray] = {}
        self.max_pages = max_pages

    def _page(self, number: int, addr: int) -> bytearray:
        page = self.pages.get(number)
        if page is None:
            if len(self.pages) >= self.max_pages:
                raise PlainMemoryFull(
                    f"the image wrote to more than {self.max_pages} distinct 4 KiB pages outside flash and RAM "
                    f"({limits.size_text(self.max_pages * PAGE)} of plain memory are kept), the last at 0x{addr:08x}")
            page = self.pages[number] = bytearray(PAGE)
        return page

    def read_bytes(self, addr: int, n: int) -> bytes:
        """n bytes at addr (zeros where nothing was written); n is bounded by the caller."""
        out = bytearray()
        while n > 0:
            o = addr & (PAGE - 1)
            take = min(n, PAGE - o)
            page = self.pages.get(addr >> PAGE_BITS)
            out += page[o:o + take] if page is not None else bytes(take)
            addr, n = addr + take, n - take
        return bytes(out)

    def read(self, addr: int, size: int) -> int:
        return int.from_bytes(self.read_bytes(addr, size), "little")

    def write(self, addr: int, size: int, value: int) -> None:
        data = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        o = addr & (PAGE - 1)
        if o + size <= PAGE:
            self._page(addr >> PAGE_BITS, addr)[o:o + size] = data
            return
        for i, byte in enumerate(data):        # byte by byte: a store may straddle two pages
            a = addr + i
            self._page(a >> PAGE_BITS, a)[a & (PAGE - 1)] = byte
