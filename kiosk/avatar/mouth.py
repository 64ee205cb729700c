"""The mouth track of a reply (pure): openness 0..1 per 10 ms frame, from the audio envelope.

Level in dBFS maps linearly from `closed_dbfs` (closed) to `open_dbfs` (wide open); the mouth
opens at once and closes a little slower, as lips do, so consonant gaps do not flicker.
"""

from __future__ import annotations

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples

FRAME_MS = 10


def mouth_track(samples: Samples, frame_ms: int = FRAME_MS, closed_dbfs: float = -45.0,
                open_dbfs: float = -12.0, release: float = 0.55) -> list[float]:
    frame = RATE_HZ * frame_ms // 1000
    n = len(samples) // frame
    if n == 0:
        return []
    frames = samples[: n * frame].astype(np.float64).reshape(n, frame)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    level = 20.0 * np.log10(np.maximum(rms, 1e-3) / 32768.0)
    target = np.clip((level - closed_dbfs) / (open_dbfs - closed_dbfs), 0.0, 1.0)
    out: list[float] = []
    value = 0.0
    for t in target:
        value = float(t) if t >= value else value * release + float(t) * (1.0 - release)
        out.append(round(value, 3))
    return out
