"""A headless Chromium with its DevTools port on localhost, and a small driver for it: what the
tests and `kiosk bench screen` use to play the visitor who taps links on the kiosk screen."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kiosk.errors import KioskError

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-allow-origins=http://127.0.0.1", "--remote-debugging-address=127.0.0.1"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Chromium:
    def __init__(self, start_url: str = "about:blank") -> None:
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            raise KioskError("screen", "chromium is not installed",
                             "run scripts/setup.sh as root (it installs Debian's chromium)")
        self.port = _free_port()
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--remote-debugging-port={self.port}",
             f"--user-data-dir={self._profile.name}", start_url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.endpoint = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self.page_targets():
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.close()
        raise KioskError("screen", "chromium did not open its DevTools port",
                         "check that chromium starts headless on this machine")

    def page_targets(self) -> list[dict[str, Any]]:
        from kiosk.screen.devtools import page_targets

        return page_targets(self.endpoint)

    def driver(self) -> Driver:
        return Driver(self.page_targets()[0]["webSocketDebuggerUrl"])

    def close(self) -> None:
        # Chromium's helper processes share its session: end them all before the profile goes.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._profile.cleanup()


class Driver:
    """Navigate, click and evaluate in the tab, over its own DevTools connection."""

    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self._connection = connect(ws_url, max_size=None)
        self.ws = self._connection.__enter__()
        self._ids = itertools.count(1)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=15))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise KioskError("screen", f"devtools {method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_loaded(self, url: str, timeout_s: float = 10.0) -> bool:
        """True once the tab shows `url`, fully loaded."""
        return wait_for(lambda: self.evaluate(
            "location.href + ' ' + document.readyState") == f"{url} complete", timeout_s)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def click_link(self, href: str) -> None:
        selector = json.dumps(f'a[href="{href}"]')
        found = self.evaluate(
            f"(() => {{ const a = document.querySelector({selector});"
            " if (!a) return false; setTimeout(() => a.click(), 0); return true; })()")
        if not found:
            raise KioskError("screen", f"no link to {href} on the page")

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


def wait_for(predicate: Any, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False


@dataclass
class FollowedBrowser:
    """A site served locally, shown in headless Chromium, followed by a DevTools screen source,
    with a driver to act as the visitor."""

    server: Any
    browser: Chromium
    screen: Any
    driver: Driver


@contextlib.contextmanager
def followed_browser(site: Path, start_page: str) -> Iterator[FollowedBrowser]:
    from kiosk.screen.devtools import DevToolsScreen
    from kiosk.screen.site_server import SiteServer
    from kiosk.screen.source import map_url

    server = SiteServer(site).start()
    ids = set(server.pages)
    browser = Chromium(server.base_url + start_page)
    screen = DevToolsScreen(browser.endpoint, lambda u: map_url(u, server.base_url, ids))
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(screen.run(stop)),
                              name="screen", daemon=True)
    thread.start()
    driver: Driver | None = None
    try:
        if not wait_for(lambda: screen.connected.is_set() and screen.current() is not None, 20):
            raise KioskError("screen", "the screen source never attached to the browser")
        driver = browser.driver()
        yield FollowedBrowser(server, browser, screen, driver)
    finally:
        if driver is not None:
            driver.close()
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5)
        browser.close()
        server.stop()
