"""A microphone recording and a loudspeaker recording behind the duplex stream's interface, so
the demo, the tests and the benchmarks run the live loop's own code.

Time is the recording's. While the loop waits for audio, the next chunk comes at once (idle
time is skipped); while the loop works, the recording's clock runs with the wall clock, as a
device's would: chunks captured meanwhile queue up and queued playback plays. So the
loudspeaker recording holds each reply where a device would have played it.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from kiosk.audio.format import CHUNK_MS, CHUNK_SAMPLES, AudioChunk, Samples, padded_chunks
from kiosk.audio.stream import DuplexChunk


class RecordedStream:
    def __init__(self, mic: Samples | Iterable[Samples], *, tail_ms: int = 1000,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, keep_speaker: bool = True,
                 realtime: bool = False) -> None:
        """`mic`: the recording, or its pieces one after another (read lazily, so an hour
        of soak audio is never in memory at once)."""
        self._pieces: Iterator[Samples] = iter([mic] if isinstance(mic, np.ndarray) else mic)
        self._mic: Samples = np.zeros(0, dtype=np.int16)
        self._mic_pos = 0
        self._mic_done = False
        self._tail_ms = tail_ms  # quiet after the recording before the stream ends
        self._clock = clock
        self._sleep = sleep
        # Something works in the background (a reply being synthesized): then the recording's
        # time runs with the wall clock even while the loop waits for audio, as a device's.
        self.busy: Callable[[], bool] = lambda: False
        self.realtime = realtime  # always run with the wall clock (a recording played to a
        # screen, the avatar's lip-sync test)
        self._generated_wall = 0.0
        self._pending: collections.deque[DuplexChunk] = collections.deque()
        self._playback: collections.deque[Samples] = collections.deque()
        self._played: list[Samples] = []
        self._keep_speaker = keep_speaker  # off for long soaks: only the count is kept
        self.played_ms = 0
        self._generated_ms = 0
        self._quiet_ms = 0
        self._anchor: tuple[float, int] | None = None  # (wall s, stream ms) when the loop waited
        self._lock = threading.Lock()

    def _take_mic(self) -> Samples:
        """The next 20 ms of the recording (shorter or empty at its end)."""
        while len(self._mic) - self._mic_pos < CHUNK_SAMPLES and not self._mic_done:
            following = next(self._pieces, None)
            if following is None:
                self._mic_done = True
                break
            self._mic = np.concatenate([self._mic[self._mic_pos:], following])
            self._mic_pos = 0
        piece = self._mic[self._mic_pos:self._mic_pos + CHUNK_SAMPLES]
        self._mic_pos += len(piece)
        return piece

    def _generate(self) -> None:
        piece = self._take_mic()
        # The recording over, nothing playing and nothing being prepared: a reply still being
        # thought of or synthesized when the recording ends is played out, as on a device.
        quiet = len(piece) == 0 and not self._playback and not self.busy()
        if len(piece) < CHUNK_SAMPLES:
            piece = np.pad(piece, (0, CHUNK_SAMPLES - len(piece)))
        if self._playback:
            out = self._playback.popleft()
            self.played_ms += CHUNK_MS
        else:
            out = np.zeros(CHUNK_SAMPLES, np.int16)
        if self._keep_speaker:
            self._played.append(out)
        self._pending.append(DuplexChunk(AudioChunk(piece, self._generated_ms), out))
        self._generated_wall = self._clock()
        self._generated_ms += CHUNK_MS
        self._quiet_ms = self._quiet_ms + CHUNK_MS if quiet else 0

    def _catch_up(self) -> None:
        """Let the recording's time pass for the time the loop spent working."""
        if self._anchor is None:
            return
        wall_s, stream_ms = self._anchor
        target_ms = stream_ms + (self._clock() - wall_s) * 1000.0
        while self._generated_ms + CHUNK_MS <= target_ms and not self._exhausted:
            self._generate()

    @property
    def _exhausted(self) -> bool:
        return self._quiet_ms >= self._tail_ms

    def read(self, timeout_s: float) -> DuplexChunk | None:
        # read() runs on the capture thread, play() and the clocks on the loop's: one lock
        wait_s = 0.0
        with self._lock:
            self._catch_up()
            if not self._pending and self._anchor is not None and (
                    self.realtime or self.busy()):
                wall_s, stream_ms = self._anchor
                due_s = wall_s + (self._generated_ms + CHUNK_MS - stream_ms) / 1000.0
                wait_s = min(due_s - self._clock(), timeout_s)
        if wait_s > 0:
            self._sleep(wait_s)
        with self._lock:
            self._catch_up()
            if not self._pending:
                if self._exhausted:
                    return None
                self._generate()
                self._anchor = (self._clock(), self._generated_ms)
            return self._pending.popleft()

    def play(self, samples: Samples) -> float:
        with self._lock:
            self._catch_up()
            start_s = (self._generated_ms + len(self._playback) * CHUNK_MS) / 1000.0
            self._playback.extend(padded_chunks(samples))
            self._quiet_ms = 0
            return start_s

    def position_s(self) -> float:
        """The chunk playing now: the latest one handed out, plus the time since (at most its
        length; in accelerated time, no time passes)."""
        if self._generated_ms == 0:
            return 0.0
        into_s = min(CHUNK_MS / 1000.0, max(0.0, self._clock() - self._generated_wall))
        return (self._generated_ms - CHUNK_MS) / 1000.0 + into_s

    def stop_playback(self) -> None:
        with self._lock:
            self._catch_up()
            self._playback.clear()

    @property
    def playing(self) -> bool:
        return bool(self._playback)

    @property
    def ended(self) -> bool:
        return self._exhausted and not self._pending

    @property
    def clock_ms(self) -> int:
        with self._lock:
            self._catch_up()
            return self._generated_ms

    def reopen(self) -> None:
        """A recording does not go away."""

    def speaker(self) -> Samples:
        """Everything the loudspeaker played, from the start of the recording."""
        if not self._played:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self._played)
