"""A simulated touchscreen microcontroller on a pseudo-terminal, for tests and the demo.

It answers the handshake, pings and commands, keeps the avatar state and echo canceller
switch, sends events when asked, and can be unplugged and plugged back in: the port the host
opens is a symlink that disappears and then points at a fresh pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import threading
import tty
from pathlib import Path

from firmware_bridge.codec import Decoder, encode
from firmware_bridge.messages import (
    Ack,
    Hello,
    HelloAck,
    Message,
    Ping,
    Pong,
    ProtocolError,
    SetAvatarState,
    SetEchoCanceller,
    from_frame,
    to_frame,
)


class Simulator:
    def __init__(self, link: Path, firmware: str = "sim-1.0", version: int = 1) -> None:
        self.link = link
        self.firmware = firmware
        self.version = version
        self.avatar_state = "idle"
        self.echo_canceller = False
        self.requests: list[Message] = []
        self.drop_next = 0  # answers to swallow (to exercise the host's retries)
        self._master = -1
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._event_seq = 0
        self._lock = threading.Lock()

    def plug(self) -> None:
        master, slave = pty.openpty()
        tty.setraw(slave)
        name = os.ttyname(slave)
        os.close(slave)  # the host opens it by path
        tmp = self.link.with_name(self.link.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(name)
        os.replace(tmp, self.link)
        self._master = master
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="simulator", daemon=True)
        self._thread.start()

    def unplug(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        if self._master >= 0:
            os.close(self._master)
            self._master = -1

    def send_event(self, message: Message) -> None:
        with self._lock:
            self._event_seq = 0  # events carry seq 0
            os.write(self._master, encode(to_frame(message, self._event_seq)))

    def _answer(self, message: Message) -> Message:
        if isinstance(message, Hello):
            return HelloAck(self.version, self.firmware)
        if isinstance(message, Ping):
            return Pong()
        if isinstance(message, SetAvatarState):
            self.avatar_state = message.state
            return Ack(True)
        if isinstance(message, SetEchoCanceller):
            self.echo_canceller = message.on
            return Ack(True)
        return Ack(False, f"{type(message).__name__} is not a command")

    def _serve(self) -> None:
        decoder = Decoder()
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._master, 1024)
            except OSError:
                continue  # no reader on the other side yet
            for frame in decoder.feed(data):
                try:
                    message = from_frame(frame)
                except ProtocolError as exc:
                    reply: Message = Ack(False, exc.message)
                else:
                    self.requests.append(message)
                    reply = self._answer(message)
                if self.drop_next and not isinstance(reply, HelloAck):
                    self.drop_next -= 1
                    continue
                with self._lock:
                    os.write(self._master, encode(to_frame(reply, frame.seq)))
