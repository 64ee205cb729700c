"""Simulated loudspeaker-room-microphone paths for the echo bench (numpy, seeded, no clocks).

A path: the loudspeaker (optionally soft-clipping), a decaying random impulse response with
a pure delay, and background noise. Deterministic for a given seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kiosk.audio.format import RATE_HZ, Samples, resample, to_int16

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Path:
    delay_ms: float  # loudspeaker to microphone, plus converter buffers
    reverb_ms: float  # time for the impulse response to decay by 60 dB
    snr_db: float  # speech level over the background noise
    nonlinear: bool  # a small loudspeaker driven into soft clipping
    seed: int

    def impulse_response(self) -> Floats:
        rng = np.random.default_rng(self.seed)
        delay = int(self.delay_ms * RATE_HZ / 1000)
        length = int(self.reverb_ms * RATE_HZ / 1000)
        decay = np.exp(-6.91 * np.arange(length) / max(length, 1))  # -60 dB at the end
        tail = rng.standard_normal(length) * decay
        ir = np.zeros(delay + length)
        ir[delay:] = 0.35 * tail / np.sqrt(np.sum(tail**2))
        ir[delay] += 0.6  # the direct sound
        return ir

    def loudspeaker(self, far: Floats) -> Floats:
        if not self.nonlinear:
            return far
        drive = 2.5  # full-scale peaks squashed to about 0.99 of tanh's range
        squashed: Floats = np.tanh(drive * far / 32768.0) / np.tanh(drive) * 32768.0
        return squashed

    def echo(self, far: Samples) -> Floats:
        played = self.loudspeaker(far.astype(np.float64))
        return np.convolve(played, self.impulse_response())[:len(far)]

    def noise(self, n: int, speech_rms: float) -> Floats:
        """Brown-ish room noise (more low than high), at snr_db under the speech level."""
        rng = np.random.default_rng(self.seed + 1000)
        white = rng.standard_normal(n + 64)
        coloured = np.convolve(white, np.ones(8) / 8.0)[: n]
        coloured *= speech_rms / (10 ** (self.snr_db / 20.0)) / max(float(np.std(coloured)),
                                                                    1e-9)
        return coloured


def paths(count: int, *, nonlinear: bool, seed: int = 1) -> list[Path]:
    rng = np.random.default_rng(seed)
    return [Path(float(rng.uniform(10, 80)), float(rng.uniform(100, 400)),
                 float(rng.uniform(10, 20)), nonlinear, seed * 100 + i) for i in range(count)]


def other_voice(samples: Samples, factor: float = 1.12) -> Samples:
    """A different voice from the same synthesizer: higher and quicker (read as if it had
    been recorded at factor times the rate)."""
    return resample(samples, int(RATE_HZ * factor), RATE_HZ)


def mix(*signals: Floats) -> Samples:
    n = max(len(s) for s in signals)
    total = np.zeros(n)
    for s in signals:
        total[: len(s)] += s
    return to_int16(total)


def rms(samples: Floats | Samples) -> float:
    return float(np.sqrt(np.mean(np.asarray(samples, dtype=np.float64) ** 2))) if len(
        samples) else 0.0
