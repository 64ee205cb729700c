"""The self-echo guard, pure: echo is gated and learned, a voice over it passes, transcripts that
repeat the reply are dropped; each decision is counted."""

from __future__ import annotations

import numpy as np

from kiosk.audio.format import CHUNK_SAMPLES
from kiosk.audio.guard import EchoGuard, GuardParams, echo_grams

rng = np.random.default_rng(3)


def _chunk(level: float) -> np.ndarray:
    return (rng.standard_normal(CHUNK_SAMPLES) * level).astype(np.int16)


def test_echo_alone_is_gated_and_learned() -> None:
    guard = EchoGuard()
    for _ in range(200):  # the avatar talks; the canceller leaves its echo 30 dB down
        reference = _chunk(3000)
        mic = _chunk(2000)
        residual = _chunk(60)
        assert guard.judge(residual, reference, 0.9, mic) == 0.0
    assert guard.gated_chunks == 200
    assert -40.0 < guard.echo_db < -25.0 and guard.cancel_db > 25.0


def test_a_voice_over_the_avatar_passes_after_confirmation() -> None:
    guard = EchoGuard()
    for _ in range(200):
        guard.judge(_chunk(60), _chunk(3000), 0.9, _chunk(2000))
    passed = [guard.judge(_chunk(1000), _chunk(3000), 0.9, _chunk(2200)) for _ in range(6)]
    assert passed[:2] == [0.0, 0.0] and passed[2:] == [0.9] * 4  # 3 of 5 above, then held
    assert guard.last_above


def test_nothing_playing_means_no_gating() -> None:
    guard = EchoGuard()
    silence = np.zeros(CHUNK_SAMPLES, dtype=np.int16)
    assert guard.judge(_chunk(500), silence, 0.8, _chunk(500)) == 0.8
    assert guard.gated_chunks == 0


def test_echo_gets_louder_the_estimate_follows() -> None:
    guard = EchoGuard(GuardParams())
    for _ in range(200):
        guard.judge(_chunk(30), _chunk(3000), 0.2, _chunk(2000))
    quiet = guard.echo_db
    for _ in range(50):  # someone moved the microphone: the residual is 8 dB louder...
        guard.judge(_chunk(75), _chunk(3000), 0.2, _chunk(2000))
    assert guard.echo_db == quiet  # ...which at first could be a voice: not learned
    for _ in range(150):
        guard.judge(_chunk(75), _chunk(3000), 0.2, _chunk(2000))
    assert guard.echo_db > quiet + 7.0  # learned within four seconds


def test_a_voice_not_yet_believed_is_not_learned_as_echo() -> None:
    guard = EchoGuard()
    for _ in range(600):
        guard.judge(_chunk(60), _chunk(3000), 0.9, _chunk(2000))
    echo, cancel = guard.echo_db, guard.cancel_db
    # a soft voice: 8 dB over the echo (under the margin), cancelled 7 dB worse than usual
    for _ in range(40):
        assert guard.judge(_chunk(150), _chunk(3000), 0.9, _chunk(2100)) == 0.0
    assert guard.echo_db == echo and cancel - guard.cancel_db < 2.0  # not 7 dB


def test_louder_playback_has_its_own_expected_echo() -> None:
    guard = EchoGuard()
    for _ in range(20):  # a soft-clipping loudspeaker: loud passages leave more residual
        for _ in range(30):
            guard.judge(_chunk(30), _chunk(1000), 0.9, _chunk(700))
        for _ in range(30):
            guard.judge(_chunk(300), _chunk(8000), 0.9, _chunk(5600))
    assert guard.judge(_chunk(300), _chunk(8000), 0.9, _chunk(5600)) == 0.0
    assert not guard.last_above  # expected at that level
    for _ in range(30):  # the echo of the loud passage has rung out
        guard.judge(_chunk(30), _chunk(1000), 0.9, _chunk(700))
    guard.judge(_chunk(300), _chunk(1000), 0.9, _chunk(700))
    assert guard.last_above  # the same residual during a soft passage is someone else


def test_young_guard_wants_more() -> None:
    def above_after(learned_chunks: int) -> bool:
        guard = EchoGuard()
        for _ in range(learned_chunks):
            guard.judge(_chunk(60), _chunk(3000), 0.9, _chunk(60))  # hardware: no cancelling
        guard.judge(_chunk(250), _chunk(3000), 0.9, _chunk(250))  # 12 dB over the echo
        return guard.last_above
    assert not above_after(50) and above_after(1100)  # 22 s of the avatar


def test_repeats_of_the_reply_are_dropped_other_questions_are_not() -> None:
    guard = EchoGuard()
    reply = ("The museum has a car park with 120 spaces next to the entrance. Parking costs "
             "300 yen per hour.")
    assert guard.is_repeat("the museum has a car park with one hundred and twenty", reply)
    assert not guard.is_repeat("how much does it cost", reply)
    assert not guard.is_repeat("where can i park my car", reply)
    ja = "駐車場は入口の横にあり、120台とめられます。料金は1時間300円です。"
    assert guard.is_repeat("料金は1時間300円です", ja)
    assert not guard.is_repeat("駐車場はいくらですか", ja)
    assert guard.dropped_transcripts == 2


def test_grams() -> None:
    assert echo_grams("Parking costs 300 yen") == {"parking cost", "cost 300", "300 yen"}
    assert echo_grams("料金") == {"料金"}


def test_weak_utterances_are_counted() -> None:
    guard = EchoGuard()
    assert guard.is_weak(0.1) and not guard.is_weak(0.8)
    assert guard.weak_utterances == 1


def test_a_voice_soon_after_the_avatar_starts_passes_when_nothing_echoes() -> None:
    # headphones or an array that cancels: the microphone hears no echo at all; the visitor
    # speaks 1.2 s into a reply whose level moves over 20 dB
    guard = EchoGuard()
    guard.judge(_chunk(3), _chunk(9000), 0.9, _chunk(3))  # a loud first word, then soft
    for _ in range(60):
        guard.judge(_chunk(3), _chunk(300), 0.9, _chunk(3))
    passed = [guard.judge(_chunk(1000), _chunk(9000), 0.9, _chunk(1000)) for _ in range(5)]
    assert passed[2:] == [0.9] * 3


def test_a_visitor_who_went_on_is_judged_on_the_words_after_the_pause() -> None:
    """The reply to "does the museum have a car park" repeats those words; heard whole with
    "for buses", the question is the visitor's, not the avatar's echo."""
    guard = EchoGuard()
    reply = "The museum has a car park with 120 spaces next to the entrance."
    whole = "the museum has a car park for buses"
    assert guard.is_repeat(whole, reply)  # judged whole, the opening makes it look an echo
    assert not guard.is_repeat(whole, reply, said_before="the museum has a car park")
    echo = "the museum has a car park with 120 spaces next to the entrance"
    assert guard.is_repeat(echo, reply, said_before="the museum has a car park")
    assert guard.dropped_transcripts == 2
