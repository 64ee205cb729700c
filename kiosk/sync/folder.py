"""Site versions on disk: each sync writes a new folder beside the live one, and the site path
(a symbolic link) is swapped to it in one rename. A failed or partial sync never touches the
link, so the previous site, and the index built from it, keep serving.

    /var/lib/kiosk-avatar/site                 -> .site.versions/20261201T031500
    /var/lib/kiosk-avatar/.site.versions/...   (the live version and the one before it)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kiosk.errors import KioskError
from kiosk.fsutil import atomic_write_bytes
from kiosk.sync.crawl import Known
from kiosk.sync.http import validator
from kiosk.sync.urls import unsafe_reason

log = logging.getLogger(__name__)

MANIFEST = ".sync.json"
_PARTIAL = ".partial"
_LOCK = ".lock"


def inside(folder: Path, file: str) -> Path:
    """`folder / file`, refused unless it lies inside the folder: the file names come from
    URLs (and from a manifest an older sync wrote), and a page must never be written or read
    elsewhere."""
    reason = unsafe_reason(file)
    target = Path(os.path.normpath(folder / file))
    real_folder = os.path.realpath(folder)
    if (reason or not target.is_relative_to(folder)
            or not Path(os.path.realpath(target.parent)).is_relative_to(real_folder)):
        raise KioskError("sync", f"page file {file!r} would lie outside {folder}"
                         f"{f' ({reason})' if reason else ''}",
                         "this is a defect of the sync; the previous site stays")
    return target


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
        """The live version's pages. Entries an older sync wrote that are unsafe now (a file
        name outside the folder, a validator that is not ASCII) are left out: those pages
        are fetched again, unconditionally."""
        pages = self.manifest().get("pages", {})
        found = {}
        for url, p in pages.items() if isinstance(pages, dict) else ():
            if not isinstance(p, dict) or not isinstance(p.get("file"), str):
                continue
            if unsafe_reason(p["file"]):
                log.warning("sync: the manifest's file %r for %s is unsafe; fetched again",
                            p["file"], url)
                continue
            found[url] = Known(p["file"], validator(str(p.get("etag", ""))),
                               validator(str(p.get("last_modified", ""))))
        return found

    def redirects(self) -> dict[str, str]:
        found = self.manifest().get("redirects", {})
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def stored_text(self, known: Known) -> str | None:
        live = self.current()
        if live is None:
            return None
        try:
            return inside(live, known.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, KioskError):
            return None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One sync at a time: a second one at once would remove the first's folder in the
        making (begin) and publish a site with pages missing."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / _LOCK, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise KioskError("sync", f"another sync of {self.link} is running (it holds "
                                 f"{self.root / _LOCK})",
                                 "wait for it to finish; this one changed nothing") from None
            yield

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
        target = inside(version, file)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def carry(self, version: Path, file: str) -> bool:
        """An unchanged page: linked (or copied) from the live version."""
        live = self.current()
        if live is None or not inside(live, file).is_file():
            return False
        target = inside(version, file)
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
