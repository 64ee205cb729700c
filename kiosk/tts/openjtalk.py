"""Japanese speech with Open JTalk (pyopenjtalk-plus: bundled dictionary and mei voice),
sentence by sentence."""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Iterator

import numpy as np

from kiosk.audio.format import resample, to_int16
from kiosk.text import japanese_words
from kiosk.tts import Speech, pieces_to_say, trimmed
from kiosk.tts.spoken_ja import numbers_said

log = logging.getLogger(__name__)


class OpenJTalkSynthesizer:
    lang = "ja"

    def __init__(self, volume: float = 1.0,
                 readings: Callable[[str], str] | None = None) -> None:
        """`readings`: Latin words as they are to be said (`kiosk.tts.readings.LatinReadings`);
        None: as written. Times, dates and ranges are said as read aloud (`numbers_said`)."""
        import pyopenjtalk

        small_sudachi()
        self._tts = pyopenjtalk.tts
        self._volume = volume
        self._readings = readings

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        for sentence, trail_ms in pieces_to_say(text, lead, "ja", phrase_starts):
            said = numbers_said(self._readings(sentence) if self._readings is not None
                                else sentence)
            wave, rate_hz = self._tts(said)
            samples = to_int16(np.asarray(wave, dtype=np.float64) * self._volume)
            audio = resample(samples, int(rate_hz))
            yield Speech(sentence, trimmed(audio, trail_ms=trail_ms) if lead else audio)


def phrase_starts(text: str) -> list[int]:
    """Character offsets where Open JTalk's accent phrases begin (開館時間は|午前|...), up to
    where its analysis stops following the text (it says 10 as 十)."""
    plain = unicodedata.normalize("NFKC", text)
    starts: list[int] = []
    at = 0
    for i, word in enumerate(japanese_words(text)):
        said = unicodedata.normalize("NFKC", word["string"])
        if not plain.startswith(said, at):
            break
        if i and word["chain_flag"] != 1:
            starts.append(at)
        at += len(said)
    return starts if len(plain) == len(text) else []


_small_in_use = False


def small_sudachi() -> bool:
    """Let pyopenjtalk-plus correct kanji readings (ある方: カタ, not ホー) with Sudachi's small
    dictionary instead of the core one it would map (a 115 MB file, not 202: resident at the
    end of the Japanese voice bench 82 MB, not 93); the readings are the same (1 of 2,316
    sentences of the demo and misskey-ja sites differs: 高 as コウ, not コー). pyopenjtalk-plus
    has no option for it, so its module-level dictionary is set before its first use; when
    that name is gone (another version) or core was loaded already, core stays, and the log
    says so. True when small is the one in use."""
    global _small_in_use
    if _small_in_use:
        return True
    try:
        import pyopenjtalk.utils as ojt_utils
        from sudachipy import dictionary
    except ImportError:
        return False
    if getattr(ojt_utils, "_SUDACHI_DICTIONARY", "gone") is not None:
        log.info("tts: Sudachi's dictionary is already loaded, or this pyopenjtalk-plus has no "
                 "slot for it: its own (core, ~90 MB more) reads")
        return False
    try:
        ojt_utils._SUDACHI_DICTIONARY = dictionary.Dictionary(dict="small")
    except Exception as exc:  # sudachidict-small missing: core works, with more memory
        log.info("tts: Sudachi's small dictionary unavailable (%s); core reads", exc)
        return False
    _small_in_use = True
    return True
