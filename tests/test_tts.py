"""Speech synthesis with the real engines: piper (English) and Open JTalk (Japanese)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kiosk.audio.format import RATE_HZ, level_dbfs
from kiosk.models import load_manifest
from kiosk.tts.openjtalk import OpenJTalkSynthesizer, small_sudachi
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


def test_piper_says_a_phoneme_heavy_piece_in_parts(models_dir: Path) -> None:
    """A phone number is few characters and many phonemes: the piece holding it is cut where
    speech pauses until each part is within MAX_PIECE_PHONEMES (piper's working memory grows
    with them); every word is still said, in order."""
    from kiosk.tts.piper import MAX_PIECE_PHONEMES

    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    text = "Book a tour by calling 0120-345-678 or 0120-987-654 on weekdays."
    assert len(text) < 80 and tts.phonemes(text) > MAX_PIECE_PHONEMES
    pieces = list(tts.synthesize(text, lead=True))
    assert len(pieces) >= 2 and " ".join(p.text for p in pieces) == text
    assert all(tts.phonemes(p.text) <= MAX_PIECE_PHONEMES for p in pieces)
    assert [p.text for p in tts.synthesize("Tickets are 800 yen.")] == ["Tickets are 800 yen."]


def test_open_jtalk_speaks_japanese_sentence_by_sentence() -> None:
    tts = OpenJTalkSynthesizer()
    pieces = list(tts.synthesize("こんにちは。プラネタリウムは3階です。"))
    assert [p.text for p in pieces] == ["こんにちは。", "プラネタリウムは3階です。"]
    assert all(level_dbfs(p.samples) > -40 for p in pieces)
    assert 1.5 < sum(len(p.samples) for p in pieces) / RATE_HZ < 6.0


def test_open_jtalk_reads_homographs_with_sudachis_small_dictionary() -> None:
    import pyopenjtalk

    OpenJTalkSynthesizer()
    assert small_sudachi()  # the small dictionary is what reads, not core
    # Open JTalk alone reads 方 after a verb as ホー and 値 as ネ; Sudachi's readings fix them
    assert "アルカタ" in pyopenjtalk.g2p("車いすのある方はお申し出ください。", kana=True)
    assert "アタイ" in pyopenjtalk.g2p("設定の値を変えます。", kana=True)


def _silence_before_ms(samples: np.ndarray) -> float:
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > 300)
    return float(loud[0]) * 1000 / RATE_HZ


def test_a_reply_begins_with_a_lead_phrase_and_no_long_silence(models_dir: Path) -> None:
    en = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir,
                                        deterministic=True)
    reply = "The museum is open from 10:00 to 16:30 every day. Tickets are 12 dollars."
    pieces = list(en.synthesize(reply, lead=True))
    assert [p.text for p in pieces] == [
        "The museum is open", "from 10:00 to 16:30 every day.", "Tickets are 12 dollars."]
    assert [p.text for p in en.synthesize(reply)] == [  # a question said whole (benches)
        "The museum is open from 10:00 to 16:30 every day.", "Tickets are 12 dollars."]
    ja = OpenJTalkSynthesizer()
    said = list(ja.synthesize("開館時間は午前10時から午後4時30分までです。", lead=True))
    assert [p.text for p in said] == ["開館時間は", "午前10時から午後4時30分までです。"]
    for piece in (*pieces, *said):  # Open JTalk's own lead-in was ~300 ms
        assert _silence_before_ms(piece.samples) <= 31
    # after the lead phrase a short pause, not a sentence's stop
    lead = said[0].samples
    tail_ms = (len(lead) - np.flatnonzero(np.abs(lead.astype(np.int32)) > 300)[-1]) * 1000
    assert tail_ms / RATE_HZ <= 101
