"""The segmenter as a table of probabilities (no clock), and Silero on real synthesized speech."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kiosk.audio.format import CHUNK_SAMPLES, RATE_HZ, AudioChunk, chunks
from kiosk.audio.vad import (
    Hushed,
    Paused,
    Resumed,
    Segmenter,
    SegmenterParams,
    SpeechStarted,
    Utterance,
    goes_on,
    joined,
)


def _run(probs: list[float], params: SegmenterParams | None = None, *,
         pauses: bool = False, verdict: float | None = None) -> list[object]:
    """Events of a probability table; `verdict`: what the end-of-turn model says at each
    pause (None: no model). Paused / Resumed are left out unless `pauses`."""
    seg = Segmenter(params or SegmenterParams())
    events: list[object] = []
    for i, p in enumerate(probs):
        chunk = AudioChunk(np.full(CHUNK_SAMPLES, i % 1000, dtype=np.int16), i * 20)
        for event in seg.feed(chunk, p):
            if isinstance(event, Paused) and verdict is not None:
                seg.decide(verdict)
            if pauses or not isinstance(event, Hushed | Paused | Resumed):
                events.append(event)
    return events


def test_speech_then_silence_makes_one_utterance_with_pre_roll() -> None:
    probs = [0.0] * 30 + [0.9] * 50 + [0.0] * 30  # 600 ms quiet, 1 s speech, 600 ms quiet
    events = _run(probs)
    assert isinstance(events[0], SpeechStarted) and events[0].start_ms == 600
    utt = events[1]
    assert isinstance(utt, Utterance) and not utt.cut
    assert utt.start_ms == 600 - 300  # the pre-roll keeps the first syllable
    assert utt.last_voiced_ms == 1600
    assert utt.decided_ms - utt.last_voiced_ms == 400  # the configured end-of-speech silence
    assert len(events) == 2


def test_first_chunk_can_start_speech_no_warm_up() -> None:
    events = _run([0.9] * 20 + [0.0] * 25)
    assert isinstance(events[0], SpeechStarted) and events[0].start_ms == 0


def test_hysteresis_keeps_a_soft_ending_inside_the_utterance() -> None:
    events = _run([0.9] * 20 + [0.4] * 30 + [0.1] * 25)
    utt = events[-1]
    assert isinstance(utt, Utterance) and utt.last_voiced_ms == 1000


def test_pauses_shorter_than_the_end_silence_do_not_split() -> None:
    events = _run([0.9] * 20 + [0.0] * 15 + [0.9] * 20 + [0.0] * 25)
    assert [type(e).__name__ for e in events] == ["SpeechStarted", "Utterance"]


def test_a_cough_is_dropped() -> None:
    assert [type(e).__name__ for e in _run([0.0] * 10 + [0.9] * 3 + [0.0] * 40)] == [
        "SpeechStarted"]


def test_a_monologue_is_cut_and_goes_on() -> None:
    params = SegmenterParams(max_utterance_ms=2000)
    events = _run([0.9] * 250 + [0.0] * 25, params)  # 5 s of talk
    utts = [e for e in events if isinstance(e, Utterance)]
    assert [u.cut for u in utts] == [True, True, False]
    assert all(u.decided_ms - u.start_ms <= 2000 for u in utts[:2])


def test_silence_for_a_long_time_yields_nothing() -> None:
    assert _run([0.01] * 50_000) == []  # 1,000 s


@pytest.mark.slow
def test_silero_finds_synthesized_speech(models_dir: Path) -> None:
    from kiosk.audio.vad import SileroVad
    from kiosk.models import load_manifest, model_path
    from kiosk.tts import spoken
    from kiosk.tts.piper import PiperSynthesizer

    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    speech = spoken(tts, "Where is the planetarium?")
    silence = np.zeros(RATE_HZ, dtype=np.int16)
    audio = np.concatenate([silence, speech, silence])
    vad = SileroVad(model_path(load_manifest()["silero-vad"], models_dir))
    seg = Segmenter()
    events: list[object] = []
    for chunk in chunks(audio):
        events += seg.feed(chunk, vad.probability(chunk.samples))
    utts = [e for e in events if isinstance(e, Utterance)]
    assert len(utts) == 1
    speech_end_ms = (RATE_HZ + len(speech)) * 1000 // RATE_HZ
    assert 700 <= utts[0].start_ms <= 1100  # onset at 1,000 ms, with pre-roll
    assert abs(utts[0].last_voiced_ms - speech_end_ms) < 250
    assert utts[0].decided_ms - utts[0].last_voiced_ms <= 400 + 40
    vad.reset()
    quiet = [vad.probability(c.samples) for c in chunks(np.zeros(RATE_HZ * 30, dtype=np.int16))]
    assert max(quiet) < 0.2


def test_clipping_is_reported_with_the_fix(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from kiosk.audio.vad import warn_if_clipping

    loud = AudioChunk(np.full(CHUNK_SAMPLES, 32767, dtype=np.int16), 1000)
    clean = AudioChunk(np.full(CHUNK_SAMPLES, 1000, dtype=np.int16), 1020)
    log = logging.getLogger("test.clip")
    with caplog.at_level(logging.WARNING):
        warn_if_clipping(Utterance((clean,), 1020, 1040, 1440), log)
        assert caplog.text == ""
        warn_if_clipping(Utterance((loud, clean), 1000, 1040, 1440), log)
    assert "microphone clips" in caplog.text and "lower the input gain" in caplog.text


def test_a_pause_is_announced_and_speech_after_it_too() -> None:
    probs = [0.9] * 20 + [0.0] * 10 + [0.9] * 20 + [0.0] * 30  # a 200 ms pause mid-sentence
    events = _run(probs, pauses=True)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["SpeechStarted", "Hushed", "Paused", "Resumed", "Hushed", "Paused",
                     "Utterance"]
    assert isinstance(events[1], Hushed) and events[1].at_ms == 400 + 100  # Whisper begins
    assert isinstance(events[2], Paused) and events[2].at_ms == 400 + 160  # the model judges
    assert isinstance(events[3], Resumed) and events[3].at_ms == 600


def test_a_short_gap_hushes_and_resumes_without_a_pause() -> None:
    probs = [0.9] * 20 + [0.0] * 6 + [0.9] * 20 + [0.0] * 30  # 120 ms between two words
    kinds = [type(e).__name__ for e in _run(probs, pauses=True)]
    assert kinds[:4] == ["SpeechStarted", "Hushed", "Resumed", "Hushed"]
    assert kinds.count("Utterance") == 1
    # without a hush (0, or not before the pause), the pause is the only event
    for hush_ms in (0, 160, 300):
        plain = _run(probs, SegmenterParams(hush_ms=hush_ms), pauses=True)
        assert [type(e).__name__ for e in plain] == ["SpeechStarted", "Paused", "Utterance"]


def test_a_finished_turn_ends_at_the_pause() -> None:
    events = _run([0.9] * 50 + [0.0] * 40, verdict=0.9)
    utt = events[-1]
    assert isinstance(utt, Utterance)
    assert utt.decided_ms - utt.last_voiced_ms == 160 + 20  # the pause, and one chunk


def test_an_unfinished_turn_waits_for_more_speech() -> None:
    params = SegmenterParams()
    # "the parking ... for the weekend": 700 ms of thought, longer than the fixed silence
    probs = [0.9] * 30 + [0.0] * 35 + [0.9] * 30 + [0.0] * 60
    unfinished = _run(probs, params, verdict=0.1)
    assert [type(e).__name__ for e in unfinished] == ["SpeechStarted", "Utterance"]
    utt = unfinished[-1]
    assert isinstance(utt, Utterance)
    assert utt.decided_ms - utt.last_voiced_ms == params.incomplete_silence_ms
    fixed = _run(probs, params)  # no model: the 400 ms silence cuts the visitor off
    assert [type(e).__name__ for e in fixed].count("Utterance") == 2


def _utterance(start_ms: int, end_ms: int, *, cut: bool = False) -> Utterance:
    pieces = tuple(AudioChunk(np.zeros(CHUNK_SAMPLES, dtype=np.int16), ms)
                   for ms in range(start_ms, end_ms, 20))
    return Utterance(pieces, start_ms, end_ms - 200, end_ms, cut)


def test_speech_soon_after_an_utterance_goes_on_with_it() -> None:
    params = SegmenterParams(resume_within_ms=1000)
    first = _utterance(1000, 3000)  # voiced until 2800
    assert goes_on(first, 3500, params) and goes_on(first, 3800, params)
    assert not goes_on(first, 3820, params)  # more than a second after its last word
    assert not goes_on(first, 3500, SegmenterParams(resume_within_ms=0))  # off
    assert not goes_on(_utterance(1000, 3000, cut=True), 3500, params)  # a monologue's cut
    assert not goes_on(first, 3500, SegmenterParams(resume_within_ms=1000,
                                                    max_utterance_ms=2500))  # too long whole


def test_joined_utterances_keep_each_chunk_once() -> None:
    first, second = _utterance(1000, 3000), _utterance(2900, 4000)  # pre-roll over its end
    whole = joined(first, second, 3200)
    starts = [c.start_ms for c in whole.chunks]
    assert starts == list(range(1000, 4000, 20))
    assert (whole.start_ms, whole.last_voiced_ms, whole.decided_ms, whole.went_on_ms) == (
        1000, 3800, 4000, 3200)
