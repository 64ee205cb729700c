"""Japanese speech with Open JTalk (pyopenjtalk-plus: bundled dictionary and mei voice),
sentence by sentence."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import numpy as np

from kiosk.audio.format import resample, to_int16
from kiosk.tts import Speech, pieces_to_say, trimmed


class OpenJTalkSynthesizer:
    lang = "ja"

    def __init__(self, volume: float = 1.0) -> None:
        import pyopenjtalk

        self._tts = pyopenjtalk.tts
        self._volume = volume

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        for sentence, trail_ms in pieces_to_say(text, lead, "ja", phrase_starts):
            wave, rate_hz = self._tts(sentence)
            samples = to_int16(np.asarray(wave, dtype=np.float64) * self._volume)
            audio = resample(samples, int(rate_hz))
            yield Speech(sentence, trimmed(audio, trail_ms=trail_ms) if lead else audio)


def phrase_starts(text: str) -> list[int]:
    """Character offsets where Open JTalk's accent phrases begin (開館時間は|午前|...), up to
    where its analysis stops following the text (it says 10 as 十)."""
    import pyopenjtalk

    plain = unicodedata.normalize("NFKC", text)
    starts: list[int] = []
    at = 0
    for i, word in enumerate(pyopenjtalk.run_frontend(text, use_vanilla=True)):
        said = unicodedata.normalize("NFKC", word["string"])
        if not plain.startswith(said, at):
            break
        if i and word["chain_flag"] != 1:
            starts.append(at)
        at += len(said)
    return starts if len(plain) == len(text) else []
