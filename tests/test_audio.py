"""The audio format (pure) and the sound devices on a real clocked JACK device."""

from __future__ import annotations

import time

import numpy as np
import pytest

from kiosk.audio.format import (
    CHUNK_SAMPLES,
    RATE_HZ,
    chunks,
    level_dbfs,
    resample,
    to_int16,
)
from kiosk.errors import KioskError
from tests.fakes import tone


def test_chunks_are_20_ms_and_stamped() -> None:
    parts = list(chunks(tone(0.1), start_ms=1000))
    assert [len(c.samples) for c in parts] == [CHUNK_SAMPLES] * 5
    assert [c.start_ms for c in parts] == [1000, 1020, 1040, 1060, 1080]
    assert parts[-1].end_ms == 1100


def test_resampling_keeps_duration_and_pitch() -> None:
    src = tone(1.0, rate=22050, hz=440)
    out = resample(src, 22050)
    assert abs(len(out) - RATE_HZ) <= 1
    spectrum = np.abs(np.fft.rfft(out.astype(np.float64)))
    assert abs(np.argmax(spectrum) * RATE_HZ / len(out) - 440) < 3


def test_float_and_int_inputs_become_int16() -> None:
    assert to_int16(np.array([0.5, -1.0, 1.0])).tolist() == [16384, -32767, 32767]
    assert to_int16(np.array([23753.0, -40000.0])).tolist() == [23753, -32768]


def test_levels() -> None:
    assert level_dbfs(np.zeros(100, dtype=np.int16)) == -120.0
    assert abs(level_dbfs(tone(0.5, amp=1.0)) - (-3.0)) < 0.2


@pytest.mark.slow
def test_playback_is_clocked_by_the_device_and_silence_measures_low(jack_server: None) -> None:
    from kiosk.audio.devices import device_names, level_report, play, record

    assert "system" in device_names("output")
    start = time.monotonic()
    played = play(tone(0.5), "system")
    assert 0.4 < played < 2.0 and time.monotonic() - start >= 0.4  # real time, not a copy
    quiet = record(0.3, "default")
    assert len(quiet) == pytest.approx(0.3 * RATE_HZ, abs=CHUNK_SAMPLES)
    assert "level -120.0 dBFS" in level_report(quiet, "default")


@pytest.mark.slow
def test_unknown_device_names_the_ones_that_exist(jack_server: None) -> None:
    from kiosk.audio.devices import find_device

    with pytest.raises(KioskError) as info:
        find_device("USB Mic", "input")
    text = info.value.describe()
    assert 'audio.input_device "USB Mic" not found' in text and '"system"' in text
    assert "set audio.input_device NAME" in text
