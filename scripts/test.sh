#!/usr/bin/env bash
# Set up, then run every check CI runs: lint, types, the test suite (real models included),
# and small runs of the benchmarks so they cannot rot.
#
#   scripts/test.sh           everything, as .ci/run does (under 10 minutes on 2 cores)
#   scripts/test.sh --quick   lint, types and the tests marked neither slow, serial nor
#                             realtime, in parallel (under 2 minutes): for while you work
#
# Further arguments go to pytest (a file, -k NAME, -x).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
if [ "$quick" = 0 ] || [ ! -x .venv/bin/kiosk ]; then
  scripts/setup.sh
fi
# One selection of the suite; a selection that holds none of the tests asked for is no
# failure (pytest's status 5).
suite() {
  local limit_s=$1
  shift
  local status=0
  timeout "$limit_s" .venv/bin/python -m pytest -q "$@" || status=$?
  [ "$status" = 5 ] && status=0
  return "$status"
}

.venv/bin/ruff check .
.venv/bin/mypy
if [ "$quick" = 1 ]; then
  suite 600 -n auto -m "not slow and not serial and not realtime" "$@"
  exit
fi

# A hung device must not hang CI: every step has a time limit.
# 1. In parallel, every test that neither holds the clocked sound device nor measures real time
#    against a bound; a file's tests on one worker, so that a module's fixtures (a real site's
#    index) are built once.
suite 1200 -n auto --dist loadfile -m "not serial and not realtime" "$@"
# 2. Alone, the tests on JACK (tests/conftest.py marks them): a JACK client starved of the CPU
#    for one 10 ms period is dropped.
suite 600 -m serial "$@"
# 3. Two at a time, the long real-time tests whose bounds hold beside one another (the
#    lip-sync test was measured beside four CPU hogs: worst frame 50 ms, bound 80).
suite 600 -n 2 -m realtime "$@"

# 4. The benchmarks at their smallest honest size: each code path once, the real-time parts
#    short. They run side by side, as no figure of theirs is read here (the README's come
#    from full runs on a quiet machine).
benches=(
  "brain --pages 100 --turns 30 --cpus 1"
  "voice --utterances 2 --timed 1 --paused 1 --json"
  "voice --lang ja --utterances 2 --timed 1 --paused 1 --noise-db 10 --json"
  "soak --minutes 2 --json"
  "echo --minutes 0.5 --scenes 2 --paths 1 --jack-seconds 5 --json"
  "fleet --json"
)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for i in "${!benches[@]}"; do
  # shellcheck disable=SC2086  # the arguments are words
  timeout 600 .venv/bin/kiosk bench ${benches[$i]} >"$logs/$i.out" 2>"$logs/$i.err" &
  pids+=($!)
done
failed=0
for i in "${!benches[@]}"; do
  if wait "${pids[$i]}"; then
    echo "kiosk bench ${benches[$i]}:"
    cat "$logs/$i.out"
  else
    echo "FAILED: kiosk bench ${benches[$i]}" >&2
    tail -n 40 "$logs/$i.err" >&2
    failed=1
  fi
done
exit "$failed"
