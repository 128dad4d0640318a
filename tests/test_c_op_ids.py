"""Op ids through C: main.c resolves a request's op id once and checks the payload once for every
engine (docs/protocol.md), and the bundled glues' op table is the one generated from the catalog."""
import json
import subprocess

from cryptobench.catalog import c_header as catalog_c
from cryptobench.catalog.ops import OPS

PAYLOAD_OPS = [op.id for op in OPS.values() if op.payload]
ENGINES = ("openssl", "mbedtls", "libsodium", "system")


def _ask(harness, requests):
    text = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run([str(harness)], input=text, capture_output=True, text=True, timeout=300)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_glue_table_is_up_to_date_and_names_every_catalog_op():
    text = catalog_c.GLUE_TABLE.read_text()
    assert text == catalog_c.render_glue_table(), "run `python -m cryptobench.catalog.c_header`"
    for op in OPS.values():
        assert f'{{"{op.id}", FW_GLUE_{catalog_c.c_name(op.id)}}}' in text


def test_a_setup_without_bytes_is_the_same_error_on_every_engine(harness):
    """Where the engine has the op, the one message; where it lacks it, still 'unsupported'."""
    requests = [{"cmd": "setup", "slot": i, "engine": e, "op": op, "params": {}}
                for i, (e, op) in enumerate((e, op) for e in ENGINES for op in PAYLOAD_OPS)]
    supported = [{"cmd": "supports", "engine": r["engine"], "op": r["op"], "params": {"bytes": 16}}
                 for r in requests]
    for req, reply, sup in zip(requests, _ask(harness, requests), _ask(harness, supported)):
        assert reply["t"] == "error", (req, reply)
        if sup["ok"]:
            assert reply["msg"] == "bytes is required" and "unsupported" not in reply, (req, reply)
        else:
            assert reply.get("unsupported") == 1, (req, reply)


def test_compute_random_without_bytes_and_an_unknown_op(harness):
    replies = _ask(harness, [
        {"cmd": "compute", "engine": "openssl", "op": "random", "params": {}},
        {"cmd": "compute", "engine": "libsodium", "op": "random", "params": {"bytes": 4}},
        {"cmd": "compute", "engine": "system", "op": "sha256", "params": {}},
        {"cmd": "supports", "engine": "mbedtls", "op": "no-such-op", "params": {}},
    ])
    assert replies[0] == {"t": "error", "msg": "bytes is required"}
    assert replies[1]["t"] == "out" and len(replies[1]["out"]["bits"]) == 8
    assert replies[2]["t"] == "error" and replies[2].get("unsupported") == 1
    assert replies[3] == {"t": "error", "msg": "unknown op 'no-such-op'"}
