"""Microchip ATECC508A and ATECC608 on the I2C bus: the CryptoAuthentication I2C protocol, the
commands a benchmark uses, real cryptography, and each command's execution time from Microchip's
own host library.

Protocol (Microchip CryptoAuthLib, the library the device's users run, and the ATECC608 data
sheet's I2C chapter as Microchip's online documents quote it):
* asleep, the device ignores the bus until SDA has been low for at least t_WLO ("a data byte of
  0x00 ... at a clock rate sufficiently slow so that SDA is low for a minimum period of tWLO";
  CryptoAuthLib sends it as a write to address 0 at 100 kHz); after t_WHI it answers its address,
  and its first read returns the wake token 04 11 33 43 (CryptoAuthLib hal_check_wake). t_WLO =
  60 us is the CryptoAuthentication family's figure (ATSHA206A data sheet Table 2-2, AC parameters);
  t_WHI + t_WLO = 1500 us is CryptoAuthLib's ATECC608 I2C default wake_delay (atca_cfgs.c), so
  t_WHI is taken as 1440 us.
* a write's first byte is the word address: 0x00 reset (the I/O buffer's address), 0x01 sleep,
  0x02 idle, 0x03 command (then count, opcode, param1, param2 little-endian, data, CRC-16); reads
  return the output buffer (count, data, CRC-16) from where the last read stopped, as CryptoAuthLib
  reads the count alone and then the rest. The CRC is CryptoAuthLib's atCRC (polynomial 0x8005, bits
  taken least significant first, register from 0, stored little-endian).
* executing, the device does not acknowledge its address (the host polls until it does); then the
  response is ready. A status packet is 4 bytes: 0x00 success, 0x01 verify miscompare, 0x03 parse
  error, 0x0F execution error, 0x11 after wake, 0xFF CRC or communication error (CryptoAuthLib
  calib_command.c isATCAError).
* the watchdog (ChipMode bit 2: ~1.3 s short, ~13 s long, calib_command.h) sends an awake device
  to sleep; CryptoAuthLib idles or sleeps the device after every command, so it rarely fires.

Execution times: CryptoAuthLib lib/calib/calib_execution.c (version 20260505), per device and, for
the ATECC608, per clock-divider mode (ChipMode bits 3-7: M0 0x00, M1 0x28, M2 0x68). The library
calls them "the typical execution time" (calib_get_execution_time) and, built with ATCA_NO_POLL,
waits that long before reading the result ("estimated max execution time before requesting the
result"): the model's device finishes then. A vendor's figure, not a measurement, and no published
measurement checks it here: every cell it serves says so ("unvalidated"). Functional: Info, Random, Read (config zone), SHA-256 (start, update, end),
Nonce (pass-through to TempKey, or on the 608 the Message Digest Buffer), GenKey (a new P-256
private key in a slot; the public key out), Sign (external: the message in TempKey or the Message
Digest Buffer), Verify (external, P-256). Anything else answers a parse
error, as the device does for an opcode it does not have."""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

from Crypto.PublicKey import ECC
from Crypto.Signature import DSS

ADDRESS = 0x60                     # 7-bit; CryptoAuthLib's 8-bit 0xC0 (atca_cfgs.c)
T_WLO_S = 60e-6
T_WHI_S = 1500e-6 - T_WLO_S
WATCHDOG_S = {False: 1.3, True: 13.0}          # ChipMode watchdog short (~1.3 s) / long (~13 s)
WAKE_TOKEN = bytes.fromhex("04113343")

INFO, RANDOM, READ, SHA, NONCE, GENKEY, SIGN, VERIFY = 0x30, 0x1B, 0x02, 0x47, 0x16, 0x40, 0x41, 0x45
SUCCESS, MISCOMPARE, PARSE_ERROR, EXEC_ERROR, AFTER_WAKE, CRC_ERROR = 0x00, 0x01, 0x03, 0x0F, 0x11, 0xFF
CHIPMODE_OFFSET = 19
CLOCK_MODES = {0x00: "M0", 0x28: "M1", 0x68: "M2"}        # ChipMode & 0xF8 (calib_command.h)

# CryptoAuthLib 20260505 lib/calib/calib_execution.c, milliseconds per opcode
EXEC_MS = {
    "ATECC508A": {INFO: 2, RANDOM: 23, READ: 5, SHA: 9, NONCE: 29, GENKEY: 115, SIGN: 60, VERIFY: 72},
    "ATECC608-M0": {INFO: 5, RANDOM: 23, READ: 5, SHA: 36, NONCE: 20, GENKEY: 115, SIGN: 115, VERIFY: 105},
    "ATECC608-M1": {INFO: 5, RANDOM: 23, READ: 5, SHA: 42, NONCE: 20, GENKEY: 215, SIGN: 220, VERIFY: 295},
    "ATECC608-M2": {INFO: 5, RANDOM: 23, READ: 5, SHA: 75, NONCE: 20, GENKEY: 653, SIGN: 665, VERIFY: 1085},
}
EXEC_SOURCE = ("CryptoAuthLib 20260505 lib/calib/calib_execution.c (the library's 'typical execution time' "
               "per command, its wait before the result with ATCA_NO_POLL)")
# Info(Revision): DevRev bytes 2-3, 0x60 0x02 for the ATECC608B, 0x50 0x00 for the 508A as CryptoAuthLib's
# atcab_get_device_type_ext reads byte 2 (0x50: 508A, 0x60: 608); the last byte is the silicon revision
REVISION = {"ATECC508A": bytes.fromhex("00005000"), "ATECC608": bytes.fromhex("00006002")}


def on_bus(address: int, timing: str) -> str:
    """The words a cell served through a bus controller carries for an ATECC on that bus; `timing`
    is Atecc.timing ("ATECC608-M0", "ATECC508A")."""
    part, _, mode = timing.partition("-")
    name = f"{part} ({mode})" if mode else part
    return f"on its bus an {name} at 0x{address:02x}, a model (sim/i2c/atecc.py) timed per command from {EXEC_SOURCE}"


class _Prehashed:
    """A SHA-256 digest computed elsewhere, as pycryptodome's DSS takes a hash object."""
    oid, digest_size = "2.16.840.1.101.3.4.2.1", 32

    def __init__(self, digest: bytes):
        self._d = digest

    def digest(self) -> bytes:
        return self._d


def crc16(data: bytes) -> bytes:
    """CryptoAuthLib's atCRC: CRC-16 polynomial 0x8005, each byte's bits least significant first,
    the register starting at 0, the result little-endian."""
    reg = 0
    for byte in data:
        for bit in range(8):
            data_bit = (byte >> bit) & 1
            crc_bit = reg >> 15
            reg = (reg << 1) & 0xFFFF
            if data_bit != crc_bit:
                reg ^= 0x8005
    return bytes((reg & 0xFF, reg >> 8))


def packet(payload: bytes) -> bytes:
    """count || payload || CRC (count includes itself and the CRC)."""
    body = bytes([len(payload) + 3]) + payload
    return body + crc16(body)


@dataclass
class Atecc:
    """One ATECC508A or ATECC608 at 7-bit address 0x60 (change `address` for a reprogrammed one)."""
    part: str = "ATECC608"                     # "ATECC608" or "ATECC508A"
    chip_mode: int = 0x00                      # config zone byte 19: the clock divider and watchdog
    address: int = ADDRESS
    state: str = "sleep"                       # sleep, waking, awake, idle
    ready_at: float = 0.0                      # when the wake delay or the command ends
    out: bytes = b""                           # the output buffer a read returns
    busy_until: float = 0.0
    awake_since: float = 0.0
    tempkey: bytes | None = None
    msgdigbuf: bytes | None = None             # the ATECC608's Message Digest Buffer (Nonce target 0x40)
    sha: object | None = None
    keys: dict = field(default_factory=dict)   # slot -> ECC private key
    log: list = field(default_factory=list)    # (time, opcode, exec seconds): the commands run
    _rx: bytearray | None = None               # the bytes of the write under way (None: not addressed)
    _read_at: int = 0                          # the next output byte a read returns

    def __post_init__(self):
        if self.part not in REVISION:
            raise ValueError(f"part {self.part!r}: the model has ATECC608 and ATECC508A")
        self.config = bytearray(128)
        self.config[CHIPMODE_OFFSET] = self.chip_mode

    @property
    def timing(self) -> str:
        if self.part == "ATECC508A":
            return "ATECC508A"
        return f"ATECC608-{CLOCK_MODES.get(self.chip_mode & 0xF8, 'M0')}"

    def exec_s(self, opcode: int) -> float:
        return EXEC_MS[self.timing][opcode] / 1000

    # ---- the bus's events -------------------------------------------------------------------------
    def sda_low(self, seconds: float, at: float) -> None:
        self._watchdog(at)
        if self.state in ("sleep", "idle") and seconds >= T_WLO_S:      # awake, a wake pulse is ignored
            self.state, self.ready_at, self.awake_since = "waking", at + seconds + T_WHI_S, at + seconds
            self.out, self._read_at = WAKE_TOKEN, 0

    def _watchdog(self, at: float) -> None:
        if self.state in ("awake", "waking") and at - self.awake_since >= WATCHDOG_S[bool(self.config[CHIPMODE_OFFSET] & 4)]:
            self._sleep()

    def _sleep(self) -> None:
        self.state, self.tempkey, self.msgdigbuf, self.sha, self.out = "sleep", None, None, None, b""

    def _listening(self, at: float) -> bool:
        self._watchdog(at)
        if self.state == "waking" and at >= self.ready_at:
            self.state = "awake"
        return self.state == "awake" and at >= self.busy_until

    def addressed(self, read: bool, at: float) -> bool:
        """Asleep, waking or executing, the device does not acknowledge its address."""
        if not self._listening(at):
            self._rx = None
            return False
        self._rx = None if read else bytearray()
        return True

    def write_byte(self, byte: int, at: float) -> bool:
        if self._rx is None:
            return False
        if not self._rx and byte not in (0x00, 0x01, 0x02, 0x03):
            return False                       # an unknown word address is not acknowledged
        self._rx.append(byte)
        if self._rx[0] == 0x03 and len(self._rx) > 1 and len(self._rx) - 1 == self._rx[1]:
            self._command(bytes(self._rx[1:]), at)       # the packet's count reached: it executes
            self._rx = bytearray(b"\x00")                 # later bytes change nothing
        return True

    def read_byte(self, at: float, more: bool) -> int:
        i, self._read_at = self._read_at, self._read_at + 1
        return self.out[i] if i < len(self.out) else 0xFF

    def stop(self, at: float) -> None:
        rx, self._rx = self._rx, None
        if not rx:
            return
        if rx[0] == 0x00:
            self._read_at = 0                  # "reset": the next read starts at the output buffer's start
        elif rx[0] == 0x01:
            self._sleep()
        elif rx[0] == 0x02:
            # idle keeps TempKey, and the SHA context: CryptoAuthLib idles the device between atcab_sha's
            # start, updates and end (calib_execute_command), which works on the part
            self.state, self.out = "idle", b""
        elif rx[0] == 0x03:
            self.out, self._read_at = self._status(CRC_ERROR), 0   # a packet shorter than its count

    # ---- commands ---------------------------------------------------------------------------------
    def _status(self, code: int) -> bytes:
        return packet(bytes([code]))

    def _command(self, pkt: bytes, at: float) -> None:
        if len(pkt) < 7 or pkt[0] != len(pkt) or crc16(pkt[:-2]) != pkt[-2:]:
            self.out, self._read_at = self._status(CRC_ERROR), 0
            return
        opcode, p1, p2, data = pkt[1], pkt[2], pkt[3] | pkt[4] << 8, pkt[5:-2]
        handler = {INFO: self._info, RANDOM: self._random, READ: self._read, SHA: self._sha, NONCE: self._nonce,
                   GENKEY: self._genkey, SIGN: self._sign, VERIFY: self._verify}.get(opcode)
        if handler is None or opcode not in EXEC_MS[self.timing]:
            self.out = self._status(PARSE_ERROR)
            return
        result = handler(p1, p2, data)
        self.out = packet(result) if isinstance(result, bytes) else self._status(result)
        self._read_at = 0
        self.busy_until = at + self.exec_s(opcode)
        self.log.append((at, opcode, self.exec_s(opcode)))

    def _info(self, p1, p2, data):
        return REVISION[self.part] if p1 == 0 else PARSE_ERROR

    def _random(self, p1, p2, data):
        return secrets.token_bytes(32)

    def _read(self, p1, p2, data):
        zone, size = p1 & 3, 32 if p1 & 0x80 else 4
        if zone != 0:
            return EXEC_ERROR                  # data and OTP zones are not modelled
        word = (p2 & 0x1F) * 4 if size == 4 else ((p2 >> 3) & 3) * 32
        return bytes(self.config[word:word + size]) if word + size <= len(self.config) else PARSE_ERROR

    def _sha(self, p1, p2, data):
        mode = p1 & 7
        if mode == 0:
            self.sha = hashlib.sha256()
            return SUCCESS
        if self.sha is None:
            return EXEC_ERROR
        if mode == 1:
            if len(data) != 64:
                return PARSE_ERROR
            self.sha.update(data)
            return SUCCESS
        if mode == 2:
            if len(data) > 63:
                return PARSE_ERROR
            self.sha.update(data)
            digest, self.sha = self.sha.digest(), None
            return digest
        return PARSE_ERROR

    def _nonce(self, p1, p2, data):
        """Pass-through of 32 bytes into TempKey (target 0x00) or, on the ATECC608, the Message Digest
        Buffer (0x40), as CryptoAuthLib's atcab_sign and atcab_verify_extern load their digest."""
        target = p1 & 0xC0
        if p1 & 3 != 3 or len(data) != 32 or target not in (0x00, 0x40) or (target and self.part != "ATECC608"):
            return PARSE_ERROR                 # only pass-through of 32 bytes to those two buffers is modelled
        if target == 0x40:
            self.msgdigbuf = bytes(data)
        else:
            self.tempkey = bytes(data)
        return SUCCESS

    def _message(self, p1: int) -> bytes | None:
        """Sign's and Verify's message: the Message Digest Buffer with mode bit 5, else TempKey."""
        return self.msgdigbuf if p1 & 0x20 else self.tempkey

    def _genkey(self, p1, p2, data):
        if p1 & 0x04 == 0 or p2 > 15:
            return PARSE_ERROR                 # only "create a private key" is modelled
        self.keys[p2] = ECC.generate(curve="P-256")
        return self.keys[p2].public_key().export_key(format="raw")[1:]   # X || Y, 64 bytes

    def _sign(self, p1, p2, data):
        message = self._message(p1)
        if p1 & ~0x20 != 0x80 or p2 not in self.keys or message is None:
            return EXEC_ERROR                  # external sign only; a key in the slot and a message loaded
        sig = DSS.new(self.keys[p2], "fips-186-3").sign(_Prehashed(message))
        self.tempkey = self.msgdigbuf = None
        return sig                             # R || S, 64 bytes

    def _verify(self, p1, p2, data):
        message = self._message(p1)
        if p1 & 7 != 2 or p2 != 4 or len(data) != 128 or message is None:
            return PARSE_ERROR
        try:
            key = ECC.import_key(b"\x04" + data[64:], curve_name="P-256")
            DSS.new(key, "fips-186-3").verify(_Prehashed(message), data[:64])
            return SUCCESS
        except ValueError:
            return MISCOMPARE
