"""Speech recognition behind one small interface: start, feed audio, read partials, finish."""

from __future__ import annotations

from typing import Protocol

from kiosk.audio.format import Samples


class Recognizer(Protocol):
    lang: str

    def start(self) -> None: ...

    def accept(self, samples: Samples) -> str:
        """Feed 16 kHz audio; returns the partial transcript so far."""
        ...

    def finish(self) -> str:
        """The final transcript of the utterance."""
        ...
