"""Speech recognition behind one small interface: start, feed audio, read partials, finish."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

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


@runtime_checkable
class Speculative(Protocol):
    """A recognizer that can start on the utterance at a pause (one that does not stream)."""

    def speculate(self) -> None:
        """Begin transcribing what was heard so far; `finish` returns it if nothing follows."""
        ...

    def withdraw(self) -> None:
        """More speech came: forget the speculative transcript."""
        ...

    def speculation(self) -> str:
        """The speculative transcript (waiting for it), or "" when there is none."""
        ...
