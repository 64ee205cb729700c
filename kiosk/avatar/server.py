"""The avatar's localhost server: the page (plain files, no build step) and a WebSocket that
publishes avatar events. Bound to 127.0.0.1; a WebSocket from a page of any other origin is
refused. A page that (re)connects gets the state, the clock and the mouth segments still to
play at once, so a reload is back in step within a frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from kiosk.audio.format import Samples
from kiosk.avatar.events import Clock, Event, Heard, Mouth, State, Stop, to_json
from kiosk.avatar.mouth import FRAME_MS, mouth_track
from kiosk.errors import KioskError


class SpokenSentence(Protocol):
    """What the server needs of a reply sentence handed to the loudspeaker (the voice loop's
    Playback): defined here, so the loop depends on the server and not the other way round."""

    @property
    def text(self) -> str: ...

    @property
    def lang(self) -> str: ...

    @property
    def samples(self) -> Samples: ...

    @property
    def starts_at_s(self) -> float: ...


log = logging.getLogger(__name__)
# websockets logs every connection opened and closed at INFO: a local program that connects in
# a loop would fill the journal. Our own lines say what matters, at a bounded rate.
_ws_log = log.getChild("websockets")
_ws_log.setLevel(logging.WARNING)

PAGE_DIR = Path(__file__).resolve().parent / "page"
_LOCAL_ORIGIN = re.compile(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$")
# The kiosk's page needs one or two connections (a reload overlaps the old one); a handful
# more is slack. Each has a bounded queue of events: a page that does not read is dropped,
# the voice loop never waits for it. The page sends nothing: a client that sends a frame is
# not the page, and is closed before it costs more than one frame's reading.
MAX_CLIENTS = 8
SEND_QUEUE = 256
MAX_FRAME_BYTES = 4096
WARN_EVERY_S = 30.0


class _Warnings:
    """One journal line per kind of refusal per interval, counting the ones in between: a
    burst of bad local clients must not flood the journal (one line each was 54 MB)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._held: dict[str, int] = {}
        self._next_s: dict[str, float] = {}

    def warn(self, kind: str, message: str) -> None:
        now = self._clock()
        held = self._held.get(kind, 0)
        if now < self._next_s.get(kind, float("-inf")):
            self._held[kind] = held + 1
            return
        more = f" (and {held} more like it in the last {WARN_EVERY_S:.0f} s)" if held else ""
        log.warning("avatar: %s%s", message, more)
        self._held[kind] = 0
        self._next_s[kind] = now + WARN_EVERY_S


def local_origin(origin: str | None) -> bool:
    """Browsers send Origin with every WebSocket: only the kiosk's own local pages may
    connect (no Origin at all means a local program, not a web page)."""
    return origin is None or bool(_LOCAL_ORIGIN.match(origin))


class AvatarServer:
    def __init__(self, position_s: Callable[[], float], *, port: int = 0,
                 clock_interval_s: float = 0.25) -> None:
        self._position_s = position_s
        self._port = port
        self._interval_s = clock_interval_s
        self._clients: dict[ServerConnection, asyncio.Queue[str]] = {}
        self._server: Server | None = None
        self._ticker: asyncio.Task[None] | None = None
        self.state = State("idle")
        self.segments: list[Mouth] = []  # queued or playing
        self.refused = 0
        self.dropped = 0  # clients closed for sending or for not reading
        self._warnings = _Warnings()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        sock = next(iter(self._server.sockets))
        port: int = sock.getsockname()[1]
        return port

    @property
    def connected(self) -> int:
        """Pages connected now."""
        return len(self._clients)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    async def start(self) -> None:
        try:
            self._server = await serve(self._session, "127.0.0.1", self._port,
                                       process_request=self._http, max_size=MAX_FRAME_BYTES,
                                       max_queue=4, logger=_ws_log)
        except OSError as exc:
            raise KioskError("avatar", f"cannot serve the avatar page on 127.0.0.1:"
                             f"{self._port} ({exc.strerror or exc})",
                             "kiosk config set avatar.port PORT (another one), or 0 for no "
                             "avatar page") from exc
        self._ticker = asyncio.create_task(self._tick())
        log.info("avatar: page at %s", self.url)

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    # ------------------------------------------------------------ HTTP and WebSocket

    def _local_host(self, request: Request) -> bool:
        """Host must name this server on the loopback: a page served by another name that
        resolves here (DNS rebinding) must not reach it."""
        hosts = request.headers.get_all("Host")
        allowed = {f"{name}:{self.port}" for name in ("127.0.0.1", "localhost", "[::1]")}
        return len(hosts) == 1 and hosts[0].lower() in allowed

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if not self._local_host(request):
            self.refused += 1
            self._warnings.warn("host", "refused a request for host " + (
                ", ".join(request.headers.get_all("Host")) or "(none)"))
            return connection.respond(403, "only this kiosk's address may be used\n")
        if path == "/ws":
            origins = request.headers.get_all("Origin")
            if len(origins) > 1 or not local_origin(origins[0] if origins else None):
                self.refused += 1
                self._warnings.warn("origin", "refused a WebSocket from origin "
                                    + ", ".join(origins))
                return connection.respond(403, "only pages of this kiosk may connect\n")
            if len(self._clients) >= MAX_CLIENTS:
                self.refused += 1
                self._warnings.warn("full", f"refused a WebSocket: {MAX_CLIENTS} pages connected")
                return connection.respond(503, "too many connections\n")
            return None  # go on with the WebSocket handshake
        name = "index.html" if path in ("/", "") else path.lstrip("/")
        file = (PAGE_DIR / name).resolve()
        if PAGE_DIR not in file.parents or not file.is_file():
            return connection.respond(404, "not found\n")
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        body = file.read_bytes()
        headers = Headers([("Content-Type", f"{kind}; charset=utf-8"),
                           ("Content-Length", str(len(body))), ("Cache-Control", "no-store")])
        return Response(200, "OK", headers, body)

    async def _session(self, connection: ServerConnection) -> None:
        if len(self._clients) >= MAX_CLIENTS:  # handshakes that raced past the check
            await connection.close(1013, "too many connections")
            return
        queue: asyncio.Queue[str] = asyncio.Queue(SEND_QUEUE)
        now = self._position_s()
        self.segments = [s for s in self.segments if s.end_s > now]
        initial: list[Event] = [Clock(now), self.state, *self.segments]
        for event in initial:
            queue.put_nowait(to_json(event))
        self._clients[connection] = queue
        writer = asyncio.create_task(self._write(connection, queue))
        try:
            async for _ in connection:
                # the page only listens: whatever sends is not the page
                self.dropped += 1
                self._warnings.warn("sent", "closed a WebSocket that sent data (the page "
                                    "only listens)")
                await connection.close(1008, "this socket only sends")
                break
        except ConnectionClosed:
            pass  # a page that goes away, however it goes, is no error
        finally:
            self._clients.pop(connection, None)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    @staticmethod
    async def _write(connection: ServerConnection, queue: asyncio.Queue[str]) -> None:
        with contextlib.suppress(ConnectionClosed):
            while True:
                await connection.send(await queue.get())

    async def _tick(self) -> None:
        while True:
            self.publish(Clock(self._position_s()))
            await asyncio.sleep(self._interval_s)

    # ------------------------------------------------------------ events

    def publish(self, event: Event) -> None:
        """Send to every page (from the event loop's thread)."""
        if isinstance(event, State):
            self.state = event
        elif isinstance(event, Mouth):
            self.segments.append(event)
        elif isinstance(event, Stop):
            self.segments.clear()
        text = to_json(event)
        for client, queue in list(self._clients.items()):
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                # a page that does not read: dropped, so nothing waits on it or piles up
                self.dropped += 1
                self._warnings.warn("slow", "dropped a page that stopped reading")
                self._clients.pop(client, None)
                asyncio.get_running_loop().create_task(client.close(1008, "not reading"))

    # the turn loop's listeners
    def on_state(self, state: str) -> None:
        self.publish(State(state))

    def on_playback(self, playback: SpokenSentence) -> None:
        self.publish(Mouth(round(playback.starts_at_s, 4), FRAME_MS,
                           tuple(mouth_track(playback.samples)), playback.text, playback.lang))

    def on_stop(self, reason: str) -> None:
        self.publish(Stop(reason))

    def on_heard(self, text: str, final: bool) -> None:
        self.publish(Heard(text, final))
