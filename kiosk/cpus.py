"""The CPU budget: how many cores this process may use, and pinning it to fewer.

Every engine sizes its thread pool when it is made, from the cores the process may run on
(`os.sched_getaffinity`), never from the machine's count: pinned to one core, two Whisper
threads and two onnxruntime threads would only take the core from each other. The benches
pin (`--cpus N`) before they load anything, so a 1- or 2-core budget is measured as the
kiosk's engines would size themselves on it.
"""

from __future__ import annotations

import logging
import os

from kiosk.errors import KioskError

log = logging.getLogger(__name__)


def available() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def threads(wanted: int) -> int:
    """An engine's thread pool: what it would take, at most the cores the process has."""
    return max(1, min(wanted, available()))


def pin(count: int) -> list[int]:
    """Run this process (and the threads it starts from now on) on its first `count` cores."""
    allowed = sorted(os.sched_getaffinity(0))
    if count < 1 or count > len(allowed):
        raise KioskError("bench", f"--cpus {count}: this machine lets the process use "
                                  f"{len(allowed)} cores", f"give --cpus 1 to {len(allowed)}")
    chosen = allowed[:count]
    os.sched_setaffinity(0, chosen)
    log.info("cpus: pinned to %s", chosen)
    return chosen
