"""JACK's dummy backend: a clocked sound device without a sound card, and a loopback of our own
playback into our own capture. Used by the echo bench and the tests."""

from __future__ import annotations

import subprocess
import time

from kiosk.errors import KioskError

DUMMY_SERVER = ["jackd", "--no-realtime", "-d", "dummy", "-r", "16000", "-p", "160"]


def ports() -> list[str]:
    return subprocess.run(["jack_lsp"], capture_output=True, text=True).stdout.split()


def running() -> bool:
    return subprocess.run(["jack_lsp"], capture_output=True).returncode == 0


def start_dummy(timeout_s: float = 10.0) -> subprocess.Popen[bytes] | None:
    """Start the dummy server unless one runs; returns the process to stop, or None."""
    if running():
        return None
    try:
        proc = subprocess.Popen(DUMMY_SERVER, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise KioskError("audio", "jackd is not installed",
                         "run scripts/setup.sh as root (apt-get install jackd2)") from exc
    deadline = time.monotonic() + timeout_s
    while not running():
        if time.monotonic() > deadline:
            proc.kill()
            raise KioskError("audio", "jackd did not start", "try: jackd -d dummy")
        time.sleep(0.1)
    return proc


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None:
        proc.terminate()
        proc.wait(timeout=10)


def loop_back_own(timeout_s: float = 5.0) -> None:
    """Connect PortAudio's playback port to its capture port (a loudspeaker right at the
    microphone), waiting for them to appear."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = ports()
        outs = [p for p in found if p.startswith("PortAudio") and "out" in p]
        ins = [p for p in found if p.startswith("PortAudio") and "in" in p]
        if outs and ins:
            subprocess.run(["jack_connect", outs[0], ins[0]], capture_output=True)
            return
        if time.monotonic() > deadline:
            raise KioskError("audio", "PortAudio's JACK ports did not appear",
                             "is the duplex stream started?")
        time.sleep(0.02)
