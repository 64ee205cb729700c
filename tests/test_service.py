"""The service's watchdog: pings only while the turn loop makes progress; a hung stage stops
them. READY goes out once the audio loop runs. Real sd_notify datagrams on a real socket."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from kiosk.app import VoiceLoop
from kiosk.audio.format import RATE_HZ
from kiosk.audio.recorded import RecordedStream
from kiosk.service import SystemdNotifier, WatchdogGate, supervise, watchdog_interval_s
from kiosk.tts import Speech
from tests.fakes import EnergyVad, ScriptedRecognizer


def test_gate_pings_while_progress_moves_and_stops_after_a_stall() -> None:
    gate = WatchdogGate(stall_s=10.0)
    assert gate.observe(0.0, 1)
    assert gate.observe(5.0, 2)
    assert gate.observe(14.0, 2)  # stood still 9 s: still within the stall limit
    assert not gate.observe(15.0, 2)
    assert not gate.observe(60.0, 2)
    assert gate.observe(61.0, 3)  # moving again


def test_watchdog_interval_from_systemd_environment() -> None:
    pid = str(os.getpid())
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": pid}) == 10.0
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval_s({}) is None


@dataclass
class Recorder:
    messages: list[str] = field(default_factory=list)
    ping_at_s: list[float] = field(default_factory=list)

    def ready(self) -> None:
        self.messages.append("ready")

    def ping(self) -> None:
        self.messages.append("ping")
        self.ping_at_s.append(time.monotonic())

    def status(self, text: str) -> None:
        self.messages.append(f"status {text}")

    def stopping(self) -> None:
        self.messages.append("stopping")



class HangingBrain:
    """A stage that hangs: respond() blocks until the test lets it go."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def remember(self, exchange: object) -> None:
        pass

    def respond(self, *args: object, **kwargs: object) -> object:
        self.entered_at_s = time.monotonic()
        self.entered.set()
        self.release.wait(30)
        raise RuntimeError("released")


class Silent:
    lang = "en"

    def synthesize(self, text: str, *, lead: bool = False) -> Iterator[Speech]:
        return iter(())


@pytest.mark.slow
def test_a_hung_stage_stops_the_watchdog_pings() -> None:
    silence = np.zeros(RATE_HZ * 2, dtype=np.int16)
    tone = (np.sin(np.arange(RATE_HZ) * 0.2) * 8000).astype(np.int16)
    mic = np.concatenate([silence, tone, silence, np.zeros(RATE_HZ * 600, dtype=np.int16)])
    brain = HangingBrain()
    loop = VoiceLoop(RecordedStream(mic), brain, EnergyVad(), ScriptedRecognizer(["hello"]),  # type: ignore[arg-type]
                     {"en": Silent()})
    notes = Recorder()

    async def main() -> tuple[int, int]:
        stop = asyncio.Event()
        runner = asyncio.create_task(loop.run(stop))
        watcher = asyncio.create_task(supervise(lambda: loop.chunks_read, notes, 0.05,
                                                WatchdogGate(stall_s=0.3), stop))
        while not brain.entered.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # past the stall limit
        pings_past_stall = notes.messages.count("ping")
        await asyncio.sleep(1.0)
        pings_later = notes.messages.count("ping") - pings_past_stall
        brain.release.set()
        stop.set()
        await watcher
        runner.cancel()
        return pings_past_stall, pings_later

    try:
        pings_past_stall, pings_later = asyncio.run(main())
    finally:
        loop.close()
    assert notes.messages[:2] == ["ready", "status listening"]
    # pinged while the loop ran and for the stall limit after it hung (0.3 s, seen within one
    # 0.05 s interval; a loaded machine runs late by a few more), then never again. Timed
    # from the hang: how many pings came before it depends on the machine's speed (the
    # recording is read faster than real time; the loop may hang before the first ping).
    assert pings_past_stall >= 1, notes.messages
    assert notes.ping_at_s[-1] - brain.entered_at_s <= 0.3 + 0.05 + 0.1, notes.ping_at_s
    assert pings_later == 0, notes.messages


def test_sd_notify_reaches_the_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "notify.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(path))
    server.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    notifier = SystemdNotifier()
    notifier.ready()
    notifier.ping()
    notifier.status("listening")
    got = [server.recv(4096).decode() for _ in range(3)]
    server.close()
    assert got == ["READY=1", "WATCHDOG=1", "STATUS=listening"]


def test_outside_systemd_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = SystemdNotifier()
    assert not notifier.active
    notifier.ready()  # no socket, no error
