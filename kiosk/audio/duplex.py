"""Capture and playback as one duplex stream, so every captured chunk comes with the playback
chunk that was playing at that moment (the echo canceller's reference).

The PortAudio callback runs on its own thread: it takes the next 20 ms of queued playback,
and hands (captured, played) to a bounded queue; the asyncio side reads from there. Nothing
else crosses the thread boundary.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
from typing import Any

import numpy as np

from kiosk.audio.devices import device_rate, find_device, portaudio, rescan
from kiosk.audio.format import (
    CHUNK_SAMPLES,
    RATE_HZ,
    AudioChunk,
    Samples,
    padded_chunks,
    resample,
)
from kiosk.audio.stream import DuplexChunk

log = logging.getLogger(__name__)


class DuplexStream:
    def __init__(self, input_device: str, output_device: str, *, max_chunks: int = 500) -> None:
        self._input_name, self._output_name = input_device, output_device
        self._input = find_device(input_device, "input")
        self._output = find_device(output_device, "output")
        self.chunks: queue.Queue[DuplexChunk] = queue.Queue(maxsize=max_chunks)
        self._playback: collections.deque[Samples] = collections.deque()
        self._lock = threading.Lock()
        self._stream: Any = None
        self._frames = 0
        self._out_index = 0  # output position (16 kHz samples) of the next chunk to go out
        self._last_out: tuple[int, float] = (0, 0.0)  # (its position, PortAudio DAC time)
        self.rate_hz = RATE_HZ
        self.dropped = 0  # chunks lost because nobody read the queue in time
        self.statuses: list[str] = []

    def _device_rate(self) -> int:
        """16 kHz when both devices take it; else the output device's own rate (resampled
        at this edge, so the pipeline never sees another rate)."""
        output_rate = device_rate(self._output, "output")
        if output_rate == RATE_HZ and device_rate(self._input, "input") == RATE_HZ:
            return RATE_HZ
        return int(portaudio().query_devices(self._output, "output")["default_samplerate"])

    def start(self) -> None:
        sd = portaudio()
        self.rate_hz = self._device_rate()
        if self.rate_hz != RATE_HZ:
            log.info("audio: devices run at %d Hz; resampling to %d Hz at the edge",
                     self.rate_hz, RATE_HZ)
        self._stream = sd.Stream(samplerate=self.rate_hz,
                                 blocksize=self.rate_hz * CHUNK_SAMPLES // RATE_HZ, channels=1,
                                 dtype="int16", device=(self._input, self._output),
                                 callback=self._callback)
        self._stream.start()

    def stop(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
            finally:
                stream.close()

    def reopen(self) -> None:
        """After a device loss: close (whatever state it is in), find the devices by name
        again and start; raises when they are still missing."""
        try:
            self.stop()
        except Exception as exc:  # a dead device may fail to stop: it is gone either way
            log.info("audio: closing the lost stream: %s", exc)
        rescan()  # a replugged USB microphone (no stream of ours is open at this point)
        self._input = find_device(self._input_name, "input")
        self._output = find_device(self._output_name, "output")
        self.start()

    def read(self, timeout_s: float) -> DuplexChunk | None:
        try:
            return self.chunks.get(timeout=timeout_s)
        except queue.Empty:
            return None

    @property
    def ended(self) -> bool:
        return False  # a device may come back: the loop reopens it instead

    @property
    def clock_ms(self) -> int:
        return self._frames * 1000 // self.rate_hz

    def play(self, samples: Samples) -> float:
        """Queue audio after what is already queued; returns when its first sample is heard
        (output position, seconds)."""
        with self._lock:
            start_s = (self._out_index + len(self._playback) * CHUNK_SAMPLES) / RATE_HZ
            self._playback.extend(padded_chunks(samples))
        return start_s

    def position_s(self) -> float:
        """From the latest callback: the DAC time PortAudio gave for its first sample, and the
        stream's clock now (PortAudio's, the sound card's)."""
        with self._lock:
            index, dac_time = self._last_out
        stream = self._stream
        if stream is None or dac_time <= 0.0:
            return index / RATE_HZ
        return index / RATE_HZ + (float(stream.time) - dac_time)

    def stop_playback(self) -> None:
        """Barge-in: drop everything not yet played."""
        with self._lock:
            self._playback.clear()

    @property
    def playing(self) -> bool:
        return bool(self._playback)

    def _callback(self, indata: Any, outdata: Any, frames: int, time_info: Any,
                  status: Any) -> None:
        if status:
            self.statuses.append(str(status))
        with self._lock:
            out = self._playback.popleft() if self._playback else None
            dac = float(getattr(time_info, "outputBufferDacTime", 0.0) or 0.0)
            self._last_out = (self._out_index, dac or float(getattr(time_info, "currentTime",
                                                                     0.0) or 0.0))
            self._out_index += CHUNK_SAMPLES
        if out is None:
            out = np.zeros(CHUNK_SAMPLES, dtype=np.int16)
        if self.rate_hz == RATE_HZ:
            played, captured = out, indata[:, 0].copy()
        else:
            played = resample(out, RATE_HZ, self.rate_hz)
            captured = resample(indata[:, 0].copy(), self.rate_hz)
        outdata[:, 0] = np.resize(played, frames) if len(played) != frames else played
        start_ms = self._frames * 1000 // self.rate_hz
        self._frames += frames
        chunk = DuplexChunk(AudioChunk(captured, start_ms), out)
        try:
            self.chunks.put_nowait(chunk)
        except queue.Full:
            self.dropped += 1
