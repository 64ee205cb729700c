"""The time-averaged filter: libspeexdsp's DC notch in block form, the averaged filter's
prediction, and what the average gives the real canceller in a noisy room, and when the room
changes."""

from __future__ import annotations

import numpy as np

from kiosk.audio.echo import SpeexCanceller, cancel, erle_db
from kiosk.audio.echo_filter import (
    NOTCH_RADIUS,
    AveragedFilter,
    DcNotch,
    _fft_size,
    _notch_run,
    notch_signal,
)
from kiosk.audio.format import CHUNK_SAMPLES, RATE_HZ


def test_the_block_notch_is_the_sample_loop() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(CHUNK_SAMPLES * 7) * 3000 + 500  # with DC, to be notched
    looped, _ = _notch_run(x, (0.0, 0.0), NOTCH_RADIUS)
    notch = DcNotch()
    blocks = np.concatenate([notch.apply(x[i:i + CHUNK_SAMPLES])
                             for i in range(0, len(x), CHUNK_SAMPLES)])
    assert np.allclose(blocks, looped, atol=1e-6)
    assert abs(float(np.mean(blocks[-CHUNK_SAMPLES:]))) < 100  # the DC is gone
    odd = x[:1000]
    assert np.allclose(notch_signal(odd), looped[:1000], atol=1e-6)
    notch.reset()
    assert np.allclose(notch.apply(x[:CHUNK_SAMPLES]), looped[:CHUNK_SAMPLES], atol=1e-6)


def test_the_average_predicts_by_convolution_and_blends_snapshots() -> None:
    rng = np.random.default_rng(2)
    taps = rng.standard_normal(700) * np.exp(-np.arange(700) / 100)
    average = AveragedFilter(700, average_s=1.0, every_chunks=5)
    reference = rng.standard_normal(CHUNK_SAMPLES * 12) * 1000
    assert not average.ready
    assert np.array_equal(average.predict(reference[:CHUNK_SAMPLES]), np.zeros(CHUNK_SAMPLES))
    average.learn(taps)
    assert average.ready
    predicted = np.concatenate([average.predict(reference[i:i + CHUNK_SAMPLES])
                                for i in range(CHUNK_SAMPLES, len(reference), CHUNK_SAMPLES)])
    expected = np.convolve(reference, taps)[CHUNK_SAMPLES:len(reference)]
    assert np.allclose(predicted, expected, atol=1e-6 * np.max(np.abs(expected)))
    # one snapshot of zeros moves the average by 5 chunks / 1 s = 10% of the way
    average.learn(np.zeros(700))
    average.reset()
    assert not average.ready
    again = AveragedFilter(700, average_s=1.0, every_chunks=5)
    again.learn(taps)
    again.learn(np.zeros(700))
    again.predict(np.zeros(CHUNK_SAMPLES * 3))
    impulse = np.zeros(CHUNK_SAMPLES)
    impulse[0] = 1.0
    response = np.concatenate([again.predict(impulse), again.predict(np.zeros(CHUNK_SAMPLES)),
                               again.predict(np.zeros(CHUNK_SAMPLES))])
    assert np.allclose(response[:700], 0.9 * taps, atol=1e-9)


def test_fft_sizes_are_fast_and_long_enough() -> None:
    for n in (100, 4480, 4097, 5000):
        size = _fft_size(n)
        assert size >= n and size < 2 * n
        while size % 2 == 0:
            size //= 2
        while size % 3 == 0:
            size //= 3
        assert size == 1


def _voice(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE_HZ)
    voiced = np.convolve(rng.standard_normal(n + 32), np.hanning(10), mode="same")[:n]
    syllables = np.maximum(0.0, np.sin(2 * np.pi * 3.5 * np.arange(n) / RATE_HZ))
    signal = voiced * (0.2 + syllables)
    return np.asarray(signal / np.max(np.abs(signal)) * 20000, dtype=np.float64)


def _ir(seed: int, delay: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ir = np.zeros(delay + 2400)
    ir[delay] = 0.6
    ir[delay + 1:] = rng.standard_normal(2399) * 0.03 * np.exp(-np.arange(2399) / 450)
    return ir


def _heard(far: np.ndarray, ir: np.ndarray, noise_db: float, seed: int) -> np.ndarray:
    echo = np.convolve(far, ir)[: len(far)]
    noise = np.random.default_rng(seed).standard_normal(len(far)) * np.std(echo)
    return np.asarray(echo + noise * 10 ** (-noise_db / 20), dtype=np.float64)


def _erle(mic: np.ndarray, out: np.ndarray, noise_free: np.ndarray, lo: int, hi: int) -> float:
    # residual echo: what is left apart from the (notched) noise
    residual = out[lo:hi].astype(np.float64) - (notch_signal(mic) - notch_signal(noise_free)
                                                )[lo:hi]
    return erle_db(notch_signal(noise_free)[lo:hi], residual)


def test_the_average_leaves_less_echo_in_a_noisy_room() -> None:
    far = _voice(40.0, seed=3)
    ir = _ir(4, delay=480)
    echo = np.convolve(far, ir)[: len(far)]
    mic_f = _heard(far, ir, noise_db=20.0, seed=5)
    mic = np.clip(np.rint(mic_f), -32768, 32767).astype(np.int16)
    ref = far.astype(np.int16)
    plain = SpeexCanceller(256, suppress=False, average_s=0)
    averaged = SpeexCanceller(256, suppress=False, average_s=5.0)
    out_plain = cancel(plain, mic, ref)
    out_averaged = cancel(averaged, mic, ref)
    lo, hi = 20 * RATE_HZ, len(out_plain)
    before = _erle(mic_f[:hi], out_plain, echo[:hi], lo, hi)
    after = _erle(mic_f[:hi], out_averaged, echo[:hi], lo, hi)
    assert plain.frames == 0 and averaged.averaged_frames > averaged.frames // 2
    assert after > before + 2.0, (before, after)


def test_a_moved_microphone_is_followed_by_the_filter_meanwhile() -> None:
    far = _voice(36.0, seed=6)
    cut = 24 * RATE_HZ  # the microphone is moved: a new room from here
    first = np.convolve(far, _ir(4, delay=480))[: len(far)]
    second = np.convolve(far, _ir(8, delay=640))[: len(far)]
    echo = np.concatenate([first[:cut], second[cut:]])
    noise = np.random.default_rng(9).standard_normal(len(far)) * np.std(echo) * 0.03
    mic_f = echo + noise
    mic = np.clip(np.rint(mic_f), -32768, 32767).astype(np.int16)
    ref = far.astype(np.int16)
    out_plain = cancel(SpeexCanceller(256, suppress=False, average_s=0), mic, ref)
    out_averaged = cancel(SpeexCanceller(256, suppress=False, average_s=5.0), mic, ref)
    for lo_s, hi_s in ((24.5, 26), (26, 28), (28, 32)):
        lo, hi = int(lo_s * RATE_HZ), int(hi_s * RATE_HZ)
        plain = _erle(mic_f, out_plain, echo, lo, hi)
        averaged = _erle(mic_f, out_averaged, echo, lo, hi)
        # while the average still holds the old room, the filter's own output is used
        assert averaged > plain - 1.0, (lo_s, plain, averaged)


def test_after_a_filter_length_of_silence_the_average_predicts_nothing() -> None:
    taps = np.exp(-np.arange(700) / 100.0)
    average = AveragedFilter(700, average_s=1.0)
    average.learn(taps)
    loud = np.full(CHUNK_SAMPLES, 1000.0)
    assert np.any(average.predict(loud))
    quiet = np.zeros(CHUNK_SAMPLES)
    tails = [average.predict(quiet) for _ in range(4)]
    # the echo's tail rings on for the filter's length, then there is none
    assert np.any(tails[0]) and np.any(tails[1])
    assert not np.any(tails[3])
    assert np.any(average.predict(loud))
