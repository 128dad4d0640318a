#!/usr/bin/env python3
"""The hostile-input probe of issue 16, re-measured over everything a user brings: the TOML corpora
(suites, recipes, references, power profiles in tests/hostile/), the command-line cases that used to
lose data or hang, then the trace probe (bench/hostile_probe_traces.py) and the untrusted-input probe
(bench/hostile_probe_untrusted.py: recipes, vector files, firmware images, store locations, labels,
exports, lab files and environment numbers, issue 30).

Each TOML case goes through the command that reads it, in a fresh process: `run --suite FILE`,
`run --target qemu:… --recipe FILE`, `compare … --reference FILE`, `energy model --profile FILE`.
It is a *clear error* when the command exits 2 with one line on stderr that names the file (and the
line the case expects); a *traceback* when Python's traceback shows or another exit code comes; a
*silent wrong result* on exit 0; an *input changed* when the file's bytes differ afterwards.

The data-loss cases write over the database or an input (`export --out DB`, `run --json DB`,
`energy import T --json T`, `show --db other_app.sqlite`); each must be refused and leave the file as
it was. A hang would show as a case that runs into the probe's 120 s limit.

Usage: bench/hostile_probe.py [--random 300]    (exit 1 on any traceback, silent result, loss or hang)
"""
import argparse
import hashlib
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "hostile"
LIMIT_S = 120


def cli(*args, env=None):
    try:
        return subprocess.run([sys.executable, "-m", "cryptobench.cli", *args], capture_output=True, text=True,
                              timeout=LIMIT_S, cwd=ROOT, env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return None


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def expected(path: Path) -> tuple[str, str]:
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
    m = re.match(r"#\s*expect:\s*(\d*):\s*(.*)$", first)
    return (m.group(1), m.group(2).strip()) if m else ("", "")


def verdict(proc, path: Path, before: str, line: str = "") -> str:
    if proc is None:
        return "hang"
    if digest(path) != before:
        return "input changed"
    if "Traceback" in proc.stderr or proc.returncode not in (0, 2):
        return "traceback"
    if proc.returncode == 0:
        return "silent wrong result"
    lines = proc.stderr.strip().splitlines()
    named = str(path) + (f":{line}:" if line else "")
    return "clear error" if len(lines) == 1 and named in lines[0] else "unclear error"


def toml_cases(db: Path):
    commands = {
        "suites": lambda p: ["run", "--suite", str(p), "--db", str(db)],
        "recipes": lambda p: ["run", "--target", "qemu:mps2-an385", "--recipe", str(p), "--op", "sha256",
                              "--db", str(db)],
        "references": lambda p: ["compare", "1", "--reference", str(p), "--db", str(db)],
        "profiles": lambda p: ["energy", "model", "--profile", str(p), "--time", "1e-3"],
    }
    for folder, command in commands.items():
        for path in sorted((CORPUS / folder).iterdir()):
            yield folder, path, command(path)


def data_loss_cases(work: Path):
    """(name, the file that must not change, command)."""
    db = work / "r.sqlite"
    trace = work / "t.csv"
    other = work / "other_app.sqlite"
    con = sqlite3.connect(str(other))
    con.execute("CREATE TABLE users (id INTEGER)")
    con.commit()
    con.close()
    sys.path.insert(0, str(ROOT / "src"))
    from cryptobench.targets.trace import synth
    synth.write_generic_csv(trace, synth.PulsePlan(n=3, width_s=4e-5, gap_s=4e-5, dt=1e-5))
    return [
        ("export --out the database", db, ["export", "1", "--format", "csv", "--out", str(db), "--db", str(db)]),
        ("run --json the database", db, ["run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2",
                                         "--db", str(db), "--json", str(db)]),
        ("energy import --json the trace", trace, ["energy", "import", str(trace), "--format", "generic-csv", "--op",
                                                   "sha256", "--engine", "dev", "--db", str(db), "--json", str(trace)]),
        ("show on another program's database", other, ["show", "latest", "--db", str(other)]),
        ("export over an existing file without --force", trace, ["export", "1", "--format", "csv", "--out",
                                                                str(trace), "--db", str(db)]),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=300, help="random trace spoilings (bench/hostile_probe_traces.py)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cryptobench-probe-"))
    db = work / "r.sqlite"
    first = cli("run", "--op", "sha256", "--engine", "openssl-sw", "--repeat", "2", "--db", str(db))
    assert first is not None and first.returncode == 0, first.stderr if first else "hang"
    counts, bad = Counter(), []
    for folder, path, command in toml_cases(db):
        line, _ = expected(path)
        before = digest(path)
        v = verdict(cli(*command), path, before, line)
        counts[v] += 1
        if v != "clear error":
            bad.append(f"  {folder}/{path.name}: {v}")
    print(f"TOML inputs (suites, recipes, references, power profiles) tried {sum(counts.values())}, clear errors "
          f"{counts['clear error']}, unclear errors {counts['unclear error']}, tracebacks {counts['traceback']}, "
          f"silent wrong results {counts['silent wrong result']}, inputs changed {counts['input changed']}, "
          f"hangs {counts['hang']}")
    losses = Counter()
    for name, protected, command in data_loss_cases(work):
        before = digest(protected)
        proc = cli(*command)
        v = "hang" if proc is None else ("data lost" if digest(protected) != before else
                                         "refused" if proc.returncode == 2 and "Traceback" not in proc.stderr
                                         else "traceback" if "Traceback" in proc.stderr else "not refused")
        losses[v] += 1
        if v != "refused":
            bad.append(f"  {name}: {v}")
    print(f"data-loss cases tried {sum(losses.values())}, refused with one line {losses['refused']}, "
          f"data lost {losses['data lost']}, hangs {losses['hang']}")
    for line in bad:
        print(line)
    traces = subprocess.run([sys.executable, str(ROOT / "bench" / "hostile_probe_traces.py"), "--random",
                             str(args.random)], cwd=ROOT)
    untrusted = subprocess.run([sys.executable, str(ROOT / "bench" / "hostile_probe_untrusted.py")], cwd=ROOT)
    return 1 if bad or traces.returncode or untrusted.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
