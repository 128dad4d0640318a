"""The cycle-approximate simulator end to end: the same ELF as QEMU, KATs under the simulator,
cycles per cell from the emulated counter, deterministic counts, device profiles."""
import json
import shutil

import pytest

from conftest import cli

needs_sim = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="gcc-arm-none-eabi is installed by ./setup.sh")


def _run(tmp_path, *args, name="run"):
    out = tmp_path / f"{name}.json"
    proc = cli("run", *args, "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(out.read_text())


def test_unicorns_private_handle_is_read_from_tested_releases_only(monkeypatch):
    import ctypes
    import unicorn
    from cryptobench.core.errors import UsageError
    from cryptobench.targets.mcu.sim.binding import unicorn_handle
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    handle = unicorn_handle(uc)                 # the installed release is a tested one (pyproject pins it)
    assert isinstance(handle, ctypes.c_void_p) and handle.value
    with pytest.raises(UsageError) as exc:
        unicorn_handle(object())                # a Uc without the private attribute
    msg = str(exc.value)
    assert msg.startswith(f"unicorn {unicorn.__version__}: its Uc has no private engine handle _uch")
    assert "pip install 'unicorn>=2.1,<2.2'" in msg and "\n" not in msg
    monkeypatch.setattr(unicorn, "__version__", "2.2.0")
    with pytest.raises(UsageError) as exc:
        unicorn_handle(uc)
    msg = str(exc.value)
    assert msg.startswith("unicorn 2.2.0 is not a release the simulator was tested with (2.1.x)")
    assert "Uc._uch" in msg and "\n" not in msg


@pytest.mark.e2e
@needs_sim
def test_cifra_subset_on_a_simulated_m0_reports_cycles_stack_and_size(tmp_path):
    args = ("--target", "sim:cortex-m0", "--device", "stm32f030", "--op", "aes-gcm-encrypt", "--op",
            "chacha20-poly1305-encrypt", "--param", "bytes=0,16,256", "--param", "aad_bytes=16",
            "--engine", "bearssl", "--engine", "monocypher")
    proc, doc = _run(tmp_path, *args)
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert {(r["op"], r["engine"]) for r in ok} == {("aes-gcm-encrypt", "bearssl"),
                                                    ("chacha20-poly1305-encrypt", "bearssl"),
                                                    ("chacha20-poly1305-encrypt", "monocypher")}
    for r in ok:
        assert r["provenance"] == "simulated" and r["kat"] == "pass"
        assert r["target"] == "sim:cortex-m0:stm32f030"
        assert r["cycles"]["per_op_median"] > 0 and r["stack_bytes"] > 0 and r["code_size"]["flash_bytes"] > 0
        assert r["time_s"]["rsd_pct"] == 0          # deterministic: every repetition the same
        assert r["time_s"]["median"] == pytest.approx(r["cycles"]["per_op_median"] / 48e6, rel=1e-5)
    by = {(r["op"], r["engine"], r["params"]["bytes"]): r["cycles"]["per_op_median"] for r in ok}
    for op, lib in {(r["op"], r["engine"]) for r in ok}:
        assert by[(op, lib, 0)] < by[(op, lib, 16)] < by[(op, lib, 256)], "cycles grow with the length"
    sim = doc["conditions"]["target"]["simulator"]
    assert sim["device"] == "stm32f030" and sim["flash_ws"] == 1 and sim["model"]
    assert "At 256 B (the Cifra table)" in proc.stdout
    # the modeled energy's footnote names the voltage, current and source the cells were stored with
    assert ("(provenance: modeled; E = t x 3.3 V x 22.4 mA (active), from: ST DS9773"
            in " ".join(proc.stdout.split())), proc.stdout
    # the same ELF and profile give the same counts
    _, again = _run(tmp_path, *args, name="again")
    assert {(r["op"], r["engine"], r["params"]["bytes"]): r["cycles"]["per_op_median"]
            for r in again["results"] if r["status"] == "ok"} == by


@pytest.mark.e2e
@needs_sim
def test_a_board_with_a_uart_console_reaches_its_end_line(tmp_path):
    """The nRF52840 profile's board prints over the nRF UART, not semihosting: its lines reach the host
    with the cycle accounting installed. (Installing it once rebound the name the UART hooks read the
    console kind from, so every byte was dropped and the run ended on the watchdog.)"""
    _, doc = _run(tmp_path, "--target", "sim:cortex-m4", "--device", "nrf52840", "--op", "sha256",
                  "--param", "bytes=64", "--engine", "mbedtls")
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r["detail"]
    assert r["cycles"]["per_op_median"] > 0
    assert doc["conditions"]["target"]["simulator"]["device"] == "nrf52840"


@pytest.mark.e2e
@needs_sim
def test_wait_states_cost_cycles(tmp_path):
    """The same M0 code on the 1-wait-state STM32F030 profile takes more cycles than on the ideal M0."""
    common = ("--op", "sha256", "--param", "bytes=256", "--engine", "mbedtls")
    _, slow = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "stm32f030", *common, name="f030")
    _, ideal = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "ideal-m0", *common, name="ideal")
    c = lambda doc: next(r for r in doc["results"])["cycles"]["per_op_median"]
    assert c(slow) > c(ideal)


@pytest.mark.qemu
def test_sim_target_errors_are_one_line():
    for args, want in ((["--target", "sim:cortex-m9"], "valid: sim:cortex-m0"),
                       (["--target", "sim:cortex-m0", "--device", "cc2652"], "has a cortex-m4, not a cortex-m0"),
                       (["--target", "sim:cortex-m4", "--device", "nosuch"], "valid: stm32f030"),
                       (["--target", "qemu:mps2-an385", "--device", "cc2652"], "sim:CORE targets only")):
        proc = cli("run", "--op", "sha256", *args)
        assert proc.returncode == 2, proc.stderr
        assert want in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
@needs_sim
def test_every_library_kat_passes_under_the_simulator(tmp_path):
    """Each recipe's ops (short inputs; EC-JPAKE left to the ti-cc26x2 run, it is 600 M cycles)
    run under sim:cortex-m3 and pass their known-answer tests there."""
    from cryptobench.targets.mcu.firmware.recipes import builtin_recipes, load_recipe
    # driver recipes (`requires` a peripheral) run on a device that models it: tests/test_peripherals.py
    names = [name for name in builtin_recipes() if not load_recipe(name).requires]
    ops = sorted({op for name in names for op in load_recipe(name).ops} - {"ecjpake-exchange"})
    args = ["--target", "sim:cortex-m3", "--param", "bytes=16", "--param", "curve=p256"]
    for op in ops:
        args += ["--op", op]
    _, doc = _run(tmp_path, *args)
    ran = [r for r in doc["results"] if r["status"] != "unsupported"]
    assert ran and all(r["status"] == "ok" and r["kat"] == "pass" for r in ran), \
        [(r["op"], r["engine"], r["detail"]) for r in ran if r["status"] != "ok"]
    for name in names:
        recipe = load_recipe(name)
        for op in set(recipe.ops) - {"ecjpake-exchange"}:
            if op in ("ecdh-keygen", "ecdh-shared-secret") and name == "monocypher":
                continue                             # x25519 only; the run asked for p256
            assert any(r["op"] == op and r["engine"] == recipe.name and r["status"] == "ok" for r in ran), (name, op)


@pytest.mark.e2e
@needs_sim
def test_marker_gpio_frames_every_timed_repetition(tmp_path):
    """The firmware raises the board's marker GPIO (STM32 PA5 through RCC, MODER, BSRR) around
    each timed repetition: the simulator sees one window per repetition, a little longer than the
    repetition's counted cycles (the counter reads and the GPIO writes)."""
    _, doc = _run(tmp_path, "--target", "sim:cortex-m0", "--device", "stm32f030", "--op", "sha256",
                  "--param", "bytes=64,256", "--engine", "monocypher", "--engine", "mbedtls")
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    assert ok
    for r in ok:
        m = r["marker"]
        assert m["windows"] == r["n"]
        for w, s in zip(m["cycles"], [x[2] for x in r["samples"]]):
            assert s <= w <= s + 64
