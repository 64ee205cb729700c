"""A venue's website for the site sync tests and benchmark: the demo site's pages served as HTML
at extensionless URLs by a real HTTP server on 127.0.0.1, with robots.txt, a sitemap index and
ETags; tests add a redirect, a 404, a 500 that recovers, a slow page, a stalled page, a binary
and a robots-disallowed page. Every request is recorded (path, status, conditional or not)."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kiosk.config import DEMO_SITE
from kiosk.screen.site_server import render_markdown


@dataclass
class Request:
    path: str
    status: int
    conditional: bool


@dataclass
class VenueSite:
    sitemap: bool = True
    etags: bool = True  # False: a server without validators (every page a 200)
    last_modified: bool = False  # Last-Modified / If-Modified-Since instead of ETags
    pages: dict[str, bytes] = field(default_factory=dict)  # URL path -> HTML
    redirects: dict[str, str] = field(default_factory=dict)
    failing: dict[str, int] = field(default_factory=dict)  # path -> 500s still to give
    broken: set[str] = field(default_factory=set)  # 500 every time
    slow_s: dict[str, float] = field(default_factory=dict)
    stall_once: dict[str, float] = field(default_factory=dict)  # first answer this late
    listed_extra: list[str] = field(default_factory=list)  # in the sitemap, not pages
    binaries: dict[str, bytes] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def demo(cls, count: int | None = None, langs: tuple[str, ...] = ("en",)) -> VenueSite:
        """The demo site's pages of `langs` (the index page first, then `count` - 1 others)."""
        files: list[Path] = []
        for lang in langs:
            folder = DEMO_SITE / lang
            index = [f for f in folder.iterdir() if f.stem == "index"]
            others = sorted(f for f in folder.iterdir()
                            if f.stem != "index" and f.suffix in (".md", ".html"))
            files += [*index, *others][:count]
        paths = [f"/{f.parent.name}/{f.stem}" if f.stem != "index" else f"/{f.parent.name}/"
                 for f in files]
        site = cls()
        for f, path in zip(files, paths, strict=True):
            site.pages[path] = (render_markdown(f.read_text(encoding="utf-8"),
                                                [p.lstrip("/") for p in paths])
                                if f.suffix == ".md" else f.read_bytes())
        return site

    def etag(self, body: bytes) -> str:
        return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'

    def sitemap_xml(self, host: str) -> bytes:
        urls = sorted(self.pages) + sorted(self.redirects) + self.listed_extra + sorted(
            self.binaries)
        locs = "".join(f"<url><loc>{host}{u}</loc></url>" for u in urls)
        return ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
                f'schemas/sitemap/0.9">{locs}</urlset>').encode()


class VenueServer:
    def __init__(self, site: VenueSite) -> None:
        self.site = site
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.handle(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # a client that timed out hung up on the stalled page: expected

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> VenueServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.site.requests if r.path == path]

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        site = self.site
        path = req.path.split("?", 1)[0]
        conditional = bool(req.headers.get("If-None-Match")
                           or req.headers.get("If-Modified-Since"))

        def send(status: int, body: bytes = b"", ctype: str = "text/html; charset=utf-8",
                 headers: dict[str, str] | None = None) -> None:
            with site.lock:
                site.requests.append(Request(path, status, conditional))
            req.send_response(status)
            for key, value in (headers or {}).items():
                req.send_header(key, value)
            if status != 304:
                req.send_header("Content-Type", ctype)
                req.send_header("Content-Length", str(len(body)))
            req.end_headers()
            if status != 304:
                req.wfile.write(body)

        if path in site.stall_once:
            time.sleep(site.stall_once.pop(path))
        time.sleep(site.slow_s.get(path, 0.0))
        if path == "/robots.txt":
            text = "User-agent: *\nDisallow: /en/private\n"
            if site.sitemap:
                text += f"Sitemap: {self.url}/sitemap.xml\n"
            send(200, text.encode(), "text/plain")
        elif path == "/sitemap.xml" and site.sitemap:
            index = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/'
                     f'sitemap/0.9"><sitemap><loc>{self.url}/sitemap-pages.xml</loc></sitemap>'
                     '</sitemapindex>')
            send(200, index.encode(), "application/xml")
        elif path == "/sitemap-pages.xml" and site.sitemap:
            send(200, site.sitemap_xml(self.url), "application/xml")
        elif path in site.broken:
            send(500, b"server error")
        elif site.failing.get(path, 0) > 0:
            site.failing[path] -= 1
            send(500, b"server error")
        elif path in site.redirects:
            send(301, b"", headers={"Location": site.redirects[path]})
        elif path in site.binaries:
            send(200, site.binaries[path], "application/pdf")
        elif path in site.pages:
            body = site.pages[path]
            etag = site.etag(body)
            stamp = "Mon, 30 Nov 2026 10:00:00 GMT"
            if site.last_modified:
                if req.headers.get("If-Modified-Since") == stamp:
                    send(304, headers={"Last-Modified": stamp})
                else:
                    send(200, body, headers={"Last-Modified": stamp})
            elif not site.etags:
                send(200, body)
            elif req.headers.get("If-None-Match") == etag:
                send(304, headers={"ETag": etag})
            else:
                send(200, body, headers={"ETag": etag})
        else:
            send(404, b"not found")


def folder_pages(link: Path) -> set[str]:
    return {p.relative_to(link).as_posix() for p in link.rglob("*.html")}
