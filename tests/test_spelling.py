"""Venue spelling of Japanese transcripts: Open JTalk's real analysis, on site text."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from kiosk.asr.spelling import VenueSpelling, morae, site_texts
from kiosk.asr.whisper import WhisperModel, WhisperRecognizer
from kiosk.config import DEMO_DIR
from kiosk.retrieval.site import load_site

SITE = ["宇宙食はミュージアムショップで買えます。", "駐車場は地下にあります。",
        "小さい子ども向けの発掘体験があります。", "車いすの貸し出しは無料です。"]


def test_morae_count_small_kana_with_the_one_before() -> None:
    assert morae("チュウシャジョウ") == 5 and morae("リョウ") == 2 and morae("コドモ") == 3


def test_a_homophone_of_a_site_word_is_written_as_the_site_writes_it() -> None:
    speller = VenueSpelling.from_texts(SITE)
    assert speller.correct("宇宙職はどこで買える?") == "宇宙食はどこで買える?"
    assert speller.correct("中車場はどこですか") == "駐車場はどこですか"
    assert speller.correct("小さい子供向けのものはある") == "小さい子ども向けのものはある"
    assert speller.correct("クルマイスはありますか") == "車いすはありますか"


def test_words_the_site_lacks_short_readings_and_the_rest_stay_as_heard() -> None:
    speller = VenueSpelling.from_texts([*SITE, "他の展示もご覧ください。", "展示の解説を聞く。"])
    # ホカ (two morae) is left alone; letters and signs keep their half width; a word that
    # only sounds like the site's (開設, 解説) is another word
    for heard in ("ほかに何がある?", "YouTubeで配信できますか?", "トイレはどこ", "",
                  "このサイトはいつ開設されたの"):
        assert speller.correct(heard) == heard
    assert VenueSpelling.from_texts([]).correct("宇宙職") == "宇宙職"


def test_the_budget_reads_titles_and_headings_before_prose() -> None:
    pages, _ = load_site(DEMO_DIR / "site")
    texts = site_texts(pages)
    ja = [p for p in pages if p.lang == "ja"]
    assert texts[:len(ja)] == [p.title for p in ja]
    small = VenueSpelling.from_texts(texts, budget_chars=sum(map(len, texts[:len(ja)])))
    whole = VenueSpelling.from_texts(texts)
    assert 0 < len(small.spellings) < len(whole.spellings)


def test_the_recognizer_spells_japanese_with_the_site_and_survives_a_broken_site(
        models_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    from kiosk.config import Config
    from kiosk.tts import spoken
    from kiosk.wiring import synthesizer

    base = WhisperModel(models_dir / "whisper-base")
    audio = spoken(synthesizer(Config(), "ja", deterministic=True), "宇宙食はどこで買える")
    plain = WhisperRecognizer({"ja": base}).recognize(audio.astype(np.float32) / 32768.0)[0]

    def venue() -> VenueSpelling:
        # whatever Whisper wrote for うちゅうしょく, the site's word is 宇宙食
        return VenueSpelling({"ウチュウショク": "宇宙食", "ドコ": "どこ"})

    spelled = WhisperRecognizer({"ja": base}, spelling=venue)
    heard = spelled.recognize(audio.astype(np.float32) / 32768.0)[0]
    assert heard.startswith("宇宙食") and not plain.startswith("宇宙食"), (plain, heard)

    def broken() -> VenueSpelling:
        raise OSError("site folder /nowhere is missing")

    with caplog.at_level(logging.WARNING):
        kept = WhisperRecognizer({"ja": base}, spelling=broken)
        assert kept.recognize(audio.astype(np.float32) / 32768.0)[0] == plain
    assert "no venue spelling" in caplog.text and "/nowhere" in caplog.text


def test_the_site_chooses_among_whisper_s_hypotheses(models_dir: Path) -> None:
    """Whisper base's first hypothesis writes 駅方 (no word); its beam holds 行き方, which the
    demo site's access page writes: the model of the site's text moves it to the front."""
    from kiosk.config import Config
    from kiosk.tts import spoken
    from kiosk.wiring import synthesizer

    base = WhisperModel(models_dir / "whisper-base")
    audio = spoken(synthesizer(Config(), "ja", deterministic=True), "中央駅からの行き方を教えて")
    samples = audio.astype(np.float32) / 32768.0
    pages, _ = load_site(DEMO_DIR / "site")
    plain = WhisperRecognizer({"ja": base}).recognize(samples)[0]
    chosen = WhisperRecognizer({"ja": base}, spelling=lambda: VenueSpelling.from_texts(
        site_texts(pages), spell=False, weight=0.2)).recognize(samples)[0]
    assert "行き方" in chosen and "行き方" not in plain, (plain, chosen)
