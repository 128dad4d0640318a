"""The cases of bench/hostile_probe_untrusted.py for gate documents (`gate --json`), figures that are
not figures, and the Markdown comment (issue 43, classes 5, 6 and 7). Each function takes the World
and returns its Cases. The documents are a real host run's (`run --json`) and a simulated run's as
`run --json` writes it (cycles, instructions, stack, code size with per-function sizes, the
per-function profile), each mutated one field at a time."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

from untrusted_core import LIMIT_S, ROOT, Case, World, cli_argv, write_input

sys.path.insert(0, str(ROOT / "tests"))

from gate_fixture import BUILD as TEST_BUILD, FUNCS, PROFILE as TEST_PROFILE, SIM  # noqa: E402

# absolute paths a runner would have: the comment must show none of them
BUILD = {**TEST_BUILD, "library_source": "/home/runner/work/mbedtls", "recipe": "/home/runner/recipes/mbedtls.toml"}
PROFILE = TEST_PROFILE[:2]
HOSTILE = ("![x](http://evil.example/p.png)", "@octocat [x](javascript:alert(1)) **bold**", "<img src=x>",
           "a`b``c|d", "#1 !2 ~bug $snip %m &e", "line\nbreak _em_", "<details><summary>x</summary>",
           "[[_TOC_]] :smile: www.evil.example")
NEEDLES = ("evil.example", "octocat", "javascript", "<img", "**bold**", "#1", "!2", "~bug", "$snip", "[[_TOC_]]")


def _sim_cell(cycles=10000, profile=PROFILE, funcs=FUNCS, op="sha256", **result):
    return {"op": op, "params": {"bytes": 64}, "engine": "mbedtls", "target": "sim", "provenance": "simulated",
            "status": "ok", "kat": "pass", "detail": "", "samples": [[1, cycles * 10, cycles]] * 3,
            "result": {"n": 3, "k": 1, "time_s": {"median": cycles / 1e8},
                       "cycles": {"per_op_median": cycles, "provenance": "simulated", "counter": "model"},
                       "sim": {"instructions_per_op": 7750, "provenance": "simulated"},
                       "stack_bytes": 600, "heap_bytes": 0,
                       "code_size": {"flash_bytes": 2060, "ram_bytes": 8, "functions": dict(funcs)},
                       "profile": {"repetition": 1, "cycles": cycles, "instructions": 7750, "ops_in_window": 1,
                                   "provenance": "simulated", "rows": [dict(r) for r in profile]}, **result}}


def _sim_run(db: Path, cells: list[dict], build: dict = BUILD) -> int:
    from cryptobench.core.records import Cell, Plan
    from cryptobench.store.database import Store
    store = Store(db)
    plan = {"suite": None, "baseline": None, "options": {"engines": ["mbedtls"], "repeat": 3, "seed": 1},
            "groups": [{"op": c["op"], "params": c["params"], "engines": ["mbedtls"]} for c in cells],
            "target": {k: v for k, v in SIM.items() if k != "simulator"}}
    rid = store.create_run(Plan.from_json(plan), {"host": {"cpu": {"model": "Test CPU"}}, "target": SIM,
                                                  "builds": {"mbedtls": build}})
    for seq, c in enumerate(cells):
        store.save_cell(rid, Cell.from_json({**c, "seq": seq}))
    store.set_status(rid, "complete")
    store.close()
    return rid


def _document(db: Path, rid: int) -> dict:
    from cryptobench.report import render_json
    from cryptobench.store.database import Store
    return json.loads(render_json(Store(db).load_run(rid)))


def _host_document(world: World) -> dict:
    """A real run's document: `cryptobench run --op sha256 --engine openssl-sw --repeat 2 --json`."""
    out = world.work / "gate-host-base.json"
    if not out.exists():
        proc = subprocess.run(cli_argv("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2",
                                       "--json", str(out), "--db", str(world.work / "gate-host.sqlite"), "--quiet"),
                              capture_output=True, text=True, timeout=LIMIT_S, cwd=world.work,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _set(doc: dict, path: tuple, value) -> dict:
    """A copy of `doc` with the field at `path` set (value DELETE: removed)."""
    doc = copy.deepcopy(doc)
    d = doc
    for k in path[:-1]:
        d = d[k]
    if value is DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return doc


DELETE = object()


def _gate_json(klass: str, name: str, base: Path, head: Path, **kw) -> Case:
    return Case(klass, name, cli_argv("gate", "--json", str(base), "--json", str(head), *kw.pop("extra", ())),
                inputs=[p for p in (base, head) if p.is_file() and p.stat().st_size < 1 << 20], **kw)


# ------------------------------------------------------------------------------------ gate-json
def _base_documents(world: World, folder: str) -> tuple[dict, dict, Path, Path]:
    """A simulated and a host run document (a store of their own), and each written as a BASE file."""
    db = world.work / f"{folder}-docs.sqlite"
    sim = _document(db, _sim_run(db, [_sim_cell()]))
    host = _host_document(world)
    return (sim, host, write_input(world, f"{folder}/base-sim.json", json.dumps(sim)),
            write_input(world, f"{folder}/base-host.json", json.dumps(host)))


def gate_json(world: World) -> list[Case]:
    sim, host, base_sim, base_host = _base_documents(world, "gate")
    r = ("results", 0)
    mutations = {
        "builds-list": (sim, ("conditions", "builds"), [1], "at conditions.builds: expected an object"),
        "builds-text": (sim, ("conditions", "builds"), "mbedtls", "at conditions.builds"),
        "build-a-number": (sim, ("conditions", "builds", "mbedtls"), 3, "at conditions.builds.mbedtls"),
        "engines-list": (host, ("conditions", "engines"), ["openssl-sw"], "at conditions.engines"),
        "code_size-text": (sim, r + ("code_size",), "2060", "at results[0].code_size"),
        "code_size-list": (sim, r + ("code_size",), [2060], "at results[0].code_size"),
        "cycles-list": (sim, r + ("cycles",), [10000], "at results[0].cycles: expected an object"),
        "host-cycles-list": (host, r + ("cycles",), [1, 2], "at results[0].cycles"),
        "cycles-value-list": (sim, r + ("cycles", "per_op_median"), [1], "at results[0].cycles.per_op_median"),
        "size-big": (sim, r + ("code_size", "functions", "sha256_run"), "big", "functions.sha256_run"),
        "size-null": (sim, r + ("code_size", "functions", "sha256_run"), None, "functions.sha256_run"),
        "size-nan": (sim, r + ("code_size", "functions", "sha256_run"), float("nan"), "got NaN"),
        "size-negative": (sim, r + ("code_size", "functions", "sha256_run"), -4, "functions.sha256_run"),
        "functions-list": (sim, r + ("code_size", "functions"), ["f"], "code_size.functions"),
        "op-integer": (sim, r + ("op",), 7, "at results[0].op: expected a text"),
        "status-misspelt": (sim, r + ("status",), "fialed", "at results[0].status: expected one of ok, unsupported"),
        "provenance-guessed": (sim, r + ("provenance",), "guessed", "at results[0].provenance: expected one of"),
        "kat-maybe": (host, r + ("kat",), "maybe", "at results[0].kat: expected one of pass, fail, n/a"),
        "engine-null": (sim, r + ("engine",), None, "at results[0].engine"),
        "params-list": (sim, r + ("params",), [64], "at results[0].params"),
        "profile-rows-text": (sim, r + ("profile", "rows"), "rows", "at results[0].profile.rows"),
        "profile-row-cycles-text": (sim, r + ("profile", "rows", 0, "cycles"), "many", "rows[0].cycles"),
        "profile-row-function-int": (sim, r + ("profile", "rows", 0, "function"), 1, "rows[0].function"),
        "ops-in-window-zero": (sim, r + ("profile", "ops_in_window"), 0, "ops_in_window"),
        "samples-text": (host, r + ("samples",), "s", "at results[0].samples"),
        "samples-nan": (host, r + ("samples", 0, 1), float("nan"), "at results[0].samples[0][1]"),
        "estimate-ci-text": (host, r + ("estimate", "ci95"), "wide", "at results[0].estimate.ci95"),
        "stack-list": (sim, r + ("stack_bytes",), [600], "at results[0].stack_bytes"),
        "run-id-text": (sim, ("run", "id"), "![x](y)", "at run.id"),
        "seed-text": (sim, ("run", "options", "seed"), "1", "at run.options.seed"),
        "target-list": (sim, ("conditions", "target"), ["sim"], "at conditions.target"),
        "results-object": (sim, ("results",), {"a": 1}, "expected a run's JSON document"),
        "result-a-number": (sim, ("results", 0), 5, "at results[0]: expected an object"),
    }
    cases = []
    for name, (doc, path, value, fragment) in mutations.items():
        head = write_input(world, f"gate/{name}.json", json.dumps(_set(doc, path, value)))
        base = base_sim if doc is sim else base_host
        cases.append(_gate_json("gate-json", name, base, head, fragment=fragment))
    text = json.dumps(sim)
    raw = {
        "digits-400-int": (text.replace('"stack_bytes": 600', '"stack_bytes": ' + "1" * 400), "a number of 400"),
        "digits-400-float": (text.replace('"stack_bytes": 600', '"stack_bytes": 1.' + "1" * 400), "a number of 402"),
        "int-5000-digits": (text.replace('"heap_bytes": 0', '"heap_bytes": ' + "9" * 5000), "a number of 5000"),
        "float-1e999": (text.replace('"heap_bytes": 0', '"heap_bytes": 1e999'), "at results[0].heap_bytes"),
        "nested-100000": ("[" * 100_000, "nested deeper than 64 levels"),
        "nested-objects": ('{"a":' * 5000 + "1" + "}" * 5000, "nested deeper than 64 levels"),
        "nested-objects-100": ('{"a":' * 100 + "1" + "}" * 100, "expected at most 64 levels of nesting"),
        "nested-inside": (text.replace('"heap_bytes": 0', '"heap_bytes": ' + "[" * 3000 + "]" * 3000), "nested deeper"),
        "syntax": (text[:1] + "\n nope", "head.json:2:2:"),
        "truncated": (text[: len(text) // 2], "head.json:1:"),
        "empty": ("", "head.json:1:1:"),
        "not-utf8": (b'{"run": "\xff\xfe"}', "expected UTF-8"),
        "bom": ("\ufeff" + text, "head.json:1:1:"),
        "top-level-list": ("[]", "expected a run's JSON document"),
        "top-level-number": ("1" * 500, "a number of 500 characters"),
    }
    for name, (body, fragment) in raw.items():
        folder = world.work / "inputs" / "gate" / name
        folder.mkdir(parents=True, exist_ok=True)
        head = folder / "head.json"
        head.write_bytes(body if isinstance(body, bytes) else body.encode())
        cases.append(_gate_json("gate-json", name, base_sim, head, fragment=fragment))
    fifo = world.work / "inputs" / "gate" / "fifo.json"
    if not fifo.exists():
        os.mkfifo(fifo)
    big = world.work / "inputs" / "gate" / "big.json"
    with open(big, "wb") as f:
        f.truncate(1 << 30)                       # sparse: a 1 GiB document that must not be read
    exact = world.work / "inputs" / "gate" / "over-cap.json"
    with open(exact, "wb") as f:
        f.truncate((64 << 20) + 1)
    for name, head, fragment in (("fifo", fifo, "got a FIFO"), ("dev-zero", Path("/dev/zero"), "character device"),
                                 ("dev-urandom", Path("/dev/urandom"), "character device"),
                                 ("folder", world.work / "inputs" / "gate", "got a folder"),
                                 ("one-gib", big, "over the cap of 64 MiB"), ("cap-plus-one", exact, "64 MiB"),
                                 ("missing", world.work / "inputs" / "gate" / "gone.json", "cannot read it")):
        cases.append(_gate_json("gate-json", name, base_sim, head, fragment=fragment))
    cases.append(Case("gate-json", "fifo-as-base", cli_argv("gate", "--json", str(fifo), "--json", str(base_sim)),
                      fragment="got a FIFO"))
    return cases


# ------------------------------------------------------------------------------------ gate-figures
def _says(fragment: str):
    def check(proc, scratch) -> str:
        return "" if fragment in proc.stdout else f"no {fragment!r} in the gate's output: {proc.stdout[-300:]!r}"
    return check


def gate_figures(world: World) -> list[Case]:
    sim, host, base_sim, base_host = _base_documents(world, "figures")
    r = ("results", 0)
    values = {"nan": float("nan"), "null": None, "abc": "abc", "true": True, "false": False, "negative": -5,
              "minus-infinity": float("-inf"), "infinity": float("inf"), "zero": 0, "empty-text": "",
              "missing": DELETE, "negative-tiny": -1e-300, "number-text": "10000"}
    cases = []
    for metric, path in (("cycles", ("cycles", "per_op_median")), ("instructions", ("sim", "instructions_per_op"))):
        for name, value in values.items():
            for side in ("head", "base"):
                bad = write_input(world, f"figures/{metric}-{name}-{side}.json", json.dumps(_set(sim, r + path, value)))
                a, b = (base_sim, bad) if side == "head" else (bad, base_sim)
                expect = "not a figure in HEAD" if side == "head" else f"BASE's {metric}"
                rc = (1,) if side == "head" else (4,)
                if side == "base" and value is DELETE:        # a figure newer than BASE: shown, never a pass alone
                    rc, expect = (0, 1, 4), "not compared"
                cases.append(_gate_json("gate-figures", f"{metric}-{name}-{side}", a, b, rc=rc, check=_says(expect)))
    for name, value in (("nan", float("nan")), ("null", None), ("negative", -8), ("text", "600"), ("missing", DELETE)):
        for metric, path in (("stack", ("stack_bytes",)), ("code size", ("code_size", "flash_bytes"))):
            bad = write_input(world, f"figures/{metric}-{name}.json", json.dumps(_set(sim, r + path, value)))
            cases.append(_gate_json("gate-figures", f"{metric.replace(' ', '_')}-{name}-head", base_sim, bad,
                                    rc=(1,), check=_says("not a figure in HEAD")))
    stripped = sim
    for path in (("cycles",), ("sim",), ("stack_bytes",), ("code_size",)):
        stripped = _set(stripped, r + path, DELETE)
    bad = write_input(world, "figures/all-removed.json", json.dumps(stripped))
    cases.append(_gate_json("gate-figures", "all-metrics-removed-head", base_sim, bad, rc=(1,), check=_says("not a figure in HEAD")))
    cases.append(_gate_json("gate-figures", "all-metrics-removed-base", bad, base_sim, rc=(4,),
                            check=_says("nothing was compared")))
    empty = write_input(world, "figures/no-results.json", json.dumps(_set(sim, ("results",), [])))
    cases.append(_gate_json("gate-figures", "no-cells-both", empty, empty, rc=(4,), check=_says("nothing was compared")))
    for name, path, value in (("time-nan", r + ("estimate", "value"), float("nan")),
                              ("time-zero", r + ("estimate", "value"), 0),
                              ("time-negative", r + ("estimate", "value"), -1e-7),
                              ("time-text", r + ("estimate", "value"), "fast")):
        bad = write_input(world, f"figures/host-{name}.json", json.dumps(_set(host, path, value)))
        cases.append(_gate_json("gate-figures", f"host-{name}-head", base_host, bad, rc=(1,),
                                check=_says("not a figure in HEAD")))
        cases.append(_gate_json("gate-figures", f"host-{name}-base", bad, base_host, rc=(4,),
                                check=_says("BASE's time")))
    for name, value in (("nan", float("nan")), ("minus-infinity", float("-inf")), ("zero", 0)):
        bad = write_input(world, f"figures/md-{name}.json", json.dumps(_set(sim, r + ("cycles", "per_op_median"), value)))
        cases.append(_gate_json("gate-figures", f"md-{name}-head", base_sim, bad, rc=(1,), extra=("--format", "md"),
                                check=_says("not a figure in HEAD")))
        cases.append(_gate_json("gate-figures", f"json-{name}-head", base_sim, bad, rc=(1,), extra=("--format", "json"),
                                check=_says('"verdict": "fail"')))
    return cases


# ------------------------------------------------------------------------------------ comment
def _inert(needles=NEEDLES, forbidden=("/home/runner", "/home/me")):
    def check(proc, scratch) -> str:
        from mdcheck import live_spots
        spots = live_spots(proc.stdout, needles)
        if spots:
            return f"live Markdown: {spots[0][:200]}"
        leaked = next((f for f in forbidden if f in proc.stdout), None)
        if leaked or str(scratch) in proc.stdout:
            return f"a local path in the comment: {leaked or scratch}"
        return "" if proc.stdout.strip() else "no comment written"
    return check


def comment(world: World) -> list[Case]:
    db = world.work / "gate-comment.sqlite"
    cases = []
    base = _sim_run(db, [_sim_cell()])
    for i, text in enumerate(HOSTILE):
        rows = [{**PROFILE[0], "function": text, "cycles": 9012}, PROFILE[1]]
        funcs = {**FUNCS, text: 12}
        build = {**BUILD, "library_version": text, "library_source": f"/home/runner/.cache/x/{text}",
                 "library_commit": text}
        head = _sim_run(db, [_sim_cell(cycles=10012, profile=rows, funcs=funcs)], build=build)
        cases.append(Case("comment", f"gate-md-{i}", cli_argv("gate", str(base), str(head), "--db", str(db),
                                                              "--format", "md"), rc=(1,), check=_inert()))
        refused = _sim_run(db, [_sim_cell()], build={**BUILD, "compiler": text + " /home/runner/bin/gcc",
                                                     "cflags": text})
        cases.append(Case("comment", f"gate-md-refused-{i}", cli_argv("gate", str(base), str(refused), "--db", str(db),
                                                                      "--format", "md"), rc=(4,), check=_inert()))
        failed = _sim_run(db, [{**_sim_cell(), "status": "failed", "detail": text + " in /home/me/lib/x.c"}])
        cases.append(Case("comment", f"gate-md-failed-{i}", cli_argv("gate", str(base), str(failed), "--db", str(db),
                                                                     "--format", "md"), rc=(1,), check=_inert()))
    # a hostile op-name-like label cannot be a cell (ops are a fixed catalogue), but engine and
    # target names in a document can: a document's cell named by the pull request
    doc = _document(db, base)
    for i, text in enumerate(HOSTILE[:4]):
        evil = _set(_set(doc, ("results", 0, "target"), text), ("results", 0, "cycles", "per_op_median"), 10040)
        a = write_input(world, f"comment/base-{i}.json", json.dumps(_set(doc, ("results", 0, "target"), text)))
        b = write_input(world, f"comment/head-{i}.json", json.dumps(evil))
        cases.append(_gate_json("comment", f"gate-md-document-target-{i}", a, b, rc=(1,), extra=("--format", "md"),
                                check=_inert()))
    named = world.work / "inputs" / "comment" / "[x](http:evil.example) @octocat #1.json"
    named.write_text(json.dumps(doc))
    cases.append(_gate_json("comment", "gate-md-file-name", named, named, rc=(0,), extra=("--format", "md"),
                            check=_inert()))
    cases += _history_cases(world)
    return cases


def _history_cases(world: World) -> list[Case]:
    """history --format md over runs whose library version, commit and repository a pull request chose."""
    from cryptobench.core.records import Cell, Plan
    from cryptobench.store.database import Store
    cases = []
    for i, text in enumerate(HOSTILE):
        db = world.work / f"gate-history-{i}.sqlite"
        store = Store(db)
        for n, cycles in enumerate((10000, 10100)):
            build = {**BUILD, "library_version": f"{text} {n}", "library_commit": f"{n:040x}",
                     "library_repo": f"/home/runner/work/{text}"}
            plan = {"options": {"engines": ["mbedtls"], "repeat": 3},
                    "groups": [{"op": "sha256", "params": {"bytes": 64}, "engines": ["mbedtls"]}],
                    "target": {k: v for k, v in SIM.items() if k != "simulator"}}
            rid = store.create_run(Plan.from_json(plan), {"target": SIM, "builds": {"mbedtls": build}})
            store.save_cell(rid, Cell.from_json({**_sim_cell(cycles=cycles), "target": "sim:cortex-m4:stm32f411"}))
            store.set_status(rid, "complete")
        store.close()
        cases.append(Case("comment", f"history-md-{i}", cli_argv("history", "--op", "sha256", "--db", str(db),
                                                                 "--format", "md"), rc=(0,), check=_inert()))
    return cases


CLASSES: dict = {"gate-json": gate_json, "gate-figures": gate_figures, "comment": comment}
