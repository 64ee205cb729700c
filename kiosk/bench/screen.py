"""`kiosk bench screen`: how far the brain's page on screen lags the kiosk browser.

Headless Chromium shows the demo site from a local server; a driver navigates 100 times,
alternating a scripted navigation and a click on one of the page's links (pages without one
are left by script), and we time from the command to the moment the DevTools screen source
reports the new page.
"""

from __future__ import annotations

import random
import time
from typing import Any

from kiosk.bench import percentiles
from kiosk.config import DEMO_SITE
from kiosk.screen.browser import followed_browser, wait_for


def run(navigations: int = 100, seed: int = 5) -> dict[str, Any]:
    lags: list[float] = []
    missed = 0
    with followed_browser(DEMO_SITE, "en/index.md") as rig:
        server, screen, driver = rig.server, rig.screen, rig.driver
        ids = set(server.pages)
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
    return {"navigations": navigations, "missed": missed, "lag_ms": percentiles(lags)}
