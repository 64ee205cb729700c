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
MAX_NAME_BYTES = 255  # one file name (ext4 and most others)
# invisible characters that reorder the text around them: a file name is shown to people
_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                           "\u2066\u2067\u2068\u2069")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class UnsafePath(ValueError):
    """A URL of the site whose path cannot be a file of the site folder; the message says why."""


def _netloc(url: str) -> str:
    """host[:port], lower-cased, without userinfo."""
    return urlsplit(url).netloc.rsplit("@", 1)[-1].lower()


def origin(url: str) -> tuple[str, str]:
    """(scheme, host:port) with the scheme's default port written out, userinfo left out."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = _netloc(url)
    if ":" not in host.rsplit("]", 1)[-1] and scheme in _DEFAULT_PORTS:
        host = f"{host}:{_DEFAULT_PORTS[scheme]}"
    return scheme, host


def normalize(url: str) -> str:
    """The URL without fragment, query and userinfo (page ids ignore them); host lower-cased."""
    parts = urlsplit(url.strip())
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), _netloc(url.strip()), path, "", ""))


def credentials(url: str) -> tuple[str, str] | None:
    """The user and password written into a URL (`https://user:pw@host/`), if any."""
    parts = urlsplit(url)
    if parts.username is None:
        return None
    return unquote(parts.username), unquote(parts.password or "")


def without_credentials(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, parts.query,
                       parts.fragment))


def redact(url: str) -> str:
    """The URL as it may be logged and stored: userinfo replaced by `***`."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, "***@" + parts.netloc.rsplit("@", 1)[-1], parts.path,
                       parts.query, parts.fragment))


def same_site(url: str, site_url: str) -> bool:
    """http(s) on the site's own scheme, host and port (robots.txt and sitemaps may lie outside
    the base path, never on another host)."""
    return urlsplit(url).scheme.lower() in ("http", "https") and origin(url) == origin(site_url)


def under_base(url: str, base_url: str) -> bool:
    if not same_site(url, base_url):
        return False
    prefix = urlsplit(base_url).path.rstrip("/") + "/"
    path = urlsplit(url).path or "/"
    return path.startswith(prefix) or path + "/" == prefix


def unsafe_reason(rel: str) -> str:
    """Why a path relative to the site folder cannot be a page file's name ("" when it can)."""
    parts = rel.split("/")
    if rel.startswith("/") or any(part == "" for part in parts[:-1]):
        return "an empty or absolute path segment"
    if any(part in ("..", ".") for part in parts) or "\\" in rel:
        return "a path segment that climbs out"
    if any(unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS for ch in rel):
        return "a control character in the path"
    if any(part.startswith(".") for part in parts if part):
        return "a hidden name"  # list_page_files skips them
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in parts):
        return f"a path segment over {MAX_NAME_BYTES} bytes"
    return ""


def page_file_for(url: str, base_url: str) -> str | None:
    """The site-folder path a page URL is stored at, or None when it is not a page of the site
    (another host or scheme, outside the base path). UnsafePath when it is the site's but its
    path cannot be a file of the folder: an empty or absolute segment after unquoting
    (`//tmp/x`, `/%2Ftmp%2Fx`), `..`, a control character, a hidden or too long name."""
    if not under_base(url, base_url):
        return None
    prefix = urlsplit(base_url).path.rstrip("/") + "/"
    path = urlsplit(url).path or "/"
    rel = "" if path + "/" == prefix else path[len(prefix):]
    rel = unicodedata.normalize("NFC", unquote(rel))
    if rel == "" or rel.endswith("/"):
        file = rel + "index.html"
    elif posixpath.splitext(rel)[1].lower() in _PAGE_EXTS:
        file = rel
    else:
        file = rel + ".html"
    reason = unsafe_reason(file)
    if reason:
        raise UnsafePath(f"{reason}: {url!r}")
    return file


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
