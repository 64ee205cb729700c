"""The page in the kiosk browser, followed over the Chrome DevTools protocol.

The browser runs with `--remote-debugging-port` bound to localhost. We attach to its visible
tab (the first "page" target), enable Page events and follow main-frame navigations, in-page
navigations (history API, fragments) and reloads. When the tab or the browser goes away we
look again, with a short back-off; the last known page stays current meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from kiosk.errors import KioskError
from kiosk.screen.source import ScreenState

log = logging.getLogger(__name__)


def page_targets(endpoint: str) -> list[dict[str, Any]]:
    """The browser's tabs (not workers or extensions) that accept a DevTools connection."""
    with urllib.request.urlopen(f"{endpoint}/json/list", timeout=2) as resp:
        data: list[dict[str, Any]] = json.load(resp)
    return [t for t in data if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]


class DevToolsScreen(ScreenState):
    def __init__(self, endpoint: str, to_page_id: Callable[[str], str | None]) -> None:
        super().__init__()
        host = urlsplit(endpoint).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise KioskError("config", f"screen.devtools_url {endpoint!r} is not on this machine",
                             "the debugging port must stay on localhost: use 127.0.0.1")
        self.endpoint = endpoint.rstrip("/")
        self.to_page_id = to_page_id
        self.connected = asyncio.Event()
        self._ids = itertools.count(1)
        self._generation = 0  # navigation events seen
        self._enable_id = -1

    def _show(self, url: str, title: str = "", *, reload: bool = False) -> None:
        if not url or url == "about:blank":
            return  # nothing shown yet
        current = self.current()
        if current is not None and current.url == url and not reload:
            return  # the same URL announced twice (history entry + in-document event)
        page_id = self.to_page_id(url)
        self.update(url, page_id, title)
        log.info("screen: %s -> %s", url, page_id or "off-site")

    async def run(self, stop: asyncio.Event) -> None:
        import websockets

        backoff_s = 0.2
        while not stop.is_set():
            try:
                targets = await asyncio.to_thread(page_targets, self.endpoint)
                if not targets:
                    raise KioskError("screen", "the kiosk browser has no open tab")
                async with websockets.connect(targets[0]["webSocketDebuggerUrl"],
                                              max_size=None) as ws:
                    await self._follow(ws, stop)
                backoff_s = 0.2
            except (OSError, KioskError, websockets.WebSocketException) as exc:
                self.connected.clear()
                log.debug("screen: devtools %s: %s", self.endpoint, exc)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff_s)
                backoff_s = min(backoff_s * 2, 2.0)

    async def _follow(self, ws: Any, stop: asyncio.Event) -> None:
        # A history answer is only news if no navigation event came after we asked for it.
        history_ids: dict[int, int] = {}

        async def ask_history() -> None:
            msg_id = next(self._ids)
            history_ids[msg_id] = self._generation
            await ws.send(json.dumps({"id": msg_id, "method": "Page.getNavigationHistory"}))

        async def close_on_stop() -> None:
            await stop.wait()
            await ws.close()

        # Attached only once Page.enable is acknowledged: navigations before that send no event.
        self._enable_id = next(self._ids)
        await ws.send(json.dumps({"id": self._enable_id, "method": "Page.enable"}))
        # Never cancel a pending recv (a message could be lost); closing ends the loop instead.
        closer = asyncio.create_task(close_on_stop())
        try:
            async for raw in ws:
                await self._handle(json.loads(raw), history_ids, ask_history)
        finally:
            closer.cancel()

    async def _handle(self, msg: dict[str, Any], history_ids: dict[int, int],
                      ask_history: Callable[[], Any]) -> None:
        method = msg.get("method")
        params = msg.get("params", {})
        if msg.get("id") == self._enable_id:
            await ask_history()
            self.connected.set()
        elif msg.get("id") in history_ids and "result" in msg:
            asked_at = history_ids.pop(msg["id"])
            if asked_at == self._generation:
                entries = msg["result"]["entries"]
                entry = entries[msg["result"]["currentIndex"]]
                self._show(entry["url"], entry.get("title", ""))
        elif method == "Page.frameNavigated" and not params["frame"].get("parentId"):
            self._generation += 1
            frame = params["frame"]
            self._show(frame["url"] + frame.get("urlFragment", ""), reload=True)
        elif method == "Page.navigatedWithinDocument":
            self._generation += 1
            self._show(params["url"])
        elif method == "Page.loadEventFired":
            await ask_history()  # a page that committed before we attached
        elif method == "Inspector.detached":
            raise KioskError("screen", "the kiosk tab was closed")
