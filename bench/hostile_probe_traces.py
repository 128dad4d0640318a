#!/usr/bin/env python3
"""Hostile power-analyzer traces against `cryptobench energy import`: how many were tried, how many
gave a clear error, a traceback, a silent (wrong) result, or changed the input file.

1. The corpus, tests/hostile/traces/ (its expectations: tests/test_hostile.py, TRACE_TABLE and the
   n6705-csv files' first lines). Every case is a spoilt trace, so the only right answer is an
   error: each is imported twice — with the readers and segmenter (the one exception allowed is
   TraceError naming the file) and with the command in a fresh process — and counts as a *clear
   error* when the command exits 2 with one line on stderr naming the file, the line or byte where
   there is one, and what was expected, the same message as the library's. Exit code 0 is a
   *silent wrong result*; a Python traceback or any other exit code a *traceback*; a file whose
   bytes or modification time differ afterwards an *input changed*.
2. Random spoilings of valid synthetic traces of every format (truncated, bytes overwritten,
   numeric specials in cells or float32 frames, rows repeated or shuffled), through the command
   in-process: each is a clear error, or accepted with finite, positive window energies (the
   spoiling left a valid trace, e.g. a row cut at a line end), never a traceback or a changed input.

Usage: bench/hostile_probe_traces.py [--random 300] [--seed 1] [--jobs 2]
Exit status 1 when any traceback, silent wrong result, unclear error or changed input was seen.
"""
import argparse
import concurrent.futures
import contextlib
import hashlib
import io
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

import test_hostile as corpus  # noqa: E402   the cases and their expectations
from cryptobench.cli.main import main as cli_main  # noqa: E402


def fingerprint(files) -> list:
    return [(hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) for f in files]


def library_message(case: dict) -> str | None:
    """The TraceError message of the readers + segmenter, or None when they accept the trace."""
    from cryptobench.targets.trace.formats import open_trace
    from cryptobench.targets.trace.importer import import_trace
    from cryptobench.targets.trace.trace import TraceError
    argv = case["argv"]
    options = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--option")
    kw = {"nominal_voltage": 3.3} if "--voltage" in argv else {"threshold": 1.65} if "--threshold" in argv else {}
    try:
        info, chunks = open_trace(argv[2], argv[4], **options)
        import_trace(info, chunks, **kw)
    except TraceError as exc:
        return str(exc)
    except Exception as exc:            # noqa: BLE001 - an exception other than TraceError is what is counted
        return f"Traceback: {type(exc).__name__}: {exc}"
    return None


def probe_case(name: str) -> tuple[str, str, str]:
    """(case, outcome, detail) for one corpus case."""
    case = corpus.trace_case(name)
    before = fingerprint(case["files"])
    message = library_message(case)
    run = subprocess.run([sys.executable, "-m", "cryptobench.cli", *case["argv"]], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    after = fingerprint(case["files"])
    err = run.stderr
    place = case["named"] + (f":{case['where']}:" if case["where"] else ":")
    if after != before:
        return name, "changed", err.strip()
    if "Traceback" in err or run.returncode not in (0, 2) or (message or "").startswith("Traceback"):
        return name, "traceback", (err.strip() or message)[-300:]
    if run.returncode == 0:
        return name, "silent", run.stdout.strip()[-200:]
    clear = (err.count("\n") == 1 and err == f"cryptobench: error: {message}\n" and place in err
             and case["fragment"] in err)
    return name, "clear" if clear else "unclear", err.strip()


# ------------------------------------------------------------------------------ random spoilings

def spoil(rng: random.Random, fmt: str, data: bytes) -> bytes:
    how = rng.choice(["truncate", "bytes", "specials", "rows"])
    if how == "truncate":
        return data[:rng.randrange(len(data))]
    if how == "bytes":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if how == "specials" and fmt in ("n6705-dlog", "jls"):
        out = bytearray(data)
        start = data.index(b"</dlog>") + 16 if fmt == "n6705-dlog" else 0
        at = start + 4 * rng.randrange((len(data) - start) // 4)
        out[at:at + 4] = struct.pack(">f" if fmt == "n6705-dlog" else "<f", rng.choice(corpus.FLOAT_SPECIALS))
        return bytes(out)
    lines = data.split(b"\n")
    if how == "specials":
        i = rng.randrange(len(lines))
        cells = lines[i].split(b",")
        cells[rng.randrange(len(cells))] = rng.choice(corpus.SPECIALS).encode()
        lines[i] = b",".join(cells)
    elif rng.random() < 0.5:
        i = rng.randrange(1, len(lines))
        lines.insert(i, lines[i])
    else:
        body = lines[1:]
        rng.shuffle(body)
        lines = lines[:1] + body
    return b"\n".join(lines)


def probe_random(rng: random.Random, folder: Path) -> str:
    """One random spoiling through the command, in-process: its outcome."""
    fmt = rng.choice(sorted(corpus.TRACE_FORMATS))
    files, options, kw = corpus._valid(fmt)
    target = rng.choice(sorted(files))
    for name, content in files.items():
        (folder / name).write_bytes(spoil(rng, fmt, content) if name == target else content)
    paths = [folder / name for name in files]
    before = fingerprint(paths)
    trace = folder / ("digital.csv" if fmt == "saleae" else target)
    options = dict(options, current_file=str(folder / "current.csv")) if fmt == "saleae" else options
    argv = ["energy", "import", str(trace), "--format", fmt]
    argv += [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
    argv += ["--voltage", "3.3"] if "nominal_voltage" in kw else ["--threshold", "1.65"] if kw else []
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = cli_main(argv)
    except BaseException:           # noqa: B902 - anything escaping the command is what is counted
        return "traceback"
    if fingerprint(paths) != before:
        return "changed"
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("warning: ")]
    if code == 0:
        return "accepted" if sound(trace, fmt, options, kw) else "silent"
    return "clear" if code == 2 and len(lines) == 1 and str(folder) in lines[0] else "unclear"


def sound(trace: Path, fmt: str, options: dict, kw: dict) -> bool:
    """Whether an accepted trace's windows have finite, positive energies (checked apart from the
    command: read again with the library)."""
    import numpy as np

    from cryptobench.targets.trace.formats import open_trace
    from cryptobench.targets.trace.importer import import_trace
    info, chunks = open_trace(trace, fmt, **options)
    energy = import_trace(info, chunks, **kw)["windows"].column("energy_j")
    return bool(len(energy)) and bool(np.isfinite(energy).all() and (energy > 0).all())


def run_random(n: int, seed: int) -> Counter:
    rng, counts = random.Random(seed), Counter()
    work = Path(tempfile.mkdtemp(prefix="cryptobench-probe-"))
    try:
        for i in range(n):
            folder = work / str(i)
            folder.mkdir()
            counts[probe_random(rng, folder)] += 1
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=300, help="random spoilings of valid traces (default 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="command processes at a time (default 2)")
    args = ap.parse_args()
    cases = corpus._trace_cases()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(probe_case, cases))
    c = Counter(outcome for _, outcome, _ in results)
    for name, outcome, detail in results:
        if outcome != "clear":
            print(f"{outcome}: {name}: {detail}")
    formats = Counter(name.split("/")[0] for name in cases)
    print(f"corpus: {len(cases)} cases in {corpus.TRACES.relative_to(ROOT)} "
          f"({', '.join(f'{f} {n}' for f, n in sorted(formats.items()))})")
    print(f"hostile trace inputs tried {len(cases)}, clear errors {c['clear']}, tracebacks {c['traceback']}, "
          f"silent wrong results {c['silent']}, inputs changed {c['changed']}"
          + (f", unclear errors {c['unclear']}" if c["unclear"] else ""))
    r = run_random(args.random, args.seed)
    print(f"random spoilings of valid traces (seed {args.seed}): tried {args.random}, clear errors {r['clear']}, "
          f"accepted {r['accepted']}, tracebacks {r['traceback']}, silent wrong results {r['silent']}, "
          f"inputs changed {r['changed']}"
          + (f", unclear errors {r['unclear']}" if r["unclear"] else ""))
    bad = sum(c[k] + r[k] for k in ("traceback", "silent", "changed", "unclear"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
