"""Durable file replacement: write aside, fsync, rename, fsync the directory; and releasing
the page cache of files just installed."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# A temporary file of ours this old was left by a writer that died (SIGKILL, power cut) in
# the middle of a save; a live save takes well under a second.
STALE_AFTER_S = 60.0


def remove_stale(target: Path, now: float | None = None) -> list[Path]:
    """Delete the temporary files a killed save of `target` left beside it."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    for leftover in target.parent.glob(f".{target.name}.*"):
        try:
            if now - leftover.stat().st_mtime > STALE_AFTER_S:
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue  # gone already, or not ours to remove: the save goes on
    return removed


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None,
                       owner: tuple[int, int] | None = None) -> None:
    """`mode` and `owner` (uid, gid) are given to the new file before it takes the target's
    place, so no reader ever sees it with other ones (mkstemp's default: 0600, this user)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if owner is not None:
                made = os.fstat(fh.fileno())
                if owner != (made.st_uid, made.st_gid):
                    os.fchown(fh.fileno(), *owner)
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def atomic_write_from(staged: Path, target: Path) -> None:
    """Move a fully written file (on the same filesystem) into place durably."""
    with staged.open("rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(staged, target)
    _fsync_dir(target.parent)


def drop_cached(roots: Iterable[Path]) -> int:
    """Ask the kernel to forget the page cache of every regular file under `roots` (symbolic
    links are not followed); returns how many files it was asked for.

    Why: the files an installer has just written stay cached in large folios, and a process
    that maps them (shared libraries, Sudachi's and Open JTalk's dictionaries) is charged for
    whole folios on its first touch. A checkout fresh from `scripts/setup.sh` peaked ~95 MB
    higher in the voice bench (file-backed RSS 274 MB against 177 MB) until the cache turned
    over. Only clean pages go (everything is written back first); nothing is lost, the next
    read comes from disk."""
    if not hasattr(os, "posix_fadvise"):
        return 0  # not on this platform: the cache ages out by itself
    os.sync()  # DONTNEED leaves dirty pages where they are
    count = 0
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                try:
                    fd = os.open(os.path.join(directory, name), os.O_RDONLY | os.O_NOFOLLOW)
                except OSError:
                    continue  # a link, or not ours to read: left as it is
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    count += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return count
