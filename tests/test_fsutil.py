"""Durable saves leave nothing behind, even after a save was killed half-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kiosk.fsutil import STALE_AFTER_S, atomic_write_bytes


def test_a_killed_save_leaves_a_temp_file_that_the_next_save_removes(tmp_path: Path) -> None:
    target = tmp_path / "site.npz"
    # A real writer killed with SIGKILL while its temporary file is open.
    code = (
        "import sys, time, tempfile; from pathlib import Path\n"
        f"fd, name = tempfile.mkstemp(prefix='.site.npz.', dir={str(tmp_path)!r})\n"
        "print(name, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    leftover = Path(proc.stdout.readline().strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert leftover.exists()
    fresh = tmp_path / ".site.npz.abcd1234"  # a save running right now: left alone
    fresh.write_bytes(b"x")
    old = time.time() - STALE_AFTER_S - 5
    os.utime(leftover, (old, old))
    atomic_write_bytes(target, b"index")
    assert target.read_bytes() == b"index"
    assert not leftover.exists() and fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.npz.abcd1234", "site.npz"]
