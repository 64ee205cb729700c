"""`kiosk bench screen`: how far the brain's page on screen lags the kiosk browser.

Headless Chromium shows the demo site from a local server; a driver navigates 100 times,
alternating a scripted navigation and a click on one of the page's links (pages without one
are left by script), and we time from the command to the moment the DevTools screen source
reports the new page.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import threading
import time
from typing import Any

from kiosk.config import DEMO_SITE
from kiosk.screen.browser import Chromium, wait_for
from kiosk.screen.devtools import DevToolsScreen
from kiosk.screen.site_server import SiteServer
from kiosk.screen.source import map_url


def run(navigations: int = 100, seed: int = 5) -> dict[str, Any]:
    server = SiteServer(DEMO_SITE).start()
    ids = set(server.pages)
    browser = Chromium(server.base_url + "en/index.md")
    screen = DevToolsScreen(browser.endpoint, lambda u: map_url(u, server.base_url, ids))
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(screen.run(stop)),
                              daemon=True)
    thread.start()
    lags: list[float] = []
    missed = 0
    driver = None
    try:
        if not wait_for(lambda: screen.connected.is_set() and screen.current() is not None, 20):
            raise RuntimeError("the screen source never attached to the browser")
        driver = browser.driver()
        rng = random.Random(seed)
        pages = sorted(ids)
        here = "en/index.md"
        for i in range(navigations):
            driver.wait_loaded(server.base_url + here)
            links = [h.lstrip("/") for h in driver.evaluate(
                "Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))")
                or [] if h and h.lstrip("/") in ids and h.lstrip("/") != here]
            click = bool(i % 2 and links)
            target = rng.choice(links if click else [p for p in pages if p != here])
            start = time.monotonic()
            if click:
                driver.click_link("/" + target)
            else:
                driver.navigate(server.base_url + target)
            if wait_for(lambda t=target: (c := screen.current()) is not None
                        and c.page_id == t, 2.0):
                page = screen.current()
                assert page is not None
                lags.append((page.changed_at - start) * 1000.0)
            else:
                missed += 1
            here = target
    finally:
        if driver is not None:
            driver.close()
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5)
        browser.close()
        server.stop()
    ordered = sorted(lags) or [float("nan")]
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"navigations": navigations, "missed": missed,
            "lag_ms": {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}}
