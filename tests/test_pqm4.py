"""pqm4's published ML-KEM / ML-DSA rows (references/data/pqm4.toml), `compare --reference pqm4` and
the `pqm4` layout, against a synthetic stored run of a simulated STM32L4R5 at 20 MHz (issue 35 items 4
and 5): cycles over repetitions, stack, code size and a per-function profile per cell."""
from __future__ import annotations

import json

import pytest

from conftest import cli
from cryptobench.analysis.compare import compare, tables
from cryptobench.analysis.pqc import cycle_distribution, keccak_share
from cryptobench.core.records import Plan
from cryptobench.references import load_reference
from cryptobench.report.layouts import layout_tables
from storeutil import save_cell_at

CLOCK = 20e6
# (op, params, per-op cycles of each repetition, stack, (text, rodata, data, bss), Keccak cycles, other cycles)
CELLS = [
    ("ml-kem-keygen", {"level": 768}, [990_000, 988_000, 992_000], 10_248, (4_900, 300, 0, 8), 480_000, 510_000),
    ("ml-kem-encaps", {"level": 768}, [1_140_000, 1_139_000, 1_141_000], 13_400, (5_200, 300, 0, 8), 490_000, 650_000),
    ("ml-kem-decaps", {"level": 768}, [1_390_000, 1_388_000, 1_392_000], 14_500, (5_400, 300, 0, 8), 490_000, 900_000),
    # signing's rejection loop: a spread of a factor of 4 over 7 repetitions
    ("ml-dsa-sign", {"level": 65, "bytes": 59}, [5_100_000, 9_000_000, 12_000_000, 12_400_000, 13_000_000,
                                                  16_000_000, 20_500_000], 79_600, (7_000, 700, 0, 16), 3_800_000,
     8_600_000),
]


def _store(db, clock=CLOCK, profile=True, engine="pqclean") -> int:
    """A complete stored run of CELLS on a simulated STM32F407 (cortex-m4), engine "pqclean" (portable C)
    unless told: fake figures, labelled synthetic and simulated."""
    from cryptobench.store.database import Store
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": [engine], "repeat": 3}, "groups": []}
    cond = {"host": {}, "harness": {}, "engines": {},
            "target": {"kind": "sim", "core": "cortex-m4", "device": "stm32l4r5", "board": "sim-stm32l4r5zi",
                       "cpu": "cortex-m4", "opt": "O3", "clock_hz": clock}}
    rid = store.create_run(Plan.from_json(plan), cond)
    for seq, (op, params, cycles, stack, (text, rodata, data, bss), keccak, other) in enumerate(CELLS):
        samples = [[1, int(c / clock * 1e9), c] for c in cycles]
        med = sorted(cycles)[len(cycles) // 2]
        t = med / clock
        result = {"n": len(cycles), "k": 1, "single_shot": True,
                  "time_s": {"median": t, "mean": t, "stdev": 0.0, "rsd_pct": 0.0, "min": t, "max": t,
                             "ci95": [t, t], "ci_coverage": 0.5},
                  "cycles": {"counter": "model", "counter_hz": clock, "per_op_median": med},
                  "outliers": 0, "ops_per_s": 1 / t, "flags": [], "stack_bytes": stack, "heap_bytes": 0,
                  "code_size": {"flash_bytes": text + rodata + data, "ram_bytes": data + bss, "text": text,
                                "rodata": rodata, "data": data, "bss": bss}}
        if profile:
            result["profile"] = {"repetition": 1, "cycles": keccak + other, "instructions": 1,
                                 "provenance": "simulated",
                                 "rows": [{"function": "PQCLEAN_poly_ntt", "cycles": other, "instructions": 1, "calls": 1},
                                          {"function": "KeccakF1600_StatePermute", "cycles": keccak,
                                           "instructions": 1, "calls": 1}]}
        save_cell_at(store, rid, seq, {"op": op, "params": params, "engine": engine, "target": "sim:cortex-m4:stm32l4r5",
                                       "provenance": "simulated", "status": "ok", "kat": "pass", "detail": "synthetic",
                                       "samples": samples, "result": result})
    store.set_status(rid, "complete")
    store.close()
    return rid


def _run(db, **kw):
    from cryptobench.store.database import Store
    rid = _store(db, **kw)
    return Store(db).load_run(rid)


# ------------------------------------------------------------------------------------ the reference file

def test_pqm4_reference_rows_as_published():
    ref = load_reference("pqm4")
    assert {s.clock_hz for s in ref.sources.values()} == {20e6}
    assert all("11.3.1 20220712" in s.compiler for s in ref.sources.values())
    assert "cc2c1b992b602d285bd15991a566d5f17b34c1fa" in ref.document
    # 9 ML-KEM (3 levels x clean, m4fspeed, m4fstack) and 9 ML-DSA (x clean, m4f, m4fstack) rows of the
    # tables, 19 values each (9 speed, 3 stack, 3 hashing, 4 size)
    assert len(ref.rows) == 18 * 19
    assert sorted(ref.sources) == ["clean", "m4f", "m4fspeed", "m4fstack"]
    pick = {(r.op, r.params.get("level"), r.implementation, r.metric, r.stat): r for r in ref.rows}
    # spot checks against benchmarks.md's rows, as printed
    assert pick[("ml-kem-keygen", 768, "clean", "cycles", "avg")].value == 988_722
    assert pick[("ml-kem-decaps", 1024, "m4fstack", "cycles", "max")].value == 1_110_327
    sign = pick[("ml-dsa-sign", 65, "clean", "cycles", "min")]
    assert (sign.value, sign.executions, sign.params["bytes"]) == (5_098_254, 1000, 59)
    assert pick[("ml-dsa-verify", 87, "m4f", "stack", "")].value == 12_060
    assert pick[("ml-dsa-sign", 65, "clean", "stack", "")].params["bytes"] == 32     # mupq's stack.c MLEN
    assert pick[("ml-kem-encaps", 768, "m4fspeed", "cycles", "avg")].value == 658_754
    assert pick[("ml-kem-encaps", 512, "clean", "hashing_share", "")].value == 41.1
    size = [r for r in ref.rows if r.metric == "code_size" and r.label.startswith("ml-dsa-44 | m4fstack | Total")]
    assert [r.value for r in size] == [24_844] and size[0].op is None
    for r in ref.rows:
        if r.stat:
            trio = {s: pick[(r.op, r.params.get("level"), r.implementation, "cycles", s)].value for s in ("min", "avg", "max")}
            assert trio["min"] <= trio["avg"] <= trio["max"], r.label


def test_bad_stat_is_named(tmp_path):
    from cryptobench.references import ReferenceError
    text = (load_reference("pqm4").path.read_text().replace('stat = "avg"', 'stat = "mean"', 1))
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ReferenceError, match=r"bad.toml:\d+: row 1 .*field 'stat': expected one of avg, min, max"):
        load_reference(p)


# ------------------------------------------------------------------------------------ the figures

def test_distribution_and_keccak_share_from_the_cell(tmp_path):
    run = _run(tmp_path / "r.db")
    sign = next(c for c in run.cells if c.op == "ml-dsa-sign")
    d = cycle_distribution(sign)
    assert (d.n, d.min, d.median, d.max) == (7, 5_100_000, 12_400_000, 20_500_000)
    assert d.mean == pytest.approx(sum(CELLS[3][2]) / 7)
    share, funcs = keccak_share(sign)
    assert share == pytest.approx(100 * 3_800_000 / 12_400_000) and funcs == ["KeccakF1600_StatePermute"]


# ------------------------------------------------------------------------------------ compare --reference pqm4

def test_compare_sets_each_pqm4_row_beside_the_run(tmp_path):
    run = _run(tmp_path / "r.db")
    doc = compare(run, load_reference("pqm4"))
    pr = doc["per_row"]
    speed = {(e["op"], e["level"], e["implementation"]): e for e in pr["speed"]}
    # a portable-C engine beside pqm4's clean rows only (implementation class)
    assert {k[2] for k in speed if k[:2] == ("ml-kem-keygen", 768)} == {"clean"}
    kg = speed[("ml-kem-keygen", 768, "clean")]
    assert kg["ratio"] == pytest.approx(990_000 / 988_722) and kg["yours"]["n"] == 3
    sign = speed[("ml-dsa-sign", 65, "clean")]
    assert (sign["avg"], sign["min"], sign["max"], sign["executions"]) == (12_359_056, 5_098_254, 70_122_163, 1000)
    assert sign["yours"]["median"] == 12_400_000 and sign["yours"]["min"] == 5_100_000
    assert sign["ratio"] == pytest.approx((sum(CELLS[3][2]) / 7) / 12_359_056)
    assert {e["implementation"] for e in pr["speed"] + pr["stack"] + pr["hashing"] + pr["size"]} == {"clean"}
    st = {(e["op"], e["implementation"]): e for e in pr["stack"] if e["level"] in (768, 65)}
    assert st[("ml-kem-keygen", "clean")]["ratio"] == pytest.approx(10_248 / 10_248)
    # mupq's stack benchmark signs 32 bytes, the run 59: matched on level, both lengths said
    assert (st[("ml-dsa-sign", "clean")]["published"], st[("ml-dsa-sign", "clean")]["your_bytes"]) == (79_624, 59)
    hs = {(e["op"], e["level"], e["implementation"]): e for e in pr["hashing"]}
    assert hs[("ml-kem-keygen", 768, "clean")]["yours"] == pytest.approx(100 * 480_000 / 990_000)
    size = {(e["scheme"], e["implementation"]): e for e in pr["size"]}
    assert size[("ml-kem-768", "clean")]["yours"]["Total"] == 5_400 + 300 + 8
    assert size[("ml-kem-768", "clean")]["op"] == "ml-kem-decaps"
    # ML-KEM-512 and -1024, ML-DSA keygen/verify and the other levels: listed, not hidden
    assert any(u["op"] == "ml-kem-keygen" and "ml-kem-512" in u["label"] for u in pr["unmatched"])
    assert not doc["unmatched_yours"]
    titles = [t.title for t in tables(doc)]
    assert any(t.startswith("pqm4 Speed Evaluation") for t in titles) and any("Size" in t for t in titles)
    stack = next(t for t in tables(doc) if t.key == "pqm4-stack")
    assert any(row[1] == "65, pqm4 32 B / yours 59 B" for row in stack.cells)


def test_compare_matches_assembly_cells_to_pqm4s_m4_rows(tmp_path):
    # an engine whose name says m4f is Armv7E-M assembly: beside m4f / m4fstack / m4fspeed, never clean
    pr = compare(_run(tmp_path / "r.db", engine="pqm4-m4f"), load_reference("pqm4"))["per_row"]
    speed = {(e["op"], e["level"], e["implementation"]) for e in pr["speed"]}
    assert {k[2] for k in speed if k[:2] == ("ml-kem-keygen", 768)} == {"m4fspeed", "m4fstack"}
    assert {k[2] for k in speed if k[:2] == ("ml-dsa-sign", 65)} == {"m4f", "m4fstack"}
    assert any(u["implementation"] == "clean" and u["op"] == "ml-kem-keygen" and "ml-kem-768" in u["label"]
               for u in pr["unmatched"])


def test_compare_cli_pqm4_text_and_json(tmp_path):
    db = tmp_path / "r.db"
    rid = _store(db)
    got = cli("compare", str(rid), "--reference", "pqm4", "--db", str(db))
    assert got.returncode == 0, got.stderr
    out = got.stdout
    assert "pqm4 Speed Evaluation" in out and "mean / AVG" in out and "clean" in out
    assert "pqm4 rows with no matching cell" in out
    doc = json.loads(cli("compare", str(rid), "--reference", "pqm4", "--db", str(db), "--format", "json").stdout)
    assert doc["per_row"]["speed"] and doc["reference"]["name"] == "pqm4"


# ------------------------------------------------------------------------------------ the pqm4 layout

def test_pqm4_layout_prints_the_four_tables(tmp_path):
    run = _run(tmp_path / "r.db")
    ts = {t.key: t for t in layout_tables(run, "pqm4")}
    assert list(ts) == ["pqm4-speed-kem", "pqm4-speed-sign", "pqm4-stack-kem", "pqm4-stack-sign",
                        "pqm4-hashing-kem", "pqm4-hashing-sign", "pqm4-size-kem", "pqm4-size-sign",
                        "pqm4-sign-spread", "pqm4-sign-histogram"]
    kem = ts["pqm4-speed-kem"]
    assert kem.headers[:3] == ["scheme", "implementation", "key generation [cycles]"]
    assert kem.cells[0][0] == "ml-kem-768 (3 executions)" and kem.cells[0][1] == "pqclean"
    assert kem.cells[0][2] == "AVG: 990,000 / MIN: 988,000 / MAX: 992,000"
    sign = ts["pqm4-speed-sign"].cells[0]
    assert sign[2] == "—" and sign[3].startswith("AVG: 12,571,429 / MIN: 5,100,000 / MAX: 20,500,000")
    assert ts["pqm4-stack-kem"].cells[0][2:] == ["10,248", "13,400", "14,500"]
    assert ts["pqm4-hashing-kem"].cells[0][2] == "48.5%"
    assert ts["pqm4-size-kem"].cells[0][2:] == ["5,700", "0", "8", "5,708", "ml-kem-decaps"]
    assert any("simulated" in n for n in kem.notes) and any("20 MHz" in n for n in kem.notes)
    # ML-DSA signing's spread: MIN, P10, median, AVG, P90, MAX over the 7 repetitions, and its histogram
    spread = ts["pqm4-sign-spread"].cells[0]
    assert spread[:3] == ["ml-dsa-65", "pqclean", "7"]
    assert spread[3:] == ["5,100,000", "7,440,000", "12,400,000", "12,571,429", "17,800,000", "20,500,000", "4.02"]
    hist = ts["pqm4-sign-histogram"]
    assert sum(int(r[2]) for r in hist.cells) == 7 and len(hist.cells) == 10
    assert hist.cells[0][:3] == ["5,100,000", "6,640,000", "1"] and hist.cells[-1][2] == "1"
    fullest = max(hist.cells, key=lambda r: int(r[2]))
    assert fullest[:3] == ["11,260,000", "12,800,000", "2"] and fullest[3] == "#" * 40   # 12.0 and 12.4 M


def test_pqm4_layout_without_profile_prints_dashes(tmp_path):
    run = _run(tmp_path / "r.db", profile=False)
    ts = {t.key: t for t in layout_tables(run, "pqm4")}
    assert ts["pqm4-hashing-kem"].cells[0][2:] == ["—", "—", "—"]
    assert any("--profile" in n for n in ts["pqm4-hashing-kem"].notes)


def test_show_layout_pqm4_cli(tmp_path):
    db = tmp_path / "r.db"
    rid = _store(db)
    got = cli("show", str(rid), "--layout", "pqm4", "--db", str(db))
    assert got.returncode == 0, got.stderr
    out = got.stdout
    assert "layout pqm4" in out and "Speed Evaluation" in out and "Hashing Evaluation" in out
    assert "histogram of cycles per signature" in out and "#" * 40 in out


# ------------------------------------------------------------------------------------ the distribution figure

def _signing_run(db) -> int:
    """A stored simulated run of ML-DSA signing at two levels and two engines, 200 executions each (k = 1):
    a base cost plus a whole number of rejection-loop rounds, drawn from a seeded geometric law (synthetic)."""
    import random
    from cryptobench.stats.results import derive
    from cryptobench.store.database import Store
    store = Store(db)
    cond = {"host": {}, "harness": {}, "engines": {},
            "target": {"kind": "sim", "core": "cortex-m4", "device": "stm32l4r5", "board": "sim-stm32l4r5zi",
                       "cpu": "cortex-m4", "opt": "O3", "clock_hz": CLOCK}}
    plan = {"suite": None, "baseline": None, "options": {"engines": ["pqclean", "pqclean-m4f"], "repeat": 200},
            "groups": []}
    rid = store.create_run(Plan.from_json(plan), cond)
    rng = random.Random(35)
    seq = 0
    for level, base, per in ((44, 1_000_000, 1_500_000), (65, 1_600_000, 2_300_000)):
        for engine, scale in (("pqclean", 1.0), ("pqclean-m4f", 0.4)):
            cycles = []
            for _ in range(200):
                rounds = 1
                while rng.random() < 0.75:          # about 4 rounds on average
                    rounds += 1
                cycles.append(int(scale * (base + per * rounds)))
            samples = [[1, int(c / CLOCK * 1e9), c] for c in cycles]
            params = {"level": level, "bytes": 59}
            result = {**derive("ml-dsa-sign", params, samples, {"counter": "model", "counter_hz": CLOCK}, True),
                      "stack_bytes": 1, "heap_bytes": 0, "code_size": {}}
            save_cell_at(store, rid, seq, {"op": "ml-dsa-sign", "params": params, "engine": engine,
                                           "target": "sim:cortex-m4:stm32l4r5", "provenance": "simulated",
                                           "status": "ok", "kat": "pass", "detail": "synthetic", "result": result,
                                           "samples": samples})
            seq += 1
    store.set_status(rid, "complete")
    store.close()
    return rid


def test_distribution_figure_a_panel_per_level_and_engine(tmp_path):
    import io
    from cryptobench.report.figures import build_figures
    from cryptobench.store.database import Store
    db = tmp_path / "r.db"
    run = Store(db).load_run(_signing_run(db))
    figs = [f for f in build_figures([run]) if f.kind == "distribution"]
    assert len(figs) == 1
    f = figs[0]
    assert f.provenance == ["simulated"] and f.id.startswith("distribution-ml-dsa-sign-r")
    assert "simulated" in f.title and "stm32l4r5 at 20 MHz" in f.title and "ML-DSA sign" in f.title
    axes = f.fig.axes
    assert len(axes) == 4
    titles = [ax.get_title(loc="left") for ax in axes]
    assert titles == ["ml-dsa-44 · 59 B · pqclean (n = 200)", "ml-dsa-44 · 59 B · pqclean-m4f (n = 200)",
                      "ml-dsa-65 · 59 B · pqclean (n = 200)", "ml-dsa-65 · 59 B · pqclean-m4f (n = 200)"]
    for ax, cell in zip(axes, run.cells):
        xs = [s[2] for s in cell.samples]
        assert ax.get_xlabel() == "cycles per execution (millions)" and ax.get_ylabel() == "executions"
        assert ax.get_title(loc="right") == "simulated"
        assert sum(p.get_height() for p in ax.patches) == 200            # every execution in a bin
        lines = {l.get_label().split()[0]: l.get_xdata()[0] * 1e6 for l in ax.get_lines()}
        assert lines["min"] == pytest.approx(min(xs)) and lines["max"] == pytest.approx(max(xs))
        assert lines["mean"] == pytest.approx(sum(xs) / len(xs))
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            f"mean {sum(xs) / len(xs):,.0f}", f"min {min(xs):,}", f"max {max(xs):,}"]
    for word in ("Provenance: simulated", "n = 200 executions per panel", "k = 1", "rejection loop",
                 "1000 executions", "max / min", "stm32l4r5", "cortex-m4"):
        assert word in f.caption, word
    for fmt in ("png", "svg"):
        buf = io.BytesIO()
        f.fig.savefig(buf, format=fmt)
        assert buf.getbuffer().nbytes > 1000


def test_no_distribution_figure_for_batched_or_uncounted_cells(tmp_path):
    from dataclasses import replace
    from cryptobench.report.figures import build_figures
    from cryptobench.report.figures.distribution import execution_cycles
    run = _run(tmp_path / "r.db")
    sign = next(c for c in run.cells if c.op == "ml-dsa-sign")
    assert len(execution_cycles(sign)) == 7
    assert [f.kind for f in build_figures([run])].count("distribution") == 1
    batched = replace(sign, samples=[[10, 1, 10 * c] for _, _, c in sign.samples])     # a batch's mean only
    assert execution_cycles(batched) == []
    keygen = next(c for c in run.cells if c.op == "ml-kem-keygen")       # a cost that does not vary by design
    assert execution_cycles(keygen) == []
    assert not [f for f in build_figures([replace(run, cells=[batched, keygen])]) if f.kind == "distribution"]


def test_report_cli_writes_the_distribution_figure(tmp_path):
    db = tmp_path / "r.db"
    rid = _signing_run(db)
    out = tmp_path / "rep"
    got = cli("report", str(rid), "--db", str(db), "--out", str(out))
    assert got.returncode == 0, got.stderr
    pngs = sorted(p.name for p in (out / "figures").glob("distribution-*.png"))
    assert pngs == [f"distribution-ml-dsa-sign-r{rid}.png"]
    assert (out / "figures" / pngs[0].replace(".png", ".svg")).stat().st_size > 1000
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "ML-DSA sign (hedged; empty context): cycles per execution" in html


def test_bad_executions_and_implementation_are_one_line_naming_file_and_line(tmp_path):
    from cryptobench.references import ReferenceError
    good = load_reference("pqm4").path.read_text()
    for old, new, what in (("executions = 10\n", "executions = 0\n", "field 'executions': expected a whole number >= 1"),
                           ('implementation = "clean"\n', 'implementation = ""\n',
                            "field 'implementation': expected a non-empty string")):
        p = tmp_path / "bad.toml"
        p.write_text(good.replace(old, new, 1))
        with pytest.raises(ReferenceError) as e:
            load_reference(p)
        msg = str(e.value)
        line = good[:good.index(old)].count("\n") + 1
        assert "\n" not in msg and what in msg and "bad.toml:" in msg, msg
        # the line named is the row's (its [[row]] header) and at most the field's own
        named = int(msg.split("bad.toml:")[1].split(":")[0])
        assert named <= line and good.splitlines()[named - 1] in ("[[row]]", good.splitlines()[line - 1]), msg
