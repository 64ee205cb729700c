"""Latin words in Japanese speech read as words: the rules with a fake analysis and model, then
Open JTalk and e2k's model for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from kiosk.dialogue.lexicon import load_lexicon
from kiosk.models import load_manifest, model_path
from kiosk.tts.readings import Analysis, LatinReadings, reading, said_in_japanese

# What a fake Open JTalk knows, and a fake model's katakana for the rest.
KNOWN = {"YouTube": "ユーチューブ", "Web": "ウェブ", "for": "フォー", "site": "サイト",
         "frame": "フレーム"}
GUESSES = {"misskey": "ミスキー", "git": "ギット", "hub": "ハブ", "cloudflare": "クラウドフレア",
           "conf": "コンフ", "socket": "ソケット"}


def _analyse(word: str) -> Analysis:
    if word in KNOWN:
        return [(word, KNOWN[word])]
    if word == "conf":  # Open JTalk finds a word of its own inside one it does not know
        return [("c", None), ("on", "オン"), ("f", None)]
    return [(word, None)]


def _read(word: str) -> str | None:
    return reading(word, _analyse, GUESSES.__getitem__, lambda w: w not in ("url", "json"))


@pytest.mark.parametrize("word, said", [
    ("Misskey", "ミスキー"),  # a word Open JTalk would spell: the model's reading
    ("misskey", "ミスキー"),
    ("YouTube", None),  # one it knows: its own reading
    ("GitHub", "ギットハブ"),  # camel-case parts apart
    ("MisskeyHQ", "ミスキーHQ"),  # an acronym part stays letters (Open JTalk says them)
    ("API", "API"), ("io", "io"), ("npm", "npm"),  # acronyms, two letters, no vowel
    ("WebSocket", "ウェブソケット"),  # a part it knows stays its own
    ("conf", "コンフ"),  # a word is read by its parts, not by the pieces Open JTalk finds
    ("json", "JSON"),  # a short lower-case acronym: its letters
    ("For", "フォー"), ("sites", "サイト"),  # known in lower case, or in the singular
    ("iframe", "Iフレーム"),  # a product's letter before a word it knows
])
def test_a_latin_word_is_read_as_a_word_unless_open_jtalk_knows_it_or_it_is_letters(
        word: str, said: str | None) -> None:
    assert _read(word) == said


def test_full_width_letters_are_read_as_the_word_they_spell() -> None:
    assert said_in_japanese("Ｍｉｓｓｋｅｙを使う", _read) == "ミスキーを使う"


def test_only_the_latin_words_of_a_sentence_change() -> None:
    text = "MisskeyはCloudflareとYouTubeに対応、v2023.11.0からmisskey.ioでもAPIが使えます。"
    assert said_in_japanese(text, _read) == (
        "ミスキーはクラウドフレアとYouTubeに対応、v2023.11.0からミスキー.ioでもAPIが使えます。")


@pytest.fixture(scope="module")
def readings(models_dir: Path) -> LatinReadings:
    return LatinReadings(model_path(load_manifest()["e2k-c2k"], models_dir),
                         load_lexicon("ja").spelled_words)


def test_open_jtalk_says_the_words_not_their_letters(readings: LatinReadings) -> None:
    """Open JTalk alone reads "Misskey" as エムアイエスエスケーイーワイ; with the readings the
    visitor hears ミスキー. Words it knows and acronyms are said as before."""
    import pyopenjtalk

    text = "MisskeyはCloudflareとGitHubとYouTubeのAPIに対応しています。"
    before = pyopenjtalk.g2p(text, kana=True)
    assert "エムアイエスエスケーイーワイ" in before  # the defect, so this test can fail
    said = readings(text)
    heard = pyopenjtalk.g2p(said, kana=True)
    assert said.startswith("ミスキーはクラウドフレアとギットハブと"), said
    assert "YouTube" in said and "APIに" in said  # known to Open JTalk / an acronym
    assert "エムアイ" not in heard and "エーピーアイ" in heard and "ユーチューブ" in heard
    assert len(heard) < len(before) - 20  # 13 letter names for Misskey alone
    # a lower-case acronym is spelled ([speech] spelled_words), a lower-case name read
    assert readings.read("url") == "URL" and readings.read("misskey") == "ミスキー"


@pytest.mark.slow
def test_the_voice_says_the_reading_and_the_piece_keeps_the_sites_spelling(
        readings: LatinReadings) -> None:
    from kiosk.audio.format import RATE_HZ
    from kiosk.tts.openjtalk import OpenJTalkSynthesizer

    plain, read = OpenJTalkSynthesizer(), OpenJTalkSynthesizer(readings=readings)
    text = "Misskeyについてです。"
    [spelled] = plain.synthesize(text)
    [word] = read.synthesize(text)
    assert word.text == text  # the caption and the log keep "Misskey"
    # ミスキー is four morae against thirteen letter names
    assert len(word.samples) < len(spelled.samples) - RATE_HZ // 2


def test_a_missing_reading_model_leaves_the_voice_speaking_and_says_the_fix(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The readings are the one model the Japanese voice can do without: with its file
    missing the voice still speaks (Latin words letter by letter) and the log names the
    command that installs it."""
    import dataclasses

    from kiosk.config import load_config
    from kiosk.wiring import synthesizer

    cfg = load_config(None)
    cfg = dataclasses.replace(cfg, paths=dataclasses.replace(cfg.paths, models_dir=str(tmp_path)))
    with caplog.at_level("WARNING"):
        voice = synthesizer(cfg, "ja")
    assert "models install e2k-c2k" in caplog.text
    [piece] = voice.synthesize("Misskeyです。")
    assert piece.text == "Misskeyです。" and len(piece.samples) > 0
