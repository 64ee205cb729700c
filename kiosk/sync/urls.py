"""Pure helpers of the site sync: URL -> page file, sitemaps, links, robots, timing.

A page's file is its URL path under `screen.base_url`, so the page id the brain finds and the
page id the kiosk browser's URL maps to (`kiosk.screen.source.map_url`) are the same by
construction: `/en/cafe` is stored as `en/cafe.html`, `/en/` as `en/index.html`.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import unicodedata
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

_PAGE_EXTS = (".html", ".htm")


def normalize(url: str) -> str:
    """The URL without fragment and query (page ids ignore both); host lower-cased."""
    parts = urlsplit(url.strip())
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def under_base(url: str, base_url: str) -> bool:
    parts, base = urlsplit(url), urlsplit(base_url)
    if parts.scheme not in ("http", "https"):
        return False
    if (parts.scheme, parts.netloc.lower()) != (base.scheme, base.netloc.lower()):
        return False
    prefix = base.path.rstrip("/") + "/"
    path = parts.path or "/"
    return path.startswith(prefix) or path + "/" == prefix


def page_file_for(url: str, base_url: str) -> str | None:
    """The site-folder path a page URL is stored at, or None when it is not a page of the
    site (another host, outside the base path, a path that climbs out)."""
    if not under_base(url, base_url):
        return None
    prefix = urlsplit(base_url).path.rstrip("/") + "/"
    path = urlsplit(url).path or "/"
    rel = "" if path + "/" == prefix else path[len(prefix):]
    rel = unicodedata.normalize("NFC", unquote(rel))
    if any(part in ("..", ".") for part in rel.split("/")) or "\0" in rel or "\\" in rel:
        return None
    if any(part.startswith(".") for part in rel.split("/") if part):
        return None  # hidden names are not pages of the folder (list_page_files skips them)
    if rel == "" or rel.endswith("/"):
        return rel + "index.html"
    rel = posixpath.normpath(rel)
    if posixpath.splitext(rel)[1].lower() in _PAGE_EXTS:
        return rel
    return rel + ".html"


@dataclass(frozen=True)
class Sitemap:
    pages: tuple[str, ...]
    sitemaps: tuple[str, ...]  # a sitemap index names further sitemaps


def parse_sitemap(data: bytes) -> Sitemap:
    """`<urlset><url><loc>` and `<sitemapindex><sitemap><loc>`, any namespace.

    Raises ValueError on text that is not a sitemap."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"not XML ({exc})") from exc

    def local(tag: str) -> str:
        return tag.rsplit("}", 1)[-1]

    kind = local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise ValueError(f"root element <{kind}> is neither <urlset> nor <sitemapindex>")
    locs = []
    for entry in root:
        for child in entry:
            if local(child.tag) == "loc" and child.text and child.text.strip():
                locs.append(child.text.strip())
    if kind == "urlset":
        return Sitemap(tuple(locs), ())
    return Sitemap((), tuple(locs))


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "base" and values.get("href"):
            self.base = values["href"]
        elif tag == "a" and values.get("href"):
            rel = (values.get("rel") or "").lower().split()
            if "nofollow" not in rel:
                self.hrefs.append(values["href"] or "")


def links(html: str, page_url: str) -> list[str]:
    """Absolute, normalized targets of the page's `<a href>` (nofollow left out), in order."""
    parser = _Links()
    parser.feed(html)
    parser.close()
    base = urljoin(page_url, parser.base) if parser.base else page_url
    seen: dict[str, None] = {}
    for href in parser.hrefs:
        if href.startswith(("mailto:", "tel:", "javascript:", "#")):
            continue
        seen.setdefault(normalize(urljoin(base, href)), None)
    return list(seen)


def is_html(content_type: str) -> bool:
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime in ("text/html", "application/xhtml+xml")


def parse_sync_time(text: str) -> dt.time:
    """`HH:MM`, local time. Raises ValueError with the reason."""
    try:
        hours, minutes = text.strip().split(":")
        return dt.time(int(hours), int(minutes))
    except ValueError:
        raise ValueError(f"{text!r} is not a time of day like 03:30") from None


def sync_due(now: dt.datetime, at: dt.time, last_attempt: dt.datetime | None,
             last_ok: bool, retry_after: dt.timedelta = dt.timedelta(hours=1)) -> bool:
    """Whether a timer tick at `now` should sync: once a day at `at` (local time), and a
    failed day's sync again every `retry_after` until one succeeds that day."""
    today_at = dt.datetime.combine(now.date(), at, tzinfo=now.tzinfo)
    slot = today_at if now >= today_at else today_at - dt.timedelta(days=1)
    if last_attempt is None or last_attempt < slot:
        return True
    return not last_ok and now - last_attempt >= retry_after
