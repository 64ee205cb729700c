"""`kiosk doctor --echo` on a real clocked device: JACK's dummy backend with the playback
connected back into the capture (a loudspeaker right at the microphone)."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest


def _connect_own_ports(stop: threading.Event) -> None:
    """Wait for PortAudio's ports to appear, then connect its output to its input."""
    while not stop.is_set():
        ports = subprocess.run(["jack_lsp"], capture_output=True, text=True).stdout.split()
        outs = [p for p in ports if p.startswith("PortAudio") and "out" in p]
        ins = [p for p in ports if p.startswith("PortAudio") and "in" in p]
        if outs and ins:
            subprocess.run(["jack_connect", outs[0], ins[0]], capture_output=True)
            return
        time.sleep(0.02)


@pytest.mark.slow
def test_echo_probe_through_a_loopback(jack_server: None) -> None:
    import dataclasses

    from kiosk.config import AudioConfig, Config
    from kiosk.doctor import OK, check_echo_measured

    cfg = dataclasses.replace(Config(), audio=AudioConfig("system", "system"))
    stop = threading.Event()
    helper = threading.Thread(target=_connect_own_ports, args=(stop,), daemon=True)
    helper.start()
    try:
        check = check_echo_measured(cfg, probe_s=6.0)
    finally:
        stop.set()
        helper.join(5)
    assert check.status == OK, check
    # the loopback adds no loss: the echo is as loud as the playback, and speex removes it
    assert "echo at the microphone 0 dB under" in check.detail
    erle = float(check.detail.split("ERLE ")[1].split(" dB")[0])
    assert erle > 30.0, check.detail
