"""Line editing for a serial terminal (screen, picocom, PuTTY), as a pure byte-in/bytes-out
state machine: printable text (UTF-8, Japanese included) is echoed, Backspace/DEL erase one
character (two columns for wide ones), Ctrl-U erases the line, Ctrl-C cancels it, CR, LF or
CRLF end it. Escape sequences (arrow keys) and other control bytes are ignored. No I/O here.
"""

from __future__ import annotations

import codecs
import unicodedata
from dataclasses import dataclass, field

MAX_LINE_CHARS = 512
BELL = b"\x07"


@dataclass(frozen=True)
class Line:
    text: str


@dataclass(frozen=True)
class Cancel:
    pass


Event = Line | Cancel


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


@dataclass
class LineEditor:
    masked: bool = False  # echo '*' (PIN entry)
    _chars: list[str] = field(default_factory=list)
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))
    _last_cr: bool = False
    _escape: int = 0  # 0: none, 1: after ESC, 2: inside CSI

    def feed(self, data: bytes) -> tuple[bytes, list[Event]]:
        """Echo to send back, and the lines or cancels completed by these bytes."""
        echo = bytearray()
        events: list[Event] = []
        for ch in self._decoder.decode(data):
            code = ord(ch)
            if self._escape == 1:
                self._escape = 2 if ch == "[" else 0
                continue
            if self._escape == 2:
                if 0x40 <= code <= 0x7E:
                    self._escape = 0
                continue
            if ch == "\n" and self._last_cr:
                self._last_cr = False
                continue
            self._last_cr = ch == "\r"
            if ch in "\r\n":
                echo += b"\r\n"
                events.append(Line("".join(self._chars)))
                self._chars.clear()
            elif code == 0x1B:
                self._escape = 1
            elif code in (0x08, 0x7F):
                if self._chars:
                    width = 1 if self.masked else _width(self._chars.pop())
                    echo += b"\b \b" * width
            elif code == 0x15:  # Ctrl-U
                for gone in reversed(self._chars):
                    echo += b"\b \b" * (1 if self.masked else _width(gone))
                self._chars.clear()
            elif code == 0x03:  # Ctrl-C
                self._chars.clear()
                echo += b"^C\r\n"
                events.append(Cancel())
            elif code < 0x20 or 0x80 <= code < 0xA0:
                continue
            elif len(self._chars) >= MAX_LINE_CHARS:
                echo += BELL
            else:
                self._chars.append(ch)
                echo += b"*" if self.masked else ch.encode("utf-8")
        return bytes(echo), events

    @property
    def pending(self) -> str:
        return "".join(self._chars)
