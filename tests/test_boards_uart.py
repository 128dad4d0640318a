"""Boards with real consoles: the register-level UART drivers of the firmware HAL (STM32 USART,
STM32F0 USART, nRF52 UARTE, CC26x2 UART0), the STM32 driver run on QEMU's STM32 machines whose
USARTs are register-level models, the board entries in boards.toml and `list targets`.

These start the real cross compiler and QEMU (./setup.sh installs them): no skips."""
import json

import pytest

from conftest import cli

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.build import FirmwareBuilder
from cryptobench.targets.mcu.firmware.plan import kat_from_vector, plan_c
from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve
from cryptobench.targets.mcu import boards as B
from cryptobench.targets.mcu.target import matching_vectors_for_op
from cryptobench.targets.mcu.qemu import run_image
from cryptobench.targets.verify import load_vectors

REAL = ("nucleo-f030r8", "nucleo-f401re", "nrf52840dk", "lp-cc2652r7", "mimxrt1060-evk", "ek-ra6m4")


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text())


@pytest.mark.qemu
@pytest.mark.parametrize("board,ops", [("stm32vldiscovery", ("sha256",)),
                                       ("netduinoplus2", ("sha256", "aes-gcm-encrypt"))])
def test_kats_pass_over_the_stm32_usart_console_on_qemu(tmp_path, board, ops):
    args = ["--target", f"qemu:{board}", "--param", "bytes=64", "--engine", "mbedtls", "--engine", "bearssl"]
    for op in ops:
        args += ["--op", op]
    _, doc = _run(tmp_path, *args)
    assert len(doc["results"]) == 2 * len(ops)
    for r in doc["results"]:
        assert r["status"] == "ok" and r["kat"] == "pass", (r["op"], r["engine"], r["detail"])
        assert "known-answer vectors on the target" in r["detail"] and "host's OpenSSL" in r["detail"]
        assert "time_s" not in r
    base = {"stm32vldiscovery": "0x40013800", "netduinoplus2": "0x40011000"}[board]
    for build in doc["conditions"]["builds"].values():
        assert build["console"] == f"stm32-usart:{base}"
    assert doc["conditions"]["target"]["board"] == board


def _kat_image(board: str):
    recipe = load_recipe("bearssl")
    resolve(recipe, None)
    b = B.BOARDS[board]
    builder = FirmwareBuilder(recipe, b, b.core, "Os", jobs=1)
    kats = [k for v in matching_vectors_for_op(load_vectors(), "sha256") if (k := kat_from_vector(v, "sha256"))]
    return builder.image("sha256.uart-test", ["sha256"], plan_c(kats, [], board, b.core, "uart test"))


@pytest.mark.qemu
def test_the_lines_come_over_the_usart_and_not_semihosting():
    """The same image with QEMU's serial port connected prints its protocol; with the port
    disconnected (semihosting still on) it prints nothing: the USART is the console."""
    img = _kat_image("stm32vldiscovery")
    over_uart = run_image(img.elf, "stm32vldiscovery", timeout_s=60, silence_s=20, uart_console=True)
    assert over_uart.complete, over_uart.problem
    assert over_uart.hello["board"] == "stm32vldiscovery"
    kats = [k for k in over_uart.kats_for("sha256") if not k.get("unsupported")]   # 8 KiB RAM: small buffers
    assert len(kats) >= 4 and all(k["ok"] for k in kats), kats
    lines = []
    silent = run_image(img.elf, "stm32vldiscovery", timeout_s=60, silence_s=20, uart_console=False,
                       on_line=lines.append)
    assert not silent.complete and not silent.hello and not [l for l in lines if l.startswith("{")]


@pytest.mark.slow
@pytest.mark.subprocess
def test_every_uart_driver_compiles_links_and_fits_its_board():
    """The drivers of the boards without silicon here: built with the board's set-up steps and
    divisor, linked into the board's memory map."""
    recipe = load_recipe("bearssl")
    resolve(recipe, None)
    seen = set()
    for name in REAL + ("stm32vldiscovery", "netduinoplus2"):
        b = B.BOARDS[name]
        img = FirmwareBuilder(recipe, b, b.core, "Os", jobs=1).image("empty", [], plan_c([], [], name, b.core, "t"))
        assert img.sizes["text"] > 0
        seen.add(b.console.partition(":")[0])
    assert {"stm32-usart", "stm32f0-usart", "nrf-uarte", "cc26x2-uart", "semihosting"} <= seen


def test_console_divisors_follow_the_reference_manuals():
    assert B.console_divisor("stm32f0-usart", 8_000_000, 115200) == 69        # RM0360: 8 MHz / 115200
    assert B.console_divisor("stm32-usart", 16_000_000, 115200) == 139       # RM0368: 16 MHz / 115200
    div = B.console_divisor("cc26x2-uart", 48_000_000, 115200)              # PL011: IBRD 26, FBRD 3
    assert (div >> 6, div & 63) == (26, 3)
    assert B.console_divisor("nrf-uarte", 16_000_000, 115200) == 0x01D60000   # nRF52840 PS BAUDRATE
    uart = B.BOARDS["lp-cc2652r7"].console_uart
    assert any(w for *_, w in uart["init"]), "the CC26x2 waits for its power domains"


def test_the_real_boards_have_clock_console_marker_and_flash_method():
    for name in REAL:
        b = B.BOARDS[name]
        assert b.clock_hz > 0 and b.marker.get("pin") and b.flash_method, name
        assert b.console_uart.get("pins") or b.uart_pins, name
        assert b.hardware == "untested", name
    assert B.BOARDS["ek-ra6m4"].core == "m33"


@pytest.mark.qemu
def test_list_targets_says_untested_on_hardware():
    proc = cli("list", "targets")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    heads = {l.split()[0]: l for l in lines if l and not l.startswith(" ")}
    for name in REAL:
        key = f"board:{name}" if B.BOARDS[name].pyocd_target else name
        assert "untested on hardware" in heads[key], heads.get(key)
    for name in ("stm32vldiscovery", "netduinoplus2", "mps2-an505"):
        assert heads[f"qemu:{name}"].split(None, 1)[1] == "QEMU machine"
    assert "rough" in heads["sim:cortex-m33"]
    assert "stm32-usart UART, PA9 TX / PA10 RX" in proc.stdout


def test_a_bad_console_in_boards_toml_names_file_line_and_what_was_expected(tmp_path, monkeypatch):
    bad = tmp_path / "boards.toml"
    good = B.BOARDS_FILE.read_text()
    bad.write_text(good.replace('kind = "stm32-usart", base = 0x40013800',
                                                     'kind = "stm32-usrt", base = 0x40013800'))
    monkeypatch.setattr(B, "BOARDS_FILE", bad)
    with pytest.raises(UsageError) as exc:
        B._load()
    line = next(n for n, l in enumerate(bad.read_text().splitlines(), 1) if l == "[board.stm32vldiscovery]")
    assert f"{bad}:{line}: [board.stm32vldiscovery]: console.kind: unknown UART 'stm32-usrt'" in str(exc.value)
    assert "expected one of cmsdk-uart" in str(exc.value)
    bad.write_text(good.replace('hardware = "untested"\nflash_method = "pyocd load --target nrf52840',
                                                     'flash_method = "pyocd load --target nrf52840'))
    with pytest.raises(UsageError) as exc:
        B._load()
    assert "[board.nrf52840dk]: a real board needs hardware" in str(exc.value)


@pytest.mark.e2e
def test_the_simulator_reads_the_cc26x2_uart_through_its_power_up_waits(tmp_path):
    """lp-cc2652r7's console waits for PRCM power domains: the simulator reads them as done and
    takes the lines from UART0's data register."""
    _, doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "cc2652", "--op", "sha256",
                  "--param", "bytes=64", "--engine", "bearssl")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert doc["conditions"]["builds"]["bearssl"]["console"] == "cc26x2-uart:0x40001000"
