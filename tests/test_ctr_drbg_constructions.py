"""CTR_DRBG with and without the derivation function (catalog/vector_check.py DRBG_CONSTRUCTIONS): the
bundled no-df vectors are what SP 800-90A 10.2.1 computes (a reference written here from the standard
on pycryptodome's AES-ECB, which first reproduces no-reseed CAVP records from another transcription
than the vector file's); each engine meets the vectors of its own construction only (host engines: df;
a firmware recipe: its ctr_drbg key), and a recipe's ctr_drbg is checked like any key."""
import pytest
from Crypto.Cipher import AES

from cryptobench.catalog.vector_check import construction_of
from cryptobench.core.errors import UsageError
from cryptobench.targets.mcu.firmware.recipes import load_recipe
from cryptobench.targets.mcu.target import matching_vectors_for_op
from cryptobench.targets.verify import load_vectors, matching_vectors

SEEDLEN = 48
H = bytes.fromhex


def _block(key: bytes, v: bytes) -> bytes:
    return AES.new(key, AES.MODE_ECB).encrypt(v)


def _next(v: bytes) -> bytes:
    return ((int.from_bytes(v, "big") + 1) % (1 << 128)).to_bytes(16, "big")


def _update(data: bytes, key: bytes, v: bytes) -> tuple[bytes, bytes]:
    """CTR_DRBG_Update (10.2.1.2), AES-256: seedlen bytes of keystream XOR data -> Key || V."""
    temp = b""
    while len(temp) < SEEDLEN:
        v = _next(v)
        temp += _block(key, v)
    temp = bytes(a ^ b for a, b in zip(temp, data.ljust(SEEDLEN, b"\0")))
    return temp[:32], temp[32:]


def nodf_flow(ins: dict, nbytes: int = 64) -> bytes:
    """The CAVP flow without a derivation function: instantiate (10.2.1.3.1: entropy XOR perso from
    Key = 0, V = 0), reseed (10.2.1.4.1) where given, two generates (10.2.1.5.1), the second returned."""
    x = lambda a, b: bytes(p ^ q for p, q in zip(a, b.ljust(SEEDLEN, b"\0")))   # noqa: E731
    key, v = _update(x(ins["entropy"], ins.get("perso", b"")), bytes(32), bytes(16))
    if ins.get("entropy_reseed"):
        key, v = _update(x(ins["entropy_reseed"], ins.get("add_reseed", b"")), key, v)
    for add in (ins.get("add1", b""), ins.get("add2", b"")):
        if add:
            key, v = _update(add, key, v)
        out = b""
        while len(out) < nbytes:
            v = _next(v)
            out += _block(key, v)
        key, v = _update(add, key, v)
    return out[:nbytes]


def test_the_reference_reproduces_no_reseed_cavp_records_from_another_transcription():
    # drbgvectors_no_reseed/CTR_DRBG.rsp [AES-256 no df] COUNT = 0 of PersonalizationStringLen 0 and 384, as a
    # post-quantum library's randombytes tests quote them (not the vector file's source)
    assert nodf_flow({"entropy": H("df5d73faa468649edda33b5cca79b0b05600419ccb7a879ddfec9db32ee494e5531b51de16a30f76"
                                   "9262474c73bec010")}).hex().startswith("d1c07cd95af8a7f11012c84ce48bb8cb87189e99")
    assert nodf_flow({"entropy": H("22a89ee0e37b54ea636863d9fed10821f1952a428488d528eceb9d2ec69d573ec6216216fb3e8f72"
                                   "a148a5ada9d620b1"),
                      "perso": H("953c10badcbcd45fb4e5475826477fc137ac96a49ad5005fb14bdaf6468ae7f46c5d0de22d304afc"
                                 "67989615adc2e983")}).hex().startswith("f7fab6a6fcf445f0a0434b2aa0c610bdef5489ec")


def test_every_bundled_no_df_vector_is_what_sp800_90a_computes():
    nodf = [v for v in load_vectors() if construction_of(v) == "no-df"]
    assert len(nodf) == 8 and {len(bytes.fromhex(v["in"]["perso"])) for v in nodf} == {0, SEEDLEN}
    for v in nodf:
        ins = {k: bytes.fromhex(h) for k, h in v["in"].items()}
        assert nodf_flow(ins, v["params"]["bytes"]).hex() == v["out"]["bits"], v["id"]
        flipped = dict(ins, entropy_reseed=bytes([ins["entropy_reseed"][0] ^ 1]) + ins["entropy_reseed"][1:])
        assert nodf_flow(flipped).hex() != v["out"]["bits"]            # the reseed input counts


def test_each_engine_meets_the_vectors_of_its_own_construction():
    vectors = load_vectors()
    for op in ("ctr-drbg-instantiate", "ctr-drbg-reseed", "ctr-drbg-generate"):
        host = matching_vectors(vectors, op, {"bytes": 32} if op.endswith("generate") else {})
        assert host and {construction_of(v) for v in host} == {"df"}
        firmware_df = matching_vectors_for_op(vectors, op)
        firmware_nodf = matching_vectors_for_op(vectors, op, "no-df")
        assert {construction_of(v) for v in firmware_df} == {"df"} and len(firmware_nodf) == 8
        assert {construction_of(v) for v in firmware_nodf} == {"no-df"}
    assert len(matching_vectors(vectors, "sha256", {"bytes": 64})) == len(matching_vectors_for_op(vectors, "sha256"))


def test_a_recipe_names_its_construction_and_a_wrong_one_is_one_line(tmp_path):
    glue = tmp_path / "glue.c"
    glue.write_text("/* glue */\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.c").write_text("int a;\n")
    recipe = tmp_path / "r.toml"
    body = ('[library]\nname = "mine"\nversion = "1"\nglue = "glue.c"\nroot = "lib"\nsources = ["a.c"]\n{}'
            '[ops]\n"ctr-drbg-generate" = "my_generate"\n')
    recipe.write_text(body.format('ctr_drbg = "no-df"\n'))
    assert load_recipe(str(recipe)).ctr_drbg == "no-df"
    recipe.write_text(body.format(""))
    assert load_recipe(str(recipe)).ctr_drbg == "df"
    recipe.write_text(body.format('ctr_drbg = "nodf"\n'))
    with pytest.raises(UsageError) as err:
        load_recipe(str(recipe))
    message = str(err.value)
    assert message.startswith(f"{recipe}:7: 'ctr_drbg' = 'nodf': expected \"df\"") and '"no-df"' in message
    assert "\n" not in message
