"""The loudspeaker's saturation: the clipper family, the open-loop estimator, and what it gives
the real libspeexdsp canceller on a room whose loudspeaker clips."""

from __future__ import annotations

import numpy as np

from kiosk.audio.echo import SpeexCanceller, cancel, erle_db
from kiosk.audio.format import CHUNK_SAMPLES, RATE_HZ
from kiosk.audio.loudspeaker import LINEAR, Saturation, SaturationEstimator, candidates


def _speech_like(seconds: float, seed: int = 4) -> np.ndarray:
    """Coloured noise under a syllable-rate envelope with pauses, peaks near full scale."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE_HZ)
    voiced = np.convolve(rng.standard_normal(n + 32), np.hanning(12), mode="same")[:n]
    syllables = np.maximum(0.0, np.sin(2 * np.pi * 4.0 * np.arange(n) / RATE_HZ)) ** 2
    phrases = (np.arange(n) // (RATE_HZ * 2)) % 4 != 3  # every fourth 2 s is a pause
    signal = voiced * syllables * phrases
    return np.asarray(signal / np.max(np.abs(signal)) * 32000, dtype=np.float64)


def _room(played: np.ndarray, seed: int = 9) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ir = np.zeros(400 + 2400)
    ir[400] = 0.6  # 25 ms
    ir[401:] = rng.standard_normal(2399) * 0.02 * np.exp(-np.arange(2399) / 500)
    echo = np.convolve(played, ir)[: len(played)]
    noise = rng.standard_normal(len(played)) * np.std(echo) * 10 ** (-35 / 20)
    return np.clip(echo + noise, -32768, 32767).astype(np.int16)


def _feed(estimator: SaturationEstimator, mic: np.ndarray, far: np.ndarray) -> None:
    for i in range(0, len(far) - CHUNK_SAMPLES + 1, CHUNK_SAMPLES):
        estimator.observe(mic[i:i + CHUNK_SAMPLES], far[i:i + CHUNK_SAMPLES])


def test_the_clippers_squash_peaks_and_leave_quiet_sound_alone() -> None:
    u = np.linspace(-1.0, 1.0, 2001)
    for clipper in candidates()[1:]:
        y = clipper.curve(u)
        assert np.allclose(y, -y[::-1]), clipper  # odd: both half-waves alike
        assert np.all(np.diff(y) > 0), clipper  # a louder input never plays quieter
        assert np.all(np.abs(y) <= np.abs(u)), clipper  # it squashes, never amplifies
        quiet = np.abs(u) < 0.01
        assert np.allclose(y[quiet], u[quiet], rtol=0.01), clipper  # quiet sound unchanged
        assert y[-1] < 0.99, clipper  # the peaks are squashed
    assert LINEAR.curve(u) is u
    assert np.array_equal(LINEAR.apply(np.array([5, -7], np.int16)), [5, -7])
    squashed = Saturation(3.0, 2).apply(np.array([32767, -32768, 0, 100], np.int16))
    assert squashed.dtype == np.int16 and squashed[2] == 0 and squashed[3] == 100
    assert squashed[0] == -squashed[1] == round(32768 / np.sqrt(10))


def test_candidates_step_geometrically_with_two_knees() -> None:
    grid = candidates()
    assert grid[0] == LINEAR
    soft = [c.onset for c in grid[1:] if c.knee == 2]
    assert {c.knee for c in grid[1:]} == {2, 4}
    assert soft[0] == 0.5 and soft[-1] <= 6.0
    assert np.allclose(np.diff(np.log(soft)), np.log(1.12), atol=1e-3)


def test_a_linear_loudspeaker_stays_linear() -> None:
    far = _speech_like(30.0)
    estimator = SaturationEstimator()
    _feed(estimator, _room(far), far.astype(np.int16))
    assert estimator.current == LINEAR
    assert estimator.switches == 0
    scores = estimator.residual_db()
    assert max(scores[0] - s for s in scores) < 0.2  # no clipper predicts the echo better


def test_a_visitor_talking_all_along_does_not_make_a_linear_loudspeaker_look_clipped() -> None:
    far = _speech_like(40.0, seed=2)
    visitor = _speech_like(40.0, seed=52) * 0.8  # as loud as the echo, all the time
    mic = np.clip(_room(far).astype(np.float64) + visitor, -32768, 32767).astype(np.int16)
    estimator = SaturationEstimator()
    _feed(estimator, mic, far.astype(np.int16))
    assert estimator.current == LINEAR and estimator.switches == 0


def test_a_clipping_loudspeaker_is_found_though_it_is_not_in_the_family() -> None:
    # a hard-clipping amplifier, a shape none of the candidates has
    far = _speech_like(30.0)
    played = np.clip(far, -0.4 * 32768, 0.4 * 32768)
    estimator = SaturationEstimator()
    _feed(estimator, _room(played), far.astype(np.int16))
    assert not estimator.current.linear
    scores = estimator.residual_db()
    chosen = estimator.choices.index(estimator.current)
    assert scores[0] - scores[chosen] > 1.0


def test_silence_teaches_nothing() -> None:
    estimator = SaturationEstimator()
    zeros = np.zeros(RATE_HZ * 10, np.int16)
    _feed(estimator, zeros, zeros)
    assert estimator.current == LINEAR
    assert estimator.residual_db() == [0.0] * len(estimator.choices)


def test_the_canceller_cancels_a_soft_clipping_room_once_it_has_learned_the_loudspeaker(
) -> None:
    far = _speech_like(40.0, seed=6)
    played = np.tanh(2.0 * far / 32768) / np.tanh(2.0) * 32768  # not in the family either
    mic = _room(played, seed=3)
    ref = far.astype(np.int16)
    plain = cancel(SpeexCanceller(256, suppress=False), mic, ref)
    learning = SpeexCanceller(256, suppress=False, loudspeaker=SaturationEstimator())
    learned = cancel(learning, mic, ref)
    half = len(plain) // 2
    before = erle_db(mic[half:], plain[half:])
    after = erle_db(mic[half:], learned[half:])
    assert learning.loudspeaker is not None and not learning.loudspeaker.current.linear
    assert after > before + 6, (before, after)


def test_once_settled_one_block_in_four_is_learned() -> None:
    far = _speech_like(40.0, seed=7)
    estimator = SaturationEstimator(settled_s=10.0, settled_every=4)
    _feed(estimator, _room(far), far.astype(np.int16))
    loud = sum(1 for i in range(0, len(far) - RATE_HZ + 1, RATE_HZ)
               if np.sqrt(np.mean(far[i:i + RATE_HZ] ** 2)) > 32768 * 10 ** (-45 / 20))
    assert estimator.settled and estimator.current == LINEAR
    # the first 10 loud blocks all, then one in four
    assert estimator.learned_blocks == 10 + (loud - 10) // 4
