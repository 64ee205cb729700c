"""Hearing, pure (no clocks, no models): barge-in comes from the guard's evidence beside the
VAD, so a soft onset the VAD is slow to call speech still stops the avatar quickly; the
avatar's own echo never does."""

from __future__ import annotations

import numpy as np

from kiosk.audio.echo import PassThrough
from kiosk.audio.format import CHUNK_MS, CHUNK_SAMPLES, AudioChunk, Samples
from kiosk.audio.hearing import Hearing
from kiosk.audio.stream import DuplexChunk

rng = np.random.default_rng(5)


class ScriptedVad:
    """The probability the test says, whatever the audio."""

    def __init__(self) -> None:
        self.next = 0.0

    def reset(self) -> None:
        pass

    def probability(self, samples: Samples) -> float:
        return self.next


def _noise(level: float) -> Samples:
    return (rng.standard_normal(CHUNK_SAMPLES) * level).astype(np.int16)


def _chunk(at_ms: int, mic: Samples, reference: Samples) -> DuplexChunk:
    return DuplexChunk(AudioChunk(mic, at_ms), reference)


def _hearing_after_avatar_alone(vad: ScriptedVad) -> tuple[Hearing, int]:
    # an array that cancels in hardware: what reaches us is the avatar's echo 30 dB down
    hearing = Hearing(PassThrough("hardware"), vad)
    at_ms = 0
    vad.next = 0.9  # the VAD hears the echo as speech: the guard must hold it back
    for _ in range(800):
        heard = hearing.hear(_chunk(at_ms, _noise(100), _noise(3000)), speaking=True)
        assert not heard.bargein and not heard.events
        at_ms += CHUNK_MS
    return hearing, at_ms


def test_a_soft_onset_stops_the_avatar_within_a_few_chunks() -> None:
    vad = ScriptedVad()
    hearing, at_ms = _hearing_after_avatar_alone(vad)
    vad.next = 0.3  # a voice 18 dB over the echo, but the VAD is not sure yet
    stopped_after = None
    for k in range(15):
        if hearing.hear(_chunk(at_ms, _noise(800), _noise(3000)), speaking=True).bargein:
            stopped_after = (k + 1) * CHUNK_MS
            break
        at_ms += CHUNK_MS
    # 3 chunks for the guard to believe it, and they count towards the 60 ms of it (once)
    assert stopped_after is not None and stopped_after <= 60, stopped_after
    assert not hearing.segmenter.in_speech  # the VAD has not started an utterance yet
    assert hearing.bargeins == 1


def test_a_voice_the_vad_hears_only_once_stops_the_avatar() -> None:
    vad = ScriptedVad()
    hearing, at_ms = _hearing_after_avatar_alone(vad)
    stopped = []
    for k in range(10):  # loud over the echo; the VAD says speech once, in the 4th chunk
        vad.next = 0.3 if k == 3 else 0.1
        stopped.append(hearing.hear(_chunk(at_ms, _noise(800), _noise(3000)), speaking=True
                                    ).bargein)
        at_ms += CHUNK_MS
    assert stopped.index(True) <= 6 and hearing.bargeins == 1


def test_a_loud_noise_the_vad_rejects_does_not_stop_the_avatar() -> None:
    vad = ScriptedVad()
    hearing, at_ms = _hearing_after_avatar_alone(vad)
    vad.next = 0.05  # a door: loud, but nothing like speech
    for _ in range(25):
        assert not hearing.hear(_chunk(at_ms, _noise(3000), _noise(3000)), speaking=True).bargein
        at_ms += CHUNK_MS
    assert hearing.bargeins == 0
