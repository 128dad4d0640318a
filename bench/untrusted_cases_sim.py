"""The cases of bench/hostile_probe_untrusted.py for images that misuse the simulator: self-modifying DMA, SVC, WFI/WFE with nothing coming, engine DMA into flash (issue 43).
Each function takes the World and returns its Cases.

Every image is run through `cryptobench sim run` on each executor (CRYPTOBENCH_SIM_EXECUTOR);
a case expects the agreed answer (exit code and a fragment of the problem line), and a last case
per image compares the two executors' JSON (exit code, problem, cycles, slept cycles,
instructions)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from untrusted_core import Case, World, cli_argv

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "peripherals"
EXECUTORS = ("native", "unicorn")
NEVER = "the core would sleep for ever"


def _images(folder: Path) -> dict:
    """name -> (path, device, expected exit code, fragment of the problem line, extra arguments)."""
    from cryptobench.devtools import misuse_images as mi
    out = {
        "svc-with-handler": (mi.svc_handled(folder / "svc.elf"), "ideal-m3", 0, "", []),
        "svc-empty-vector": (mi.svc_without_handler(folder / "svc-empty.elf"), "ideal-m3", 1,
                             "write of 4 bytes at unmapped", []),
        "cpsid-wfi-wfe": (mi.hints(folder / "cpsid.elf", 0xB672, 0xBF30, 0xBF20), "ideal-m3", 1, "WFI at pc=0x00000042", []),
        "wfi-nothing-enabled": (mi.hints(folder / "wfi.elf", 0xBF30), "ideal-m3", 1, NEVER, []),
        "wfi-t2-nothing-enabled": (mi.wfi_t2(folder / "wfi2.elf"), "ideal-m3", 1, NEVER, []),
        "wfi-line-enabled-nothing-started": (mi.wfi_line_enabled_nothing_started(folder / "line.elf"), "ideal-m3", 1,
                                             NEVER, []),
        "wfe-nothing-coming": (mi.hints(folder / "wfe.elf", 0xBF20), "ideal-m3", 1, "WFE at pc=0x00000040", []),
        "wfe-masked-after-sev": (mi.hints(folder / "wfe-masked.elf", 0xB672, 0xBF40, 0xBF20, 0xBF20), "ideal-m3", 1,
                                 "PRIMASK is set", []),
        "sev-wfe": (mi.hints(folder / "sev.elf", 0xBF40, 0xBF20), "ideal-m3", 0, "", []),
        "yield": (mi.hints(folder / "yield.elf", 0xF3AF, 0x8001), "ideal-m3", 0, "", []),
        "wfi-until-systick": (mi.wfi_with_systick(folder / "systick.elf"), "ideal-m3", 0, "", []),
        "wfi-until-systick-masked": (mi.wfi_with_systick(folder / "systick-m.elf", True), "ideal-m3", 0, "", []),
        "wfe-until-systick-then-events": (mi.wfe_with_systick(folder / "wfe-st.elf"), "ideal-m3", 0, "", []),
        "profile-near-symbol-cap": (mi.many_symbols(folder / "many.elf", 450_000), "ideal-m3", 0, "", ["--profile"]),
    }
    for case, name in ((1, "dma-over-code-in-ram"), (2, "dma-into-flash"), (3, "dma-over-vector-table")):
        elf = folder / f"{name}.elf"
        subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-O2", "-ffreestanding", "-nostdlib",
                        "-Wno-unused-function", f"-DCASE={case}", f"-I{FIX}", "-T", str(FIX / "cc26x2_link.ld"),
                        str(FIX / "cc26x2_misuse.c"), "-o", str(elf)], check=True)
        out[name] = (elf, "cc2652", 0, "", [])
    return out


def _env(executor: str) -> dict:
    """The probe's environment for a case (untrusted_core.judge's: no CRYPTOBENCH_ settings but
    the executor; this checkout's sources)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTOBENCH_")}
    return {**env, "PYTHONPATH": str(FIX.parents[2] / "src"), "CRYPTOBENCH_SIM_EXECUTOR": executor}


def _answer(proc) -> tuple:
    doc = json.loads(proc.stdout)
    s = doc.get("stats", {})
    return proc.returncode, doc.get("problem"), s.get("cycles"), s.get("sleep_cycles"), s.get("instructions")


def _expects(code: int, fragment: str):
    def check(proc, work) -> str:
        try:
            rc, problem, *_ = _answer(proc)
        except ValueError:
            return "no JSON result"
        if rc != code:
            return f"exit {rc}, expected {code} ({problem})"
        if fragment and fragment not in (problem or ""):
            return f"no {fragment!r} in the problem {problem!r}"
        if not fragment and problem:
            return f"a problem where none was expected: {problem}"
        return ""
    return check


def _agree(path: Path, device: str, extra: list):
    def check(proc, work) -> str:
        answers = {}
        for executor in EXECUTORS:
            p = subprocess.run(cli_argv("sim", "run", str(path), "--device", device, "--max-instructions", "1000000",
                                        *extra, "--json", "-"), capture_output=True, text=True,
                               env=_env(executor), cwd=work)
            answers[executor] = _answer(p)
        return "" if answers["native"] == answers["unicorn"] else f"the executors differ: {answers}"
    return check


def sim_misuse(world: World) -> list[Case]:
    folder = world.work / "inputs" / "sim-misuse"
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, (path, device, code, fragment, extra) in _images(folder).items():
        argv = ("sim", "run", str(path), "--device", device, "--max-instructions", "1000000", *extra, "--json", "-")
        for executor in EXECUTORS:
            cases.append(Case("sim-misuse", f"{name}-{executor}", cli_argv(*argv), rc=(code,), inputs=[path],
                              env={"CRYPTOBENCH_SIM_EXECUTOR": executor}, one_line=False,
                              check=_expects(code, fragment)))
        cases.append(Case("sim-misuse", f"{name}-executors-agree", cli_argv(*argv), rc=(code,), inputs=[path],
                          one_line=False, check=_agree(path, device, extra)))
    return cases


CLASSES: dict = {"sim-misuse": sim_misuse}
