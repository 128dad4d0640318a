"""The native Thumb executor (harness/sim/cbcpu.c, targets/mcu/sim/native.py) against Unicorn, its oracle.

- tests/data/sim_isa.S (flags, shifts, carries, IT blocks, multiplies, divides, bit fields,
  saturation, DSP, memory forms, table branches, floating point), built with arm-none-eabi-gcc
  for every core, runs in lock-step (targets/mcu/sim/lockstep.py): after every block, both executors' blocks
  have the same bytes and r0-r15, APSR and the FPU registers agree.
- real cryptobench firmware images (mbedTLS, BearSSL, Monocypher on M0, M3, M4, M4F, M7, M33,
  with and without flash wait states) give the same console output, instruction counts, counter
  logs, marker edges and cycles under both executors.
- what Unicorn cannot check: undefined instructions stop the run with a clear problem; SVC and
  pended exceptions enter their handler and return.
"""
import subprocess
from pathlib import Path

import pytest

from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.sim import native
from cryptobench.targets.mcu.sim.devices import get_device
from cryptobench.targets.mcu.sim.lockstep import lockstep
from cryptobench.targets.mcu.sim.simulator import FirmwareRun, Simulator
from cryptobench.targets.mcu.boards import BOARDS

ISA = Path(__file__).parent / "data" / "sim_isa.S"
LINK = ["-mthumb", "-nostdlib", "-nostartfiles", "-Wl,--section-start=.isr_vector=0", "-Wl,-Ttext=0x100",
        "-Wl,-Tbss=0x20000000", "-Wl,-e,_start"]
CORES = {  # name: (simulator core, gcc flags, least blocks the ISA image runs)
    "m0": ("cortex-m0", ["-mcpu=cortex-m0"], 30),
    "m0plus": ("cortex-m0plus", ["-mcpu=cortex-m0plus"], 30),
    "m3": ("cortex-m3", ["-mcpu=cortex-m3"], 60),
    "m4": ("cortex-m4", ["-mcpu=cortex-m4"], 75),
    "m4f": ("cortex-m4", ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"], 80),
    "m7": ("cortex-m7", ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"], 80),
    "m33": ("cortex-m33", ["-mcpu=cortex-m33"], 75),
    "m33f": ("cortex-m33", ["-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"], 80),
}


def _asm(tmp_path, source, flags, name="t"):
    src = tmp_path / f"{name}.S"
    src.write_text(source)
    elf = tmp_path / f"{name}.elf"
    subprocess.run(["arm-none-eabi-gcc", *flags, *LINK, str(src), "-o", str(elf)], check=True)
    return elf


def _simulator(core, spec=None, executor=None):
    device = get_device(spec, core)
    return Simulator(device, BOARDS[device.board], executor=executor)


@pytest.mark.parametrize("name", sorted(CORES))
def test_isa_edge_cases_agree_with_unicorn_block_by_block(tmp_path, name):
    core, flags, least = CORES[name]
    elf = _asm(tmp_path, ISA.read_text(), flags, name)
    divergence, blocks = lockstep(_simulator(core), elf)
    assert divergence is None, str(divergence)
    assert blocks >= least, f"only {blocks} blocks ran: the image ended early"


IMAGES = [  # (library, cpu, device spec, core)
    ("mbedtls", "m0", "stm32f030", "cortex-m0"),
    ("bearssl", "m3", "ideal-m3", "cortex-m3"),
    ("mbedtls", "m4", "cc2652:ws=2", "cortex-m4"),
    ("monocypher", "m4f", "ideal-m4", "cortex-m4"),
    ("mbedtls", "m7", "imxrt1060", "cortex-m7"),
    ("bearssl", "m33", "ideal-m33", "cortex-m33"),
]


def _image(lib, cpu, device):
    from cryptobench.targets.mcu.firmware.build import FirmwareBuilder
    from cryptobench.targets.mcu.firmware.plan import Cell, plan_c
    from cryptobench.targets.mcu.firmware.recipes import load_recipe, resolve
    from cryptobench.targets.host.harness import HarnessProcess
    from cryptobench.targets.mcu.target import make_inputs
    board = BOARDS[device.board]
    recipe = resolve(load_recipe(lib))
    curve = "x25519" if lib == "monocypher" else "p256"
    wanted = [("ecdh-shared-secret", {"curve": curve}, 1),
              ("aes-gcm-encrypt", {"key_bits": 128, "bytes": 256, "aad_bytes": 16, "rekey": 1}, 2),
              ("chacha20-poly1305-encrypt", {"bytes": 256, "aad_bytes": 16}, 2), ("sha256", {"bytes": 256}, 2),
              ("sha512", {"bytes": 256}, 2)]
    wanted = [w for w in wanted if w[0] in recipe.ops]
    host = HarnessProcess()
    try:
        cells = [Cell(make_inputs(host, op, params)[0], reps) for op, params, reps in wanted]
    finally:
        host.close()
    ops = sorted({op for op, _, _ in wanted})
    return FirmwareBuilder(recipe, board, cpu, "Os").image("native-vs-unicorn", ops,
                                                           plan_c([], cells, board.name, cpu, "bench")).elf


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("lib,cpu,spec,core", IMAGES, ids=[f"{i[0]}-{i[1]}-{i[2]}" for i in IMAGES])
def test_firmware_images_give_unicorns_counts(lib, cpu, spec, core):
    sims = {ex: _simulator(core, spec, ex) for ex in native.EXECUTORS}
    elf = _image(lib, cpu, sims["native"].device)
    runs = {}
    for ex, sim in sims.items():
        lines = []
        runs[ex] = (sim.run(elf, on_line=lines.append), lines)
    (n, n_lines), (u, u_lines) = runs["native"], runs["unicorn"]
    assert n.complete and u.complete, (n.problem, u.problem)
    assert n_lines == u_lines and n.cells and n.cells == u.cells
    assert n.stats["executor"] == "native" and u.stats["executor"] == "unicorn"
    assert n.stats["instructions"] == u.stats["instructions"]
    assert n.counter_insns == u.counter_insns
    assert abs(n.stats["cycles"] - u.stats["cycles"]) <= 0.005 * u.stats["cycles"]
    assert len(n.counter_reads) == len(u.counter_reads)
    assert all(abs(a - b) <= 0.005 * max(b, 1) for a, b in zip(n.counter_reads, u.counter_reads))
    assert len(n.marker_edges) == len(u.marker_edges)
    again = sims["native"].run(elf)                # deterministic
    assert (again.stats["instructions"], again.stats["cycles"], again.counter_reads) == \
        (n.stats["instructions"], n.stats["cycles"], n.counter_reads)


EXIT = """
    movs r0, #0x18
    bkpt 0xab
"""
VECTORS = """
    .syntax unified
    .thumb
    .section .isr_vector, "a"
    .word 0x20008000
    .word _start
    .rept 9
    .word fault
    .endr
    .word svc_handler          /* 11: SVCall */
    .rept 3
    .word fault
    .endr
    .word systick_handler      /* 15: SysTick */
    .text
    .thumb_func
fault:
    b fault
"""


def _cpu_run(tmp_path, body, core="cortex-m3", flags=("-mcpu=cortex-m3",), pend=None):
    """Runs `body` on the native executor alone; returns (registers r0-r15, xPSR, problem)."""
    elf = _asm(tmp_path, VECTORS + body, list(flags))
    sim = _simulator(core)
    run = FirmwareRun(sim, elf, lambda line: None, executor="native")
    cpu = run.ex.cpu
    vectors = run.ex.read(run.elf.vectors, 8)
    run.machine.mem.set_reg("msp", int.from_bytes(vectors[:4], "little"))
    cpu.set_reg(native.REG_PC, int.from_bytes(vectors[4:], "little"))
    if pend is not None:
        cpu.run(3, 10.0)
        cpu.pend(pend)
    cpu.run(10_000, 10.0)
    regs = [cpu.reg(i) for i in range(16)] + [cpu.reg(native.REG_XPSR)]
    problem = cpu.problem()
    cpu.close()
    return regs, problem


def test_an_undefined_instruction_stops_the_run_with_its_encoding_and_pc(tmp_path):
    _, problem = _cpu_run(tmp_path, """
    .thumb_func
    .global _start
_start:
    movs r0, #1
    .hword 0xde05              /* UDF #5 */
svc_handler:
systick_handler:
    b .
""")
    assert problem == "undefined instruction 0xde05 at pc=0x00000104"     # fault: 0x100, _start: 0x102


def test_svc_enters_its_handler_and_returns_to_thread_mode(tmp_path):
    regs, problem = _cpu_run(tmp_path, """
    .thumb_func
    .global _start
_start:
    movs r4, #3
    mov r5, sp
    svc #1
    adds r4, #1
    mov r6, sp
""" + EXIT + """
    .thumb_func
svc_handler:
    mrs r7, ipsr
    mov r8, lr
    movs r4, #40
    bx lr
    .thumb_func
systick_handler:
    b .
""")
    assert problem is None
    assert regs[7] == 11 and regs[8] == 0xFFFFFFF9       # IPSR in the handler, EXC_RETURN to thread/MSP
    assert regs[4] == 41 and regs[6] == regs[5] == 0x20008000
    assert regs[16] & 0x1FF == 0                         # back in thread mode


def test_a_pended_exception_is_taken_at_a_block_boundary_and_returns(tmp_path):
    regs, problem = _cpu_run(tmp_path, """
    .thumb_func
    .global _start
_start:
    movs r4, #0
    movs r6, #0
1:  adds r4, #1
    cmp r4, #200
    bne 1b
""" + EXIT + """
    .thumb_func
svc_handler:
    b .
    .thumb_func
systick_handler:
    mrs r6, ipsr
    push {r4, lr}
    movs r4, #100
    pop {r4, pc}
""", pend=15)
    assert problem is None
    assert regs[6] == 15 and regs[4] == 200


def test_the_executor_is_native_unless_unicorn_is_asked_for(monkeypatch):
    monkeypatch.delenv(native.ENV, raising=False)
    assert native.executor_choice() == "native"
    assert native.executor_choice("unicorn") == "unicorn"
    monkeypatch.setenv(native.ENV, "unicorn")
    assert native.executor_choice() == "unicorn"
    monkeypatch.setenv(native.ENV, "qemu")
    with pytest.raises(UsageError) as exc:
        native.executor_choice()
    assert str(exc.value) == ("$CRYPTOBENCH_SIM_EXECUTOR='qemu' is not a simulator executor; expected one of: "
                              "native, unicorn")


SMC = """
    .thumb_func
    .global _start
_start:
    ldr r0, =0x20001000        /* copy func to RAM, call it */
    ldr r1, =func
    ldr r2, [r1]
    str r2, [r0]
    adds r3, r0, #1
    blx r3
    mov r4, r0
    ldr r0, =0x20001000        /* patch its immediate (movs r0, #5 -> #7), call it again */
    movs r2, #7
    strb r2, [r0]
    adds r3, r0, #1
    blx r3
    mov r5, r0
""" + EXIT + """
    .thumb_func
svc_handler:
systick_handler:
    b .
    .align 2
func:
    movs r0, #5
    bx lr
    .ltorg
"""


def test_code_written_to_ram_runs_and_a_write_over_decoded_code_is_seen(tmp_path):
    regs, problem = _cpu_run(tmp_path, SMC)
    assert problem is None
    assert (regs[4], regs[5]) == (5, 7)
    divergence, _ = lockstep(_simulator("cortex-m3"), tmp_path / "t.elf")
    assert divergence is None, str(divergence)


@pytest.mark.e2e
def test_bearssl_ecdsa_on_a_wait_state_profile_verifies_in_openssl(tmp_path):
    """BearSSL's P-256 signature made on sim:cortex-m3 at stm32f207's 3 wait states verifies in the
    host's OpenSSL: the executor's arithmetic on a wait-state profile, checked by a third party."""
    import json
    from conftest import cli
    out = tmp_path / "run.json"
    proc = cli("run", "--target", "sim:cortex-m3", "--device", "stm32f207", "--op", "ecdsa-sign", "--param",
               "curve=p256", "--engine", "bearssl", "--db", str(tmp_path / "db.sqlite"), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    (r,) = doc["results"]
    assert r["status"] == "ok" and r["kat"] == "pass", r.get("detail")
    assert doc["conditions"]["target"]["simulator"]["executor"] == "native"


CONSOLE = """
    .thumb_func
    .global _start
_start:
    ldr r0, =0x40001000        /* the console's data register (serve_console below) */
    ldr r1, =0x50000000        /* another register of the host's */
    ldr r4, [r0, #0x18]        /* the status register: the value it always reads */
    movs r2, #'a'
    strb r2, [r0]
    movs r2, #'b'
    strb r2, [r0]
    movs r2, #10
    strb r2, [r0]
    ldr r5, [r0]               /* the data register reads back the last value stored */
    movs r2, #'c'
    strb r2, [r0]
    movs r2, #7
    str r2, [r1]               /* the host sees 'c' before this store */
    movs r2, #'d'
    strb r2, [r0]
    movs r3, #0xe9             /* a byte above 0x7f: one Latin-1 character, as a callback per byte gave */
    strb r3, [r0]
done:
    b done                     /* the run returns at its block limit: the rest of the line comes then */
svc_handler:
systick_handler:
    b .
"""


def test_the_console_uart_served_natively_keeps_the_order_of_what_the_host_sees(tmp_path):
    elf = _asm(tmp_path, VECTORS + CONSOLE, ["-mcpu=cortex-m3"])
    run = FirmwareRun(_simulator("cortex-m3"), elf, lambda line: None, executor="native")
    events = []
    assert run.ex.serve_console(0x40001018, 0xC0, 0x40001000, lambda text: events.append(("text", text)))
    run.ex.map_mmio(0x50000000, 0x1000, lambda offset, size: 0,
                    lambda offset, size, value: events.append(("store", value)))
    cpu = run.ex.cpu
    vectors = run.ex.read(run.elf.vectors, 8)
    run.machine.mem.set_reg("msp", int.from_bytes(vectors[:4], "little"))
    cpu.set_reg(native.REG_PC, int.from_bytes(vectors[4:], "little"))
    cpu.run(1000, 10.0)
    assert cpu.problem() is None
    assert events == [("text", "ab\n"), ("text", "c"), ("store", 7), ("text", "d\xe9")]
    assert (cpu.reg(4), cpu.reg(5)) == (0xC0, 10)
    cpu.close()


def test_a_write_hook_on_the_console_register_keeps_the_console_with_the_host(tmp_path):
    """`sim run --marker` may watch any address with a write hook: its stores must reach the hook,
    so the executor does not take the console over then."""
    sim = _simulator("cortex-m3")
    run = FirmwareRun(sim, _asm(tmp_path, VECTORS + CONSOLE, ["-mcpu=cortex-m3"]), lambda line: None,
                      executor="native")
    run.ex.hook_writes(0x40000ffc, 0x40001003, lambda addr, size, value: None)
    assert not run.ex.serve_console(0x40001018, 0xC0, 0x40001000, lambda text: None)
    run.ex.cpu.close()
