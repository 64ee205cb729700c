"""Echo cancellation: what the loudspeaker played is taken out of what the microphone hears.

Modes (`echo.mode`): `hardware`, the microphone array cancels echo itself and audio passes
through; `speex`, software cancellation with libspeexdsp (Debian: libspeexdsp1) through ctypes,
fed the playback chunk the duplex stream pairs with each captured chunk, delayed by
`echo.delay_ms`, shaped by the loudspeaker's learned saturation (`loudspeaker.py`), with the
time average of its filter beside it (`echo_filter.py`); `off`. The speex state is not
thread-safe: one canceller lives in one single-worker executor.
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kiosk.audio.echo_filter import AveragedFilter, DcNotch, Floats, unnotched
from kiosk.audio.echo_path import EchoPath, PathWatch, ratio_db
from kiosk.audio.format import CHUNK_MS, CHUNK_SAMPLES, RATE_HZ, Samples
from kiosk.audio.loudspeaker import Saturation, SaturationEstimator
from kiosk.audio.stream import AudioStream
from kiosk.errors import KioskError

log = logging.getLogger(__name__)

# speex_echo.h / speex_preprocess.h request numbers
_ECHO_SET_SAMPLING_RATE = 24
_ECHO_GET_IMPULSE_RESPONSE_SIZE = 27
_ECHO_GET_IMPULSE_RESPONSE = 29
_PP_SET_DENOISE = 0
_PP_SET_ECHO_STATE = 24


def speex_available() -> bool:
    """libspeexdsp (Debian: libspeexdsp1) can be loaded."""
    return ctypes.util.find_library("speexdsp") is not None


def speexdsp_library() -> Any:
    """libspeexdsp with the echo canceller's and the preprocessor's signatures declared."""
    name = ctypes.util.find_library("speexdsp")
    if name is None:
        raise KioskError("echo", "echo.mode speex needs libspeexdsp, which is not installed",
                         "apt-get install libspeexdsp1, or set echo.mode hardware/off")
    lib = ctypes.CDLL(name)
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_echo_state_reset.argtypes = [ctypes.c_void_p]
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 3
    lib.speex_preprocess_state_init.restype = ctypes.c_void_p
    lib.speex_preprocess_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_preprocess_state_destroy.argtypes = [ctypes.c_void_p]
    lib.speex_preprocess_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_preprocess_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


class EchoCanceller(Protocol):
    name: str

    def process(self, mic: Samples, reference: Samples) -> Samples:
        """One 20 ms chunk: the microphone with the loudspeaker's part taken out."""
        ...

    def reset(self) -> None: ...


class PassThrough:
    """`hardware` (the array cancels) and `off`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def process(self, mic: Samples, reference: Samples) -> Samples:
        return mic

    def reset(self) -> None:
        pass


class DelayLine:
    """The reference, late by delay_ms (whole chunks): the loudspeaker's sound reaches the
    microphone after the output and input buffers, and the filter should not spend its
    length on pure delay."""

    def __init__(self, delay_ms: int) -> None:
        self._queue: collections.deque[Samples] = collections.deque(
            np.zeros(CHUNK_SAMPLES, dtype=np.int16) for _ in range(max(0, delay_ms) // CHUNK_MS))

    def push(self, chunk: Samples) -> Samples:
        if not self._queue:
            return chunk
        self._queue.append(chunk)
        return self._queue.popleft()


# The filter adapts once per frame: 10 ms frames (two per chunk) leave ~1 dB less residual echo
# than 20 ms ones once converged, on linear and soft-clipping rooms alike (kiosk bench echo).
FRAME_SAMPLES = CHUNK_SAMPLES // 2


# Each frame, the canceller's output is the filter's own or its time average's (echo_filter),
# whichever left less over about this many frames (exponential).
CHOICE_FRAMES = 20


# A frame the filters leave this much louder than the microphone (power; 3 dB) is the
# microphone's instead. Any louder at all also caught frames where the echo is near the noise
# and the two happen to add up (converged ERLE -0.1 dB on the echo bench).
LOUDER = 2.0


def _power(samples: Samples | Floats) -> float:
    return float(np.mean(np.asarray(samples, dtype=np.float64) ** 2))


# A learnt path is worth keeping once the canceller has heard this much echo since its start
# and takes this much off (the bench's rooms converge to ~30 dB; a path that takes less helps
# little and may be a room still being learnt).
KEEP_AFTER_MS = 10_000
KEEP_ERLE_DB = 15.0
START_MS = 1000  # the ERLE at a start: over this much of the first playback
ERLE_CHUNKS = 250  # the running ERLE: over about this many chunks of playback (exponential)


class SpeexCanceller:
    """libspeexdsp's MDF adaptive filter, the time average of that filter, and libspeexdsp's
    residual-echo suppressor."""

    name = "speex"

    def __init__(self, filter_length_ms: int = 256, delay_ms: int = 0, *,
                 suppress: bool = True, loudspeaker: SaturationEstimator | None = None,
                 average_s: float = 5.0) -> None:
        self._lib = speexdsp_library()
        # learns the loudspeaker's soft clipping; None: the reference is used as played
        self.loudspeaker = loudspeaker
        taps = RATE_HZ * filter_length_ms // 1000
        self._echo = self._lib.speex_echo_state_init(FRAME_SAMPLES, taps)
        rate = ctypes.c_int(RATE_HZ)
        self._lib.speex_echo_ctl(self._echo, _ECHO_SET_SAMPLING_RATE, ctypes.byref(rate))
        self._average: AveragedFilter | None = None
        if average_s > 0:
            size = ctypes.c_int(0)
            self._lib.speex_echo_ctl(self._echo, _ECHO_GET_IMPULSE_RESPONSE_SIZE,
                                     ctypes.byref(size))
            self._taps = np.zeros(size.value, dtype=np.int32)
            self._average = AveragedFilter(size.value, average_s)
        self._notch = DcNotch()
        self._chunks = 0
        self._own_power = self._averaged_power = 0.0
        self.frames = self.averaged_frames = 0  # how often the average's output was used
        self.louder_frames = 0  # frames the filters made louder (the microphone passed)
        self._pre: int | None = None
        if suppress:
            self._pre = self._lib.speex_preprocess_state_init(FRAME_SAMPLES, RATE_HZ)
            # the residual-echo suppressor works through the denoiser's gains (with the
            # denoiser off, libspeexdsp applies no gain at all)
            on = ctypes.c_int(1)
            self._lib.speex_preprocess_ctl(self._pre, _PP_SET_DENOISE, ctypes.byref(on))
            self._lib.speex_preprocess_ctl(self._pre, _PP_SET_ECHO_STATE,
                                           ctypes.c_void_p(self._echo))
        self._delay = DelayLine(delay_ms)
        self._delay_ms = delay_ms
        self._filter_taps = taps
        # a restored echo path (echo_path.py): a fixed pre-filter ahead of libspeexdsp, and
        # the watch that drops it if the room changed
        self._prefilter: AveragedFilter | None = None
        self._saved_taps = np.zeros(0)
        self.watch: PathWatch | None = None
        self.restarts = 0  # times the canceller started afresh (a restored path dropped)
        self._start_measures()

    def _start_measures(self) -> None:
        self._quiet = 0  # samples since the reference last played
        self._echo_ms = 0  # chunks where echo was possible, since the (re)start
        self._start_mic = self._start_left = 0.0
        self._mic_power = self._left_power = 0.0

    def restore(self, path: EchoPath) -> None:
        """Start from a saved echo path (its taps as a fixed pre-filter)."""
        self._saved_taps = np.asarray(path.taps, dtype=np.float64)
        prefilter = AveragedFilter(len(path.taps), every_chunks=1)
        prefilter.learn(unnotched(self._saved_taps))
        self._prefilter = prefilter
        self.watch = PathWatch()
        self._seed_average()
        if self.loudspeaker is not None:
            onset, knee = path.loudspeaker
            self.loudspeaker.current = Saturation(onset, knee)

    def _seed_average(self) -> None:
        """Behind a pre-filter, the time average starts from no correction at all (the
        pre-filter alone), not from libspeexdsp's first snapshot: a fresh filter fed a
        small residual adapts on the noise at first, and its early taps are mostly noise."""
        if self._average is not None and self._prefilter is not None:
            self._average.reset()
            self._average.learn(np.zeros(self._average.taps))

    def learnt(self) -> tuple[Floats, tuple[float, int], float] | None:
        """The whole echo path as learnt (pre-filter and libspeexdsp's filter averaged), the
        loudspeaker's saturation and the running ERLE; None until it is worth keeping."""
        erle = self.erle_db()
        if (self._echo_ms < KEEP_AFTER_MS or erle < KEEP_ERLE_DB or self._average is None
                or self._average.average is None
                or (self.watch is not None and self.watch.state == "watching")):
            return None
        taps = self._average.average.copy()
        if self._prefilter is not None:
            taps = taps + self._saved_taps
        current = self.loudspeaker.current if self.loudspeaker is not None else Saturation(0, 2)
        return taps, (current.onset, current.knee), erle

    def erle_db(self) -> float:
        """Microphone over what the filters leave, lately, while echo was possible."""
        return ratio_db(self._mic_power, self._left_power)

    def start_erle_db(self) -> float | None:
        """Over the first second of playback since the (re)start; None before."""
        if self._echo_ms < START_MS:
            return None
        return ratio_db(self._start_mic, self._start_left)

    def _drop_path(self, watch: PathWatch) -> None:
        log.warning("echo: the restored echo path does not fit the room (the pre-filter took "
                    "%.1f dB off over the last %.1f s of playback; it should take %.0f): "
                    "dropped; learning the room afresh", watch.erle_db,
                    watch.window_chunks * CHUNK_MS / 1000, watch.floor_db)
        self.watch = None
        self._prefilter = None
        self._lib.speex_echo_state_reset(self._echo)
        if self._average is not None:
            self._average.reset()
        self._own_power = self._averaged_power = 0.0
        self._start_measures()
        self.restarts += 1

    def process(self, mic: Samples, reference: Samples) -> Samples:
        ref = np.ascontiguousarray(self._delay.push(reference), dtype=np.int16)
        near = np.ascontiguousarray(mic, dtype=np.int16)
        if len(near) != CHUNK_SAMPLES or len(ref) != CHUNK_SAMPLES:
            return mic  # a short last chunk of a recording: nothing to learn from
        if self.loudspeaker is not None:
            self.loudspeaker.observe(near, ref)
            ref = self.loudspeaker.current.apply(ref)
        self._quiet = 0 if np.any(ref) else self._quiet + CHUNK_SAMPLES
        echo_possible = self._quiet < self._filter_taps + CHUNK_SAMPLES
        raw_power = _power(near)
        if self._prefilter is not None:
            # the saved path's echo out first: libspeexdsp learns what is left
            before = near
            near = np.clip(np.rint(near - self._prefilter.predict(ref)), -32768,
                           32767).astype(np.int16)
            if self.watch is not None and self.watch.observe(
                    raw_power, _power(near), echo_possible) == "dropped":
                self._drop_path(self.watch)
                near = before
        # the microphone notched as libspeexdsp notches it (the notch's state must follow
        # every chunk): what the average's echo is taken from, and what passes when the
        # filters make a frame louder
        notched = self._notch.apply(near)
        heard = np.clip(np.rint(notched), -32768, 32767).astype(np.int16)
        averaged = None
        if self._average is not None:
            echo = self._average.predict(ref)
            if self._average.ready and not self._average.silent:
                averaged = np.clip(np.rint(notched - echo), -32768, 32767).astype(np.int16)
        out = np.empty(CHUNK_SAMPLES, dtype=np.int16)
        left_power = 0.0  # what the filters left, before the residual-echo suppressor
        for start in range(0, CHUNK_SAMPLES, FRAME_SAMPLES):
            at = start * 2  # bytes
            self._lib.speex_echo_cancellation(self._echo, near.ctypes.data + at,
                                              ref.ctypes.data + at, out.ctypes.data + at)
            frame = slice(start, start + FRAME_SAMPLES)
            if averaged is not None:
                self._choose(out, averaged, frame)
            if _power(out[frame]) > _power(heard[frame]) * LOUDER:
                # Taking the echo out does not make a frame much louder: the filter diverged
                # (it adapted on a visitor talking over the avatar, or on an echo path there
                # is none) and would say its own guess of the avatar aloud. The microphone is
                # nearer the truth; the residual-echo suppressor still follows.
                out[frame] = heard[frame]
                self.louder_frames += 1
            left_power += _power(out[frame])
            if self._pre is not None:
                self._lib.speex_preprocess_run(self._pre, out.ctypes.data + at)
        self._measure(raw_power, left_power * FRAME_SAMPLES / CHUNK_SAMPLES, echo_possible)
        self._chunks += 1
        if self._average is not None and self._chunks % self._average.every_chunks == 0:
            self._lib.speex_echo_ctl(self._echo, _ECHO_GET_IMPULSE_RESPONSE,
                                     self._taps.ctypes.data)
            # libspeexdsp scales the taps by 32767 and by its FFT's length (two frames)
            self._average.learn(self._taps / (32767.0 * 2 * FRAME_SAMPLES))
        return out

    def _measure(self, mic_power: float, left_power: float, echo_possible: bool) -> None:
        if not echo_possible:
            return
        if self._echo_ms < START_MS:
            self._start_mic += mic_power
            self._start_left += left_power
        self._echo_ms += CHUNK_MS
        keep = 1.0 - 1.0 / ERLE_CHUNKS
        self._mic_power = keep * self._mic_power + (1 - keep) * mic_power
        self._left_power = keep * self._left_power + (1 - keep) * left_power

    def _choose(self, out: Samples, averaged: Samples, frame: slice) -> None:
        """Put the average's output into `out[frame]` if it has lately left less."""
        keep = 1.0 - 1.0 / CHOICE_FRAMES
        own_power = _power(out[frame])
        averaged_power = _power(averaged[frame])
        self._own_power = keep * self._own_power + (1 - keep) * own_power
        self._averaged_power = keep * self._averaged_power + (1 - keep) * averaged_power
        self.frames += 1
        if self._averaged_power < self._own_power:
            out[frame] = averaged[frame]
            self.averaged_frames += 1

    def reset(self) -> None:
        # the loudspeaker's saturation is kept: the same loudspeaker plays on
        self._lib.speex_echo_state_reset(self._echo)
        self._delay = DelayLine(self._delay_ms)
        if self._average is not None:
            self._average.reset()
        self._notch.reset()
        self._own_power = self._averaged_power = 0.0
        if self._prefilter is not None:  # the saved path stays; its history does not
            self._prefilter.clear_history()
            self._seed_average()
        self._start_measures()

    def close(self) -> None:
        if self._pre is not None:
            self._lib.speex_preprocess_state_destroy(self._pre)
            self._pre = None
        if self._echo:
            self._lib.speex_echo_state_destroy(self._echo)
            self._echo = None

    def __del__(self) -> None:
        self.close()


def make_canceller(mode: str, filter_length_ms: int = 256, delay_ms: int = 0,
                   loudspeaker: str = "auto") -> EchoCanceller:
    if mode == "speex":
        return speex_canceller(filter_length_ms, delay_ms, loudspeaker)
    return PassThrough(mode)


def speex_canceller(filter_length_ms: int = 256, delay_ms: int = 0, loudspeaker: str = "auto",
                    *, suppress: bool = True) -> SpeexCanceller:
    """`echo.mode speex` as configured; `loudspeaker` is `echo.loudspeaker` (auto: its
    saturation is learned; linear)."""
    learned = SaturationEstimator() if loudspeaker == "auto" else None
    return SpeexCanceller(filter_length_ms, delay_ms, suppress=suppress, loudspeaker=learned)


# ------------------------------------------------------------------ measurement


def erle_db(before: Samples | np.ndarray, after: Samples | np.ndarray) -> float:
    """Echo return loss enhancement: how much quieter the echo got, in dB."""
    p_before = float(np.mean(np.asarray(before, dtype=np.float64) ** 2))
    p_after = float(np.mean(np.asarray(after, dtype=np.float64) ** 2))
    return 10.0 * float(np.log10(max(p_before, 1e-9) / max(p_after, 1e-9)))


def estimate_delay_ms(mic: Samples, reference: Samples, max_ms: int = 500) -> float:
    """Where the reference best lines up in the microphone signal (cross-correlation)."""
    n = min(len(mic), len(reference))
    if n == 0:
        return 0.0
    a = mic[:n].astype(np.float64)
    b = reference[:n].astype(np.float64)
    size = 1 << (2 * n - 1).bit_length()
    corr = np.fft.irfft(np.fft.rfft(a, size) * np.conj(np.fft.rfft(b, size)), size)
    lags = corr[: min(n, RATE_HZ * max_ms // 1000)]
    return float(np.argmax(np.abs(lags))) * 1000.0 / RATE_HZ


def cancel(canceller: EchoCanceller, mic: Samples, reference: Samples) -> Samples:
    """Run a whole recording pair through a canceller, chunk by chunk."""
    n = min(len(mic), len(reference)) // CHUNK_SAMPLES * CHUNK_SAMPLES
    out = [canceller.process(mic[i:i + CHUNK_SAMPLES], reference[i:i + CHUNK_SAMPLES])
           for i in range(0, n, CHUNK_SAMPLES)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int16)


def probe_signal(seconds: float = 6.0, level_dbfs: float = -12.0, seed: int = 3) -> Samples:
    """Pink-ish noise bursts: every frequency the canceller must learn, at a fixed level."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE_HZ)
    white = rng.standard_normal(n + 16)
    pinkish = np.convolve(white, np.ones(4) / 4.0)[:n]
    pinkish *= 32768.0 * 10 ** (level_dbfs / 20.0) / max(float(np.std(pinkish)), 1e-9)
    return np.clip(pinkish, -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class EchoReport:
    mode: str
    delay_ms: float  # measured loudspeaker -> microphone, buffers included
    echo_level_db: float  # echo at the microphone relative to what was played
    erle_db: float  # after convergence (the last half of the probe)
    erle_first_s_db: float
    loudspeaker: str = ""  # the saturation learned over the probe ("" when none is learned)

    @property
    def inaudible(self) -> bool:
        """The microphone hears (almost) nothing of the loudspeaker."""
        return self.echo_level_db < -50

    def advice(self) -> str:
        if self.inaudible:
            return ("the microphone hears almost nothing of the loudspeaker: check the cable, "
                    "or the array's own cancellation works already")
        tips = []
        if self.mode == "speex" and self.delay_ms > 40:
            tips.append(f"set echo.delay_ms {int(self.delay_ms // 20 * 20 - 20)} so the filter "
                        "does not spend its length on buffering delay")
        if self.erle_db < 15:
            tips.append("cancellation is weak: lower the loudspeaker volume, move the microphone "
                        "away from it, or use echo.mode hardware with an AEC microphone array")
        elif self.erle_db < 25:
            tips.append("cancellation is moderate; the self-echo guard covers the rest")
        return "; ".join(tips) or "good"


def measure(mode: str, mic: Samples, reference: Samples, canceller: EchoCanceller
            ) -> EchoReport:
    """ERLE of a canceller over a recorded probe (mic and the reference played meanwhile)."""
    out = cancel(canceller, mic, reference)
    n = len(out)
    mic, reference = mic[:n], reference[:n]
    half, first = n // 2, min(n, RATE_HZ)
    learned = getattr(canceller, "loudspeaker", None)
    return EchoReport(mode, estimate_delay_ms(mic, reference),
                      -erle_db(reference, mic) if n else -120.0,
                      erle_db(mic[half:], out[half:]), erle_db(mic[:first], out[:first]),
                      str(learned.current) if isinstance(learned, SaturationEstimator) else "")


def play_and_record(stream: AudioStream, far: Samples, tail_s: float = 0.5,
                    timeout_s: float = 10.0) -> tuple[Samples, Samples]:
    """Play `far` on a running duplex stream and return (microphone, reference) as captured
    side by side, until it has played and `tail_s` more."""
    while stream.read(0.0) is not None:  # what was captured before the probe
        pass
    stream.play(far)
    mic: list[Samples] = []
    ref: list[Samples] = []
    got = 0
    wanted = len(far) + int(tail_s * RATE_HZ)
    deadline = time.monotonic() + len(far) / RATE_HZ + tail_s + timeout_s
    while got < wanted:
        if time.monotonic() > deadline:
            raise KioskError("audio", "the sound device stopped delivering audio during the "
                             "echo probe", "check the device; kiosk doctor lists it")
        item = stream.read(0.5)
        if item is not None:
            mic.append(item.mic.samples)
            ref.append(item.reference)
            got += len(item.mic.samples)
    return np.concatenate(mic), np.concatenate(ref)
