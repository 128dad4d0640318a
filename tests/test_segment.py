"""Segmentation and integration against rectangular currents of analytic energy."""
import numpy as np
import pytest

from cryptobench.targets.trace.segment import PlanMismatch, match_plan, segment, summarize_energy
from cryptobench.targets.trace.trace import MARKER_X, Chunk, TraceError

DT = 1e-5        # 100 kS/s
V = 3.3


def pulses(n=10, width=200, gap=300, lead=150, high=0.012, low=0.002, second=None):
    """Current, marker of n windows of `width` samples at `high` A, gaps at `low` A."""
    total = lead + n * (width + gap)
    cur = np.full(total, low)
    mark = np.zeros(total, dtype=np.uint8)
    for i in range(n):
        a = lead + i * (width + gap)
        cur[a:a + width] = high + (0.001 * i if second == "ramp" else 0.0)
        mark[a:a + width] = 1
    return cur, mark


def chunked(cur, mark=None, size=None, volt=None, analog=None, extra=None, line0=2, t=None):
    size = size or len(cur)
    for a in range(0, len(cur), size):
        sl = slice(a, a + size)
        yield Chunk(current=cur[sl], t0=a * DT, dt=None if t is not None else DT,
                    t=t[sl] if t is not None else None,
                    voltage=volt[sl] if volt is not None else None,
                    marker=mark[sl] if mark is not None else None,
                    marker_analog=analog[sl] if analog is not None else None,
                    extra={k: v[sl] for k, v in (extra or {}).items()}, line0=line0 + a)


@pytest.mark.parametrize("size", [None, 7, 199, 200, 201, 4096])
def test_windows_energy_is_analytic_in_any_chunking(size):
    cur, mark = pulses()
    r = segment(chunked(cur, mark, size), nominal_voltage=V)
    assert len(r.windows) == 10 and r.samples_total == len(cur) and r.sample_period_s == DT
    for i, w in enumerate(r.windows):
        assert w.duration_s == pytest.approx(200 * DT)
        assert w.energy_j == pytest.approx(V * 0.012 * 200 * DT, rel=1e-12)
        assert w.avg_current_a == pytest.approx(0.012)
        assert w.start_s == pytest.approx((150 + i * 500) * DT)
        assert w.where == f"line {2 + 150 + i * 500}"
        assert not w.approximate and w.flags == []
    assert any("nominal 3.3 V" in x for x in r.warnings)
    s = summarize_energy(r.windows)
    assert s["energy_j"]["median"] == pytest.approx(V * 0.012 * 200 * DT)
    assert s["energy_j"]["rsd_pct"] == pytest.approx(0.0, abs=1e-9)


def test_per_sample_voltage_is_used_and_no_warning():
    cur, mark = pulses(n=3)
    volt = np.full(len(cur), 1.8)
    r = segment(chunked(cur, mark, 100, volt=volt))
    assert r.windows[0].energy_j == pytest.approx(1.8 * 0.012 * 200 * DT)
    assert not any("nominal" in x for x in r.warnings)


def test_no_voltage_anywhere_is_an_error():
    cur, mark = pulses(n=2)
    with pytest.raises(TraceError, match="--voltage"):
        segment(chunked(cur, mark), path="t.csv")


def test_non_uniform_time_integrates_with_each_step():
    cur, mark = pulses(n=4)
    t = np.cumsum(np.full(len(cur), DT))
    r = segment(chunked(cur, mark, 333, t=t), nominal_voltage=V)
    assert r.sample_period_s is None
    assert r.windows[1].energy_j == pytest.approx(V * 0.012 * 200 * DT, rel=1e-9)


def test_analog_marker_threshold_and_hysteresis():
    cur, mark = pulses(n=5)
    rng = np.random.default_rng(1)
    analog = mark * 3.0 + rng.normal(0, 0.2, len(mark))       # noisy 0 V / 3 V GPIO
    # noise crosses a bare 1.5 V threshold only rarely; hysteresis 1 V makes crossings impossible
    r = segment(chunked(cur, None, 97, analog=analog), nominal_voltage=V, threshold=1.5, hysteresis=1.0)
    assert len(r.windows) == 5
    assert all(w.samples == 200 for w in r.windows)
    with pytest.raises(TraceError, match="threshold"):
        segment(chunked(cur, None, analog=analog), nominal_voltage=V)


def test_debounce_merges_glitches_and_flags_them():
    cur, mark = pulses(n=4)
    mark[10:12] = 1                 # a 2-sample spike before the first window
    mark[150 + 500 + 50] = 0        # a 1-sample dip inside window 1
    r = segment(chunked(cur, mark, 64), nominal_voltage=V, min_width_s=5 * DT)
    assert len(r.windows) == 4
    assert "glitch" in r.windows[1].flags and r.windows[1].samples == 200
    assert r.windows[1].energy_j == pytest.approx(V * 0.012 * 200 * DT)
    without = segment(chunked(cur, mark), nominal_voltage=V)
    assert len(without.windows) == 6


def test_x_states_hold_and_flag():
    cur, mark = pulses(n=3)
    mark[150 + 500 + 20] = MARKER_X
    r = segment(chunked(cur, mark, 50), nominal_voltage=V)
    assert len(r.windows) == 3 and r.windows[1].flags == ["x-state"] and r.windows[0].flags == []
    assert any("unknown marker state" in x for x in r.warnings)


def test_short_windows_are_approximate():
    cur, mark = pulses(n=3, width=12)
    r = segment(chunked(cur, mark), nominal_voltage=V)
    assert all(w.approximate for w in r.windows)
    assert summarize_energy(r.windows)["approximate"] == 3


def test_odd_edges_name_the_line():
    cur, mark = pulses(n=3)
    cut = 150 + 2 * 500 + 100               # ends inside the third window
    with pytest.raises(TraceError) as e:
        segment(chunked(cur[:cut], mark[:cut], 77), nominal_voltage=V, path="run.csv")
    assert str(e.value).startswith(f"run.csv:line {2 + 150 + 1000}:") and "odd number of edges" in str(e.value)
    r = segment(chunked(cur[:cut], mark[:cut]), nominal_voltage=V, partial="drop")
    assert len(r.windows) == 2 and any("dropped" in x for x in r.warnings)
    start = 150 + 100                       # starts inside the first window
    with pytest.raises(TraceError, match=f"line {2 + 100}: expected a rising edge"):
        segment(chunked(cur[start:], mark[start:]), nominal_voltage=V)


def test_no_edges_is_an_error():
    cur = np.full(1000, 0.01)
    with pytest.raises(TraceError, match="found none in 1,000 samples: the marker stays low"):
        segment(chunked(cur, np.zeros(1000, dtype=np.uint8)), nominal_voltage=V, path="flat.csv")
    with pytest.raises(TraceError, match="expected samples, found none"):
        segment(iter([]), nominal_voltage=V)


def test_non_finite_current_names_its_line():
    cur, mark = pulses(n=2)
    cur[333] = np.nan
    with pytest.raises(TraceError, match="line 335: expected a finite current"):
        segment(chunked(cur, mark, 100), nominal_voltage=V)


def test_energy_split_over_two_supplies():
    cur, mark = pulses(n=4)
    se = np.where(mark == 1, 0.030, 0.0005)          # the secure element draws 30 mA while busy
    r = segment(chunked(cur, mark, 123, extra={"current.se": se, "voltage.se": np.full(len(se), 1.8)}),
                nominal_voltage=V)
    w = r.windows[0]
    assert w.supplies["main"] == pytest.approx(V * 0.012 * 200 * DT)
    assert w.supplies["se"] == pytest.approx(1.8 * 0.030 * 200 * DT)
    assert w.energy_j == pytest.approx(w.supplies["main"] + w.supplies["se"])
    split = summarize_energy(r.windows)["supplies"]
    assert split["se"]["share_pct"] == pytest.approx(100 * 1.8 * 0.030 / (1.8 * 0.030 + V * 0.012))


def test_match_plan_checks_count_and_order():
    cur, mark = pulses(n=4, width=200)
    cur2, mark2 = pulses(n=3, width=600)
    r = segment(chunked(np.concatenate([cur, cur2]), np.concatenate([mark, mark2]), 500), nominal_voltage=V)
    plan = [{"label": "aes", "repeat": 4, "expected_s": 200 * DT}, {"label": "sha", "repeat": 3, "expected_s": 600 * DT}]
    matched = match_plan(r.windows, plan, "x.csv")
    assert [len(ws) for _, ws in matched] == [4, 3]
    with pytest.raises(PlanMismatch, match="planned 8 repetitions .* has 7 marker windows"):
        match_plan(r.windows, [plan[0], dict(plan[1], repeat=4)], "x.csv")
    with pytest.raises(PlanMismatch, match="do not match the run's order"):
        match_plan(r.windows, [dict(plan[0], expected_s=600 * DT), dict(plan[1], expected_s=200 * DT)], "x.csv")


# ------------------------------------------------------------------- hostile input (regressions)

def test_odd_edges_hint_names_the_command_line_flag():
    cur, mark = pulses(n=2)
    with pytest.raises(TraceError, match="use --partial drop to drop that window"):
        segment(chunked(cur[:-400], mark[:-400]), nominal_voltage=V)


def test_small_negative_current_is_kept_and_counted():
    """Offset noise around zero is real: kept as read (no bias), counted in a warning."""
    cur, mark = pulses(n=3, low=0.0)
    noise = np.where(np.arange(len(cur)) % 2, -2e-6, 2e-6)
    r = segment(chunked(cur + noise, mark, 97), nominal_voltage=V)
    assert not any("below zero" in w for w in r.warnings)              # negatives only outside windows
    cur[150 + 500 + 10:150 + 500 + 13] = -5e-6                          # 3 negative samples in window 1
    r = segment(chunked(cur, mark, 97), nominal_voltage=V)
    w = [x for x in r.warnings if "below zero" in x]
    assert len(w) == 1 and "3 current samples inside marker windows" in w[0] and f"line {2 + 660}" in w[0]
    assert r.windows[1].energy_j == pytest.approx(V * DT * (0.012 * 197 - 3 * 5e-6))
    assert r.windows[1].flags == []


@pytest.mark.parametrize("level, found", [(-0.012, "found -7.92e-05 J in window 1: its current is below zero"),
                                          (0.0, "found 0 J in window 1: no current flows in it")])
def test_window_with_no_or_negative_energy_is_refused(level, found):
    cur, mark = pulses(n=3)
    cur[150 + 500:150 + 700] = level                                   # window 1
    with pytest.raises(TraceError) as ei:
        segment(chunked(cur, mark, 64), nominal_voltage=V, path="t.csv")
    assert str(ei.value).startswith(f"t.csv:line {2 + 650}: expected a positive energy in every window, ")
    assert found in str(ei.value)


def test_negative_energy_of_a_further_supply_flags_the_window():
    cur, mark = pulses(n=3)
    se = np.where(mark == 1, 1e-6, 0.0)
    se[150 + 500:150 + 700] = -1e-6                                    # an idle supply's offset, window 1
    r = segment(chunked(cur, mark, 77, extra={"current.se": se}), nominal_voltage=V)
    assert [w.flags for w in r.windows] == [[], ["negative-supply"], []]
    assert r.windows.column("flagged").tolist() == [False, True, False]
    assert any("negative energy on supply 'se'" in w and "zero offset" in w for w in r.warnings)
    assert summarize_energy(r.windows)["flagged"] == 1


@pytest.mark.parametrize("what", ["voltage", "extra"])
def test_non_finite_voltage_or_supply_names_its_line(what):
    cur, mark = pulses(n=2)
    bad = np.full(len(cur), 3.3)
    bad[400] = np.inf if what == "voltage" else np.nan
    kw = {"volt": bad} if what == "voltage" else {"extra": {"current.se": bad}}
    name = "voltage, found inf" if what == "voltage" else "current.se, found nan"
    with pytest.raises(TraceError, match=f"line 402: expected a finite {name}"):
        segment(chunked(cur, mark, 100, **kw), nominal_voltage=V)


def test_absurd_readings_and_overflowing_sums_are_refused():
    cur, mark = pulses(n=2)
    cur[300] = 9.9e37                                                   # SCPI's overflow code
    with pytest.raises(TraceError, match=r"line 302: expected a current within ±1e\+06 A, found 9.9e\+37"):
        segment(chunked(cur, mark), nominal_voltage=V)
    cur, mark = pulses(n=2)
    t = np.cumsum(np.full(len(cur), 1e300))                             # time stamps near the float limit
    with pytest.raises(TraceError, match=r"line 152: expected windows shorter than 9.2e\+09 s .* found 2e\+302 s"):
        segment(chunked(cur, mark, t=t), nominal_voltage=V)
    with np.errstate(over="ignore"):
        t = np.cumsum(np.full(len(cur), 1e306))                         # ... and beyond it: inf
    with pytest.raises(TraceError, match="expected increasing time stamps, found inf after"):
        segment(chunked(cur, mark, t=t), nominal_voltage=V)


def test_settings_must_be_finite():
    cur, mark = pulses(n=2)
    for kw, flag in [({"nominal_voltage": float("nan")}, "--voltage"), ({"nominal_voltage": -3.3}, "--voltage"),
                     ({"threshold": float("inf")}, "--threshold"), ({"hysteresis": float("nan")}, "--hysteresis"),
                     ({"min_width_s": -1.0}, "--min-width"), ({"partial": "keep"}, "--partial")]:
        with pytest.raises(ValueError, match=flag):
            segment(chunked(cur, mark), **{"nominal_voltage": V, **kw})


def test_reader_warnings_and_source_file_are_passed_on():
    cur, mark = pulses(n=2)
    chunks = list(chunked(cur, mark, 300))
    chunks[0].warnings.append("t.csv: the reader doubts this")
    chunks[1].warnings.append("t.csv: the reader doubts this")
    r = segment(chunks, nominal_voltage=V, path="t.csv")
    assert r.warnings.count("t.csv: the reader doubts this") == 1
    chunks = list(chunked(cur, mark, 300))
    for c in chunks:
        c.source = "current.csv"
    chunks[1].current = chunks[1].current.copy()
    chunks[1].current[5] = np.nan
    with pytest.raises(TraceError, match=r"^current\.csv:line 307: expected a finite current"):
        segment(chunks, nominal_voltage=V, path="digital.csv")


def test_zero_duration_windows_are_refused_not_called_energy_free():
    """Per-sample times fed one sample at a time leave no step to measure: say so."""
    cur, mark = pulses(n=2)
    t = np.cumsum(np.full(len(cur), DT)) + np.where(np.arange(len(cur)) % 2, 3e-6, 0.0)   # not uniform
    with pytest.raises(TraceError, match="expected a positive duration in every window, found 0 s .*chunk_samples"):
        segment(chunked(cur, mark, 1, t=t), nominal_voltage=V)
