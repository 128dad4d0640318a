"""The shared records: a cell's identity is spelled in one place, the same as stores already hold it."""
import json

import pytest

from cryptobench.core.records import STATUSES, Cell, Params, cell_key, params_key


def test_params_key_ignores_key_order_and_matches_the_stored_spelling():
    a, b = {"bytes": 64, "key_bits": 128}, {"key_bits": 128, "bytes": 64}
    assert params_key(a) == params_key(b) == json.dumps(a, sort_keys=True)
    # the cells table's key, as every database since the first one spells it
    assert cell_key("aes-gcm-encrypt", b, "mbedtls") == 'aes-gcm-encrypt|{"bytes": 64, "key_bits": 128}|mbedtls'


def test_params_are_frozen_hashable_and_equal_by_value():
    p = Params({"bytes": 64, "key_bits": 128})
    assert p == Params(key_bits=128, bytes=64) == {"key_bits": 128, "bytes": 64}
    assert len({p, Params(key_bits=128, bytes=64)}) == 1
    assert p.key == params_key({"bytes": 64, "key_bits": 128}) and p.to_dict() == {"bytes": 64, "key_bits": 128}
    with pytest.raises(AttributeError):
        p.key = "x"
    with pytest.raises(TypeError):
        p["bytes"] = 1


def test_the_status_words():
    assert STATUSES == ("ok", "unsupported", "failed", "partial")


def test_a_cell_round_trips_through_its_json_form():
    from cryptobench.core.records import Cell, Result
    d = {"op": "sha256", "params": {"bytes": 64}, "engine": "openssl-hw", "target": "host", "provenance": "measured",
         "status": "ok", "kat": "pass", "detail": "3 vectors", "samples": [[8, 800, 2400]],
         "result": {"time_s": {"median": 1e-7, "ci95": [0.9e-7, 1.1e-7]}, "flags": ["outliers"], "new_field": 1},
         "seq": 4}
    c = Cell.from_json(d)
    assert c.to_json() == d                                   # fields a newer version adds survive
    assert isinstance(c.result, Result) and c.result.flags == ["outliers"] and c.result["new_field"] == 1
    assert c.key == cell_key("sha256", {"bytes": 64}, "openssl-hw") and c.ok
    assert c.reported_time() == (1e-7, (0.9e-7, 1.1e-7), "median")


def test_the_one_usable_energy_rule():
    from cryptobench.core.records import Energy
    assert Energy({"per_op_j": 1e-6}).usable
    assert not Energy({"per_op_j": 1e-6, "flags": ["not-above-idle"]}).usable
    assert not Energy({"per_op_j": 0.0}).usable and not Energy({"per_op_j": -1e-9}).usable
    assert not Energy({}).usable


def test_a_plan_round_trips_and_keeps_what_it_does_not_name():
    from cryptobench.core.records import Plan
    d = {"suite": "default", "title": "t", "source": "s", "baseline": "openssl-sw", "relative": False,
         "options": {"repeat": 5, "warmup": 1, "min_time": 0.01, "budget_s": 60, "precision": 0.01, "processes": 4,
                     "per_visit": 2, "seed": 7, "engines": ["openssl-sw"], "single": False, "overrides": [],
                     "fixed_samples": False, "energy_windows": 5},
         "groups": [{"op": "sha256", "params": {"bytes": 64}, "engines": ["openssl-sw"], "table": "", "bench_engines": None,
                     "repeat": None, "warmup": None, "min_time": None, "single": False}],
         "skipped_groups": [], "label": "x", "future": {"a": 1}}
    plan = Plan.from_json(d)
    assert plan.options.seed == 7 and plan.options.extra == {"energy_windows": 5}
    assert plan.groups[0].params == {"bytes": 64} and plan.label == "x"
    assert plan.to_json() == d


def test_key_value_options_are_parsed_in_one_place():
    from cryptobench.cli.common import key_values, split_params
    from cryptobench.core.errors import UsageError
    # a repeated --param adds its values instead of keeping only the last
    assert split_params(["bytes=64", "bytes=128,64", "key_bits=128"]) == {"bytes": ["64", "128"], "key_bits": ["128"]}
    assert key_values(["a=1", "b=x"], "--option", convert=lambda t: int(t) if t.isdigit() else t) == {"a": 1, "b": "x"}
    for bad, flag in ((["bytes"], "--param"), (["=3"], "--param"), (["bytes="], "--param")):
        with pytest.raises(UsageError, match="expected KEY=VALUE"):
            split_params(bad)
    with pytest.raises(UsageError, match="given twice"):
        key_values(["a=1", "a=2"], "--option")


@pytest.mark.parametrize("field, word", [("status", "fialed"), ("provenance", "guessed"), ("kat", "maybe")])
def test_a_cell_refuses_a_word_outside_its_vocabulary(field, word):
    from cryptobench.core.records import VocabularyError
    with pytest.raises(VocabularyError, match=f"a cell's {field} '{word}': expected one of"):
        Cell(op="sha256", params={}, engine="openssl-sw", **{field: word})


def test_a_result_refuses_a_figure_whose_provenance_is_outside_the_vocabulary():
    from cryptobench.core.records import Energy, Result, VocabularyError
    assert Result({"cycles": {"per_op_median": 5, "provenance": "simulated"},
                   "sim": {"provenance": "simulated", "speed_provenance": "measured"}}).cycles["per_op_median"] == 5
    with pytest.raises(VocabularyError, match="a result's cycles provenance 'guessed': expected one of measured"):
        Result({"cycles": {"per_op_median": 5, "provenance": "guessed"}})
    with pytest.raises(VocabularyError, match="an energy figure's provenance 'estimated'"):
        Energy({"per_op_j": 1e-6, "provenance": "estimated"})


def test_a_store_holding_a_misspelt_status_is_one_line(tmp_path):
    """A store another program wrote into: the cell that holds a word cryptobench never writes is
    named, in one line, instead of a traceback."""
    import sqlite3
    from cryptobench.core.errors import UsageError
    from cryptobench.store.database import Store
    from storeutil import stored_run
    db = tmp_path / "s.sqlite"
    run_id = stored_run(db, [("sha256", "openssl-sw", {"bytes": 64}, 1e-6)]).id
    con = sqlite3.connect(db)
    con.execute("UPDATE cells SET status = 'fialed' WHERE run_id = ?", (run_id,))
    con.commit()
    con.close()
    with pytest.raises(UsageError, match=r"run \d+, cell 0: a cell's status 'fialed': expected one of ok, unsupported"):
        Store(db, create=False).load_run(run_id)
