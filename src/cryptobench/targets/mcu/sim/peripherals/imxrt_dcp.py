"""The Data Co-Processor (DCP) of the NXP i.MX RT1060, for timing: AES-128 ECB and CBC, SHA-1
and SHA-256, through work packets the engine fetches from memory with its own DMA.

Registers (offsets from the base, 0x402FC000; NXP's device header MIMXRT1062.h, DCP_Type and the
DCP_* field macros, as the MCUXpresso SDK ships it): CTRL (CHANNEL_INTERRUPT_ENABLE 7:0,
ENABLE_CONTEXT_SWITCHING 21, ENABLE_CONTEXT_CACHING 22, GATHER_RESIDUAL_WRITES 23, PRESENT_SHA 28
and PRESENT_CRYPTO 29 read 1, CLKGATE 30, SFTRST 31; reset 0xF0800000, the value NXP's fsl_dcp.c
writes as "reset value"), STAT (IRQ 3:0, READY_CHANNELS 23:16, CUR_CHANNEL 27:24, OTP_KEY_READY
28), CHANNELCTRL (ENABLE_CHANNEL 7:0), each with its SET, CLR and TOG aliases at +4, +8, +0xC;
CAPABILITY0/1, CONTEXT (the context buffer's address), KEY (INDEX 5:4, SUBWORD 1:0) and KEYDATA
(the four SRAM key slots, SUBWORD advancing with each word), PACKET0-6 (the packet under way), per
channel n (0x100 + 0x40 n) CHnCMDPTR, CHnSEMA (INCREMENT 7:0 written, VALUE 23:16 read), CHnSTAT
(ERROR bits 6:1, ERROR_CODE 23:16) and CHnOPTS with their aliases. DCP_IRQ is interrupt 50.

A work packet (fsl_dcp.h dcp_work_packet_t): next command address, CONTROL0 (INTERRUPT 0,
DECR_SEMAPHORE 1, CHAIN 2, CHAIN_CONTIGUOUS 3, ENABLE_MEMCOPY 4, ENABLE_CIPHER 5, ENABLE_HASH 6,
CIPHER_ENCRYPT 8, CIPHER_INIT 9, OTP_KEY 10, PAYLOAD_KEY 11, HASH_INIT 12, HASH_TERM 13, the
key/input/output swaps 23:18), CONTROL1 (CIPHER_SELECT 3:0, CIPHER_MODE 7:4, KEY_SELECT 15:8,
HASH_SELECT 19:16: 0 SHA-1, 1 CRC-32, 2 SHA-256), source, destination, size, payload, status.
Writing CHnSEMA starts the channel: the engine reads the packet at CHnCMDPTR and each one CHAIN or
CHAIN_CONTIGUOUS leads to while the semaphore is non-zero; a packet with DECR_SEMAPHORE counts it
down when it ends, READY_CHANNELS holds the channel's bit until then, and INTERRUPT sets STAT.IRQ.

The data: a cipher packet's key comes from the payload (PAYLOAD_KEY: key, then IV) or a key slot
(KEY_SELECT 0-3); CIPHER_INIT takes the CBC IV from the payload (after the key with PAYLOAD_KEY);
key and data are taken in memory order, unswapped, as fsl_dcp.c uses them (its default swap
configuration, kDCP_NoSwap, on byte arrays). A hash packet starts a new hash with HASH_INIT, else
continues the channel's running hash; without HASH_TERM the running hash (the state words, then the
bytes hashed so far) is written to the channel's context in the context buffer, 52 bytes a channel
with channel 3 first and the hash at word 4 of each (where fsl_dcp.c's dcp_hash_save_running_hash
reads it, words 43, 30, 17 and 4 for channels 0-3), and read back from there by a packet without
HASH_INIT (context switching on, context caching off: fsl_dcp.c's default configuration); with
HASH_TERM the engine pads the message and writes the digest to the payload in reverse byte order
(fsl_dcp.c reverses it back, dcp_reverse_and_copy). Results are exact (aes_core.py, sha_core.py).

Timing: NXP publishes no DCP cycle figure (neither the RT1060 reference manual's public chapters
nor the SDK give one), so every latency is a labelled structural estimate, checked by
bench/accel_vs_published against the NXP blog the study is (never set from it): the engine is
clocked at IPG_CLK_ROOT, AHB / 4 (its registers sit behind AIPS-3, whose bridge runs at IPG; the
SDK's clock configurations divide by 4: CLOCK_SetDiv(kCLOCK_IpgDiv, 3)), 150 MHz at the 600 MHz
core; in engine cycles a packet costs 8 (its 8 words fetched), a context load and store 13 each
(52 bytes) where the hash continues or goes on, an AES-128 block Nr + 8 = 18 (4 words in, 10 rounds
a cycle, 4 out: the same assumption as the CC26x2 CRYPTO model's), a SHA-256 block 64 + 16 = 80 and
a SHA-1 block 80 + 16 = 96 (one round a cycle, 16 words in), the digest's words out.

Not modelled (each refused with one line): decryption (CIPHER_ENCRYPT clear), OTP and unique keys
(the fuses), the swap options, memory copy and blit, CRC-32, cipher and hash in one packet, the
page table, context caching; a packet whose buffer size is not a whole number of AES blocks sets
CHnSTAT.ERROR_SETUP as silicon reports an invalid setup."""
from __future__ import annotations

import struct

from . import aes_core, sha_core
from .base import Peripheral, PeripheralError
from .registers import NEVER, Access, Register, RegisterMap

CTRL, STAT, CHANNELCTRL, CAPABILITY0, CAPABILITY1, CONTEXT, KEY, KEYDATA = (
    0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70)
PACKET0, CH_BASE, CH_STRIDE = 0x80, 0x100, 0x40
CMDPTR, SEMA, CHSTAT, CHOPTS = 0x00, 0x10, 0x20, 0x30          # within a channel's 0x40 bytes
DBGSELECT, DBGDATA, PAGETABLE, VERSION = 0x400, 0x410, 0x420, 0x430
CTRL_RESET, CTRL_PRESENT = 0xF0800000, (1 << 28) | (1 << 29)
CTRL_CLKGATE, CTRL_SFTRST, CTRL_CACHING = 1 << 30, 1 << 31, 1 << 22
C0_INTERRUPT, C0_DECR, C0_CHAIN, C0_CONTIG, C0_MEMCOPY = 1, 2, 4, 8, 16
C0_CIPHER, C0_HASH, C0_ENCRYPT, C0_INIT, C0_OTP, C0_PAYLOAD_KEY = 1 << 5, 1 << 6, 1 << 8, 1 << 9, 1 << 10, 1 << 11
C0_HASH_INIT, C0_HASH_TERM, C0_SWAPS = 1 << 12, 1 << 13, 0x3F << 18
C0_CHAINED = C0_CHAIN | C0_CONTIG
ERROR_SETUP, ERROR_PACKET = 1 << 2, 1 << 3
CONTEXT_WORDS = 13                     # a channel's context: 52 bytes, the hash state at word 4
HASHES = {0: ("sha1", sha_core.SHA1_IV, sha_core.sha1_block, 96),
          2: ("sha256", sha_core.SHA256_IV, sha_core.sha256_block, 80)}

# engine cycles (see the module's Timing): all structural estimates
PACKET_FETCH, CONTEXT_MOVE, AES128_BLOCK = 8, CONTEXT_WORDS, 10 + 8


def _register_map() -> RegisterMap:
    """The DCP's registers (MIMXRT1062.h DCP_Type): CTRL, STAT, CHANNELCTRL and the channels' STAT and
    OPTS with their SET, CLR and TOG aliases (+4, +8, +0xC), the rest plain."""
    def sct(offset, name, **kw):
        return [Register(offset + 4 * i, f"DCP_{name}{suffix}", Access.RW, write="_write_sct",
                         read="_read_sct" if i == 0 else "", **(kw if i == 0 else {}))
                for i, suffix in enumerate(("", "_SET", "_CLR", "_TOG"))]
    regs = [*sct(CTRL, "CTRL", bits="CHANNEL_INTERRUPT_ENABLE 7:0, ENABLE_CONTEXT_SWITCHING 21, "
                 "ENABLE_CONTEXT_CACHING 22, GATHER_RESIDUAL_WRITES 23, PRESENT_SHA 28, PRESENT_CRYPTO 29, "
                 "CLKGATE 30, SFTRST 31"),
            *sct(STAT, "STAT", bits="IRQ 3:0 (1 clears through STAT_CLR), READY_CHANNELS 23:16, CUR_CHANNEL "
                 "27:24, OTP_KEY_READY 28", horizon="_busy_horizon"),
            *sct(CHANNELCTRL, "CHANNELCTRL", bits="ENABLE_CHANNEL 7:0, HIGH_PRIORITY_CHANNEL 15:8"),
            Register(CAPABILITY0, "DCP_CAPABILITY0", Access.RO, reset=0x4, bits="NUM_KEYS 7:0 (4)"),
            Register(CAPABILITY1, "DCP_CAPABILITY1", Access.RO, reset=(0x7 << 16) | 0x1,
                     bits="CIPHER_ALGORITHMS 15:0 (AES128), HASH_ALGORITHMS 31:16 (SHA1, CRC32, SHA256)"),
            Register(CONTEXT, "DCP_CONTEXT", Access.RW, bits="the context buffer's address", field="context"),
            Register(KEY, "DCP_KEY", Access.RW, bits="SUBWORD 1:0, INDEX 5:4", field="key_index", mask=0x33),
            Register(KEYDATA, "DCP_KEYDATA", Access.RW, bits="the key word at KEY's slot and subword (then the "
                     "next subword)", read="_read_keydata", write="_write_keydata"),
            Register(PACKET0, "DCP_PACKET{n}", Access.RO, bits="words 1-7 of the packet under way", count=7,
                     stride=0x10, read="_read_packet"),
            Register(DBGSELECT, "DCP_DBGSELECT", Access.RW, bits="debug select (kept)", field="dbgselect"),
            Register(DBGDATA, "DCP_DBGDATA", Access.RO, bits="debug data (not modelled: reads 0)", modelled=False),
            Register(PAGETABLE, "DCP_PAGETABLE", Access.RW, bits="ENABLE 0, FLUSH 1, BASE 31:2 (ENABLE refused)",
                     write="_write_pagetable"),
            Register(VERSION, "DCP_VERSION", Access.RO, bits="STEP 15:0, MINOR 23:16, MAJOR 31:24 (not modelled: "
                     "reads 0)", modelled=False)]
    for n in range(4):
        base = CH_BASE + n * CH_STRIDE
        regs += [Register(base + CMDPTR, f"DCP_CH{n}CMDPTR", Access.RW, bits="the first packet's address",
                          read="_read_cmdptr", write="_write_cmdptr"),
                 Register(base + SEMA, f"DCP_CH{n}SEMA", Access.RW, bits="INCREMENT 7:0 (written), VALUE 23:16 "
                          "(read)", read="_read_sema", write="_write_sema", horizon="_busy_horizon"),
                 *sct(base + CHSTAT, f"CH{n}STAT", bits="HASH_MISMATCH 1, ERROR_SETUP 2, ERROR_PACKET 3, "
                      "ERROR_SRC 4, ERROR_DST 5, ERROR_PAGEFAULT 6, ERROR_CODE 23:16, TAG 31:24"),
                 *sct(base + CHOPTS, f"CH{n}OPTS", bits="RECOVERY_TIMER 15:0 (kept)")]
    return RegisterMap(*regs, stores="the DCP registers take 32-bit writes (MIMXRT1062.h: 32-bit registers)")


class ImxrtDcp(Peripheral):
    kind = "imxrt-dcp"
    title = "i.MX RT1060 DCP"
    size = 0x800
    source = "NXP MIMXRT1062.h (DCP_Type and its field macros) and the MCUXpresso SDK's fsl_dcp.c/h (work packets, context buffer)"
    latency_source = ("structural estimate (NXP publishes no DCP timing): engine at IPG_CLK_ROOT = AHB / 4 (the SDK's "
                      "IPG_PODF); a packet 8 engine cycles, a context move 13, an AES-128 block 18 (Nr + 8), a SHA-256 "
                      "block 80 and a SHA-1 block 96 (a round a cycle + 16 words)")
    options = {"ipg_divider": "AHB_CLK_ROOT / IPG_CLK_ROOT, the engine's clock (the SDK's IPG_PODF + 1)"}

    registers = _register_map()

    def __init__(self, base: int, irq: int | None, memory=None, ipg_divider: int = 4):
        super().__init__(base, irq, memory)
        self.ratio = ipg_divider                           # core cycles per engine cycle
        self.registers.reset(self)
        self.sct = {CTRL: CTRL_RESET, STAT: 0, CHANNELCTRL: 0}
        for n in range(4):
            self.sct[CH_BASE + n * CH_STRIDE + CHSTAT] = 0
            self.sct[CH_BASE + n * CH_STRIDE + CHOPTS] = 0
        self.key_ram = [[0] * 4 for _ in range(4)]
        self.cmdptr = [0] * 4
        self.ends: list[list[int]] = [[] for _ in range(4)]   # per channel: the cycles its counted packets end
        self.busy_until = [0] * 4
        self.irq_at: list[int | None] = [None] * 4             # when STAT.IRQ[n] rises (None: low)
        self.packet = [0] * 8
        self.pagetable = 0
        self.iv = bytes(16)                                # the CBC chaining value a packet continues from

    # ---- the registers' handlers -------------------------------------------------------------
    def _read_sct(self, o: int, now: int) -> int:
        value = self.sct[o]
        if o == STAT:
            value &= ~0xFF00000F
            value |= sum(1 << n for n in range(4) if self.irq_at[n] is not None and now >= self.irq_at[n])
            ready = [n for n in range(4) if now < self.busy_until[n]]
            value |= sum(1 << (16 + n) for n in ready)
            value |= (ready[0] + 1) << 24 if ready else 0
        if o == CTRL:
            value |= CTRL_PRESENT
        return value

    def _write_sct(self, o: int, value: int, now: int) -> None:
        reg, kind = o & ~0xF, o & 0xC
        old = self._read_sct(reg, now) if reg == STAT else self.sct[reg]
        new = {0: value, 4: old | value, 8: old & ~value, 0xC: old ^ value}[kind]
        if reg == STAT:                            # IRQ bits clear by a 0 (W, CLR, TOG); the rest is status
            for n in range(4):
                if not new & (1 << n) and self.irq_at[n] is not None and now >= self.irq_at[n]:
                    self.irq_at[n] = None          # a rise still to come is not cleared by this store
            return
        if reg == CTRL:
            if new & CTRL_CACHING:
                raise PeripheralError(f"{self.title}: CTRL.ENABLE_CONTEXT_CACHING is not modelled; the model "
                                      "reloads each channel's context from the context buffer (fsl_dcp.c's default)")
            if new & CTRL_SFTRST and not old & CTRL_SFTRST:
                self.ends = [[] for _ in range(4)]
                self.busy_until = [0] * 4
                self.irq_at = [None] * 4
        self.sct[reg] = new                        # CTRL's PRESENT bits: _read_sct reads them as 1

    def _busy_horizon(self, o: int, now: int) -> int:
        times = [t for ch in self.ends for t in ch if t > now] + [t for t in self.busy_until if t > now]
        times += [t for t in self.irq_at if t is not None and t > now]
        return min(times) if times else NEVER

    def _read_keydata(self, o: int, now: int) -> int:
        slot, sub = (self.key_index >> 4) & 3, self.key_index & 3
        return self.key_ram[slot][sub]

    def _write_keydata(self, o: int, value: int, now: int) -> None:
        slot, sub = (self.key_index >> 4) & 3, self.key_index & 3
        self.key_ram[slot][sub] = value
        self.key_index = (slot << 4) | ((sub + 1) & 3)

    def _read_packet(self, o: int, now: int) -> int:
        return self.packet[1 + (o - PACKET0) // 0x10]

    def _write_pagetable(self, o: int, value: int, now: int) -> None:
        if value & 1:
            raise PeripheralError(f"{self.title}: PAGETABLE.ENABLE (virtual addresses) is not modelled")
        self.pagetable = value

    def _channel(self, o: int) -> int:
        return (o - CH_BASE) // CH_STRIDE

    def _read_cmdptr(self, o: int, now: int) -> int:
        return self.cmdptr[self._channel(o)]

    def _write_cmdptr(self, o: int, value: int, now: int) -> None:
        self.cmdptr[self._channel(o)] = value

    def _read_sema(self, o: int, now: int) -> int:
        n = self._channel(o)
        return sum(1 for t in self.ends[n] if t > now) << 16

    def _write_sema(self, o: int, value: int, now: int) -> None:
        n, count = self._channel(o), value & 0xFF
        if not count:
            return
        ctrl = self.sct[CTRL]
        if ctrl & (CTRL_CLKGATE | CTRL_SFTRST):
            raise PeripheralError(f"{self.title}: CH{n}SEMA written with CTRL.SFTRST or CLKGATE set: the DCP is held in "
                                  "reset or gated; clear them first (fsl_dcp.c's DCP_Init writes CTRL)")
        if not self.sct[CHANNELCTRL] & (1 << n):
            raise PeripheralError(f"{self.title}: CH{n}SEMA written with the channel disabled (CHANNELCTRL."
                                  "ENABLE_CHANNEL); enable it first")
        self.ends[n] = [t for t in self.ends[n] if t > now]
        self._run(n, count + len(self.ends[n]), max(now, self.busy_until[n]))

    # ---- the engine ----------------------------------------------------------------------------
    def _run(self, n: int, sema: int, t: int) -> None:
        """Processes channel n's packets from CHnCMDPTR while its semaphore (sema) lasts, from cycle t."""
        addr, start = self.cmdptr[n], t
        while sema > 0:
            words = struct.unpack("<8I", self._read(addr, 32, n, "its work packet"))
            self.packet = list(words)
            cycles = PACKET_FETCH + self._packet(n, words)
            t += round(cycles * self.ratio)
            c0 = words[1]
            if c0 & C0_DECR:
                sema -= 1
                self.ends[n].append(t)
            if c0 & C0_INTERRUPT:
                self.irq_at[n] = t
            if self.sct[CH_BASE + n * CH_STRIDE + CHSTAT] & 0xFE:
                break                              # an error stops the channel
            if c0 & C0_CHAINED and sema > 0:
                addr = addr + 32 if c0 & C0_CONTIG else words[0]
                self.cmdptr[n] = addr
            elif sema > 0:
                self._error(n, 2)                  # "the semaphore is non-zero and neither chain bit is set"
                break
        self.busy_until[n] = t
        self.active.add(start, t)

    def _error(self, n: int, code: int, bit: int = 0) -> None:
        self.sct[CH_BASE + n * CH_STRIDE + CHSTAT] |= (bit or ERROR_PACKET) | (code << 16)

    def _read(self, addr: int, size: int, n: int, what: str) -> bytes:
        try:
            return self.memory.read(addr, size)
        except Exception:                          # noqa: BLE001 - the image's memory says what is wrong
            raise PeripheralError(f"{self.title}: channel {n} reads {what} at 0x{addr:08x}-0x{addr + size - 1:08x}, "
                                  "outside the image's memory") from None

    def _write(self, addr: int, data: bytes, n: int, what: str) -> None:
        try:
            self.memory.write(addr, data)
        except Exception:                          # noqa: BLE001
            raise PeripheralError(f"{self.title}: channel {n} writes {what} at 0x{addr:08x}-"
                                  f"0x{addr + len(data) - 1:08x}, outside the image's writable memory") from None

    def _packet(self, n: int, words: tuple) -> int:
        """One packet's work: its engine cycles (after the fetch)."""
        _, c0, c1, src, dst, size, payload, _ = words
        if c0 & C0_SWAPS:
            raise PeripheralError(f"{self.title}: packet swap options (CONTROL0 bits 23:18 = 0x{(c0 >> 18) & 0x3F:x}) "
                                  "are not modelled; use kDCP_NoSwap")
        if c0 & C0_MEMCOPY or (c0 & C0_CIPHER and c0 & C0_HASH):
            raise PeripheralError(f"{self.title}: a packet with ENABLE_MEMCOPY, or cipher and hash together, is not "
                                  "modelled (CONTROL0 = 0x%08x)" % c0)
        if c0 & C0_CIPHER:
            return self._cipher(n, c0, c1, src, dst, size, payload)
        if c0 & C0_HASH:
            return self._hash(n, c0, c1, src, size, payload)
        return 0

    def _cipher(self, n, c0, c1, src, dst, size, payload) -> int:
        if not c0 & C0_ENCRYPT:
            raise PeripheralError(f"{self.title}: AES decryption (CIPHER_ENCRYPT clear) is not modelled")
        if c0 & C0_OTP:
            raise PeripheralError(f"{self.title}: OTP and unique keys (CONTROL0.OTP_KEY) are not modelled (the fuses)")
        mode, select = (c1 >> 4) & 0xF, c1 & 0xF
        if select != 0 or mode not in (0, 1):
            raise PeripheralError(f"{self.title}: CIPHER_SELECT {select} / CIPHER_MODE {mode}: the DCP has AES-128 "
                                  "(0) in ECB (0) and CBC (1)")
        if size % 16:
            self._error(n, 5, ERROR_SETUP)
            return 0
        at = payload
        if c0 & C0_PAYLOAD_KEY:
            key, at = self._read(payload, 16, n, "the payload key"), payload + 16
        else:
            slot = (c1 >> 8) & 0xFF
            if slot > 3:
                raise PeripheralError(f"{self.title}: KEY_SELECT 0x{slot:02x} is not a key slot (0-3); OTP keys are "
                                      "not modelled")
            key = struct.pack("<4I", *self.key_ram[slot])
        if mode == 1 and c0 & C0_INIT:
            self.iv = self._read(at, 16, n, "the payload IV")
        keys = aes_core.expand_key(key)
        data, out, iv = self._read(src, size, n, "the source buffer"), bytearray(), self.iv
        for i in range(0, size, 16):
            block = data[i:i + 16]
            if mode == 1:
                block = bytes(a ^ b for a, b in zip(block, iv))
            iv = aes_core.encrypt_block(keys, block)
            out += iv
        self.iv = iv
        self._write(dst, bytes(out), n, "the destination buffer")
        return size // 16 * AES128_BLOCK

    def _context_at(self, n: int) -> int:
        return self.context + 4 * ((3 - n) * CONTEXT_WORDS + 4)

    def _hash(self, n, c0, c1, src, size, payload) -> int:
        select = (c1 >> 16) & 0xF
        if select not in HASHES:
            raise PeripheralError(f"{self.title}: HASH_SELECT {select} is not modelled (CRC-32 is 1); the model has "
                                  "SHA-1 (0) and SHA-256 (2)")
        _, iv, block_fn, block_cycles = HASHES[select]
        words = len(iv)
        cycles = 0
        if c0 & C0_HASH_INIT:
            state, total = iv, 0
        else:
            saved = struct.unpack(f"<{words + 1}I", self._read(self._context_at(n), 4 * (words + 1), n,
                                                                "the context buffer"))
            state, total = tuple(saved[:words]), saved[words]
            cycles += CONTEXT_MOVE
        data = self._read(src, size, n, "the source buffer") if size else b""
        if not c0 & C0_HASH_TERM and size % 64:
            self._error(n, 5, ERROR_SETUP)         # a running hash goes on in whole blocks
            return cycles
        total += size
        if c0 & C0_HASH_TERM:
            data += sha_core.padding(total)
        for i in range(0, len(data), 64):
            state = block_fn(state, data[i:i + 64])
        cycles += len(data) // 64 * block_cycles
        if c0 & C0_HASH_TERM:
            digest = sha_core.digest(state)
            self._write(payload, digest[::-1], n, "the payload (digest)")
            cycles += words
        else:
            self._write(self._context_at(n), struct.pack(f"<{words + 1}I", *state, total & 0xFFFFFFFF), n,
                        "the context buffer")
            cycles += CONTEXT_MOVE
        return cycles

    # ---- the interrupt line ----------------------------------------------------------------------
    def irq_since(self, now: int) -> int | None:
        """DCP_IRQ: a channel's STAT.IRQ under CTRL.CHANNEL_INTERRUPT_ENABLE, since it rose."""
        times = [t for ch, t in enumerate(self.irq_at)
                 if t is not None and now >= t and self.sct[CTRL] & (1 << ch)]
        return min(times) if times else None

    def next_event(self, now: int) -> int | None:
        times = [t for ch, t in enumerate(self.irq_at) if t is not None and t > now and self.sct[CTRL] & (1 << ch)]
        return min(times) if times else None

