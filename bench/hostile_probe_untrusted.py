#!/usr/bin/env python3
"""Inputs from others stay data (issues 30 and 43): recipes, vector files, firmware images, store
locations, labels and lab files (issue 30); a library's git repository, gate documents, the
pull-request comment and images that misuse the simulator (issue 43), each tried as a hostile user would, through the command that reads it, in a
fresh process whose working folder is a scratch folder of its own.

Every case is judged on six things the summary line counts:
- *traceback*: a Python traceback on stderr, or an exit code the case does not allow;
- *hang*: the command ran into the probe's limit (LIMIT_S);
- *silent wrong*: the command did not answer as the case expects (a refusal that exits 0, a
  message without the expected fragment, a CSV cell left as a formula, a secret printed, a raw
  ESC reaching the terminal, a store created by a reader);
- *input changed*: a file the command reads has other bytes afterwards;
- *host program run*: one of the canary programs (`as`, `cc1`, `ld`, … in a folder a hostile flag
  names) left its marker;
- *host file read or written*: the canary file's secret token shows up in any output, stored
  cell or file, or a file appeared or changed outside the places the case allows.

Usage: bench/hostile_probe_untrusted.py [--only CLASS] [--list]      (exit 1 on any bad verdict)
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from untrusted_core import BAD, SHOWN, judge, make_world, seed_store  # noqa: E402
from untrusted_cases import CLASSES as INPUT_CLASSES  # noqa: E402
from untrusted_cases_repo import CLASSES as REPO_CLASSES  # noqa: E402
from untrusted_cases_gate import CLASSES as GATE_CLASSES  # noqa: E402
from untrusted_cases_sim import CLASSES as SIM_CLASSES  # noqa: E402

CLASSES = {**INPUT_CLASSES, **REPO_CLASSES, **GATE_CLASSES, **SIM_CLASSES}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="run only this class (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the cases and stop")
    ap.add_argument("--verbose", action="store_true", help="one line per case")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cryptobench-untrusted-"))
    world = make_world(work)
    (work / "inputs").mkdir(exist_ok=True)
    seed_store(world)                 # before the cases: some name its runs (an existing report)
    cases = [c for name, make in CLASSES.items() if not args.only or name in args.only for c in make(world)]
    if args.list:
        for c in cases:
            print(f"{c.klass:18} {c.name}")
        print(f"{len(cases)} cases")
        return 0
    counts, per_class, bad = Counter(), Counter(), []
    started = time.monotonic()
    for i, case in enumerate(cases, 1):
        verdict, why = judge(case, world)
        counts[verdict] += 1
        per_class[(case.klass, verdict == "ok")] += 1
        if verdict != "ok":
            bad.append(f"  {case.klass}/{case.name}: {verdict}: {why}")
        if args.verbose:
            print(f"[{i}/{len(cases)}] {case.klass}/{case.name}: {verdict} {why}", flush=True)
        elif sys.stderr.isatty():
            eta = (time.monotonic() - started) / i * (len(cases) - i)
            sys.stderr.write(f"\r{i}/{len(cases)} cases, about {eta:.0f} s left ")
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    for klass in dict.fromkeys(c.klass for c in cases):
        print(f"  {klass:20} {per_class[(klass, True)]:4} held, {per_class[(klass, False)]} did not")
    print(f"untrusted inputs tried {len(cases)}: held {counts['ok']}, "
          + ", ".join(f"{SHOWN[name]} {counts[name]}" for name in BAD))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
