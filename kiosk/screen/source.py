"""The screen source interface, the page-on-screen record, and URL -> page id mapping (pure)."""

from __future__ import annotations

import posixpath
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class ScreenPage:
    url: str
    page_id: str | None  # None: off-site (not a page of the index)
    title: str = ""
    changed_at: float = 0.0  # time.monotonic() when the screen changed

    @property
    def brain_id(self) -> str:
        """What the brain is given: the page id, or the URL itself (unknown -> 'off-site')."""
        return self.page_id if self.page_id is not None else self.url


Listener = Callable[[ScreenPage], None]


class ScreenSource(Protocol):
    def current(self) -> ScreenPage | None: ...

    def subscribe(self, listener: Listener) -> None: ...


class ScreenState:
    """The shared current page and its listeners (used by every source)."""

    def __init__(self) -> None:
        self._page: ScreenPage | None = None
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def current(self) -> ScreenPage | None:
        return self._page

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def update(self, url: str, page_id: str | None, title: str = "") -> ScreenPage:
        page = ScreenPage(url, page_id, title, time.monotonic())
        with self._lock:
            self._page = page
        for listener in list(self._listeners):
            listener(page)
        return page


class FixedScreen(ScreenState):
    """A kiosk that shows one page."""

    def __init__(self, page_id: str, known: Iterable[str]) -> None:
        super().__init__()
        if page_id:
            self.update(page_id, page_id if page_id in set(known) else None)


_INDEXES = ("index.html", "index.htm", "index.md", "index.mdx")


def map_url(url: str, base_url: str, page_ids: set[str]) -> str | None:
    """The page id a URL shows, or None when it is not a page of the site.

    Query strings and fragments are ignored; a trailing slash means the folder's index page;
    `x.html` finds `x.md` when the site's source is Markdown (and the other way round), and a
    URL without an extension finds `x.html` / `x.md`.
    """
    parts = urlsplit(url)
    if base_url:
        base = urlsplit(base_url)
        if (parts.scheme, parts.netloc) != (base.scheme, base.netloc):
            return None
        prefix = base.path.rstrip("/") + "/"
        path = parts.path or "/"
        if path + "/" == prefix:
            path = prefix  # the site's root without its slash
        if not path.startswith(prefix):
            return None
        rel = path[len(prefix):]
    else:
        rel = parts.path.lstrip("/")
    rel = unquote(rel)
    if rel and not rel.endswith("/"):
        rel = posixpath.normpath(rel)
        if rel.startswith(".."):
            return None
    candidates: list[str] = []
    if rel == "" or rel.endswith("/"):
        candidates = [rel + name for name in _INDEXES]
    else:
        stem, ext = posixpath.splitext(rel)
        candidates = [rel]
        if ext in (".html", ".htm"):
            candidates += [stem + ".md", stem + ".mdx"]
        elif ext in (".md", ".mdx"):
            candidates += [stem + ".html", stem + ".htm"]
        elif not ext:
            candidates += ([rel + ".html", rel + ".md", rel + ".mdx"]
                           + [f"{rel}/{n}" for n in _INDEXES])
        else:
            candidates.append(rel + ".html")  # /menu.php, stored by kiosk site sync
    for candidate in candidates:
        if candidate in page_ids:
            return candidate
    return None
