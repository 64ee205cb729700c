"""The avatar's mouth track (pure), its messages, and the localhost server: the page is
served, non-local origins are refused, a (re)connecting page gets state, clock and the mouth
segments still to play at once."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from kiosk.app import Playback
from kiosk.audio.format import RATE_HZ
from kiosk.avatar.events import Mouth, State, to_json
from kiosk.avatar.mouth import mouth_track
from kiosk.avatar.server import AvatarServer, local_origin


def test_mouth_opens_with_the_voice_and_closes_in_silence() -> None:
    loud = (np.sin(np.arange(RATE_HZ // 2) * 0.2) * 12000).astype(np.int16)
    quiet = np.zeros(RATE_HZ // 2, dtype=np.int16)
    track = mouth_track(np.concatenate([quiet, loud, quiet]))
    assert len(track) == 150
    assert max(track[:50]) == 0.0 and min(track[55:95]) > 0.8
    assert track[103] < track[101] and track[-1] < 0.01  # closes, a little slower than it opened
    assert mouth_track(np.zeros(50, dtype=np.int16)) == []


def test_messages_are_json() -> None:
    mouth = Mouth(1.5, 10, (0.0, 0.5), "Hello.", "en")
    assert mouth.end_s == pytest.approx(1.52)
    assert json.loads(to_json(mouth)) == {"start_s": 1.5, "frame_ms": 10, "values": [0.0, 0.5],
                                          "text": "Hello.", "lang": "en", "type": "mouth"}
    assert json.loads(to_json(State("idle")))["type"] == "state"


def test_only_local_origins() -> None:
    assert local_origin(None) and local_origin("http://127.0.0.1:8765")
    assert local_origin("http://localhost") and local_origin("http://[::1]:80")
    assert not local_origin("http://evil.example") and not local_origin("http://127.0.0.1.evil")
    assert not local_origin("http://192.168.1.20:8765")


def test_server_page_origins_and_resync() -> None:
    async def main() -> None:
        position = [10.0]
        server = AvatarServer(lambda: position[0], clock_interval_s=0.05)
        await server.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            page = await reader.read(65536)
            writer.close()
            assert page.startswith(b"HTTP/1.1 200") and b"avatar.js" in page
            with pytest.raises(InvalidStatus):
                async with connect(f"ws://127.0.0.1:{server.port}/ws",
                                   origin="http://evil.example"):  # type: ignore[arg-type]
                    pass
            assert server.refused == 1
            server.on_state("speaking")
            samples = np.full(RATE_HZ, 8000, dtype=np.int16)
            server.on_playback(Playback("One.", "en", samples, 11.0))
            server.on_playback(Playback("Two.", "en", samples, 5.0))  # already played
            async with connect(f"ws://127.0.0.1:{server.port}/ws",
                               origin="http://127.0.0.1:9"  # type: ignore[arg-type]
                               ) as ws:
                first = [json.loads(await ws.recv()) for _ in range(3)]
                assert [m["type"] for m in first] == ["clock", "state", "mouth"]
                assert first[0]["position_s"] == 10.0 and first[1]["state"] == "speaking"
                assert first[2]["text"] == "One." and len(first[2]["values"]) == 100
                server.on_stop("barge-in")
                kinds = set()
                while "stop" not in kinds:
                    kinds.add(json.loads(await ws.recv())["type"])
            assert server.segments == []
        finally:
            await server.close()

    asyncio.run(main())


def test_a_taken_port_is_named_with_the_fix() -> None:
    from kiosk.errors import KioskError

    async def main() -> None:
        first = AvatarServer(lambda: 0.0)
        await first.start()
        try:
            second = AvatarServer(lambda: 0.0, port=first.port)
            with pytest.raises(KioskError) as caught:
                await second.start()
            assert "avatar.port" in caught.value.fix and str(first.port) in caught.value.message
        finally:
            await first.close()

    asyncio.run(main())
