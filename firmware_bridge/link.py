"""The host end of the touchscreen link: owns the port, shakes hands, matches answers to
requests by sequence id (timeout, retries), hands unsolicited events on, and reopens the port
when it goes away and comes back.

The framing and messages it speaks are pure (`codec`, `messages`); this module is the only one
that touches the port and runs a thread (the blocking reader).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.codec import Decoder, encode
from firmware_bridge.messages import (
    EVENTS,
    Hello,
    HelloAck,
    Message,
    ProtocolError,
    from_frame,
    to_frame,
)
from kiosk.errors import KioskError

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1


class BridgeError(KioskError):
    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__("bridge", message, fix)


@dataclass
class LinkStats:
    connects: int = 0
    disconnects: int = 0
    retries: int = 0
    timeouts: int = 0
    protocol_errors: int = 0
    events: int = 0


class BridgeLink:
    def __init__(self, url: str, on_event: Callable[[Message], None], *,
                 timeout_s: float = 0.3, retries: int = 2, reopen_s: float = 0.2,
                 opener: Callable[..., Any] | None = None) -> None:
        self.url = url
        self.on_event = on_event
        self.timeout_s = timeout_s
        self.retries = retries
        self.reopen_s = reopen_s
        self.stats = LinkStats()
        self.firmware = ""
        self.connected = threading.Event()
        self._opener = opener
        self._port: Any = None
        self._write_lock = threading.Lock()
        self._pending: dict[int, tuple[threading.Event, list[Message]]] = {}
        self._pending_lock = threading.Lock()
        self._seq = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="bridge-link", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close()

    def _open(self) -> Any:
        if self._opener is not None:
            return self._opener(self.url)
        import serial

        return serial.serial_for_url(self.url, baudrate=115200, timeout=0.05)

    def _close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            with contextlib.suppress(OSError):
                port.close()
        if self.connected.is_set():
            self.connected.clear()
            self.stats.disconnects += 1
            log.warning("bridge: %s disconnected", self.url)

    # ------------------------------------------------------------ requests

    def _next_seq(self) -> int:
        with self._pending_lock:
            self._seq = self._seq % 255 + 1  # 0 is for events
            return self._seq

    def _send(self, message: Message, seq: int) -> None:
        port = self._port
        if port is None:
            raise BridgeError(f"bridge {self.url} is not connected",
                              "check the cable; the link reconnects by itself")
        with self._write_lock:
            port.write(encode(to_frame(message, seq)))

    def request(self, message: Message) -> Message:
        """Send and wait for the answer with the same sequence id; retried on time-outs."""
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retries += 1
            if not self.connected.wait(self.timeout_s):
                last = BridgeError(f"bridge {self.url} is not connected",
                                   "check the cable; the link reconnects by itself")
                continue
            seq = self._next_seq()
            done = threading.Event()
            box: list[Message] = []
            with self._pending_lock:
                self._pending[seq] = (done, box)
            try:
                self._send(message, seq)
                if done.wait(self.timeout_s):
                    return box[0]
                self.stats.timeouts += 1
                last = BridgeError(f"bridge: no answer to {type(message).__name__} "
                                   f"within {self.timeout_s} s")
            except (OSError, BridgeError) as exc:
                last = exc
            finally:
                with self._pending_lock:
                    self._pending.pop(seq, None)
        assert last is not None
        raise last if isinstance(last, BridgeError) else BridgeError(str(last))

    # ------------------------------------------------------------ reader

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._port = self._open()
                self._serve()
            except Exception as exc:  # the port's errors vary by driver: all mean "gone"
                if not self._stop.is_set():
                    log.debug("bridge: %s: %s", self.url, exc)
            self._close()
            self._stop.wait(self.reopen_s)

    def _serve(self) -> None:
        decoder = Decoder()
        hello_seq = self._next_seq()
        self._send(Hello(PROTOCOL_VERSION), hello_seq)
        deadline = time.monotonic() + max(1.0, self.timeout_s * 3)
        while not self._stop.is_set():
            data = self._port.read(256)
            if not data and not self.connected.is_set() and time.monotonic() > deadline:
                raise BridgeError(f"bridge {self.url}: no handshake answer")
            for frame in decoder.feed(data):
                try:
                    message = from_frame(frame)
                except ProtocolError as exc:
                    self.stats.protocol_errors += 1
                    log.warning("bridge: %s", exc.describe())
                    continue
                if isinstance(message, HelloAck) and frame.seq == hello_seq:
                    if message.version != PROTOCOL_VERSION:
                        raise BridgeError(
                            f"bridge firmware speaks protocol {message.version}, "
                            f"this host {PROTOCOL_VERSION}", "update the firmware or the host")
                    self.firmware = message.firmware
                    self.stats.connects += 1
                    self.connected.set()
                    log.info("bridge: connected to %s (firmware %s)", self.url, self.firmware)
                elif isinstance(message, EVENTS):
                    self.stats.events += 1
                    self.on_event(message)
                else:
                    with self._pending_lock:
                        waiting = self._pending.get(frame.seq)
                    if waiting is not None:
                        waiting[1].append(message)
                        waiting[0].set()
