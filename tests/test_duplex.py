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
from tests.jackutil import loop_back

pytestmark = pytest.mark.slow


def test_reply_is_played_and_captured_back_over_a_loopback(jack_server: None,
                                                           models_dir: Path) -> None:
    from kiosk.audio.duplex import DuplexStream
    from kiosk.models import load_manifest
    from kiosk.tts import spoken
    from kiosk.tts.piper import PiperSynthesizer

    tts = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], models_dir)
    reply = spoken(tts, "The cafe is on the ground floor.")
    stream = DuplexStream("system", "system")
    stream.start()
    try:
        loop_back(stream)
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


CHILD_48K = """
import numpy as np
from kiosk.audio.duplex import DuplexStream
from kiosk.audio.format import RATE_HZ
from tests.jackutil import loop_back
stream = DuplexStream("system", "system")
stream.start()
assert stream.rate_hz == 48000, stream.rate_hz
loop_back(stream)
t = np.arange(RATE_HZ) / RATE_HZ
stream.play((8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16))
got = [stream.chunks.get(timeout=2) for _ in range(60)]
stream.stop()
assert all(len(c.mic.samples) == 320 for c in got)
mic = np.concatenate([c.mic.samples for c in got[10:]]).astype(float)
peak_hz = np.argmax(np.abs(np.fft.rfft(mic))) * RATE_HZ / len(mic)
print("peak", peak_hz)
assert abs(peak_hz - 440) < 20, peak_hz
print("ok")
"""


@pytest.mark.serial  # a clocked JACK device of its own
def test_a_48_khz_device_is_resampled_at_the_edge(tmp_path: Path) -> None:
    import os
    import sys

    env = {**os.environ, "JACK_DEFAULT_SERVER": "kiosk48"}
    server = subprocess.Popen(["jackd", "-n", "kiosk48", "--no-realtime", "-d", "dummy", "-r",
                               "48000", "-p", "960"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["jack_lsp"], env=env, capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "jackd at 48 kHz did not start"
            time.sleep(0.1)
        child = subprocess.run([sys.executable, "-c", CHILD_48K], env=env, capture_output=True,
                               text=True, timeout=60)
        assert child.returncode == 0, child.stderr[-2000:]
        assert "ok" in child.stdout
    finally:
        server.terminate()
        server.wait(timeout=10)
