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


def test_a_loanword_heard_one_consonant_off_is_the_sites() -> None:
    # Open JTalk knows neither アクリ nor エモジ (it calls them fillers): unknown katakana words
    # are loanwords, nouns like any other
    speller = VenueSpelling.from_texts(["スマホのアプリを使えます。", "絵文字で反応できます。",
                                        "投稿をパブリックにします。", "カードとガードがあります。",
                                        "アイコンを変えます。", "Renoteとリモートの違い。"])
    assert speller.correct("スマホのアクリはありますか") == "スマホのアプリはありますか"
    assert speller.correct("エモジで反応するには") == "絵文字で反応するには"
    assert speller.correct("タブリックにできない") == "パブリックにできない"
    # ... also when Open JTalk splits it into words it knows (ガ + ラリー)
    gallery = VenueSpelling.from_texts(["宇宙ギャラリーへようこそ。"])
    assert gallery.correct("宇宙ガラリーについて教えて") == "宇宙ギャラリーについて教えて"
    # left as heard: a vowel heard otherwise (アプロ), a stop for a fricative (アイフォン is
    # no アイコン), a slip two site words share (タード: カード or ガード?), a word the site
    # writes in Latin letters (リノート: Renote, not リモート), a word in hiragana
    for heard in ("アプロはありますか", "アイフォンだと", "タードはある", "リノートできない",
                  "あくりはある"):
        assert speller.correct(heard) == heard


def test_a_noun_the_site_writes_only_as_a_verb_takes_its_spelling() -> None:
    # 貸し出し(ています) is a verb's continuative form on the site, a noun in the question
    speller = VenueSpelling.from_texts(["車いすを無料で貸し出しています。", "係員が話しています。"])
    assert speller.correct("車いすのかしだしはありますか") == "車いすの貸し出しはありますか"
    assert speller.correct("車いすのかし出しはありますか") == "車いすの貸し出しはありますか"
    # a noun written in kanji is spelled as nouns are (話, not the 話し of 話しています)
    assert speller.correct("さっきの配信の話だけど") == "さっきの配信の話だけど"


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
    """Whatever this Whisper build writes for a site word (中車場 for 駐車場, 宇宙職 for
    宇宙食, ...), a site that spells a word read that way otherwise gets its spelling: the
    speller is made from the transcript's own words, so the test holds across Whisper builds
    (one that writes うちうそく leaves the speller nothing to change: the next question)."""
    from kiosk.asr.spelling import _spans
    from kiosk.config import Config
    from kiosk.text import japanese_words
    from kiosk.tts import spoken
    from kiosk.wiring import synthesizer

    base = WhisperModel(models_dir / "whisper-base")
    voice = synthesizer(Config(), "ja", deterministic=True)
    for question in ("駐車場はありますか", "宇宙食はどこで買える", "車いすは借りられますか"):
        samples = spoken(voice, question).astype(np.float32) / 32768.0
        plain = WhisperRecognizer({"ja": base}).recognize(samples)[0]
        words = japanese_words(plain)
        found = [span for i in range(len(words)) for span in _spans(words, i)]
        if found:
            break
    assert found, plain  # one of the three opens with a word the speller may rewrite
    _, written, reading = found[0]

    def venue() -> VenueSpelling:
        return VenueSpelling({reading: "キオスク"})  # kana: the same word, as same_word says

    heard = WhisperRecognizer({"ja": base}, spelling=venue).recognize(samples)[0]
    assert heard == plain.replace(written, "キオスク", 1) != plain, (plain, heard)

    def broken() -> VenueSpelling:
        raise OSError("site folder /nowhere is missing")

    with caplog.at_level(logging.WARNING):
        kept = WhisperRecognizer({"ja": base}, spelling=broken)
        assert kept.recognize(samples)[0] == plain
    assert "no venue spelling" in caplog.text and "/nowhere" in caplog.text


def test_the_site_chooses_among_whisper_s_hypotheses(models_dir: Path) -> None:
    """Whisper's beam holds other writings of the question than its first (with base:
    中央行き for 中央駅, 生き方 for 行き方); a site whose text writes one of them moves it to
    the front. The site here is made of the beam's own second writing, so the test holds
    whichever writing this Whisper build puts first; the demo site's text alone keeps a
    right first writing first."""
    from kiosk.asr.spelling import HYPOTHESES
    from kiosk.config import Config
    from kiosk.tts import spoken
    from kiosk.wiring import synthesizer

    base = WhisperModel(models_dir / "whisper-base")
    audio = spoken(synthesizer(Config(), "ja", deterministic=True), "中央駅からの行き方を教えて")
    samples = audio.astype(np.float32) / 32768.0
    beam = base.hypotheses(base.features(samples), "ja", len(samples) / 16000, HYPOTHESES)
    first = beam[0].text
    other = next(h.text for h in beam[1:] if h.text.rstrip("。?？") != first.rstrip("。?？"))
    plain = WhisperRecognizer({"ja": base}).recognize(samples)[0]
    assert plain == first
    chosen = WhisperRecognizer({"ja": base}, spelling=lambda: VenueSpelling.from_texts(
        [other] * 3, spell=False, weight=0.2)).recognize(samples)[0]
    assert chosen == other, (first, other, chosen)
    pages, _ = load_site(DEMO_DIR / "site")
    demo = WhisperRecognizer({"ja": base}, spelling=lambda: VenueSpelling.from_texts(
        site_texts(pages), spell=False, weight=0.2)).recognize(samples)[0]
    assert "行き方" in demo, (first, demo)


def test_the_site_model_reads_how_visitors_ask(tmp_path: Path) -> None:
    """A site's text is statements: its model alone finds a heard question's ending no
    likelier than a mishearing of it. The speller the recognizer is given also reads the
    lexicon's question frames, so between two writings Whisper scores alike, the one asked
    as visitors ask wins."""
    from kiosk.asr.charlm import Hypothesis
    from kiosk.config import Config, PathsConfig
    from kiosk.wiring import venue_spelling

    (tmp_path / "fees.md").write_text("# 料金\n入館料は大人500円です。\n", encoding="utf-8")
    cfg = Config(paths=PathsConfig(site=str(tmp_path)))
    make = venue_spelling(cfg)
    assert make is not None
    speller = make()
    heard = [Hypothesis("入館料はエクラですか", -0.30), Hypothesis("入館料はいくらですか", -0.30)]
    assert speller.choose(heard) == 1
    assert speller.choose(list(reversed(heard))) == 0


def test_a_hypothesis_ending_as_visitors_ask_wins_a_close_call(tmp_path: Path) -> None:
    """Whisper base hears Open JTalk's 止められますか as 止められました first and keeps the
    question lower in its beam (-0.09 / -0.27): a visitor asks, so a hypothesis ending in a
    question frame gains ASKED_BONUS; one far behind stays behind."""
    from kiosk.asr.charlm import Hypothesis
    from kiosk.asr.spelling import ASKED_BONUS
    from kiosk.config import Config, PathsConfig
    from kiosk.wiring import venue_spelling

    (tmp_path / "access.md").write_text("# アクセス\n駐車場は北口にあります。\n", encoding="utf-8")
    make = venue_spelling(Config(paths=PathsConfig(site=str(tmp_path))))
    assert make is not None
    speller = make()
    heard = [Hypothesis("車はどこに止められました?", -0.09),
             Hypothesis("車はどこに止められますか?", -0.27)]
    assert speller.choose(heard) == 1
    far = [heard[0], Hypothesis("車はどこに止められますか?", -0.09 - ASKED_BONUS - 1.0)]
    assert speller.choose(far) == 0
