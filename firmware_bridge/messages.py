"""The link's typed messages: small frozen dataclasses, one frame type each, JSON payloads.

`to_frame` / `from_frame` are pure; `from_frame` raises `ProtocolError` (with a code) for a frame
whose type is unknown or whose payload does not fit the message, never returns a wrong one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from firmware_bridge.codec import Frame
from kiosk.errors import KioskError

AVATAR_STATES = ("idle", "listening", "thinking", "speaking")


class ProtocolError(KioskError):
    def __init__(self, message: str) -> None:
        super().__init__("bridge-protocol", message, "check the firmware's protocol version")


@dataclass(frozen=True)
class Message:
    TYPE: ClassVar[int] = -1


# host -> microcontroller (requests; answered with Ack, HelloAck or Pong)
@dataclass(frozen=True)
class Hello(Message):
    TYPE: ClassVar[int] = 0x01
    version: int = 1


@dataclass(frozen=True)
class Ping(Message):
    TYPE: ClassVar[int] = 0x03


@dataclass(frozen=True)
class SetAvatarState(Message):
    TYPE: ClassVar[int] = 0x10
    state: str = "idle"

    def __post_init__(self) -> None:
        if self.state not in AVATAR_STATES:
            raise ProtocolError(f"avatar state {self.state!r} is not one of {AVATAR_STATES}")


@dataclass(frozen=True)
class SetEchoCanceller(Message):
    TYPE: ClassVar[int] = 0x11
    on: bool = True


# microcontroller -> host (answers)
@dataclass(frozen=True)
class HelloAck(Message):
    TYPE: ClassVar[int] = 0x02
    version: int = 1
    firmware: str = ""


@dataclass(frozen=True)
class Pong(Message):
    TYPE: ClassVar[int] = 0x04


@dataclass(frozen=True)
class Ack(Message):
    TYPE: ClassVar[int] = 0x7F
    ok: bool = True
    error: str = ""


# microcontroller -> host (unsolicited events)
@dataclass(frozen=True)
class PageShown(Message):
    TYPE: ClassVar[int] = 0x20
    url: str = ""


@dataclass(frozen=True)
class Touch(Message):
    TYPE: ClassVar[int] = 0x21
    x: int = 0
    y: int = 0


@dataclass(frozen=True)
class Button(Message):
    TYPE: ClassVar[int] = 0x22
    name: str = ""
    pressed: bool = True


@dataclass(frozen=True)
class MicMute(Message):
    TYPE: ClassVar[int] = 0x23
    muted: bool = False


@dataclass(frozen=True)
class EchoCancellerStatus(Message):
    TYPE: ClassVar[int] = 0x24
    active: bool = False
    erle_db: float = 0.0


MESSAGES: dict[int, type[Message]] = {
    cls.TYPE: cls for cls in (Hello, Ping, SetAvatarState, SetEchoCanceller, HelloAck, Pong,
                              Ack, PageShown, Touch, Button, MicMute, EchoCancellerStatus)}
EVENTS = (PageShown, Touch, Button, MicMute, EchoCancellerStatus)


def to_frame(message: Message, seq: int) -> Frame:
    payload = json.dumps(asdict(message), separators=(",", ":"), ensure_ascii=False)
    return Frame(message.TYPE, seq, payload.encode("utf-8"))


def from_frame(frame: Frame) -> Message:
    cls = MESSAGES.get(frame.type)
    if cls is None:
        raise ProtocolError(f"unknown message type 0x{frame.type:02x}")
    try:
        data = json.loads(frame.payload.decode("utf-8")) if frame.payload else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"payload of {cls.__name__} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"payload of {cls.__name__} is not an object")
    expected = {f.name: f.type for f in fields(cls)}
    unknown = sorted(set(data) - set(expected))
    if unknown:
        raise ProtocolError(f"{cls.__name__} has unknown fields {unknown}")
    for name, value in data.items():
        if not _fits(expected[name], value):
            raise ProtocolError(f"{cls.__name__}.{name} = {value!r} has the wrong type")
    try:
        message: Message = cls(**data)
    except TypeError as exc:
        raise ProtocolError(f"{cls.__name__}: {exc}") from exc
    return message


def _fits(type_name: Any, value: Any) -> bool:
    kind = str(type_name)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)
