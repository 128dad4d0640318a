"""One statement about convergence per run, agreeing with the cells' not-converged flags: the
sampler's stop and results.derive's flag use one rule (convergence.converged), and the printed
line counts the flags (issue 31 item 3: "converged: every cell…" above "1 did not reach ±1 %")."""
import random

import pytest

from test_estimate import COSTS, FakeProcess, Machine

from cryptobench.stats.convergence import convergence_of
from cryptobench.core.records import OK, Cell, Conditions, Options, Params, Plan, Run, Result
from cryptobench.report.tables import sampling_line, summary_lines
from cryptobench.stats.results import derive
from cryptobench.stats.sampling import CellSamples, RoundSampler, Source, StopRule

HELLO = {"counter": "none", "clock_res_ns": 1}


def _sampled(machine: Machine, precision: float, budget_s: float, layouts: dict[int, list[float]]):
    """A sampled adaptive run on the simulated machine and its stored form (a Run)."""
    cells = []
    for i, cost in enumerate(COSTS):
        sources = [Source(FakeProcess(machine, cost, lay), i + 1) for lay in layouts.get(i, [1.0] * 4)]
        cells.append(CellSamples(f"c{i}", "e", "sha256", {"bytes": 64 + i}, max(1, int(1e-3 / cost)), "p1", sources))
    sampler = RoundSampler(cells, StopRule(precision=precision, deadline=machine.now + budget_s), seed=1,
                           clock=machine.clock)
    record = sampler.run()
    tau = sampler.machine().tau("p1")                    # what the host target derives every cell with
    rows = []
    for seq, c in enumerate(cells):
        sampling = {"rounds": c.rounds, "processes": c.processes, "block_rounds": sampler.block_rounds,
                    "estimator": "p1", "tau": tau}
        result = derive(c.op, c.params, c.samples, HELLO, False, sampling, None, precision)
        rows.append(Cell(op=c.op, params=Params(c.params), engine="e", status=OK, kat="pass", detail=None,
                         samples=c.samples, result=Result(result), seq=seq))
    conditions = Conditions({"sampling": {**record, "budget_s": budget_s}})
    run = Run(id=1, created="t", finished=None, status="complete", suite=None,
              plan=Plan(options=Options(budget_s=budget_s, precision=precision)), conditions=conditions, cells=rows)
    return sampler, run


def _statements(run: Run) -> list[str]:
    return [line for line in summary_lines(run) if "reached" in line or "did not" in line]


@pytest.mark.slow
def test_the_flags_are_the_samplers_verdict_and_the_line_counts_them():
    machine = Machine(7)
    rng = random.Random(3)
    # one cell drawn slow in some memory layouts: its interval cannot get as narrow as the others'
    layouts = {2: [1.0 if rng.random() < 0.5 else 1.15 for _ in range(4)]}
    sampler, run = _sampled(machine, precision=0.03, budget_s=60.0, layouts=layouts)
    assert sampler.stop_reason.startswith("time budget")
    flagged = {c.params["bytes"] - 64 for c in run.cells if "not-converged" in c.result.flags}
    short = {c.key for c in sampler.cells if c.key not in sampler.converged}
    assert {f"c{i}" for i in flagged} == short
    assert 0 < len(short) < len(COSTS)                  # some converge, some do not
    conv = convergence_of(run)
    assert (conv.within, conv.short) == (len(COSTS) - len(short), len(short))
    [line] = _statements(run)                            # one statement, no second count elsewhere
    assert f"{conv.within} of {len(COSTS)} cells reached ±3 %" in line and f"{len(short)} did not" in line
    stop = sampling_line(run.conditions.sampling, conv)
    assert "stopped: the time budget ran out" in stop and " cells" not in stop


@pytest.mark.slow
def test_a_run_stopped_by_convergence_has_no_cell_flagged():
    machine = Machine(3, spell_share=0.0, drift_sd=0.0)
    sampler, run = _sampled(machine, precision=0.02, budget_s=300.0, layouts={})
    assert sampler.stop_reason.startswith("converged")
    assert not any("not-converged" in c.result.flags for c in run.cells)
    [line] = _statements(run)
    assert line == f"convergence: every cell ({len(COSTS)}) reached ±2 %"
    assert "stopped: every cell within the target precision" in sampling_line(run.conditions.sampling,
                                                                               convergence_of(run))
    assert not any("noisy machine" in line for line in summary_lines(run))


@pytest.mark.slow
def test_a_stored_converged_stop_that_the_flags_contradict_is_not_repeated():
    """Runs stored before one rule decided both: the stop is said as the check it was."""
    machine = Machine(7)
    sampler, run = _sampled(machine, precision=0.03, budget_s=60.0,
                            layouts={2: [1.0, 1.15, 1.0, 1.15]})
    run.conditions._data["sampling"]["stop"] = "converged: every cell's repeat interval within ±3 % after 9 rounds"
    conv = convergence_of(run)
    assert conv.short > 0
    line = sampling_line(run.conditions.sampling, conv)
    assert "stopped: at a convergence check" in line and "within" not in line


def _flagged_run(flags: list[list[str]], tau: float, levels: list[float]) -> Run:
    """A stored adaptive run whose cells carry the given flags (no samples needed: the lines read flags)."""
    est = {"estimator": "p1", "value": 1e-6, "ci95": [0.9e-6, 1.1e-6], "blocks": 40}
    cells = [Cell(op="sha256", params=Params(bytes=64 + i), engine="e", status=OK, kat="pass", detail=None,
                  result=Result({"flags": f, "estimate": est, "time_s": {"rsd_pct": 3.0}}), seq=i)
             for i, f in enumerate(flags)]
    sampling = {"stop": "time budget after 200 rounds", "rounds": 200, "precision": 0.01, "budget_s": 90.0,
                "machine_tau_log": tau, "machine_levels_log": levels}
    return Run(id=1, created="t", finished=None, status="complete", suite=None,
               plan=Plan(options=Options(budget_s=90.0, precision=0.01)), conditions=Conditions({"sampling": sampling}),
               cells=cells)


def test_drift_on_an_idle_machine_is_named_as_drift_and_nothing_alarming_is_said():
    """The quiet Xeon of issue 31: every cell short of ±1 % because the machine's speed drifted
    (τ 2.1 %), 10 of 107 cells with outliers: no "noisy machine", no "more time"."""
    flags = [["not-converged", "outliers"] if i < 10 else ["not-converged"] for i in range(107)]
    lines = summary_lines(_flagged_run(flags, 0.021, [-0.0126, 0.0265, 0.0106, 0.0361]))
    assert not any("noisy machine" in line or "stop other work" in line for line in lines)
    [conv] = [line for line in lines if line.startswith("convergence:")]
    assert "0 of 107 cells reached ±1 %" in conv and "drifted" in conv and "not noise" in conv
    assert "--budget" not in conv and "can be met here" in conv
    assert any(line.startswith("of 107 cells, 10 have many outlying samples") for line in lines)


def test_noise_gets_more_time_and_a_noisy_machine_the_noisy_machine_advice():
    flags = [["not-converged", "high-rsd"] if i % 2 else ["not-converged"] for i in range(20)]
    lines = summary_lines(_flagged_run(flags, 0.002, [0.0, 0.002, -0.001, 0.001]))
    [conv] = [line for line in lines if line.startswith("convergence:")]
    assert "give the run more time (--budget 180)" in conv and "drifted" not in conv
    assert sum("noisy machine: of 20 cells, 10 vary more than" in line for line in lines) == 1


def test_simulated_cells_spread_is_not_called_a_noisy_machine():
    """The simulator is deterministic: a simulated cell whose samples spread (ML-DSA signing's
    rejection loop) says nothing about the machine, so no "noisy machine" line counts it."""
    run = _flagged_run([["high-rsd", "outliers"]] * 6, 0.002, [0.0, 0.001])
    for c in run.cells:
        c.provenance = "simulated"
    assert not any("noisy machine" in line or "outlying" in line for line in summary_lines(run))
