"""The number a host table prints for a cell, and the interval around it (docs/statistics.md).

A host run samples every cell in rounds spread over the whole run (sampling.py). Consecutive
rounds form *blocks* of about BLOCK_S seconds: the unit that varies independently, because the
machine's slow spells (50-500 ms on a shared VM) are shorter than a block while samples taken
within a block share a spell.

Estimators (named in every record and table):
  p1      the 1st percentile of the per-operation times of all samples. Noise on a shared machine
          only ever adds time, so the low tail is the cost undisturbed; the 1st percentile rather
          than the minimum, so that one lucky sample does not move it (measured on this project's
          2-core VM over three back-to-back default runs: 98 % of cells within 3 % run to run for
          p1, 84 % for the minimum, 76 % for the median).
  median  for operations whose own cost varies (RSA key generation, entropy sources, a device
          behind a bus, single-shot latency): the typical cost is the quantity, the fastest is luck.

The interval is a *repeat interval*: where a rerun's estimate lands 95 % of the time. On the log
scale its half-width is 1.96·√(2·max(σ, σ_p)² + 2τ²):
  σ   the estimate's own spread within the run, from a bootstrap that resamples whole blocks (so it
      sees how much the share of slow spells moves the estimate);
  σ_p the same estimate bootstrapped over whole harness processes, which also sees their memory
      layouts (a rerun draws fresh processes); it sees the sampling noise too, so the larger of σ
      and σ_p counts, not their sum (process_terms, run_level_variance);
  τ   the machine's drift as it acts on the estimator. The run is cut into SEGMENTS stretches of
      time and each stretch's speed is the median over the run's cells of (cell estimate in that
      stretch / whole-run estimate). For the median (which averages over the stretches) τ is the
      spread of those speeds. The 1st percentile is not an average: it takes its value from the
      fastest stretches, so a slow stretch barely moves it; its τ is how far the whole-run p1 moves
      when the stretches themselves are resampled (all cells together, every resample of the
      stretches enumerated: drift_on_p1). Every cell feels the machine alike, so ~100 cells measure
      it well within one run.
Both terms count twice: this run's and the rerun's deviations are independent. What one run
cannot see is a change of the machine between runs that leaves no trace within either (a governor
or thermal state that holds for a whole run): docs/statistics.md says so.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

BLOCK_S = 2.0                  # a block spans about this much of the run
SEGMENTS = 4                   # stretches of the run the machine term compares
MIN_BLOCKS = 6                 # adaptive stopping never stops with fewer blocks than this
BOOTSTRAP = 300                # block resamples per interval
Z95 = 1.959963984540054
QUANTILE = {"p1": 0.01, "median": 0.5}
TITLES = {"p1": "1st percentile", "median": "median"}
LAYOUT_SPREAD = 1.05           # harness processes that disagree by more than this: a layout-sensitive cell
LAYOUT_MIN_SAMPLES = 30        # ... each with at least this many samples (fewer: their p1s are noise)


def point(values, estimator: str) -> float:
    return float(np.quantile(np.asarray(values, dtype=float), QUANTILE[estimator]))


@dataclass
class Estimate:
    estimator: str              # "p1" | "median"
    value: float                # seconds per operation
    ci95: tuple[float, float]   # repeat interval, seconds
    sigma: float                # the estimate's own log-scale spread (block bootstrap)
    tau: float                  # the machine's log-scale spread between stretches of the run
    blocks: int
    block_rounds: int
    sigma_process: float = 0.0  # log-scale spread from which memory layouts the processes drew
    per_process: tuple = ()     # the estimator in each harness process alone (seconds)
    layout: bool = False        # the processes disagree beyond LAYOUT_SPREAD, each well sampled

    @property
    def half_width(self) -> float:
        """The interval's larger half as a fraction of the estimate (the precision reached)."""
        if self.value <= 0:
            return math.inf
        return max(self.value - self.ci95[0], self.ci95[1] - self.value) / self.value

    @property
    def enough_blocks(self) -> bool:
        return self.blocks >= MIN_BLOCKS

    def as_dict(self) -> dict:
        return {"estimator": self.estimator, "title": TITLES[self.estimator], "value": self.value,
                "ci95": list(self.ci95), "interval": "repeat", "sigma_log": self.sigma, "tau_log": self.tau,
                "blocks": self.blocks, "block_rounds": self.block_rounds,
                "sigma_process_log": self.sigma_process, "per_process": list(self.per_process),
                "half_width_pct": 100.0 * self.half_width if math.isfinite(self.half_width) else None}


def blocks_of(rounds, block_rounds: int) -> np.ndarray:
    return np.asarray(rounds, dtype=np.int64) // max(1, int(block_rounds))


def _padded_blocks(values, rounds, block_rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(block ids, a blocks × longest array of values padded with +inf, the blocks' sizes)."""
    v = np.asarray(values, dtype=float)
    b = blocks_of(rounds, block_rounds)
    ids, inverse, sizes = np.unique(b, return_inverse=True, return_counts=True)
    table = np.full((len(ids), int(sizes.max())), np.inf)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.arange(len(v)) - np.repeat(starts, sizes)
    table[inverse[order], pos] = v[order]
    return ids, table, sizes


def _quantiles_of_rows(rows: np.ndarray, counts: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile (linear interpolation, numpy's default) of each row's first `counts` finite
    values; rows are padded with +inf, which sorts last."""
    s = np.sort(rows, axis=1)
    pos = (counts - 1) * q
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, counts - 1)
    r = np.arange(len(rows))
    return s[r, lo] + (s[r, hi] - s[r, lo]) * (pos - lo)


def bootstrap_sigma(values, rounds, block_rounds: int, estimator: str, resamples: int = BOOTSTRAP,
                    seed: int = 1) -> float:
    """Log-scale standard error of the estimate when whole blocks are resampled (0 with one block)."""
    ids, table, sizes = _padded_blocks(values, rounds, block_rounds)
    if len(ids) < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(ids), size=(resamples, len(ids)))
    rows = table[pick].reshape(resamples, -1)
    counts = sizes[pick].sum(axis=1)
    est = _quantiles_of_rows(rows, counts, QUANTILE[estimator])
    logs = np.log(est[est > 0])
    if len(logs) < 2:
        return 0.0
    lo, hi = np.quantile(logs, [0.025, 0.975])
    return float(hi - lo) / (2 * Z95)


def segment_of(rounds, first_round: int, last_round: int, segments: int = SEGMENTS) -> np.ndarray:
    span = max(1, last_round - first_round + 1)
    return np.minimum(segments - 1, (np.asarray(rounds) - first_round) * segments // span)


def machine_term(cells: list[tuple[list[float], list[int]]], first_round: int, last_round: int,
                 segments: int = SEGMENTS) -> tuple[float, list[float]]:
    """τ and the machine's relative speed per stretch of the run, from the p1 cells given as
    (per-operation values, rounds). 0 when there is too little to tell."""
    levels = []
    for s in range(segments):
        ratios = []
        for values, rounds in cells:
            v = np.asarray(values, dtype=float)
            seg = segment_of(rounds, first_round, last_round, segments)
            inside = v[seg == s]
            whole = point(v, "p1")
            if len(inside) >= 4 and whole > 0:
                ratios.append(math.log(point(inside, "p1") / whole))
        if ratios:
            levels.append(float(np.median(ratios)))
    if len(levels) < 2:
        return 0.0, levels
    return float(np.std(levels, ddof=1)), levels


def _stretch_resamples(segments: int) -> list[tuple[np.ndarray, float]]:
    """Every resample with replacement of `segments` stretches, as (how often each stretch is
    drawn, the resample's probability): 35 for 4 stretches, so the bootstrap is exact."""
    out = []
    for combo in itertools.combinations_with_replacement(range(segments), segments):
        counts = np.bincount(combo, minlength=segments)
        ways = math.factorial(segments) / math.prod(math.factorial(int(c)) for c in counts)
        out.append((counts, ways / segments ** segments))
    return out


def drift_on_p1(cells: list[tuple[list[float], list[int]]], first_round: int, last_round: int,
                segments: int = SEGMENTS) -> float:
    """τ for the 1st percentile: the log-scale spread of the machine's common shift of the whole-run
    p1 when the run's stretches are resampled together for every cell (a run that had drawn its
    fast and slow stretches in other proportions), with the n/(n-1) correction of a bootstrap over
    `segments` units. 0 when there is too little to tell."""
    resamples = _stretch_resamples(segments)
    shifts = []
    for values, rounds in cells:
        v = np.asarray(values, dtype=float)
        seg = segment_of(rounds, first_round, last_round, segments)
        parts = [v[seg == s] for s in range(segments)]
        whole = point(v, "p1")
        if min(len(p) for p in parts) < 4 or whole <= 0:
            continue
        shifts.append([math.log(point(np.concatenate([np.tile(parts[s], int(c)) for s, c in enumerate(counts) if c]),
                                      "p1") / whole) for counts, _ in resamples])
    if len(shifts) < 1:
        return 0.0
    common = np.median(np.asarray(shifts), axis=0)          # the machine's shift in each resample
    weights = np.array([p for _, p in resamples])
    mean = float((weights * common).sum())
    variance = float((weights * (common - mean) ** 2).sum()) * segments / (segments - 1)
    return math.sqrt(max(0.0, variance))


@dataclass(frozen=True)
class Drift:
    """The machine's drift over a run, as it acts on each estimator."""
    tau_stretches: float        # spread of the stretches' speeds: τ of the median
    tau_p1: float               # how far the stretches move the whole-run p1: τ of p1
    levels: tuple = ()          # each stretch's speed (log, relative to the whole run)

    def tau(self, estimator: str) -> float:
        return self.tau_p1 if estimator == "p1" else self.tau_stretches


def drift_of(cells: list[tuple[list[float], list[int]]], first_round: int, last_round: int) -> Drift:
    """The run's Drift from its p1 cells given as (per-operation values, rounds)."""
    tau, levels = machine_term(cells, first_round, last_round)
    return Drift(tau, drift_on_p1(cells, first_round, last_round) if tau > 0 else 0.0, tuple(levels))


# two-sided 97.5 % quantiles of Student's t, by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def small_sample_factor(groups: int) -> float:
    """How much a bootstrap spread over only `groups` independent units understates: the
    n/(n-1) variance correction and Student's t for n-1 degrees of freedom instead of z."""
    if groups < 2:
        return 1.0
    t = T975.get(groups - 1, Z95 + 2.4 / (groups - 1))
    return math.sqrt(groups / (groups - 1)) * t / Z95


NULL_DRAWS = 4                 # label shuffles that show how far processes disagree by chance alone


@dataclass(frozen=True)
class ProcessTerms:
    sigma: float                # log-scale spread of the estimate when whole processes are resampled
    per_process: tuple          # the estimator in each harness process alone (seconds)
    chance_spread: float        # the largest slowest/fastest ratio that shuffled labels gave


def process_terms(values, processes, estimator: str, resamples: int = BOOTSTRAP) -> ProcessTerms:
    """How much the harness processes disagree. The same code can run measurably slower in one
    process than in another (where the stack and heap happen to fall: measured 19 % for mbedtls
    AES-GCM here); a run draws a few layouts, a rerun draws four fresh processes, so the processes
    are a level of their own. Resampling whole processes sees both their layouts and the sampling
    noise of a quarter of the samples each: it is a second bootstrap of the same estimate, with
    coarser units than the blocks (run_level_variance takes the larger of the two). The processes'
    labels are also shuffled NULL_DRAWS times (the same samples, no layout behind the labels): a
    cell is layout-sensitive only where its processes disagree by more than any shuffle made them."""
    if processes is None or len(processes) != len(values):
        return ProcessTerms(0.0, (), 1.0)
    v = np.asarray(values, dtype=float)
    p = np.asarray(processes)
    ids = np.unique(p)
    per = tuple(point(v[p == i], estimator) for i in ids)
    if len(ids) < 2:
        return ProcessTerms(0.0, per, 1.0)
    rng = np.random.default_rng(3)
    spreads = []
    for _ in range(NULL_DRAWS):
        shuffled = rng.permutation(p)
        alone = [point(v[shuffled == i], estimator) for i in ids]
        spreads.append(max(alone) / min(alone) if min(alone) > 0 else math.inf)
    # four processes are four draws of a layout: their spread, resampled, understates the next four's
    sigma = bootstrap_sigma(v, p, 1, estimator, resamples, seed=2) * small_sample_factor(len(ids))
    return ProcessTerms(sigma, per, max(spreads))


def run_level_variance(sigma: float, sigma_process: float, tau: float) -> float:
    """The log-scale variance of one run's estimate around where reruns land: the larger of the two
    bootstraps of the estimate (over blocks, over processes; both see the sampling noise, so adding
    them would count it twice) and the machine's drift on the estimator."""
    return max(sigma, sigma_process) ** 2 + tau ** 2


def estimate(values, rounds, block_rounds: int, estimator: str = "p1", tau: float = 0.0,
             resamples: int = BOOTSTRAP, processes=None) -> Estimate:
    """The estimate of one cell from its per-operation times, the round each was taken in and
    (optionally) the harness process that took it."""
    if len(values) == 0:
        raise ValueError("no samples to estimate from")
    value = point(values, estimator)
    sigma = bootstrap_sigma(values, rounds, block_rounds, estimator, resamples)
    terms = process_terms(values, processes, estimator, resamples)
    sigma_p, per = terms.sigma, terms.per_process
    half = Z95 * math.sqrt(2 * run_level_variance(sigma, sigma_p, tau))
    lo, hi = value * math.exp(-half), value * math.exp(half)
    counts = np.unique(np.asarray(processes), return_counts=True)[1] if processes is not None and len(per) else []
    layout = layout_sensitive(per, terms.chance_spread) and min(counts) >= LAYOUT_MIN_SAMPLES
    if layout:
        # a rerun may draw only layouts like the slowest (or fastest) process seen: the interval
        # reaches them, with the other terms around them
        rest = math.exp(Z95 * math.sqrt(2 * sigma ** 2 + 2 * tau ** 2))
        lo, hi = min(lo, min(per) / rest), max(hi, max(per) * rest)
    blocks = len(np.unique(blocks_of(rounds, block_rounds)))
    return Estimate(estimator, value, (lo, hi), sigma, tau, blocks, int(block_rounds), sigma_p, per, layout)


def layout_sensitive(per_process, chance_spread: float = 1.0) -> bool:
    """The processes disagree by more than LAYOUT_SPREAD and more than shuffled labels made them."""
    if len(per_process) < 2 or min(per_process) <= 0:
        return False
    spread = max(per_process) / min(per_process)
    return spread > LAYOUT_SPREAD and spread > chance_spread


def ratio_interval(base_values, base_rounds, engine_values, engine_rounds, block_rounds: int, estimator: str,
                   resamples: int = BOOTSTRAP, seed: int = 1, process_sigmas: tuple = (0.0, 0.0)
                   ) -> tuple[float, tuple[float, float]] | None:
    """t_base / t_engine of the two estimates and its repeat interval: blocks resampled together
    (a slow spell slows both, so the pair shares it; the machine's drift between runs cancels in a
    ratio of one run) give σ_ratio, each cell's process term (process_terms) adds its own; the
    half-width is 1.96·√(2σ_ratio² + 2σ_p,base² + 2σ_p,engine²) on the log scale. None with fewer
    than 2 blocks."""
    ratio = point(base_values, estimator) / point(engine_values, estimator)
    bi, bt, bs = _padded_blocks(base_values, base_rounds, block_rounds)
    ei, et, es = _padded_blocks(engine_values, engine_rounds, block_rounds)
    common = np.intersect1d(bi, ei)
    if len(common) < 2:
        return None
    bsel, esel = np.searchsorted(bi, common), np.searchsorted(ei, common)
    bt, bs, et, es = bt[bsel], bs[bsel], et[esel], es[esel]
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(common), size=(resamples, len(common)))
    q = QUANTILE[estimator]
    b = _quantiles_of_rows(bt[pick].reshape(resamples, -1), bs[pick].sum(axis=1), q)
    e = _quantiles_of_rows(et[pick].reshape(resamples, -1), es[pick].sum(axis=1), q)
    logs = np.log(b / e)
    lo, hi = np.quantile(logs, [0.025, 0.975])
    sigma = float(hi - lo) / (2 * Z95)
    half = Z95 * math.sqrt(2 * sigma ** 2 + 2 * sum(x ** 2 for x in process_sigmas))
    return ratio, (ratio * math.exp(-half), ratio * math.exp(half))
