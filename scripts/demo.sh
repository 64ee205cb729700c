#!/usr/bin/env bash
# The main job on the embedded defaults: set up, then a scripted conversation in English and
# Japanese over the bundled demo site, with what the brain decided for every turn.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/kiosk demo --explain "$@"
