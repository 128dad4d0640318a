"""Bad input gets one clear line naming what is valid, exit code 2, and nothing is lost."""
import pytest

from conftest import cli

# end to end: the real command line on stored or measured runs (the slow tier)
pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("args, expect", [
    (["run", "--suite", "nosuch"], ["unknown suite 'nosuch'", "default", "ti-cc26x2", "cifra-aead"]),
    (["run", "--op", "aes-xyz-encrypt"], ["unknown operation 'aes-xyz-encrypt'", "aes-gcm-encrypt", "sha256"]),
    (["run", "--engine", "wolfssl"], ["unknown engine 'wolfssl'", "openssl-hw", "openssl-sw", "mbedtls", "libsodium"]),
    (["run", "--op", "sha256", "--param", "colour=red"], ["no selected operation has a parameter 'colour'", "bytes"]),
    (["run", "--op", "aes-gcm-encrypt", "--param", "key_bits=100"], ["key_bits", "128, 192, 256"]),
    (["run", "--op", "sha256", "--param", "bytes=abc"], ["expects an integer", "'abc'"]),
    (["run", "--op", "aes-cbc-encrypt", "--param", "bytes=65"], ["multiple of 16"]),
    (["run", "--op", "sha256", "--param", "bytes"], ["KEY=VALUE"]),
    (["run", "--repeat", "0", "--op", "sha256"], ["--repeat", ">= 1"]),
    (["show", "7", "--db", "/nonexistent-dir-xyz/db.sqlite"], []),
    (["list", "colours"], ["invalid choice", "suites", "engines", "ops"]),
])
def test_bad_input_is_one_line_exit_2(args, expect, db):
    if args[0] == "show":            # a reader never creates the store it is given (test_untrusted_store.py)
        args = ["show", "7", "--db", str(db)]
        expect = ["no such store"]
    proc = cli(*args, "--db", str(db)) if args[0] == "run" else cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    for word in expect:
        assert word in lines[0]
    assert not db.exists()


def test_malformed_suite_names_file_and_line(tmp_path, db):
    suite = tmp_path / "mine.toml"
    suite.write_text('[suite]\nrepeat = 5\n\n[[bench]]\nop = "sha256"\nbytes = [64]\n\n'
                     '[[bench]]\nop = "sha256"\nblocksize = 3\n')
    proc = cli("run", "--suite", str(suite), "--db", str(db))
    assert proc.returncode == 2
    assert f"{suite}:10:" in proc.stderr and "no parameter 'blocksize'" in proc.stderr and "bytes" in proc.stderr

    suite.write_text('[suite]\nrepeat = 5\n[[bench]]\nop = "sha265"\n')
    proc = cli("run", "--suite", str(suite), "--db", str(db))
    assert proc.returncode == 2
    assert f"{suite}:4:" in proc.stderr and "unknown operation 'sha265'" in proc.stderr

    suite.write_text('[suite]\nrepeat = 5\n[[bench]\nop = "sha256"\n')
    proc = cli("run", "--suite", str(suite), "--db", str(db))
    assert proc.returncode == 2
    assert str(suite) in proc.stderr and "line 3" in proc.stderr

    suite.write_text('[suite]\nrepeat = "many"\n[[bench]]\nop = "sha256"\n')
    proc = cli("run", "--suite", str(suite), "--db", str(db))
    assert proc.returncode == 2 and f"{suite}:2:" in proc.stderr and "repeat" in proc.stderr


def test_every_builtin_suite_loads_and_lists():
    proc = cli("list", "suites")
    assert proc.returncode == 0
    for name in ("default", "ti-cc26x2", "nxp-imxrt", "zhaw-iot", "pisa-a53", "cifra-aead"):
        assert name in proc.stdout
    proc = cli("list", "ops")
    assert proc.returncode == 0 and "ecjpake-exchange" in proc.stdout and "rsa_bits=2048" in proc.stdout
