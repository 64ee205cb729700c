"""The time average of libspeexdsp's adaptive filter, applied in numpy (pure, no clocks).

An adaptive filter in room noise never settles: every frame's noise nudges its taps, and those
nudges leave residual echo (the "misadjustment" of LMS filters). Averaging the taps over a few
seconds cancels the nudges but not the room, so the averaged filter leaves less echo than the
filter itself once the room has been learned: on the echo bench's rooms 3-4 dB less (the filter
alone is noise-limited at ~29-32 dB there; without noise it reaches 41). The canceller keeps
both outputs and uses whichever has left less over the last ~200 ms, so while the filter is
still learning, or after the microphone was moved, the filter's own output is used.

libspeexdsp hands out its filter (SPEEX_ECHO_GET_IMPULSE_RESPONSE) but subtracts the echo from
the microphone after a DC notch; the averaged echo is subtracted from the same notched signal.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from kiosk.audio.format import CHUNK_SAMPLES, RATE_HZ, Samples

Floats = npt.NDArray[np.float64]

NOTCH_RADIUS = 0.982  # libspeexdsp's at sampling rates from 12 to 24 kHz


def _notch_run(x: Floats, state: tuple[float, float], radius: float
               ) -> tuple[Floats, tuple[float, float]]:
    """libspeexdsp's filter_dc_notch16 (mdf.c), sample by sample: the reference the block
    form is built from."""
    out, states = _notch_states(x, state, radius)
    return out, (float(states[-1, 0]), float(states[-1, 1])) if len(x) else state


def _notch_states(x: Floats, state: tuple[float, float], radius: float
                  ) -> tuple[Floats, Floats]:
    """The notch's output and its state after each sample."""
    den2 = radius * radius + 0.7 * (1 - radius) * (1 - radius)
    mem0, mem1 = state
    out = np.empty(len(x))
    states = np.empty((len(x), 2))
    for i, value in enumerate(x):
        vout = mem0 + value
        mem0 = mem1 + 2 * (-value + radius * vout)
        mem1 = value - den2 * vout
        out[i] = radius * vout
        states[i] = mem0, mem1
    return out, states


@functools.cache
def _notch_matrices(block: int, radius: float) -> tuple[Floats, Floats, Floats, Floats]:
    """The block form's four matrices (the same for every canceller: built once)."""
    impulse, after = _notch_states(np.r_[1.0, np.zeros(block - 1)], (0.0, 0.0), radius)
    from_input = np.zeros((block, block))  # lower-triangular Toeplitz
    for j in range(block):
        from_input[j:, j] = impulse[:block - j]
    # a pulse at sample j leaves the state an impulse leaves block - 1 - j samples later
    state_from_input = after[::-1].T.copy()
    from_state = np.zeros((block, 2))
    state_from_state = np.zeros((2, 2))
    for k, start in enumerate(((1.0, 0.0), (0.0, 1.0))):
        out, end = _notch_run(np.zeros(block), start, radius)
        from_state[:, k] = out
        state_from_state[:, k] = end
    return from_input, from_state, state_from_state, state_from_input


class DcNotch:
    """The DC notch libspeexdsp applies to the microphone, a block at a time: the filter is
    linear, so a block's output is one matrix product of the block and the two-number state
    (a Python loop over the samples would cost more than the cancelling)."""

    def __init__(self, block: int = CHUNK_SAMPLES, radius: float = NOTCH_RADIUS) -> None:
        self.block = block
        (self._from_input, self._from_state, self._state_from_state,
         self._state_from_input) = _notch_matrices(block, radius)
        self._state = np.zeros(2)

    def apply(self, block: Floats | Samples) -> Floats:
        x = np.asarray(block, dtype=np.float64)
        out: Floats = self._from_input @ x + self._from_state @ self._state
        self._state = self._state_from_state @ self._state + self._state_from_input @ x
        return out

    def reset(self) -> None:
        self._state = np.zeros(2)


def notch_signal(x: Floats | Samples, radius: float = NOTCH_RADIUS) -> Floats:
    """A whole signal through libspeexdsp's DC notch (the echo bench separates the residual
    echo from the noise that passes through with it)."""
    notch = DcNotch(CHUNK_SAMPLES, radius)
    n = len(x)
    padded = np.zeros(-(-n // CHUNK_SAMPLES) * CHUNK_SAMPLES)
    padded[:n] = np.asarray(x, dtype=np.float64)
    return np.concatenate([notch.apply(padded[i:i + CHUNK_SAMPLES])
                           for i in range(0, len(padded), CHUNK_SAMPLES)])[:n] if n else padded


def unnotched(taps: Floats, radius: float = NOTCH_RADIUS, floor: float = 1e-3) -> Floats:
    """The filter that, followed by the DC notch, is `taps`: libspeexdsp learns the path to
    the notched microphone, and a pre-filter ahead of it works on the microphone itself. The
    notch's phase turns frequencies up to a few hundred Hz; left in, a notched-domain filter
    subtracted before the notch leaves ~12 dB where it leaves ~30 after it. At and near DC,
    where the notch passes nothing, the inverse is held down (`floor`, of the notch's peak
    power) instead of dividing by zero."""
    n = len(taps)
    size = _fft_size(2 * n)
    impulse, _ = _notch_states(np.r_[1.0, np.zeros(size - 1)], (0.0, 0.0), radius)
    notch = np.fft.rfft(impulse, size)
    power = np.abs(notch) ** 2
    inverse = np.conj(notch) / (power + floor * float(power.max()))
    return np.asarray(np.fft.irfft(np.fft.rfft(taps, size) * inverse, size)[:n], dtype=np.float64)


class AveragedFilter:
    """The running average of an adaptive filter's taps (exponential, time constant
    `average_s`, one snapshot every `every_chunks` chunks) and the echo it predicts from the
    reference, chunk by chunk (overlap-save FFT convolution)."""

    def __init__(self, taps: int, average_s: float = 5.0, every_chunks: int = 5,
                 chunk: int = CHUNK_SAMPLES) -> None:
        self.taps = taps
        self.every_chunks = every_chunks
        self._blend = min(1.0, every_chunks * chunk / RATE_HZ / average_s)
        self._chunk = chunk
        self._size = _fft_size(taps + chunk)
        self._history = np.zeros(self._size)
        self._quiet = 0  # samples of silence at the end of the history
        self._average: Floats | None = None
        self._spectrum: npt.NDArray[np.complex128] | None = None

    @property
    def ready(self) -> bool:
        return self._average is not None

    @property
    def average(self) -> Floats | None:
        """The averaged taps (None before the first snapshot)."""
        return self._average

    @property
    def silent(self) -> bool:
        """Nothing has played for the filter's length: there is no echo to predict."""
        return self._quiet >= self.taps + self._chunk

    def learn(self, snapshot: Floats) -> None:
        """A new snapshot of the filter's taps."""
        if self._average is None:
            self._average = snapshot.astype(np.float64)
        else:
            self._average += self._blend * (snapshot - self._average)
        self._spectrum = np.fft.rfft(self._average, self._size)

    def predict(self, reference: Samples | Floats) -> Floats:
        """The echo of this chunk of reference, as the average filter has it (zeros before
        the first snapshot)."""
        self._history = np.roll(self._history, -len(reference))
        self._history[-len(reference):] = reference
        # nothing played for a filter's length (most of a kiosk's day): no echo to predict
        self._quiet = self._quiet + len(reference) if not np.any(reference) else 0
        if self._spectrum is None or self.silent:
            return np.zeros(len(reference))
        out = np.fft.irfft(np.fft.rfft(self._history) * self._spectrum, self._size)
        return np.asarray(out[-len(reference):], dtype=np.float64)

    def clear_history(self) -> None:
        """Forget what was played (a new stream), keep the filter."""
        self._history = np.zeros(self._size)
        self._quiet = 0

    def reset(self) -> None:
        self.clear_history()
        self._average = None
        self._spectrum = None


def _fft_size(n: int) -> int:
    """The smallest size >= n that is 2^a * 3^b (fast for numpy's FFT, nearer n than a power
    of two alone)."""
    best = 1 << (n - 1).bit_length()
    three = 1
    while three < best:
        size = three
        while size < n:
            size *= 2
        best = min(best, size)
        three *= 3
    return best
