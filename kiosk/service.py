"""Life under systemd: READY when the models are loaded and the audio loop runs, and watchdog
pings only while the loop makes progress, so a hung stage ends in a restart.

The decision to ping is a pure gate over a progress counter (chunks read, device reopen
tries); the notifications go through cysystemd, the maintained sd_notify binding.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)


class Notifier(Protocol):
    def ready(self) -> None: ...

    def ping(self) -> None: ...

    def status(self, text: str) -> None: ...

    def stopping(self) -> None: ...


class SystemdNotifier:
    """sd_notify through cysystemd; nothing happens outside systemd (no NOTIFY_SOCKET)."""

    def __init__(self) -> None:
        from cysystemd import daemon

        self._daemon = daemon
        self.active = bool(os.environ.get("NOTIFY_SOCKET"))

    def _send(self, kind: str, value: str | None = None) -> None:
        if not self.active:
            return
        notification = getattr(self._daemon.Notification, kind)
        error = (self._daemon.notify(notification) if value is None
                 else self._daemon.notify(notification, value))
        if error is not None:
            log.warning("service: sd_notify %s failed: %s", kind, error)

    def ready(self) -> None:
        self._send("READY")

    def ping(self) -> None:
        self._send("WATCHDOG")

    def status(self, text: str) -> None:
        self._send("STATUS", text)

    def stopping(self) -> None:
        self._send("STOPPING")


def watchdog_interval_s(environ: dict[str, str] | None = None) -> float | None:
    """How often to ping: a third of systemd's WatchdogSec; None when there is no watchdog."""
    env = os.environ if environ is None else environ
    usec = env.get("WATCHDOG_USEC", "")
    pid = env.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0 or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 1_000_000 / 3


@dataclass
class WatchdogGate:
    """Ping while the progress counter moved within the last stall_s; stop pinging once it
    has stood still that long (a hung recognizer, brain, synthesizer or capture thread)."""

    stall_s: float
    _last_progress: int | None = None
    _last_change_s: float = 0.0

    def observe(self, now_s: float, progress: int) -> bool:
        if progress != self._last_progress:
            self._last_progress, self._last_change_s = progress, now_s
            return True
        return now_s - self._last_change_s < self.stall_s


async def supervise(progress: Callable[[], int], notifier: Notifier, interval_s: float | None,
                    gate: WatchdogGate, stop: asyncio.Event,
                    clock: Callable[[], float] | None = None) -> None:
    """READY once the loop has read its first audio; then ping through the gate."""
    loop = asyncio.get_running_loop()
    now = clock or loop.time
    start = progress()
    while not stop.is_set() and progress() == start:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.05)
    if stop.is_set():
        return
    notifier.ready()
    notifier.status("listening")
    log.info("service: ready (models loaded, audio loop running)")
    if interval_s is None:
        return
    stalled = False
    while not stop.is_set():
        if gate.observe(now(), progress()):
            notifier.ping()
            stalled = False
        elif not stalled:
            stalled = True
            log.error("service: the turn loop made no progress for %.1f s; no more watchdog "
                      "pings, systemd will restart the service", gate.stall_s)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
