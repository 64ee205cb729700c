"""A duplex stream on a real clocked device (JACK dummy): a reply is played, looped back into
the capture by a JACK connection, and every captured chunk carries what was playing."""

from __future__ import annotations

import itertools
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from kiosk.audio.format import RATE_HZ, level_dbfs

pytestmark = pytest.mark.slow


def test_reply_is_played_and_captured_back_over_a_loopback(jack_server: None,
                                                           models_dir: Path) -> None:
    from kiosk.audio.duplex import DuplexStream
    from kiosk.models import load_manifest
    from kiosk.tts.piper import PiperSynthesizer

    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    reply = np.concatenate([s.samples for s in tts.synthesize("The cafe is on the ground floor.")])
    stream = DuplexStream("system", "system")
    stream.start()
    try:
        ports = subprocess.run(["jack_lsp"], capture_output=True, text=True).stdout.split()
        out_port = next(p for p in ports if p.startswith("PortAudio") and "out" in p)
        in_port = next(p for p in ports if p.startswith("PortAudio") and "in" in p)
        subprocess.run(["jack_connect", out_port, in_port], check=True)
        time.sleep(0.2)
        while not stream.chunks.empty():
            stream.chunks.get_nowait()
        started = time.monotonic()
        stream.play(reply)
        captured = []
        while time.monotonic() - started < len(reply) / RATE_HZ + 0.6:
            captured.append(stream.chunks.get(timeout=2))
    finally:
        stream.stop()
    elapsed = time.monotonic() - started
    assert elapsed >= len(reply) / RATE_HZ  # played in real time on the device's clock
    mic = np.concatenate([c.mic.samples for c in captured])
    ref = np.concatenate([c.reference for c in captured])
    assert level_dbfs(mic) > -40 and level_dbfs(ref) > -40
    # the capture is the reference, delayed by the loop: find the lag and compare
    corr = np.correlate(mic[:RATE_HZ].astype(float), ref[:RATE_HZ].astype(float), "full")
    lag = int(np.argmax(corr)) - (RATE_HZ - 1)
    assert 0 <= lag <= 3 * 320
    assert np.corrcoef(mic[lag:lag + RATE_HZ], ref[:RATE_HZ])[0, 1] > 0.95
    stamps = [c.mic.start_ms for c in captured]
    assert all(b - a == 20 for a, b in itertools.pairwise(stamps))
    assert stream.dropped == 0
