"""Barge-in through the turn loop's own code on a recording: the visitor talks over the avatar,
the reply stops within a bounded time, and what they said is the next turn. "stop" stops it
without a reply. A visitor who goes on soon after a pause that ended the turn is answered on
the whole."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np

from kiosk.app import AnswerHold, TurnRecord, VoiceLoop
from kiosk.audio.format import CHUNK_MS, RATE_HZ, Samples
from kiosk.audio.hearing import Hearing
from kiosk.audio.recorded import RecordedStream
from kiosk.brain import Brain
from kiosk.config import DEMO_SITE
from kiosk.retrieval.index import build_index
from kiosk.tts import Speech
from tests.fakes import EnergyVad, HashingEmbedder, ScriptedRecognizer


class LongVoice:
    """Every reply is 6 s of a quiet tone, in three sentences."""

    lang = "en"

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        tone = (np.sin(np.arange(2 * RATE_HZ) * 0.05) * 500).astype(np.int16)
        for _ in range(3):
            yield Speech(text, tone)


def _tone(seconds: float) -> Samples:
    tone: Samples = (np.sin(np.arange(int(seconds * RATE_HZ)) * 0.3) * 9000).astype(np.int16)
    return tone


def _quiet(seconds: float) -> Samples:
    return np.zeros(int(seconds * RATE_HZ), dtype=np.int16)


def _run(lines: list[str], mic: Samples) -> tuple[VoiceLoop, RecordedStream, list[TurnRecord],
                                                   list[str], list[str]]:
    brain = Brain(build_index(DEMO_SITE, HashingEmbedder()), HashingEmbedder())
    stream = RecordedStream(mic, clock=lambda: 0.0)  # processing takes no recording time
    turns: list[TurnRecord] = []
    states: list[str] = []
    stops: list[str] = []
    loop = VoiceLoop(stream, brain, EnergyVad(), ScriptedRecognizer(lines), {"en": LongVoice()},
                     on_turn=turns.append, on_state=states.append, on_stop=stops.append)
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    return loop, stream, turns, states, stops


def test_talking_over_the_avatar_stops_it_and_becomes_the_next_turn() -> None:
    # a question at 1 s; the reply starts at 2.4 s and would last 6 s; the visitor cuts in at 4 s
    mic = np.concatenate([_quiet(1.0), _tone(1.0), _quiet(2.0), _tone(0.8), _quiet(8.0)])
    loop, stream, turns, states, stops = _run(["where can i park my car",
                                               "what are the opening hours"], mic)
    assert [t.utterance for t in turns] == ["where can i park my car",
                                            "what are the opening hours"]
    assert stops == ["barge-in"] and loop.hearing.bargeins == 1
    speaker = stream.speaker()
    first_reply = np.flatnonzero(speaker)[0] * 1000 // RATE_HZ
    assert 2300 <= first_reply <= 2500
    # the first reply is cut within 80 ms of the visitor's first word (4.0 s): the guard's
    # three chunks of evidence, counted once, and the loudspeaker silenced before anything
    # else (it was 120 ms when the evidence was counted twice)...
    cut = int(np.flatnonzero(speaker[: int(4.5 * RATE_HZ)])[-1]) * 1000 // RATE_HZ
    assert 4000 < cut <= 4000 + 80, cut
    # ...and the second reply follows the second question
    assert turns[1].reply_start_ms > 4800
    assert "speaking" in states and states[-1] == "idle"
    assert loop.guard.weak_utterances == 0 and loop.errors == 0


def test_stop_stops_without_a_reply() -> None:
    mic = np.concatenate([_quiet(1.0), _tone(1.0), _quiet(2.0), _tone(0.5), _quiet(8.0)])
    _, stream, turns, _, stops = _run(["where can i park my car", "stop"], mic)
    assert [t.act for t in turns] == [None, "stop"]
    assert turns[1].reply == ""
    speaker = stream.speaker()
    assert not speaker[int(4.3 * RATE_HZ):].any()  # silent from the barge-in on
    assert stops == ["barge-in"]


def test_a_short_click_over_the_avatar_does_not_stop_it() -> None:
    # a sound (one the VAD takes for speech) a chunk shorter than barge-in's evidence
    click_ms = Hearing.bargein_ms - CHUNK_MS
    mic = np.concatenate([_quiet(1.0), _tone(1.0), _quiet(2.0), _tone(click_ms / 1000),
                          _quiet(8.0)])
    _, stream, turns, _, stops = _run(["where can i park my car"], mic)
    assert stops == [] and len(turns) == 1
    speaker = stream.speaker()
    assert np.count_nonzero(speaker) > 5.9 * RATE_HZ  # the whole reply played


class SpeculatingRecognizer(ScriptedRecognizer):
    """Logs when the loop asks it to begin early (stream ms of audio heard so far), to
    forget, and to finish."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.heard_ms = 0
        self.calls: list[tuple[str, int]] = []

    def start(self) -> None:
        self.heard_ms = 0

    def accept(self, samples: Samples) -> str:
        self.heard_ms += len(samples) * 1000 // RATE_HZ
        return ""

    def speculate(self) -> None:
        self.calls.append(("speculate", self.heard_ms))

    def withdraw(self) -> None:
        self.calls.append(("withdraw", self.heard_ms))

    def speculation(self) -> str:
        return self.lines[0] if self.lines else ""

    def finish(self) -> str:
        self.calls.append(("finish", self.heard_ms))
        return super().finish()


def test_the_recognizer_begins_at_the_hush_before_the_turn_is_judged() -> None:
    class Finished:
        def complete(self, samples: Samples) -> float:
            return 0.9

    # a word, a 120 ms gap (a hush, no pause), more words, then silence
    mic = np.concatenate([_quiet(1.0), _tone(0.6), _quiet(0.12), _tone(0.6), _quiet(3.0)])
    asr = SpeculatingRecognizer(["Where can I park my car?"])
    brain = Brain(build_index(DEMO_SITE, HashingEmbedder()), HashingEmbedder())
    turns: list[TurnRecord] = []
    loop = VoiceLoop(RecordedStream(mic, clock=lambda: 0.0), brain, EnergyVad(), asr,
                     {"en": LongVoice()}, on_turn=turns.append, turn_model=Finished())
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    kinds = [name for name, _ in asr.calls]
    assert kinds == ["speculate", "withdraw", "speculate", "finish"], asr.calls
    # begun 100 ms into each silence (the pre-roll of 300 ms is heard too), and the turn
    # ended at the 160 ms pause, where the model was asked
    first_ms, second_ms = asr.calls[0][1], asr.calls[2][1]
    assert first_ms == 300 + 600 + 100 and second_ms == 300 + 1320 + 100
    assert [t.utterance for t in turns] == ["Where can I park my car?"]
    assert turns[0].eos_decided_ms - turns[0].last_voiced_ms == 160 + CHUNK_MS


def _finished_ms(asr: SpeculatingRecognizer) -> list[int]:
    """How much audio the recognizer had heard at each finish."""
    return [ms for name, ms in asr.calls if name == "finish"]


def _paused_question(pause_s: float) -> tuple[VoiceLoop, SpeculatingRecognizer, list[TurnRecord],
                                              list[str]]:
    class Finished:  # every pause sounds like the end of a question
        def complete(self, samples: Samples) -> float:
            return 0.9

    mic = np.concatenate([_quiet(1.0), _tone(0.6), _quiet(pause_s), _tone(0.6), _quiet(8.0)])
    asr = SpeculatingRecognizer(["Can you explain?", "Can you explain that in more detail?"])
    brain = Brain(build_index(DEMO_SITE, HashingEmbedder()), HashingEmbedder())
    turns: list[TurnRecord] = []
    stops: list[str] = []
    loop = VoiceLoop(RecordedStream(mic, clock=lambda: 0.0), brain, EnergyVad(), asr,
                     {"en": LongVoice()}, on_turn=turns.append, on_stop=stops.append,
                     turn_model=Finished())
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    return loop, asr, turns, stops


def test_a_visitor_who_goes_on_after_a_pause_is_answered_on_the_whole() -> None:
    # "can you explain" ... 600 ms ... "that in more detail": the model took the pause for the
    # end and the avatar began; the visitor's voice stops it, and the whole is answered
    loop, asr, turns, stops = _paused_question(0.6)
    assert [t.utterance for t in turns] == ["Can you explain?",
                                            "Can you explain that in more detail?"]
    assert stops == ["barge-in"]
    # (heard a chunk or two late over the avatar's voice)
    assert turns[0].went_on_ms == 0 and 2200 <= turns[1].went_on_ms <= 2260
    assert turns[1].speech_start_ms == turns[0].speech_start_ms  # one utterance
    # the recognizer heard the opening words again, with the rest (pre-roll 300 ms each)
    assert _finished_ms(asr)[1] >= 300 + 600 + 600 + 600
    # the history holds the whole question once, not its opening as an exchange of its own
    assert [ex.user for ex in loop.history] == ["Can you explain that in more detail?"]


def test_a_visitor_who_speaks_again_later_starts_a_turn_of_their_own() -> None:
    loop, asr, turns, stops = _paused_question(1.5)
    assert [t.went_on_ms for t in turns] == [0, 0]
    assert stops == ["barge-in"]  # talking over the reply still stops it
    assert turns[1].speech_start_ms > turns[0].last_voiced_ms + 1000
    assert _finished_ms(asr)[1] < 300 + 600 + 200  # its own words alone
    assert [ex.user for ex in loop.history] == ["Can you explain?",
                                                "Can you explain that in more detail?"]


class AcknowledgingVoice(LongVoice):
    """Says "Okay." as 300 ms of a higher tone, anything else as `LongVoice` does."""

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        if text == "Okay.":
            yield Speech(text, (np.sin(np.arange(RATE_HZ * 3 // 10) * 0.2) * 500
                                ).astype(np.int16))
            return
        yield from super().synthesize(text, lead=lead)


def _held(pause_s: float | None, hold_ms: int, finished: float = 0.9,
          lines: tuple[str, ...] = ("Can you explain?", "Can you explain that in more detail?"),
          ) -> tuple[RecordedStream, list[TurnRecord], list[str]]:
    """One question (said in two halves `pause_s` apart, or whole), answered with the
    answer held for `hold_ms` behind an acknowledgement; every pause sounds `finished`."""
    class Finished:
        def complete(self, samples: Samples) -> float:
            return finished

    said = ([_tone(0.6), _quiet(pause_s), _tone(0.6)] if pause_s is not None
            else [_tone(1.2)])
    mic = np.concatenate([_quiet(1.0), *said, _quiet(9.0)])
    asr = SpeculatingRecognizer(list(lines))
    brain = Brain(build_index(DEMO_SITE, HashingEmbedder()), HashingEmbedder())
    turns: list[TurnRecord] = []
    stops: list[str] = []
    stream = RecordedStream(mic, clock=lambda: 0.0)
    loop = VoiceLoop(stream, brain, EnergyVad(), asr, {"en": AcknowledgingVoice()},
                     on_turn=turns.append, on_stop=stops.append, turn_model=Finished(),
                     hold=AnswerHold(hold_ms, {"en": ("Okay.",)}))
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    return stream, turns, stops


def test_the_answer_waits_for_the_pause_behind_an_acknowledgement() -> None:
    stream, turns, stops = _held(None, 800)
    assert len(turns) == 1 and stops == [] and turns[0].acknowledged
    turn = turns[0]
    # the acknowledgement at once (the turn ends at the 160 ms pause), the answer when the
    # visitor has been quiet 800 ms
    assert turn.reply_start_ms - turn.last_voiced_ms <= 160 + 2 * CHUNK_MS
    assert 800 <= turn.answer_start_ms - turn.last_voiced_ms <= 800 + CHUNK_MS
    speaker = stream.speaker()
    ack = speaker[turn.reply_start_ms * RATE_HZ // 1000:][:RATE_HZ * 3 // 10]
    gap = speaker[turn.reply_start_ms * RATE_HZ // 1000 + len(ack):
                  turn.answer_start_ms * RATE_HZ // 1000]
    assert np.count_nonzero(ack) > 0.9 * len(ack) and not gap.any()
    assert np.count_nonzero(speaker[turn.answer_start_ms * RATE_HZ // 1000:]) > 5.9 * RATE_HZ


def test_a_visitor_who_goes_on_hears_the_acknowledgement_and_never_the_half_answer() -> None:
    # the pause (600 ms) ends the turn at 160 ms and "Okay." begins; the visitor goes on
    # during it, and the answer to "Can you explain?" is never played
    stream, turns, stops = _held(0.6, 800)
    assert [t.utterance for t in turns] == ["Can you explain?",
                                            "Can you explain that in more detail?"]
    assert stops == ["barge-in"]
    opening, whole = turns
    assert opening.acknowledged and opening.answer_start_ms == 0
    assert whole.went_on_ms and whole.answer_start_ms - whole.last_voiced_ms >= 800
    speaker = stream.speaker()
    # between the opening's acknowledgement and the whole's: only that acknowledgement's sound
    heard = speaker[opening.reply_start_ms * RATE_HZ // 1000:whole.reply_start_ms * RATE_HZ
                    // 1000]
    assert 0 < np.count_nonzero(heard) <= RATE_HZ * 3 // 10


def test_without_a_hold_the_answer_begins_at_once() -> None:
    _, turns, _ = _held(None, 0)
    assert not turns[0].acknowledged
    assert turns[0].answer_start_ms == turns[0].reply_start_ms
    assert turns[0].reply_start_ms - turns[0].last_voiced_ms <= 160 + 2 * CHUNK_MS


def test_a_turn_decided_late_is_answered_without_an_acknowledgement() -> None:
    # the pause sounds unfinished: the turn ends after asr.incomplete_silence_ms (1 s), when
    # the 800 ms the answer would wait have passed: "Okay." would only delay it
    _, turns, _ = _held(None, 800, finished=0.1)
    turn = turns[0]
    assert turn.eos_decision_ms >= 1000 and not turn.acknowledged
    assert turn.answer_start_ms == turn.reply_start_ms
    assert turn.reply_start_ms - turn.eos_decided_ms <= 2 * CHUNK_MS


def test_a_greeting_is_returned_at_once() -> None:
    # a social reply is no answer to half a question: no "Okay." before "Hello!", no wait
    _, turns, _ = _held(None, 800, lines=("Good morning.",))
    turn = turns[0]
    assert turn.act == "greeting" and not turn.acknowledged
    assert turn.answer_start_ms == turn.reply_start_ms
    assert turn.reply_start_ms - turn.last_voiced_ms <= 160 + 2 * CHUNK_MS
