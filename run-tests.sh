#!/usr/bin/env bash
# Run the whole test suite (sets up whatever is missing first, without running a benchmark).
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --no-run
exec .venv/bin/python -m pytest -q -rs tests "$@"
