"""The echo path a canceller has learnt, kept across starts.

A kiosk does not move: its loudspeaker, microphone and cabinet are the same all day, so the
echo path learnt before a restart (a boot, a watchdog restart, a device reopen) is nearly
right after it. libspeexdsp hands its filter out but cannot take one back, so the saved path
seeds a fixed pre-filter ahead of it (`SpeexCanceller.restore`): the pre-filter takes the
echo it predicts out of the microphone, and libspeexdsp learns only what is left.

Kept in `echo-path.json` under the state folder, written like the configuration (aside,
fsync, rename). Restored only when the devices, the sample rate, the chunk and the filter
still match (`PathKey`); a file that cannot be read is ignored with a journal line. A path
restored into a room that changed (a moved loudspeaker) is watched (`PathWatch`) and dropped.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from kiosk.audio.echo_filter import Floats
from kiosk.fsutil import atomic_write_bytes

log = logging.getLogger(__name__)

FILE_NAME = "echo-path.json"
FORMAT = 1


def ratio_db(power: float, left_power: float) -> float:
    """How much quieter `left_power` is than `power`, in dB (an ERLE of summed powers)."""
    return 10.0 * math.log10(max(power, 1e-9) / max(left_power, 1e-9))


@dataclass(frozen=True)
class PathKey:
    """What the saved path is only valid for."""

    device: str  # input and output device names
    rate_hz: int  # the devices' sample rate
    chunk_samples: int
    filter_length_ms: int
    delay_ms: int

    def differences(self, other: PathKey) -> list[str]:
        mine, theirs = asdict(self), asdict(other)
        return [f"{k} {theirs[k]} (now {mine[k]})" for k in mine if mine[k] != theirs[k]]


@dataclass(frozen=True)
class LastStart:
    at_s: float  # unix time
    warm: bool  # a saved path was restored
    erle_db: float  # over the first second of playback, on the microphone as heard


@dataclass(frozen=True, eq=False)
class EchoPath:
    key: PathKey
    taps: Floats  # microphone samples per reference sample, after `delay_ms`
    loudspeaker: tuple[float, int]  # the learned saturation: (onset, knee)
    erle_db: float  # the canceller's, when saved
    saved_at_s: float
    last_start: LastStart | None = None


def encode(path: EchoPath) -> bytes:
    data = {"format": FORMAT, "key": asdict(path.key),
            "taps": [float(f"{t:.6g}") for t in path.taps],
            "loudspeaker": list(path.loudspeaker), "erle_db": round(path.erle_db, 2),
            "saved_at_s": path.saved_at_s,
            "last_start": None if path.last_start is None else asdict(path.last_start)}
    return json.dumps(data, separators=(",", ":")).encode()


def decode(raw: bytes) -> EchoPath:
    """Raises ValueError saying what is wrong."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not an echo path of format {FORMAT}")
    try:
        key = PathKey(**data["key"])
        taps = np.asarray(data["taps"], dtype=np.float64)
        onset, knee = data["loudspeaker"]
        last = data.get("last_start")
        path = EchoPath(key, taps, (float(onset), int(knee)), float(data["erle_db"]),
                        float(data["saved_at_s"]),
                        None if last is None else LastStart(float(last["at_s"]),
                                                            bool(last["warm"]),
                                                            float(last["erle_db"])))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a field is missing or wrong ({exc})") from None
    if taps.ndim != 1 or len(taps) == 0 or not np.all(np.isfinite(taps)):
        raise ValueError("its filter taps are empty or not finite")
    if len(taps) > key.rate_hz * key.filter_length_ms // 1000 * 2:
        raise ValueError("its filter is longer than its own filter length")
    return path


def save(file: Path, path: EchoPath) -> None:
    atomic_write_bytes(file, encode(path))


def read(file: Path) -> EchoPath | None:
    """The saved path, whatever it was saved for; None (with a journal line) when there is
    none or it cannot be read."""
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("echo: the saved echo path %s cannot be read (%s); it is ignored", file,
                    exc)
        return None
    try:
        return decode(raw)
    except ValueError as exc:
        log.warning("echo: the saved echo path %s is corrupt: %s; it is ignored and the "
                    "canceller learns the room afresh (the file is replaced at the next save)",
                    file, exc)
        return None


class Restorable(Protocol):
    """What a canceller offers to have its path kept (SpeexCanceller)."""

    restarts: int

    def restore(self, path: EchoPath) -> None: ...

    def learnt(self) -> tuple[Floats, tuple[float, int], float] | None:
        """(taps, loudspeaker, ERLE) once converged; None before."""
        ...

    def start_erle_db(self) -> float | None:
        """ERLE over the first second of playback since the (re)start; None until then."""
        ...


def learnt_path(canceller: Restorable, key: PathKey, at_s: float,
                last_start: LastStart | None = None) -> EchoPath | None:
    """What is worth keeping of the canceller's learnt path now; None before it converged."""
    learnt = canceller.learnt()
    if learnt is None:
        return None
    taps, loudspeaker, erle = learnt
    return EchoPath(key, taps, loudspeaker, erle, at_s, last_start)


@dataclass
class EchoMemory:
    """Restores the saved path at start and saves the learnt one after convergence, every
    `save_every_s` and at stop. Runs where the canceller runs (its executor)."""

    file: Path
    key: PathKey
    save_every_s: float = 300.0
    clock: Callable[[], float] = time.time
    restored: int = 0  # counted for the metrics
    refused: int = 0  # a saved path for other devices or settings
    saves: int = 0
    _warm: bool = False
    _last_save_s: float = field(default=-math.inf)
    _start_recorded: bool = False
    _last_start: LastStart | None = None
    _restarts: int = 0
    _restored: EchoPath | None = None  # what restore() started from

    def restore(self, canceller: Restorable) -> bool:
        saved = read(self.file)
        self._restarts = canceller.restarts
        if saved is None:
            return False
        differences = self.key.differences(saved.key)
        if differences:
            self.refused += 1
            log.info("echo: the saved echo path is for other settings (%s); learning the "
                     "room afresh", ", ".join(differences))
            return False
        canceller.restore(saved)
        self.restored += 1
        self._restored = saved
        self._warm = True
        self._last_start = saved.last_start
        log.info("echo: restored the echo path saved %s ago (ERLE %.1f dB then)",
                 describe_age(self.clock() - saved.saved_at_s), saved.erle_db)
        return True

    def after_chunk(self, canceller: Restorable) -> None:
        """Cheap unless there is something to write."""
        if canceller.restarts != self._restarts:  # the restored path was dropped
            self._restarts = canceller.restarts
            self._warm = False
            self._start_recorded = True  # the start was measured with the path that failed
        if not self._start_recorded:
            erle = canceller.start_erle_db()
            if erle is not None:
                self._start_recorded = True
                self._last_start = LastStart(self.clock(), self._warm, erle)
                log.info("echo: %s start, ERLE %.1f dB over the first second of playback",
                         "warm" if self._warm else "cold", erle)
                if self._restored is not None:
                    self._save(canceller, keep_old=True)
        if self.clock() - self._last_save_s >= self.save_every_s:
            self._save(canceller)

    def close(self, canceller: Restorable) -> None:
        self._save(canceller)

    def _save(self, canceller: Restorable, *, keep_old: bool = False) -> None:
        """`keep_old`: only the last start changes when nothing new has been learnt."""
        learnt = learnt_path(canceller, self.key, self.clock(), self._last_start)
        if learnt is None:
            saved = self._restored
            if not keep_old or saved is None:
                return
            path = EchoPath(saved.key, saved.taps, saved.loudspeaker, saved.erle_db,
                            saved.saved_at_s, self._last_start)
        else:
            path = learnt
            self._last_save_s = learnt.saved_at_s
        try:
            save(self.file, path)
        except OSError as exc:
            log.warning("echo: the echo path could not be saved to %s (%s); the next start "
                        "learns the room afresh", self.file, exc)
            return
        self.saves += learnt is not None


def describe_age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0.0, seconds):.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def describe(file: Path, now_s: float | None = None) -> str:
    """For `kiosk doctor --echo`: the saved path's age and its ERLE at the last start."""
    saved = read(file)
    if saved is None:
        return (f"no echo path saved yet ({file}): the canceller learns the room at each start "
                "and saves it once it has converged")
    now_s = time.time() if now_s is None else now_s
    text = (f"echo path saved {describe_age(now_s - saved.saved_at_s)} ago ({file}), ERLE "
            f"{saved.erle_db:.1f} dB then")
    last = saved.last_start
    if last is not None:
        text += (f"; last start ({describe_age(now_s - last.at_s)} ago) "
                 f"{'warm' if last.warm else 'cold'}, ERLE {last.erle_db:.1f} dB in its "
                 "first second of playback")
    return text


# ------------------------------------------------------------------ the watch (pure)


@dataclass
class PathWatch:
    """After a restore: does the saved path still fit the room? Over the chunks where echo is
    possible, the pre-filter's ERLE (microphone over pre-filtered, over `window_chunks`) is
    followed. Below `floor_db` for `drop_after_ms` of playback: dropped. Below `worse_db` over
    a whole window, at once: a pre-filter that makes the microphone louder adds echo, it
    removes none, and its error swings enough for the guard to take it for a voice (two false
    barge-ins in the 12 moved-loudspeaker rooms of the echo bench, at 1.4 s, when it waited
    2 s); a visitor talking over a path that fits still leaves it well above 0 dB. Above
    `floor_db` for `accept_after_ms`: accepted, and no longer watched (a visitor who talks
    over the avatar later lowers it, and must not cost the room its path)."""

    floor_db: float = 6.0
    worse_db: float = 0.0
    drop_after_ms: int = 2000
    accept_after_ms: int = 1000
    window_chunks: int = 25
    state: str = "watching"  # "accepted", "dropped"
    erle_db: float = 0.0
    _mic: deque[float] = field(default_factory=deque)
    _left: deque[float] = field(default_factory=deque)
    _below_ms: int = 0
    _above_ms: int = 0

    def observe(self, mic_power: float, left_power: float, echo_possible: bool,
                chunk_ms: int = 20) -> str:
        if self.state != "watching" or not echo_possible:
            return self.state
        self._mic.append(mic_power)
        self._left.append(left_power)
        if len(self._mic) > self.window_chunks:
            self._mic.popleft()
            self._left.popleft()
        self.erle_db = ratio_db(sum(self._mic), sum(self._left))
        if self.erle_db < self.floor_db:
            self._below_ms += chunk_ms
            self._above_ms = 0
        else:
            self._above_ms += chunk_ms
            self._below_ms = 0
        if self._below_ms >= self.drop_after_ms or (
                self.erle_db < self.worse_db and len(self._mic) >= self.window_chunks):
            self.state = "dropped"
        elif self._above_ms >= self.accept_after_ms and len(self._mic) >= self.window_chunks:
            self.state = "accepted"
        return self.state
