"""kiosk site sync against a real local HTTP server: the folder, the index and the requests."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from pathlib import Path

import pytest

from kiosk.bench.venue import VenueServer, VenueSite, folder_pages
from kiosk.config import Config, with_value
from kiosk.retrieval.index import SiteIndex
from kiosk.screen.source import map_url
from kiosk.sync.crawl import SyncParams
from kiosk.sync.folder import SiteVersions
from kiosk.sync.job import base_for, sync_site
from kiosk.sync.urls import UnsafePath, links, page_file_for, parse_sitemap, sync_due
from kiosk.wiring import index_preparer

# ------------------------------------------------------------------ pure parts


def test_page_files_are_the_url_paths_the_screen_maps_back() -> None:
    base = "https://venue.example/museum/"
    cases = {
        "https://venue.example/museum/": "index.html",
        "https://venue.example/museum": "index.html",
        "https://venue.example/museum/en/": "en/index.html",
        "https://venue.example/museum/en/cafe": "en/cafe.html",
        "https://venue.example/museum/en/cafe.html": "en/cafe.html",
        "https://venue.example/museum/menu.php": "menu.php.html",
        "https://venue.example/museum/%E9%A4%A8%E5%86%85": "館内.html",
    }
    for url, file in cases.items():
        assert page_file_for(url, base) == file, url
        assert map_url(url, base, set(cases.values())) == file, url
    for outside in ("https://venue.example/shop/x", "https://other.example/museum/x",
                    "ftp://venue.example/museum/x", "https://venue.example:8443/museum/x"):
        assert page_file_for(outside, base) is None, outside
    # the site's own URLs that no file of the folder may be made of
    for unsafe, why in (("https://venue.example/museum/../etc/x", "climbs out"),
                        ("https://venue.example/museum/%2E%2E/etc/x", "climbs out"),
                        ("https://venue.example/museum/.git/config", "hidden"),
                        ("https://venue.example//tmp/x", "absolute"),
                        ("https://venue.example/%2Ftmp%2Fx", "absolute"),
                        ("https://venue.example/museum//tmp/x", "empty"),
                        ("https://venue.example/museum/a%2F%2Fb", "empty"),
                        ("https://venue.example/museum/x%1b%5D0%3Bowned%07", "control"),
                        ("https://venue.example/museum/line%0Abreak", "control"),
                        ("https://venue.example/museum/%E2%80%AEfdp.exe", "control"),
                        ("https://venue.example/museum/" + "a" * 251, "255 bytes")):
        base_here = "https://venue.example/" if "museum" not in unsafe else base
        with pytest.raises(UnsafePath, match=why):
            page_file_for(unsafe, base_here)
    # userinfo is no part of the site's address
    assert page_file_for("https://u:pw@venue.example/museum/a", base) == "a.html"


def test_sitemaps_and_links_are_read_by_their_elements() -> None:
    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc> https://v.example/a </loc><lastmod>2026-01-01</lastmod></url>"
              b"<url><loc>https://v.example/b</loc></url></urlset>")
    assert parse_sitemap(urlset).pages == ("https://v.example/a", "https://v.example/b")
    index = (b"<sitemapindex><sitemap><loc>https://v.example/s1.xml</loc></sitemap>"
             b"</sitemapindex>")
    assert parse_sitemap(index).sitemaps == ("https://v.example/s1.xml",)
    for bad in (b"<html><body>not found</body></html>", b"\x00garbage"):
        with pytest.raises(ValueError):
            parse_sitemap(bad)
    html = ('<base href="/en/"><a href="cafe#menu">c</a><a href="shop?x=1">s</a>'
            '<a href="mailto:a@b">m</a><a rel="nofollow" href="/login">l</a><a href="cafe">')
    assert links(html, "https://v.example/x") == ["https://v.example/en/cafe",
                                                  "https://v.example/en/shop"]


def test_a_sync_is_due_once_a_day_and_retried_hourly_after_a_failure() -> None:
    tz = dt.UTC
    at = dt.time(3, 30)
    day = dt.datetime(2026, 12, 1, tzinfo=tz)
    assert sync_due(day.replace(hour=3, minute=45), at, None, False)
    assert not sync_due(day.replace(hour=3, minute=15), at,
                        day.replace(hour=0) - dt.timedelta(hours=20), True)  # yesterday's ran
    assert sync_due(day.replace(hour=3, minute=15), at,
                    day - dt.timedelta(days=2), True)  # a day was missed
    done = day.replace(hour=3, minute=31)
    assert not sync_due(day.replace(hour=9), at, done, True)
    assert not sync_due(day.replace(hour=4, minute=0), at, done, False)
    assert sync_due(day.replace(hour=4, minute=40), at, done, False)
    assert sync_due(day.replace(day=2, hour=3, minute=30), at, done, True)


def test_sync_settings_are_checked_by_field() -> None:
    from kiosk.errors import ConfigError

    cfg = with_value(Config(), "site.sync_time", "22:05")
    assert cfg.site.sync_time == "22:05"
    for key, value in (("site.sync_time", "25:00"), ("site.sync_time", "3.30"),
                       ("site.sync_url", "venue.example")):
        with pytest.raises(ConfigError, match=key):
            with_value(Config(), key, value)
    assert base_for("https://v.example/museum/sitemap.xml", "") == "https://v.example/museum/"
    with pytest.raises(Exception, match=r"not under screen\.base_url"):
        base_for("https://v.example/shop/", "https://v.example/museum/")


# ------------------------------------------------------------------ against a server


def _params(server: VenueServer, **kw: object) -> SyncParams:
    fields = {"start_url": server.url + "/", "base_url": server.url + "/", "delay_s": 0.0,
              "timeout_s": 2.0, "retries": 2, "backoff_s": 0.05, **kw}
    return SyncParams(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def sync_cfg(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Config:
    index = tmp_path_factory.mktemp("index") / "site.npz"
    cfg = Config()
    return dataclasses.replace(cfg, paths=dataclasses.replace(
        cfg.paths, models_dir=str(models_dir), index=str(index)))


def test_a_sync_copies_the_site_and_a_second_one_costs_one_304_per_unchanged_page(
        tmp_path: Path, sync_cfg: Config) -> None:
    site = VenueSite.demo(count=8)
    site.redirects["/en/food"] = "/en/cafe-and-food"
    site.pages["/en/cafe-and-food"] = site.pages.pop("/en/cafe")
    site.failing["/en/hours"] = 1  # a 500 that recovers on the retry
    site.slow_s["/en/lockers"] = 0.3
    site.stall_once["/en/dinosaur-hall"] = 3.0  # the first answer times out
    site.listed_extra += ["/en/missing", "/en/private"]
    site.binaries["/en/map.pdf"] = b"%PDF-1.4 binary"
    link = tmp_path / "site"
    versions = SiteVersions(link)
    index_path = Path(sync_cfg.paths.index)
    with VenueServer(site) as server:
        report = sync_site(_params(server), versions, index_preparer(sync_cfg, link))
        assert report.ok and report.swapped, report.error
        expected = {"en/access.html", "en/accessibility.html", "en/avatar-guide.html",
                    "en/cafe-and-food.html", "en/dinosaur-hall.html", "en/hours.html",
                    "en/index.html", "en/lockers.html"}
        assert folder_pages(link) == expected
        assert report.redirects == {server.url + "/en/food": server.url + "/en/cafe-and-food"}
        assert set(report.skipped) == {server.url + "/en/private", server.url + "/en/map.pdf"}
        assert "robots.txt" in report.skipped[server.url + "/en/private"]
        assert "not HTML" in report.skipped[server.url + "/en/map.pdf"]
        assert [r.status for r in server.requests_to("/en/hours")] == [500, 200]
        assert len(server.requests_to("/en/dinosaur-hall")) == 2  # timed out, then fetched
        assert server.requests_to("/en/private") == []  # robots.txt was obeyed
        assert report.requests == len(site.requests)
        index = SiteIndex.load(index_path)
        assert {p.page_id for p in index.pages} == expected
        # the page the kiosk browser shows maps to the page id the brain finds
        for url in [server.url + p for p in site.pages]:
            assert map_url(url, server.url + "/", {p.page_id for p in index.pages}) == \
                page_file_for(url, server.url + "/")
        first_version = link.resolve()

        # the venue edits one page and deletes another; nothing else changed
        site.requests.clear()
        site.pages["/en/hours"] = site.pages["/en/hours"].replace(b"<main>",
                                                                  b"<main><p>Closed on 1 Jan.</p>")
        del site.pages["/en/lockers"]
        report2 = sync_site(_params(server), versions, index_preparer(sync_cfg, link))
    assert report2.ok and report2.changed
    assert report2.fetched == 1 and report2.removed == ["en/lockers.html"]
    page_requests = [r for r in site.requests if r.path in site.pages]
    assert {r.path for r in page_requests if r.status == 200} == {"/en/hours"}
    assert all(r.conditional for r in page_requests)
    # every other page once, and the redirect's target a second time (/en/food)
    assert sum(r.status == 304 for r in page_requests) == len(site.pages) - 1 + 1
    assert "en/lockers.html" not in folder_pages(link)
    index2 = SiteIndex.load(index_path)
    assert "en/lockers.html" not in {p.page_id for p in index2.pages}
    hours = [c.text for c in index2.chunks if c.page_id == "en/hours.html"]
    assert any("Closed on 1 Jan." in t for t in hours)
    assert link.resolve() != first_version and first_version.is_dir()  # one rollback kept


def test_a_failed_sync_leaves_the_previous_site_and_index_serving(
        tmp_path: Path, sync_cfg: Config) -> None:
    site = VenueSite.demo(count=4)
    link = tmp_path / "site"
    versions = SiteVersions(link)
    cfg = dataclasses.replace(sync_cfg, paths=dataclasses.replace(
        sync_cfg.paths, index=str(tmp_path / "index.npz")))
    with VenueServer(site) as server:
        assert sync_site(_params(server), versions, index_preparer(cfg, link)).ok
        before_link, before_index = link.resolve(), (tmp_path / "index.npz").read_bytes()
        before_pages = folder_pages(link)
        site.requests.clear()
        same = sync_site(_params(server), versions, index_preparer(cfg, link))
        assert same.ok and not same.swapped and same.unchanged == len(site.pages)
        assert {r.status for r in site.requests if r.path in site.pages} == {304}
        assert link.resolve() == before_link  # nothing changed: no new version, no new index
        assert (tmp_path / "index.npz").read_bytes() == before_index
        site.pages["/en/added"] = b"<html><title>New</title><p>New page.</p></html>"
        site.broken.add("/en/access")  # 500, every retry
        report = sync_site(_params(server), versions, index_preparer(cfg, link))
        assert not report.ok and not report.swapped
        assert "could not be fetched" in report.error and "/en/access" in report.error
        assert len(server.requests_to("/en/access")) == 1 + 3  # first fetch, then 1 + 2 retries
        assert link.resolve() == before_link and folder_pages(link) == before_pages
        assert (tmp_path / "index.npz").read_bytes() == before_index
        assert not list(versions.root.glob("*.partial"))
        server.httpd.shutdown()  # the site goes down altogether
        down = sync_site(_params(server, timeout_s=0.5, retries=0), versions,
                         index_preparer(cfg, link))
    assert not down.ok and "robots.txt could not be read" in down.error
    assert link.resolve() == before_link


def test_without_a_sitemap_the_sync_follows_links_from_the_start_page(
        tmp_path: Path, sync_cfg: Config) -> None:
    site = VenueSite.demo(count=5)
    site.sitemap = False
    site.pages["/en/"] = site.pages["/en/"].replace(
        b"</nav>", b"<a href='https://elsewhere.example/x'>out</a><a href='/en/gone'>g</a></nav>")
    link = tmp_path / "site"
    cfg = dataclasses.replace(sync_cfg, paths=dataclasses.replace(
        sync_cfg.paths, index=str(tmp_path / "index.npz")))
    with VenueServer(site) as server:
        report = sync_site(_params(server, start_url=server.url + "/en/",
                                   base_url=server.url + "/en/"),
                           SiteVersions(link), index_preparer(cfg, link))
    assert report.ok
    assert folder_pages(link) == {page_file_for(server.url + p, server.url + "/en/")
                                  for p in site.pages}
    assert server.requests_to("/en/gone")[0].status == 404


def test_a_server_without_validators_changes_nothing_when_its_pages_did_not(
        tmp_path: Path, sync_cfg: Config) -> None:
    site = VenueSite.demo(count=3)
    site.etags = False
    link = tmp_path / "site"
    cfg = dataclasses.replace(sync_cfg, paths=dataclasses.replace(
        sync_cfg.paths, index=str(tmp_path / "index.npz")))
    with VenueServer(site) as server:
        first = sync_site(_params(server), SiteVersions(link), index_preparer(cfg, link))
        live = link.resolve()
        again = sync_site(_params(server), SiteVersions(link), index_preparer(cfg, link))
    assert first.swapped and first.fetched == 3
    assert again.ok and not again.changed and again.unchanged == 3 and link.resolve() == live
    assert not any(r.conditional for r in site.requests)


def test_last_modified_validators_and_the_page_size_cap(tmp_path: Path,
                                                        sync_cfg: Config) -> None:
    site = VenueSite.demo(count=3)
    site.last_modified = True
    big = "/en/huge"
    site.pages[big] = b"<html><body>" + b"<p>x</p>" * 4000 + b"</body></html>"  # 32 KB
    link = tmp_path / "site"
    cfg = dataclasses.replace(sync_cfg, paths=dataclasses.replace(
        sync_cfg.paths, index=str(tmp_path / "index.npz")))
    with VenueServer(site) as server:
        params = _params(server, max_page_bytes=16 * 1024)
        first = sync_site(params, SiteVersions(link), index_preparer(cfg, link))
        assert first.ok and first.pages == 3
        assert "larger than 16384 bytes" in first.skipped[server.url + big]
        site.requests.clear()
        again = sync_site(params, SiteVersions(link), index_preparer(cfg, link))
    assert again.ok and again.unchanged == 3 and not again.changed
    small = [r for r in site.requests if r.path in site.pages and r.path != big]
    assert {(r.status, r.conditional) for r in small} == {(304, True)}


def test_a_polite_pace_and_a_cap_on_pages(tmp_path: Path, sync_cfg: Config) -> None:
    site = VenueSite.demo(count=6)
    waits: list[float] = []
    cfg = dataclasses.replace(sync_cfg, paths=dataclasses.replace(
        sync_cfg.paths, index=str(tmp_path / "index.npz")))
    with VenueServer(site) as server:
        report = sync_site(_params(server, delay_s=0.2, max_pages=3),
                           SiteVersions(tmp_path / "site"), index_preparer(cfg, tmp_path / "site"),
                           sleep=waits.append)
    assert report.ok and report.pages == 3
    # every request after the first waited for the pace (the fake sleep returns at once)
    assert len(waits) == report.requests - 1 and all(0 < w <= 0.2 for w in waits)


def test_site_sync_command_records_state_metrics_and_a_restart(
        tmp_path: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from kiosk.__main__ import main

    site = VenueSite.demo(count=3)
    state, prom = tmp_path / "state", tmp_path / "textfile"
    prom.mkdir()
    monkeypatch.setenv("KIOSK_STATE_DIR", str(state))
    monkeypatch.setenv("KIOSK_MODELS_DIR", str(models_dir))
    monkeypatch.setenv("KIOSK_RESTART_FILE", str(state / "restart-request"))
    config = tmp_path / "kiosk.toml"
    with VenueServer(site) as server:
        config.write_text(f'[site]\nsync_url = "{server.url}/sitemap.xml"\nsync_delay_ms = 0\n'
                          f'[metrics]\ntextfile_dir = "{prom}"\n', encoding="utf-8")
        assert main(["--config", str(config), "site", "sync"]) == 0
        requests = len(site.requests)
        assert main(["--config", str(config), "site", "sync", "--when-due"]) == 0
        assert len(site.requests) == requests  # not due again the same day
    saved = json.loads((state / "sync-state.json").read_text())
    assert saved["ok"] and saved["pages"] == 3 and saved["requests"] == requests
    assert (state / "restart-request").is_file()
    assert os.path.islink(state / "site")
    families = {f.name: f for f in text_string_to_metric_families(
        (prom / "kiosk_sync.prom").read_text())}
    assert families["kiosk_site_sync_ok"].samples[0].value == 1
    assert families["kiosk_site_sync_pages"].samples[0].value == 3
    assert families["kiosk_site_sync_last_success_timestamp_seconds"].samples[0].value > 0
