"""Speech synthesis behind one small interface: a generator of audio, one piece per sentence,
so playback can start when the first sentence is ready."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kiosk.audio.format import RATE_HZ, Samples
from kiosk.text import lead_split, split_long, spoken_pieces


@dataclass(frozen=True)
class Speech:
    text: str  # the sentence this audio speaks
    samples: Samples  # int16 at the pipeline's rate (16 kHz)


class Synthesizer(Protocol):
    lang: str

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        """One piece per sentence; with `lead` (a reply), a long first sentence begins with
        a lead phrase of its own (`kiosk.text.lead_split`) and the engine's silence before
        each piece is cut (`trimmed`). Without it (a question a benchmark says), the
        engine's audio as it comes."""
        ...


LEAD_SILENCE_MS = 30  # the engines' own silence before speech, cut to this...
PHRASE_SILENCE_MS = 100  # ...and after a lead phrase, to this (a phrase pause, not a stop)
_SILENT = 300  # int16 amplitude (-40 dBFS) at or below which a sample is silence


def trimmed(samples: Samples, *, trail_ms: int | None = None) -> Samples:
    """The piece with at most LEAD_SILENCE_MS of silence before its speech (Open JTalk
    leaves ~300 ms: that is time the visitor waits) and, when `trail_ms` is given, at most
    that much after it."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > _SILENT)
    if not len(loud):
        return samples
    start = max(0, int(loud[0]) - RATE_HZ * LEAD_SILENCE_MS // 1000)
    end = len(samples) if trail_ms is None else min(
        len(samples), int(loud[-1]) + 1 + RATE_HZ * trail_ms // 1000)
    return samples[start:end]


def pieces_to_say(text: str, lead: bool, lang: str,
                  boundaries: Callable[[str], Iterable[int]],
                  max_chars: int | None = None) -> list[tuple[str, int | None]]:
    """The pieces a synthesizer says, each with the silence its end may keep (None: as the
    engine makes it): sentence by sentence (`spoken_pieces`), and with `lead` a long first
    piece split at the first of its phrase `boundaries` that `lead_split` accepts, its lead
    phrase ending in a phrase pause (PHRASE_SILENCE_MS). With `max_chars`, a piece longer
    than that is said in parts (`split_long`), each ending in a phrase pause: an engine's
    working memory grows with the length of what it says at once."""
    pieces = spoken_pieces(text)
    split = lead_split(pieces[0], boundaries(pieces[0]), lang) if lead and pieces else None
    said: list[tuple[str, int | None]] = [(piece, None) for piece in pieces]
    if split is not None:
        said[:1] = [(split[0], PHRASE_SILENCE_MS), (split[1], None)]
    if max_chars is None:
        return said
    out: list[tuple[str, int | None]] = []
    for piece, trail_ms in said:
        out += in_parts(split_long(piece, max_chars, boundaries(piece)), trail_ms)
    return out


def in_parts(parts: list[str], trail_ms: int | None) -> list[tuple[str, int | None]]:
    """The parts one piece is said in: each but the last ends in a phrase pause, the last as
    the whole piece would have."""
    return [(part, PHRASE_SILENCE_MS) for part in parts[:-1]] + [(parts[-1], trail_ms)]


def spoken(voice: Synthesizer, text: str) -> Samples:
    """All of a text's audio in one piece (benchmarks and tests; the loop plays it sentence
    by sentence)."""
    return np.concatenate([piece.samples for piece in voice.synthesize(text)])
