"""The machine's noise floor during a run.

A shared or virtual machine slows down now and then for reasons no engine controls (a neighbour
on the same physical core, the hypervisor taking the CPU). To tell that apart from an engine's own
variability, the runner samples a reference loop that does no cryptography (op `reference-loop`
of the `system` engine: an add-rotate-xor mix in registers, like the core of ChaCha20) three times at the start and
once after every comparison group, so its samples are spread over the whole run. Their RSD is the noise floor: a
cell whose RSD is near it is limited by the machine, not by the engine.
"""
from __future__ import annotations

from .errors import HarnessError
from .stats import summarize

SLOT = 1_000_001           # outside the range the runner uses for its cells
SAMPLE_S = 0.005           # one sample lasts about this long
FIRST_SAMPLES = 3          # taken at the start; then one after every comparison group
ENGINE, OP = "system", "reference-loop"


class NoiseFloor:
    def __init__(self, verifier, previous: dict | None = None):
        self.verifier = verifier
        self.samples: list[list[int]] = list((previous or {}).get("samples") or [])
        self.k = 0
        self.why = ""

    def start(self) -> None:
        """Verify the loop's output, then calibrate it; on any failure the run goes on without it."""
        try:
            verdict = self.verifier.verify(ENGINE, OP, {})
            if verdict.kat != "pass":
                self.why = f"reference loop failed its check: {verdict.detail}"
                return
            proc = self.verifier.proc(ENGINE)
            proc.setup(SLOT, ENGINE, OP, {})
            self.k = proc.calibrate(SLOT, int(SAMPLE_S * 1e9))
            for _ in range(FIRST_SAMPLES):
                self.sample()
        except HarnessError as exc:
            self.why = f"reference loop unavailable: {exc}"
            self.k = 0

    def sample(self) -> None:
        if not self.k:
            return
        try:
            self.samples += [list(s) for s in self.verifier.proc(ENGINE).sample(SLOT, self.k, 1)]
        except HarnessError as exc:
            self.why = f"reference loop stopped: {exc}"
            self.k = 0

    def summary(self) -> dict:
        out = {"op": OP, "engine": ENGINE, "provenance": "measured", "sample_s": SAMPLE_S,
               "samples": self.samples}
        if self.why:
            out["detail"] = self.why
        if len(self.samples) >= 2:
            s = summarize([ns / k / 1e9 for k, ns, _ in self.samples])
            out.update({"n": s.n, "median_s": s.median, "rsd_pct": s.rsd_pct,
                        "max_over_median": s.max / s.median if s.median else None})
        return out


def noise_line(noise: dict | None) -> str | None:
    """One line for the report, or None when the run has no noise floor."""
    if not noise:
        return None
    if noise.get("rsd_pct") is None:
        return f"machine noise floor: not measured ({noise.get('detail') or 'fewer than 2 samples'})"
    return (f"machine noise floor: reference loop (no crypto) RSD {noise['rsd_pct']:.1f} %, slowest sample "
            f"{noise['max_over_median']:.2f}× the median, n={noise['n']} samples of {noise['sample_s'] * 1e3:.0f} ms "
            "spread over the run; a cell whose RSD is near this is limited by the machine, not the engine")
