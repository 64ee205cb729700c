"""Fetching the venue's pages over HTTP (httpx): robots.txt, sitemaps or links, conditional
requests, redirects, retries with back-off, a polite pace and a size cap.

The crawler only reads the web; what it found is written by `kiosk.sync.folder`.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
import urllib.robotparser
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import httpx

from kiosk.errors import KioskError
from kiosk.sync.urls import is_html, links, normalize, page_file_for, parse_sitemap, under_base

log = logging.getLogger(__name__)

USER_AGENT = "kiosk-avatar-sync/1"


@dataclass(frozen=True)
class SyncParams:
    start_url: str
    base_url: str
    delay_s: float = 1.0  # between two requests (robots.txt's Crawl-delay when longer)
    timeout_s: float = 10.0
    retries: int = 3  # after a 5xx, a 429 or a network error
    backoff_s: float = 2.0  # first wait before a retry; doubles each time
    max_pages: int = 2000
    max_page_bytes: int = 2 * 1024 * 1024
    max_sitemaps: int = 50


@dataclass(frozen=True)
class Known:
    """A page as the previous sync stored it: its file and validators."""

    file: str
    etag: str = ""
    last_modified: str = ""


@dataclass(frozen=True)
class Fetched:
    url: str  # as listed (sitemap, link, or the start URL)
    outcome: str  # new | unchanged | gone | skipped | failed | duplicate (a redirect)
    final_url: str = ""
    file: str = ""
    text: str = ""  # the page as UTF-8 text (new pages)
    etag: str = ""
    last_modified: str = ""
    redirects: tuple[str, ...] = ()
    reason: str = ""


@dataclass
class Crawler:
    client: httpx.Client
    params: SyncParams
    previous: dict[str, Known] = field(default_factory=dict)
    # listed URL -> where it redirected last time: its target's validators are sent
    redirected: dict[str, str] = field(default_factory=dict)
    # the text of a page the previous sync stored (an unchanged page's links are read there)
    stored_text: Callable[[Known], str | None] = lambda known: None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    requests: int = 0
    _last_request: float | None = None
    _delay_s: float = 0.0

    # ------------------------------------------------------------ requests

    def _pace(self) -> None:
        if self._last_request is not None:
            wait = self._last_request + self._delay_s - self.clock()
            if wait > 0:
                self.sleep(wait)
        self._last_request = self.clock()

    def _get(self, url: str, headers: dict[str, str] | None = None
             ) -> tuple[httpx.Response, bytes, bool]:
        """One GET (redirects followed), body read up to the cap; retried on 5xx / 429 /
        network errors. Returns the response, the body and whether the body was cut."""
        last_error = ""
        for attempt in range(self.params.retries + 1):
            if attempt:
                wait = self.params.backoff_s * 2 ** (attempt - 1)
                log.info("sync: %s failed (%s); retry %d in %.1f s", url, last_error, attempt,
                         wait)
                self.sleep(wait)
            self._pace()
            try:
                with self.client.stream("GET", url, headers=headers or {}) as response:
                    self.requests += 1 + len(response.history)
                    if response.status_code >= 500 or response.status_code == 429:
                        last_error = f"HTTP {response.status_code}"
                        continue
                    body = bytearray()
                    cut = False
                    for piece in response.iter_bytes():
                        body += piece
                        if len(body) > self.params.max_page_bytes:
                            cut = True
                            break
                    return response, bytes(body), cut
            except httpx.TransportError as exc:
                self.requests += 1
                last_error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise _Unreachable(last_error)

    # ------------------------------------------------------------ discovery

    def robots(self) -> urllib.robotparser.RobotFileParser:
        """robots.txt of the site's host (RFC 9309: a 4xx allows all; a 5xx or no answer
        forbids all, so the sync stops and the previous site keeps serving)."""
        parts = urlsplit(self.params.start_url)
        url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        rules = urllib.robotparser.RobotFileParser(url)
        try:
            response, body, _ = self._get(url)
        except _Unreachable as exc:
            raise KioskError("sync", f"{url} could not be read ({exc})",
                             "check that the site is up and reachable from the kiosk; the "
                             "previous site stays in use") from None
        except httpx.TooManyRedirects:
            rules.parse([])  # no rules: everything allowed
            return rules
        if response.status_code >= 400:
            rules.parse([])
        else:
            rules.parse(body.decode("utf-8", "replace").splitlines())
        delay = rules.crawl_delay(USER_AGENT)
        self._delay_s = max(self.params.delay_s, float(delay or 0))
        return rules

    def sitemap_pages(self, rules: urllib.robotparser.RobotFileParser) -> list[str] | None:
        """The pages the site's sitemaps list (indexes followed), or None without a sitemap."""
        start = self.params.start_url
        todo = list(rules.site_maps() or [])
        if start.lower().endswith(".xml"):
            todo.insert(0, start)
        if not todo:
            todo = [urljoin(start, "sitemap.xml")]
        seen: set[str] = set()
        pages: dict[str, None] = {}
        found = False
        while todo and len(seen) < self.params.max_sitemaps:
            url = todo.pop(0)
            if url in seen:
                continue
            seen.add(url)
            try:
                response, body, _cut = self._get(url)
            except (_Unreachable, httpx.TooManyRedirects) as exc:
                log.warning("sync: sitemap %s could not be read (%s)", url, exc)
                continue
            if response.status_code >= 400:
                continue
            try:
                sitemap = parse_sitemap(body)
            except ValueError as exc:
                log.warning("sync: %s is not a sitemap (%s); ignored", url, exc)
                continue
            found = True
            todo += [u for u in sitemap.sitemaps if u not in seen]
            for page in sitemap.pages:
                pages.setdefault(normalize(page), None)
        return list(pages) if found else None

    # ------------------------------------------------------------ pages

    def fetch(self, url: str) -> Fetched:
        known = self.previous.get(url) or self.previous.get(self.redirected.get(url, ""))
        headers = {}
        if known is not None and known.etag:
            headers["If-None-Match"] = known.etag
        if known is not None and known.last_modified:
            headers["If-Modified-Since"] = known.last_modified
        try:
            response, body, cut = self._get(url, headers)
        except _Unreachable as exc:
            return Fetched(url, "failed", reason=str(exc))
        except httpx.TooManyRedirects:
            return Fetched(url, "skipped", reason="too many redirects")
        final = normalize(str(response.url))
        redirects = tuple(normalize(str(r.url)) for r in response.history)
        status = response.status_code
        if status == 304 and known is not None:
            return Fetched(url, "unchanged", final, known.file, etag=known.etag,
                           last_modified=known.last_modified, redirects=redirects)
        if status in (404, 410):
            return Fetched(url, "gone", final, reason=f"HTTP {status}")
        if status >= 300:
            return Fetched(url, "skipped", final, reason=f"HTTP {status}")
        file = page_file_for(final, self.params.base_url)
        if file is None:
            return Fetched(url, "skipped", final, redirects=redirects,
                           reason=f"redirected off the site to {final}")
        content_type = response.headers.get("content-type", "")
        if not is_html(content_type):
            return Fetched(url, "skipped", final, reason=f"not HTML ({content_type or 'no type'})")
        if cut:
            return Fetched(url, "skipped", final,
                           reason=f"larger than {self.params.max_page_bytes} bytes")
        return Fetched(url, "new", final, file, decode(body, content_type),
                       response.headers.get("etag", ""),
                       response.headers.get("last-modified", ""), redirects)

    def crawl(self) -> Iterator[Fetched]:
        """Every page of the site once: the sitemap's, or those reached by links from the
        start URL when there is no sitemap; robots.txt's rules and max_pages kept."""
        rules = self.robots()
        listed = self.sitemap_pages(rules)
        follow = listed is None
        queue = [normalize(self.params.start_url)] if listed is None else listed
        queue = [u for u in queue if under_base(u, self.params.base_url)]
        seen: set[str] = set(queue)
        done: set[str] = set()
        taken = 0
        while queue:
            url = queue.pop(0)
            if url in done:
                continue
            if taken >= self.params.max_pages:
                log.warning("sync: stopped at sync max pages (%d); %d URL(s) left out",
                            self.params.max_pages, len(queue) + 1)
                return
            if not rules.can_fetch(USER_AGENT, url):
                yield Fetched(url, "skipped", reason="robots.txt disallows it")
                continue
            result = self.fetch(url)
            if (result.final_url != url and result.final_url in done
                    and result.outcome in ("new", "unchanged")):
                # a second URL redirected to a page already taken: only the redirect is news
                yield dataclasses.replace(result, outcome="duplicate", text="")
                continue
            if result.outcome in ("new", "unchanged"):
                done.add(result.final_url)
                taken += 1
            yield result
            if follow and result.outcome in ("new", "unchanged"):
                text = result.text if result.outcome == "new" else (
                    self.stored_text(Known(result.file)) or "")
                for link in links(text, result.final_url):
                    if link not in seen and under_base(link, self.params.base_url):
                        seen.add(link)
                        queue.append(link)


class _Unreachable(Exception):
    pass


_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.I)


def decode(body: bytes, content_type: str) -> str:
    """The page as text: the header's charset, else a `<meta charset>` in the first 2 KB,
    else UTF-8 (undecodable bytes replaced, never a failed page)."""
    charset = ""
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    if not charset:
        found = _META_CHARSET.search(body[:2048])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        return body.decode(charset, "replace")
    except LookupError:
        return body.decode("utf-8", "replace")
