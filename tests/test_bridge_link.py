"""The link against the simulated microcontroller on real pseudo-terminals."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from firmware_bridge.link import BridgeError, BridgeLink
from firmware_bridge.messages import Ack, Message, PageShown, Ping, Pong, SetAvatarState
from firmware_bridge.simulator import Simulator

pytestmark = pytest.mark.slow


@pytest.fixture
def rig(tmp_path: Path):  # type: ignore[no-untyped-def]
    sim = Simulator(tmp_path / "ttyKIOSK")
    sim.plug()
    events: queue.Queue[Message] = queue.Queue()
    link = BridgeLink(str(tmp_path / "ttyKIOSK"), events.put, timeout_s=0.3)
    link.start()
    assert link.connected.wait(5), "no handshake"
    yield sim, link, events
    link.stop()
    sim.unplug()


def test_handshake_ping_commands_and_events(rig) -> None:  # type: ignore[no-untyped-def]
    sim, link, events = rig
    assert link.firmware == "sim-1.0"
    assert link.request(Ping()) == Pong()
    assert link.request(SetAvatarState("speaking")) == Ack(True)
    assert sim.avatar_state == "speaking"
    sim.send_event(PageShown("http://127.0.0.1:8000/en/cafe.md"))
    assert events.get(timeout=2) == PageShown("http://127.0.0.1:8000/en/cafe.md")


def test_lost_answers_are_retried(rig) -> None:  # type: ignore[no-untyped-def]
    sim, link, _ = rig
    sim.drop_next = 1
    assert link.request(Ping()) == Pong()
    assert link.stats.retries == 1 and link.stats.timeouts == 1


def test_no_answer_at_all_is_a_clear_error(rig) -> None:  # type: ignore[no-untyped-def]
    sim, link, _ = rig
    sim.drop_next = 10
    with pytest.raises(BridgeError, match="no answer to Ping"):
        link.request(Ping())


def test_unplug_and_replug_reconnects_within_two_seconds(rig) -> None:  # type: ignore[no-untyped-def]
    sim, link, _ = rig
    sim.unplug()
    deadline = time.monotonic() + 5
    while link.connected.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not link.connected.is_set()
    with pytest.raises(BridgeError, match="not connected"):
        link.request(Ping())
    sim.plug()
    replugged = time.monotonic()
    assert link.connected.wait(2.0), "did not reconnect within 2 s of replug"
    assert time.monotonic() - replugged < 2.0
    assert link.request(Ping()) == Pong()
    assert link.stats.connects == 2 and link.stats.disconnects == 1
