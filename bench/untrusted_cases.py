"""The cases of bench/hostile_probe_untrusted.py, one function a class of input (issue 30's table).
Each function takes the World and returns its Cases; the files a case reads are written under
world.work/inputs, so the probe can check that their bytes did not change."""
from __future__ import annotations

import csv
import io
import json
import os
import stat
import struct
from pathlib import Path

from untrusted_core import Case, World, cli_argv, write_input

ROOT = Path(__file__).resolve().parents[1]
SECRET = "Pw-hunter2-" + os.urandom(4).hex()

# ------------------------------------------------------------------------------------------------
# recipes: cflags that name a program, a file or a plugin


def _monocypher_recipe(cflags: list[str], *, variant_cflags: list[str] | None = None,
                       defines: list[str] | None = None, extra: str = "") -> str:
    text = ["[library]", 'name = "mine"', 'version = "1.0"', 'crate = "monocypher-sys"', 'crate_version = "4.0.2"',
            'root = "Monocypher"', 'glue = "harness:glue/monocypher.c"', 'include_dirs = ["src", "src/optional"]',
            'sources = ["src/monocypher.c", "src/optional/monocypher-ed25519.c"]',
            f"defines = {json.dumps(defines or [])}", f"cflags = {json.dumps(cflags)}", "heap = false", extra]
    if variant_cflags is not None:
        text += ["[[variant]]", 'name = "v1"', "when = { bytes = 64 }", f"cflags = {json.dumps(variant_cflags)}"]
    text += ["[ops]", '"sha512" = "crypto_sha512"']
    return "\n".join(text) + "\n"


def recipes(world: World) -> list[Case]:
    bin_, secret, out = str(world.canary_bin), str(world.canary_file), world.work / "out"
    out.mkdir(exist_ok=True)
    world.watched.append(out)
    specs = write_input(world, "evil.specs", f"*cc1:\n+ %:getenv(HOME /x) -B{bin_}\n\n*link:\n+ -T{secret}\n")
    write_input(world, "response.rsp", f"-B{bin_} -include {secret}\n")
    flags = {
        "B-joined": [f"-B{bin_}"], "B-split": ["-B", bin_], "B-relative": ["-Bcanary-bin/"],
        "wrapper": ["-wrapper", f"{bin_}/wrapper,-x"], "specs": [f"-specs={specs}"], "specs-split": ["-specs", str(specs)],
        "fplugin": [f"-fplugin={bin_}/p.so"], "fplugin-arg": ["-fplugin-arg-p-x=1"],
        "response-file": [f"@{world.work}/inputs/response.rsp"], "MF": [f"-MF{out}/dep.d"], "MD": ["-MD"],
        "MMD": ["-MMD"], "M": ["-M"], "MT": [f"-MT{out}/t"], "MQ": ["-MQ", "x"],
        "o-joined": [f"-o{out}/x.o"], "o-split": ["-o", f"{out}/y.o"],
        "include-joined": [f"-include{secret}"], "include-split": ["-include", secret],
        "include-etc": ["-include/etc/hostname"], "imacros": [f"-imacros{secret}"],
        "Wl-script": [f"-Wl,-T,{secret}"], "Wl-plugin": [f"-Wl,-plugin,{bin_}/p.so"], "Xlinker": ["-Xlinker", f"-T{secret}"],
        "Wa-listing": [f"-Wa,-al={out}/l.lst"], "Xassembler": ["-Xassembler", f"@{secret}"],
        "Wp-include": [f"-Wp,-include,{secret}"], "Xpreprocessor": ["-Xpreprocessor", f"-include{secret}"],
        "I-canary": [f"-I{world.canary_file.parent}"], "I-etc": ["-I/etc"], "I-dotdot": ["-I../../../../.."],
        "isystem": [f"-isystem{world.canary_file.parent}"], "iquote": ["-iquote", "/etc"],
        "idirafter": [f"-idirafter{world.canary_file.parent}"], "sysroot": [f"--sysroot={world.canary_file.parent}"],
        "isysroot": [f"-isysroot{world.canary_file.parent}"], "iprefix": [f"-iprefix{bin_}"],
        "save-temps": ["-save-temps"], "save-temps-obj": ["-save-temps=obj"], "dumpdir": [f"-dumpdir{out}/"],
        "fprofile": [f"-fprofile-generate={out}"], "fdump": ["-fdump-tree-all"], "fstack-usage-file": ["-fstack-usage"],
        "aux-info": ["-aux-info", f"{out}/aux"], "fdebug-prefix-map": [f"-fdebug-prefix-map=/={secret}"],
        "print-prog-name": ["-print-prog-name=as"], "x-language": ["-x", "assembler"], "hash-three": ["-###"],
        "help": ["--help"], "two-in-one": [f"-Wall -B{bin_}"], "D-newline": ["-DX=1\n#include \"/etc/hostname\""],
        "D-not-identifier": ["-D1X=2"], "U-empty": ["-U"], "fcompare-debug": [f"-fcompare-debug={bin_}"],
        "frecord-gcc-switches": [f"-fuse-ld={bin_}/ld"], "wrapper-equals": [f"-wrapper={bin_}/wrapper"],
        "MJ": [f"-MJ{out}/j"], "fcallgraph": [f"-fcallgraph-info=su"],
        "ffile-prefix-map": [f"-ffile-prefix-map={secret}=/x"], "fopt-info-file": [f"-fopt-info-all={out}/opt"],
    }
    cases = []
    for name, cflags in flags.items():
        path = write_input(world, f"recipes/cflags-{name}.toml", _monocypher_recipe(cflags))
        cases.append(Case("recipe cflags", name, cli_argv("run", "--target", "qemu:mps2-an385", "--recipe", str(path),
                                                          "--op", "sha512"), fragment=f"{path}:", inputs=[path]))
    for name, vflags in {"variant-B": [f"-B{bin_}"], "variant-include": [f"-include{secret}"],
                         "variant-MF": [f"-MF{out}/v.d"], "variant-Wl": [f"-Wl,-T{secret}"]}.items():
        path = write_input(world, f"recipes/{name}.toml", _monocypher_recipe([], variant_cflags=vflags))
        cases.append(Case("recipe cflags", name, cli_argv("run", "--target", "qemu:mps2-an385", "--recipe", str(path),
                                                          "--op", "sha512"), fragment=f"{path}:", inputs=[path]))
    for name, defines in {"define-newline": ["X\n#include \"/etc/hostname\""], "define-space": ["X Y"],
                          "define-dash": ["-include /etc/hostname"]}.items():
        path = write_input(world, f"recipes/{name}.toml", _monocypher_recipe([], defines=defines))
        cases.append(Case("recipe cflags", name, cli_argv("run", "--target", "qemu:mps2-an385", "--recipe", str(path),
                                                          "--op", "sha512"), fragment=f"{path}:", inputs=[path]))
    # an alt source that is a symlink to a file outside the recipe's folder (the glob's hits)
    folder = world.work / "inputs" / "recipes" / "alt-link"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "sha512_alt.c"
    if not link.is_symlink():
        link.symlink_to(world.canary_file)
    path = folder / "recipe.toml"
    path.write_text(_monocypher_recipe([], extra='alt_sources = ["*.c"]\nalt_defines = ["X_ALT"]'))
    cases.append(Case("recipe cflags", "alt-source-symlink-out", cli_argv(
        "run", "--target", "qemu:mps2-an385", "--recipe", str(path), "--op", "sha512"), fragment=f"{path}:",
        inputs=[path]))
    return cases


# ------------------------------------------------------------------------------------------------
# vector files


def _vector(**over) -> dict:
    v = {"id": "v1", "op": "sha256", "params": {"bytes": 3}, "in": {"msg": "616263"},
         "out": {"digest": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}, "source": "FIPS 180-2"}
    v.update(over)
    return v


def vectors(world: World) -> list[Case]:
    sha = ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2"]
    verify = ["run", "--op", "ecdsa-verify", "--engine", "openssl-sw", "--repeat", "2"]
    bodies: dict[str, tuple[object, list[str]]] = {
        "out-empty": ({"family": "x", "vectors": [_vector(out={})]}, sha),
        "out-ok-on-hash": ({"family": "x", "vectors": [_vector(out={"ok": "00"})]}, sha),
        "out-unknown-name": ({"family": "x", "vectors": [_vector(out={"tag": "00"})]}, sha),
        "out-not-hex": ({"family": "x", "vectors": [_vector(out={"digest": "zz" * 32})]}, sha),
        "out-odd-hex": ({"family": "x", "vectors": [_vector(out={"digest": "abc"})]}, sha),
        "out-number": ({"family": "x", "vectors": [_vector(out={"digest": 5})]}, sha),
        "out-list": ({"family": "x", "vectors": [_vector(out=["digest"])]}, sha),
        "in-not-hex": ({"family": "x", "vectors": [_vector(**{"in": {"msg": "6162zz"}})]}, sha),
        "in-unknown-name": ({"family": "x", "vectors": [_vector(**{"in": {"msg": "616263", "key": "00"}})]}, sha),
        "in-string": ({"family": "x", "vectors": [_vector(**{"in": "616263"})]}, sha),
        "bytes-negative": ({"family": "x", "vectors": [_vector(params={"bytes": -1})]}, sha),
        "bytes-huge": ({"family": "x", "vectors": [_vector(params={"bytes": 10 ** 15})]}, sha),
        "bytes-string": ({"family": "x", "vectors": [_vector(params={"bytes": "3"})]}, sha),
        "bytes-float": ({"family": "x", "vectors": [_vector(params={"bytes": 3.5})]}, sha),
        "bytes-bool": ({"family": "x", "vectors": [_vector(params={"bytes": True})]}, sha),
        "bytes-mismatch": ({"family": "x", "vectors": [_vector(params={"bytes": 4})]}, sha),
        "param-unknown": ({"family": "x", "vectors": [_vector(params={"bytes": 3, "evil": 1})]}, sha),
        "params-list": ({"family": "x", "vectors": [_vector(params=[3])]}, sha),
        "op-unknown": ({"family": "x", "vectors": [_vector(op="rm -rf")]}, sha),
        "id-missing": ({"family": "x", "vectors": [{k: v for k, v in _vector().items() if k != "id"}]}, sha),
        "id-escape": ({"family": "x", "vectors": [_vector(id="a\x1b]0;pwned\x07")]}, sha),
        "id-duplicate": ({"family": "x", "vectors": [_vector(), _vector()]}, sha),
        "vectors-not-list": ({"family": "x", "vectors": {"a": 1}}, sha),
        "top-list": ([_vector()], sha),
        "ok-two": ({"family": "x", "vectors": [_vector(op="ecdsa-verify", params={"curve": "p256"},
                                                       **{"in": {"hash": "00" * 32, "pub": "04" + "00" * 64,
                                                                 "sig": "00" * 64}}, out={"ok": "02"})]}, verify),
        "curve-incbin": ({"family": "x", "vectors": [_vector(op="ecdsa-verify", params={
            "curve": f'p256"}}; __asm__(".incbin \\"{world.canary_file}\\""); //'},
            **{"in": {"hash": "00" * 32, "pub": "04" + "00" * 64, "sig": "00" * 64}}, out={"ok": "00"})]}, verify),
        "curve-unknown": ({"family": "x", "vectors": [_vector(op="ecdsa-verify", params={"curve": "p999"},
                                                              **{"in": {"hash": "00"}}, out={"ok": "00"})]}, verify),
        "key-bits-7": ({"family": "x", "vectors": [_vector(op="aes-ecb-encrypt", params={"bytes": 16, "key_bits": 7},
                                                           **{"in": {"key": "00", "pt": "00" * 16}},
                                                           out={"ct": "00" * 16})]}, sha),
        "hex-megabytes": ({"family": "x", "vectors": [_vector(**{"in": {"msg": "00" * (4 << 20)}})]}, sha),
    }
    cases = []
    for name, (body, argv) in bodies.items():
        folder = world.work / "inputs" / "vectors" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "v.json"
        path.write_text(json.dumps(body))
        cases.append(Case("vectors", name, cli_argv(*argv, "--vectors", str(folder), "--db", str(world.db)),
                          fragment=str(path), inputs=[path], rc=(0,) if name == "id-missing" else (2,)))
    raw = {"not-json": b"{\"family\": ", "latin1": "{\"family\": \"\xe9\"}".encode("latin-1"),
           "nan": b'{"family": "x", "vectors": [{"id": "a", "op": "sha256", "params": {"bytes": NaN}}]}',
           "deep": b"[" * 100000 + b"]" * 100000,
           "100k-vectors-last-bad": ("{\"vectors\": [\n" + ",\n".join(
               [json.dumps(_vector(id=f"v{i}")) for i in range(100000)] + [json.dumps(_vector(id="last", out={}))])
               + "]}").encode(), "binary": bytes(range(256)) * 4, "empty": b""}
    for name, data in raw.items():
        folder = world.work / "inputs" / "vectors" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "v.json"
        path.write_bytes(data)
        cases.append(Case("vectors", name, cli_argv(*sha, "--vectors", str(folder), "--db", str(world.db)),
                          fragment=str(path), inputs=[path]))
    # the generated firmware plan: a curve string that would compile a host file into the image
    folder = world.work / "inputs" / "vectors" / "curve-incbin-firmware"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "v.json"
    path.write_text(json.dumps(bodies["curve-incbin"][0]))
    cases.append(Case("vectors", "curve-incbin-firmware", cli_argv(
        "run", "--target", "qemu:mps2-an385", "--op", "ecdsa-verify", "--vectors", str(folder), "--db", str(world.db)),
        fragment=str(path), inputs=[path]))
    return cases


# ------------------------------------------------------------------------------------------------
# CSV exports and terminals

FORMULAS = {"equals": "=1+1", "plus": "+1+1", "minus": "-1+1", "at": "@SUM(1,1)", "tab": "\t=1+1",
            "cr": "\r=1+1", "hyperlink": '=HYPERLINK("http://x","y")', "dde": "=cmd|' /C calc'!A0",
            "minus-text": "-cmd", "plus-space": "+ 1"}
_DANGER = ("=", "+", "-", "@", "\t", "\r")


def _is_number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def csv_dangerous(text: str) -> str:
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            if cell.startswith(_DANGER) and not _is_number(cell):
                return f"a CSV cell begins with {cell[:1]!r}: {cell[:40]!r}"
    return ""


def exports(world: World) -> list[Case]:
    cases = []
    for name, label in FORMULAS.items():
        run = cli_argv("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", f"--label={label}",
                       "--db", str(world.db))
        cases.append(Case("csv export", f"run-{name}", run, rc=(0,)))
        cases.append(Case("csv export", f"export-{name}", cli_argv(
            "export", "latest", "--format", "csv", "--out", "out.csv", "--db", str(world.db)), rc=(0,),
            allowed_outputs=("out.csv",), check=lambda p, s: csv_dangerous((s / "out.csv").read_text())))
        cases.append(Case("csv export", f"show-{name}", cli_argv("show", "latest", "--format", "csv",
                                                                 "--db", str(world.db)), rc=(0,),
                          check=lambda p, s: csv_dangerous(p.stdout)))
    cases.append(Case("csv export", "report-tables", cli_argv("report", "1", "2", "--out", "rep", "--quiet",
                                                             "--db", str(world.db)), rc=(0,), allowed_outputs=("rep",),
                      check=lambda p, s: next((why for f in (s / "rep").rglob("*.csv")
                                               if (why := csv_dangerous(f.read_text()))), "")))
    return cases


ESCAPES = {"osc-title": "\x1b]0;pwned\x07", "csi-clear": "\x1b[2J\x1b[H", "c1-csi": "\x9b2J", "bell": "x\x07y",
           "backspace": "ok\x08\x08\x08no"}


def terminals(world: World) -> list[Case]:
    cases = []
    for name, label in ESCAPES.items():
        cases.append(Case("terminal", f"run-{name}", cli_argv("run", "--op", "sha256", "--engine", "openssl-sw",
                                                              "--repeat", "2", f"--label={label}",
                                                              "--db", str(world.db)), rc=(0,)))
        for cmd in (["show", "latest"], ["list", "runs"], ["diff", "1", "latest"], ["show", "latest", "--format", "md"]):
            cases.append(Case("terminal", f"{cmd[0]}-{cmd[-1]}-{name}", cli_argv(*cmd, "--db", str(world.db)),
                              rc=(0, 1), check=lambda p, s, label=label: "a control character reached the terminal"
                              if any(c in p.stdout + p.stderr for c in "\x07\x08\x9b") else ""))
    # a store whose file name holds escapes: "stored as run N in …" and db migrate's line name it
    odd = "r\x1b]0;x\x07.sqlite"
    cases.append(Case("terminal", "store-name-run", cli_argv("run", "--op", "sha256", "--engine", "openssl-sw",
                                                             "--repeat", "2", "--db", odd), rc=(0,),
                      allowed_outputs=(odd,)))
    # a power profile's name, source and peripheral names reach `energy model`'s lines
    profile = write_input(world, "evil-profile.toml", 'name = "evil\\u001b]0;x\\u0007"\nsource = "src\\u001b[2J"\n'
                          'supply_v = 3.0\nactive_current_a = 0.003\n[peripherals]\n"aes\\u001b[31m" = 0.001\n')
    raw_controls = (lambda p, s: "a control character reached the terminal"
                    if any(c in p.stdout + p.stderr for c in "\x07\x08\x9b") else "")
    cases.append(Case("terminal", "energy-model-profile", cli_argv("energy", "model", "--profile", str(profile),
                                                                   "--time", "1e-3", "--peripheral", "aes\x1b[31m"),
                      rc=(0,), inputs=[profile], check=raw_controls))
    cases.append(Case("terminal", "energy-model-run", cli_argv("energy", "model", "--profile", str(profile), "--run",
                                                               "1", "--db", str(world.db)), rc=(0,), inputs=[profile],
                      check=raw_controls))
    return cases


# ------------------------------------------------------------------------------------------------
# store locations: secrets, schemes, readers that must not create


URLS = {
    "userinfo": f"postgresql://bench:{SECRET}@127.0.0.1:1/cb",
    "query-password": f"postgresql://bench@127.0.0.1:1/cb?password={SECRET}",
    "query-passfile": f"postgresql://bench@127.0.0.1:1/cb?passfile=/tmp/{SECRET}",
    "slash-in-password": f"postgresql://bench:{SECRET[:4]}/{SECRET[4:]}@127.0.0.1:1/cb",
    "at-in-password": f"postgresql://bench:{SECRET[:4]}@{SECRET[4:]}@127.0.0.1:1/cb",
    "postgres-scheme": f"postgres://bench:{SECRET}@127.0.0.1:1/cb",
    "percent-encoded": f"postgresql://bench:{SECRET}%2F%40x@127.0.0.1:1/cb",
    "sslpassword": f"postgresql://bench@127.0.0.1:1/cb?sslpassword={SECRET}&sslmode=disable",
    "both": f"postgresql://bench:{SECRET}@127.0.0.1:1/cb?password={SECRET}x",
    "question-in-password": f"postgresql://bench:{SECRET[:4]}?{SECRET[4:]}@127.0.0.1:1/cb",
    "at-in-query-password": f"postgresql://bench@127.0.0.1:1/cb?password={SECRET[:4]}@{SECRET[4:]}",
    "keyword-conninfo": f"host=127.0.0.1 port=1 password={SECRET}",
    "upper-scheme": f"POSTGRESQL://bench:{SECRET}@127.0.0.1:1/cb",
    "mysql-with-password": f"mysql://bench:{SECRET}@127.0.0.1/cb",
}


def _no_secret(proc, scratch) -> str:
    return "the password reached the output" if SECRET[4:] in proc.stdout + proc.stderr else ""


def secrets(world: World) -> list[Case]:
    commands = {"list-runs": ["list", "runs"], "show": ["show", "latest"],
                "run": ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2"],
                "export": ["export", "1", "--format", "csv", "--out", "o.csv"]}
    cases = []
    for uname, url in URLS.items():
        for cname, cmd in commands.items():
            cases.append(Case("store secrets", f"{cname}-{uname}", cli_argv(*cmd, "--db", url), rc=(2,),
                              check=_no_secret))
        cases.append(Case("store secrets", f"env-{uname}", cli_argv("list", "runs"), rc=(2,), env={"CRYPTOBENCH_DB": url},
                          check=_no_secret))
    # a harness that writes down the environment it was given, then is the real one
    dump = world.work / "env-dump.txt"
    harness = write_input(world, "dumping-harness.sh", f"#!/bin/sh\nenv > '{dump}'\nexec '{ROOT}/build/host/cbh'\n")
    harness.chmod(0o755)

    def no_secret_in_child(proc, scratch) -> str:
        seen = dump.read_text(errors="replace") if dump.exists() else ""
        dump.unlink(missing_ok=True)
        if not seen:
            return "the harness did not run"
        leaked = [name for name in ("CRYPTOBENCH_DB", "PGPASSWORD", "PGPASSFILE", "CRYPTOBENCH_PKCS11_PIN")
                  if f"{name}=" in seen] + (["the password"] if SECRET[4:] in seen else [])
        return f"the harness inherited {', '.join(leaked)}" if leaked else ""
    cases.append(Case("store secrets", "harness-environment", cli_argv(
        "run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2"), rc=(0,),
        env={"CRYPTOBENCH_HARNESS": str(harness), "PGPASSWORD": SECRET, "CRYPTOBENCH_PKCS11_PIN": SECRET,
             "PGPASSFILE": f"/tmp/{SECRET}"}, check=no_secret_in_child))
    return cases


def locations(world: World) -> list[Case]:
    readers = {"list-runs": ["list", "runs"], "show": ["show", "latest"], "export": ["export", "1", "--format", "csv",
                                                                                   "--out", "o.csv"],
               "report": ["report", "1", "--out", "rep"], "diff": ["diff", "1", "2"],
               "compare": ["compare", "1", "--reference", "ti-cc26x2"]}
    places = {"mysql": "mysql://u@h/db", "sqlite-url": "sqlite:///x.db", "one-slash": "postgresql:/u@h/db",
              "http": "http://h/x.db", "missing-relative": "missing/a/b.sqlite", "postgres-colon": "postgres:x",
              "file-url": "file:///etc/passwd"}
    cases = []
    for pname, where in places.items():
        for rname, cmd in readers.items():
            cases.append(Case("store locations", f"{rname}-{pname}", cli_argv(*cmd, "--db", where), rc=(2,)))
    for rname, cmd in readers.items():
        missing = world.work / "out" / f"nope-{rname}" / "deeper" / "r.sqlite"
        cases.append(Case("store locations", f"{rname}-missing-absolute", cli_argv(*cmd, "--db", str(missing)), rc=(2,),
                          check=lambda p, s, m=missing: "the missing store was created" if m.parent.parent.exists()
                          else ""))
    folder = world.work / "inputs" / "a-folder"
    folder.mkdir(parents=True, exist_ok=True)
    fifo = world.work / "inputs" / "fifo.sqlite"
    if not fifo.exists():
        os.mkfifo(fifo)
    empty = write_input(world, "empty.sqlite", b"")
    for rname, cmd in readers.items():
        cases.append(Case("store locations", f"{rname}-empty-file", cli_argv(*cmd, "--db", str(empty)), rc=(2,),
                          inputs=[empty]))
    for name, where in {"folder": str(folder), "fifo": str(fifo), "dev-zero": "/dev/zero"}.items():
        for rname in ("list-runs", "show"):
            cases.append(Case("store locations", f"{rname}-{name}", cli_argv(*readers[rname], "--db", where), rc=(2,)))
        cases.append(Case("store locations", f"run-{name}", cli_argv(
            "run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", "--db", where), rc=(2,)))
    return cases


# ------------------------------------------------------------------------------------------------
# outputs, environment numbers, device options, lab files


def outputs(world: World) -> list[Case]:
    old = world.work / "inputs" / "old-report"
    if not old.exists():
        import subprocess
        subprocess.run(cli_argv("report", "1", "--out", str(old), "--quiet", "--db", str(world.db)), check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    files = [p for p in old.rglob("*") if p.is_file()]
    return [Case("outputs", "report-over-a-report", cli_argv("report", "2", "--out", str(old), "--quiet",
                                                             "--db", str(world.db)), inputs=files, fragment=str(old)),
            Case("outputs", "export-over-a-file", cli_argv("export", "1", "--format", "csv", "--out", str(files[0]),
                                                           "--db", str(world.db)), inputs=files),
            Case("outputs", "json-over-the-store", cli_argv("run", "--op", "sha256", "--engine", "openssl-sw",
                                                            "--repeat", "2", "--db", str(world.db), "--json",
                                                            str(world.db)))]


ENV_NUMBERS = {"CRYPTOBENCH_CHECKPOINT_S": ["abc", "nan", "inf", "-1", "0", "1e999", ""],
               "CRYPTOBENCH_REPLY_TIMEOUT_S": ["abc", "nan", "-5", "0"],
               "CRYPTOBENCH_HANDSHAKE_TIMEOUT_S": ["abc", "-1"],
               "CRYPTOBENCH_STORE_RETRY_S": ["abc", "nan", "-1", "1e9"]}


def environment(world: World) -> list[Case]:
    cases = []
    run = ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", "--db", str(world.db)]
    for var, values in ENV_NUMBERS.items():
        for value in values:        # an empty variable is an unset one (the shell's convention): the default
            cases.append(Case("environment", f"run-{var}={value!r}", cli_argv(*run), env={var: value}, fragment=var,
                              rc=(0,) if value == "" else (2,)))
    cases.append(Case("environment", "list-runs-with-bad-checkpoint", cli_argv("list", "runs", "--db", str(world.db)),
                      rc=(0,), env={"CRYPTOBENCH_CHECKPOINT_S": "abc"}))
    for name, device in {"ws-2^32": "stm32f407:ws=4294967296", "ws-negative": "stm32f407:ws=-1",
                         "ws-huge": "stm32f407:ws=1000", "ws-text": "stm32f407:ws=five",
                         "clock-zero": "stm32f407:clock=0", "clock-negative": "stm32f407:clock=-8MHz",
                         "clock-huge": "stm32f407:clock=1e30", "clock-nan": "stm32f407:clock=nan",
                         "option-unknown": "stm32f407:evil=1", "device-escape": "\x1b]0;x\x07",
                         "ws-float": "stm32f407:ws=1.5"}.items():
        cases.append(Case("environment", f"device-{name}", cli_argv(
            "run", "--target", "sim:cortex-m4", "--device", device, "--op", "sha256", "--db", str(world.db))))
    return cases


LG_ENVS = {
    "alias-bomb": "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(9))
        + "targets: *j\n",
    "targets-number": "targets: 5\n",
    "targets-list": "targets: [1, 2]\n",
    "unknown-driver": "targets:\n  main:\n    resources:\n      RemotePlace:\n        name: p\n"
                      "    drivers:\n      EvilDriver: {}\n",
    "not-yaml": "targets: [\n",
    "binary": "\x00\x01\x02targets",
    "empty": "",
    "python-tag": "targets: !!python/object/apply:os.system ['touch /tmp/pwned']\n",
    "deep": "targets: " + "[" * 5000 + "]" * 5000 + "\n",
    "top-scalar": "5\n",
}


def lab_files(world: World) -> list[Case]:
    cases = []
    for name, text in LG_ENVS.items():
        path = write_input(world, f"lg/{name}.yaml", text)
        cases.append(Case("lab files", name, cli_argv("run", "--target", "labgrid:p", "--op", "sha256",
                                                      "--db", str(world.db)), env={"LG_ENV": str(path)},
                          fragment=str(path), inputs=[path]))
    return cases


# ------------------------------------------------------------------------------------------------
# firmware images for `sim run`


def _elf32(entries: list[tuple[int, int, bytes]], *, machine: int = 40, phnum: int | None = None,
           endian: str = "<", entry: int = 0x08000009) -> bytes:
    """A minimal ELF32 with one PT_LOAD per (vaddr, memsz, data)."""
    header_size, ph_size = 52, 32
    n = len(entries) if phnum is None else phnum
    offset = header_size + ph_size * len(entries)
    phdrs, blobs = b"", b""
    for vaddr, memsz, data in entries:
        phdrs += struct.pack(endian + "IIIIIIII", 1, offset + len(blobs), vaddr, vaddr, len(data), memsz, 7, 4)
        blobs += data
    ident = b"\x7fELF" + bytes([1, 1 if endian == "<" else 2, 1]) + b"\0" * 9
    head = ident + struct.pack(endian + "HHIIIIIHHHHHH", 2, machine, 1, entry, header_size, 0, 0x5000200,
                               header_size, ph_size, n, 40, 0, 0)
    return head + phdrs + blobs


FLASH = 0x08000000                      # the STM32F4's flash, where its boot address maps


def _vector_table(code_at: int = FLASH + 8) -> bytes:
    return struct.pack("<II", 0x20001000, code_at | 1)


def _thumb(*halfwords: int) -> bytes:
    return b"".join(struct.pack("<H", h) for h in halfwords)


# SYS_WRITEC forever: movs r0,#3; mov r1,pc; bkpt 0xab; b back to movs
WRITEC_LOOP = _thumb(0x2003, 0x4679, 0xBEAB, 0xE7FB)
# read 0xFFFFFFF0: movs r0,#0; subs r0,#16 (r0 = 0xfffffff0); ldr r1,[r0]; b .
WILD_READ = _thumb(0x2000, 0x3810, 0x6801, 0xE7FE)
# push forever: push {r0-r7}; b back
RUNAWAY_STACK = _thumb(0xB4FF, 0xE7FD)
# one SYS_WRITE claiming 4 GB: r1 -> a 3-word block {fd=1, buf=0, len=0xffffffff} placed after the code
WRITE_4GB = _thumb(0x2005, 0x4901, 0xBEAB, 0xE7FE) + struct.pack("<IIII", FLASH + 20, 1, FLASH, 0xFFFFFFFF)


def images(world: World) -> list[Case]:
    folder = world.work / "inputs" / "images"
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, bytes] = {
        "empty": b"", "three-bytes": b"\x7fEL", "magic-only": b"\x7fELF", "garbage": os.urandom(4096),
        "header-truncated": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)])[:40],
        "phdr-truncated": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)])[:70],
        "phnum-65535": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)], phnum=65535),
        "x86": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)], machine=3),
        "big-endian": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)], endian=">"),
        "segment-outside-map": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP), (0xF0000000, 16, b"\0" * 16)]),
        "memsz-4gb": _elf32([(FLASH, 0xFFFFFFF0, _vector_table() + WRITEC_LOOP)]),
        "segment-wraps": _elf32([(0xFFFFFFF8, 64, b"\0" * 64)]),
        "20000-segments": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)]
                                 + [(0x20000000 + 4 * i, 4, b"\0\0\0\0") for i in range(20000)]),
        "offset-past-end": _elf32([(FLASH, 16, _vector_table() + WRITEC_LOOP)])[:-8],
    }
    cases = []
    timeouts = ["--timeout", "5"]
    for name, data in made.items():
        path = folder / f"{name}.elf"
        path.write_bytes(data)
        cases.append(Case("sim images", name, cli_argv("sim", "run", str(path), "--device", "stm32f407", *timeouts),
                          fragment=str(path), inputs=[path]))
    sparse = folder / "sparse-2gb.elf"
    with open(sparse, "wb") as f:
        f.write(_elf32([(FLASH, 0x7FFF0000, _vector_table() + WRITEC_LOOP)])[:84])
        f.seek(12 * 1024)
        f.write(b"\0")
    cases.append(Case("sim images", "sparse-claims-2gb", cli_argv("sim", "run", str(sparse), "--device", "stm32f407",
                                                                  *timeouts), fragment=str(sparse), inputs=[sparse]))
    fifo = folder / "fifo.elf"
    if not fifo.exists():
        os.mkfifo(fifo)
    for name, where in {"fifo": fifo, "dev-zero": Path("/dev/zero"), "folder": folder,
                        "missing": folder / "nope.elf", "host-binary": Path("/bin/true")}.items():
        cases.append(Case("sim images", name, cli_argv("sim", "run", str(where), "--device", "stm32f407", *timeouts),
                          fragment=str(where)))
    # images that load and run: each must end in a clear result within the limits
    runs = {"writec-flood": (WRITEC_LOOP, (0, 1)), "wild-read": (WILD_READ, (1, 2)),
            "runaway-stack": (RUNAWAY_STACK, (1, 2)), "write-4gb": (WRITE_4GB, (0, 1, 2))}
    for name, (code, rcs) in runs.items():
        path = folder / f"{name}.elf"
        path.write_bytes(_elf32([(FLASH, 8 + len(code), _vector_table() + code)], entry=FLASH + 9))
        cases.append(Case("sim images", f"run-{name}", cli_argv("sim", "run", str(path), "--device", "stm32f407",
                                                               "--timeout", "2"), rc=rcs, inputs=[path],
                          one_line=False))
    return cases


def hostile_images(world: World) -> list[Case]:
    """The sandbox's own corpus (cryptobench.devtools.hostile_images), each with its expected answer."""
    from cryptobench.devtools import hostile_images as hi
    folder = world.work / "inputs" / "hostile-images"
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for name, (write, extra, code, fragment) in hi.CASES.items():
        path = folder / f"{name}.elf"
        if not path.exists():
            write(path)
        inputs = [path] if path.is_file() and path.stat().st_size < 1 << 26 else []
        check = None if code == 2 else (lambda p, s, f=fragment: "" if f in p.stdout else f"no {f!r} in the result")
        cases.append(Case("sim images", f"corpus-{name}", cli_argv("sim", "run", str(path), "--device", "ideal-m3",
                                                                   *extra), rc=(code,),
                          fragment=fragment if code == 2 else "", inputs=inputs, one_line=code == 2, check=check))
    return cases


CLASSES = {"recipes": recipes, "vectors": vectors, "exports": exports, "terminals": terminals, "secrets": secrets,
           "locations": locations, "outputs": outputs, "environment": environment, "lab": lab_files,
           "images": images, "hostile-images": hostile_images}
