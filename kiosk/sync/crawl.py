"""Fetching the venue's pages: robots.txt, sitemaps or links, conditional requests, redirects
checked hop by hop, retries with back-off, a polite pace, and bounds on everything a server
can stretch (a request's time, the whole crawl's time, the number of requests, a body's size).

The crawler only reads the web; what it found is written by `kiosk.sync.folder`.
"""

from __future__ import annotations

import codecs
import dataclasses
import logging
import re
import time
import urllib.robotparser
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

from kiosk.errors import KioskError
from kiosk.sync.http import FetchError, Refused, Response, validator
from kiosk.sync.urls import (
    UnsafePath,
    is_html,
    links,
    normalize,
    page_file_for,
    parse_sitemap,
    redact,
    same_site,
    under_base,
    without_credentials,
)

log = logging.getLogger(__name__)

USER_AGENT = "kiosk-avatar-sync/1"
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class SyncParams:
    start_url: str
    base_url: str
    delay_s: float = 1.0  # between two requests (robots.txt's Crawl-delay when longer)
    timeout_s: float = 10.0  # one request, all of it: connecting, waiting, reading the body
    retries: int = 3  # after a 5xx, a 429 or a network error
    backoff_s: float = 2.0  # first wait before a retry; doubles each time
    max_pages: int = 2000
    max_page_bytes: int = 2 * 1024 * 1024
    max_sitemaps: int = 50
    deadline_s: float = 3600.0  # the whole crawl; past it the sync fails, the site stays
    max_crawl_delay_s: float = 30.0  # robots.txt may slow the pace down to this, not further
    # 0: 3 x max_pages + max_sitemaps + 10. Every request counts (retries and redirect hops):
    # a sitemap of thousands of 404s must not keep a sync asking for hours.
    max_requests: int = 0

    @property
    def request_budget(self) -> int:
        return self.max_requests or 3 * self.max_pages + self.max_sitemaps + 10


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


class Getter(Protocol):
    """One GET, one hop (kiosk.sync.http.Fetcher)."""

    def get(self, url: str, headers: Mapping[str, str], max_bytes: int,
            deadline_s: float) -> Response: ...


class SyncStopped(KioskError):
    """The crawl ran out of time or requests: the sync fails and the previous site stays."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__("sync", message, fix)


@dataclass
class _Got:
    response: Response
    url: str  # the last hop's
    hops: tuple[str, ...]  # the URLs redirected from, in order


@dataclass
class Crawler:
    fetcher: Getter
    params: SyncParams
    previous: dict[str, Known] = field(default_factory=dict)
    # listed URL -> where it redirected last time: its target's validators are sent
    redirected: dict[str, str] = field(default_factory=dict)
    # the text of a page the previous sync stored (an unchanged page's links are read there)
    stored_text: Callable[[Known], str | None] = lambda known: None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    requests: int = 0
    # what was not fetched that is not a page: sitemaps and robots.txt off the site
    skipped: dict[str, str] = field(default_factory=dict)
    _last_request: float | None = None
    _delay_s: float = 0.0
    _deadline: float = 0.0

    def __post_init__(self) -> None:
        self._deadline = self.clock() + self.params.deadline_s
        self._start = without_credentials(self.params.start_url)

    # ------------------------------------------------------------ requests

    def _left_s(self) -> float:
        left = self._deadline - self.clock()
        if left <= 0:
            raise self._late()
        return left

    def _late(self) -> SyncStopped:
        return SyncStopped(
            f"the crawl took longer than its limit ({self.params.deadline_s:.0f} s)",
            "the site answers too slowly or lists too much; raise site.sync_deadline_min or "
            "lower site.sync_max_pages; the previous site stays")

    def _wait(self, seconds: float) -> None:
        if seconds >= self._left_s():
            raise self._late()  # a wait that would end past the limit: stop now
        self.sleep(seconds)

    def _pace(self) -> None:
        if self._last_request is not None:
            wait = self._last_request + self._delay_s - self.clock()
            if wait > 0:
                self._wait(wait)
        self._last_request = self.clock()

    def _count(self) -> None:
        if self.requests >= self.params.request_budget:
            raise SyncStopped(
                f"the crawl stopped after {self.requests} requests (the limit for "
                f"site.sync_max_pages = {self.params.max_pages})",
                "the site answers many of its listed URLs with errors or redirects; fix its "
                "sitemap, or raise site.sync_max_pages; the previous site stays")
        self.requests += 1

    def _request(self, url: str, headers: Mapping[str, str]) -> Response:
        """One hop; retried on 5xx / 429 / a network error or timeout."""
        last_error = ""
        for attempt in range(self.params.retries + 1):
            if attempt:
                wait = self.params.backoff_s * 2 ** (attempt - 1)
                log.info("sync: %s failed (%s); retry %d in %.1f s", url, last_error, attempt,
                         wait)
                self._wait(wait)
            self._pace()
            self._count()
            try:
                response = self.fetcher.get(url, headers, self.params.max_page_bytes,
                                            self._left_s())
            except FetchError as exc:
                last_error = str(exc)
                continue
            log.debug("sync: GET %s -> %d", url, response.status)
            if response.status >= 500 or response.status == 429:
                last_error = f"HTTP {response.status}"
                continue
            return response
        raise _Unreachable(last_error)

    def _get(self, url: str, headers: Mapping[str, str], allowed: Callable[[str], bool]
             ) -> _Got | str:
        """GET with redirects followed hop by hop, each target checked before it is asked
        for. Returns the answer, or the reason it was not followed (off the site, a scheme
        other than http(s), too many hops)."""
        hops: list[str] = []
        current = url
        while True:
            response = self._request(current, headers)
            location = response.headers.get("location", "")
            if response.status not in _REDIRECTS or not location:
                return _Got(response, current, tuple(hops))
            target = urljoin(current, location.strip())
            parts = urlsplit(target)
            target = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
            if not allowed(target):
                return f"redirected off the site to {redact(target)}"
            hops.append(current)
            if len(hops) > MAX_REDIRECTS:
                return "too many redirects"
            current = target

    # ------------------------------------------------------------ discovery

    def robots(self) -> urllib.robotparser.RobotFileParser:
        """robots.txt of the site's host (RFC 9309: a 4xx allows all; a 5xx or no answer
        forbids all, so the sync stops and the previous site keeps serving)."""
        parts = urlsplit(self._start)
        url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        rules = urllib.robotparser.RobotFileParser(url)
        try:
            got = self._get(url, {}, lambda u: same_site(u, self._start))
        except _Unreachable as exc:
            raise KioskError("sync", f"{url} could not be read ({exc})",
                             "check that the site is up and reachable from the kiosk; the "
                             "previous site stays in use") from None
        except Refused as exc:
            got = str(exc)
        if isinstance(got, str) or got.response.status >= 400:
            rules.parse([])  # no rules (a redirect elsewhere, a 4xx): everything allowed
        else:
            rules.parse(got.response.body.decode("utf-8", "replace").splitlines())
        asked = float(rules.crawl_delay(USER_AGENT) or 0)
        if asked > self.params.max_crawl_delay_s:
            log.warning("sync: robots.txt asks for %.0f s between requests; %.0f s is used",
                        asked, self.params.max_crawl_delay_s)
        self._delay_s = max(self.params.delay_s, min(asked, self.params.max_crawl_delay_s))
        return rules

    def sitemap_pages(self, rules: urllib.robotparser.RobotFileParser) -> list[str] | None:
        """The pages the site's sitemaps list (indexes followed), or None without a sitemap.
        Sitemaps on another host are not asked for."""
        start = self._start
        todo = list(rules.site_maps() or [])
        if urlsplit(start).path.lower().endswith(".xml"):
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
            if not same_site(url, start):
                self.skipped[redact(url)] = "a sitemap on another site"
                continue
            try:
                got = self._get(url, {}, lambda u: same_site(u, start))
            except (_Unreachable, Refused) as exc:
                log.warning("sync: sitemap %s could not be read (%s)", redact(url), exc)
                continue
            if isinstance(got, str):
                self.skipped[redact(url)] = got
                continue
            if got.response.status >= 400:
                continue
            if got.response.cut:
                log.warning("sync: sitemap %s is larger than %d bytes; ignored", redact(url),
                            self.params.max_page_bytes)
                continue
            try:
                sitemap = parse_sitemap(got.response.body)
            except ValueError as exc:
                log.warning("sync: %s is not a sitemap (%s); ignored", redact(url), exc)
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
        if known is not None and validator(known.etag):
            headers["If-None-Match"] = known.etag
        if known is not None and validator(known.last_modified):
            headers["If-Modified-Since"] = known.last_modified
        try:
            got = self._get(url, headers, lambda u: under_base(u, self.params.base_url))
        except _Unreachable as exc:
            return Fetched(url, "failed", reason=str(exc))
        except Refused as exc:
            return Fetched(url, "skipped", reason=str(exc))
        if isinstance(got, str):
            return Fetched(url, "skipped", reason=got)
        response = got.response
        final = normalize(got.url)
        redirects = tuple(normalize(u) for u in got.hops)
        status = response.status
        if status == 304 and known is not None:
            return Fetched(url, "unchanged", final, known.file, etag=known.etag,
                           last_modified=known.last_modified, redirects=redirects)
        if status in (404, 410):
            return Fetched(url, "gone", final, reason=f"HTTP {status}")
        if status >= 300:
            return Fetched(url, "skipped", final, reason=f"HTTP {status}")
        try:
            file = page_file_for(final, self.params.base_url)
        except UnsafePath as exc:
            return Fetched(url, "skipped", final, redirects=redirects,
                           reason=f"no file name can be made of it ({exc})")
        if file is None:
            return Fetched(url, "skipped", final, redirects=redirects,
                           reason=f"redirected off the site to {final}")
        content_type = response.headers.get("content-type", "")
        if not is_html(content_type):
            return Fetched(url, "skipped", final, reason=f"not HTML ({content_type or 'no type'})")
        if response.cut:
            return Fetched(url, "skipped", final,
                           reason=f"larger than {self.params.max_page_bytes} bytes")
        return Fetched(url, "new", final, file, decode(response.body, content_type),
                       validator(response.headers.get("etag", "")),
                       validator(response.headers.get("last-modified", "")), redirects)

    def crawl(self) -> Iterator[Fetched]:
        """Every page of the site once: the sitemap's, or those reached by links from the
        start URL when there is no sitemap; robots.txt's rules and max_pages kept. Two URLs
        stored as one file (`/x` and `/x.html`): the first listed keeps it."""
        rules = self.robots()
        listed = self.sitemap_pages(rules)
        follow = listed is None
        queue = [normalize(self._start)] if listed is None else listed
        queue = [u for u in queue if under_base(u, self.params.base_url)]
        seen: set[str] = set(queue)
        done: set[str] = set()
        files = _Files()
        taken = 0
        while queue:
            url = queue.pop(0)
            if url in done:
                continue
            if taken >= self.params.max_pages:
                log.warning("sync: stopped at sync max pages (%d); %d URL(s) left out",
                            self.params.max_pages, len(queue) + 1)
                return
            try:
                page_file_for(url, self.params.base_url)
            except UnsafePath as exc:  # not asked for at all
                yield Fetched(url, "skipped", reason=f"no file name can be made of it ({exc})")
                continue
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
                clash = files.clash(result.file)
                if clash:
                    yield dataclasses.replace(result, outcome="skipped", text="",
                                              reason=clash)
                    continue
                files.take(result.file, result.final_url)
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


class _Files:
    """The page files taken so far: a second URL may not take a file (`/x` and `/x.html`),
    nor make a file a folder or a folder a file (`/f.html` and `/f.html/g`)."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}
        self._folders: dict[str, str] = {}

    def clash(self, file: str) -> str:
        if file in self._files:
            return f"stored as {file}, like {self._files[file]}, listed first"
        if file in self._folders:
            return f"{file} is a folder of {self._folders[file]}, listed first"
        parts = file.split("/")
        for n in range(1, len(parts)):
            folder = "/".join(parts[:n])
            if folder in self._files:
                return f"{folder} is the page {self._files[folder]}, listed first"
        return ""

    def take(self, file: str, url: str) -> None:
        self._files[file] = url
        parts = file.split("/")
        for n in range(1, len(parts)):
            self._folders.setdefault("/".join(parts[:n]), url)


class _Unreachable(Exception):
    pass


_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.I)
# text codecs Python has that no web page is written in (idna and punycode raise on
# "replace"; the escapes would read a page's backslashes as code)
_NOT_PAGE_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape",
                                "raw-unicode-escape"})


def decode(body: bytes, content_type: str) -> str:
    """The page as text: the header's charset, else a `<meta charset>` in the first 2 KB,
    else UTF-8 (undecodable bytes replaced; a charset no page is written in is UTF-8: never
    a failed page)."""
    charset = ""
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    if not charset:
        found = _META_CHARSET.search(body[:2048])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        info = codecs.lookup(charset)
    except LookupError:
        info = codecs.lookup("utf-8")
    if info.name in _NOT_PAGE_CHARSETS or not getattr(info, "_is_text_encoding", True):
        info = codecs.lookup("utf-8")
    try:
        return body.decode(info.name, "replace")
    except (UnicodeError, ValueError, LookupError):
        return body.decode("utf-8", "replace")
