"""Site versions on disk: each sync writes a new folder beside the live one, and the site path
(a symbolic link) is swapped to it in one rename. A failed or partial sync never touches the
link, so the previous site, and the index built from it, keep serving.

    /var/lib/kiosk-avatar/site                 -> .site.versions/20261201T031500
    /var/lib/kiosk-avatar/.site.versions/...   (the live version and the one before it)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

from kiosk.errors import KioskError
from kiosk.fsutil import atomic_write_bytes
from kiosk.sync.crawl import Known

log = logging.getLogger(__name__)

MANIFEST = ".sync.json"
_PARTIAL = ".partial"


class SiteVersions:
    def __init__(self, link: Path, keep: int = 2) -> None:
        self.link = Path(os.path.abspath(link))
        self.root = self.link.parent / f".{self.link.name}.versions"
        self.keep = keep
        if self.link.exists() and not self.link.is_symlink():
            raise KioskError(
                "sync", f"{self.link} is a folder of its own, not a site kept by sync",
                "set paths.site to a new path for the synced site (e.g. "
                "/var/lib/kiosk-avatar/site), or move that folder away")

    def current(self) -> Path | None:
        return self.link.resolve() if self.link.is_symlink() and self.link.exists() else None

    def manifest(self) -> dict[str, Any]:
        live = self.current()
        if live is None:
            return {}
        try:
            data = json.loads((live / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("sync: %s unreadable (%s); every page is fetched again",
                        live / MANIFEST, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def known(self) -> dict[str, Known]:
        pages = self.manifest().get("pages", {})
        return {url: Known(p["file"], p.get("etag", ""), p.get("last_modified", ""))
                for url, p in pages.items() if isinstance(p, dict) and "file" in p}

    def redirects(self) -> dict[str, str]:
        found = self.manifest().get("redirects", {})
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def stored_text(self, known: Known) -> str | None:
        live = self.current()
        if live is None:
            return None
        try:
            return (live / known.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def begin(self) -> Path:
        """A new, empty version folder (leftovers of killed syncs removed)."""
        self.root.mkdir(parents=True, exist_ok=True)
        for leftover in self.root.glob(f"*{_PARTIAL}"):
            shutil.rmtree(leftover, ignore_errors=True)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        folder = self.root / f"{stamp}{_PARTIAL}"
        n = 1
        while folder.exists() or (self.root / stamp).exists():
            stamp = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{n}"
            folder, n = self.root / f"{stamp}{_PARTIAL}", n + 1
        folder.mkdir()
        return folder

    @staticmethod
    def write_page(version: Path, file: str, text: str) -> None:
        target = version / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def carry(self, version: Path, file: str) -> bool:
        """An unchanged page: linked (or copied) from the live version."""
        live = self.current()
        if live is None or not (live / file).is_file():
            return False
        target = version / file
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(live / file, target)
        except OSError:
            shutil.copy2(live / file, target)
        return True

    @staticmethod
    def write_manifest(version: Path, data: dict[str, Any]) -> None:
        (version / MANIFEST).write_text(json.dumps(data, ensure_ascii=False, indent=1),
                                        encoding="utf-8")

    def commit(self, version: Path) -> Path:
        """Make `version` the live site: one rename of the link; older versions pruned."""
        final = version.with_name(version.name.removesuffix(_PARTIAL))
        version.rename(final)
        tmp_link = self.link.with_name(f".{self.link.name}.link")
        tmp_link.unlink(missing_ok=True)
        tmp_link.symlink_to(os.path.relpath(final, self.link.parent))
        os.replace(tmp_link, self.link)
        fd = os.open(self.link.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.prune()
        return final

    def abandon(self, version: Path) -> None:
        shutil.rmtree(version, ignore_errors=True)

    def prune(self) -> None:
        """Keep the live version and the newest `keep - 1` others (a rollback at hand)."""
        live = self.current()
        others = sorted((p for p in self.root.iterdir() if p.is_dir() and p != live
                         and not p.name.endswith(_PARTIAL)), reverse=True)
        for folder in others[self.keep - 1:]:
            shutil.rmtree(folder, ignore_errors=True)


def write_state(path: Path, state: dict[str, Any]) -> None:
    atomic_write_bytes(path, json.dumps(state, indent=1).encode())


def read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
