"""The loudspeaker's soft clipping, learned while it plays (pure numpy, no clocks).

A small loudspeaker driven loud squashes its peaks. The room then filters that squashed sound,
so the echo is a *linear* filter of a *saturated* reference (a Hammerstein model). A linear
canceller given the plain reference cannot follow the squashing: on the echo bench's
soft-clipping rooms libspeexdsp stopped at ~15 dB, against ~30 dB on linear rooms. Given the
reference through the right saturation, it cancels those rooms as well as linear ones.

The saturation is one of a fixed family of soft clippers, `u / (1 + |k u|^p)^(1/p)` for u in
[-1, 1] (k: how early compression sets in, around 1/k of full scale; p: how sharp the knee is,
2 soft, 4 harder), or none. Quiet sound passes unchanged (slope 1 at zero), so when the
choice changes the canceller's filter still fits everything but the peaks and the change
does not make the echo jump. Which one is chosen open-loop, independently of the canceller:
the one that makes the microphone most *linearly predictable* from the saturated reference,
per frequency bin, over the last minute of playback (the least-squares residual of mic on
reference, summed over bins). On linear rooms every saturation scores within 0.02 dB of none;
on soft-clipping rooms the right one scores 0.5-4 dB better (kiosk bench echo rooms), so a
0.2 dB hysteresis keeps linear rooms linear.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kiosk.audio.format import RATE_HZ, Samples

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float64]

FULL_SCALE = 32768.0
BATCH = 8  # clippers shaped and transformed together


@dataclass(frozen=True)
class Saturation:
    onset: float  # k: compression sets in around 1/k of full scale; 0 = linear
    knee: int  # p: 2 soft, 4 harder

    @property
    def linear(self) -> bool:
        return self.onset <= 0.0

    def curve(self, u: Floats) -> Floats:
        """The saturated signal for u in full-scale units (an array of any shape)."""
        if self.linear:
            return u
        return _squash(u, np.float64(self.onset), self.knee)

    def apply(self, samples: Samples) -> Samples:
        if self.linear:
            return samples
        out = self.curve(samples.astype(np.float64) / FULL_SCALE) * FULL_SCALE
        return np.clip(np.round(out), -32768, 32767).astype(np.int16)

    def __str__(self) -> str:
        return "linear" if self.linear else f"soft clipping from {1 / self.onset:.2f} of full " \
                                            f"scale (knee {self.knee})"


LINEAR = Saturation(0.0, 2)


def _squash(u: npt.NDArray[Any], k: npt.NDArray[Any] | np.floating[Any], p: int
            ) -> npt.NDArray[Any]:
    """The soft clipper for onsets k (broadcast against u); square roots, not powers: this
    runs for every candidate on every block."""
    if p == 2:
        return u / np.sqrt(1.0 + (k * u) ** 2)  # type: ignore[no-any-return]
    if p == 4:
        ku2 = (k * u) ** 2  # (numpy squares quickly, but takes **4 as a pow call)
        return u / np.sqrt(np.sqrt(1.0 + ku2 * ku2))  # type: ignore[no-any-return]
    return u / (1.0 + np.abs(k * u) ** p) ** (1.0 / p)  # type: ignore[no-any-return]


def candidates(lowest: float = 0.5, highest: float = 6.0, step: float = 1.12
               ) -> list[Saturation]:
    """None, and soft clippers whose onset k grows by 12% a step (on the bench's rooms a
    25% error in k cost 5 dB of cancellation) with a soft and a harder knee."""
    onsets: list[float] = []
    k = lowest
    while k <= highest:
        onsets.append(round(k, 4))
        k *= step
    return [LINEAR] + [Saturation(k, p) for p in (2, 4) for k in onsets]


class SaturationEstimator:
    """Watches (microphone, reference) chunk pairs and keeps `current`, the saturation the
    canceller should put on the reference. Blocks of `block_s` (longer than a room's echo, so
    one block's reference explains its microphone); blocks where the reference is quiet carry
    nothing and are skipped; older blocks fade with a time constant of `memory_s` of playback.
    The first choice is made after `first_choice_s` of playback. Once the choice has held for
    `settled_s` of playback, only one block in `settled_every` is learned (the loudspeaker does
    not change; a change of choice brings back every block)."""

    def __init__(self, choices: list[Saturation] | None = None, *, block_s: float = 1.0,
                 memory_s: float = 60.0, first_choice_s: float = 6.0, switch_db: float = 0.2,
                 quiet_dbfs: float = -45.0, settled_s: float = 180.0,
                 settled_every: int = 4) -> None:
        self.choices = choices if choices is not None else candidates()
        if LINEAR not in self.choices:
            self.choices = [LINEAR, *self.choices]
        self.current = LINEAR
        self.switches = 0
        self._block = int(block_s * RATE_HZ)
        self._window = np.hanning(self._block)
        self._keep = 1.0 - block_s / memory_s
        self._min_blocks = max(1, round(first_choice_s / block_s))
        self._switch_db = switch_db
        self._quiet = FULL_SCALE * 10 ** (quiet_dbfs / 20.0)
        self._mic: list[Samples] = []
        self._ref: list[Samples] = []
        self._pending = 0
        self._blocks = 0  # learned
        self._settled_blocks = max(1, round(settled_s / block_s))
        self._settled_every = settled_every
        self._held = 0  # loud blocks since the choice last changed
        # the clippers in batches of one knee, each shaped and transformed in one numpy
        # expression (batches, not all at once: a block of 45 spectra is ~20 MB)
        self._order = [LINEAR]
        self._batches: list[tuple[int, int, npt.NDArray[np.float64]]] = []
        for p in sorted({c.knee for c in self.choices if not c.linear}):
            onsets = [c.onset for c in self.choices if c.knee == p and not c.linear]
            for i in range(0, len(onsets), BATCH):
                part = onsets[i:i + BATCH]
                self._batches.append((len(self._order), p, np.array(part)[:, None]))
                self._order += [Saturation(k, p) for k in part]
        bins = self._block // 2 + 1
        # single precision: the spectra only rank the choices
        self._smm = np.zeros(bins, dtype=np.float32)
        self._sff = np.zeros((len(self._order), bins), dtype=np.float32)
        self._smf = np.zeros((len(self._order), bins), dtype=np.complex64)

    def observe(self, mic: Samples, reference: Samples) -> None:
        self._mic.append(mic)
        self._ref.append(reference)
        self._pending += len(mic)
        if self._pending < self._block:
            return
        mic_all = np.concatenate(self._mic)
        ref_all = np.concatenate(self._ref)
        self._learn(mic_all[:self._block], ref_all[:self._block])
        self._mic = [mic_all[self._block:]]
        self._ref = [ref_all[self._block:]]
        self._pending -= self._block

    def residual_db(self) -> list[float]:
        """Per choice: what a linear filter of the saturated reference leaves of the
        microphone, in dB (0 before anything was learned)."""
        total = float(np.sum(self._smm, dtype=np.float64))
        if total <= 0:
            return [0.0] * len(self.choices)
        power = self._smf.real ** 2 + self._smf.imag ** 2
        left = np.sum(self._smm - power / np.maximum(self._sff, 1e-20), axis=1,
                      dtype=np.float64)
        by_choice = dict(zip(self._order, np.asarray(left).tolist(), strict=True))
        return [10.0 * float(np.log10(max(float(by_choice[c]), 1e-12 * total) / total))
                for c in self.choices]

    @property
    def settled(self) -> bool:
        return self._held >= self._settled_blocks

    @property
    def learned_blocks(self) -> int:
        return self._blocks

    def _learn(self, mic: Samples, reference: Samples) -> None:
        if float(np.sqrt(np.mean(reference.astype(np.float64) ** 2))) < self._quiet:
            return
        settled = self.settled
        self._held += 1
        if settled and (self._held - self._settled_blocks) % self._settled_every:
            return
        u = reference / FULL_SCALE
        # (numpy's double-precision FFT is the fast one; the sums are kept in single)
        m = np.fft.rfft(self._window * (mic / FULL_SCALE)).astype(np.complex64)
        keep = np.float32(self._keep)
        self._smm *= keep
        self._smm += m.real ** 2 + m.imag ** 2
        self._sff *= keep
        self._smf *= keep
        self._accumulate(0, m, u[None, :])
        for first, p, onsets in self._batches:
            self._accumulate(first, m, _squash(u[None, :], onsets, p))
        self._blocks += 1
        if self._blocks >= self._min_blocks:
            self._choose()

    def _accumulate(self, first: int, m: npt.NDArray[np.complex64], shaped: Floats) -> None:
        f = np.fft.rfft(self._window * shaped, axis=1).astype(np.complex64)
        rows = slice(first, first + len(shaped))
        self._sff[rows] += f.real ** 2 + f.imag ** 2
        self._smf[rows] += m * np.conj(f)

    def _choose(self) -> None:
        scores = self.residual_db()
        best = int(np.argmin(scores))
        now = self.choices.index(self.current)
        # leaving linear takes a clear gain; between two clippers, which differ less, a small
        # one (each switch costs the canceller a little re-learning)
        needed = self._switch_db if self.current.linear else self._switch_db / 4
        if best != now and scores[now] - scores[best] >= needed:
            log.info("loudspeaker: %s (the echo is %.1f dB more predictable than as %s)",
                     self.choices[best], scores[now] - scores[best], self.current)
            self.current = self.choices[best]
            self.switches += 1
            self._held = 0
