"""Framing of the touchscreen link: pure bytes in, frames out. No port, no clock, no threads.

    0x7E | version (1) | type (1) | seq (1) | length (2, little endian) | payload | CRC-32 (4, LE)

The CRC covers version..payload. The decoder never raises: on a bad version, an oversized
length or a CRC mismatch it drops the 0x7E it started from and looks for the next one, so a
valid frame after any garbage is found. See README.md in this folder for the protocol.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

SOF = 0x7E
VERSION = 1
MAX_PAYLOAD = 1024
_HEADER = struct.Struct("<BBBBH")  # sof, version, type, seq, length
_CRC = struct.Struct("<I")


@dataclass(frozen=True)
class Frame:
    type: int
    seq: int
    payload: bytes


def encode(frame: Frame) -> bytes:
    if not 0 <= frame.type <= 255 or not 0 <= frame.seq <= 255:
        raise ValueError(f"frame type and seq must be bytes: {frame.type}, {frame.seq}")
    if len(frame.payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(frame.payload)} bytes exceeds {MAX_PAYLOAD}")
    head = _HEADER.pack(SOF, VERSION, frame.type, frame.seq, len(frame.payload))
    body = head[1:] + frame.payload
    return head[:1] + body + _CRC.pack(zlib.crc32(body))


@dataclass
class Decoder:
    """Feed it whatever the port gives; it returns whole, checked frames."""

    _buf: bytearray = field(default_factory=bytearray)
    dropped_bytes: int = 0  # garbage skipped, for the link's statistics
    bad_frames: int = 0  # CRC or header failures

    def feed(self, data: bytes) -> list[Frame]:
        self._buf += data
        frames: list[Frame] = []
        while True:
            start = self._buf.find(SOF)
            if start < 0:
                self.dropped_bytes += len(self._buf)
                self._buf.clear()
                return frames
            if start:
                self.dropped_bytes += start
                del self._buf[:start]
            if len(self._buf) < _HEADER.size:
                return frames
            _, version, ftype, seq, length = _HEADER.unpack_from(self._buf)
            if version != VERSION or length > MAX_PAYLOAD:
                self._skip()
                continue
            total = _HEADER.size + length + _CRC.size
            if len(self._buf) < total:
                # A garbage 0x7E can announce a long frame and swallow real ones behind it:
                # when a whole valid frame already sits further on, this start was not one.
                if self._complete_frame_after(1):
                    self._skip()
                    continue
                return frames
            body = bytes(self._buf[1:_HEADER.size + length])
            (crc,) = _CRC.unpack_from(self._buf, _HEADER.size + length)
            if crc != zlib.crc32(body):
                self._skip()
                continue
            frames.append(Frame(ftype, seq, body[_HEADER.size - 1:]))
            del self._buf[:total]

    def _complete_frame_after(self, offset: int) -> bool:
        pos = self._buf.find(SOF, offset)
        while pos >= 0:
            if len(self._buf) - pos >= _HEADER.size + _CRC.size:
                _, version, _, _, length = _HEADER.unpack_from(self._buf, pos)
                end = pos + _HEADER.size + length
                if version == VERSION and length <= MAX_PAYLOAD and end + _CRC.size <= len(
                        self._buf):
                    (crc,) = _CRC.unpack_from(self._buf, end)
                    if crc == zlib.crc32(bytes(self._buf[pos + 1:end])):
                        return True
            pos = self._buf.find(SOF, pos + 1)
        return False

    def _skip(self) -> None:
        self.bad_frames += 1
        self.dropped_bytes += 1
        del self._buf[:1]
