"""Japanese speech with Open JTalk (pyopenjtalk-plus: bundled dictionary and mei voice),
sentence by sentence."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from kiosk.audio.format import resample, to_int16
from kiosk.text import spoken_pieces
from kiosk.tts import Speech


class OpenJTalkSynthesizer:
    lang = "ja"

    def __init__(self, volume: float = 1.0) -> None:
        import pyopenjtalk

        self._tts = pyopenjtalk.tts
        self._volume = volume

    def synthesize(self, text: str) -> Iterator[Speech]:
        for sentence in spoken_pieces(text):
            if not sentence.strip():
                continue
            audio, rate_hz = self._tts(sentence)
            samples = to_int16(np.asarray(audio, dtype=np.float64) * self._volume)
            yield Speech(sentence, resample(samples, int(rate_hz)))
