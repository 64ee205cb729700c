"""`kiosk doctor --echo` on a real clocked device: JACK's dummy backend with the playback
connected back into the capture (a loudspeaker right at the microphone)."""

from __future__ import annotations

import threading

import pytest

from kiosk.audio.jack import loop_back_own


@pytest.mark.slow
def test_echo_probe_through_a_loopback(jack_server: None) -> None:
    import dataclasses

    from kiosk.config import AudioConfig, Config
    from kiosk.doctor import OK, check_echo_measured

    cfg = dataclasses.replace(Config(), audio=AudioConfig("system", "system"))
    # the doctor opens the stream itself: connect its ports as soon as they appear
    helper = threading.Thread(target=loop_back_own, daemon=True)
    helper.start()
    check = check_echo_measured(cfg, probe_s=6.0)
    helper.join(5)
    assert check.status == OK, check
    # the loopback adds no loss: the echo is as loud as the playback, and speex removes it
    assert "echo at the microphone 0 dB under" in check.detail
    erle = float(check.detail.split("ERLE ")[1].split(" dB")[0])
    assert erle > 30.0, check.detail
