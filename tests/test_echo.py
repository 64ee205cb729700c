"""The software canceller (real libspeexdsp), its reference delay and the measurement helpers."""

from __future__ import annotations

import numpy as np
import pytest

from kiosk.audio.echo import (
    DelayLine,
    PassThrough,
    SpeexCanceller,
    cancel,
    erle_db,
    estimate_delay_ms,
    make_canceller,
    measure,
    probe_signal,
    speex_available,
)
from kiosk.audio.format import CHUNK_SAMPLES, RATE_HZ


def _room(far: np.ndarray, delay: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    ir = np.zeros(delay + 1200)
    ir[delay] = 0.5
    ir[delay + 1:] = rng.standard_normal(1199) * 0.03 * np.exp(-np.arange(1199) / 250)
    return np.clip(np.convolve(far.astype(np.float64), ir)[: len(far)], -32768,
                   32767).astype(np.int16)


def test_libspeexdsp_is_installed() -> None:
    assert speex_available(), "apt-get install libspeexdsp1 (scripts/setup.sh does)"


def test_speex_cancels_a_linear_room() -> None:
    far = probe_signal(8.0)
    mic = _room(far, delay=480)  # 30 ms
    out = cancel(SpeexCanceller(128, suppress=False), mic, far)
    half = len(out) // 2
    assert erle_db(mic[half:len(out)], out[half:]) > 25.0
    assert erle_db(mic[:RATE_HZ], out[:RATE_HZ]) < 15.0  # it has to learn first


def test_residual_suppression_adds_to_the_filter() -> None:
    far = probe_signal(8.0)
    mic = _room(far, delay=480)
    plain = cancel(SpeexCanceller(128, suppress=False), mic, far)
    suppressed = cancel(SpeexCanceller(128, suppress=True), mic, far)
    half = len(plain) // 2
    assert erle_db(mic[half:len(plain)], suppressed[half:]) > erle_db(mic[half:len(plain)],
                                                                     plain[half:]) + 5.0


def test_a_diverged_filter_never_says_its_guess_aloud() -> None:
    # The filter learned a room, then the microphone hears none of it (muted, or a recording
    # made without echo): what the filter subtracts from silence is the avatar's own voice,
    # which the VAD and the guard would take for a visitor talking over it.
    far = probe_signal(6.0)
    mic = np.concatenate([_room(far[:4 * RATE_HZ], delay=480), np.zeros(2 * RATE_HZ, np.int16)])
    canceller = SpeexCanceller(128, suppress=False)
    out = cancel(canceller, mic, far)
    quiet = 4 * RATE_HZ + CHUNK_SAMPLES * 2  # (the DC notch rings for a few ms)
    assert not out[quiet:].any()
    assert canceller.louder_frames > 0
    # where the room is, the filters still take the echo out
    assert erle_db(mic[3 * RATE_HZ:4 * RATE_HZ], out[3 * RATE_HZ:4 * RATE_HZ]) > 20.0


def test_delay_line_and_pass_through() -> None:
    line = DelayLine(40)
    chunks = [np.full(CHUNK_SAMPLES, i, dtype=np.int16) for i in range(1, 5)]
    assert [int(line.push(c)[0]) for c in chunks] == [0, 0, 1, 2]
    assert DelayLine(0).push(chunks[0]) is chunks[0]
    through = make_canceller("hardware")
    assert isinstance(through, PassThrough) and through.process(chunks[1], chunks[2]) is chunks[1]


def test_delay_estimate_and_report() -> None:
    far = probe_signal(4.0)
    mic = _room(far, delay=960)  # 60 ms
    assert estimate_delay_ms(mic, far) == pytest.approx(60.0, abs=1.0)
    report = measure("speex", mic, far, SpeexCanceller(256))
    assert report.delay_ms == pytest.approx(60.0, abs=1.0)
    assert report.erle_db > 25.0 and -10.0 < report.echo_level_db < 0.0
    assert "echo.delay_ms 40" in report.advice()


def test_the_loudspeaker_model_follows_the_config() -> None:
    learning = make_canceller("speex", 256, 0, "auto")
    plain = make_canceller("speex", 256, 0, "linear")
    assert isinstance(learning, SpeexCanceller) and learning.loudspeaker is not None
    assert isinstance(plain, SpeexCanceller) and plain.loudspeaker is None


def test_the_report_names_what_it_learned_of_the_loudspeaker() -> None:
    far = probe_signal(8.0)
    mic = _room(far, delay=320)
    learned = measure("speex", mic, far, make_canceller("speex", 256, 0, "auto"))
    assert learned.loudspeaker == "linear"  # the probe played through a linear room
    assert measure("speex", mic, far, SpeexCanceller(256)).loudspeaker == ""
