"""A small local web server for a site folder, as the kiosk browser would show it (demo and
tests): Markdown pages are rendered to HTML with a list of links to every page; HTML pages are
served as they are. Bound to localhost only."""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from kiosk.retrieval.markdown import parse_markdown
from kiosk.retrieval.site import MARKDOWN_SUFFIXES, list_page_files, page_id_for


def render_markdown(source: str, links: list[str]) -> bytes:
    title, sections = parse_markdown(source)
    body = [f"<h1>{html.escape(title)}</h1>"]
    for section in sections:
        if section.heading and section.heading != title:
            body.append(f"<h2>{html.escape(section.heading)}</h2>")
        body += [f"<p>{html.escape(line)}</p>" for line in section.text.splitlines()]
    nav = "".join(f'<li><a href="/{quote(link)}">{html.escape(link)}</a></li>' for link in links)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body><main>{''.join(body)}</main><nav><ul>{nav}</ul></nav>"
            "</body></html>").encode()


class SiteServer:
    def __init__(self, root: Path, port: int = 0) -> None:
        self.root = root.resolve()
        self.pages = [page_id_for(p, self.root) for p in list_page_files(self.root)]
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.handle(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def start(self) -> SiteServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        rel = unquote(urlsplit(req.path).path).lstrip("/")
        if rel == "" or rel.endswith("/"):
            rel += "index.md"
        path = (self.root / rel).resolve()
        if self.root not in path.parents or not path.is_file():
            req.send_error(404)
            return
        data = path.read_bytes()
        if path.suffix in MARKDOWN_SUFFIXES:
            data = render_markdown(data.decode("utf-8"), self.pages)
        req.send_response(200)
        req.send_header("Content-Type", "text/html; charset=utf-8")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)
