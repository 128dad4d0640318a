"""The STM32F4 hash processor (HASH) of the STM32F415/417 and F43x, as ST's RM0090 (Rev 11,
chapter 25) describes it: SHA-1, SHA-224, SHA-256 and MD5, fed 32 bits at a time by the core.

Registers: the class's `registers` map (registers.py) declares each, with its fields, at its offset
from the HASH base (RM0090 25.4; 0x50060400 on the F4). ALGO[1:0] = 00 SHA-1, 01 MD5, 10 SHA-224,
11 SHA-256; the digest reads most significant word first, at HASH_HR0-4 and at HASH_HR0-7.

Behaviour (RM0090 25.3.3, "Message digest computing"): HASH_DIN and the 16-word IN FIFO form a
17-word IN buffer; a block is processed once a 17th word is written (the next block's first
word), after which "the software must wait until the processor is ready again (when DINIS=1)
before writing new data into HASH_DIN"; writing DCAL pads the last block (25.3.4, with NBLW) and
computes the final digest. DATATYPE swaps the bits, bytes or half-words of each word (25.3.2).

Timing (RM0090 25.3.1, "Duration of the processing"): an intermediate 512-bit block takes 66 HCLK
cycles in SHA-1 and 50 in SHA-224, SHA-256 and MD5, "to which you must add the time needed to load
the 16 words of the block" (the core's own 16 stores, which the simulator counts); the last block
"can be increased by a factor of 1 to 2.5": the model charges one block time per 512-bit block
the padded tail fills (1 or 2), which lies in that range. Not modelled: HMAC (MODE = 1), the
context swap registers (read 0), DMA requests (DMAE needs the DMA2 controller, not modelled)."""
from __future__ import annotations

import hashlib

from .base import Peripheral, PeripheralError
from .registers import NEVER, STATIC, Access, Register, RegisterMap

ALGOS = {0: "sha1", 1: "md5", 2: "sha224", 3: "sha256"}
BLOCK_CYCLES = {"sha1": 66, "md5": 50, "sha224": 50, "sha256": 50}      # RM0090 25.3.1
DIGEST_WORDS = {"sha1": 5, "md5": 4, "sha224": 7, "sha256": 8}

CR, DIN, STR, IMR, SR = 0x00, 0x04, 0x08, 0x20, 0x24
HR_SHORT, HR_LONG, CSR = 0x0C, 0x310, 0x0F8
CR_INIT, CR_DMAE, CR_MODE, CR_ALGO0, CR_ALGO1 = 1 << 2, 1 << 3, 1 << 6, 1 << 7, 1 << 18
CR_DINNE, CR_MDMAT, CR_LKEY = 1 << 12, 1 << 13, 1 << 16
STR_DCAL = 1 << 8
SR_DINIS, SR_DCIS, SR_DMAS, SR_BUSY = 1, 2, 4, 8


def _swap(w: int, datatype: int) -> bytes:
    """The four message bytes a word written to HASH_DIN stands for (RM0090 25.3.2): 00 no swap
    (the word's most significant byte first), 01 half-words swapped, 10 bytes swapped (a byte
    string as little-endian memory holds it), 11 bits swapped."""
    if datatype == 2:
        return w.to_bytes(4, "little")
    if datatype == 1:
        return ((w >> 16) | ((w & 0xFFFF) << 16)).to_bytes(4, "big")
    if datatype == 3:
        return int(f"{w:032b}"[::-1], 2).to_bytes(4, "big")
    return w.to_bytes(4, "big")


class Stm32Hash(Peripheral):
    kind = "stm32f4-hash"
    title = "STM32F4 HASH"
    size = 0x400
    source = "ST RM0090 Rev 11 chapter 25 (HASH)"
    latency_source = ("RM0090 25.3.1: 50 HCLK cycles per 512-bit block in SHA-224/SHA-256/MD5, 66 in SHA-1; "
                      "the last block one block time per padded block (the manual's factor 1 to 2.5)")

    # RM0090 25.4 "HASH registers"
    registers = RegisterMap(
        Register(CR, "HASH_CR", Access.RW, bits="INIT 2, DMAE 3, DATATYPE 5:4, MODE 6, ALGO[0] 7, NBW 11:8 (read-only: "
                 "words in the IN FIFO), DINNE 12, MDMAT 13, LKEY 16, ALGO[1] 18", read="_cr", write="_write_cr",
                 horizon=STATIC),
        Register(DIN, "HASH_DIN", Access.WO, bits="the next 32-bit word of the message", write="_write_din"),
        Register(STR, "HASH_STR", Access.RW, bits="NBLW 4:0: valid bits in the last word (0: all 32), DCAL 8: start "
                 "the final digest", read="_str", write="_write_str", horizon=STATIC),
        Register(HR_SHORT, "HASH_HR{n}", Access.RO, bits="the digest, most significant word first", count=5,
                 read="_hr", horizon="_digest_horizon"),
        Register(IMR, "HASH_IMR", Access.RW, bits="DINIE 0, DCIE 1", field="imr", mask=3),
        Register(SR, "HASH_SR", Access.RO, bits="DINIS 0: ready for a new block, DCIS 1: digest ready, DMAS 2, "
                 "BUSY 3", read="_read_sr", horizon="_sr_horizon"),
        Register(CSR, "HASH_CSR{n}", Access.RW, bits="the context swap registers", count=54, modelled=False),
        Register(HR_LONG, "HASH_HR{n}", Access.RO, bits="the digest, most significant word first (SHA-224/256)",
                 count=8, read="_hr", horizon="_digest_horizon"),
        stores="the HASH registers take 32-bit writes (RM0090 25.4)")

    def __init__(self, base: int, irq: int | None, memory=None):
        super().__init__(base, irq, memory)
        self.registers.reset(self)         # HASH_IMR
        self.cr = self.str_ = 0
        self.algo = "sha1"
        self.datatype = 0
        self.fifo: list[int] = []          # words in the IN FIFO (at most 16; a 17th starts its block)
        self.state = None                  # the hash object of the message so far
        self.busy_until = 0                # the cycle the block or digest under way ends
        self.digest_at: int | None = None  # the cycle the final digest is ready (DCIS)
        self.digest = b""

    # ---- the registers' handlers (offset o from the base; `registers` above) -------------------
    def _cr(self, o: int, now: int) -> int:
        return (self.cr & ~(0xF << 8 | CR_DINNE)) | (len(self.fifo) << 8) | (CR_DINNE if self.fifo else 0)

    def _str(self, o: int, now: int) -> int:
        return self.str_ & 0x1F

    def _hr(self, o: int, now: int) -> int:
        i = (o - HR_SHORT) // 4 if o < HR_LONG else (o - HR_LONG) // 4
        ready = self.digest_at is not None and now >= self.digest_at
        return int.from_bytes(self.digest[4 * i:4 * i + 4], "big") if ready and 4 * i < len(self.digest) else 0

    def _digest_horizon(self, o: int, now: int) -> int:
        return self.digest_at if self.digest_at is not None and self.digest_at > now else NEVER

    def _read_sr(self, o: int, now: int) -> int:
        return self._sr(now)

    def _sr_horizon(self, o: int, now: int) -> int:
        """BUSY/DINIS change when the block under way ends, DCIS when the digest is ready."""
        return min((t for t in (self.busy_until, self.digest_at) if t is not None and t > now), default=NEVER)

    def _write_din(self, o: int, value: int, now: int) -> int:
        stall = self._stall(now)
        self._din(value, now + stall)
        return stall

    def _write_str(self, o: int, value: int, now: int) -> int:
        self.str_ = value & 0x11F
        if not value & STR_DCAL:
            return 0
        stall = self._stall(now)
        self._final(now + stall)
        return stall

    def _stall(self, now: int) -> int:
        """Cycles a HASH_DIN or DCAL write waits for the block under way. RM0090 25.3.3 asks
        software to wait for DINIS first; ST's HAL (HASH_WriteData) writes a message's blocks back
        to back, which the bus stalls on silicon: the model holds the write until the block is
        done (the stall's length beyond that is not published)."""
        return max(0, self.busy_until - now)

    def irq_since(self, now: int) -> int | None:
        """DCIS with DCIE (since the digest was ready), or DINIS with DINIE (since the block ended)."""
        sr = self._sr(now)
        if self.imr & 2 and sr & SR_DCIS:
            return self.digest_at
        if self.imr & 1 and sr & SR_DINIS:
            return self.busy_until
        return None

    def next_event(self, now: int) -> int | None:
        if self.imr & 2 and self.digest_at is not None and self.digest_at > now:
            return self.digest_at
        if self.imr & 1 and self.busy_until > now:
            return self.busy_until
        return None

    # ---- the processor ---------------------------------------------------------------------------
    def _sr(self, now: int) -> int:
        busy = now < self.busy_until
        sr = SR_BUSY if busy else 0
        if not busy and len(self.fifo) < 16 and self.digest_at is None:
            sr |= SR_DINIS                 # ready for a new block
        if self.digest_at is not None and now >= self.digest_at:
            sr |= SR_DCIS
        return sr

    def _write_cr(self, o: int, value: int, now: int) -> None:
        if value & CR_MODE:
            raise PeripheralError(f"{self.title}: HMAC mode (HASH_CR.MODE = 1) is not modelled")
        if value & CR_DMAE:
            raise PeripheralError(f"{self.title}: DMA requests (HASH_CR.DMAE) need the DMA2 controller, which is "
                                  "not modelled; feed HASH_DIN from the core")
        self.cr = value & (CR_DMAE | 0x30 | CR_MODE | CR_ALGO0 | CR_MDMAT | CR_LKEY | CR_ALGO1)
        if value & CR_INIT:                # a new digest: ALGO and DATATYPE take effect (25.4.1)
            self.algo = ALGOS[(1 if value & CR_ALGO0 else 0) | (2 if value & CR_ALGO1 else 0)]
            self.datatype = (value >> 4) & 3
            self.state = hashlib.new(self.algo)
            self.fifo, self.digest_at, self.digest = [], None, b""

    def _din(self, value: int, now: int) -> None:
        if self.state is None:
            raise PeripheralError(f"{self.title}: HASH_DIN written before HASH_CR.INIT started a digest")
        if self.digest_at is not None:
            raise PeripheralError(f"{self.title}: HASH_DIN written after DCAL; write HASH_CR.INIT for a new digest")
        if len(self.fifo) < 16:
            self.fifo.append(value & 0xFFFFFFFF)
            return
        # a 17th word: the FIFO's block goes to the processor, this word takes its place
        self._absorb(self.fifo)
        self.fifo = [value & 0xFFFFFFFF]
        self._run(now, BLOCK_CYCLES[self.algo])

    def _absorb(self, words: list[int]) -> None:
        self.state.update(b"".join(_swap(w, self.datatype) for w in words))

    def _final(self, now: int) -> None:
        if self.state is None:
            raise PeripheralError(f"{self.title}: HASH_STR.DCAL written before HASH_CR.INIT started a digest")
        nblw = self.str_ & 0x1F
        tail = b"".join(_swap(w, self.datatype) for w in self.fifo)
        if self.fifo and nblw:             # NBLW valid bits in the last word (whole bytes here)
            if nblw % 8:
                raise PeripheralError(f"{self.title}: NBLW = {nblw}: a last word of a whole number of bytes is "
                                      "modelled, not of single bits")
            tail = tail[:len(tail) - 4 + nblw // 8]
        self.state.update(tail)
        total_blocks = (len(tail) + 9 + 63) // 64        # the FIFO's words, 0x80 and the 64-bit length
        self.digest = self.state.digest()[:4 * DIGEST_WORDS[self.algo]]
        self.fifo = []
        self._run(now, total_blocks * BLOCK_CYCLES[self.algo])
        self.digest_at = self.busy_until

    def _run(self, now: int, cycles: int) -> None:
        self.busy_until = now + cycles
        self.active.add(now, self.busy_until)
