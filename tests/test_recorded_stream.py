"""The recorded stream keeps the recording's time: idle waits are skipped, working time
passes as on a device (captured chunks queue up, queued playback plays)."""

from __future__ import annotations

import numpy as np

from kiosk.audio.format import CHUNK_SAMPLES
from kiosk.audio.recorded import RecordedStream


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def _mic(chunks: int) -> np.ndarray:
    return np.repeat(np.arange(1, chunks + 1, dtype=np.int16), CHUNK_SAMPLES)


def test_idle_reads_come_at_once_in_order() -> None:
    stream = RecordedStream(_mic(5), tail_ms=40, clock=FakeClock())
    seen = []
    while (item := stream.read(0.25)) is not None:
        seen.append((item.mic.start_ms, int(item.mic.samples[0])))
    assert seen == [(0, 1), (20, 2), (40, 3), (60, 4), (80, 5), (100, 0), (120, 0)]
    assert stream.ended


def test_working_time_queues_chunks_and_plays_the_reply() -> None:
    clock = FakeClock()
    stream = RecordedStream(_mic(20), tail_ms=100, clock=clock)
    assert stream.read(0.25) is not None  # chunk 0; the loop now "works" for 100 ms
    clock.now_s += 0.1
    reply = np.full(3 * CHUNK_SAMPLES, 7, dtype=np.int16)
    stream.play(reply)  # queued at stream time 100 ms: chunks 1-4 were captured meanwhile
    assert stream.clock_ms == 100
    starts = []
    references = []
    while (item := stream.read(0.25)) is not None:
        starts.append(item.mic.start_ms)
        references.append(int(item.reference[0]))
    assert starts[:4] == [20, 40, 60, 80]  # captured while working, delivered in order
    assert references[:7] == [0, 0, 0, 0, 7, 7, 7]  # the reply plays from 100 ms
    speaker = stream.speaker()
    assert speaker[100 * 16] == 7 and speaker[100 * 16 - 1] == 0
    assert not stream.playing


def test_stop_playback_drops_the_rest() -> None:
    stream = RecordedStream(_mic(3), tail_ms=20, clock=FakeClock())
    stream.play(np.ones(10 * CHUNK_SAMPLES, dtype=np.int16))
    assert stream.read(0.25) is not None and stream.playing
    stream.stop_playback()
    assert not stream.playing
    while stream.read(0.25) is not None:
        pass
    assert int(stream.speaker().sum()) == CHUNK_SAMPLES  # one chunk played, the rest dropped


def test_the_stream_ends_only_after_playback_and_the_tail() -> None:
    stream = RecordedStream(_mic(1), tail_ms=60, clock=FakeClock())
    stream.play(np.ones(5 * CHUNK_SAMPLES, dtype=np.int16))
    n = 0
    while stream.read(0.25) is not None:
        n += 1
    assert n == 5 + 3  # five chunks of reply (the recording ends under it), then 60 ms quiet


def test_a_reply_prepared_after_the_recording_ends_is_still_played_out() -> None:
    """The recording ends while the loop is still thinking of (or synthesizing) the answer to
    its last question: the stream waits, then plays the reply and its tail."""
    clock = FakeClock()
    stream = RecordedStream(_mic(3), tail_ms=40, clock=clock, sleep=lambda s: None)
    working = [True]
    stream.busy = lambda: working[0]
    for _ in range(3):
        assert stream.read(0.25) is not None
    clock.now_s += 5.0  # recognition, brain and synthesis take five seconds
    while stream.read(0.25) is not None and stream.clock_ms < 6000:
        pass
    assert not stream.ended
    reply = np.full(CHUNK_SAMPLES * 4, 7, dtype=np.int16)
    stream.play(reply)
    working[0] = False
    while stream.read(0.25) is not None:
        pass
    assert stream.ended
    played = stream.speaker()
    assert int((played == 7).sum()) == len(reply)
