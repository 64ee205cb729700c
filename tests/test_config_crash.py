"""Power cuts during saves: a writer saving as fast as it can is killed at random moments; the
configuration read afterwards is always a whole one (the last saved or the one before it),
never torn, never missing, and never the defaults."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kiosk.configstore import load_with_fallback

pytestmark = pytest.mark.slow

WRITER = """
import sys
from kiosk.configstore import ConfigStore
store = ConfigStore(__import__("pathlib").Path(sys.argv[1]))
i = int(sys.argv[2])
print("ready", flush=True)
while True:
    store.set("screen.fixed_page", f"page-{i}")
    store.set("console.idle_logout_s", str(30 + i % 1000))
    store.save()
    i += 1
"""


def test_killed_writers_never_leave_a_broken_configuration(tmp_path: Path) -> None:
    path = tmp_path / "kiosk.toml"
    rng = random.Random(1234)
    last = -1
    runs = 0
    while last < 1000:
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(last + 1)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.15))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        runs += 1
        if not path.exists():
            continue  # killed before its first save: nothing was ever promised
        cfg, origin = load_with_fallback(path)
        assert origin == "file", f"run {runs}: the file was unusable"
        page = cfg.screen.fixed_page
        assert page.startswith("page-"), page
        k = int(page.removeprefix("page-"))
        assert k >= last, f"run {runs}: went back from page-{last} to {page}"
        assert cfg.console.idle_logout_s == 30 + k % 1000  # both settings of one save
        last = k
        leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".kiosk.toml.")]
        assert len(leftovers) <= 2  # at most the temp files of the interrupted save
        for name in leftovers:
            (tmp_path / name).unlink()
    assert runs >= 5
