"""The avatar's local socket under a hostile or broken local client: real sockets, real
server. Connections are capped, a page that does not read is dropped without the voice loop
waiting, odd headers are refused with 403, and nothing ends in a traceback."""

from __future__ import annotations

import asyncio
import json
import logging

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from kiosk.app import Playback
from kiosk.audio.format import RATE_HZ
from kiosk.avatar.server import MAX_CLIENTS, AvatarServer

_HANDSHAKE = ("GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
              "{extra}\r\n")


async def _raw(port: int, request: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request.encode())
    await writer.drain()
    answer = await reader.read(4096)
    writer.close()
    return answer


def test_odd_headers_are_refused_with_403() -> None:
    async def main() -> None:
        server = AvatarServer(lambda: 0.0)
        await server.start()
        try:
            host = f"127.0.0.1:{server.port}"
            two = _HANDSHAKE.format(host=host, extra="Origin: http://127.0.0.1\r\n"
                                                     "Origin: http://evil.example\r\n")
            assert (await _raw(server.port, two)).startswith(b"HTTP/1.1 403")
            rebound = _HANDSHAKE.format(host=f"evil.example:{server.port}", extra="")
            assert (await _raw(server.port, rebound)).startswith(b"HTTP/1.1 403")
            page = f"GET / HTTP/1.1\r\nHost: evil.example:{server.port}\r\n\r\n"
            assert (await _raw(server.port, page)).startswith(b"HTTP/1.1 403")
            good = f"GET / HTTP/1.1\r\nHost: localhost:{server.port}\r\n\r\n"
            assert (await _raw(server.port, good)).startswith(b"HTTP/1.1 200")
        finally:
            await server.close()

    asyncio.run(main())


def test_connections_are_capped_and_a_burst_leaves_no_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    errors: list[str] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, ctx: errors.append(str(ctx.get("message"))))
        server = AvatarServer(lambda: 0.0, clock_interval_s=0.01)
        await server.start()
        url = f"ws://127.0.0.1:{server.port}/ws"
        opened = []
        refused = 0
        try:
            for _ in range(300):
                try:
                    opened.append(await connect(url))
                except InvalidStatus as exc:
                    assert exc.response.status_code == 503
                    refused += 1
            assert server.connected == MAX_CLIENTS and refused == 300 - MAX_CLIENTS
            for ws in opened:  # they go away all at once, some mid-send
                ws.transport.abort()
            await asyncio.sleep(0.3)
            assert server.connected == 0
            async with connect(url) as ws:  # and the page can connect again
                assert json.loads(await ws.recv())["type"] == "clock"
        finally:
            await server.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    assert errors == []
    assert "Traceback" not in caplog.text and "never retrieved" not in caplog.text


def test_a_page_that_does_not_read_is_dropped_and_the_others_go_on() -> None:
    async def main() -> None:
        server = AvatarServer(lambda: 0.0, clock_interval_s=60)
        await server.start()
        try:
            host = f"127.0.0.1:{server.port}"
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(_HANDSHAKE.format(host=host, extra="").encode())
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")  # handshake done; never read again
            async with connect(f"ws://{host}/ws") as ws:
                samples = np.full(RATE_HZ * 5, 8000, dtype=np.int16)  # ~5 kB a message
                for i in range(3000):  # ~15 MB, far beyond the socket buffers
                    server.on_playback(Playback(f"Sentence {i}.", "en", samples, 1.0 + i))
                    await ws.recv()  # this page reads everything
                    if i % 50 == 0:
                        await asyncio.sleep(0)
                assert server.connected == 1  # the reader stays, the silent one was dropped
            writer.close()
        finally:
            await server.close()

    asyncio.run(main())


def test_a_client_that_sends_is_closed_after_one_frame() -> None:
    """The page only listens: a local program streaming frames at the socket is closed at its
    first frame, whatever it sends, and the real page stays connected."""
    from websockets.exceptions import ConnectionClosed

    async def main() -> None:
        server = AvatarServer(lambda: 0.0, clock_interval_s=60)
        await server.start()
        url = f"ws://127.0.0.1:{server.port}/ws"
        try:
            async with connect(url) as page, connect(url) as flood:
                await flood.send(b"\0" * 1000)
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await flood.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
                await asyncio.sleep(0.05)
                assert server.connected == 1 and server.dropped == 1
                server.on_state("speaking")
                assert json.loads(await page.recv())["type"] == "clock"  # first the clock
        finally:
            await server.close()

    asyncio.run(main())


def test_refusals_are_one_journal_line_per_interval_with_a_count(
        caplog: pytest.LogCaptureFixture) -> None:
    from kiosk.avatar.server import WARN_EVERY_S, _Warnings

    now = [0.0]
    warnings = _Warnings(lambda: now[0])
    with caplog.at_level(logging.WARNING):
        for i in range(1000):
            now[0] = i * 0.01  # 1,000 refusals in 10 s
            warnings.warn("full", "refused a WebSocket")
        warnings.warn("origin", "refused an origin")  # another kind has its own line
        now[0] = WARN_EVERY_S + 1
        warnings.warn("full", "refused a WebSocket")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["avatar: refused a WebSocket", "avatar: refused an origin",
                     f"avatar: refused a WebSocket (and 999 more like it in the last "
                     f"{WARN_EVERY_S:.0f} s)"]
