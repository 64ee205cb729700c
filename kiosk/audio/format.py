"""The one audio format of the pipeline, declared once: 16 kHz, 16-bit, mono, 20 ms chunks,
each stamped with its start time in ms. Anything else is converted at the edges."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

RATE_HZ = 16_000
CHUNK_MS = 20
CHUNK_SAMPLES = RATE_HZ * CHUNK_MS // 1000

Samples = npt.NDArray[np.int16]


@dataclass(frozen=True)
class AudioChunk:
    samples: Samples  # CHUNK_SAMPLES int16 values (the last chunk of a stream may be shorter)
    start_ms: int

    @property
    def end_ms(self) -> int:
        return self.start_ms + len(self.samples) * 1000 // RATE_HZ


def to_int16(samples: npt.NDArray[np.floating[Any]] | npt.NDArray[np.integer[Any]]) -> Samples:
    """Float audio in [-1, 1] or integer audio in int16 scale, clipped to int16."""
    data = np.asarray(samples)
    if np.issubdtype(data.dtype, np.floating) and np.abs(data).max(initial=0.0) <= 1.0:
        data = data * 32767.0
    return np.clip(np.rint(data), -32768, 32767).astype(np.int16)


def resample(samples: Samples, rate_hz: int, target_hz: int = RATE_HZ) -> Samples:
    """Linear-interpolation resampling with a short moving-average anti-alias when going down:
    enough for speech at the edges of the pipeline (TTS voices at 22.05 or 48 kHz)."""
    if rate_hz == target_hz or len(samples) == 0:
        return samples
    data = samples.astype(np.float64)
    if target_hz < rate_hz:
        width = max(1, round(rate_hz / target_hz))
        if width > 1:
            data = np.convolve(data, np.ones(width) / width, mode="same")
    n_out = round(len(data) * target_hz / rate_hz)
    positions = np.arange(n_out) * (rate_hz / target_hz)
    return to_int16(np.interp(positions, np.arange(len(data)), data))


def chunks(samples: Samples, start_ms: int = 0) -> Iterator[AudioChunk]:
    for offset in range(0, len(samples), CHUNK_SAMPLES):
        yield AudioChunk(samples[offset:offset + CHUNK_SAMPLES],
                         start_ms + offset * 1000 // RATE_HZ)


def padded_chunks(samples: Samples) -> list[Samples]:
    """Whole 20 ms chunks for the loudspeaker queue; the last one padded with silence."""
    out = []
    for offset in range(0, len(samples), CHUNK_SAMPLES):
        piece = samples[offset:offset + CHUNK_SAMPLES]
        if len(piece) < CHUNK_SAMPLES:
            piece = np.pad(piece, (0, CHUNK_SAMPLES - len(piece)))
        out.append(piece)
    return out


def level_dbfs(samples: Samples) -> float:
    """RMS level relative to full scale; -120 for silence."""
    if len(samples) == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))
    return max(-120.0, 20.0 * float(np.log10(max(rms, 1e-9) / 32768.0)))


CLIP_LEVEL = 32_000  # |sample| at or above this counts as clipped


def clipped_fraction(samples: Samples) -> float:
    if len(samples) == 0:
        return 0.0
    return float(np.count_nonzero(np.abs(samples.astype(np.int32)) >= CLIP_LEVEL)) / len(samples)
