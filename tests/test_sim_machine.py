"""One Cortex-M machine (targets/mcu/sim/machine.py), two clients: the same image gives the same
cycles, instructions, slept cycles, exceptions and problem through the firmware run
(simulator.py) and `sim run` (imagerun.py), on the native executor and on Unicorn: SVC, WFE and
WFI with SysTick, WFI with nothing coming, code rewritten in RAM, SysTick masked."""
import pytest

from cryptobench.devtools import hostile_images as hi
from cryptobench.devtools import misuse_images as mi
from cryptobench.targets.mcu.boards import BOARDS
from cryptobench.targets.mcu.sim import devices, markers
from cryptobench.targets.mcu.sim.image import load_image
from cryptobench.targets.mcu.sim.imagerun import ImageRun
from cryptobench.targets.mcu.sim.simulator import Simulator

EXECUTORS = ("native", "unicorn")
END_LINE = "the image stopped before its end line"     # the firmware run's word for an image without its protocol

CASES = {
    "svc taken": mi.svc_handled,
    "wfi until systick": mi.wfi_with_systick,
    "wfi masked until systick": lambda p: mi.wfi_with_systick(p, masked=True),
    "wfe until systick, then sev": mi.wfe_with_systick,
    "wfi with nothing coming": lambda p: mi.hints(p, 0xBF30),
    "wfe with nothing coming": lambda p: mi.hints(p, 0xB672, 0xBF20),
    "code rewritten in ram": mi.code_rewritten_in_ram,
}


def _firmware_client(elf, executor):
    device = devices.get_device(hi.DEVICE, "cortex-m3")
    report = Simulator(device, BOARDS[device.board], executor=executor).run(elf, timeout_s=120)
    s = report.stats
    problem = "" if report.problem == END_LINE else report.problem
    return s["cycles"], s["instructions"], s["sleep_cycles"], s["exceptions_taken"], problem


def _image_client(elf, executor):
    device = devices.get_device(hi.DEVICE, "cortex-m3")
    board = BOARDS[device.board]
    run = ImageRun(load_image(elf, board.flash, board.ram), device, board, markers.parse(None), executor=executor)
    result = run.run(120.0)
    s = result.stats
    return s["cycles"], s["instructions"], s["sleep_cycles"], result.exceptions_taken, result.problem


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_image_gives_one_run_through_both_clients_on_both_executors(tmp_path, case):
    elf = CASES[case](tmp_path / "image.elf")
    runs = {(client.__name__, executor): client(elf, executor)
            for client in (_firmware_client, _image_client) for executor in EXECUTORS}
    assert len(set(runs.values())) == 1, runs
    cycles, insns, slept, taken, problem = next(iter(runs.values()))
    assert cycles >= insns > 0
    if "nothing coming" in case:
        assert "the core would sleep for ever" in problem
    else:
        assert problem == ""
    if "systick" in case:
        assert taken >= 1 and slept > 0


def test_a_polled_register_is_answered_by_the_executor_with_every_read_counted(tmp_path):
    """Polling a modelled engine's register costs no call into Python per read on the native
    executor (the model's read horizon: held until its state changes), and the cycles and
    instructions are those of every read executed, as Unicorn, which calls the model each time,
    counts them."""
    elf = mi.poll_pka_function(tmp_path / "poll.elf", reads=1000)
    device = devices.get_device("cc2652", "cortex-m4")
    board = BOARDS[device.board]
    stats = {}
    for executor in EXECUTORS:
        run = ImageRun(load_image(elf, board.flash, board.ram), device, board, markers.parse(None), executor=executor)
        result = run.run(120.0)
        assert result.exit_code == 0 and not result.problem, result.problem
        stats[executor] = result.stats
    assert (stats["native"]["cycles"], stats["native"]["instructions"]) == \
        (stats["unicorn"]["cycles"], stats["unicorn"]["instructions"])
    assert stats["native"]["held_reads"] == 999          # all but the first read, which the model answered
