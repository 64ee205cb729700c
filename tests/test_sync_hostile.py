"""`kiosk site sync` against a hostile web server on 127.0.0.1: crafted sitemaps, redirects,
headers and bodies. Whatever the server does, nothing is written outside the state folder, a
failed sync leaves the previous site and index byte for byte, every sync is bounded in time and
memory, and `sync-state.json` and `kiosk_sync.prom` are written after each one.

The previous site is one good sync (the real index), copied into each test's own state folder.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from kiosk.sync.crawl import SyncParams
from kiosk.sync.folder import SiteVersions
from kiosk.sync.job import sync_site

Handler = Callable[[BaseHTTPRequestHandler], None]

PAGES = {
    "/en/": "<html><head><title>Museum</title></head><body><main><h1>Museum</h1><p>Welcome to "
            "the museum by the sea. <a href='/en/hours'>Hours</a> <a href='/en/cafe'>Cafe</a>"
            "</p></main></body></html>",
    "/en/hours": "<html><head><title>Opening hours</title></head><body><main><h1>Opening "
                 "hours</h1><p>The museum is open from 10:00 to 17:00, Tuesday to Sunday.</p>"
                 "</main></body></html>",
    "/en/cafe": "<html><head><title>Cafe</title></head><body><main><h1>Cafe</h1><p>The cafe on "
                "the ground floor serves lunch from 11:30.</p></main></body></html>",
}


def respond(req: BaseHTTPRequestHandler, status: int, body: bytes = b"",
            headers: list[tuple[str, bytes | str]] | None = None) -> None:
    """A raw answer: header values go out as the bytes given (a server may send anything)."""
    head = [f"HTTP/1.0 {status} X".encode()]
    for name, value in headers or []:
        head.append(name.encode() + b": " + (value if isinstance(value, bytes)
                                                else value.encode("latin-1")))
    if body is not None:
        head.append(f"Content-Length: {len(body)}".encode())
    req.wfile.write(b"\r\n".join(head) + b"\r\n\r\n" + body)


def html(body: str | bytes, *extra: tuple[str, bytes | str]) -> Handler:
    data = body.encode() if isinstance(body, str) else body
    return lambda req: respond(req, 200, data, [("Content-Type", "text/html; charset=utf-8"),
                                                *extra])


def redirect(location: str) -> Handler:
    return lambda req: respond(req, 301, b"", [("Location", location)])


@dataclass
class Hostile:
    """A web server whose every answer the test writes: a route per path (query left out),
    404 elsewhere. Every request's path is recorded."""

    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    auth: str = ""  # an Authorization header every request must carry (else 401)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        outer = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                pass  # the sync hung up on a trickle or a bomb: expected

        class Req(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with outer.lock:
                    outer.requests.append(self.path)
                if outer.auth and self.headers.get("Authorization") != outer.auth:
                    respond(self, 401, b"login", [("WWW-Authenticate", 'Basic realm="x"')])
                    return
                route = outer.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    respond(self, 404, b"not found", [("Content-Type", "text/html")])
                else:
                    route(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Req)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def good_site(self, sitemap: bool = True) -> None:
        """The venue's site as it should be: robots.txt, a sitemap, three pages."""
        self.routes.clear()
        self.auth = ""
        robots = "User-agent: *\nAllow: /\n" + (f"Sitemap: {self.url}/sitemap.xml\n"
                                                 if sitemap else "")
        self.routes["/robots.txt"] = lambda req: respond(req, 200, robots.encode(),
                                                         [("Content-Type", "text/plain")])
        if sitemap:
            self.sitemap([self.url + p for p in PAGES])
        for path, body in PAGES.items():
            self.routes[path] = html(body, ("ETag", '"' + hashlib.sha1(body.encode())
                                            .hexdigest()[:8] + '"'))

    def sitemap(self, locs: list[str], path: str = "/sitemap.xml", index: bool = False) -> None:
        tag, item = ("sitemapindex", "sitemap") if index else ("urlset", "url")
        body = (f'<?xml version="1.0"?><{tag} xmlns="http://www.sitemaps.org/schemas/sitemap/'
                f'0.9">' + "".join(f"<{item}><loc>{loc}</loc></{item}>" for loc in locs)
                + f"</{tag}>").encode()
        self.routes[path] = lambda req: respond(req, 200, body,
                                                [("Content-Type", "application/xml")])

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[Hostile]:
    hostile = Hostile()
    hostile.good_site()
    yield hostile
    hostile.close()


@pytest.fixture(scope="module")
def other() -> Iterator[Hostile]:
    """Another site (another port is another origin): nothing may be asked of it."""
    elsewhere = Hostile()
    elsewhere.routes["/sitemap.xml"] = html("<urlset></urlset>")
    elsewhere.routes["/x"] = html("<p>elsewhere</p>")
    yield elsewhere
    elsewhere.close()


def _config(folder: Path, url: str, **site: object) -> Path:
    settings = {"sync_url": url, "sync_delay_ms": 0, "sync_timeout_s": 2, "sync_retries": 1,
                **site}
    lines = ["[paths]", f'index = "{folder / "state" / "index.npz"}"', "[site]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    lines += ["[metrics]", f'textfile_dir = "{folder / "metrics"}"']
    path = folder / "kiosk.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def previous(server: Hostile, models_dir: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state folder after one good sync: the site folder (a link to its version) and index."""
    folder = tmp_path_factory.mktemp("previous")
    (folder / "metrics").mkdir()
    env = {**os.environ, "KIOSK_STATE_DIR": str(folder / "state"),
           "KIOSK_MODELS_DIR": str(models_dir)}
    done = subprocess.run([sys.executable, "-m", "kiosk", "--config",
                           str(_config(folder, server.url + "/sitemap.xml")), "site", "sync"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


@dataclass
class Kiosk:
    """One test's kiosk: the previous site copied into its own state folder, syncs run as the
    timer runs them (`kiosk site sync`), each checked for the state and metrics it leaves."""

    root: Path
    url: str
    models_dir: Path
    log: str = ""

    @property
    def state(self) -> Path:
        return self.root / "state"

    def sync(self, url: str | None = None, verbose: bool = False,
             **site: object) -> tuple[int, dict[str, Any], float]:
        """`kiosk site sync --json`: exit status, report, seconds taken (self.log: its log)."""
        from kiosk.__main__ import main

        config = _config(self.root, url or self.url, **site)
        for written in (self.state / "sync-state.json", self.root / "metrics" / "kiosk_sync.prom"):
            written.unlink(missing_ok=True)
        out, err = io.StringIO(), io.StringIO()
        began = time.monotonic()
        real = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err  # the command's logging binds to this stderr
        try:
            code = main(["--config", str(config), *(["-v"] if verbose else []), "site", "sync",
                         "--json"])
        finally:
            sys.stdout, sys.stderr = real
        took = time.monotonic() - began
        self.log = err.getvalue()
        # always recorded, whatever happened
        state = json.loads((self.state / "sync-state.json").read_text())
        assert state["ok"] == (code == 0)
        prom = (self.root / "metrics" / "kiosk_sync.prom").read_text()
        assert f"kiosk_site_sync_ok {1.0 if code == 0 else 0.0}" in prom
        return code, json.loads(out.getvalue()), took

    def served(self) -> dict[str, str]:
        """What the kiosk serves: the site link, every file of its version, the index."""
        live = (self.state / "site").resolve()
        files = {p.relative_to(live).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                 for p in sorted(live.rglob("*")) if p.is_file()}
        index = hashlib.sha256((self.state / "index.npz").read_bytes()).hexdigest()
        return {"link": os.readlink(self.state / "site"), "index": index, **files}

    def outside(self) -> set[str]:
        """Every file under this test's folder but the state folder, the metrics folder and
        the settings file."""
        mine = (self.state, self.root / "metrics", self.root / "kiosk.toml")
        return {p.relative_to(self.root).as_posix() for p in self.root.rglob("*")
                if p.is_file() and not any(p.is_relative_to(m) for m in mine)}


@pytest.fixture
def kiosk(server: Hostile, previous: Path, models_dir: Path, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Kiosk:
    shutil.copytree(previous / "state", tmp_path / "state", symlinks=True)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.setenv("KIOSK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("KIOSK_MODELS_DIR", str(models_dir))
    monkeypatch.delenv("KIOSK_RESTART_FILE", raising=False)
    server.good_site()
    server.requests.clear()
    return Kiosk(tmp_path, server.url + "/sitemap.xml", models_dir)


# ------------------------------------------------------------------ 1, 9: files outside


def test_no_url_writes_a_file_outside_the_site_folder(kiosk: Kiosk, server: Hostile) -> None:
    """`//tmp/x` and `/%2Ftmp%2Fx` used to be stored at the absolute path /tmp/x.html, from a
    sitemap entry, a link or a redirect; the files stayed even when the sync failed."""
    target = kiosk.root / "outside"
    before = kiosk.outside()
    evil = {"sitemap": f"{server.url}/{target}/evil-a",  # //tmp/.../evil-a
            "encoded": f"{server.url}/{quote(str(target) + '/evil-b', safe='')}",
            "dots": f"{server.url}/en/%2E%2E/%2E%2E/evil-c"}
    for name in ("evil-a", "evil-d"):  # http.server reads //tmp/x as /tmp/x
        server.routes[f"{target}/{name}"] = html("<p>evil</p>")
    server.routes["/en/moved"] = redirect(f"{server.url}/{target}/evil-d")
    server.sitemap([server.url + p for p in PAGES] + list(evil.values())
                   + [server.url + "/en/moved"])
    code, report, _ = kiosk.sync()
    assert code == 0, report["error"]
    assert kiosk.outside() == before
    for url in evil.values():
        assert "no file name can be made of it" in report["skipped"][url], report["skipped"]
    assert "absolute" in report["skipped"][server.url + "/en/moved"], report
    # not even asked for: the URL alone shows that it cannot be stored
    assert not any("evil-a" in r or "evil-b" in r for r in server.requests)

    # without a sitemap, links from the start page
    server.good_site(sitemap=False)
    server.routes["/"] = html(PAGES["/en/"].replace(
        "</main>", f"<a href='/{quote(str(target), safe='')}%2Fevil-e'>x</a>"
                   f"<a href='/en/x%1b%5D0%3Bowned%07'>y</a><a href='/en/a%0Ab'>z</a></main>"))
    code, report, _ = kiosk.sync(server.url + "/")
    assert code == 0, report["error"]
    assert kiosk.outside() == before
    assert sum("no file name can be made of it" in why for why in report["skipped"].values()) == 3
    live = (kiosk.state / "site").resolve()
    assert all(ch not in p.name for p in live.rglob("*") for ch in "\x1b\n\x07")


def test_the_folder_refuses_a_page_file_outside_it(tmp_path: Path) -> None:
    """The check behind page_file_for: every function that writes or reads a page file."""
    from kiosk.errors import KioskError
    from kiosk.sync.crawl import Known

    versions = SiteVersions(tmp_path / "site")
    version = versions.begin()
    versions.write_page(version, "en/ok.html", "<p>ok</p>")
    for bad in ("/tmp/x.html", "../x.html", "en/../../x.html", "a//b.html", "x\x1b.html"):
        with pytest.raises(KioskError, match="outside"):
            versions.write_page(version, bad, "<p>evil</p>")
    versions.write_manifest(version, {"pages": {
        "http://v/ok": {"file": "en/ok.html", "etag": '"é"', "last_modified": "Mon"},
        "http://v/evil": {"file": str(tmp_path / "secret.html")}}})
    (tmp_path / "secret.html").write_text("secret")
    versions.commit(version)
    # a manifest an older sync wrote: the unsafe entry is dropped, a non-ASCII ETag too
    assert versions.known() == {"http://v/ok": Known("en/ok.html", "", "Mon")}
    assert versions.stored_text(Known(str(tmp_path / "secret.html"))) is None
    with pytest.raises(KioskError, match="outside"):
        versions.carry(versions.begin(), str(tmp_path / "secret.html"))


# ------------------------------------------------------------------ 2: validators


def test_a_non_ascii_etag_does_not_stop_later_syncs(kiosk: Kiosk, server: Hostile) -> None:
    """It was stored, sent back, and the HTTP library refused to encode it: every later sync
    crashed, even after the server was fixed."""
    body = PAGES["/en/hours"].replace("17:00", "18:00")
    server.routes["/en/hours"] = html(body, ("ETag", '"caf\xe9"'.encode("latin-1")),
                                      ("Last-Modified", "Mon, 30 Nov 2026 \u65e5".encode()))
    code, report, _ = kiosk.sync()
    assert code == 0 and report["swapped"], report["error"]
    manifest = json.loads((kiosk.state / "site" / ".sync.json").read_text())
    hours = manifest["pages"][server.url + "/en/hours"]
    assert hours["etag"] == "" and hours["last_modified"] == ""
    # an older sync's manifest that holds one
    hours["etag"] = '"café"'
    (kiosk.state / "site" / ".sync.json").write_text(json.dumps(manifest, ensure_ascii=False))
    server.requests.clear()
    code, report, _ = kiosk.sync()
    assert code == 0, report["error"]
    # two by their ETags (304), the hours page by its text: its validators were dropped
    assert report["unchanged"] == 3


# ------------------------------------------------------------------ 3: decompression bombs


def _packed_zeros(size_bytes: int, wbits: int = 31) -> bytes:
    """size_bytes of zeros, compressed a megabyte at a time (31: gzip, 15: zlib's deflate)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(1 << 20)
    parts = [packer.compress(zeros) for _ in range(size_bytes >> 20)]
    return b"".join(parts) + packer.flush()


@pytest.fixture(scope="module")
def bombs() -> tuple[bytes, bytes]:
    """1 GB of zeros gzipped (~1 MB), and that gzipped again (~2 KB)."""
    once = _packed_zeros(1 << 30)
    return once, gzip.compress(once, 9)


def _peak_rss_mb(argv: list[str], env: dict[str, str]) -> tuple[float, int, float]:
    """A command's own peak RSS (MB), exit status and seconds."""
    began = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, proc.returncode, time.monotonic() - began


@pytest.mark.slow
def test_stacked_and_single_encodings_cannot_outgrow_the_size_cap(
        kiosk: Kiosk, server: Hostile, bombs: tuple[bytes, bytes]) -> None:
    """A 2 KB body sent with `Content-Encoding: gzip, gzip` decoded to 1 GB (peak RSS 3.2 GB
    against a 2 MB cap); robots.txt and sitemaps were fetched the same way. Measured in a
    process of its own, against the same sync with nothing to decode."""
    once, twice = bombs
    assert len(twice) < 4096 and len(once) < 2 * 1024 * 1024
    config = _config(kiosk.root, server.url + "/", sync_timeout_s=30)
    env = {**os.environ, "KIOSK_STATE_DIR": str(kiosk.state),
           "KIOSK_MODELS_DIR": str(kiosk.models_dir)}
    argv = [sys.executable, "-m", "kiosk", "--config", str(config), "site", "sync"]
    served = kiosk.served()

    server.routes.clear()  # nothing at all: the same failed sync, no bomb
    baseline_mb, code, _ = _peak_rss_mb(argv, env)
    assert code == 1

    def bomb(body: bytes, encoding: str, ctype: str) -> Handler:
        return lambda req: respond(req, 200, body, [("Content-Type", ctype),
                                                    ("Content-Encoding", encoding)])

    server.routes["/robots.txt"] = bomb(twice, "gzip, gzip", "text/plain")
    server.routes["/sitemap.xml"] = bomb(once, "gzip", "application/xml")
    server.routes["/"] = bomb(twice, "gzip, gzip", "text/html")
    server.routes["/en/"] = bomb(once, "gzip", "text/html")
    server.routes["/en/deflate"] = bomb(_packed_zeros(1 << 28, wbits=15), "deflate",
                                        "text/html")
    peak_mb, code, took_s = _peak_rss_mb(argv, env)
    assert code == 1  # no page could be read: the previous site stays
    assert peak_mb - baseline_mb < 300, (peak_mb, baseline_mb)
    assert took_s < 60
    assert kiosk.served() == served
    state = json.loads((kiosk.state / "sync-state.json").read_text())
    assert not state["ok"] and "no pages found" in state["error"]

    # in the sync's own words: each refused or cut, none read whole
    server.routes["/"] = html(PAGES["/en/"].replace("</main>", "<a href='/en/'>e</a><a href="
                                                               "'/en/deflate'>d</a></main>"))
    code, report, _ = kiosk.sync(server.url + "/")
    assert report["skipped"][server.url + "/en/"] == "larger than 2097152 bytes"
    assert report["skipped"][server.url + "/en/deflate"] == "larger than 2097152 bytes"


def test_a_stacked_encoding_is_refused_by_name(kiosk: Kiosk, server: Hostile) -> None:
    body = gzip.compress(gzip.compress(PAGES["/en/cafe"].encode()))
    server.routes["/en/cafe"] = lambda req: respond(req, 200, body, [
        ("Content-Type", "text/html"), ("Content-Encoding", "gzip, gzip")])
    server.routes["/en/hours"] = lambda req: respond(req, 200, b"...", [
        ("Content-Type", "text/html"), ("Content-Encoding", "br")])
    code, report, _ = kiosk.sync()
    assert code == 0, report["error"]
    assert "stacks encodings" in report["skipped"][server.url + "/en/cafe"]
    assert "not one the sync asks for" in report["skipped"][server.url + "/en/hours"]


# ------------------------------------------------------------------ 4: deadlines


def test_a_trickled_body_ends_at_the_request_s_time_limit(kiosk: Kiosk, server: Hostile) -> None:
    """A byte every 0.2 s never tripped a read timeout: the sync waited as long as the server
    went on (a byte every 2 s for ever would have hung it for good)."""

    def trickle(req: BaseHTTPRequestHandler) -> None:
        req.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n")
        for _ in range(300):  # a minute
            req.wfile.write(b" ")
            req.wfile.flush()
            time.sleep(0.2)

    served = kiosk.served()
    server.routes["/en/cafe"] = trickle
    code, report, took_s = kiosk.sync(sync_timeout_s=1, sync_retries=1)
    assert code == 1 and "timed out" in report["error"]
    assert took_s < 10  # two tries of one second, and back-off
    assert kiosk.served() == served


def test_a_crawl_delay_is_capped_and_the_whole_crawl_has_a_deadline(
        tmp_path: Path, server: Hostile) -> None:
    """robots.txt's `Crawl-delay: 99999999` slept for years; a sync of slow pages had no
    end but the site's."""
    server.good_site()
    server.routes["/robots.txt"] = lambda req: respond(
        req, 200, f"User-agent: *\nCrawl-delay: 99999999\nSitemap: {server.url}/sitemap.xml\n"
        .encode(), [("Content-Type", "text/plain")])
    waits: list[float] = []
    versions = SiteVersions(tmp_path / "site")
    params = SyncParams(start_url=server.url + "/sitemap.xml", base_url=server.url + "/",
                        delay_s=0.0, timeout_s=2.0, retries=0)
    report = sync_site(params, versions, lambda version: lambda: None, sleep=waits.append)
    assert report.ok and waits and max(waits) <= 30.0, waits

    def slow(req: BaseHTTPRequestHandler) -> None:
        time.sleep(0.4)
        html("<p>slow</p>")(req)

    server.good_site()
    for n in range(20):
        server.routes[f"/en/slow{n}"] = slow
    server.sitemap([f"{server.url}/en/slow{n}" for n in range(20)])
    live = versions.current()
    began = time.monotonic()
    late = sync_site(SyncParams(start_url=server.url + "/sitemap.xml",
                                base_url=server.url + "/", delay_s=0.0, timeout_s=2.0,
                                retries=0, deadline_s=1.5),
                     versions, lambda version: lambda: None)
    assert not late.ok and "took longer than its limit (2 s)" in late.error
    assert time.monotonic() - began < 4.0
    assert versions.current() == live and not list(versions.root.glob("*.partial"))


# ------------------------------------------------------------------ 5: page-level problems


def test_a_bad_page_is_skipped_with_its_reason_and_the_sync_goes_on(
        kiosk: Kiosk, server: Hostile) -> None:
    """Each of these crashed the whole sync with a traceback, no state and no metrics."""
    long_name = "x" * 300
    server.routes["/en/idna"] = lambda req: respond(
        req, 200, "<p>Caf\u00e9 by the idna header</p>".encode(),
        [("Content-Type", "text/html; charset=idna")])
    server.routes["/en/puny"] = html(b'<meta charset="punycode"><p>Caf\xc3\xa9 by the meta</p>')
    server.routes["/en/f.html"] = html("<p>a page</p>")
    server.routes["/en/f.html/g"] = html("<p>under a page</p>")
    server.routes["/en/" + long_name] = html("<p>long</p>")
    server.sitemap([server.url + p for p in (*PAGES, "/en/idna", "/en/puny", "/en/f.html",
                                              "/en/f.html/g", "/en/" + long_name)])
    code, report, _ = kiosk.sync()
    assert code == 0 and report["swapped"], report["error"]
    live = (kiosk.state / "site").resolve()
    assert "Café by the idna header" in (live / "en/idna.html").read_text()
    assert "Café by the meta" in (live / "en/puny.html").read_text()
    assert (live / "en/f.html").is_file()
    assert "is the page" in report["skipped"][server.url + "/en/f.html/g"]
    assert "over 255 bytes" in report["skipped"][server.url + "/en/" + long_name]


def test_a_defect_still_leaves_state_and_metrics(kiosk: Kiosk, server: Hostile,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever stops a sync, the timer's next run finds it recorded."""
    import kiosk.sync.job as job

    def broken(*args: object) -> str:
        raise RuntimeError("a defect")

    served = kiosk.served()
    server.routes["/en/cafe"] = html(PAGES["/en/cafe"].replace("11:30", "12:00"))
    monkeypatch.setattr(job, "_write", broken)
    code, report, _ = kiosk.sync()
    assert code == 1 and report["error"] == "internal: RuntimeError: a defect"
    assert kiosk.served() == served


# ------------------------------------------------------------------ 6: one sync at a time


@pytest.mark.slow
def test_a_second_sync_at_once_says_so_and_changes_nothing(kiosk: Kiosk,
                                                           server: Hostile) -> None:
    """Two at once published a site with pages missing (13 of 20 files, the manifest said
    20): the second removed the first's folder in the making."""

    def slow_page(n: int) -> Handler:
        def answer(req: BaseHTTPRequestHandler) -> None:
            time.sleep(0.15)
            html(f"<html><title>Room {n}</title><p>Room {n} of the museum.</p></html>")(req)
        return answer

    for n in range(20):
        server.routes[f"/en/room{n}"] = slow_page(n)
    server.sitemap([server.url + p for p in PAGES] + [f"{server.url}/en/room{n}"
                                                       for n in range(20)])
    env = {**os.environ, "KIOSK_STATE_DIR": str(kiosk.state),
           "KIOSK_MODELS_DIR": str(kiosk.models_dir)}
    first = subprocess.Popen([sys.executable, "-m", "kiosk", "--config",
                              str(_config(kiosk.root, kiosk.url)), "site", "sync"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not any(r.startswith("/en/room") for r in server.requests):
            assert time.monotonic() < end and first.poll() is None
            time.sleep(0.05)
        code, report, _ = kiosk.sync()
        assert code == 1 and "another sync" in report["error"]
        _, err = first.communicate(timeout=240)
    finally:
        first.kill()
    assert first.returncode == 0, err[-3000:]
    live = (kiosk.state / "site").resolve()
    manifest = json.loads((live / ".sync.json").read_text())
    files = {p.relative_to(live).as_posix() for p in live.rglob("*.html")}
    assert len(manifest["pages"]) == len(files) == 23


# ------------------------------------------------------------------ 7: off-site hops


def test_nothing_off_the_site_is_asked_for(kiosk: Kiosk, server: Hostile, other: Hostile) -> None:
    """Redirects were followed to any host, sitemaps on other hosts fetched, and a redirect to
    an unreachable host or to file:// failed the whole sync."""
    server.routes["/robots.txt"] = lambda req: respond(
        req, 200, f"User-agent: *\nSitemap: {server.url}/sitemap.xml\n"
                  f"Sitemap: {other.url}/sitemap.xml\n".encode(), [("Content-Type", "text/plain")])
    server.sitemap([server.url + "/sitemap-pages.xml", other.url + "/sitemap2.xml"], index=True)
    server.sitemap([server.url + p for p in (*PAGES, "/en/away", "/en/file", "/en/dead",
                                              "/en/ftp")], path="/sitemap-pages.xml")
    server.routes["/en/away"] = redirect(other.url + "/x")
    server.routes["/en/file"] = redirect("file:///etc/passwd")
    server.routes["/en/dead"] = redirect("http://127.0.0.1:9/x")  # the discard port: closed
    server.routes["/en/ftp"] = redirect("ftp://127.0.0.1/x")
    other.requests.clear()
    code, report, _ = kiosk.sync()
    assert code == 0, report["error"]
    assert other.requests == []
    for page in ("away", "file", "dead", "ftp"):
        assert "redirected off the site" in report["skipped"][f"{server.url}/en/{page}"]
    assert report["skipped"][other.url + "/sitemap.xml"] == "a sitemap on another site"
    assert report["skipped"][other.url + "/sitemap2.xml"] == "a sitemap on another site"


# ------------------------------------------------------------------ 11, 12: collisions, budget


def test_two_urls_of_one_file_keep_the_first_listed(kiosk: Kiosk, server: Hostile) -> None:
    """`/x` and `/x.html`, `/d/` and `/d/index.html` were saved to one file, silently."""
    server.routes["/en/x"] = html("<p>x without extension</p>")
    server.routes["/en/x.html"] = html("<p>x with extension</p>")
    server.routes["/en/d/"] = html("<p>d folder</p>")
    server.routes["/en/d/index.html"] = html("<p>d index</p>")
    server.sitemap([server.url + p for p in (*PAGES, "/en/x", "/en/x.html", "/en/d/index.html",
                                              "/en/d/")])
    code, report, _ = kiosk.sync()
    assert code == 0, report["error"]
    live = (kiosk.state / "site").resolve()
    assert "without extension" in (live / "en/x.html").read_text()
    assert "d index" in (live / "en/d/index.html").read_text()
    assert "stored as en/x.html, like" in report["skipped"][server.url + "/en/x.html"]
    assert "stored as en/d/index.html, like" in report["skipped"][server.url + "/en/d/"]


def test_max_pages_bounds_requests_too(kiosk: Kiosk, server: Hostile) -> None:
    """404s and skipped pages did not count: 2,707 requests in 120 s with max_pages = 10."""
    server.sitemap([f"{server.url}/en/missing{n}" for n in range(3000)])
    served = kiosk.served()
    code, report, took_s = kiosk.sync(sync_max_pages=10)
    assert code == 1 and "stopped after 90 requests" in report["error"]
    assert len(server.requests) <= 90 + 2 and took_s < 30
    assert kiosk.served() == served


# ------------------------------------------------------------------ 15: credentials


def test_credentials_in_the_url_are_used_and_never_written(kiosk: Kiosk,
                                                           server: Hostile) -> None:
    secret = "s3cr3t-Pw"
    token = base64.b64encode(f"venue:{secret}".encode()).decode()
    server.auth = f"Basic {token}"
    url = server.url.replace("http://", f"http://venue:{secret}@") + "/sitemap.xml"
    code, report, _ = kiosk.sync(url, verbose=True)
    assert code == 0, report["error"]
    assert report["url"] == url.replace(f"venue:{secret}", "***")
    assert "GET" in kiosk.log  # its debug log, every request in it
    assert secret not in kiosk.log and token not in kiosk.log
    assert secret not in json.dumps(report)
    for path in [*kiosk.state.rglob("*"), *(kiosk.root / "metrics").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data and token.encode() not in data, path
