"""Recorded audio: WAV files in and out, converted to and from the pipeline's format."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples, resample
from kiosk.errors import KioskError


def read_wav(path: Path) -> Samples:
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            frames = wav.readframes(wav.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise KioskError("audio", f"cannot read {path} as WAV ({exc})",
                         "give a PCM WAV file (16-bit preferred)") from exc
    if width != 2:
        raise KioskError("audio", f"{path} has {8 * width}-bit samples",
                         "convert it to 16-bit PCM (sox in.wav -b 16 out.wav)")
    samples = np.frombuffer(frames, dtype="<i2").astype(np.int16)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return resample(samples, rate)


def write_wav(path: Path, samples: Samples, rate_hz: int = RATE_HZ) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate_hz)
        wav.writeframes(samples.astype("<i2").tobytes())
