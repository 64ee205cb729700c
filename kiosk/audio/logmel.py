"""Whisper's log-mel spectrogram in numpy: 80 mel bins of a 25 ms Hann window every 10 ms at
16 kHz, log10 power clamped to 8 decades under the peak and scaled to about [-1, 1]. Whisper
(the recognizer) and Smart Turn (the end-of-turn model) both read it; no torch, no transformers.
"""

from __future__ import annotations

import functools

import numpy as np

from kiosk.audio.format import RATE_HZ

N_FFT = 400
HOP = 160  # samples per frame: 10 ms
N_MELS = 80


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above (as librosa's default)."""
    linear = hz / (200.0 / 3)
    log_part = 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(hz >= 1000.0, log_part, linear)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    linear = mel * (200.0 / 3)
    log_part = 1000.0 * np.exp((np.log(6.4) / 27.0) * (mel - 15.0))
    return np.where(mel >= 15.0, log_part, linear)


@functools.lru_cache(maxsize=2)
def mel_filters(n_mels: int = N_MELS) -> np.ndarray:
    """[n_mels, N_FFT // 2 + 1] triangular filters, Slaney-normalized (equal area)."""
    fft_hz = np.linspace(0.0, RATE_HZ / 2, N_FFT // 2 + 1)
    edges_hz = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(8000.0)),
                                      n_mels + 2))
    widths = np.diff(edges_hz)
    ramps = edges_hz[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (edges_hz[2:] - edges_hz[:-2]))[:, None]
    return weights.astype(np.float32)


@functools.lru_cache(maxsize=1)
def _window() -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)


def log_mel(audio: np.ndarray, frames: int | None = None) -> np.ndarray:
    """[N_MELS, frames] features of float audio in [-1, 1] at 16 kHz. Without `frames`: one
    frame per 10 ms of audio. With it: the audio is zero-padded at the end (or cut) first."""
    audio = np.asarray(audio, dtype=np.float32)
    if frames is not None:
        wanted = frames * HOP
        audio = (np.pad(audio, (0, wanted - len(audio))) if len(audio) < wanted
                 else audio[:wanted])
    padded = np.pad(audio, N_FFT // 2, mode="reflect" if len(audio) > N_FFT // 2 else "constant")
    count = 1 + (len(padded) - N_FFT) // HOP
    index = np.arange(N_FFT)[None, :] + HOP * np.arange(count)[:, None]
    spectrum = np.fft.rfft(padded[index] * _window(), axis=1)
    power = (spectrum.real ** 2 + spectrum.imag ** 2)[:-1]  # Whisper drops the last frame
    mel = np.asarray(mel_filters() @ power.T.astype(np.float32))
    logs = np.log10(np.maximum(mel, 1e-10))
    logs = np.maximum(logs, logs.max() - 8.0)
    scaled: np.ndarray = ((logs + 4.0) / 4.0).astype(np.float32)
    return scaled
