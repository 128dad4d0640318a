"""Test helper: store a cell written as the JSON dict of docs/schema.md."""
from cryptobench.core.records import Cell


def save_cell_at(store, run_id: int, seq: int, cell: dict) -> None:
    store.save_cell(run_id, Cell.from_json({**cell, "seq": seq}))


def stored_run(db, cells, *, baseline=None, tables=None, target=None, suite=None, layout=None, extra=None,
               counter="tsc"):
    """A complete run stored in `db` from (op, engine, params, seconds per op) tuples: three samples
    of one operation each around the time (so that ratios have an interval), the result derived as
    the host does (or, with `target`, a microcontroller's: cycles at its clock, stack and code size).
    `tables` maps an op to the study table its [[bench]] names; `extra(op, engine, params)` returns
    fields added to a cell's result (energy, stack, …). Returns the loaded Run."""
    from cryptobench.core.records import Plan
    from cryptobench.stats.results import derive
    from cryptobench.store.database import Store
    store = Store(db)
    engines = list(dict.fromkeys(c[1] for c in cells))
    groups = []
    for op, _, params, _ in cells:
        g = {"op": op, "params": params, "table": (tables or {}).get(op, ""), "engines": engines}
        if g not in groups:
            groups.append(g)
    plan = {"suite": suite, "baseline": baseline, "options": {"engines": engines, "repeat": 3}, "groups": groups}
    if layout:
        plan["layout"] = layout
    cond = {"host": {"cpu": {"model": "Test CPU", "arch": "x86_64"}},
            "harness": {"counter": counter, "counter_hz": 2.4e9}}
    hz = 2.4e9
    if target:
        cond["target"] = target
        plan["target"] = target
        hz = target.get("clock_hz") or 0
    rid = store.create_run(Plan.from_json(plan), cond)
    for seq, (op, engine, params, t) in enumerate(cells):
        samples = [[1, int(t * f * 1e9), int(t * f * hz)] for f in (1.0, 1.01, 0.99)]
        hello = {"counter": "model" if target else counter, "counter_hz": hz}
        result = derive(op, params, samples, hello, True)
        if target:
            result.update(stack_bytes=600, heap_bytes=0, code_size={"flash_bytes": 2000, "ram_bytes": 8})
        if extra:
            result.update(extra(op, engine, params) or {})
        save_cell_at(store, rid, seq, {"op": op, "params": params, "engine": engine,
                                       "target": "sim" if target else "host",
                                       "provenance": "simulated" if target else "measured", "status": "ok",
                                       "kat": "pass", "detail": "", "samples": samples, "result": result})
    store.set_status(rid, "complete")
    return store.load_run(rid)
