"""The echo bench's simulated rooms, and the notch model that lets the residual echo be
measured apart from the noise."""

from __future__ import annotations

import numpy as np

from kiosk.audio.echo import SpeexCanceller, cancel, erle_db
from kiosk.audio.echo_filter import notch_signal
from kiosk.bench.room import Path, mix, other_voice, paths, rms


def test_paths_cover_the_ranges_and_repeat() -> None:
    room = paths(20, nonlinear=False)
    assert all(10 <= p.delay_ms <= 80 and 100 <= p.reverb_ms <= 400 and 10 <= p.snr_db <= 20
               for p in room)
    assert room == paths(20, nonlinear=False)  # seeded
    ir = room[0].impulse_response()
    assert int(np.argmax(np.abs(ir))) == int(room[0].delay_ms * 16)


def test_nonlinear_loudspeaker_squashes_peaks() -> None:
    loud = np.array([-32000.0, -8000.0, 0.0, 8000.0, 32000.0])
    squashed = Path(20, 200, 15, True, 1).loudspeaker(loud)
    assert squashed[4] < 33000 and squashed[3] > 8000 * 1.2  # small signals gain, peaks flatten
    assert np.array_equal(Path(20, 200, 15, False, 1).loudspeaker(loud), loud)


def test_noise_level_and_other_voice() -> None:
    path = Path(20, 200, 15.0, False, 3)
    noise = path.noise(16000, speech_rms=1000.0)
    assert 20 * np.log10(1000.0 / rms(noise)) == np.float64(15.0).round(6) or abs(
        20 * np.log10(1000.0 / rms(noise)) - 15.0) < 0.01
    voice = (np.sin(np.arange(16000) * 0.1) * 3000).astype(np.int16)
    assert len(other_voice(voice)) == round(16000 / 1.12)


def test_the_notch_model_matches_libspeexdsp() -> None:
    noise = Path(20, 200, 15.0, False, 4).noise(32000, speech_rms=2000.0)
    out = cancel(SpeexCanceller(128, suppress=False), mix(noise), np.zeros(32000, np.int16))
    modelled = notch_signal(noise[: len(out)])
    assert erle_db(modelled, out.astype(np.float64) - modelled) > 40.0
