"""`kiosk bench fleet`: what the fleet parts cost on a kiosk.

- site sync of the demo site (both languages) served by a local HTTP server: the first sync
  (every page fetched and embedded), a second with nothing changed (one 304 per page), and one
  after a single page changed; wall time, requests, and how much of it the index took;
- one metrics write (the service's file, every 15 s): time and size;
- `kiosk report` over 30 days of turn counts.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kiosk.bench.venue import VenueServer, VenueSite
from kiosk.config import Config
from kiosk.logs import TurnLog
from kiosk.metrics import Facts, LoopCounts, ServiceMetrics
from kiosk.report import build_report
from kiosk.sync.crawl import SyncParams
from kiosk.sync.folder import SiteVersions
from kiosk.sync.job import sync_site
from kiosk.wiring import index_preparer


def _timed_preparer(cfg: Config, link: Path, spent: list[float]) -> Any:
    prepare = index_preparer(cfg, link)

    def timed(version: Path) -> Any:
        start = time.perf_counter()
        try:
            return prepare(version)
        finally:
            spent.append(time.perf_counter() - start)

    return timed


def run(cfg: Config, writes: int = 200) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = dataclasses.replace(cfg, paths=dataclasses.replace(
            cfg.paths, index=str(root / "index.npz")))
        site = VenueSite.demo(langs=("en", "ja"))
        link = root / "site"
        versions = SiteVersions(link)
        with VenueServer(site) as server:
            params = SyncParams(start_url=server.url + "/sitemap.xml",
                                base_url=server.url + "/", delay_s=0.0)
            runs = {}
            for name in ("first", "unchanged", "one_page_changed"):
                if name == "one_page_changed":
                    path = sorted(site.pages)[1]
                    site.pages[path] = site.pages[path].replace(
                        b"</body>", b"<p>Updated today.</p></body>")
                before = len(site.requests)
                index_s: list[float] = []
                start = time.perf_counter()
                report = sync_site(params, versions, _timed_preparer(cfg, link, index_s))
                wall = time.perf_counter() - start
                if not report.ok:
                    raise RuntimeError(report.error)
                runs[name] = {"wall_s": round(wall, 2), "index_s": round(sum(index_s), 2),
                              "requests": len(site.requests) - before,
                              "pages": report.pages, "fetched": report.fetched,
                              "unchanged": report.unchanged}
        out["sync"] = runs

        metrics = ServiceMetrics(lambda: LoopCounts(), Facts(index_pages=45))
        for i in range(50):
            metrics.observe_turn({"kind": "independent", "act": None, "page": f"p{i % 7}",
                                  "reply_start_ms": 4000, "last_voiced_ms": 3000,
                                  "asr_ms": 200.0, "brain_ms": 30.0, "first_audio_ms": 250.0})
        folder = root / "textfile"
        folder.mkdir()
        times = []
        for _ in range(writes):
            start = time.perf_counter()
            metrics.write(folder)
            times.append(time.perf_counter() - start)
        out["metrics_write"] = {
            "median_ms": round(statistics.median(times) * 1000, 3),
            "p95_ms": round(sorted(times)[int(0.95 * len(times))] * 1000, 3),
            "bytes": (folder / "kiosk.prom").stat().st_size,
            "cpu_share_at_15_s": round(statistics.median(times) / 15, 6)}

        logs = root / "logs"
        logging.getLogger("kiosk.logs").setLevel(logging.WARNING)  # 9,000 turn lines
        now = [time.time() - 30 * 86_400]
        turn_log = TurnLog(logs, store_transcripts=False, retention_days=7, clock=lambda: now[0])
        for _ in range(30):
            for i in range(300):  # a busy day: 300 turns
                turn_log.record({"kind": "independent", "act": None,
                                 "page": f"en/p{i % 20}.md" if i % 4 else None})
                now[0] += 86_400 / 300
        start = time.perf_counter()
        summary = build_report(logs, time.time() - 31 * 86_400, time.time())
        out["report"] = {"turns": summary["total"]["turns"],
                         "build_s": round(time.perf_counter() - start, 3),
                         "stats_bytes_per_day": round(sum(
                             p.stat().st_size for p in logs.glob("stats-*")) / 30)}
    return out


def format_report(report: dict[str, Any]) -> str:
    lines = []
    for name, r in report["sync"].items():
        lines.append(f"sync {name:<17} {r['wall_s']:6.2f} s (index {r['index_s']:.2f} s), "
                     f"{r['requests']} requests, {r['pages']} pages, {r['fetched']} fetched, "
                     f"{r['unchanged']} unchanged")
    m = report["metrics_write"]
    lines.append(f"metrics write: median {m['median_ms']} ms, p95 {m['p95_ms']} ms, "
                 f"{m['bytes']} bytes")
    r = report["report"]
    lines.append(f"report over 30 days ({r['turns']} turns): {r['build_s']} s; turn counts "
                 f"{r['stats_bytes_per_day']} bytes a day")
    return "\n".join(lines)
