"""The echo path kept across starts: saved after convergence, restored when the devices and
settings match, refused when they do not, dropped when the room changed, ignored (with a
journal line) when the file is corrupt. Real libspeexdsp on simulated rooms."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from kiosk.audio.echo import SpeexCanceller, cancel, erle_db, probe_signal, speex_available
from kiosk.audio.echo_filter import notch_signal, unnotched
from kiosk.audio.echo_path import (
    FILE_NAME,
    EchoMemory,
    EchoPath,
    LastStart,
    PathKey,
    PathWatch,
    decode,
    describe,
    encode,
    read,
    save,
)
from kiosk.audio.format import CHUNK_MS, CHUNK_SAMPLES, RATE_HZ, AudioChunk
from kiosk.audio.guard import EchoGuard
from kiosk.audio.hearing import Hearing
from kiosk.audio.stream import DuplexChunk
from kiosk.bench.room import Path as Room
from kiosk.bench.room import mix

needs_speex = pytest.mark.skipif(not speex_available(), reason="libspeexdsp not installed")

KEY = PathKey("usb mic -> usb speaker", RATE_HZ, CHUNK_SAMPLES, 256, 0)
ROOM = Room(delay_ms=30.0, reverb_ms=200.0, snr_db=40.0, nonlinear=False, seed=7)
MOVED = Room(delay_ms=70.0, reverb_ms=300.0, snr_db=40.0, nonlinear=False, seed=8)


class Clock:
    def __init__(self) -> None:
        self.now_s = 1_000_000.0

    def __call__(self) -> float:
        return self.now_s


def _speechlike(seconds: float, seed: int) -> np.ndarray:
    """Noise in syllable-rate bursts with pauses, as speech comes. (On steady noise,
    libspeexdsp's filter converges but the taps it hands out do not match it: most of its
    partitions are constrained only now and then.)"""
    x = probe_signal(seconds, level_dbfs=-20, seed=seed).astype(np.float64)
    t = np.arange(len(x)) / RATE_HZ
    phase = np.random.default_rng(seed).uniform(0, 6)
    envelope = (np.clip(1.2 * np.sin(2 * np.pi * 3.3 * t + phase), 0, None)
                * (np.sin(2 * np.pi * 0.4 * t) > -0.5))
    return np.clip(x * envelope, -32768, 32767).astype(np.int16)


def _heard(room: Room, far: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    echo = room.echo(far)
    return mix(echo, room.noise(len(far), float(np.sqrt(np.mean(echo ** 2))))), echo


def _converged(room: Room, seconds: float = 20.0) -> SpeexCanceller:
    canceller = SpeexCanceller(256, suppress=False)
    far = _speechlike(seconds, seed=1)
    cancel(canceller, _heard(room, far)[0], far)
    return canceller


def _first_second_erle(canceller: SpeexCanceller, room: Room) -> float:
    far = _speechlike(1.0, seed=2)  # other sound than the path was learnt on
    mic, echo = _heard(room, far)
    out = cancel(canceller, mic, far)
    noise = mic.astype(np.float64) - echo
    return erle_db(notch_signal(echo), out - notch_signal(noise))


def _memory(tmp_path: Path, clock: Clock, key: PathKey = KEY) -> EchoMemory:
    return EchoMemory(tmp_path / FILE_NAME, key, clock=clock)


@needs_speex
def test_a_converged_path_is_saved_and_a_restart_starts_from_it(tmp_path: Path) -> None:
    clock = Clock()
    learnt = _converged(ROOM)
    memory = _memory(tmp_path, clock)
    memory.after_chunk(learnt)
    assert memory.saves == 1 and (tmp_path / FILE_NAME).is_file()
    assert not list(tmp_path.glob(f".{FILE_NAME}.*"))  # written aside, then renamed

    cold = _first_second_erle(SpeexCanceller(256, suppress=False), ROOM)
    clock.now_s += 3600
    warm_canceller = SpeexCanceller(256, suppress=False)
    assert _memory(tmp_path, clock).restore(warm_canceller)
    warm = _first_second_erle(warm_canceller, ROOM)
    assert cold < 10 and warm >= 20, (cold, warm)


@needs_speex
def test_a_canceller_that_has_not_converged_saves_nothing(tmp_path: Path) -> None:
    memory = _memory(tmp_path, Clock())
    memory.after_chunk(_converged(ROOM, seconds=2.0))
    memory.close(_converged(ROOM, seconds=2.0))
    assert memory.saves == 0 and not (tmp_path / FILE_NAME).exists()


@needs_speex
def test_a_path_saved_for_other_devices_or_settings_is_refused(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    _memory(tmp_path, clock).after_chunk(_converged(ROOM))
    for other in (PathKey(KEY.device, 48_000, CHUNK_SAMPLES, 256, 0),
                  PathKey("hdmi -> hdmi", RATE_HZ, CHUNK_SAMPLES, 256, 0),
                  PathKey(KEY.device, RATE_HZ, CHUNK_SAMPLES, 128, 0)):
        memory = _memory(tmp_path, clock, other)
        canceller = SpeexCanceller(256, suppress=False)
        with caplog.at_level(logging.INFO, logger="kiosk.audio.echo_path"):
            assert not memory.restore(canceller)
        assert memory.refused == 1 and canceller.watch is None
    assert "rate_hz 16000 (now 48000)" in caplog.text
    assert "device usb mic -> usb speaker (now hdmi -> hdmi)" in caplog.text


@needs_speex
def test_a_path_that_no_longer_fits_the_room_is_dropped_and_the_guard_learns_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    _memory(tmp_path, clock).after_chunk(_converged(ROOM))
    canceller = SpeexCanceller(256, suppress=False)
    memory = _memory(tmp_path, clock)
    assert memory.restore(canceller)

    class Quiet:
        def reset(self) -> None:
            pass

        def probability(self, samples: np.ndarray) -> float:
            return 0.0

    hearing = Hearing(canceller, Quiet(), EchoGuard(), memory=memory)
    far = _speechlike(4.0, seed=3)
    mic, _ = _heard(MOVED, far)  # the loudspeaker was moved
    dropped_at_ms = None
    with caplog.at_level(logging.INFO):
        for i in range(0, len(far) - CHUNK_SAMPLES + 1, CHUNK_SAMPLES):
            at_ms = i * 1000 // RATE_HZ
            hearing.hear(DuplexChunk(AudioChunk(mic[i:i + CHUNK_SAMPLES], at_ms),
                                     far[i:i + CHUNK_SAMPLES]), speaking=True)
            if canceller.restarts and dropped_at_ms is None:
                dropped_at_ms = at_ms + CHUNK_MS
                # the guard starts afresh with the canceller: it has learnt one chunk since
                assert hearing.guard.learned_ms <= CHUNK_MS
    assert dropped_at_ms is not None and dropped_at_ms <= 3000, dropped_at_ms
    assert canceller.restarts == 1 and canceller.watch is None
    assert "does not fit the room" in caplog.text


@needs_speex
def test_a_corrupt_state_file_is_ignored_with_a_journal_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    file = tmp_path / FILE_NAME
    for garbage in (b"\x00\xffnot json", b'{"format": 1, "key": {}}',
                    encode(EchoPath(KEY, np.array([0.1, np.nan]), (0.0, 2), 30.0, 0.0))):
        file.write_bytes(garbage)
        caplog.clear()
        canceller = SpeexCanceller(256, suppress=False)
        with caplog.at_level(logging.WARNING, logger="kiosk.audio.echo_path"):
            assert not _memory(tmp_path, Clock()).restore(canceller)
        assert "is corrupt" in caplog.text and str(file) in caplog.text
        assert canceller.watch is None
    # the next save replaces it
    memory = _memory(tmp_path, Clock())
    memory.close(_converged(ROOM))
    assert read(file) is not None


def test_the_file_keeps_every_field() -> None:
    path = EchoPath(KEY, np.array([0.5, -0.25, 1e-7]), (0.4, 4), 31.25, 123.0,
                    LastStart(456.0, True, 27.5))
    back = decode(encode(path))
    assert back.key == KEY and back.loudspeaker == (0.4, 4) and back.erle_db == 31.25
    assert back.last_start == LastStart(456.0, True, 27.5)
    np.testing.assert_allclose(back.taps, path.taps, rtol=1e-5)


def test_doctor_tells_the_path_s_age_and_its_last_start(tmp_path: Path) -> None:
    file = tmp_path / FILE_NAME
    assert "no echo path saved yet" in describe(file)
    save(file, EchoPath(KEY, np.ones(4), (0.0, 2), 31.0, 1000.0, LastStart(4600.0, True, 27.4)))
    text = describe(file, now_s=1000.0 + 3 * 3600)
    assert "saved 3.0 h ago" in text and "ERLE 31.0 dB then" in text
    assert "last start (2.0 h ago) warm, ERLE 27.4 dB in its first second" in text


def test_the_watch_drops_a_path_below_the_floor_and_keeps_one_above_it() -> None:
    bad = PathWatch()
    states = [bad.observe(1.0, 1.0, echo_possible=True) for _ in range(200)]
    assert states.index("dropped") * CHUNK_MS + CHUNK_MS == bad.drop_after_ms

    good = PathWatch()
    for _ in range(good.accept_after_ms // CHUNK_MS + 1):
        good.observe(1.0, 0.001, echo_possible=True)
    assert good.state == "accepted"
    # a visitor talking over the avatar later does not cost the room its path
    assert all(good.observe(1.0, 2.0, True) == "accepted" for _ in range(200))

    # a path that makes the microphone louder adds echo: dropped as soon as a window shows it
    worse = PathWatch()
    states = [worse.observe(1.0, 1.5, echo_possible=True) for _ in range(100)]
    assert states.index("dropped") + 1 == worse.window_chunks

    # a visitor 6 dB under the echo, talking over a path that fits from the first chunk
    talked_over = PathWatch()
    for _ in range(100):
        talked_over.observe(1.0 + 0.25, 0.001 + 0.25, echo_possible=True)
    assert talked_over.state == "accepted"

    idle = PathWatch()  # silence says nothing about the path
    assert all(idle.observe(1.0, 1.0, echo_possible=False) == "watching" for _ in range(500))


def test_the_pre_filter_undoes_the_notch_the_saved_taps_were_learnt_behind() -> None:
    rng = np.random.default_rng(4)
    raw = rng.standard_normal(2048) * np.exp(-np.arange(2048) / 300)
    taps = notch_signal(raw)  # what libspeexdsp learns: the path to the notched microphone
    sound = rng.standard_normal(RATE_HZ)
    wanted = notch_signal(np.convolve(sound, raw)[:RATE_HZ])
    through = notch_signal(np.convolve(sound, unnotched(taps))[:RATE_HZ])
    naive = notch_signal(np.convolve(sound, taps)[:RATE_HZ])
    assert erle_db(wanted, wanted - through) > 30 > erle_db(wanted, wanted - naive)


class LearntCanceller:
    """A canceller that has learnt a path already (the loop's wiring is what is tested)."""

    name = "speex"
    restarts = 0

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        return mic

    def reset(self) -> None:
        pass

    def restore(self, path: EchoPath) -> None:
        pass

    def learnt(self) -> tuple[np.ndarray, tuple[float, int], float]:
        return np.full(8, 0.25), (0.0, 2), 30.0

    def start_erle_db(self) -> float | None:
        return None


def test_the_voice_loop_saves_the_path_when_it_stops(tmp_path: Path) -> None:
    import asyncio

    from kiosk.app import VoiceLoop
    from kiosk.audio.recorded import RecordedStream
    from kiosk.brain import Brain
    from kiosk.config import DEMO_SITE
    from kiosk.retrieval.index import build_index
    from tests.fakes import EnergyVad, HashingEmbedder, ScriptedRecognizer

    canceller = LearntCanceller()
    memory = EchoMemory(tmp_path / FILE_NAME, KEY, save_every_s=1e9, clock=Clock())
    stream = RecordedStream(np.zeros(RATE_HZ, dtype=np.int16), clock=lambda: 0.0)
    brain = Brain(build_index(DEMO_SITE / "en", HashingEmbedder()), HashingEmbedder())
    loop = VoiceLoop(stream, brain, EnergyVad(), ScriptedRecognizer([]), {}, echo=canceller)
    loop.hearing.memory = memory
    try:
        asyncio.run(loop.run(asyncio.Event()))
    finally:
        loop.close()
    saved = read(tmp_path / FILE_NAME)
    # once as soon as it had converged (the first chunk, here), once at the stop
    assert saved is not None and saved.erle_db == 30.0 and memory.saves == 2


def test_kiosk_doctor_echo_reports_the_saved_path(tmp_path: Path) -> None:
    from kiosk.config import Config, EchoConfig
    from kiosk.doctor import check_echo_path

    save(tmp_path / FILE_NAME, EchoPath(KEY, np.ones(4), (0.0, 2), 31.0, 0.0,
                                        LastStart(0.0, False, 3.5)))
    check = check_echo_path(Config(), tmp_path)
    assert check.name == "echo-path" and "ERLE 31.0 dB then" in check.detail
    assert "cold, ERLE 3.5 dB in its first second" in check.detail
    off = check_echo_path(Config(echo=EchoConfig(mode="hardware")), tmp_path)
    assert "no echo path kept" in off.detail


@needs_speex
def test_a_warm_start_is_recorded_in_the_saved_file(tmp_path: Path) -> None:
    clock = Clock()
    _memory(tmp_path, clock).after_chunk(_converged(ROOM))
    saved_at_s = read(tmp_path / FILE_NAME).saved_at_s  # type: ignore[union-attr]
    clock.now_s += 600
    canceller = SpeexCanceller(256, suppress=False)
    memory = _memory(tmp_path, clock)
    assert memory.restore(canceller)
    far = _speechlike(1.5, seed=4)
    mic, _ = _heard(ROOM, far)
    for i in range(0, len(far) - CHUNK_SAMPLES + 1, CHUNK_SAMPLES):
        canceller.process(mic[i:i + CHUNK_SAMPLES], far[i:i + CHUNK_SAMPLES])
        memory.after_chunk(canceller)
    again = read(tmp_path / FILE_NAME)
    # the path itself is the one saved before (nothing new learnt yet), its last start new
    assert again is not None and again.saved_at_s == saved_at_s
    assert again.last_start is not None and again.last_start.warm
    assert again.last_start.at_s == clock.now_s and again.last_start.erle_db >= 20
