"""Small stand-ins that implement the project's Protocols, for tests without model files."""

from __future__ import annotations

import hashlib

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples, to_int16
from kiosk.retrieval.embedder import Vectors, rough_token_count
from kiosk.text import terms


def tone(seconds: float, rate: int = RATE_HZ, hz: float = 440.0, amp: float = 0.5) -> Samples:
    """A sine of `amp` (full scale 1) as int16 audio."""
    t = np.arange(int(seconds * rate)) / rate
    return to_int16(amp * np.sin(2 * np.pi * hz * t))


class HashingEmbedder:
    """A deterministic bag-of-terms embedder: texts sharing terms get similar vectors."""

    name = "hashing-test"
    dim = 64
    score_floor = 0.0

    def __init__(self) -> None:
        self.calls = 0

    def _embed(self, texts: list[str]) -> Vectors:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in terms(text):
                slot = int(hashlib.md5(term.encode()).hexdigest()[:8], 16) % self.dim
                out[row, slot] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._embed(texts)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._embed(texts)

    def token_count(self, text: str) -> int:
        return rough_token_count(text)


class EnergyVad:
    """Speech wherever the chunk is loud: a VAD for tests that build their own audio."""

    def reset(self) -> None:
        pass

    def probability(self, samples: Samples) -> float:
        return 1.0 if np.abs(samples.astype(np.int32)).mean() > 1000 else 0.0


class ScriptedRecognizer:
    """Hears the next line of its script at each utterance's end (then nothing); `partial`
    is what it says while the utterance is going on."""

    lang = "en"

    def __init__(self, lines: list[str], partial: str = "") -> None:
        self.lines = list(lines)
        self.partial = partial

    def start(self) -> None:
        pass

    def accept(self, samples: Samples) -> str:
        return self.partial

    def finish(self) -> str:
        return self.lines.pop(0) if self.lines else ""
