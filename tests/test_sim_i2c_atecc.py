"""The simulator's I2C bus (sim/i2c/bus.py) against UM10204's arithmetic, and the ATECC508A/608 model
(sim/i2c/atecc.py) against CryptoAuthLib's protocol: the wake pulse only at a slow enough clock, the
wake token, NACK while asleep, waking or executing, CryptoAuthLib's CRC, each command's execution
time by part and clock mode, real answers (SHA-256 as hashlib's, an ECDSA signature that verifies
outside the model, a tampered one that the model's Verify refuses), and misuse answered as the
device does."""
import hashlib
from pathlib import Path

import pytest
from Crypto.PublicKey import ECC
from Crypto.Signature import DSS

from cryptobench.targets.mcu.sim.i2c import atecc as A
from cryptobench.targets.mcu.sim.i2c.bus import Bus, mode_of


def test_bus_arithmetic_is_um10204s():
    bus = Bus(400_000)
    assert mode_of(100_000).name == "Standard-mode" and bus.mode.name == "Fast-mode"
    with pytest.raises(ValueError, match="above Fast-mode Plus"):
        mode_of(3.4e6)
    # nobody at 0x50: START hold, the address byte and its (missing) acknowledge, STOP set-up
    t = bus.write(0x50, b"\x00\x01", at=0.0)
    assert not t.address_acked and t.end_s == pytest.approx(0.6e-6 + 9 / 400e3 + 0.6e-6)
    # the next START waits the bus-free time
    assert bus.write(0x50, b"", at=0.0).start_s == pytest.approx(t.end_s + 1.3e-6)
    with pytest.raises(ValueError, match="reserved"):
        bus.attach(A.Atecc(address=0x78))


def _awake(scl=400_000, **kw):
    dev = A.Atecc(**kw)
    bus = Bus(100_000)
    bus.attach(dev)
    t = bus.write(0, b"\x01", at=0.0).end_s              # CryptoAuthLib's wake: address 0 at 100 kHz
    bus.scl_hz = scl
    t = bus.read(A.ADDRESS, 4, at=t + 1500e-6)
    assert t.address_acked and t.data == A.WAKE_TOKEN
    return dev, bus, t.end_s


def _rewake(bus, t):
    """Idle, then wake again, as CryptoAuthLib brackets every command (the watchdog runs from the wake)."""
    t = bus.write(A.ADDRESS, b"\x02", at=t).end_s
    scl, bus.scl_hz = bus.scl_hz, 100_000
    t = bus.write(0, b"\x01", at=t).end_s
    bus.scl_hz = scl
    r = bus.read(A.ADDRESS, 4, at=t + 1500e-6)
    assert r.data == A.WAKE_TOKEN
    return r.end_s


def _command(bus, t, opcode, p1=0, p2=0, data=b""):
    """Send one command, poll until the device acknowledges again, read the response."""
    pkt = A.packet(bytes([opcode, p1, p2 & 0xFF, p2 >> 8]) + data)
    w = bus.write(A.ADDRESS, b"\x03" + pkt, at=t)
    assert w.address_acked and w.acked == 1 + len(pkt), w
    t, polls = w.end_s, 0
    while True:
        r = bus.read(A.ADDRESS, 1, at=t)
        if r.address_acked:
            break
        t, polls = r.end_s + 100e-6, polls + 1
        assert polls < 20_000, "the device never answered again"
    n, answered = r.data[0], r.start_s
    r = bus.read(A.ADDRESS, n - 1, at=r.end_s)          # the rest: the device goes on where the count read stopped
    body = bytes([n]) + r.data
    assert A.crc16(body[:-2]) == body[-2:]
    return body[1:-2], answered - w.end_s, r.end_s, polls


def test_the_crc_is_cryptoauthlibs():
    assert A.crc16(b"\x04\x11") == bytes.fromhex("3343")     # the wake token's CRC (hal_check_wake)


def test_wake_needs_sda_low_for_t_wlo_and_then_t_whi():
    dev = A.Atecc()
    bus = Bus(400_000)
    bus.attach(dev)
    t = bus.write(0, b"\x01", at=0.0).end_s                 # at 400 kHz SDA is low ~20 us: too short
    assert not bus.read(A.ADDRESS, 4, at=t + 2e-3).address_acked and dev.state == "sleep"
    bus.scl_hz = 100_000                                     # ~80 us low: the device wakes
    t = bus.write(0, b"\x01", at=t + 3e-3).end_s
    assert not bus.read(A.ADDRESS, 4, at=t + 1e-3).address_acked       # still within t_WHI
    assert bus.read(A.ADDRESS, 4, at=t + 1.6e-3).data == A.WAKE_TOKEN


@pytest.mark.parametrize("part,mode,sign_ms", [("ATECC508A", 0x00, 60), ("ATECC608", 0x00, 115),
                                               ("ATECC608", 0x28, 220), ("ATECC608", 0x68, 665)])
def test_sign_takes_cryptoauthlibs_time_and_verifies_outside_the_model(part, mode, sign_ms):
    dev, bus, t = _awake(part=part, chip_mode=mode)
    if part == "ATECC608":
        cfg, _, t, _ = _command(bus, t, A.READ, 0x00, A.CHIPMODE_OFFSET // 4)
        assert cfg[A.CHIPMODE_OFFSET % 4] == mode           # what CryptoAuthLib reads to pick its table
    pub, _, t, _ = _command(bus, t, A.GENKEY, 0x04, 0)
    digest = hashlib.sha256(b"cryptobench").digest()
    t = _rewake(bus, t)
    assert _command(bus, t, A.NONCE, 0x03, 0, digest)[0] == b"\x00"
    sig, waited, done, polls = _command(bus, t + 0.01, A.SIGN, 0x80, 0)
    # from the STOP to the START of the first acknowledged poll: the execution time, less the STOP and
    # the poll's own START and address byte (a few us), plus at most one poll period (100 us + a NACKed byte)
    assert polls > 0 and sign_ms / 1000 - 30e-6 <= waited <= sign_ms / 1000 + 150e-6
    key = ECC.import_key(b"\x04" + pub, curve_name="P-256")
    DSS.new(key, "fips-186-3").verify(A._Prehashed(digest), sig)
    # the model's Verify: the signature passes, a tampered one is a miscompare (status 0x01)
    _, _, t, _ = _command(bus, _rewake(bus, done), A.NONCE, 0x03, 0, digest)
    ok, _, t, _ = _command(bus, t, A.VERIFY, 0x02, 4, sig + pub)
    assert ok == b"\x00"
    _, _, t, _ = _command(bus, _rewake(bus, t), A.NONCE, 0x03, 0, digest)
    bad = sig[:63] + bytes([sig[63] ^ 1])
    assert _command(bus, t, A.VERIFY, 0x02, 4, bad + pub)[0] == bytes([A.MISCOMPARE])


def test_sha256_through_start_update_end_is_hashlibs():
    msg = bytes(range(200))
    dev, bus, t = _awake()
    assert _command(bus, t, A.SHA, 0x00)[0] == b"\x00"
    for i in range(0, 192, 64):
        _, _, t, _ = _command(bus, t, A.SHA, 0x01, 0, msg[i:i + 64])
    digest, _, t, _ = _command(bus, t, A.SHA, 0x02, 8, msg[192:])
    assert digest == hashlib.sha256(msg).digest()
    assert [op for _, op, _ in dev.log].count(A.SHA) == 5


def test_the_608_signs_the_message_digest_buffer_as_cryptoauthlib_loads_it():
    dev, bus, t = _awake()
    pub, _, t, _ = _command(bus, t, A.GENKEY, 0x04, 0)
    digest = hashlib.sha256(b"atcab_sign").digest()
    t = _rewake(bus, t)
    assert _command(bus, t, A.NONCE, 0x43, 0, digest)[0] == b"\x00"     # pass-through into the Message Digest Buffer
    assert _command(bus, t + 0.03, A.SIGN, 0x80, 0)[0] == bytes([A.EXEC_ERROR])   # TempKey is empty
    t = _rewake(bus, t + 0.2)
    _command(bus, t, A.NONCE, 0x43, 0, digest)
    sig, _, t, _ = _command(bus, t + 0.03, A.SIGN, 0xA0, 0)                # source: the Message Digest Buffer
    DSS.new(ECC.import_key(b"\x04" + pub, curve_name="P-256"), "fips-186-3").verify(A._Prehashed(digest), sig)
    a508 = _awake(part="ATECC508A")
    assert _command(a508[1], a508[2], A.NONCE, 0x43, 0, digest)[0] == bytes([A.PARSE_ERROR])  # the 508A has no such buffer


def test_misuse_is_answered_as_the_device_does():
    dev, bus, t = _awake()
    pkt = bytearray(A.packet(bytes([A.RANDOM, 0, 0, 0])))
    pkt[-1] ^= 1
    bus.write(A.ADDRESS, b"\x03" + bytes(pkt), at=t)
    bus.write(A.ADDRESS, b"\x00", at=t + 0.5e-3)                     # reset the buffer's address
    r = bus.read(A.ADDRESS, 4, at=t + 1e-3)
    assert r.data == A.packet(bytes([A.CRC_ERROR]))                      # a bad CRC: status 0xFF
    body, _, t, _ = _command(bus, r.end_s, 0x77)                         # no such opcode: parse error
    assert body == bytes([A.PARSE_ERROR])
    assert _command(bus, t, A.SIGN, 0x80, 3)[0] == bytes([A.EXEC_ERROR])    # no key in slot 3
    rnd, _, t, _ = _command(bus, t, A.RANDOM)
    assert len(rnd) == 32
    bus.write(A.ADDRESS, b"\x01", at=t)                                  # sleep: the address goes unanswered
    assert not bus.read(A.ADDRESS, 1, at=t + 1e-3).address_acked


def test_the_watchdog_sends_an_awake_device_to_sleep():
    dev, bus, t = _awake()
    assert bus.read(A.ADDRESS, 1, at=t + 1.0).address_acked
    assert not bus.read(A.ADDRESS, 1, at=t + 1.4).address_acked and dev.state == "sleep"


# ---- the RA IIC controller model driving the bus ------------------------------------------------------
from cryptobench.targets.mcu.sim.i2c import ra_iic as R          # noqa: E402


class RegisterDriver:
    """A core's accesses to one controller model, two cycles each: `dev` and its access size."""
    dev, size, t = None, 4, 0

    def w(self, o, v):
        self.t += 2
        self.dev.write(o, self.size, v, self.t)

    def r(self, o):
        self.t += 2
        return self.dev.read(o, self.size, self.t)


class PolledDriver(RegisterDriver):
    """A polled master driver in the order FSP's r_iic_master drives the registers (open: reset,
    bit rate, ICFER, enable; a write: ST, address, bytes on TDRE, TEND, SP; a read: ST, address,
    the dummy read, WAIT before the second-last byte and ACKBT before the last, SP, the last read)."""

    def __init__(self, bus, scl=400_000):
        self.iic = self.dev = R.RaIic(0x4009F000, bus=bus, core_clock_hz=200_000_000, pclkb_hz=50_000_000)
        self.size = 1                                      # the IIC's registers are bytes
        self.set_rate(scl)

    def until(self, o, bits):
        while not self.r(o) & bits:
            pass

    def set_rate(self, scl):
        # IICphi = PCLKB / 2^CKS; (BRH + 1) + (BRL + 1) = IICphi / SCL
        cks, brh, brl = (2, 9, 20) if scl == 400_000 else (4, 14, 15)
        self.w(R.ICCR1, R.IICRST)
        self.w(R.ICCR1, R.IICRST | R.ICE)
        self.w(R.ICMR1, cks << 4)
        self.w(R.ICBRH, 0xE0 | brh), self.w(R.ICBRL, 0xE0 | brl)
        self.w(R.ICFER, 0x77)
        self.w(R.ICCR1, R.ICE)

    def _end(self):
        self.w(R.ICCR2, R.SP)
        self.until(R.ICSR2, R.STOP)
        self.w(R.ICSR2, 0xFF & ~(R.STOP | R.NACKF))

    def write(self, addr, data):
        while self.r(R.ICCR2) & R.BBSY:
            pass
        self.w(R.ICCR2, R.ST)
        self.until(R.ICSR2, R.TDRE)
        self.w(R.ICDRT, addr << 1)
        for b in data:
            while not self.r(R.ICSR2) & (R.TDRE | R.NACKF):
                pass
            if self.r(R.ICSR2) & R.NACKF:
                break
            self.w(R.ICDRT, b)
        while not self.r(R.ICSR2) & (R.TEND | R.NACKF):
            pass
        nack = bool(self.r(R.ICSR2) & R.NACKF)
        self._end()
        return not nack

    def read(self, addr, n):
        while self.r(R.ICCR2) & R.BBSY:
            pass
        self.w(R.ICCR2, R.ST)
        self.until(R.ICSR2, R.TDRE)
        self.w(R.ICDRT, addr << 1 | 1)
        while not self.r(R.ICSR2) & (R.RDRF | R.NACKF):
            pass
        if self.r(R.ICSR2) & R.NACKF:
            self._end()
            return None
        if n == 1:
            self.w(R.ICMR3, R.ACKWP | R.ACKBT)
        self.r(R.ICDRR)                                   # the dummy read
        out = bytearray()
        for i in range(n):
            self.until(R.ICSR2, R.RDRF)
            left = n - i
            if left == 3:
                self.w(R.ICMR3, R.WAIT)
            if left == 2:
                self.w(R.ICMR3, R.WAIT | R.ACKWP | R.ACKBT)
            if left == 1:
                self.w(R.ICCR2, R.SP)
                out.append(self.r(R.ICDRR))
                self.w(R.ICMR3, R.ACKWP)                   # WAIT and ACKBT back to 0
                self.until(R.ICSR2, R.STOP)
                self.w(R.ICSR2, 0xFF & ~(R.STOP | R.NACKF))
                break
            out.append(self.r(R.ICDRR))
        return bytes(out)

    def seconds(self):
        return self.t / 200e6


def test_the_ra_iic_bit_rate_is_the_riic_formula():
    bus = Bus(100_000)
    d = PolledDriver(bus, 400_000)
    assert d.iic.scl_hz() == pytest.approx(12.5e6 / 31)            # 403.2 kHz
    d.set_rate(100_000)
    assert d.iic.scl_hz() == pytest.approx(3.125e6 / 31)           # 100.8 kHz


def test_cryptoauthlibs_sequence_through_the_ra_iic_model():
    bus = Bus(100_000)
    dev = A.Atecc()
    bus.attach(dev)
    d = PolledDriver(bus, 100_000)
    assert not d.write(0, b"\x01")                                  # the wake pulse: NACKed, SDA low ~80 us
    d.set_rate(400_000)
    d.t += int(1500e-6 * 200e6)
    assert d.read(A.ADDRESS, 4) == A.WAKE_TOKEN
    pkt = A.packet(bytes([A.RANDOM, 0, 0, 0]))
    t0 = d.t
    assert d.write(A.ADDRESS, b"\x03" + pkt)
    sent = d.t
    # the address, the word address and the 7-byte packet at 403 kHz: 9 SCL periods each, plus START and STOP
    assert (sent - t0) / 200e6 == pytest.approx((2 + len(pkt)) * 9 / d.iic.scl_hz() + 1.2e-6, rel=0.02)
    while (count := d.read(A.ADDRESS, 1)) is None:                  # NACKed while the Random command runs
        d.t += int(100e-6 * 200e6)
    assert (d.t - sent) / 200e6 >= A.EXEC_MS["ATECC608-M0"][A.RANDOM] / 1000
    assert count == bytes([35])                                      # the count first, as CryptoAuthLib reads it
    body = bytes([35]) + d.read(A.ADDRESS, 34)                       # then the rest
    assert A.crc16(body[:-2]) == body[-2:] and len(body[1:-2]) == 32


# ---- CryptoAuthLib on the simulated RA6M4 ---------------------------------------------------------------
import json                                                       # noqa: E402

from conftest import cli                                          # noqa: E402

from cryptobench.targets.mcu.firmware.recipes import load_recipe  # noqa: E402
from cryptobench.targets.mcu.sim.devices import get_device        # noqa: E402


def test_the_atecc608_recipe_takes_cryptoauthlib_from_its_source_distribution_and_needs_the_iic():
    from cryptobench.targets.mcu.firmware.recipes import RECIPES_DIR
    recipe = load_recipe(str(RECIPES_DIR / "atecc608.toml"))
    assert (recipe.sdist, recipe.sdist_version) == ("cryptoauthlib", "20260505") and not recipe.crate
    assert recipe.requires == ["ra-iic"] and recipe.keys == "device"
    assert set(recipe.ops) == {"random", "sha256", "ecdsa-verify", "ecdsa-sign", "ecc-keygen"}
    kinds = [s["kind"] for s in get_device("ra6m4", "cortex-m33").peripheral_models]
    assert kinds == ["ra-iic"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_cryptoauthlib_unmodified_on_the_simulated_ra6m4_talks_to_the_modelled_atecc608(tmp_path):
    # CryptoAuthLib's wake at 100 kHz, its commands at 400 kHz, its 2 ms polls and the responses, all on the
    # simulated core; the ops without known answers (the other ops' take minutes of busy-waiting)
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m33", "--device", "ra6m4", "--engine", "atecc608", "--op", "random",
               "--op", "ecc-keygen", "--op", "ecdsa-sign", "--param", "bytes=32", "--repeat", "1",
               "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    cells = {r["op"]: r for r in json.loads(out.read_text())["results"]}
    for r in cells.values():
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["detail"])
        assert r["served_by"].startswith("peripheral: Renesas RA IIC") and "ATECC608 (M0) at 0x60" in r["served_by"]
        assert r["engine_band"]["unvalidated"]
    # each command's time from CryptoAuthLib's table (Random 23, GenKey 115; Sign: Random 23 + Nonce 20 +
    # Sign 115 ms), each at most one 2 ms poll period late, with CryptoAuthLib's 1 ms first wait, the
    # bytes on the wire (up to 2 ms for a 67-byte answer at 400 kHz) and the wakes (CryptoAuthLib idles
    # the device after each call: 1.5 ms a wake)
    slack = lambda commands: commands * (2e-3 + 1e-3 + 2e-3) + 1.5e-3      # noqa: E731
    assert 23e-3 <= cells["random"]["time_s"]["median"] <= 23e-3 + slack(1)
    assert 115e-3 <= cells["ecc-keygen"]["time_s"]["median"] <= 115e-3 + slack(1)
    assert 158e-3 <= cells["ecdsa-sign"]["time_s"]["median"] <= 158e-3 + slack(3)
    assert "verifies with the public key it returned" in cells["ecdsa-sign"]["detail"]
    assert "is a point of p256" in cells["ecc-keygen"]["detail"]


def test_a_source_distribution_is_unpacked_as_data(tmp_path, monkeypatch):
    """An archive that reaches outside its folder (or links out) is refused in one line; nothing lands outside."""
    import io
    import subprocess as sp
    import tarfile

    from cryptobench.core.errors import UsageError
    from cryptobench.targets.mcu.firmware import recipes

    monkeypatch.setenv("CRYPTOBENCH_CACHE", str(tmp_path / "cache"))

    def fake_pip(cmd, **kw):                      # what `pip download` leaves: one hostile .tar.gz
        dest = Path(cmd[cmd.index("-d") + 1])
        with tarfile.open(dest / "evil-1.0.tar.gz", "w:gz") as tar:
            data = b"owned"
            info = tarfile.TarInfo("../../escaped.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        return sp.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(recipes.subprocess, "run", fake_pip)
    with pytest.raises(UsageError) as err:
        recipes.sdist_tree("evil", "1.0", "recipe.toml")
    assert str(err.value).startswith("recipe.toml: the source distribution of evil 1.0 does not unpack")
    assert "\n" not in str(err.value)
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_bit_rate_no_i2c_mode_allows_is_one_line():
    from cryptobench.targets.mcu.sim.peripherals.base import PeripheralError
    d = PolledDriver(Bus(100_000))
    d.w(R.ICCR1, R.IICRST | R.ICE)
    d.w(R.ICMR1, 0), d.w(R.ICBRH, 0xE0), d.w(R.ICBRL, 0xE0)            # PCLKB / 2: 25 MHz
    d.w(R.ICCR1, R.ICE)
    with pytest.raises(PeripheralError) as err:
        d.w(R.ICCR2, R.ST)
    assert "SCL 25000 kHz" in str(err.value) and "Fast-mode Plus" in str(err.value) and "\n" not in str(err.value)


# ---- the STM32 I2C (v2) controller model ------------------------------------------------------------------
from cryptobench.targets.mcu.sim.i2c import stm32_i2c as S      # noqa: E402


class Stm32Driver(RegisterDriver):
    """A polled master in the order of ST's HAL (HAL_I2C_Master_Transmit/Receive): CR2 with SADD, NBYTES,
    AUTOEND and START; TXIS / RXNE per byte; STOPF, cleared through ICR; NACKF ends the transfer."""

    def __init__(self, bus, timingr):
        self.i2c = self.dev = S.Stm32I2c(0x40005400, bus=bus, core_clock_hz=160_000_000, i2cclk_hz=16_000_000)
        self.w(S.TIMINGR, timingr)
        self.w(S.CR1, S.PE)

    def _done(self):
        while not self.r(S.ISR) & S.STOPF:
            pass
        nack = bool(self.r(S.ISR) & S.NACKF)
        self.w(S.ICR, S.STOPCF | S.NACKCF)
        return not nack

    def write(self, addr, data):
        self.w(S.CR2, addr << 1 | len(data) << 16 | S.AUTOEND | S.START)
        for b in data:
            while not self.r(S.ISR) & (S.TXIS | S.NACKF):
                pass
            if self.r(S.ISR) & S.NACKF:
                break
            self.w(S.TXDR, b)
        return self._done()

    def read(self, addr, n):
        self.w(S.CR2, addr << 1 | S.RD_WRN | n << 16 | S.AUTOEND | S.START)
        out = bytearray()
        while len(out) < n:
            isr = self.r(S.ISR)
            if isr & S.NACKF:
                self._done()
                return None
            if isr & S.RXNE:
                out.append(self.r(S.RXDR))
        return bytes(out) if self._done() else None


def test_the_stm32_i2c_timing_and_cryptoauthlibs_wake_and_command():
    bus = Bus(100_000)
    dev = A.Atecc()
    bus.attach(dev)
    # RM0456's 16 MHz examples: 100 kHz PRESC 3, SCLL 0x13, SCLH 0x0F; 400 kHz PRESC 1, SCLL 0x09, SCLH 0x03
    standard, fast = 0x3 << 28 | 0x0F << 8 | 0x13, 0x1 << 28 | 0x03 << 8 | 0x09
    d = Stm32Driver(bus, standard)
    assert d.i2c.scl_hz() == pytest.approx(16e6 / (36 * 4))          # 111 kHz: t_SYNC left out
    assert not d.write(0, b"\x01")                                   # the wake pulse, NACKed: SDA low ~75 us
    d.w(S.CR1, 0), d.w(S.TIMINGR, fast), d.w(S.CR1, S.PE)
    d.t += int(1.5e-3 * 160e6)
    assert d.read(A.ADDRESS, 4) == A.WAKE_TOKEN
    pkt = A.packet(bytes([A.INFO, 0, 0, 0]))
    t0 = d.t
    assert d.write(A.ADDRESS, b"\x03" + pkt)
    assert (d.t - t0) / 160e6 == pytest.approx((2 + len(pkt)) * 9 / d.i2c.scl_hz(), rel=0.05)
    while (count := d.read(A.ADDRESS, 1)) is None:                   # NACKed while Info runs (5 ms)
        d.t += int(100e-6 * 160e6)
    assert count == bytes([7]) and d.read(A.ADDRESS, 6)[:4] == A.REVISION["ATECC608"]
