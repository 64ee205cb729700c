"""Make the bundled demo recordings: the visitor's side of a scripted conversation in English
(the project's piper voice) and in Japanese (Open JTalk), with pauses between the questions.

Usage: python scripts/make_recordings.py   (writes kiosk/demo/recordings/conversation-{en,ja}.wav)
Piper is run without its sampling noise and Open JTalk has none, so the files come out the
same every time.
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

QUESTIONS = {
    "en": [
        "Good morning.",
        "Where can I park my car?",
        "How much does it cost?",
        "When is the humanoid robot demonstration?",
        "Is there a cafe?",
        "Thank you, goodbye!",
    ],
    "ja": [
        "こんにちは。",
        "駐車場はありますか。",
        "料金はいくらですか。",
        "ロボットの実演は何時からですか。",
        "カフェはありますか。",
        "ありがとうございました。",
    ],
}
PAUSE_S = 19.0  # room for the avatar's reply (up to ~16 s) before the next question


def main() -> None:
    from kiosk.tts import Synthesizer
    from kiosk.tts.openjtalk import OpenJTalkSynthesizer
    from kiosk.tts.piper import PiperSynthesizer

    english = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"],
                                             default_models_dir(), deterministic=True)
    voices: dict[str, Synthesizer] = {"en": english, "ja": OpenJTalkSynthesizer()}
    for lang, questions in QUESTIONS.items():
        parts = [np.zeros(RATE_HZ, dtype=np.int16)]
        for question in questions:
            parts += [speech.samples for speech in voices[lang].synthesize(question)]
            parts.append(np.zeros(int(PAUSE_S * RATE_HZ), dtype=np.int16))
        out = REPO / "kiosk" / "demo" / "recordings" / f"conversation-{lang}.wav"
        if lang == "en" and out.exists():
            continue  # the English file is committed; made again only when deleted
        write_wav(out, np.concatenate(parts))
        print(f"{out}: {sum(len(p) for p in parts) / RATE_HZ:.1f} s")


if __name__ == "__main__":
    main()
