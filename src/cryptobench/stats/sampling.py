"""Sampling in rounds: every cell's samples spread over the whole run (docs/statistics.md).

A shared machine slows down in spells of 50-500 ms that the OS does not see. Samples of one cell
taken back to back land in one spell; so instead, every round visits every cell once, in an order
shuffled per round (a seeded generator, the seed recorded), and takes `per_visit` batches of k
operations there. Engines are interleaved within the round because the cells are. A cell's
harness processes (several per engine, each with its own memory layout) take turns by round.

Rounds are grouped into blocks of about estimate.BLOCK_S seconds; the sampler stops at a block
boundary, when
  - fixed:    every cell has `min_samples` samples (`--repeat N`);
  - adaptive: every cell has at least `min_samples` samples and estimate.MIN_BLOCKS blocks and its repeat
              interval's half-width is within `precision` of its estimate (converged); or the next
              block would end after the deadline (the time budget): cells not converged say so.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable

from .convergence import converged
from ..core.envnumbers import EnvNumber
from ..core.errors import HarnessError
from .estimate import BLOCK_S, Drift, Estimate, drift_of, estimate

# rounds reach the store this often (read when a run starts: a bad value stops the run, not every command)
CHECKPOINT = EnvNumber("CRYPTOBENCH_CHECKPOINT_S", 5.0, high=3600.0)
CHECK_S = 8.0                  # adaptive stopping looks at the intervals at most this often
DEFAULT_BUDGET_S = 60.0      # a run without a budget of its own (suite `budget`, --budget) samples at most this long
DEFAULT_PRECISION = 0.01     # adaptive stopping: every cell's repeat interval within ±1 %
PER_VISIT = 2                # batches a cell takes each time a round visits it
PROCESSES = 4                # harness processes per library engine (each its own memory layout)
VISIT_CAP_S = 0.02             # a cell whose visits take longer is visited every n-th round only, so
                               # that one slow operation (a device, a protocol) cannot eat the budget


@dataclass
class Source:
    """One cell set up in one harness process."""
    proc: object               # HarnessProcess (or a test double with .sample(slot, k, n))
    slot: int


@dataclass
class CellSamples:
    key: str
    engine: str
    op: str
    params: dict
    k: int
    estimator: str             # "p1" | "median" (estimate.py)
    sources: list[Source]
    divisor: float = 1.0       # 2 for operations reported halved (both sides of a protocol)
    min_samples: int = 1       # the cell's own minimum n (a suite's `repeat`)
    samples: list = field(default_factory=list)      # [k, ns, cycles] per batch
    rounds: list = field(default_factory=list)       # the round each sample was taken in
    processes: list = field(default_factory=list)    # which of `sources` took it
    failure: str | None = None
    visit_s: float = 0.0       # mean wall time of a visit so far
    visits: int = 0            # visits so far (this session)
    companion: bool = False    # sampled in every round while others are (the reference loop), never waited for

    def per_op(self) -> list[float]:
        return [ns / k / 1e9 / self.divisor for k, ns, _ in self.samples]

    def estimate(self, block_rounds: int, tau: float = 0.0) -> Estimate | None:
        # as results.derive computes it (processes included), so that the stop and the flags agree
        return (estimate(self.per_op(), self.rounds, block_rounds, self.estimator, tau,
                         processes=self.processes or None) if self.samples else None)


@dataclass
class StopRule:
    min_samples: int = 1       # fixed: the most any cell asks for (each stops at its own min_samples)
    fixed: bool = False        # stop as soon as every cell has its min_samples
    precision: float = 0.01    # adaptive: a cell converges when its half-width <= this fraction
    deadline: float = math.inf  # adaptive: clock time by which sampling must have stopped


@dataclass
class Progress:
    round: int
    rounds_done: int
    elapsed_s: float
    eta_s: float | None        # seconds left: until the deadline (adaptive) or the last round (fixed)
    converged: int
    cells: int
    block_rounds: int | None
    eta_is_bound: bool = True  # adaptive: the run may stop sooner (every cell within the target)


class RoundSampler:
    def __init__(self, cells: list[CellSamples], rule: StopRule, per_visit: int = 2, seed: int | None = None,
                 clock: Callable[[], float] = time.monotonic, progress: Callable[[Progress], None] | None = None,
                 checkpoint: Callable[[list[CellSamples]], None] | None = None, first_round: int = 0,
                 block_rounds: int | None = None, block_s: float = BLOCK_S):
        self.cells = cells
        self.rule = rule
        self.per_visit = max(1, int(per_visit))
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2 ** 32)
        self.rng = random.Random(self.seed)
        self.clock = clock
        self.progress = progress
        self.checkpoint = checkpoint
        self.round = first_round         # rounds are numbered across a resumed run's sessions
        self.first_round = first_round
        self.block_rounds = block_rounds
        self.block_s = block_s
        self.round_starts: list[float] = []
        self.stop_reason = ""
        self.converged: set[str] = set()
        self.last_check = -math.inf

    # --- the loop --------------------------------------------------------------------------
    def run(self) -> dict:
        start = self.clock()
        last_checkpoint = start
        checkpoint_s = CHECKPOINT.value()
        try:
            while True:
                active = [c for c in self.cells if c.failure is None and not c.companion]
                if self.rule.fixed:
                    active = [c for c in active if len(c.samples) < c.min_samples]
                if active:
                    active += [c for c in self.cells if c.failure is None and c.companion]
                if not active:
                    self.stop_reason = ("no cell left to sample" if not self.rule.fixed else
                                        f"{self.round - self.first_round} rounds: every cell has its "
                                        f"{self.rule.min_samples if len({c.min_samples for c in self.cells}) == 1 else 'own'} samples")
                    break
                t0 = self.clock()
                self.round_starts.append(t0 - start)
                self._one_round(active)
                self.round += 1
                done = self.round - self.first_round
                now = self.clock()
                if self.block_rounds is None and done >= min(2, self._fixed_rounds() or 2):
                    self.block_rounds = self._choose_block_rounds((now - start) / done)
                if (not self.rule.fixed and self.block_rounds and self.round % self.block_rounds == 0
                        and self._should_stop(start, now)):
                    break
                # the first round is stored at once, then every CRYPTOBENCH_CHECKPOINT_S: an interrupted run
                # keeps what it sampled however soon the interruption comes
                if self.checkpoint and (done == 1 or now - last_checkpoint >= checkpoint_s):
                    self.checkpoint(self.cells)
                    last_checkpoint = now
                if self.progress:
                    self.progress(self._progress(start, now))
        finally:
            self.wall_s = self.clock() - start
        if self.progress:
            self.progress(self._progress(start, self.clock()))
        return self.record()

    def _one_round(self, active: list[CellSamples]) -> None:
        order = [c for c in active if self.round % self.stride(c) == 0]
        self.rng.shuffle(order)
        for cell in order:
            visits = cell.visits
            index = (len(cell.samples) // self.per_visit) % len(cell.sources)
            source = cell.sources[index]
            t0 = self.clock()
            n = self.per_visit
            if self.rule.fixed and not cell.companion:
                n = min(n, cell.min_samples - len(cell.samples))      # exactly the n asked for
            try:
                got = source.proc.sample(source.slot, cell.k, n)
            except HarnessError as exc:
                cell.failure = str(exc)
                continue
            cell.visit_s = (cell.visit_s * visits + (self.clock() - t0)) / (visits + 1)
            cell.visits = visits + 1
            for s in got:
                cell.samples.append(list(s))
                cell.rounds.append(self.round)
                cell.processes.append(index)

    @staticmethod
    def stride(cell: CellSamples) -> int:
        """Every how many rounds the cell is visited: 1, or more where a visit takes over VISIT_CAP_S."""
        return max(1, math.ceil(cell.visit_s / VISIT_CAP_S)) if cell.visit_s else 1

    # --- when to stop ------------------------------------------------------------------------
    def _fixed_rounds(self) -> int | None:
        if not self.rule.fixed:
            return None
        return max(1, math.ceil(self.rule.min_samples / self.per_visit))

    def _choose_block_rounds(self, round_s: float) -> int:
        """Rounds per block: about block_s of the run; with a fixed number of rounds, small enough
        that there are at least three blocks."""
        rounds = max(1, math.ceil(self.block_s / max(round_s, 1e-9)))
        fixed = self._fixed_rounds()
        if fixed:
            rounds = min(rounds, max(1, fixed // 3))
        return rounds

    def _should_stop(self, start: float, now: float) -> bool:
        done = self.round - self.first_round
        active = [c for c in self.cells if c.failure is None and not c.companion]
        block_time = (now - start) / done * self.block_rounds
        if now + block_time > self.rule.deadline:
            self._update_converged(active)
            # no count here: the run's one statement about convergence counts the cells' flags
            # (convergence.convergence_line)
            self.stop_reason = f"time budget after {done} rounds"
            return True
        if now - self.last_check < CHECK_S:
            return False
        self.last_check = now
        self._update_converged(active)
        enough = all(len(c.samples) >= c.min_samples for c in active)
        if enough and all(c.key in self.converged for c in active):
            self.stop_reason = (f"converged: every cell's repeat interval within ±{self.rule.precision * 100:g} % "
                                f"after {done} rounds")
            return True
        return False

    def machine(self) -> Drift:
        """The machine's drift over the rounds so far (estimate.drift_of), from every p1 cell (the
        reference loop among them)."""
        pairs = [(c.per_op(), c.rounds) for c in self.cells if c.failure is None and c.estimator == "p1" and c.samples]
        first = min((r[0] for _, r in pairs if r), default=self.first_round)
        return drift_of(pairs, first, max(self.round - 1, first))

    def _update_converged(self, active: list[CellSamples]) -> None:
        self.converged = set()
        drift = self.machine()
        for c in active:
            est = c.estimate(self.block_rounds, drift.tau(c.estimator))
            if converged(est, self.rule.precision):
                self.converged.add(c.key)

    def _progress(self, start: float, now: float) -> Progress:
        done = self.round - self.first_round
        fixed = self._fixed_rounds()
        if fixed is not None:
            eta = (now - start) / done * (fixed - done) if done else None
        else:
            eta = max(0.0, self.rule.deadline - now) if math.isfinite(self.rule.deadline) else None
        return Progress(self.round, done, now - start, eta, len(self.converged),
                        sum(c.failure is None and not c.companion for c in self.cells), self.block_rounds,
                        fixed is None)

    def record(self) -> dict:
        """What the run keeps about its sampling (conditions.sampling)."""
        return {"method": "rounds", "seed": self.seed, "per_visit": self.per_visit,
                "block_rounds": self.block_rounds, "block_s": self.block_s, "first_round": self.first_round,
                "rounds": self.round - self.first_round, "round_starts_s": [round(t, 4) for t in self.round_starts],
                "wall_s": round(getattr(self, "wall_s", 0.0), 3), "stop": self.stop_reason,
                "fixed_samples": self.rule.min_samples if self.rule.fixed else None,
                "min_samples": self.rule.min_samples,
                "precision": None if self.rule.fixed else self.rule.precision}
