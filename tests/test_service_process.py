"""`kiosk run` as systemd runs it: on a real (JACK) sound device, READY=1 only once the models
are loaded and audio flows, WATCHDOG=1 pings while the loop runs, STOPPING=1 on SIGTERM."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


@pytest.mark.slow
def test_kiosk_run_speaks_sd_notify(tmp_path: Path, models_dir: Path,
                                    jack_server: None) -> None:
    sock_path = tmp_path / "notify.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(sock_path))
    config = tmp_path / "kiosk.toml"
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    config.write_text('[audio]\ninput_device = "system"\noutput_device = "system"\n'
                      '[echo]\nmode = "hardware"\n'
                      f'[metrics]\ntextfile_dir = "{textfile}"\ninterval_s = 1\n')
    env = {**os.environ, "NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "1500000",
           "KIOSK_STATE_DIR": str(tmp_path / "state"), "KIOSK_MODELS_DIR": str(models_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "kiosk", "--config", str(config), "run"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got: list[tuple[float, str]] = []
    try:
        server.settimeout(1.0)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and sum(m == "WATCHDOG=1" for _, m in got) < 3:
            try:
                got.append((time.monotonic(), server.recv(4096).decode()))
            except TimeoutError:
                assert proc.poll() is None, proc.communicate()[1][-2000:]
        proc.send_signal(signal.SIGTERM)
        server.settimeout(10)
        while "STOPPING=1" not in [m for _, m in got]:
            got.append((time.monotonic(), server.recv(4096).decode()))
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
    messages = [m for _, m in got]
    assert messages[0] == "READY=1", messages
    assert "ready (models loaded, audio loop running)" in err
    pings = [t for t, m in got if m == "WATCHDOG=1"]
    assert len(pings) >= 3
    # a third of WatchdogSec apart (0.5 s), never late
    gaps = [b - a for a, b in itertools.pairwise(pings)]
    assert max(gaps) < 1.5, gaps
    assert proc.returncode == 0, err[-2000:]
    # the service wrote its metrics while it ran, and `kiosk_up 0` when it stopped cleanly
    from prometheus_client.parser import text_string_to_metric_families

    metrics = {s.name: s.value for f in text_string_to_metric_families(
        (textfile / "kiosk.prom").read_text()) for s in f.samples if not s.labels}
    assert metrics["kiosk_up"] == 0 and metrics["kiosk_config_fallback"] == 0
    assert metrics["kiosk_site_pages"] == 44  # the demo site
    assert metrics["kiosk_process_resident_memory_bytes"] > 100e6
