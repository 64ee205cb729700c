"""Make the bundled demo recording: the visitor's side of a scripted English conversation,
spoken by the project's own piper voice, with pauses between the questions.

Usage: python scripts/make_recordings.py   (writes kiosk/demo/recordings/conversation-en.wav)
Piper is run without its sampling noise, so the file comes out the same every time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kiosk.audio.format import RATE_HZ  # noqa: E402
from kiosk.audio.wav import write_wav  # noqa: E402
from kiosk.models import default_models_dir, load_manifest  # noqa: E402

QUESTIONS = [
    "Good morning.",
    "Where can I park my car?",
    "How much does it cost?",
    "When is the humanoid robot demonstration?",
    "Is there a cafe?",
    "Thank you, goodbye!",
]
PAUSE_S = 19.0  # room for the avatar's reply (up to ~16 s) before the next question


def main() -> None:
    from kiosk.tts.piper import PiperSynthesizer

    voice = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"],
                                           default_models_dir(), deterministic=True)
    parts = [np.zeros(RATE_HZ, dtype=np.int16)]
    for question in QUESTIONS:
        parts += [speech.samples for speech in voice.synthesize(question)]
        parts.append(np.zeros(int(PAUSE_S * RATE_HZ), dtype=np.int16))
    out = REPO / "kiosk" / "demo" / "recordings" / "conversation-en.wav"
    write_wav(out, np.concatenate(parts))
    print(f"{out}: {sum(len(p) for p in parts) / RATE_HZ:.1f} s")


if __name__ == "__main__":
    main()
