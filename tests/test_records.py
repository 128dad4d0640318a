"""The shared records: a cell's identity is spelled in one place, the same as stores already hold it."""
import json

import pytest

from cryptobench.records import STATUSES, Params, cell_key, params_key


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
