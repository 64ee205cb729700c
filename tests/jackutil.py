"""Test helpers for a JACK server (also imported by child processes the tests start)."""

from __future__ import annotations

import subprocess
import time
from typing import Any


def loop_back(stream: Any) -> None:
    """Connect the stream's own playback port to its capture port, then drop what was
    captured before the connection."""
    ports = subprocess.run(["jack_lsp"], capture_output=True, text=True).stdout.split()
    out_port = next(p for p in ports if p.startswith("PortAudio") and "out" in p)
    in_port = next(p for p in ports if p.startswith("PortAudio") and "in" in p)
    subprocess.run(["jack_connect", out_port, in_port], check=True)
    time.sleep(0.2)
    while not stream.chunks.empty():
        stream.chunks.get_nowait()
