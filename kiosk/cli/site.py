"""`kiosk index` and `kiosk site sync`: the site folder and its index."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from kiosk.cli.common import Subparsers, cli_config
from kiosk.errors import KioskError
from kiosk.wiring import load_brain

log = logging.getLogger(__name__)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("index", help="build or update the site index")
    p.add_argument("site", nargs="?", help="folder of .md/.html pages (default: demo site)")
    p.add_argument("--out", dest="index", help="index file to write")
    p.add_argument("--embedder", help="model name from models/manifest.toml")
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("site", help="keep the site folder in step with the venue's website")
    site_sub = p.add_subparsers(dest="site_command", required=True)
    q = site_sub.add_parser("sync", help="crawl the site (sitemap or links) into the site "
                                         "folder and index it")
    q.add_argument("url", nargs="?", help="sitemap.xml or start page (default: site.sync_url)")
    q.add_argument("--when-due", action="store_true",
                   help="only when site.sync_time has come (the timer's mode)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_site)


def cmd_index(args: argparse.Namespace) -> int:
    cfg = cli_config(args)
    brain = load_brain(cfg)
    index = brain.index
    print(f"{len(index.pages)} pages, {len(index.chunks)} chunks -> "
          f"{cfg.paths.index_path(cfg.brain.embedder)}")
    for problem in index.problems:
        print(f"warning: {problem.path}: {problem.message}", file=sys.stderr)
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    """kiosk site sync [URL]: the venue's website into the site folder, indexed; the previous
    site keeps serving when it fails. Exit status 1 on a failed sync."""
    import time

    from kiosk.metrics import sync_registry, write_textfile
    from kiosk.models import default_state_dir
    from kiosk.sync.folder import SiteVersions, read_state
    from kiosk.sync.job import due, params_from, record, sync_site
    from kiosk.wiring import index_preparer

    cfg = cli_config(args)
    url = args.url or cfg.site.sync_url
    state_path = default_state_dir() / "sync-state.json"
    state = read_state(state_path)
    now = time.time()
    if args.when_due and (not url or not due(cfg, state, now)):
        log.debug("site sync: not due")
        return 0
    if not url:
        raise KioskError("config", "no site to sync: site.sync_url is empty and no URL given",
                         "kiosk site sync https://venue.example/sitemap.xml, or set "
                         "site.sync_url")
    link = cfg.paths.synced_site_path()
    params = params_from(cfg, url)
    versions = SiteVersions(link)
    report = sync_site(params, versions, index_preparer(cfg, link))
    record(state_path, report, state, now)
    if cfg.metrics.textfile_dir and Path(cfg.metrics.textfile_dir).is_dir():
        write_textfile(sync_registry(state_path), Path(cfg.metrics.textfile_dir),
                       "kiosk_sync.prom")
    restart_file = os.environ.get("KIOSK_RESTART_FILE")
    if report.changed and restart_file:
        from kiosk.fsutil import atomic_write_bytes

        # the path unit restarts the voice service, which loads the new site and index
        atomic_write_bytes(Path(restart_file), f"{time.time():.3f}\n".encode())
    if args.json:
        print(json.dumps(report.as_dict(), indent=1, ensure_ascii=False))
    else:
        print(report.summary())
        print(f"site: {link}")
    return 0 if report.ok else 1
