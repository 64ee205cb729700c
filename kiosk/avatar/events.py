"""The messages the avatar page receives (frozen dataclasses, JSON on the wire).

Times are on the audio output clock: seconds of output position, the sample being heard now
(`Clock.position_s`), so the page renders from the playback position, never from its timers.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class State:
    state: str  # idle | listening | thinking | speaking
    type: str = "state"


@dataclass(frozen=True)
class Mouth:
    start_s: float  # output position of the segment's first sample
    frame_ms: int
    values: tuple[float, ...]
    text: str  # the sentence being spoken: the caption
    lang: str
    type: str = "mouth"

    @property
    def end_s(self) -> float:
        return self.start_s + len(self.values) * self.frame_ms / 1000.0


@dataclass(frozen=True)
class Stop:
    """Barge-in or stop: close the mouth now, drop what was queued."""

    reason: str
    type: str = "stop"


@dataclass(frozen=True)
class Heard:
    """The visitor's words while listening (partial) and when done (final)."""

    text: str
    final: bool
    type: str = "heard"


@dataclass(frozen=True)
class Clock:
    position_s: float  # the output position being heard right now
    type: str = "clock"


Event = State | Mouth | Stop | Heard | Clock


def to_json(event: Event) -> str:
    return json.dumps(asdict(event), ensure_ascii=False)
