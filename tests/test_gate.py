"""`cryptobench gate BASE HEAD` (analysis/gate.py, docs/gate.md): deterministic figures compared
exactly and named by function, refusal on different conditions, exit codes, Markdown."""
import json
import re

import pytest

from conftest import cli
from gate_fixture import BUILD, FUNCS, PROFILE, SIM
from storeutil import save_cell_at, stored_run

from cryptobench.analysis.gate import DEFAULT_LIMITS, Limit, function_changes, gate, parse_limit, size_changes
from cryptobench.core.errors import UsageError
from cryptobench.core.records import Plan
from cryptobench.store.database import Store
from cryptobench.store.run_file import load_run_file


def _limits(**given):
    return {k: parse_limit(given.get(k, v), k) for k, v in DEFAULT_LIMITS.items()}


def sim_cell(cycles=10000, insns=7750, stack=600, flash=2060, profile=PROFILE, funcs=FUNCS, op="sha256"):
    """A simulated cell as the simulator stores it (docs/schema.md): cycles, instructions, stack,
    code size with per-function sizes, the per-function profile whose rows sum to its cycles."""
    rows = [dict(r) for r in profile]
    return {"op": op, "params": {"bytes": 64}, "engine": "mbedtls", "target": "sim", "provenance": "simulated",
            "status": "ok", "kat": "pass", "detail": "", "samples": [[1, cycles * 10, cycles]] * 3,
            "result": {"n": 3, "k": 1, "time_s": {"median": cycles / 1e8},
                       "cycles": {"per_op_median": cycles, "provenance": "simulated"},
                       "sim": {"instructions_per_op": insns, "provenance": "simulated"},
                       "stack_bytes": stack, "heap_bytes": 0,
                       "code_size": {"flash_bytes": flash, "ram_bytes": 8, "functions": dict(funcs)},
                       "profile": {"repetition": 1, "cycles": cycles, "instructions": insns, "ops_in_window": 1,
                                   "provenance": "simulated", "rows": rows}}}


def sim_run(db, cells, target=SIM, build=BUILD, seed=1) -> int:
    """A complete sim run stored with its target and library build conditions (save_cell_at)."""
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": ["mbedtls"], "repeat": 3, "seed": seed},
            "groups": [{"op": c["op"], "params": c["params"], "engines": ["mbedtls"]} for c in cells],
            "target": {k: v for k, v in target.items() if k != "simulator"}}
    rid = store.create_run(Plan.from_json(plan), {"host": {"cpu": {"model": "Test CPU"}}, "target": target,
                                                  "builds": {"mbedtls": build}})
    for seq, c in enumerate(cells):
        save_cell_at(store, rid, seq, c)
    store.set_status(rid, "complete")
    return rid


def _gate(db, a, b, alpha=0.01, **limits):
    store = Store(db)
    return gate(store.load_run(a), store.load_run(b), _limits(**limits), alpha)


def _metric(doc, name, op="sha256"):
    cell = next(c for c in doc["cells"] if c["op"] == op)
    return next(m for m in cell["metrics"] if m["metric"] == name)


# ------------------------------------------------------------------------------------ exact changes
def test_identical_runs_pass_with_every_figure_the_same(db):
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell()])
    doc = _gate(db, a, b)
    assert doc["verdict"] == "pass" and doc["counts"]["unchanged"] == 1
    assert {m["metric"]: m["verdict"] for m in doc["cells"][0]["metrics"]} == {
        "cycles": "same", "instructions": "same", "stack": "same", "code_size": "same"}


def test_one_cycle_up_is_plus_one_and_fails_at_zero_percent(db):
    a = sim_run(db, [sim_cell(cycles=10000)])
    b = sim_run(db, [sim_cell(cycles=10001, profile=[{**PROFILE[0], "cycles": 9001}] + PROFILE[1:])])
    doc = _gate(db, a, b)
    m = _metric(doc, "cycles")
    assert (m["base"], m["head"], m["change"]) == (10000, 10001, 1)
    assert m["change_pct"] == pytest.approx(0.01)
    assert m["verdict"] == "regression" and doc["verdict"] == "fail" and doc["regressions"] == 1


def test_one_cycle_up_passes_at_one_percent_and_at_an_absolute_two(db):
    a, b = sim_run(db, [sim_cell(cycles=10000)]), sim_run(db, [sim_cell(cycles=10001)])
    for limit in ("1%", "2"):
        doc = _gate(db, a, b, cycles=limit)
        assert _metric(doc, "cycles")["verdict"] == "within threshold"
        assert doc["verdict"] == "pass" and doc["counts"]["changed"] == 1


def test_an_improvement_is_reported_not_failed(db):
    a, b = sim_run(db, [sim_cell(cycles=10000, stack=600)]), sim_run(db, [sim_cell(cycles=9000, stack=560)])
    doc = _gate(db, a, b)
    assert _metric(doc, "cycles")["change"] == -1000 and _metric(doc, "stack")["change"] == -40
    assert doc["verdict"] == "pass" and doc["counts"]["improvement"] == 1


def test_stack_and_instructions_have_their_own_limits(db):
    a, b = sim_run(db, [sim_cell(insns=7750, stack=600)]), sim_run(db, [sim_cell(insns=7760, stack=608)])
    assert _gate(db, a, b)["regressions"] == 1
    doc = _gate(db, a, b, instructions="10", stack="8")
    assert doc["verdict"] == "pass"
    assert _gate(db, a, b, instructions="10", stack="7")["verdict"] == "fail"


def test_limits_parse_percent_and_absolute_and_refuse_nonsense():
    assert parse_limit("0%", "--max-cycles") == Limit(0.0, True)
    assert parse_limit("12", "--max-stack") == Limit(12.0, False)
    assert Limit(1.0, True).exceeded(100, 102) and not Limit(1.0, True).exceeded(100, 101)
    assert not Limit(0.0, True).exceeded(100, 99)
    for bad in ("-1%", "abc", "nan"):
        with pytest.raises(UsageError, match="--max-cycles"):
            parse_limit(bad, "--max-cycles")


# ------------------------------------------------------------------------------------ attribution
def test_attribution_orders_functions_by_cycle_change_with_calls_on_both_sides():
    base = {"rows": PROFILE}
    head = {"rows": [{"function": "mbedtls_internal_sha256_process", "cycles": 9010, "instructions": 7004, "calls": 2},
                     {"function": "mbedtls_sha256_update", "cycles": 600, "instructions": 450, "calls": 1},
                     {"function": "memcpy", "cycles": 520, "instructions": 390, "calls": 4},
                     {"function": "new_helper", "cycles": 30, "instructions": 20, "calls": 1}]}
    rows = function_changes(base, head)
    assert [r["function"] for r in rows] == ["memcpy", "new_helper", "mbedtls_internal_sha256_process"]
    memcpy = rows[0]
    assert (memcpy["cycles_change"], memcpy["calls_base"], memcpy["calls_head"]) == (120, 3, 4)
    assert (rows[1]["cycles_base"], rows[1]["cycles_head"], rows[1]["calls_base"]) == (None, 30, None)
    assert rows[2]["instructions_change"] == 4


def test_gate_names_the_function_a_planted_cycle_is_in_first(db):
    planted = [{**PROFILE[0]}, {**PROFILE[1], "cycles": 612, "instructions": 456}, PROFILE[2]]
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell(cycles=10012, insns=7756, profile=planted)])
    doc = _gate(db, a, b)
    funcs = doc["cells"][0]["attribution"]["functions"]
    assert funcs[0]["function"] == "mbedtls_sha256_update" and funcs[0]["cycles_change"] == 12
    assert len(funcs) == 1 and (funcs[0]["calls_base"], funcs[0]["calls_head"]) == (1, 1)


def test_code_size_change_is_named_by_function_largest_first(db):
    grown = {**FUNCS, "mbedtls_internal_sha256_process": 1832, "sha256_run": 36, "sha256_helper": 8}
    a, b = sim_run(db, [sim_cell(flash=2060)]), sim_run(db, [sim_cell(flash=2096, funcs=grown)])
    doc = _gate(db, a, b)
    m = _metric(doc, "code_size")
    assert (m["change"], m["verdict"]) == (36, "regression")
    sizes = doc["cells"][0]["attribution"]["sizes"]
    assert [(s["function"], s["bytes_change"]) for s in sizes] == [
        ("mbedtls_internal_sha256_process", 32), ("sha256_helper", 8), ("sha256_run", -4)]
    assert size_changes({"functions": FUNCS}, {"functions": FUNCS}) == []


def test_a_function_that_grew_into_padding_is_named_though_the_total_is_the_same(db):
    grown = {**FUNCS, "mbedtls_sha256_update": 238}        # +18 B absorbed by the section's alignment
    a, b = sim_run(db, [sim_cell(flash=2060)]), sim_run(db, [sim_cell(flash=2060, funcs=grown)])
    doc = _gate(db, a, b)
    cell = doc["cells"][0]
    assert _metric(doc, "code_size")["verdict"] == "same" and doc["verdict"] == "pass"
    assert cell["kind"] == "changed" and cell["verdict"] == "functions changed, totals the same"
    assert [(s["function"], s["bytes_change"]) for s in cell["attribution"]["sizes"]] == [("mbedtls_sha256_update", 18)]


def test_a_change_without_profiles_says_how_to_get_them(db):
    bare = sim_cell(cycles=10005)
    del bare["result"]["profile"]
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [bare])
    att = _gate(db, a, b)["cells"][0]["attribution"]
    assert "functions" not in att and "HEAD" in att["functions_note"] and "--profile" in att["functions_note"]


# ------------------------------------------------------------------------------------ refusal
@pytest.mark.parametrize("field, target, build, named", [
    ("compiler", SIM, {**BUILD, "compiler": "arm-none-eabi-gcc 14.1.0"}, "mbedtls: compiler differs"),
    ("flags", SIM, {**BUILD, "cflags": "-mcpu=cortex-m4 -O2"}, "mbedtls: flags differ"),
    ("device", {**SIM, "device": "stm32f407"}, BUILD, "device profile differs: BASE stm32f411, HEAD stm32f407"),
    ("model", {**SIM, "simulator": {**SIM["simulator"], "model_version": 4}}, BUILD,
     "simulator model version differs: BASE 3, HEAD 4"),
    ("wait states", {**SIM, "simulator": {**SIM["simulator"], "flash_ws": 0}}, BUILD, "flash wait states differs"),
    ("recipe", SIM, {**BUILD, "recipe": "/x/recipes/mbedtls-psa.toml"}, "mbedtls: recipe differs"),
])
def test_mismatched_conditions_are_refused_naming_the_field(db, field, target, build, named):
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell(cycles=10500)], target=target, build=build)
    doc = _gate(db, a, b)
    assert doc["verdict"] == "refused" and doc["cells"] == [] and doc["regressions"] == 0
    assert any(named in why for why in doc["refusal"]), doc["refusal"]


def test_another_input_seed_is_refused_not_a_regression(db):
    """Another --seed measures other keys (ECC cycles follow the inputs): a refusal naming the seed."""
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell(cycles=10500)], seed=2)
    doc = _gate(db, a, b)
    assert doc["verdict"] == "refused" and any("input seed differs: BASE 1, HEAD 2" in w for w in doc["refusal"])


def test_the_library_version_and_commit_differing_is_shown_not_refused(db):
    a = sim_run(db, [sim_cell()], build={**BUILD, "library_commit": "abc1234"})
    b = sim_run(db, [sim_cell()], build={**BUILD, "library_version": "3.6.1", "library_commit": "def5678",
                                         "library_source": "/src/mbedtls-head"})
    doc = _gate(db, a, b)
    assert doc["verdict"] == "pass" and doc["refusal"] == []
    lib = doc["libraries"][0]
    assert (lib["base"], lib["head"]) == ("3.6.0 (abc1234)", "3.6.1 (def5678)")
    assert lib["source_head"] == "/src/mbedtls-head"


# ------------------------------------------------------------------------------------ measured, missing
def test_measured_cells_use_diffs_test_and_threshold(db):
    cells = lambda t: [("sha256", "openssl-sw", {"bytes": 64}, t)]
    a, b = stored_run(db, cells(1e-6)).id, stored_run(db, cells(1.5e-6)).id
    # three samples a side: Mann-Whitney's smallest two-sided p is 0.1, so the test's alpha is 0.2
    doc = _gate(db, a, b, alpha=0.2)
    row = doc["cells"][0]
    assert row["metrics"] == [] and row["measured"]["verdict"] == "slower" and doc["verdict"] == "fail"
    assert _gate(db, a, b, alpha=0.2, time="60%")["verdict"] == "pass"
    assert _gate(db, a, b, alpha=0.01)["verdict"] == "pass"          # not significant at 0.01: not a regression


def test_a_cell_on_one_side_only_is_reported_and_fails_only_when_asked(db):
    a = sim_run(db, [sim_cell(), sim_cell(op="sha512")])
    b = sim_run(db, [sim_cell(), sim_cell(op="sha1")])
    store = Store(db)
    doc = gate(store.load_run(a), store.load_run(b), _limits())
    assert doc["counts"]["added"] == 1 and doc["counts"]["removed"] == 1 and doc["verdict"] == "pass"
    strict = gate(store.load_run(a), store.load_run(b), _limits(), fail_on_missing=True)
    assert strict["verdict"] == "fail" and strict["regressions"] == 2


def test_a_cell_that_fails_in_head_is_a_regression(db):
    broken = {**sim_cell(), "status": "failed", "kat": "fail", "detail": "known-answer test failed on the target",
              "result": None, "samples": None}
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [broken])
    doc = _gate(db, a, b)
    assert doc["cells"][0]["kind"] == "regression" and doc["verdict"] == "fail"
    assert "known-answer test failed" in doc["cells"][0]["verdict"]


# ------------------------------------------------------------------------------------ the command
def test_exit_codes_through_the_cli(db, tmp_path):
    a = sim_run(db, [sim_cell()])
    b = sim_run(db, [sim_cell(cycles=10001)])
    c = sim_run(db, [sim_cell()], target={**SIM, "device": "stm32f407"})
    run = lambda *x: cli("gate", *x, "--db", str(db))
    assert run(str(a), str(a)).returncode == 0
    assert run(str(a), str(b)).returncode == 1
    assert run(str(a), str(b), "--max-cycles", "1%").returncode == 0
    refused = run(str(a), str(c))
    assert refused.returncode == 4 and "device profile differs" in refused.stdout
    bad = run(str(a), "99")
    assert bad.returncode == 2 and "99" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert run(str(a), str(b), "--max-cycles", "lots").returncode == 2
    assert run(str(a), "latest", "--format", "json").returncode == 4        # latest: c


def test_two_json_run_documents_are_gated_and_bad_ones_refused(db, tmp_path):
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell(cycles=10003)])
    for rid in (a, b):
        proc = cli("show", str(rid), "--format", "json", "--db", str(db))
        assert proc.returncode == 0, proc.stderr
    from cryptobench.report import render_json
    store = Store(db)
    (tmp_path / "a.json").write_text(render_json(store.load_run(a)))
    (tmp_path / "b.json").write_text(render_json(store.load_run(b)))
    run = load_run_file(tmp_path / "b.json")
    assert run.cells[0].result.cycles["per_op_median"] == 10003 and run.cells[0].result["profile"]["rows"]
    proc = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(tmp_path / "b.json"), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["cells"][0]["metrics"][0]["change"] == 3
    (tmp_path / "bad.json").write_text('{"run": 1,\n nope}')
    bad = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "bad.json:2:2:" in bad.stderr
    (tmp_path / "other.json").write_text('{"rows": []}')
    other = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(tmp_path / "other.json"))
    assert other.returncode == 2 and "run --json" in other.stderr
    missing = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(tmp_path / "gone.json"))
    assert missing.returncode == 2 and "gone.json" in missing.stderr


def test_markdown_has_a_verdict_a_table_and_details_with_escaped_names(db):
    evil = [{**PROFILE[0], "function": "f|<script>"}, *PROFILE[1:]]
    a = sim_run(db, [sim_cell(profile=evil)])
    b = sim_run(db, [sim_cell(cycles=10012, profile=[{**evil[0], "cycles": 9012}, *PROFILE[1:]])])
    proc = cli("gate", str(a), str(b), "--db", str(db), "--format", "md")
    assert proc.returncode == 1, proc.stderr
    md = proc.stdout
    assert md.startswith(f"**cryptobench gate: FAIL (run {a} → run {b}): 1 regression")
    assert "| cell | metric | BASE | HEAD | change | verdict |" in md
    assert "| `sha256 bytes=64 mbedtls sim` | cycles | 10000 | 10012 | +12 cycles (+0.12 %) | regression |" in md
    assert ("<details><summary><code>sha256 bytes=64 mbedtls sim</code>: regression — +12 cycles (+0.12 %)"
            "</summary>") in md
    assert "| `f\\|<script>` | 9000 | 9012 | +12 | 0 | 2 | 2 |" in md      # a code span: <script> is text there
    assert md.count("<details>") == md.count("</details>") == 1
    assert "- `mbedtls` `3.6.0` → `3.6.0`" in md and md.endswith("<!-- cryptobench gate: end of comment -->\n")


def test_refusal_in_markdown_names_the_difference(db):
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [sim_cell()], build={**BUILD, "cflags": "-O3"})
    proc = cli("gate", str(a), str(b), "--db", str(db), "--format", "md")
    assert proc.returncode == 4
    assert proc.stdout.startswith("**cryptobench gate: REFUSED")
    assert "- refused: `mbedtls: flags differ: BASE -mcpu=cortex-m4 -Os, HEAD -O3`" in proc.stdout


# ------------------------------------------------------------------------------------ per-function sizes
def _elf(tmp_path, name, source):
    import subprocess
    c = tmp_path / f"{name}.c"
    c.write_text(source)
    elf = tmp_path / f"{name}.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-Os", "-nostdlib", "-Wl,-e,main",
                    str(c), "-o", str(elf)], check=True, capture_output=True)
    return elf


def test_code_size_records_the_functions_the_op_image_adds_from_the_elf(tmp_path):
    from cryptobench.targets.mcu.firmware.build import Image, code_size, function_sizes
    harness = "int harness(int x) { return x * 3 + 1; }\n"
    empty = _elf(tmp_path, "empty", harness + "int main(void) { return harness(2); }\n")
    op = _elf(tmp_path, "op", harness + "__attribute__((noinline)) int lib_mix(int a, int b) "
              "{ for (int i = 0; i < a; i++) b = (b << 3) ^ (b >> 2) ^ i; return b; }\n"
              "__attribute__((noinline)) int glue_run(int a) { return lib_mix(a, a + 1) + 7; }\n"
              "int main(void) { return harness(glue_run(5)); }\n")
    sizes = function_sizes(op)
    assert sizes["lib_mix"] > 0 and sizes["glue_run"] > 0 and sizes["harness"] == function_sizes(empty)["harness"]
    zero = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    got = code_size(Image(op, zero), Image(empty, zero))
    assert set(got["functions"]) == {"lib_mix", "glue_run", "main"}     # main differs; the harness's own does not
    assert got["functions"]["lib_mix"] == sizes["lib_mix"] and "functions_omitted" not in got
    assert list(got["functions"].values()) == sorted(got["functions"].values(), reverse=True)


# ------------------------------------------------------------------------------------ end to end
@pytest.mark.e2e
def test_a_library_simulated_twice_passes_the_gate_with_its_functions_recorded(tmp_path):
    """The same library built and simulated twice (two run documents, --json): every figure is
    identical, so the gate passes; the cells carry the profile and the per-function sizes the gate
    names changes by."""
    from test_sim import needs_sim    # noqa: F401  (the simulator's native library must be built)
    docs = []
    for name in ("base", "head"):
        out = tmp_path / f"{name}.json"
        proc = cli("run", "--target", "sim:cortex-m4", "--device", "cc2652", "--op", "sha256", "--param", "bytes=64",
                   "--engine", "mbedtls", "--profile", "--db", str(tmp_path / f"{name}.sqlite"), "--json", str(out),
                   "--quiet")
        assert proc.returncode == 0, proc.stderr
        docs.append(out)
    cell = json.loads(docs[1].read_text())["results"][0]
    assert cell["code_size"]["functions"]["mbedtls_internal_sha256_process"] > 0 and cell["profile"]["rows"]
    proc = cli("gate", "--json", str(docs[0]), "--json", str(docs[1]), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    gated = json.loads(proc.stdout)
    assert gated["verdict"] == "pass" and gated["counts"]["unchanged"] == 1
    assert {m["metric"] for m in gated["cells"][0]["metrics"]} == {"cycles", "instructions", "stack", "code_size"}


# ------------------------------------------------------------------------------------ issue 43
# texts a library, recipe or run chose, as a hostile pull request would choose them
HOSTILE = ("![x](http://evil.example/p.png)", "@octocat [x](javascript:alert(1)) **bold**", "<img src=x>",
           "a`b``c", "f|g", "line\nbreak", "#1 !2 ~bug $snip", "_em_ # head", "<details>")
NEEDLES = ("evil.example", "octocat", "javascript", "<img", "**bold**", "#1", "!2", "~bug", "$snip")


def test_markdown_inert_is_one_code_span_for_any_text():
    from cryptobench.core.table import markdown_inert
    from markdown_it import MarkdownIt
    for text in HOSTILE + ("`", " lead", "trail ", "``x``", "\\"):
        md = markdown_inert(text)
        (para,) = [t for t in MarkdownIt("commonmark").parse(md) if t.type == "inline"]
        assert [c.type for c in para.children] == ["code_inline"], (text, md)
        assert para.children[0].content == text.replace("\n", "\\n"), (text, md)
    assert markdown_inert("a|b", in_table=True) == "`a\\|b`" and markdown_inert("") == ""


def test_markdown_comment_lets_no_text_of_a_run_link_embed_mention_or_format(db):
    from mdcheck import live_spots
    evil_rows = [{**PROFILE[0], "function": HOSTILE[0]}, {**PROFILE[1], "function": HOSTILE[1]},
                 {**PROFILE[2], "function": HOSTILE[2] + HOSTILE[3] + HOSTILE[4]}]
    funcs = {h: 10 + i for i, h in enumerate(HOSTILE)}
    build = {**BUILD, "library_version": HOSTILE[1], "library_source": "/home/runner/.cache/cb/library-commits/abc",
             "library_commit": "#1 " + HOSTILE[0]}
    a = sim_run(db, [sim_cell(profile=evil_rows, funcs=funcs)], build=build)
    grown = {**funcs, HOSTILE[5]: 99}
    b = sim_run(db, [sim_cell(cycles=10012, profile=[{**evil_rows[0], "cycles": 9012}, *evil_rows[1:]], funcs=grown)],
                build={**build, "library_version": HOSTILE[6], "library_source": "/home/me/src/" + HOSTILE[7]})
    proc = cli("gate", str(a), str(b), "--db", str(db), "--format", "md")
    assert proc.returncode == 1, proc.stderr
    assert live_spots(proc.stdout, NEEDLES) == [], proc.stdout
    assert "/home/" not in proc.stdout and "…/abc" in proc.stdout        # local paths by their last component
    refused = sim_run(db, [sim_cell()], build={**build, "compiler": HOSTILE[1] + " /opt/ci/" + HOSTILE[0]})
    proc = cli("gate", str(a), str(refused), "--db", str(db), "--format", "md")
    assert proc.returncode == 4 and "compiler differ" in proc.stdout
    assert live_spots(proc.stdout, NEEDLES) == [] and "/opt/ci" not in proc.stdout


def test_a_failed_cells_message_and_a_documents_file_name_are_inert_too(db, tmp_path):
    from mdcheck import live_spots
    from cryptobench.report import render_json
    a = sim_run(db, [sim_cell()])
    failed = {**sim_cell(), "status": "failed", "detail": HOSTILE[1] + " at /home/runner/work/x.c"}
    b = sim_run(db, [failed])
    store = Store(db)
    named = tmp_path / "[x](http:evil.example) @octocat.json"
    named.write_text(render_json(store.load_run(b)))
    (tmp_path / "a.json").write_text(render_json(store.load_run(a)))
    proc = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(named), "--format", "md")
    assert proc.returncode == 1, proc.stderr
    assert live_spots(proc.stdout, NEEDLES) == [], proc.stdout
    assert str(tmp_path) not in proc.stdout and "/home/runner" not in proc.stdout


NOT_FIGURES = [("NaN", float("nan")), ("null", None), ("text", "abc"), ("true", True), ("negative", -5),
               ("-Infinity", float("-inf")), ("Infinity", float("inf")), ("zero", 0), ("a list", "LIST")]


def _with_cycles(value):
    c = sim_cell()
    if value == "missing":
        del c["result"]["cycles"]["per_op_median"]
    else:
        c["result"]["cycles"]["per_op_median"] = [1] if value == "LIST" else value
    return c


@pytest.mark.parametrize("name, value", NOT_FIGURES[:-1] + [("missing", "missing")])
def test_a_head_whose_cycles_are_not_a_figure_fails_naming_them(db, name, value):
    a, b = sim_run(db, [sim_cell()]), sim_run(db, [_with_cycles(value)])
    doc = _gate(db, a, b)
    assert doc["verdict"] == "fail" and doc["cells"][0]["kind"] == "regression", doc["cells"][0]
    assert "HEAD's cycles" in doc["cells"][0]["verdict"]
    assert _metric(doc, "cycles")["verdict"] == "not a figure in HEAD"


@pytest.mark.parametrize("name, value", NOT_FIGURES[:-1])
def test_a_base_whose_cycles_are_not_a_figure_is_refused_never_an_improvement(db, name, value):
    a, b = sim_run(db, [_with_cycles(value)]), sim_run(db, [sim_cell()])
    doc = _gate(db, a, b)
    assert doc["verdict"] == "refused" and doc["refused_for"] == "figures", doc["cells"][0]
    assert any("BASE's cycles" in why for why in doc["refusal"])
    assert doc["counts"]["improvement"] == 0


def test_head_stack_nan_and_all_metrics_removed_fail(db):
    nan_stack = sim_cell()
    nan_stack["result"]["stack_bytes"] = float("nan")
    bare = sim_cell()
    for k in ("cycles", "sim", "stack_bytes", "code_size"):
        del bare["result"][k]
    a = sim_run(db, [sim_cell()])
    for head in (nan_stack, bare):
        doc = _gate(db, a, sim_run(db, [head]))
        assert doc["verdict"] == "fail" and doc["cells"][0]["kind"] == "regression"


def test_figures_refusal_through_the_cli_is_exit_4_with_the_reason(db):
    a, b = sim_run(db, [_with_cycles(-5)]), sim_run(db, [sim_cell()])
    proc = cli("gate", str(a), str(b), "--db", str(db))
    assert proc.returncode == 4 and "BASE's cycles: -5 is not a possible cycles figure" in proc.stdout
    lost = cli("gate", str(b), str(sim_run(db, [_with_cycles(float("nan"))])), "--db", str(db), "--format", "md")
    assert lost.returncode == 1 and "not a figure in HEAD" in lost.stdout and "nan is not a finite number" in lost.stdout


# documents as `run --json` writes them, mutated: each is one line on stderr, exit 2, naming where
def _mutations():
    def at(path, value):
        def f(doc):
            d = doc
            for k in path[:-1]:
                d = d[k]
            d[path[-1]] = value
        return f
    return {
        "builds a list": (at(("conditions", "builds"), [1]), "at conditions.builds: expected an object"),
        "a build a text": (at(("conditions", "builds", "mbedtls"), "x"), "at conditions.builds.mbedtls"),
        "code_size a text": (at(("results", 0, "code_size"), "big"), "at results[0].code_size"),
        "cycles a list": (at(("results", 0, "cycles"), [1, 2]), "at results[0].cycles: expected an object"),
        "size big": (at(("results", 0, "code_size", "functions", "sha256_run"), "big"),
                     "at results[0].code_size.functions.sha256_run: expected a finite number >= 0"),
        "size null": (at(("results", 0, "code_size", "functions", "sha256_run"), None), "functions.sha256_run"),
        "size NaN": (at(("results", 0, "code_size", "functions", "sha256_run"), float("nan")), "got NaN"),
        "op an integer": (at(("results", 0, "op"), 7), "at results[0].op: expected a text, got 7"),
        "profile row a text": (at(("results", 0, "profile", "rows", 0), "x"), "at results[0].profile.rows[0]"),
        "profile cycles a text": (at(("results", 0, "profile", "rows", 0, "cycles"), "many"), "rows[0].cycles"),
        "ops_in_window 0": (at(("results", 0, "profile", "ops_in_window"), 0), "ops_in_window"),
        "run id a text": (at(("run", "id"), "![x](y)"), "at run.id: expected a run id"),
        "samples a text": (at(("results", 0, "samples"), "s"), "at results[0].samples"),
        "stack a list": (at(("results", 0, "stack_bytes"), [600]), "at results[0].stack_bytes"),
        "params a list": (at(("results", 0, "params"), [1]), "at results[0].params"),
        "target a list": (at(("conditions", "target"), [1]), "at conditions.target"),
        "seed a text": (at(("run", "options", "seed"), "s"), "at run.options.seed"),
    }


@pytest.mark.parametrize("name", list(_mutations()))
def test_malformed_documents_are_one_line_and_exit_2(db, tmp_path, name):
    from cryptobench.report import render_json
    mutate, fragment = _mutations()[name]
    a = sim_run(db, [sim_cell()])
    text = render_json(Store(db).load_run(a))
    (tmp_path / "a.json").write_text(text)
    doc = json.loads(text)
    mutate(doc)
    (tmp_path / "b.json").write_text(json.dumps(doc))
    proc = cli("gate", "--json", str(tmp_path / "a.json"), "--json", str(tmp_path / "b.json"))
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "b.json" in proc.stderr and fragment in proc.stderr, proc.stderr


@pytest.mark.parametrize("name, text, fragment", [
    ("400 digits", '{"run": {"id": ' + "1" * 400 + '}, "results": []}', "at run.id: expected a number of at most 40"),
    ("5000-digit integer", '{"run": {}, "results": [' + "9" * 5000 + ']}', "a number of 5000 characters"),
    ("1e999", '{"run": {}, "results": [], "conditions": {"x": 1e999}}', "at conditions.x"),
    ("deep", "[" * 100_000, "nested deeper than 64 levels"),
    ("deep objects", '{"a":' * 200 + "1" + "}" * 200, "…: expected at most 64 levels of nesting"),
    ("syntax", '{"run": 1,\n nope}', "b.json:2:2:"),
    ("not utf-8", b'{"run": "\xff"}', "byte 9: expected UTF-8"),
    ("empty", "", "b.json:1:1:"),
])
def test_documents_that_are_no_json_or_too_big_to_be_one_are_one_line(tmp_path, name, text, fragment):
    (tmp_path / "b.json").write_bytes(text.encode() if isinstance(text, str) else text)
    with pytest.raises(UsageError, match=re.escape(fragment)):
        load_run_file(tmp_path / "b.json")


def test_non_regular_and_huge_files_are_refused_without_reading(tmp_path):
    import os
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(1 << 30)           # sparse: 1 GiB that must not be read
    for path, fragment in ((fifo, "got a FIFO"), ("/dev/zero", "got a character device"), (tmp_path, "got a folder"),
                           (big, "over the cap of 64 MiB")):
        proc = cli("gate", "--json", str(path), "--json", str(path), timeout=60)
        assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
