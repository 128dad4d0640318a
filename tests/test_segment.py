"""Segmentation and integration against rectangular currents of analytic energy."""
import numpy as np
import pytest

from cryptobench.energy.segment import PlanMismatch, match_plan, segment, summarize_energy
from cryptobench.energy.trace import MARKER_X, Chunk, TraceError

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
