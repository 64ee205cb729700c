"""Whisper and the end-of-turn model with their real weights (provisioned by setup), on the
project's own voices; the log-mel they read checked against a reference computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kiosk.asr.whisper import WhisperModel, WhisperRecognizer, collapse_repeats
from kiosk.audio.format import RATE_HZ
from kiosk.audio.logmel import log_mel, mel_filters
from kiosk.audio.turn import SmartTurn, last_word_classes, pause_verdict, turn_features
from kiosk.bench.voice import char_errors, word_errors
from kiosk.config import Config
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.tts import spoken
from kiosk.wiring import synthesizer
from tests.fakes import tone


@pytest.fixture(scope="module")
def tiny(models_dir: Path) -> WhisperModel:
    return WhisperModel(models_dir / "whisper-tiny-en")


@pytest.fixture(scope="module")
def base(models_dir: Path) -> WhisperModel:
    return WhisperModel(models_dir / "whisper-base")


def _say(lang: str, text: str) -> np.ndarray:
    return spoken(synthesizer(Config(), lang, deterministic=True), text)


def test_log_mel_matches_faster_whispers_reference() -> None:
    from faster_whisper.feature_extractor import FeatureExtractor

    reference = FeatureExtractor(feature_size=80)
    assert np.abs(reference.mel_filters - mel_filters()).max() < 1e-6
    rng = np.random.default_rng(3)
    audio = (rng.standard_normal(RATE_HZ * 3) * 0.1 * np.sin(np.arange(RATE_HZ * 3) / 300.0)
             ).astype(np.float32)
    assert np.abs(reference(audio, padding=0) - log_mel(audio)).max() < 1e-5
    padded = reference(audio, padding=RATE_HZ * 5)  # silence after, as the encoder window
    assert np.abs(padded - log_mel(audio, frames=padded.shape[1])).max() < 1e-5


def test_turn_features_are_the_normalized_log_mel_of_the_last_eight_seconds() -> None:
    from faster_whisper.feature_extractor import FeatureExtractor

    rng = np.random.default_rng(4)
    speech = (rng.standard_normal(RATE_HZ * 10) * 3000).astype(np.int16)
    last = speech[-RATE_HZ * 8:].astype(np.float32) / 32768.0
    normalized = (last - last.mean()) / np.sqrt(last.var() + 1e-7)
    expected = FeatureExtractor(feature_size=80)(normalized, padding=0)
    assert turn_features(speech).shape == (1, 80, 800)
    assert np.abs(turn_features(speech)[0] - expected).max() < 1e-4
    short = turn_features(speech[:RATE_HZ])  # padded with silence in front
    assert short.shape == (1, 80, 800)


def test_tiny_en_hears_an_english_question(tiny: WhisperModel) -> None:
    question = "what time does the robot show start on saturday"
    asr = WhisperRecognizer({"en": tiny})
    asr.start()
    asr.accept(_say("en", question))
    errors, _ = word_errors(question, asr.finish())
    assert errors <= 1 and asr.lang == "en"


def test_base_hears_japanese_and_auto_tells_the_languages_apart(
        tiny: WhisperModel, base: WhisperModel) -> None:
    question = "ロボットの実演は何時から"
    auto = WhisperRecognizer({"en": tiny, "ja": base}, detector=base)
    auto.start()
    auto.accept(_say("ja", question))
    heard = auto.finish()
    errors, chars = char_errors(question, heard)
    assert auto.lang == "ja" and errors / chars <= 0.25, heard
    auto.start()
    english = "where can i park my car"
    auto.accept(_say("en", english))
    assert auto.lang == "ja"  # told only when the turn is done
    # one word may be misheard: on the CI machine of 2026-12-02 tiny.en hears "part"
    heard = auto.finish()
    errors, _ = word_errors(english, heard)
    assert auto.lang == "en" and errors <= 1, heard


def test_a_speculation_is_used_only_when_nothing_was_said_after_it(tiny: WhisperModel) -> None:
    asr = WhisperRecognizer({"en": tiny})
    first = _say("en", "where can i park")
    asr.start()
    asr.accept(first)
    asr.speculate()
    assert "park" in asr.speculation().lower()
    asr.accept(np.zeros(RATE_HZ // 2, dtype=np.int16))  # only silence after the pause
    assert asr.finish() == asr.recognize(first.astype(np.float32) / 32768.0)[0]
    asr.start()
    asr.accept(first)
    asr.speculate()
    asr.accept(_say("en", "for the whole weekend"))
    asr.withdraw()  # the visitor went on
    assert "weekend" in asr.finish().lower()


def test_the_encoder_window_follows_the_utterance(tiny: WhisperModel) -> None:
    second = RATE_HZ // 160
    assert tiny.window_frames(RATE_HZ * 2) == 8 * second  # at least 8 s
    assert tiny.window_frames(RATE_HZ * 11) == 12 * second  # the audio and half a second
    assert tiny.window_frames(RATE_HZ * 40) == 30 * second  # Whisper's most


def test_a_sentence_said_again_is_said_once() -> None:
    assert collapse_repeats("When does it open? When does it open? When does it open?") == \
        "When does it open?"
    assert collapse_repeats("Where can I park my car? Where can I park") == \
        "Where can I park my car?"
    assert collapse_repeats("Is it open? Is it free?") == "Is it open? Is it free?"
    assert collapse_repeats("何時からですか?何時からですか?") == "何時からですか?"


def test_smart_turn_hears_a_finished_question_from_a_broken_off_one(models_dir: Path) -> None:
    from kiosk.bench.voice import _trimmed

    model = SmartTurn(models_dir / "smart-turn-v3.2-cpu.onnx")
    silence = np.zeros(RATE_HZ // 5, dtype=np.int16)  # judged at a pause, as the loop does
    # (the model is uneven on synthesized English: "what time does the" scores 0.73; the
    # bench's premature-cut figures say how it does over many questions)
    done = model.complete(np.concatenate([
        _trimmed(_say("en", "How much is a ticket for the planetarium?")), silence]))
    broken = model.complete(np.concatenate([_trimmed(_say("en", "How much is a ticket for")),
                                            silence]))
    assert done > 0.5 > broken


def test_words_that_cannot_end_a_question_hold_the_turn_open(models_dir: Path) -> None:
    en, ja = load_lexicon("en"), load_lexicon("ja")
    assert en.sounds_unfinished("What time does") and en.sounds_unfinished("Where is the,")
    assert not en.sounds_unfinished("Can you explain that?")
    assert not en.sounds_unfinished("Thank you") and not en.sounds_unfinished("when")
    assert ja.sounds_unfinished("駐車場を") and ja.sounds_unfinished("子どもと")
    assert not ja.sounds_unfinished("休みの日は") and not ja.sounds_unfinished("何時から")
    # a hesitation: the visitor is still looking for words
    assert en.sounds_unfinished("The parking, uh...") and ja.sounds_unfinished("駐車場はえーと")
    assert pause_verdict(0.99, "what time does") == 0.0
    # Japanese: the particle must be a word of its own (なに, こと do not end in に, と)
    assert pause_verdict(0.9, "緑の丸ってなに") == 0.9 and pause_verdict(0.9, "駐車場を") == 0.0
    assert pause_verdict(0.9, "ここに書いてある注意ってどういうこと") == 0.9
    # a degree adverb waits for its predicate; a question's adverb ends the question
    assert pause_verdict(0.9, "もっと") == 0.0 and pause_verdict(0.9, "家族だといくら") == 0.9
    assert pause_verdict(0.99, "What time is it?") == 0.99
    assert pause_verdict(0.99, "") == 0.99


def test_an_english_transcript_without_a_sentence_end_waits() -> None:
    en, ja = load_lexicon("en"), load_lexicon("ja")
    assert en.unmarked("Where can we eat") and en.unmarked("Tell me about this ")
    assert not en.unmarked("Where can we eat lunch?") and not en.unmarked("Thank you.")
    assert not en.unmarked("") and not ja.unmarked("もっと教えて")  # Japanese: unmarked often
    assert pause_verdict(0.99, "Where can we eat") == 0.0
    assert pause_verdict(0.99, "Where can we eat lunch after that?") == 0.99
    assert pause_verdict(0.9, "もっと教えて") == 0.9


def test_a_japanese_sentence_final_form_ends_the_turn() -> None:
    ja = load_lexicon("ja")
    assert ja.sounds_finished("駐車場はありますか?") and ja.sounds_finished("教えてください。")
    assert not ja.sounds_finished("駐車場は") and not load_lexicon("en").sounds_finished("is it?")
    assert pause_verdict(0.1, "カフェはありますか?") == 1.0
    assert pause_verdict(0.1, "カフェは?") == 0.1


def test_a_japanese_word_a_noun_must_follow_holds_the_turn_open() -> None:
    # Open JTalk's analysis: the adnominal どんな and the genitive の wait for their noun; the
    # sentence-final の of a question (書いてあるの) and から (何時から) do not
    assert last_word_classes("ほかにはどんな", "ja")[0] == "連体詞"
    assert pause_verdict(0.9, "ほかにはどんな") == 0.0
    assert pause_verdict(0.9, "さっきの。") == 0.0 and pause_verdict(0.9, "展示室の") == 0.0
    assert pause_verdict(0.9, "ここに何が書いてあるの?") == 0.9
    assert pause_verdict(0.9, "何時から?") == 0.9
    assert last_word_classes("Which one", "en") == ()


def test_a_japanese_ending_that_asks_only_when_asked_waits_unless_marked() -> None:
    # a verbal noun, は/から or 詳しく ends a question said as one (rising: Whisper writes
    # "?"); said flat, the visitor is going on (月の石は … 本物なの). Question words and
    # other nouns end plain questions: いくら, なに, 本当
    assert pause_verdict(0.9, "それはいくら") == 0.9 and pause_verdict(0.9, "それって本当") == 0.9
    assert "形容詞 連用テ接続" in last_word_classes("それを詳しく", "ja")
    for opening in ("月の石は", "中央駅から", "そこで子どもが体験", "それを詳しく"):
        assert pause_verdict(0.9, opening) == 0.0, opening
        assert pause_verdict(0.9, opening + "?") == 0.9, opening
    assert pause_verdict(0.9, "それはいくら。") == 0.9
    assert pause_verdict(0.9, "もっと教えて") == 0.9  # te-form: a request, marked or not
    # a filler, or a word Open JTalk does not know (a misheard opening): still looking
    assert pause_verdict(0.9, "えーと") == 0.0 and pause_verdict(0.9, "シーサイ") == 0.0


def test_the_voice_bench_finds_where_the_opening_words_end_in_the_whole_sentence() -> None:
    # the opening words said alone last longer (their last sound drawn out, or their first):
    # their end in the whole sentence is where the next sound begins, not their length
    from kiosk.bench.voice import _end_in

    def sound(hz: float, seconds: float) -> np.ndarray:
        return tone(seconds, hz=hz, amp=8000 / 32767)

    whole = np.concatenate([sound(300, 0.3), sound(900, 0.4), sound(2000, 0.3)])
    for part in (np.concatenate([sound(300, 0.3), sound(900, 0.6)]),
                 np.concatenate([sound(300, 0.5), sound(900, 0.3)])):
        assert abs(_end_in(whole, part) / RATE_HZ - 0.7) <= 0.02
