"""One sync: crawl into a new version folder, index it, swap it in; or change nothing.

The swap happens only when every listed page was either fetched, unchanged (304), gone
(404/410) or deliberately skipped (not HTML, too big, off the site, robots.txt). A page that
still fails after its retries makes the sync partial: nothing is swapped, the previous site
and index keep serving, and the next timer tick tries again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kiosk.errors import KioskError
from kiosk.sync.crawl import USER_AGENT, Crawler, Getter, SyncParams
from kiosk.sync.folder import SiteVersions
from kiosk.sync.http import Fetcher
from kiosk.sync.urls import credentials, redact

log = logging.getLogger(__name__)

# Given a new version folder, build its index aside and return the step that puts it in place.
PrepareIndex = Callable[[Path], Callable[[], None]]


@dataclass
class SyncReport:
    url: str
    ok: bool = False
    swapped: bool = False
    pages: int = 0
    fetched: int = 0  # new or changed, with a body
    unchanged: int = 0  # 304
    removed: list[str] = field(default_factory=list)  # files of the previous version now gone
    redirects: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    duration_s: float = 0.0
    error: str = ""
    version: str = ""

    @property
    def changed(self) -> bool:
        return self.swapped and (self.fetched > 0 or bool(self.removed))

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "changed": self.changed}

    def summary(self) -> str:
        head = (f"{self.url}: {self.pages} pages ({self.fetched} fetched, {self.unchanged} "
                f"unchanged, {len(self.removed)} removed, {len(self.skipped)} skipped, "
                f"{len(self.failed)} failed), {self.requests} requests, {self.duration_s:.1f} s")
        if self.swapped:
            return f"sync done: {head}"
        if self.ok:
            return f"sync done, nothing changed: {head}"
        return f"sync failed, previous site kept: {head}; {self.error}"


def sync_site(params: SyncParams, versions: SiteVersions, prepare_index: PrepareIndex, *,
              fetcher: Getter | None = None,
              sleep: Callable[[float], None] = time.sleep) -> SyncReport:
    """One sync; whatever happens, a report comes back (a defect included: logged with its
    traceback, the previous site kept), so its state and metrics are always recorded."""
    started = time.monotonic()
    report = SyncReport(redact(params.start_url))
    try:
        with versions.lock():
            _sync(params, versions, prepare_index, report, fetcher, sleep)
    except KioskError as exc:
        report.error = exc.describe()
    except Exception as exc:
        log.exception("sync: a defect stopped the sync; the previous site stays")
        report.error = f"internal: {type(exc).__name__}: {exc}"
    finally:
        report.duration_s = time.monotonic() - started
        log.info("%s", report.summary())
    return report


def _sync(params: SyncParams, versions: SiteVersions, prepare_index: PrepareIndex,
          report: SyncReport, fetcher: Getter | None, sleep: Callable[[float], None]) -> None:
    previous = versions.known()
    previous_redirects = versions.redirects()
    previous_files = {k.file for k in previous.values()}
    version = versions.begin()
    pages: dict[str, dict[str, Any]] = {}
    try:
        with contextlib.ExitStack() as stack:
            if fetcher is None:
                fetcher = stack.enter_context(Fetcher(
                    timeout_s=params.timeout_s, user_agent=USER_AGENT,
                    auth=credentials(params.start_url)))
            crawler = Crawler(fetcher, params, previous, previous_redirects,
                              versions.stored_text, sleep=sleep)
            try:
                for got in crawler.crawl():
                    if got.redirects:
                        report.redirects[got.url] = got.final_url
                    known = previous.get(got.url)
                    if (got.outcome == "new" and known is not None and known.file == got.file
                            and versions.stored_text(known) == got.text):
                        # a server without validators sends the same page again: unchanged
                        got = dataclasses.replace(got, outcome="unchanged")
                    if got.outcome == "new":
                        unwritable = _write(versions, version, got.file, got.text)
                        if unwritable:
                            report.skipped[got.url] = unwritable
                            log.warning("sync: %s skipped: %s", got.url, unwritable)
                            continue
                        report.fetched += 1
                    elif got.outcome == "unchanged":
                        if not versions.carry(version, got.file):
                            report.failed[got.url] = "unchanged, but its stored copy is missing"
                            continue
                        report.unchanged += 1
                    elif got.outcome == "failed":
                        report.failed[got.url] = got.reason
                        log.warning("sync: %s failed: %s", got.url, got.reason)
                        continue
                    else:
                        if got.outcome == "skipped":
                            report.skipped[got.url] = got.reason
                            log.info("sync: %s skipped: %s", got.url, got.reason)
                        continue
                    pages[got.url] = {"file": got.file, "final_url": got.final_url,
                                      "etag": got.etag, "last_modified": got.last_modified}
            finally:
                report.requests = crawler.requests
                report.skipped.update(crawler.skipped)
        kept = {p["file"] for p in pages.values()}
        report.pages = len(kept)
        report.removed = sorted(previous_files - kept)
        if report.failed:
            raise KioskError("sync", f"{len(report.failed)} page(s) could not be fetched "
                             f"(first: {next(iter(report.failed))}: "
                             f"{next(iter(report.failed.values()))})",
                             "the previous site stays; the next sync tries again")
        if not pages:
            raise KioskError("sync", f"no pages found from {report.url}",
                             "check site.sync_url (a sitemap.xml or the site's start page) and "
                             "screen.base_url; the previous site stays")
        if (versions.current() is not None and report.fetched == 0 and not report.removed
                and report.redirects == previous_redirects):
            # nothing changed: the live version stays, the index is not touched
            versions.abandon(version)
            report.ok = True
            return
        versions.write_manifest(version, {"url": report.url, "base_url": params.base_url,
                                          "time": time.time(), "pages": pages,
                                          "redirects": report.redirects})
        install_index = prepare_index(version)
        final = versions.commit(version)
        install_index()
        report.version, report.swapped, report.ok = final.name, True, True
    except BaseException:
        if not report.swapped:
            versions.abandon(version)
        raise


# a page whose file the folder cannot hold (a name too long for it, a clash with a folder):
# that page is skipped, the others go on; anything else (a full disk) fails the sync
_PAGE_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EEXIST,
                          errno.EILSEQ, errno.EINVAL})


def _write(versions: SiteVersions, version: Path, file: str, text: str) -> str:
    try:
        versions.write_page(version, file, text)
    except OSError as exc:
        if exc.errno not in _PAGE_ERRNOS:
            raise
        return f"cannot be stored as {file!r} ({exc.strerror})"
    return ""


# ------------------------------------------------------------------ from the configuration


def base_for(url: str, base_url: str) -> str:
    """The site's base URL: screen.base_url when set (the sync URL must lie under it), else
    the sync URL's folder."""
    from urllib.parse import urlsplit, urlunsplit

    from kiosk.sync.urls import under_base, without_credentials

    url = without_credentials(url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise KioskError("config", f"site.sync_url = {url!r} is not an http(s) URL",
                         "give the site's sitemap.xml or start page, e.g. "
                         "https://venue.example/sitemap.xml")
    if base_url:
        if not under_base(url, base_url):
            raise KioskError("config", f"site.sync_url {url} is not under screen.base_url "
                             f"{base_url}", "make them the same site, or clear screen.base_url")
        return base_url
    folder = parts.path.rsplit("/", 1)[0] + "/"
    return urlunsplit((parts.scheme, parts.netloc, folder, "", ""))


def params_from(cfg: Any, url: str) -> SyncParams:
    s = cfg.site
    return SyncParams(start_url=url, base_url=base_for(url, cfg.screen.base_url),
                      delay_s=s.sync_delay_ms / 1000, timeout_s=float(s.sync_timeout_s),
                      retries=s.sync_retries, max_pages=s.sync_max_pages,
                      max_page_bytes=s.sync_max_page_kb * 1024,
                      deadline_s=s.sync_deadline_min * 60.0)


def due(cfg: Any, state: dict[str, Any], now_s: float) -> bool:
    import datetime as dt

    from kiosk.sync.urls import parse_sync_time, sync_due

    now = dt.datetime.fromtimestamp(now_s).astimezone()
    last = state.get("last_attempt")
    last_attempt = (dt.datetime.fromtimestamp(last).astimezone()
                    if isinstance(last, int | float) else None)
    return sync_due(now, parse_sync_time(cfg.site.sync_time), last_attempt,
                    bool(state.get("ok")))


def record(state_path: Path, report: SyncReport, previous: dict[str, Any], now_s: float
           ) -> dict[str, Any]:
    from kiosk.sync.folder import write_state

    state = {"url": report.url, "last_attempt": now_s, "ok": report.ok,
             "last_success": now_s if report.ok else previous.get("last_success"),
             "duration_s": round(report.duration_s, 3), "pages": report.pages,
             "requests": report.requests, "fetched": report.fetched,
             "unchanged": report.unchanged, "removed": len(report.removed),
             "failed": len(report.failed), "error": report.error}
    write_state(state_path, state)
    return state
