#!/usr/bin/env bash
# The main job on the embedded defaults: set up; a scripted text conversation in English and
# Japanese over the bundled demo site, with what the brain decided for every turn; then the
# bundled English and Japanese recordings of a visitor through the whole voice turn (VAD,
# Whisper, the end-of-turn model, brain, voice; the language of each utterance detected),
# leaving the avatar's replies as WAV files and transcripts in demo-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/kiosk demo --explain "$@"
mkdir -p demo-output
for lang in en ja; do
  echo
  echo "=== Spoken: kiosk/demo/recordings/conversation-$lang.wav through the voice turn ==="
  .venv/bin/kiosk run --mic-wav "kiosk/demo/recordings/conversation-$lang.wav" \
    --speaker-wav "demo-output/replies-$lang.wav" | tee "demo-output/transcript-$lang.txt"
  echo "(replies: demo-output/replies-$lang.wav; transcript: demo-output/transcript-$lang.txt)"
done
