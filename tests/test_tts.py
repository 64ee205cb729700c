"""Speech synthesis with the real engines: piper (English) and Open JTalk (Japanese)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.audio.format import RATE_HZ, level_dbfs
from kiosk.models import load_manifest
from kiosk.tts.openjtalk import OpenJTalkSynthesizer
from kiosk.tts.piper import PiperSynthesizer

pytestmark = pytest.mark.slow


def test_piper_speaks_english_sentence_by_sentence(models_dir: Path) -> None:
    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    pieces = list(tts.synthesize("Hello there. The planetarium is on the third floor."))
    assert len(pieces) == 2  # one per sentence: playback can start after the first
    for piece in pieces:
        assert piece.samples.dtype.name == "int16" and level_dbfs(piece.samples) > -40
    seconds = sum(len(p.samples) for p in pieces) / RATE_HZ
    assert 2.0 < seconds < 6.0


def test_open_jtalk_speaks_japanese_sentence_by_sentence() -> None:
    tts = OpenJTalkSynthesizer()
    pieces = list(tts.synthesize("こんにちは。プラネタリウムは3階です。"))
    assert [p.text for p in pieces] == ["こんにちは。", "プラネタリウムは3階です。"]
    assert all(level_dbfs(p.samples) > -40 for p in pieces)
    assert 1.5 < sum(len(p.samples) for p in pieces) / RATE_HZ < 6.0
