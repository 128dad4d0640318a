#!/usr/bin/env python3
"""Run a command as the hostile probe needs it: with a file-size limit (a full disk, seen by the
writer as EFBIG), and/or printing the command's peak memory afterwards ("max-rss-mib N", on stdout).

Usage: untrusted_child.py [--fsize BYTES] [--rss] -- COMMAND..."""
from __future__ import annotations

import argparse
import resource
import signal
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fsize", type=int)
    ap.add_argument("--rss", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    def limit():
        if args.fsize:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # a write past the limit fails, as on a full disk
            resource.setrlimit(resource.RLIMIT_FSIZE, (args.fsize, args.fsize))

    proc = subprocess.run(command, preexec_fn=limit)
    if args.rss:
        print(f"max-rss-mib {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024}", flush=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
