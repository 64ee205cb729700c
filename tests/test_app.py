"""The live loop's supervision with a stand-in stream: a device that goes quiet is reopened,
with back-off, and the loop goes on when it answers again."""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from kiosk.app import VoiceLoop
from kiosk.audio.format import CHUNK_SAMPLES, AudioChunk
from kiosk.audio.stream import DuplexChunk


@dataclass
class FlakyStream:
    """Delivers silence, stops (unplugged), fails to reopen twice, then works again."""

    fail_reopens: int = 2
    chunks: queue.Queue[DuplexChunk] = field(default_factory=lambda: queue.Queue(maxsize=500))
    reopen_calls: int = 0
    playing: bool = False
    ended: bool = False
    clock_ms: int = 0

    def read(self, timeout_s: float) -> DuplexChunk | None:
        try:
            return self.chunks.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def stop_playback(self) -> None:
        pass

    def feed(self, n: int) -> None:
        for i in range(n):
            silence = np.zeros(CHUNK_SAMPLES, dtype=np.int16)
            self.chunks.put(DuplexChunk(AudioChunk(silence, i * 20), silence))

    def reopen(self) -> None:
        self.reopen_calls += 1
        if self.reopen_calls <= self.fail_reopens:
            raise OSError("device not found")
        self.feed(10)

    def play(self, samples: object) -> float:
        return 0.0

    def position_s(self) -> float:
        return 0.0


class NoVad:
    def reset(self) -> None:
        pass

    def probability(self, samples: object) -> float:
        return 0.0


@pytest.mark.slow
def test_a_quiet_device_is_reopened_with_back_off() -> None:
    stream = FlakyStream()
    stream.feed(5)
    loop = VoiceLoop(stream, brain=None, vad=NoVad(), asr=None, voices={},  # type: ignore[arg-type]
                     device_timeout_s=0.3)
    stop = asyncio.Event()
    runner = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: runner.run_until_complete(loop.run(stop)))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not (stream.reopen_calls >= 3 and stream.chunks.empty()):
            assert time.monotonic() < deadline, f"reopens so far: {stream.reopen_calls}"
            time.sleep(0.05)
    finally:
        runner.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        loop.close()
    assert stream.reopen_calls == 3  # two failures (0.5 s, 1 s back-off), then it works
    assert loop.reopens == 3
    assert stream.chunks.empty()  # and the loop read on after the device came back


def test_run_checks_the_output_path_before_the_recording(tmp_path: Path) -> None:
    """--speaker-wav that is a folder, or under a file, fails at once naming it, before
    models load or the recording is processed."""
    import subprocess
    import sys

    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for bad, says in ((tmp_path, "is a folder"), (tmp_path / "afile" / "out.wav", "is a file")):
        start = time.monotonic()
        out = subprocess.run([sys.executable, "-m", "kiosk", "run", "--mic-wav", "missing.wav",
                              "--speaker-wav", str(bad)], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode != 0
        assert says in out.stderr and "--speaker-wav" in out.stderr
        assert time.monotonic() - start < 20  # nothing was loaded first
