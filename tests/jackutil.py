"""Test helpers for a JACK server (also imported by child processes the tests start)."""

from __future__ import annotations

import time
from typing import Any

from kiosk.audio.jack import loop_back_own


def loop_back(stream: Any) -> None:
    """Connect the stream's own playback port to its capture port, then drop what was
    captured before the connection."""
    loop_back_own()
    time.sleep(0.2)
    while not stream.chunks.empty():
        stream.chunks.get_nowait()
