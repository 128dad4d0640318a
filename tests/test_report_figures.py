"""The report's figures (report/figures/): which kinds appear for which data, what they show,
their captions, ids, and that every one renders to PNG and SVG."""
import io
import re
from dataclasses import replace

import pytest

from cryptobench.analysis.relative import fmt_ratio, relative
from cryptobench.report.captions import conditions_caption
from cryptobench.report.figures import KINDS, build_figures, crossover_rows
from cryptobench.stats.results import derive
from cryptobench.store.database import Store
from cryptobench.core.records import Plan
from storeutil import save_cell_at

HOST_COND = {
    "host": {"os": "Linux 6.1.0-test", "cpu": {"model": "Test CPU 9000", "arch": "x86_64", "logical_cpus": 4,
                                               "crypto_flags": ["aes", "sha_ni"]}},
    "harness": {"harness": "cbh-host", "version": "0.1.0", "compiler": "gcc 12.2.0", "cflags": "-O2 -g",
                "clock": "CLOCK_MONOTONIC_RAW", "counter": "tsc", "counter_hz": 2.5e9},
    "engines": {"openssl-hw": {"version": "OpenSSL 3.0.99-test", "extensions_enabled": ["AES-NI", "SHA-NI"]},
                "openssl-sw": {"version": "OpenSSL 3.0.99-test", "extensions_enabled": [], "mask": "~0x2",
                               "extensions_masked": ["AES-NI", "SHA-NI"], "mask_verified": True},
                "mbedtls": {"version": "mbed TLS 2.28.9-test"},
                "libsodium": {"version": "1.0.18-test"}},
}

SIM_COND = {
    "host": {"cpu": {"model": "Test CPU 9000"}},
    "target": {"kind": "sim", "board": "sim-ideal", "cpu": "m4", "opt": "Os", "core": "cortex-m4", "device": "ideal-m4",
               "clock_hz": 48000000,
               "simulator": {"model": "cbsim-trm", "model_version": "1", "flash_ws": 0, "clock_hz": 48000000,
                             "source": "ARM DDI 0439B"},
               "timing": "simulated"},
    "builds": {lib: {"compiler": "arm-none-eabi-gcc 12.2.1", "cflags": "-mcpu=cortex-m4 -mthumb -Os",
                     "ldflags": "-Wl,--gc-sections", "library_version": ver, "counter": "dwt", "console": "semihosting"}
               for lib, ver in (("mbedtls", "2.28.10"), ("monocypher", "4.0.2"))},
}

ID = re.compile(r"^[a-z0-9-]+$")


def _samples(t: float, n: int = 8, k: int = 100) -> list:
    """n batches of k operations around t seconds per operation (a small deterministic spread)."""
    return [[k, int(round(t * k * 1e9 * (1 + 0.02 * ((i % 5) - 2) / 2))), 0] for i in range(n)]


def _store(db, cells: list[dict], cond=None, baseline=None, engines=None, options=None, label=None, suite=None):
    store = Store(db)
    plan = {"suite": suite, "baseline": baseline, "groups": [],
            "options": {"engines": engines or list(dict.fromkeys(c["engine"] for c in cells)), "repeat": 8,
                        **(options or {})}}
    if label:
        plan["label"] = label
    if cond and "target" in cond:
        plan["target"] = {"kind": "sim", "core": "cortex-m4"}
    rid = store.create_run(Plan.from_json({**plan, "suite": suite}), cond if cond is not None else HOST_COND)
    for seq, c in enumerate(cells):
        save_cell_at(store, rid, seq, {"target": "host", "provenance": "measured", "status": "ok", "kat": "pass",
                                   "detail": "", **c})
    store.set_status(rid, "complete")
    return store.load_run(rid)


def _timed(op, engine, params, t, n=8, k=100, energy=None, **kw):
    samples = _samples(t, n, k)
    result = derive(op, params, samples, {"counter": "tsc", "counter_hz": 2.5e9}, k == 1)
    if energy is not None:
        result["energy"] = energy
    return {"op": op, "engine": engine, "params": params, "samples": samples, "result": result, **kw}


def _unsupported(op, engine, params, why="not in this library"):
    return {"op": op, "engine": engine, "params": params, "status": "unsupported", "kat": "n/a", "detail": why,
            "samples": None, "result": None, "provenance": "none"}


LENGTHS = [16, 256, 4096, 16384]


def _hw(n):          # fixed cost 100 ns, 0.5 ns/B
    return 100e-9 + 0.5e-9 * n


def _sw(n):          # fixed cost 20 ns, 2 ns/B: cheaper than hw below 53.3 B
    return 20e-9 + 2e-9 * n


def _sweep_run(db, energy=False, label=None):
    cells = []
    for n in LENGTHS:
        for engine, f in (("openssl-hw", _hw), ("openssl-sw", _sw)):
            en = ({"per_op_j": f(n) * 10.0, "provenance": "measured", "ci95": [f(n) * 9.5, f(n) * 10.5],
                   "stats": {"n": 5}, "flags": []} if energy else None)
            cells.append(_timed("sha256", engine, {"bytes": n}, f(n), energy=en))
        cells.append(_unsupported("sha256", "mbedtls", {"bytes": n}, "no SHA-256 in this build"))
        if n == 4096:
            cells.append({**_timed("sha256", "libsodium", {"bytes": n}, 1e-6), "status": "failed", "kat": "fail",
                          "detail": "digest mismatch", "result": None, "samples": None})
        else:
            cells.append(_timed("sha256", "libsodium", {"bytes": n}, 3 * _sw(n)))
    return _store(db, cells, baseline="openssl-sw", engines=["openssl-hw", "openssl-sw", "mbedtls", "libsodium"],
                  label=label)


def _kinds(figs):
    return {f.kind for f in figs}


def _saves(figs):
    for f in figs:
        for fmt in ("png", "svg"):
            buf = io.BytesIO()
            f.fig.savefig(buf, format=fmt)
            assert buf.getbuffer().nbytes > 1000


def _ids_ok(figs):
    ids = [f.id for f in figs]
    assert len(ids) == len(set(ids))
    assert all(ID.match(i) for i in ids), ids
    assert all(f.kind in KINDS for f in figs)


@pytest.mark.e2e
def test_sweep_run_gives_duration_heatmap_and_crossover(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite", label="bench A")
    figs = build_figures([run])
    assert _kinds(figs) == {"duration", "heatmap", "crossover"}
    _ids_ok(figs)
    dur = next(f for f in figs if f.kind == "duration")
    ax = dur.fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"       # 16..16384 B, ~50 ns..33 µs
    assert "payload length (bytes)" in ax.get_xlabel()
    assert re.search(r"\((ns|µs|ms)\)", ax.get_ylabel())
    assert ax.get_title(loc="right") == "measured"                    # the provenance tag
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["openssl-hw", "openssl-sw", "libsodium"]
    assert len(ax.collections) >= 2                                    # the 95 % CI bands
    cap = dur.caption
    for word in ("measured", "Test CPU 9000", "OpenSSL 3.0.99-test", "gcc 12.2.0 -O2 -g", "CLOCK_MONOTONIC_RAW",
                 "95 % confidence interval of the median", "n = 8 samples per point", "Run 1", "label: bench A",
                 "mbedtls: unsupported", "libsodium at 4096 B: KAT FAIL"):
        assert word in cap, word
    assert dur.provenance == ["measured"]
    _saves(figs)


def test_heatmap_cells_show_fmt_ratio_and_grey_words(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite")
    fig = next(f for f in build_figures([run]) if f.kind == "heatmap")
    assert fig.id == "heatmap-time-r1"
    ax = fig.fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    rows = relative(run, "openssl-sw")["rows"]
    expected = [fmt_ratio(r["time_ratio"]) for r in rows if r["time_ratio"] is not None]
    assert sorted(t for t in texts if re.match(r"^[0-9.,]+$", t)) == sorted(expected)
    assert "failed" in texts or "KAT FAIL" in texts                     # libsodium at 4096 B, grey
    assert [t.get_text() for t in ax.get_xticklabels()] == ["openssl-hw", "libsodium"]   # mbedtls: no ratio
    assert len(ax.get_yticklabels()) == len(LENGTHS)
    bar = fig.fig.axes[1]
    assert bar.get_ylabel() == "time / openssl-sw's time (log scale)"
    assert "openssl-sw" in fig.caption and "3 significant digits" in fig.caption
    assert "the run's own baseline" in fig.caption
    # a report-wide baseline that the run has takes over
    other = next(f for f in build_figures([run], baseline="openssl-hw") if f.kind == "heatmap")
    assert other.fig.axes[1].get_ylabel() == "time / openssl-hw's time (log scale)"
    assert "the report's chosen baseline" in other.caption


def test_crossover_rows_and_figure(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite")
    rows = crossover_rows([run])
    hw = next(r for r in rows if r["b"] == "openssl-hw")
    assert hw["a"] == "openssl-sw" and hw["provenance"] == "modeled" and hw["op"] == "sha256"
    assert hw["status"] == "b-from"
    assert hw["time"]["x"] == pytest.approx(16 + 240 * 56 / 360)       # linear between 16 and 256 B: 53.3 B
    assert hw["energy"] is None and hw["energy_text"] is None
    assert hw["time_x"] == hw["time"]["x"] and hw["time_lo"] <= hw["time_x"] <= hw["time_hi"]
    assert hw["time"]["resolved"] is True
    assert "53.3 B" in hw["text"] and hw["run"] == run.id
    sod = next(r for r in rows if r["b"] == "libsodium")
    assert sod["status"] == "a-always"                                   # 3 × openssl-sw everywhere
    fig = next(f for f in build_figures([run]) if f.kind == "crossover")
    ax = fig.fig.axes[0]
    assert ax.get_xscale() == "log"
    assert any(list(line.get_xdata()) == [pytest.approx(hw["time"]["x"])] * 2 for line in ax.get_lines())
    assert "modeled" in fig.provenance and "measured" in fig.provenance
    assert "53.3" in fig.caption and "modeled" in fig.caption
    # a run without a baseline has no crossover
    assert crossover_rows([replace(run, plan=replace(run.plan, baseline=None))]) == []


def test_unresolved_crossover_is_neither_drawn_nor_tabulated(tmp_path):
    """openssl-hw crosses openssl-sw at 53.3 B, clearly; libsodium runs within 0.1 % of openssl-sw and
    crosses it somewhere its 95 % CIs cannot place: its row says "not resolved", so the figure gets no
    dotted line and no shaded interval for it, and the table no length."""
    from cryptobench.report.build import _crossover_table
    cells = []
    for n in LENGTHS:
        cells += [_timed("sha256", "openssl-sw", {"bytes": n}, _sw(n)),
                  _timed("sha256", "openssl-hw", {"bytes": n}, _hw(n)),
                  _timed("sha256", "libsodium", {"bytes": n}, 21e-9 + 1.998e-9 * n)]
    run = _store(tmp_path / "r.sqlite", cells, baseline="openssl-sw")
    rows = {r["b"]: r for r in crossover_rows([run])}
    hw, sod = rows["openssl-hw"], rows["libsodium"]
    assert hw["time"]["resolved"] is True and hw["status"] == "b-from"
    assert sod["time"]["resolved"] is False and sod["time"]["x"] is not None and "not resolved" in sod["text"]
    fig = next(f for f in build_figures([run]) if f.kind == "crossover")
    ax = fig.fig.axes[0]
    verticals = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert [list(line.get_xdata()) for line in verticals] == [[pytest.approx(hw["time"]["x"])] * 2]
    assert len(ax.patches) == 1                                          # hw's interval only
    assert [t.get_text() for t in ax.texts] == ["53.3 B"]
    table = _crossover_table(crossover_rows([run]))
    lengths = {row[4]: row[5] for row in table.cells}
    assert lengths["libsodium"] == "not resolved" and lengths["openssl-hw"].startswith("53.3")
    # the intervals allow a crossover but also none at all in range: not resolved either
    cells = [c for c in cells if c["engine"] != "libsodium"]
    cells += [_timed("sha256", "libsodium", {"bytes": n}, 40e-9 + 1.98e-9 * n) for n in LENGTHS]
    run = _store(tmp_path / "s.sqlite", cells, baseline="openssl-sw")
    sod = next(r for r in crossover_rows([run]) if r["b"] == "libsodium")
    assert sod["time"]["interval"][1] is None and sod["time"]["resolved"] is False
    assert "may not become cheaper in the measured range" in sod["text"]


@pytest.mark.e2e
def test_energy_sweep_gives_energy_figure_and_energy_heatmap(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite", energy=True)
    figs = build_figures([run])
    assert {"duration", "energy", "heatmap", "crossover"} <= _kinds(figs)
    en = next(f for f in figs if f.kind == "energy")
    assert re.search(r"\((nJ|µJ|mJ)\)", en.fig.axes[0].get_ylabel())
    heat = [f for f in figs if f.kind == "heatmap"]
    assert [f.id for f in heat] == ["heatmap-time-r1", "heatmap-energy-r1"]
    assert heat[1].fig.axes[1].get_ylabel() == "energy / openssl-sw's energy (log scale)"
    row = next(r for r in crossover_rows([run]) if r["b"] == "openssl-hw")
    assert row["energy"]["status"] == "b-from" and row["energy_provenance"] == ["measured"]
    _saves(figs)


def _sim_cell(op, lib, n, cycles, energy=True):
    t = cycles / 48e6
    samples = [[1, int(round(t * 1e9)), cycles]] * 3
    result = derive(op, {"bytes": n}, samples, {"counter": "model", "counter_hz": 48e6}, True)
    if energy:
        result["energy"] = {"per_op_j": t * 3.3 * 0.005, "provenance": "modeled",
                            "method": "E = t × V × I (device profile)"}
    return {"op": op, "engine": lib, "params": {"bytes": n, "aad_bytes": 0}, "target": "sim:cortex-m4:ideal-m4",
            "provenance": "simulated", "samples": samples, "result": result}


def test_mcu_run_gives_cycles_and_modeled_energy(tmp_path):
    cells = [_sim_cell("chacha20-poly1305-encrypt", lib, n, base + per * n)
             for n in (0, 16, 256, 1024) for lib, base, per in (("mbedtls", 8000, 110), ("monocypher", 7000, 40))]
    run = _store(tmp_path / "r.sqlite", cells, cond=SIM_COND)
    figs = build_figures([run])
    assert _kinds(figs) == {"cycles", "energy"}                     # no host duration, no baseline
    cyc = next(f for f in figs if f.kind == "cycles")
    ax = cyc.fig.axes[0]
    assert ax.get_ylabel() == "cycles per operation"
    assert ax.get_xscale() == "symlog"                               # 0 B among the lengths
    assert ax.get_yscale() == "log"
    assert cyc.provenance == ["simulated"] and ax.get_title(loc="right") == "simulated"
    ys = sorted(y for line in ax.get_lines() for y in line.get_ydata())
    assert ys[0] == 7000 and ys[-1] == 8000 + 110 * 1024
    for word in ("simulated", "cortex-m4", "ideal-m4", "48 MHz", "arm-none-eabi-gcc 12.2.1", "-Os",
                 "mbedtls 2.28.10", "monocypher 4.0.2", "cycle model"):
        assert word in cyc.caption, word
    en = next(f for f in figs if f.kind == "energy")
    assert en.provenance == ["modeled"] and "modeled" in en.caption
    assert en.fig.axes[0].get_title(loc="right") == "modeled"
    _ids_ok(figs)
    _saves(figs)


def test_mcu_lengths_without_zero_use_log(tmp_path):
    cells = [_sim_cell("chacha20-poly1305-encrypt", "mbedtls", n, 8000 + 110 * n, energy=False)
             for n in (16, 64, 256, 1024)]
    fig = build_figures([_store(tmp_path / "r.sqlite", cells, cond=SIM_COND)])[0]
    assert fig.kind == "cycles" and fig.fig.axes[0].get_xscale() == "log"


def test_linear_length_sweep_uses_a_linear_x_axis(tmp_path):
    """The Cifra AEAD study's sweep (0…256 B in steps of 4, as the cifra-aead suite runs it) is drawn
    on a linear x axis, as the study's chart: in cycles, duration and crossover figures alike."""
    from cryptobench.report.figures.style import evenly_spaced
    lengths = list(range(0, 257, 4))
    cells = [_sim_cell("chacha20-poly1305-encrypt", lib, n, base + per * n, energy=False)
             for n in lengths for lib, base, per in (("mbedtls", 8000, 110), ("monocypher", 7000, 40))]
    cyc = build_figures([_store(tmp_path / "m.sqlite", cells, cond=SIM_COND, suite="cifra-aead")])[0]
    assert cyc.kind == "cycles" and cyc.fig.axes[0].get_xscale() == "linear"
    assert "Axes: linear x" in cyc.caption
    host = []
    for n in lengths:
        host += [_timed("aes-gcm-encrypt", "openssl-sw", {"bytes": n}, _sw(n)),
                 _timed("aes-gcm-encrypt", "openssl-hw", {"bytes": n}, _hw(n))]
    figs = build_figures([_store(tmp_path / "h.sqlite", host, baseline="openssl-sw")])
    for kind in ("duration", "crossover"):
        assert next(f for f in figs if f.kind == kind).fig.axes[0].get_xscale() == "linear", kind
    # the rule: four or more lengths with one constant step; geometric or hand-picked lengths stay log
    assert evenly_spaced(lengths) and evenly_spaced([16, 32, 48, 64])
    assert not evenly_spaced(LENGTHS) and not evenly_spaced([64, 8000, 16000]) and not evenly_spaced([0, 256])


def _parallel_cell(engine, n, th, eff, ci, over=False):
    cell = _timed("sha256", engine, {"bytes": 16384, "parallel": n}, 16384 / th)
    cell["result"]["parallel"] = {
        "n": n, "cpus": list(range(n)), "available_cpus": [0, 1], "oversubscribed": over, "pinned": True,
        "unit": "bytes", "units_per_op": 16384.0, "rounds": 20, "exec_time_s": 0.5, "units_total": 1e9,
        "aggregate": th, "aggregate_ci95": [th * 0.97, th * 1.03], "per_core": th / n,
        "efficiency": eff, "efficiency_ci95": ci, "flags": ["oversubscribed"] if over else []}
    return cell


def test_parallel_run_gives_scaling_only(tmp_path):
    cells = []
    for engine, th1 in (("openssl-hw", 2e9), ("openssl-sw", 4e8)):
        cells += [_parallel_cell(engine, 1, th1, 1.0, None),
                  _parallel_cell(engine, 2, th1 * 1.8, 0.9, [0.85, 0.95]),
                  _parallel_cell(engine, 4, th1 * 1.9, 0.475, [0.45, 0.5], over=True)]
    run = _store(tmp_path / "r.sqlite", cells, baseline="openssl-sw",
                 options={"parallel": [1, 2, 4], "parallel_cpus": [0, 1]}, suite="pisa-a53")
    figs = build_figures([run])
    assert _kinds(figs) == {"scaling"} and len(figs) == 1
    f = figs[0]
    assert f.id == "scaling-sha256-r1"
    ax1, ax2 = f.fig.axes[:2]
    assert "Mb/s" in ax1.get_ylabel() and "%" in ax2.get_ylabel()
    # throughput on a log axis: openssl-sw (5 × slower) is not flattened against zero
    assert ax1.get_yscale() == "log" and ax2.get_yscale() == "linear"
    assert ax1.get_ylim()[0] > 0 and "Left (log scale)" in f.caption
    effs = sorted(round(y, 6) for line in ax2.get_lines() for y in line.get_ydata() if y not in (100.0,))
    assert 90.0 in effs and 47.5 in effs
    ideal = [line for line in ax1.get_lines() if line.get_linestyle() == "--"]
    assert ideal and max(ideal[0].get_ydata()) == pytest.approx(4 * 2e9 * 8 / 1e6)
    assert "oversubscribed" in f.caption and "N = 4 oversubscribed" in f.caption
    assert "n = 20 rounds per point" in f.caption and "suite pisa-a53" in f.caption
    assert crossover_rows([run]) == []
    _saves(figs)


def test_supplies_give_energy_split(tmp_path):
    cells = []
    for engine, total, se_share in (("openssl-hw", 2e-4, 0.0), ("pkcs11", 1.2e-3, 71.2)):
        en = {"per_op_j": total, "provenance": "measured", "stats": {"n": 100},
              "supplies": {"main": {"median_j": total * (100 - se_share) / 100, "share_pct": 100 - se_share},
                           "se": {"median_j": total * se_share / 100, "share_pct": se_share}}}
        cells.append(_timed("ecdsa-sign", engine, {"curve": "p256"}, 1e-3, k=1, energy=en))
    run = _store(tmp_path / "r.sqlite", cells)
    figs = build_figures([run])
    assert _kinds(figs) == {"energy-split"}
    f = figs[0]
    ax = f.fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "71.2 %" in texts and "28.8 %" in texts and "100.0 %" in texts
    ylabels = [t.get_text() for t in ax.get_yticklabels()]
    assert any("pkcs11" in y and "µJ" in y and "1,200" in y for y in ylabels), ylabels
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["main", "se"]
    assert "measured" in f.caption and "n = 100 windows per point" in f.caption
    _saves(figs)


def test_no_figures_without_the_data(tmp_path):
    single = _store(tmp_path / "a.sqlite", [_timed("sha256", "openssl-hw", {"bytes": 64}, 1e-7),
                                            _timed("sha256", "openssl-sw", {"bytes": 64}, 2e-7)])
    assert build_figures([single]) == []                      # one length, no baseline
    failed = _store(tmp_path / "b.sqlite", [_unsupported("sha256", "mbedtls", {"bytes": n}) for n in LENGTHS],
                    baseline="mbedtls")
    assert build_figures([failed]) == [] and crossover_rows([failed]) == []
    assert build_figures([]) == []
    # with a baseline, one length: the heat-map only
    based = _store(tmp_path / "c.sqlite", [c.to_json() for c in single.cells], baseline="openssl-sw")
    assert _kinds(build_figures([based])) == {"heatmap"}


def test_several_runs_share_a_figure_with_disambiguated_labels(tmp_path):
    a = _sweep_run(tmp_path / "r.sqlite")
    b = _sweep_run(tmp_path / "r.sqlite")
    figs = build_figures([a, b])
    _ids_ok(figs)
    dur = [f for f in figs if f.kind == "duration"]
    assert len(dur) == 1 and dur[0].id == "duration-sha256-r1-2"
    labels = [t.get_text() for t in dur[0].fig.axes[0].get_legend().get_texts()]
    assert "openssl-hw (run 1)" in labels and "openssl-hw (run 2)" in labels
    colors = {line.get_label(): line.get_color() for line in dur[0].fig.axes[0].get_lines()}
    assert colors["openssl-hw (run 1)"] == colors["openssl-hw (run 2)"]          # one colour per engine
    assert "Run 1" in dur[0].caption and "Run 2" in dur[0].caption
    assert [f.id for f in figs if f.kind == "heatmap"] == ["heatmap-time-r1", "heatmap-time-r2"]


@pytest.mark.e2e
def test_single_shot_and_batched_runs_are_labelled_so(tmp_path):
    """A --single run (k = 1, latency) and a batched run of the same engines in one figure: every
    line says single-shot or batched, not only "(run 1)" / "(run 2)"; run ids only where two runs of
    one kind would read alike."""
    db = tmp_path / "r.sqlite"
    batched = _sweep_run(db)
    engines = ["openssl-hw", "openssl-sw", "mbedtls", "libsodium"]
    single = _store(db, [_timed(c.op, c.engine, dict(c.params), 3 * _sw(c.params["bytes"]), k=1)
                         for c in batched.cells if c.ok], baseline="openssl-sw", engines=engines,
                    options={"single": True})
    dur = next(f for f in build_figures([batched, single]) if f.kind == "duration")
    labels = [t.get_text() for t in dur.fig.axes[0].get_legend().get_texts()]
    assert labels == ["openssl-hw · batched", "openssl-sw · batched", "libsodium · batched",
                      "openssl-hw · single-shot", "openssl-sw · single-shot", "libsodium · single-shot"]
    assert "single-shot: each sample is one operation timed on its own" in dur.caption
    again = _sweep_run(db)                                   # a second batched run: its run id tells it apart
    dur = next(f for f in build_figures([batched, single, again]) if f.kind == "duration")
    labels = [t.get_text() for t in dur.fig.axes[0].get_legend().get_texts()]
    assert "openssl-hw · batched (run 1)" in labels and "openssl-hw · batched (run 3)" in labels
    assert "openssl-hw · single-shot" in labels
    # one kind only: no mode in the labels (test_several_runs_share_a_figure_with_disambiguated_labels)
    assert "single-shot" not in build_figures([batched])[0].caption


def test_conditions_caption(tmp_path):
    run = _sweep_run(tmp_path / "r.sqlite", label="nightly")
    text = conditions_caption(run)
    assert text.startswith("Run 1 (ad hoc, label: nightly): measured on Test CPU 9000")
    for word in ("aes sha_ni", "Linux 6.1.0-test", "gcc 12.2.0 -O2 -g", "CLOCK_MONOTONIC_RAW",
                 "OpenSSL 3.0.99-test (extensions on: AES-NI, SHA-NI)", "extensions masked", "mbed TLS 2.28.9-test"):
        assert word in text, word
    assert "\n" not in text
    sim = _store(tmp_path / "s.sqlite", [_sim_cell("chacha20-poly1305-encrypt", "mbedtls", 16, 9000)], cond=SIM_COND)
    text = conditions_caption(sim)
    for word in ("simulated cortex-m4", "ideal-m4", "48 MHz", "arm-none-eabi-gcc 12.2.1 -mcpu=cortex-m4 -mthumb -Os",
                 "mbedtls 2.28.10", "monocypher 4.0.2"):
        assert word in text, word


def test_published_points_are_drawn_beside_matching_sweeps_only(tmp_path):
    """--reference cifra-aead: the Cifra chart's and table's ChaCha20-Poly1305 cycles (AAD 16 B,
    as the post states) appear beside a simulated sweep with AAD 16 B, dashed, as `published`,
    with the document and its conditions in the caption; a sweep with AAD 0 B gets none."""
    from cryptobench.references import load_reference
    cifra = load_reference("cifra-aead")
    cells = []
    for aad in (16, 0):
        for n in (0, 64, 256):
            for lib, base in (("monocypher", 7000), ("bearssl", 6000)):     # two: not merged as one engine
                c = _sim_cell("chacha20-poly1305-encrypt", lib, n, base + 40 * n, energy=False)
                c["params"]["aad_bytes"] = aad
                cells.append(c)
    run = _store(tmp_path / "r.sqlite", cells, cond=SIM_COND)
    figs = [f for f in build_figures([run], references=[cifra]) if f.kind == "cycles"]
    with_pub = next(f for f in figs if "AAD 16 B" in f.title)
    without = next(f for f in figs if f is not with_pub)
    assert with_pub.provenance == ["published", "simulated"] and without.provenance == ["simulated"]
    ax = with_pub.fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert "published: cifra, Cycles-vs-length chart" in labels and "published: cifra, Results table" in labels
    chart = next(line for line in ax.get_lines() if line.get_label() == "published: cifra, Cycles-vs-length chart")
    expected = sorted((float(r.params["bytes"]), r.value) for r in cifra.rows
                      if r.op == "chacha20-poly1305-encrypt" and r.metric == "cycles" and r.table.startswith("Cycles"))
    assert list(zip(chart.get_xdata(), chart.get_ydata())) == expected     # every chart point, 0..256 B
    assert chart.get_linestyle() == "--"
    for word in ("Published (dashed", "€1 devices", "STM32F030F4P6", "48 MHz", "provenance: published"):
        assert word in with_pub.caption, word
    assert "published" not in without.caption.lower()
    _saves(figs)


def test_report_cli_refuses_an_unknown_reference(tmp_path):
    from conftest import cli
    run = _store(tmp_path / "r.sqlite", [_sim_cell("chacha20-poly1305-encrypt", "monocypher", n, 7000 + 40 * n)
                                         for n in (0, 64)], cond=SIM_COND)
    r = cli("report", str(run.id), "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "o"),
            "--reference", "nosuch")
    assert r.returncode == 2 and "unknown reference 'nosuch'" in r.stderr and "cifra-aead" in r.stderr
    assert not (tmp_path / "o" / "report.html").exists()
