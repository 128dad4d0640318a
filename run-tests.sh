#!/usr/bin/env bash
# Run the whole test suite (sets up whatever is missing first, without running a benchmark), on every
# core: pytest-xdist, one worker per CPU, each test file's tests on one worker (its module fixtures,
# a real run or a built image, made once). `./run-tests.sh -n 0` runs it in this one process.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --no-run
exec .venv/bin/python -m pytest -q -rs -n auto --dist loadfile tests "$@"
