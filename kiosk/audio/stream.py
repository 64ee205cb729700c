"""What the turn loop needs of an audio stream, live or recorded: captured chunks, each with
the playback that was playing meanwhile, and a playback queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kiosk.audio.format import AudioChunk, Samples


@dataclass(frozen=True)
class DuplexChunk:
    mic: AudioChunk
    reference: Samples  # what the loudspeaker played during the same 20 ms


class AudioStream(Protocol):
    def read(self, timeout_s: float) -> DuplexChunk | None:
        """The next captured chunk; None when none came within timeout_s."""
        ...

    def play(self, samples: Samples) -> float:
        """Queue audio after what is already queued; returns the output position (seconds on
        the audio output clock) at which its first sample will be heard."""
        ...

    def position_s(self) -> float:
        """The output position being heard now, on the audio output clock."""
        ...

    def stop_playback(self) -> None:
        """Drop everything not yet played."""
        ...

    @property
    def playing(self) -> bool: ...

    @property
    def ended(self) -> bool:
        """True when no more audio will come (a recording played out); never for a device."""
        ...

    @property
    def clock_ms(self) -> int:
        """The stream's own time: the end of the latest captured chunk."""
        ...

    def reopen(self) -> None:
        """Start again after the device went quiet; raises while it is still missing."""
        ...
