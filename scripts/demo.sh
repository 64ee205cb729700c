#!/usr/bin/env bash
# The main job on the embedded defaults: set up; a scripted text conversation in English and
# Japanese over the bundled demo site, with what the brain decided for every turn; then the
# bundled English recording of a visitor through the whole voice turn (VAD, recognizer, brain,
# voice), leaving the avatar's replies as a WAV file and a transcript in demo-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/kiosk demo --explain "$@"
mkdir -p demo-output
echo
echo "=== Spoken: kiosk/demo/recordings/conversation-en.wav through the voice turn ==="
.venv/bin/kiosk run --mic-wav kiosk/demo/recordings/conversation-en.wav \
  --speaker-wav demo-output/replies-en.wav | tee demo-output/transcript-en.txt
echo "(replies: demo-output/replies-en.wav; transcript: demo-output/transcript-en.txt)"
