#!/usr/bin/env bash
# Set up, then run every check CI runs: lint, types, the test suite (real models included),
# and small runs of the benchmarks so they cannot rot.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/mypy
timeout 1800 .venv/bin/python -m pytest -q "$@"  # a hung device must not hang CI
.venv/bin/kiosk bench brain --pages 300 --turns 100
.venv/bin/kiosk bench voice --utterances 6 --timed 2 --json
.venv/bin/kiosk bench voice --lang ja --utterances 4 --timed 1 --noise-db 10 --json
.venv/bin/kiosk bench soak --minutes 10 --json
.venv/bin/kiosk bench echo --minutes 2 --scenes 6 --paths 2 --json
.venv/bin/kiosk bench fleet --json
