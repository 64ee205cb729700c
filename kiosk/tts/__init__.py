"""Speech synthesis behind one small interface: a generator of audio, one piece per sentence,
so playback can start when the first sentence is ready."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kiosk.audio.format import Samples


@dataclass(frozen=True)
class Speech:
    text: str  # the sentence this audio speaks
    samples: Samples  # int16 at the pipeline's rate (16 kHz)


class Synthesizer(Protocol):
    lang: str

    def synthesize(self, text: str) -> Iterator[Speech]: ...


def spoken(voice: Synthesizer, text: str) -> Samples:
    """All of a text's audio in one piece (benchmarks and tests; the loop plays it sentence
    by sentence)."""
    return np.concatenate([piece.samples for piece in voice.synthesize(text)])
